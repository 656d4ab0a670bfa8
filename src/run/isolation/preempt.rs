//! The kernel's preemption mode as a condition (`--preempt`), beside the
//! load and the isolation mode. The L4Re "Detaching Linux threads" slides
//! measure a PREEMPT Linux; a PREEMPT_DYNAMIC kernel takes its mode at run
//! time from root writing `/sys/kernel/debug/sched/preempt`, so each
//! condition runs under the mode asked for and the one before is put back
//! after, journalled with the isolation settings (a run killed meanwhile
//! is undone by the next). debugfs is mounted at `/sys/kernel/debug` for it
//! where it is not, and unmounted after. Where the kernel does not take the
//! mode (not PREEMPT_DYNAMIC, debugfs locked down), the condition's cases
//! are n/a with the kernel's reason.

use super::{Applied, Change, JournalError};
use crate::data::schema_core::condition;
use crate::measure::host::{DEBUGFS, SCHED_PREEMPT, mounted_at};
use serde_json::json;
use std::path::{Path, PathBuf};

crate::named_enum! {
    pub enum Preempt {
        None = "none",
        Voluntary = "voluntary",
        Full = "full",
        Lazy = "lazy",
    }
}

/// Why a preemption mode could not be put in force.
#[derive(Debug, thiserror::Error)]
pub enum PreemptError {
    #[error("--preempt {mode} needs root (it writes {SCHED_PREEMPT})")]
    NotRoot { mode: &'static str },
    #[error("--preempt {mode}: mounting debugfs at {DEBUGFS}: {source}")]
    Mount { mode: &'static str, source: std::io::Error },
    #[error("--preempt {mode}: the kernel does not let root switch it: reading {SCHED_PREEMPT}: {source}")]
    Read { mode: &'static str, source: std::io::Error },
    #[error("--preempt {mode}: {SCHED_PREEMPT} names no current mode (it says '{text}')")]
    Unreadable { mode: &'static str, text: String },
    #[error("--preempt {mode}: this kernel offers {offered}")]
    NotOffered { mode: &'static str, offered: String },
    #[error("--preempt {mode}: the kernel refused it: {source}")]
    Write { mode: &'static str, source: std::io::Error },
    #[error("--preempt {mode}: the kernel took the write but runs '{now}'")]
    Kept { mode: &'static str, now: String },
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// Mounts debugfs at [`DEBUGFS`] where nothing is mounted there; journalled.
fn mount_debugfs(a: &mut Applied, mode: &'static str) -> Result<(), PreemptError> {
    if Path::new(SCHED_PREEMPT).exists() || mounted_at(DEBUGFS) {
        return Ok(());
    }
    let c = |s: &str| std::ffi::CString::new(s).expect("no NUL in a constant");
    let (src, target, fstype) = (c("debugfs"), c(DEBUGFS), c("debugfs"));
    // SAFETY: three valid NUL-terminated strings and no data; mount(2) reads them only.
    let rc = unsafe { libc::mount(src.as_ptr(), target.as_ptr(), fstype.as_ptr(), 0, std::ptr::null()) };
    if rc != 0 {
        return Err(PreemptError::Mount { mode, source: std::io::Error::last_os_error() });
    }
    Ok(a.journal.record(Change::Mount { path: PathBuf::from(DEBUGFS) })?)
}

/// The modes debugfs' text offers and the current one (in parentheses):
/// "none (voluntary) full lazy".
pub fn offered(text: &str) -> (Vec<String>, Option<String>) {
    let words: Vec<&str> = text.split_whitespace().collect();
    let current = words.iter().find(|w| w.starts_with('(') && w.ends_with(')')).map(|w| w.trim_matches(['(', ')']).to_string());
    (words.iter().map(|w| w.trim_matches(['(', ')']).to_string()).collect(), current)
}

/// Puts `mode` in force for the condition `a` stands for, journalled in
/// `a` (restored when it is dropped); records what it did in `a.facts`.
pub fn switch(a: &mut Applied, mode: Preempt) -> Result<(), PreemptError> {
    use crate::base::named::Named;
    let name = mode.name();
    // SAFETY: geteuid has no arguments.
    if unsafe { libc::geteuid() } != 0 {
        return Err(PreemptError::NotRoot { mode: name });
    }
    // On disk before the first change, for a later run to undo after a SIGKILL.
    a.journal.save()?;
    mount_debugfs(a, name)?;
    let path = Path::new(SCHED_PREEMPT);
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|source| PreemptError::Read { mode: name, source });
    let text = read(path)?;
    let (modes, current) = offered(&text);
    let Some(before) = current else { return Err(PreemptError::Unreadable { mode: name, text: text.trim().into() }) };
    if !modes.iter().any(|m| m == name) {
        return Err(PreemptError::NotOffered { mode: name, offered: modes.join(", ") });
    }
    let fact = if before == name {
        format!("{name} (already the kernel's mode)")
    } else {
        crate::measure::cgroup::write(path, name).map_err(|source| PreemptError::Write { mode: name, source })?;
        a.journal.record(Change::File { path: path.to_path_buf(), before: before.clone() })?;
        match offered(&read(path)?).1 {
            Some(now) if now == name => {}
            now => return Err(PreemptError::Kept { mode: name, now: now.unwrap_or_default() }),
        }
        format!("{name} (switched from {before} through {SCHED_PREEMPT}; {before} put back after)")
    };
    a.facts.insert(condition::PREEMPT.into(), json!(fact));
    Ok(())
}

/// Undoes a journalled mount of debugfs.
pub fn unmount(path: &Path) -> Result<(), String> {
    let target = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: a valid NUL-terminated path; umount2 reads it only.
    if unsafe { libc::umount2(target.as_ptr(), 0) } != 0 {
        return Err(format!("unmounting {}: {}", path.display(), std::io::Error::last_os_error()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::named::Named;

    #[test]
    fn the_modes_debugfs_offers_and_the_current_one() {
        let (modes, now) = offered("none (voluntary) full lazy\n");
        assert_eq!(modes, ["none", "voluntary", "full", "lazy"]);
        assert_eq!(now.as_deref(), Some("voluntary"));
        assert_eq!(offered("none voluntary full").1, None);
        assert_eq!(Preempt::parse("full"), Some(Preempt::Full));
        assert_eq!(Preempt::parse("rt"), None, "PREEMPT_RT is a kernel of its own, not a mode to switch to");
    }
}
