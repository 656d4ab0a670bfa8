//! Files oscycles lays out, and where: every run gets a private directory
//! (`mkdtemp`, mode 0700, owned by whoever runs oscycles) under the scratch
//! base (`--scratch`, default the system's temporary directory), and every
//! file inside it is created exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`). No
//! other user can see, plant, replace or redirect a file oscycles uses, even
//! where `fs.protected_symlinks` and `fs.protected_regular` are off.
//!
//! A run holds an exclusive `flock` on `lock` inside its directory for as
//! long as it lives; the lock goes with the process however it ends, so the
//! next run removes the directories whose lock nobody holds (a SIGKILLed
//! run's blk file, load tree, QEMU initramfs...).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Names of run directories: `oscycles-run-` and random characters.
pub const RUN_DIR_PREFIX: &str = "oscycles-run-";
const LOCK: &str = "lock";
/// A directory without a lock file is taken for one being set up (the lock
/// is created a moment after the directory) until it is this old.
const SETUP_GRACE: std::time::Duration = std::time::Duration::from_secs(60);

/// A name no other file of this process uses (threads of one process may
/// lay out files at the same time). Only for use inside a private directory.
pub fn unique_name(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("oscycles-{prefix}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

pub use crate::base::fsafe::create_new;

/// A private directory (0700) for one run, removed with everything in it on
/// drop; while it lives its lock is held.
#[derive(Debug)]
pub struct RunDir {
    dir: tempfile::TempDir,
    _lock: File,
}

impl RunDir {
    /// A new private directory under `base`, after removing the directories
    /// dead runs left there. Returns the lines saying what was removed.
    pub fn create(base: &Path) -> io::Result<(RunDir, Vec<String>)> {
        // The base checked (every directory on its path this user's or
        // root's, closed to others): no other user can swap the private
        // directory made in it, nor what the run executes from there.
        crate::base::fsafe::check_dir(base, false).map_err(|e| io::Error::new(io::ErrorKind::PermissionDenied, e.to_string()))?;
        let reaped = reap_dead(base);
        Ok((RunDir::private(base)?, reaped))
    }

    /// A new private directory under `base`, locked, without checking the
    /// base or reaping: for an environment's child in namespaces of its own
    /// (in a user namespace the base's owner may read as nobody), under the
    /// system's temporary directory. Left by a killed child, the next run's
    /// [`reap_dead`] removes it.
    pub fn private(base: &Path) -> io::Result<RunDir> {
        let dir = tempfile::Builder::new()
            .prefix(RUN_DIR_PREFIX)
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(base)?;
        let lock = create_new(&dir.path().join(LOCK), 0o600)?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(RunDir { dir, _lock: lock })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Removes the run directories under `base` that belong to this user and
/// whose lock no live process holds. Never follows a symlink (an entry is
/// examined with lstat and must be a directory this user owns).
pub fn reap_dead(base: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(base) else { return vec![] };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let mut out = Vec::new();
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().starts_with(RUN_DIR_PREFIX) {
            continue;
        }
        let path = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if !meta.is_dir() || meta.uid() != me {
            continue;
        }
        if is_dead(&path, &meta) {
            let bytes = du(&path);
            if std::fs::remove_dir_all(&path).is_ok() {
                out.push(format!("removed {} ({} MiB) left by a run that ended without cleaning up", path.display(), bytes >> 20));
            }
        }
    }
    out
}

fn is_dead(dir: &Path, meta: &std::fs::Metadata) -> bool {
    match OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(dir.join(LOCK)) {
        Ok(f) => {
            // SAFETY: flock on a descriptor owned by f; released when f closes.
            unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            meta.modified().ok().and_then(|m| m.elapsed().ok()).is_some_and(|age| age > SETUP_GRACE)
        }
        Err(_) => false,
    }
}

fn du(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => du(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

crate::named_enum! {
    /// How a file the file cases read is written: the size of each write(2)
    /// (`--where file_writes=...`). The page cache's folios follow the
    /// writes, and with them what a later read(2) copies and a page fault
    /// maps at once: lat_pagefault, bw_mmap_rd open2close and bw_file_rd
    /// read a file of 4 KiB writes and one of 1 MiB writes up to 2.5x apart.
    pub enum FileWrites {
        /// 8 KiB writes, then fsync: as lmbench's script makes its file
        /// (`lmdd of=FILE move=64m fsync=1`, lmdd's default block of 8 KiB).
        Lmdd = "8k",
        /// Page-sized writes, as a program writing a page at a time.
        Page = "4k",
        /// 1 MiB writes, as `dd bs=1M` or a copy makes a file (large folios).
        Large = "1m",
    }
}

impl FileWrites {
    /// The default: the file lmbench's own script makes.
    pub const LMBENCH: FileWrites = FileWrites::Lmdd;

    /// Bytes per write(2).
    pub fn bytes(self) -> usize {
        match self {
            FileWrites::Lmdd => 8 << 10,
            FileWrites::Page => 4 << 10,
            FileWrites::Large => 1 << 20,
        }
    }

    /// In words, for tables: "8 KiB writes".
    pub fn words(self) -> &'static str {
        match self {
            FileWrites::Lmdd => "8 KiB writes",
            FileWrites::Page => "4 KiB writes",
            FileWrites::Large => "1 MiB writes",
        }
    }
}

pub struct ScratchFile {
    pub path: PathBuf,
    pub bytes: u64,
    /// The write(2) calls this thread made writing it, as the kernel
    /// counted them (`syscw` of /proc/thread-self/io), where it says.
    pub write_calls: Option<u64>,
}

impl ScratchFile {
    /// A file of `bytes` bytes of a known pattern, created exclusively in
    /// `dir` (a private directory), written in 64 KiB writes and left in the
    /// page cache.
    pub fn create(dir: &Path, name: &str, bytes: u64) -> io::Result<ScratchFile> {
        Self::written_in(dir, name, bytes, 1 << 16)
    }

    /// The same, written `write_bytes` at a time, then fsync'd (as lmbench's
    /// lmdd with fsync=1), its pages left in the page cache. How a file was
    /// written shapes its page cache: large writes get large folios, which a
    /// later read(2) copies and a page fault maps (fault-around) many pages
    /// at a time ([`FileWrites`]). Measured here (kernel 6.18, ext4): a
    /// fresh mapping of a 64 MiB file written in 1 MiB writes faults in at
    /// 0.1 us a page, written in 4 KiB writes at 0.7-1.2 us.
    pub fn written_in(dir: &Path, name: &str, bytes: u64, write_bytes: usize) -> io::Result<ScratchFile> {
        let path = dir.join(unique_name(name));
        let mut file = create_new(&path, 0o600)?;
        let before = write_syscalls();
        let chunk: Vec<u8> = (0..write_bytes).map(|i| (i % 251) as u8).collect();
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            file.write_all(&chunk[..n])?;
            left -= n as u64;
        }
        let write_calls = before.zip(write_syscalls()).map(|(b, a)| a.saturating_sub(b));
        file.sync_all()?;
        Ok(ScratchFile { path, bytes, write_calls })
    }
}

/// The write-type system calls this thread has made (`syscw` of
/// /proc/thread-self/io), None where the kernel does not say.
fn write_syscalls() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/io").ok()?;
    text.lines().find_map(|l| l.strip_prefix("syscw:")).and_then(|v| v.trim().parse().ok())
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_dir_is_private_and_locked_and_reaped_only_when_dead() {
        let base = tempfile::tempdir().unwrap();
        let (live, _) = RunDir::create(base.path()).unwrap();
        let meta = std::fs::metadata(live.path()).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o700);
        // A live run's directory survives another run's reaping.
        assert!(reap_dead(base.path()).is_empty());
        assert!(live.path().exists());
        // A dead run's: its lock file is there, nobody holds it.
        let dead = base.path().join(format!("{RUN_DIR_PREFIX}dead"));
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dead.join(LOCK), b"").unwrap();
        std::fs::write(dead.join("big"), vec![0u8; 4096]).unwrap();
        // A symlink with the prefix is never followed.
        let target = tempfile::tempdir().unwrap();
        std::fs::write(target.path().join(LOCK), b"").unwrap();
        std::os::unix::fs::symlink(target.path(), base.path().join(format!("{RUN_DIR_PREFIX}link"))).unwrap();
        let removed = reap_dead(base.path());
        assert_eq!(removed.len(), 1, "{removed:?}");
        assert!(!dead.exists());
        assert!(target.path().join(LOCK).exists());
        let p = live.path().to_path_buf();
        drop(live);
        assert!(!p.exists());
    }

    /// A file is written in the write size asked: the kernel counted one
    /// write(2) per block (per size, a 4 MiB file).
    #[test]
    fn a_file_is_written_in_the_writes_asked() {
        use crate::base::named::Named;
        let base = tempfile::tempdir().unwrap();
        for &w in FileWrites::ALL {
            let f = ScratchFile::written_in(base.path(), "w", 4 << 20, w.bytes()).unwrap();
            assert_eq!(std::fs::metadata(&f.path).unwrap().len(), 4 << 20);
            let calls = f.write_calls.expect("this kernel counts a thread's write calls (/proc/thread-self/io)");
            assert_eq!(calls, (4 << 20) / w.bytes() as u64, "{}", w.name());
        }
        assert_eq!(FileWrites::parse("8k"), Some(FileWrites::LMBENCH));
        assert_eq!(FileWrites::parse("2m"), None);
    }

    #[test]
    fn scratch_files_refuse_what_is_already_there() {
        let base = tempfile::tempdir().unwrap();
        let f = ScratchFile::create(base.path(), "t", 100_000).unwrap();
        assert_eq!(std::fs::metadata(&f.path).unwrap().len(), 100_000);
        let p = base.path().join("planted");
        std::os::unix::fs::symlink("/etc/passwd", &p).unwrap();
        assert_eq!(create_new(&p, 0o600).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
    }
}
