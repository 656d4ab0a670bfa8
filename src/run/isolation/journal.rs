//! Where the isolation journal lives, and what of it is trusted.
//!
//! A journal is acted on by a later run, which may be root: whoever can
//! write one can make that run write files. So everything about it is
//! checked before it is believed:
//!
//! - its directory, `/run/oscycles`, is made 0700 (`mkdir`, then an explicit
//!   `chmod`, whatever the umask) and, every time it is opened, must be a
//!   real directory owned by root and writable by nobody else;
//! - a journal file is created `O_EXCL|O_NOFOLLOW` 0600 and read only when
//!   it is a regular file owned by the running user and writable by no one
//!   else;
//! - each entry of a journal left by a dead process must be something
//!   oscycles itself does ([`allowed`]): a control file of a cgroup root or
//!   of a cpuset it made, an IRQ's affinity, a cpuset named after that
//!   process. One entry outside that list and none of the journal is acted on.

use super::Change;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use thiserror::Error;

/// The directory of journals.
pub const DIR: &str = "/run/oscycles";

/// The largest journal read (a machine with thousands of IRQs writes a few
/// hundred KiB).
const MAX_BYTES: u64 = 4 << 20;

#[derive(Debug, Error)]
pub enum JournalError {
    #[error("cannot make the isolation journal directory {}: {err}", DIR)]
    MakeDir { err: std::io::Error },
    #[error(
        "{} {why}: isolation journals there are not trusted (another user could have written them); make it a directory owned by root with mode 0700 (or remove it: oscycles makes it so)",
        DIR
    )]
    UntrustedDir { why: String },
    #[error("cannot write the isolation journal {path}: {err}")]
    Write { path: PathBuf, err: std::io::Error },
    #[error("the isolation journal {path} is not trusted: {why}; it was not acted on")]
    UntrustedFile { path: PathBuf, why: String },
    #[error("the isolation journal {path} holds an entry oscycles never makes ({entry}); none of it was acted on")]
    Entry { path: PathBuf, entry: String },
}

fn euid() -> u32 {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// Checks (and with `create`, makes) the journal directory `dir`. Ok(false)
/// when it does not exist and was not to be made.
pub fn open_dir(dir: &Path, create: bool) -> Result<bool, JournalError> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !create {
                return Ok(false);
            }
            match fs::DirBuilder::new().mode(0o700).create(dir) {
                Ok(()) => fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(|err| JournalError::MakeDir { err })?,
                // Another oscycles made it meanwhile: checked below like any other.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(JournalError::MakeDir { err }),
            }
        }
        Err(err) => return Err(JournalError::MakeDir { err }),
        Ok(_) => {}
    }
    let m = fs::symlink_metadata(dir).map_err(|err| JournalError::MakeDir { err })?;
    let why = if m.file_type().is_symlink() {
        Some("is a symbolic link".to_string())
    } else if !m.is_dir() {
        Some("is not a directory".to_string())
    } else if m.uid() != 0 {
        Some(format!("belongs to uid {}, not root", m.uid()))
    } else if m.mode() & 0o022 != 0 {
        Some(format!("has mode {:04o}, writable by group or others", m.mode() & 0o7777))
    } else {
        None
    };
    match why {
        Some(why) => Err(JournalError::UntrustedDir { why }),
        None => Ok(true),
    }
}

/// Claims `path` for a new journal: created exclusively, never through a
/// link, 0600 whatever the umask.
pub fn create(path: &Path) -> Result<(), JournalError> {
    let write = |err| JournalError::Write { path: path.to_path_buf(), err };
    let f = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(path).map_err(write)?;
    f.set_permissions(fs::Permissions::from_mode(0o600)).map_err(write)
}

/// Replaces the journal at `path` (claimed by [`create`]) with `text`: a
/// new exclusive 0600 file beside it, renamed over it (a crash leaves the
/// old journal or the new, never a part).
pub fn replace(path: &Path, text: &str) -> Result<(), JournalError> {
    let write = |err| JournalError::Write { path: path.to_path_buf(), err };
    let dir = path.parent().unwrap_or(Path::new(DIR));
    let mut tmp = tempfile::Builder::new()
        .prefix(".isolation-")
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)
        .map_err(write)?;
    tmp.write_all(text.as_bytes()).map_err(write)?;
    tmp.persist(path).map(drop).map_err(|e| write(e.error))
}

/// The text of a journal file, if it is one the running user wrote: a
/// regular file (not followed through a link) owned by this user and
/// writable by no one else, of a bounded size.
pub fn read_trusted(path: &Path) -> Result<String, JournalError> {
    let untrusted = |why: String| JournalError::UntrustedFile { path: path.to_path_buf(), why };
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| untrusted(format!("opening it without following links: {e}")))?;
    let m = f.metadata().map_err(|e| untrusted(e.to_string()))?;
    if !m.is_file() {
        return Err(untrusted("it is not a regular file".into()));
    }
    if m.uid() != euid() {
        return Err(untrusted(format!("it belongs to uid {}, not to uid {} running oscycles", m.uid(), euid())));
    }
    if m.mode() & 0o022 != 0 {
        return Err(untrusted(format!("its mode {:04o} lets others write it", m.mode() & 0o7777)));
    }
    let mut text = String::new();
    f.take(MAX_BYTES).read_to_string(&mut text).map_err(|e| untrusted(e.to_string()))?;
    Ok(text)
}

/// A path without `..`, `.` or a relative start: compared as written.
fn plain(p: &Path) -> bool {
    p.is_absolute() && p.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
}

/// Whether `p` is a cpuset oscycles process `pid` made under a cgroup root.
fn made_by(p: &Path, pid: u32, roots: &[PathBuf]) -> bool {
    let names = [format!("oscycles-isolated-{pid}"), format!("oscycles-system-{pid}")];
    plain(p) && roots.iter().any(|r| p.parent() == Some(r.as_path())) && names.iter().any(|n| p.file_name() == Some(n.as_ref()))
}

/// Whether `p` is a control file oscycles sets: at a cgroup root, of a
/// cpuset it made, or an IRQ's affinity.
fn control_file(p: &Path, pid: u32, roots: &[PathBuf]) -> bool {
    let (Some(dir), Some(name)) = (p.parent(), p.file_name().and_then(|n| n.to_str())) else { return false };
    let at_root = roots.iter().any(|r| dir == r) && matches!(name, "cgroup.subtree_control" | "cpuset.sched_load_balance");
    let in_made = made_by(dir, pid, roots) && name == "cpuset.cpus.partition";
    let irq = (dir == Path::new("/proc/irq") && name == "default_smp_affinity")
        || (dir.parent() == Some(Path::new("/proc/irq"))
            && dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            && name == "smp_affinity_list");
    plain(p) && (at_root || in_made || irq)
}

/// Whether `c` puts back the kernel's preemption mode: its debugfs file, one of the modes.
fn preempt_mode(c: &Change) -> bool {
    use crate::base::named::Named;
    matches!(c, Change::File { path, before }
        if path == Path::new(crate::measure::host::SCHED_PREEMPT) && super::preempt::Preempt::parse(before).is_some())
}

/// Whether `c`, found in the journal of dead process `pid`, is something
/// oscycles does and so may be undone. `roots` are the cgroup hierarchies
/// holding the cpuset controller.
pub fn allowed(c: &Change, pid: u32, roots: &[PathBuf]) -> bool {
    let tasks_file = |p: &Path| matches!(p.file_name().and_then(|n| n.to_str()), Some("tasks" | "cgroup.procs"));
    match c {
        Change::File { .. } if preempt_mode(c) => true,
        Change::File { path, before } => {
            control_file(path, pid, roots)
                && before.len() <= 256
                && before.chars().all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, ',' | '-' | '+' | ' '))
        }
        Change::Dir { path } => made_by(path, pid, roots),
        Change::Drain { from, to } => {
            tasks_file(from)
                && from.parent().is_some_and(|d| made_by(d, pid, roots))
                && to.file_name() == from.file_name()
                && plain(to)
                && roots.iter().any(|r| to.starts_with(r))
        }
        Change::Mount { path } => path == Path::new(crate::measure::host::DEBUGFS),
        // Threads of the dead process: gone, their ids maybe another's now.
        Change::Affinity { .. } | Change::MemoryLocked => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_oscycles_changes_is_allowed() {
        let roots = vec![PathBuf::from("/sys/fs/cgroup/cpuset")];
        let file = |p: &str| Change::File { path: p.into(), before: "1".into() };
        for ok in ["/sys/fs/cgroup/cpuset/cpuset.sched_load_balance", "/proc/irq/17/smp_affinity_list", "/proc/irq/default_smp_affinity"] {
            assert!(allowed(&file(ok), 42, &roots), "{ok}");
        }
        assert!(allowed(&file("/sys/fs/cgroup/cpuset/oscycles-isolated-42/cpuset.cpus.partition"), 42, &roots));
        for bad in [
            "/etc/shadow",
            "/root/.bashrc",
            "/sys/fs/cgroup/cpuset/../../../etc/passwd",
            "/sys/fs/cgroup/cpuset/oscycles-isolated-43/cpuset.cpus.partition",
            "/proc/irq/x/smp_affinity_list",
            "/proc/irq/17/../../sys/kernel/core_pattern",
            "/proc/sys/kernel/core_pattern",
            "/sys/fs/cgroup/cpuset/cpuset.cpus",
        ] {
            assert!(!allowed(&file(bad), 42, &roots), "{bad}");
        }
        let odd = Change::File { path: "/proc/irq/17/smp_affinity_list".into(), before: "|/tmp/x".into() };
        assert!(!allowed(&odd, 42, &roots), "a value no such file holds");
        assert!(allowed(&Change::Dir { path: "/sys/fs/cgroup/cpuset/oscycles-system-42".into() }, 42, &roots));
        assert!(!allowed(&Change::Dir { path: "/home/user".into() }, 42, &roots));
        let drain = |from: &str, to: &str| Change::Drain { from: from.into(), to: to.into() };
        assert!(allowed(&drain("/sys/fs/cgroup/cpuset/oscycles-system-42/tasks", "/sys/fs/cgroup/cpuset/tasks"), 42, &roots));
        assert!(!allowed(&drain("/sys/fs/cgroup/cpuset/tasks", "/sys/fs/cgroup/cpuset/oscycles-system-42/tasks"), 42, &roots));
        assert!(!allowed(&drain("/sys/fs/cgroup/cpuset/oscycles-system-42/tasks", "/tmp/tasks"), 42, &roots));
        assert!(!allowed(&Change::Affinity { tid: 1, cpus: vec![0] }, 42, &roots));
        let preempt = |before: &str| Change::File { path: "/sys/kernel/debug/sched/preempt".into(), before: before.into() };
        assert!(allowed(&preempt("voluntary"), 42, &roots));
        assert!(!allowed(&preempt("1"), 42, &roots), "a value the file never holds");
        assert!(allowed(&Change::Mount { path: "/sys/kernel/debug".into() }, 42, &roots));
        assert!(!allowed(&Change::Mount { path: "/proc".into() }, 42, &roots), "only the debugfs oscycles mounts");
    }

    #[test]
    fn an_untrusted_directory_or_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("j");
        assert!(!open_dir(&dir, false).unwrap(), "absent and not to be made");
        if euid() == 0 {
            // SAFETY: umask has no preconditions; restored below.
            let old = unsafe { libc::umask(0) };
            let made = open_dir(&dir, true);
            // SAFETY: as above.
            unsafe { libc::umask(old) };
            assert!(made.unwrap());
            assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o7777, 0o700, "0700 whatever the umask");
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
            assert!(matches!(open_dir(&dir, true), Err(JournalError::UntrustedDir { .. })));
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
            let j = dir.join("isolation-1.json");
            create(&j).unwrap();
            assert!(create(&j).is_err(), "created exclusively");
            replace(&j, "{}").unwrap();
            assert_eq!(read_trusted(&j).unwrap(), "{}");
            assert_eq!(fs::metadata(&j).unwrap().mode() & 0o7777, 0o600);
            fs::set_permissions(&j, fs::Permissions::from_mode(0o666)).unwrap();
            assert!(matches!(read_trusted(&j), Err(JournalError::UntrustedFile { .. })));
            let link = dir.join("isolation-2.json");
            std::os::unix::fs::symlink(&j, &link).unwrap();
            assert!(matches!(read_trusted(&link), Err(JournalError::UntrustedFile { .. })), "a link is not followed");
            assert!(create(&link).is_err(), "nor created through");
        }
    }
}
