//! The embedded backend: one SQLite file. Writers take the write lock when
//! their transaction begins (`BEGIN IMMEDIATE`) and wait up to a minute for
//! it, so several oscycles (a run recording itself, imports) share one file.

use super::{Backend, Conn, DbError, Value};
use crate::base::fsafe::euid;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, TransactionBehavior};
use std::path::Path;

pub struct Sqlite {
    conn: Connection,
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        if locked(&e) {
            return DbError::Sql(format!("the store is locked by another process (waited {LOCK_WAIT_S} s for it): {e}"));
        }
        DbError::Sql(e.to_string())
    }
}

/// How long a command waits for another process's lock on the store.
pub const LOCK_WAIT_S: u64 = 60;

/// Whether SQLite said another connection holds the store.
fn locked(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

/// SQLite's busy handler: another process holds the store; wait for it,
/// up to [`LOCK_WAIT_S`], unless SIGINT or SIGTERM came.
fn busy(tries: i32) -> bool {
    const STEP_MS: u64 = 20;
    if crate::measure::watchdog::interrupted().is_some() {
        return false;
    }
    std::thread::sleep(std::time::Duration::from_millis(STEP_MS));
    (tries as u64) < LOCK_WAIT_S * 1000 / STEP_MS
}

/// Why a path cannot serve as the SQLite store.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("--db '{0}' is a directory; give the path of an SQLite file")]
    Directory(String),
    #[error("--db '{0}' is a {1}, not a regular file; give the path of an SQLite file (or of one to be made)")]
    NotRegular(String, &'static str),
    #[error(
        "--db '{0}' is a symbolic link (to '{1}'); the store is never opened through a link, which another user may have planted: give the path of the file itself"
    )]
    Link(String, String),
    #[error(
        "--db '{0}': its directory '{1}' can be written by every user and has no sticky bit, so another user could replace the store or plant a link in its place; keep the store in a directory only you can write (or one with the sticky bit, as /tmp)"
    )]
    OpenDirectory(String, String),
    #[error(
        "--db '{0}': its directory '{1}' can be written by every user, and this kernel follows other users' links and hard links there (fs.protected_symlinks and fs.protected_hardlinks are not both 1): another user could plant one where SQLite makes its -journal, -wal or -shm file beside the store by name; keep the store in a directory only you can write"
    )]
    Unprotected(String, String),
    #[error("--db '{0}': {1}")]
    UnsafeDirectory(String, crate::base::fsafe::UnsafePath),
    #[error(
        "--db '{0}' belongs to uid {1}, another user, who could change it under this run; refused: run oscycles as that user, or copy the store"
    )]
    Foreign(String, u32),
    #[error(
        "--db '{0}' belongs to uid {1}, another user; root does not open another user's store (its rows name files and runs that user chose): run oscycles as that user, or copy the store"
    )]
    ForeignForRoot(String, u32),
    #[error("--db '{0}' cannot be opened as an SQLite store: {1}")]
    Open(String, String),
    #[error("--db '{0}' is not an oscycles run store (an SQLite database): {1}")]
    NotStore(String, String),
    #[error("--db '{0}': the store is locked by another process (waited {LOCK_WAIT_S} s for it); try again when that process has ended")]
    Locked(String),
}

/// What kind of file a non-regular file is, for a sentence.
fn kind(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "device"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// Whether the kernel protects sticky world-writable directories from
/// other users' links: fs.protected_symlinks and fs.protected_hardlinks 1.
fn links_protected() -> bool {
    ["symlinks", "hardlinks"].iter().all(|k| std::fs::read_to_string(format!("/proc/sys/fs/protected_{k}")).is_ok_and(|v| v.trim() == "1"))
}

/// Checks that `path` can serve as a store: an SQLite database, or a file
/// that does not exist yet, in a directory no other user can swap it in;
/// never a link, FIFO, device or directory (refused without opening it, so
/// a FIFO cannot block).
pub fn check_path(path: &Path) -> Result<(), PathError> {
    use std::os::unix::fs::MetadataExt;
    let name = path.display().to_string();
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    // Looked at once, not followed: named first when it is a directory.
    let meta = std::fs::symlink_metadata(path).ok();
    if meta.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(PathError::Directory(name));
    }
    // The store's directory and every one above it closed to other users
    // (no one else can swap them: the walk of an output directory). One
    // every user can write must be sticky, and, since SQLite makes its side
    // files there by name, the kernel must refuse to follow other users'
    // links and to let them hard-link files they do not own.
    let open_dir = std::fs::metadata(dir).ok().filter(|m| m.mode() & 0o002 != 0);
    if let Some(d) = &open_dir {
        if d.mode() & 0o1000 == 0 {
            return Err(PathError::OpenDirectory(name, dir.display().to_string()));
        }
        if !links_protected() {
            return Err(PathError::Unprotected(name, dir.display().to_string()));
        }
    }
    if dir.exists() {
        crate::base::fsafe::check_dir(dir, false).map_err(|e| PathError::UnsafeDirectory(name.clone(), e))?;
    }
    let Some(m) = meta else { return Ok(()) };
    if m.file_type().is_symlink() {
        let to = std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default();
        return Err(PathError::Link(name, to));
    }
    if !m.is_file() {
        return Err(PathError::NotRegular(name, kind(&m)));
    }
    if euid() == 0 && m.uid() != 0 {
        return Err(PathError::ForeignForRoot(name, m.uid()));
    }
    if m.uid() != euid() && m.uid() != 0 {
        return Err(PathError::Foreign(name, m.uid()));
    }
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let mut conn = Connection::open_with_flags(path, flags).map_err(|e| PathError::Open(name.clone(), e.to_string()))?;
    conn.busy_handler(Some(busy)).map_err(|e| PathError::Open(name.clone(), e.to_string()))?;
    match conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0)) {
        Ok(_) => Ok(()),
        // A writer killed inside a transaction (a SIGKILLed run) leaves a
        // hot journal, which a read-only connection cannot roll back: the
        // read-write open that follows does (SQLite's own recovery).
        Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ReadOnly) => Ok(()),
        Err(e) if locked(&e) => Err(PathError::Locked(name)),
        Err(e) => Err(PathError::NotStore(name, e.to_string())),
    }
}

/// Makes or opens the store's file without following a link and without
/// blocking, and checks it is a regular file: what SQLite then opens (also
/// without following a link) is that file.
fn claim(path: &Path) -> Result<(), PathError> {
    use std::os::unix::fs::OpenOptionsExt;
    let name = path.display().to_string();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => {
                PathError::Link(name.clone(), std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default())
            }
            Some(libc::EISDIR) => PathError::Directory(name.clone()),
            _ => PathError::Open(name.clone(), e.to_string()),
        })?;
    let m = f.metadata().map_err(|e| PathError::Open(name.clone(), e.to_string()))?;
    if !m.is_file() {
        return Err(PathError::NotRegular(name, kind(&m)));
    }
    Ok(())
}

impl Sqlite {
    pub fn open(path: &Path) -> Result<Sqlite, DbError> {
        let refused = |e: String| DbError::Open(path.display().to_string(), e);
        check_path(path).map_err(|e| refused(e.to_string()))?;
        claim(path).map_err(|e| refused(e.to_string()))?;
        let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let mut conn = Connection::open_with_flags(path, flags).map_err(|e| refused(e.to_string()))?;
        // Several oscycles may write one store at once: wait for a writer
        // instead of failing with "database is locked" (a minute, or until
        // SIGINT or SIGTERM).
        conn.busy_handler(Some(busy))?;
        Ok(Sqlite { conn })
    }
}

fn bind(args: &[Value]) -> Vec<SqlValue> {
    args.iter()
        .map(|a| match a {
            Value::Text(t) => t.clone().map_or(SqlValue::Null, SqlValue::Text),
            Value::Int(i) => i.map_or(SqlValue::Null, SqlValue::Integer),
            Value::Real(f) => f.map_or(SqlValue::Null, SqlValue::Real),
        })
        .collect()
}

fn read(v: ValueRef) -> Value {
    match v {
        ValueRef::Null => Value::Text(None),
        ValueRef::Integer(i) => Value::Int(Some(i)),
        ValueRef::Real(f) => Value::Real(Some(f)),
        ValueRef::Text(t) | ValueRef::Blob(t) => Value::Text(Some(String::from_utf8_lossy(t).into_owned())),
    }
}

struct Tx<'a>(rusqlite::Transaction<'a>);

impl Conn for Tx<'_> {
    fn exec(&mut self, sql: &str, args: &[Value]) -> Result<u64, DbError> {
        let mut st = self.0.prepare_cached(sql)?;
        Ok(st.execute(rusqlite::params_from_iter(bind(args)))? as u64)
    }

    fn query(&mut self, sql: &str, args: &[Value]) -> Result<Vec<Vec<Value>>, DbError> {
        let mut st = self.0.prepare_cached(sql)?;
        let n = st.column_count();
        let rows = st.query_map(rusqlite::params_from_iter(bind(args)), |r| (0..n).map(|i| r.get_ref(i).map(read)).collect())?;
        Ok(rows.collect::<Result<Vec<Vec<Value>>, _>>()?)
    }

    fn lock_schema(&mut self) -> Result<(), DbError> {
        // The immediate transaction holds the write lock already.
        Ok(())
    }
}

impl Backend for Sqlite {
    fn transaction(&mut self, f: &mut dyn FnMut(&mut dyn Conn) -> Result<(), DbError>) -> Result<(), DbError> {
        let mut tx = Tx(self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?);
        f(&mut tx)?;
        tx.0.commit()?;
        Ok(())
    }
}
