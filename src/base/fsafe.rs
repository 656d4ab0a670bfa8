//! Files oscycles writes where a user pointed it (report outputs, a killed
//! run's document): never through a link another user planted. The
//! directory is reached one component at a time without following links,
//! except a link this user or root owns in a directory no other user can
//! change; it must belong to this user or root and, if every user can
//! write it, have the sticky bit. A file is created new beside its name
//! (`O_CREAT|O_EXCL|O_NOFOLLOW`, relative to the directory's descriptor) and
//! renamed over it: a link at the name is replaced, never followed.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum UnsafePath {
    #[error("'{0}': {1}")]
    Io(String, std::io::Error),
    #[error(
        "'{path}' goes through '{link}', a symbolic link of uid {uid} (or in a directory other users can change); refused: outputs are never written through a link another user could have planted"
    )]
    Link { path: String, link: String, uid: u32 },
    #[error("'{0}' belongs to uid {1}, another user; refused: write outputs into a directory of your own")]
    Foreign(String, u32),
    #[error("'{0}' can be written by every user and has no sticky bit; refused: write outputs into a directory only you can change")]
    Open(String),
    #[error("'{0}' does not name a file in a directory")]
    NoName(String),
}

/// This process' effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// Owned by this user or root.
fn trusted_uid(uid: u32) -> bool {
    uid == 0 || uid == euid()
}

/// Whether no other user can change the directory's entries.
fn closed(m: &std::fs::Metadata) -> bool {
    trusted_uid(m.uid()) && (m.mode() & 0o002 == 0 || m.mode() & 0o1000 != 0)
}

fn c_name(name: &OsStr) -> std::io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

/// `openat(dir, name, flags)` as a File.
fn open_at(dir: &File, name: &OsStr, flags: libc::c_int, mode: libc::mode_t) -> std::io::Result<File> {
    let n = c_name(name)?;
    // SAFETY: `n` is NUL-terminated and lives across the call; the fd is ours.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), n.as_ptr(), flags | libc::O_CLOEXEC, libc::c_uint::from(mode)) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: openat returned a new descriptor that nothing else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// The owner of the link `name` in `dir`, if it is a link.
fn link_owner(dir: &File, name: &OsStr) -> std::io::Result<Option<u32>> {
    let n = c_name(name)?;
    // SAFETY: an all-zero stat is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `n` is NUL-terminated, `st` is a valid stat buffer.
    if unsafe { libc::fstatat(dir.as_raw_fd(), n.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((st.st_mode & libc::S_IFMT == libc::S_IFLNK).then_some(st.st_uid))
}

/// A directory outputs go into, held open.
pub struct OutDir {
    dir: File,
    path: PathBuf,
}

impl OutDir {
    /// Opens `path` (made, with its parents, when `create`), reached and
    /// checked as the module says.
    pub fn open(path: &Path, create: bool) -> Result<OutDir, UnsafePath> {
        let shown = path.display().to_string();
        let io = |e| UnsafePath::Io(shown.clone(), e);
        let abs = if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().map_err(io)?.join(path) };
        let dflags = libc::O_RDONLY | libc::O_DIRECTORY;
        let mut dir = File::open("/").map_err(io)?;
        let mut so_far = PathBuf::from("/");
        for c in abs.components() {
            let name = match c {
                Component::Normal(n) => n,
                Component::ParentDir => OsStr::new(".."),
                _ => continue,
            };
            so_far.push(name);
            let next = match open_at(&dir, name, dflags | libc::O_NOFOLLOW, 0) {
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) && create => {
                    let n = c_name(name).map_err(io)?;
                    // SAFETY: `n` is NUL-terminated; the directory fd is open.
                    if unsafe { libc::mkdirat(dir.as_raw_fd(), n.as_ptr(), 0o755) } != 0 {
                        let e = std::io::Error::last_os_error();
                        if e.raw_os_error() != Some(libc::EEXIST) {
                            return Err(io(e));
                        }
                    }
                    open_at(&dir, name, dflags | libc::O_NOFOLLOW, 0)
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) => {
                    let Some(uid) = link_owner(&dir, name).map_err(io)? else { return Err(io(e)) };
                    let parent = dir.metadata().map_err(io)?;
                    if !trusted_uid(uid) || !closed(&parent) {
                        return Err(UnsafePath::Link { path: shown, link: so_far.display().to_string(), uid });
                    }
                    open_at(&dir, name, dflags, 0)
                }
                r => r,
            };
            dir = next.map_err(io)?;
        }
        let m = dir.metadata().map_err(io)?;
        if !trusted_uid(m.uid()) {
            return Err(UnsafePath::Foreign(shown, m.uid()));
        }
        if !closed(&m) {
            return Err(UnsafePath::Open(shown));
        }
        Ok(OutDir { dir, path: path.to_path_buf() })
    }

    /// Where a file `name` of this directory is, for messages.
    pub fn path_of(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Writes `bytes` as the file `name` (one component): created new
    /// beside it, then renamed over it (0644).
    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> Result<(), UnsafePath> {
        use std::io::Write;
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let shown = self.path_of(name).display().to_string();
        let io = |e| UnsafePath::Io(shown.clone(), e);
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(UnsafePath::NoName(shown));
        }
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = format!(".oscycles-{}-{nanos}-{n}.tmp", std::process::id());
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        let mut f = open_at(&self.dir, OsStr::new(&tmp), flags, 0o644).map_err(io)?;
        let (t, to) = (c_name(OsStr::new(&tmp)).map_err(io)?, c_name(OsStr::new(name)).map_err(io)?);
        let written = f.write_all(bytes.as_ref()).and_then(|()| f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644)));
        let renamed = written.and_then(|()| {
            // SAFETY: both names are NUL-terminated; both are relative to our open directory.
            if unsafe { libc::renameat(self.dir.as_raw_fd(), t.as_ptr(), self.dir.as_raw_fd(), to.as_ptr()) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
        if renamed.is_err() {
            // SAFETY: `t` is NUL-terminated; the file is the one we created.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), t.as_ptr(), 0) };
        }
        renamed.map_err(io)
    }

    /// The directory's open descriptor (to read a file in it without a path).
    pub fn open_file(&self, name: &str) -> std::io::Result<File> {
        open_at(&self.dir, OsStr::new(name), libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK, 0)
    }

    /// The directory's metadata.
    pub fn metadata(&self) -> std::io::Result<std::fs::Metadata> {
        self.dir.metadata()
    }
}

/// Writes `bytes` to the file `path`, in its directory checked and without
/// following a link at its name ([`OutDir::write`]).
pub fn write_file(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), UnsafePath> {
    let shown = path.display().to_string();
    let name = path.file_name().and_then(|n| n.to_str()).ok_or(UnsafePath::NoName(shown))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    OutDir::open(dir, false)?.write(name, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_at_the_name_is_replaced_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let out = d.path().join("out.md");
        std::os::unix::fs::symlink(&target, &out).unwrap();
        write_file(&out, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new");
        assert!(!std::fs::symlink_metadata(&out).unwrap().file_type().is_symlink());
        // A directory made on the way, and an own link followed.
        let made = OutDir::open(&d.path().join("a/b"), true).unwrap();
        made.write("x", "1").unwrap();
        std::os::unix::fs::symlink(d.path().join("a"), d.path().join("l")).unwrap();
        assert_eq!(std::fs::read_to_string(d.path().join("l/b/x")).unwrap(), "1");
        OutDir::open(&d.path().join("l/b"), false).unwrap().write("y", "2").unwrap();
        assert!(matches!(OutDir::open(&d.path().join("a/b"), false).unwrap().write("../x", "3"), Err(UnsafePath::NoName(_))));
        let leftovers = std::fs::read_dir(d.path().join("a/b"))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".tmp"))
            .count();
        assert_eq!(leftovers, 0);
    }
}
