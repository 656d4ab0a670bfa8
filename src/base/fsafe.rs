//! The one way oscycles writes files (a test fails when `std::fs::write`,
//! `fs::copy`, `File::create` or `create_dir_all` appear elsewhere in src/).
//!
//! The rule: a directory a run writes into is either made by the run itself
//! (`mkdtemp`/[`OutDir::make_dir`], mode 0700) inside a checked one, or is
//! checked ([`OutDir::open`]): every directory on its path, from `/` down,
//! belongs to this user or root and no other user can change its entries
//! (not writable by others, or sticky: then another user's entry is refused
//! when the path goes through it). No other user can then rename anything
//! on the path, so the path keeps naming what was checked: what a run
//! executes from its private directory is what it put there. A symbolic
//! link on the way is followed only if this user or root owns it in a
//! directory no other user can change, and its target is walked the same
//! way. Every file is created new (`O_CREAT|O_EXCL|O_NOFOLLOW`, relative to
//! the directory's open descriptor) or replaced by a rename from a file
//! created new beside it: a link at the name is replaced, never followed.
//! Kernel files (/proc, /sys, /dev) are written only where they exist,
//! never created ([`write_kernel`]).

use std::collections::VecDeque;
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
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
    #[error(
        "'{0}' belongs to uid {1}, another user; refused: oscycles writes only into directories whose whole path belongs to you or root (another user could swap what it writes or runs there)"
    )]
    Foreign(String, u32),
    #[error(
        "'{0}' can be changed by other users (writable by others or by a group, without the sticky bit); refused: oscycles writes only into directories whose whole path only you or root can change"
    )]
    Open(String),
    #[error("'{0}' does not name a file in a directory")]
    NoName(String),
    #[error(
        "'{0}' {1}; refused: oscycles runs a program you name only if it and every directory above it belong to you or root and no other user can change them"
    )]
    Program(String, String),
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

/// Whether no other user can change the directory's entries: it belongs to
/// this user or root, and neither others nor a group of others may write
/// it unless it is sticky.
fn closed(m: &std::fs::Metadata) -> bool {
    // SAFETY: getegid has no arguments and cannot fail.
    let egid = unsafe { libc::getegid() };
    let group_open = m.mode() & 0o020 != 0 && m.gid() != 0 && m.gid() != egid;
    let open = m.mode() & 0o002 != 0 || group_open;
    trusted_uid(m.uid()) && (!open || m.mode() & 0o1000 != 0)
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

/// The target of the link `name` in `dir`.
fn link_target(dir: &File, name: &OsStr) -> std::io::Result<PathBuf> {
    let n = c_name(name)?;
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: `n` is NUL-terminated; `buf` has `buf.len()` writable bytes.
    let len = unsafe { libc::readlinkat(dir.as_raw_fd(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if len < 0 {
        return Err(std::io::Error::last_os_error());
    }
    buf.truncate(len as usize);
    Ok(PathBuf::from(OsString::from_vec(buf)))
}

/// `mkdirat(dir, name, mode)`.
fn mkdir_at(dir: &File, name: &OsStr, mode: libc::mode_t) -> std::io::Result<()> {
    let n = c_name(name)?;
    // SAFETY: `n` is NUL-terminated; the directory fd is open.
    if unsafe { libc::mkdirat(dir.as_raw_fd(), n.as_ptr(), mode) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The names a path is walked by, `..` kept.
fn names(p: &Path) -> impl Iterator<Item = OsString> + '_ {
    p.components().filter_map(|c| match c {
        Component::Normal(n) => Some(n.to_os_string()),
        Component::ParentDir => Some(OsString::from("..")),
        _ => None,
    })
}

/// The root directory a walk starts from: `/proc/self/root` (this
/// process' root, as `/` is), else `/` where /proc is not mounted. Under
/// QEMU's user mode with a library prefix (`QEMU_LD_PREFIX`, for the
/// aarch64 build's dynamically linked helpers) an opened `/` is the
/// prefix's directory: a walk from it made the run's directories there.
fn root() -> std::io::Result<File> {
    File::open("/proc/self/root").or_else(|_| File::open("/"))
}

/// Symbolic links followed on one walk at most (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// A directory outputs go into, held open.
pub struct OutDir {
    dir: File,
    path: PathBuf,
}

/// One walk from `/` down a path ([`OutDir::open`]).
struct Walk {
    shown: String,
    dir: File,
    so_far: PathBuf,
    links: usize,
}

impl Walk {
    fn io(&self, e: std::io::Error) -> UnsafePath {
        UnsafePath::Io(self.shown.clone(), e)
    }

    /// Checks the directory reached: this user's or root's, closed to others.
    fn check(&self) -> Result<(), UnsafePath> {
        let m = self.dir.metadata().map_err(|e| self.io(e))?;
        let here = self.so_far.display().to_string();
        if !trusted_uid(m.uid()) {
            return Err(UnsafePath::Foreign(here, m.uid()));
        }
        if !closed(&m) {
            return Err(UnsafePath::Open(here));
        }
        Ok(())
    }

    /// Goes into `name`: made first when missing and `create`; a link is
    /// followed when trusted, its target's names put first in `rest`.
    fn step(&mut self, name: OsString, create: bool, rest: &mut VecDeque<OsString>) -> Result<(), UnsafePath> {
        let dflags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
        let next = match open_at(&self.dir, &name, dflags, 0) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) && create => {
                match mkdir_at(&self.dir, &name, 0o755) {
                    Err(e) if e.raw_os_error() != Some(libc::EEXIST) => return Err(self.io(e)),
                    _ => {}
                }
                open_at(&self.dir, &name, dflags, 0)
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) => {
                let Some(uid) = link_owner(&self.dir, &name).map_err(|e| self.io(e))? else { return Err(self.io(e)) };
                let link = self.so_far.join(&name).display().to_string();
                let parent = self.dir.metadata().map_err(|e| self.io(e))?;
                self.links += 1;
                if !trusted_uid(uid) || !closed(&parent) || self.links > MAX_LINKS {
                    return Err(UnsafePath::Link { path: self.shown.clone(), link, uid });
                }
                let target = link_target(&self.dir, &name).map_err(|e| self.io(e))?;
                for n in names(&target).collect::<Vec<_>>().into_iter().rev() {
                    rest.push_front(n);
                }
                if target.is_absolute() {
                    self.dir = root().map_err(|e| self.io(e))?;
                    self.so_far = PathBuf::from("/");
                }
                return Ok(());
            }
            r => r,
        };
        self.dir = next.map_err(|e| self.io(e))?;
        self.so_far.push(&name);
        self.check()
    }
}

impl OutDir {
    /// Opens `path` (made, with its parents, when `create`), reached and
    /// checked as the module says.
    pub fn open(path: &Path, create: bool) -> Result<OutDir, UnsafePath> {
        let shown = path.display().to_string();
        let io = |e| UnsafePath::Io(shown.clone(), e);
        let abs = if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().map_err(io)?.join(path) };
        let mut walk = Walk { dir: root().map_err(io)?, so_far: PathBuf::from("/"), links: 0, shown: shown.clone() };
        walk.check()?;
        let mut rest: VecDeque<OsString> = names(&abs).collect();
        while let Some(name) = rest.pop_front() {
            walk.step(name, create, &mut rest)?;
        }
        Ok(OutDir { dir: walk.dir, path: path.to_path_buf() })
    }

    /// The directory's path, as it was named.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where a file `name` of this directory is, for messages.
    pub fn path_of(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// `name` checked to be one component.
    fn name_of(&self, name: &str) -> Result<CString, UnsafePath> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(UnsafePath::NoName(self.path_of(name).display().to_string()));
        }
        c_name(OsStr::new(name)).map_err(|e| UnsafePath::Io(self.path_of(name).display().to_string(), e))
    }

    /// Creates the file `name` new (`O_CREAT|O_EXCL|O_NOFOLLOW`): fails if
    /// anything, a link too, is there.
    pub fn create_new(&self, name: &str, mode: u32) -> Result<File, UnsafePath> {
        self.name_of(name)?;
        let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        open_at(&self.dir, OsStr::new(name), flags, mode).map_err(|e| UnsafePath::Io(self.path_of(name).display().to_string(), e))
    }

    /// Makes the directory `name` new (0700: what the run makes is its
    /// own) and opens it: an existing one, whoever made it, is refused.
    pub fn make_dir(&self, name: &str) -> Result<OutDir, UnsafePath> {
        self.name_of(name)?;
        let io = |e| UnsafePath::Io(self.path_of(name).display().to_string(), e);
        mkdir_at(&self.dir, OsStr::new(name), 0o700).map_err(io)?;
        let dir = open_at(&self.dir, OsStr::new(name), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0).map_err(io)?;
        Ok(OutDir { dir, path: self.path_of(name) })
    }

    /// Writes `bytes` as the file `name` (one component): created new
    /// beside it, then renamed over it (0644).
    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> Result<(), UnsafePath> {
        self.write_from(name, &mut bytes.as_ref(), u64::MAX)
    }

    /// Writes at most `limit` bytes read from `from` as the file `name`, as
    /// [`OutDir::write`] does.
    pub fn write_from(&self, name: &str, from: &mut dyn Read, limit: u64) -> Result<(), UnsafePath> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let to = self.name_of(name)?;
        let io = |e| UnsafePath::Io(self.path_of(name).display().to_string(), e);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = format!(".oscycles-{}-{nanos}-{n}.tmp", std::process::id());
        let mut f = self.create_new(&tmp, 0o600)?;
        let t = c_name(OsStr::new(&tmp)).map_err(io)?;
        let written = std::io::copy(&mut from.take(limit), &mut f)
            .and_then(|_| f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644)));
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

    /// Opens the file `name` of this directory for reading, never through a link.
    pub fn open_file(&self, name: &str) -> std::io::Result<File> {
        open_at(&self.dir, OsStr::new(name), libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK, 0)
    }

    /// The directory's metadata.
    pub fn metadata(&self) -> std::io::Result<std::fs::Metadata> {
        self.dir.metadata()
    }
}

/// Checks the directory `path` as [`OutDir::open`] does (made when
/// `create`), for a path used afterwards by name: no other user can change
/// any directory on it.
pub fn check_dir(path: &Path, create: bool) -> Result<(), UnsafePath> {
    OutDir::open(path, create).map(drop)
}

/// The directory of `path` and its file name.
fn split(path: &Path) -> Result<(&Path, &str), UnsafePath> {
    let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| UnsafePath::NoName(path.display().to_string()))?;
    Ok((path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")), name))
}

/// A program (or a file a program executes, as Ansible does an executable
/// inventory) named by the caller or an environment variable, checked
/// before it runs: its real path, every directory on which is checked as
/// [`OutDir::open`] checks one, and the file itself regular, this user's or
/// root's, writable by no other user (nor by a group, unless gid 0 or this
/// user's group, as [`closed`] allows for directories). Returns the real
/// path: run that one, the path that was checked (no other user can then
/// change what it names).
pub fn trusted_program(path: &Path) -> Result<PathBuf, UnsafePath> {
    let shown = path.display().to_string();
    let real = path.canonicalize().map_err(|e| UnsafePath::Io(shown.clone(), e))?;
    let (dir, name) = split(&real)?;
    let file = OutDir::open(dir, false)?.open_file(name).map_err(|e| UnsafePath::Io(shown.clone(), e))?;
    let m = file.metadata().map_err(|e| UnsafePath::Io(shown.clone(), e))?;
    if !m.is_file() {
        return Err(UnsafePath::Program(shown, "is not a regular file".into()));
    }
    if !trusted_uid(m.uid()) {
        return Err(UnsafePath::Program(shown, format!("belongs to uid {}, another user", m.uid())));
    }
    if !closed(&m) || m.mode() & 0o1000 != 0 && m.mode() & 0o022 != 0 {
        return Err(UnsafePath::Program(shown, "can be written by other users".into()));
    }
    Ok(real)
}

/// Writes `bytes` to the file `path`, in its directory checked and without
/// following a link at its name ([`OutDir::write`]).
pub fn write_file(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), UnsafePath> {
    let (dir, name) = split(path)?;
    OutDir::open(dir, false)?.write(name, bytes)
}

/// Creates `path` new for reading and writing, never following a link:
/// fails with `AlreadyExists` if anything is there. For a file in a
/// directory the run made or checked ([`check_dir`]).
pub fn create_new(path: &Path, mode: u32) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .read(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Writes `bytes` as the new file `path` ([`create_new`], 0644).
pub fn write_new(path: &Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    create_new(path, 0o644)?.write_all(bytes.as_ref())
}

/// Makes the directory `path` new (`mode`), refusing one already there:
/// for a directory inside one the run made or checked.
pub fn make_dir(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(mode).create(path)
}

/// Writes `bytes` into the kernel's file `path` (under /proc or /sys, a
/// cgroup's control file): opened for writing where it exists, never
/// created, never through a link at its name.
pub fn write_kernel(path: &Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new().write(true).truncate(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)?;
    f.write_all(bytes.as_ref())
}

/// This process' own binary, as it and its children run or read it again
/// (a round, an environment's child, a load worker, a guest's /init):
/// `/proc/PID/exe`, the file the kernel started, whatever has since been
/// put at the path it was started by (a binary in another user's directory
/// could be swapped between oscycles' start and a re-exec; a rebuilt one
/// too). Under an emulator's user mode (qemu-aarch64 on x86-64) the kernel
/// started the emulator, not this program: there, the path this program
/// was started by.
pub fn own_exe() -> std::io::Result<PathBuf> {
    let p = PathBuf::from(format!("/proc/{}/exe", std::process::id()));
    if started_by_an_emulator(std::process::id())? { std::env::current_exe() } else { Ok(p) }
}

/// Whether the file the kernel started for `pid` is for another machine
/// than this program (its ELF header's e_machine). Read through
/// `/proc/./PID/exe`: QEMU's user mode answers `/proc/self/exe` and
/// `/proc/PID/exe` of the process it emulates with the emulated program.
fn started_by_an_emulator(pid: u32) -> std::io::Result<bool> {
    const OURS: u16 = if cfg!(target_arch = "aarch64") { 183 } else { 62 };
    let mut head = [0u8; 20];
    File::open(format!("/proc/./{pid}/exe"))?.read_exact(&mut head)?;
    Ok(u16::from_le_bytes([head[18], head[19]]) != OURS)
}

/// Why an entry of PATH was left out ([`trusted_path`]).
#[derive(Debug, Error)]
pub enum PathEntry {
    #[error("PATH: left out '{0}': not an absolute directory (a program found there would depend on the working directory)")]
    Relative(String),
    #[error("PATH: left out '{0}' ({1}): a program found there could be another user's")]
    Open(String, UnsafePath),
    #[error("TMPDIR: left out '{0}' ({1}): temporary files go into /tmp instead")]
    TmpDir(String, UnsafePath),
}

/// PATH's entries that no other user can change, as one value, and why
/// each other was left out: an entry must be absolute, and every directory
/// on its path, from `/` down, must belong to this user or root and be
/// closed to others, as a directory outputs go into ([`OutDir::open`]).
/// Programs oscycles starts by name (QEMU, runsc, linux.uml, objcopy, ip,
/// make...) are then found only where no other user can put or swap one.
/// An entry that does not exist is left out silently (nothing is there to
/// run; it can appear only where no other user can make it).
pub fn trusted_path(path: &OsStr) -> (OsString, Vec<PathEntry>) {
    let (mut kept, mut left) = (Vec::new(), Vec::new());
    for dir in std::env::split_paths(path) {
        let shown = dir.display().to_string();
        if !dir.is_absolute() {
            left.push(PathEntry::Relative(shown));
            continue;
        }
        match OutDir::open(&dir, false) {
            Ok(_) => kept.push(dir),
            Err(UnsafePath::Io(_, e)) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => left.push(PathEntry::Open(shown, e)),
        }
    }
    (std::env::join_paths(kept).unwrap_or_default(), left)
}

/// Keeps only PATH's trusted entries ([`trusted_path`]) in this process'
/// environment (its children inherit it), and TMPDIR only if it is such a
/// directory too (else temporary directories, the FIFOs of an IPC case,
/// a fleet's play, go into /tmp); says why each other was left out.
///
/// # Safety
/// Changes the environment: call it before any other thread starts.
pub unsafe fn keep_trusted_env() -> Vec<PathEntry> {
    let mut left = Vec::new();
    if let Some(path) = std::env::var_os("PATH") {
        let (kept, out) = trusted_path(&path);
        if !out.is_empty() {
            // SAFETY: the caller's contract: no other thread reads or writes
            // the environment yet.
            unsafe { std::env::set_var("PATH", kept) };
        }
        left.extend(out);
    }
    if let Some(tmp) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty()) {
        let dir = PathBuf::from(&tmp);
        let checked = if dir.is_absolute() { check_dir(&dir, false) } else { Err(UnsafePath::NoName(dir.display().to_string())) };
        if let Err(e) = checked {
            // SAFETY: as above.
            unsafe { std::env::remove_var("TMPDIR") };
            left.push(PathEntry::TmpDir(dir.display().to_string(), e));
        }
    }
    left
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_program_runs_by_its_real_path_only_when_no_other_user_can_change_it() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let prog = d.path().join("prog");
        std::fs::write(&prog, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&prog, &link).unwrap();
        assert_eq!(trusted_program(&link).unwrap(), prog.canonicalize().unwrap(), "an own link: the real path is what runs");
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o757)).unwrap();
        assert!(matches!(trusted_program(&prog), Err(UnsafePath::Program(_, _))), "writable by others");
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(trusted_program(&prog), Err(UnsafePath::Open(_))), "a directory others can change");
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(matches!(trusted_program(d.path()), Err(UnsafePath::Program(_, _))), "a directory is not a program");
        assert!(matches!(trusted_program(&d.path().join("none")), Err(UnsafePath::Io(_, _))));
    }

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

    #[test]
    fn a_directory_others_can_change_anywhere_on_the_path_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let open = d.path().join("open");
        std::fs::create_dir_all(open.join("mine")).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(OutDir::open(&open.join("mine"), false), Err(UnsafePath::Open(p)) if p.ends_with("/open")));
        // Through a link of this user's, its target walked the same way.
        std::os::unix::fs::symlink(open.join("mine"), d.path().join("via")).unwrap();
        assert!(matches!(OutDir::open(&d.path().join("via"), false), Err(UnsafePath::Open(_))));
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        OutDir::open(&d.path().join("via"), false).unwrap().write("f", "1").unwrap();
        assert_eq!(std::fs::read_to_string(open.join("mine/f")).unwrap(), "1");
        // What the run makes is new: one already there is refused.
        let out = OutDir::open(d.path(), false).unwrap();
        let made = out.make_dir("made").unwrap();
        assert!(out.make_dir("made").is_err());
        made.create_new("x", 0o600).unwrap();
        assert!(made.create_new("x", 0o600).is_err());
        // A write is bounded.
        made.write_from("small", &mut &[b'a'; 1000][..], 10).unwrap();
        assert_eq!(std::fs::read(d.path().join("made/small")).unwrap().len(), 10);
        assert!(write_kernel(&d.path().join("x"), "1").is_err(), "a kernel file is never created");
    }

    #[test]
    fn its_own_binary_is_the_file_the_kernel_started() {
        use std::os::unix::fs::MetadataExt;
        let (own, started) = (std::fs::metadata(own_exe().unwrap()).unwrap(), std::fs::metadata("/proc/self/exe").unwrap());
        assert_eq!((own.dev(), own.ino()), (started.dev(), started.ino()));
    }

    #[test]
    fn path_keeps_only_directories_no_other_user_can_change() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let (mine, open, sticky) = (d.path().join("mine"), d.path().join("open"), d.path().join("sticky"));
        for (p, mode) in [(&mine, 0o755), (&open, 0o777), (&sticky, 0o1777)] {
            std::fs::DirBuilder::new().create(p).unwrap();
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let gone = d.path().join("gone");
        let path = std::env::join_paths([&open, &mine, Path::new("relative"), &gone, &sticky, Path::new("/usr/bin")]).unwrap();
        let (kept, left) = trusted_path(&path);
        let kept: Vec<PathBuf> = std::env::split_paths(&kept).collect();
        // A sticky directory lets no other user swap an entry it did not make.
        assert_eq!(kept, [mine.clone(), sticky.clone(), PathBuf::from("/usr/bin")]);
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(matches!(&left[0], PathEntry::Open(p, UnsafePath::Open(_)) if *p == open.display().to_string()), "{left:?}");
        assert!(matches!(&left[1], PathEntry::Relative(p) if p == "relative"), "{left:?}");
        assert!(left[0].to_string().contains("could be another user's"));
    }
}
