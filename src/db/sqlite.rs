//! The embedded backend: one SQLite file. Writers take the write lock when
//! their transaction begins (`BEGIN IMMEDIATE`) and wait up to a minute for
//! it, so several oscycles (a run recording itself, imports) share one file.

use super::{Backend, Conn, DbError, Value};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, TransactionBehavior};
use std::path::Path;

pub struct Sqlite {
    conn: Connection,
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sql(e.to_string())
    }
}

/// Checks that `path` can serve as a store: an SQLite database, or a file
/// that does not exist yet. A sentence if not.
pub fn check_path(path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(format!("--db '{}' is a directory; give the path of an SQLite file", path.display())),
        Ok(_) => {}
        Err(_) => return Ok(()),
    }
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("--db '{}' cannot be opened as an SQLite store: {e}", path.display()))?;
    conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))
        .map_err(|e| format!("--db '{}' is not an oscycles run store (an SQLite database): {e}", path.display()))?;
    Ok(())
}

impl Sqlite {
    pub fn open(path: &Path) -> Result<Sqlite, DbError> {
        let conn = Connection::open(path).map_err(|e| DbError::Open(path.display().to_string(), e.to_string()))?;
        // Several oscycles may write one store at once: wait for a writer
        // instead of failing with "database is locked".
        conn.busy_timeout(std::time::Duration::from_secs(60))?;
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
