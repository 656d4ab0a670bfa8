//! Where a benchmark runs: which CPUs, which scheduling policy, whether
//! memory is locked. Placement is always explicit and recorded.

use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum PlacementError {
    #[error("invalid CPU list '{0}': expected comma-separated CPU numbers or ranges, e.g. 0,1 or 0-3")]
    Syntax(String),
    #[error("CPU {cpu} in '{list}' is not available to this process (allowed: {allowed})")]
    NotAllowed { cpu: usize, list: String, allowed: String },
    #[error("cannot pin to CPU {cpu}: {err}")]
    Pin { cpu: usize, err: String },
    #[error("cannot set {policy}: {err} (needs root or CAP_SYS_NICE)")]
    Policy { policy: String, err: String },
    #[error("cannot lock memory (mlockall): {0} (needs root or a large enough RLIMIT_MEMLOCK)")]
    Mlock(String),
}

/// Formats a CPU list compactly: [0,1,2,5] -> "0-2,5".
pub fn format_cpus(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if j > i { format!("{}-{}", cpus[i], cpus[j]) } else { cpus[i].to_string() });
        i = j + 1;
    }
    out.join(",")
}

/// Parses "0,2-3" into [0, 2, 3], keeping the order given and dropping repeats.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, PlacementError> {
    let bad = || PlacementError::Syntax(s.to_string());
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<usize>().map_err(|_| bad())?, b.trim().parse::<usize>().map_err(|_| bad())?),
            None => {
                let v = part.parse::<usize>().map_err(|_| bad())?;
                (v, v)
            }
        };
        // CPUs beyond the allowed set are refused by validate_cpus with a
        // clearer sentence; the bound here only keeps ranges finite.
        if a > b || b >= 1 << 16 {
            return Err(bad());
        }
        for c in a..=b {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// The CPUs this thread may run on.
pub fn allowed_cpus() -> Vec<usize> {
    affinity_of(0)
}

/// The CPUs thread `tid` may run on (0: the calling thread); empty if unknown.
pub fn affinity_of(tid: u32) -> Vec<usize> {
    // SAFETY: set is a properly sized cpu_set_t that the kernel fills in.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(tid as libc::pid_t, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![];
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// Checks a user's CPU list against the CPUs this process may use.
pub fn validate_cpus(list: &str) -> Result<Vec<usize>, PlacementError> {
    let cpus = parse_cpu_list(list)?;
    let allowed = allowed_cpus();
    for &c in &cpus {
        if !allowed.contains(&c) {
            return Err(PlacementError::NotAllowed { cpu: c, list: list.into(), allowed: format_cpus(&allowed) });
        }
    }
    Ok(cpus)
}

/// Sets the calling thread's affinity; allocation-free, for forked children.
pub fn set_affinity(cpus: &[usize]) -> std::io::Result<()> {
    set_affinity_of(0, cpus)
}

/// Sets thread `tid`'s affinity (0: the calling thread); allocation-free.
pub fn set_affinity_of(tid: u32, cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: set is zeroed, filled with CPU_SET for in-range CPUs, and passed
    // with its true size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(tid as libc::pid_t, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> Result<(), PlacementError> {
    set_affinity(&[cpu]).map_err(|e| PlacementError::Pin { cpu, err: e.to_string() })
}

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no arguments and no memory effects.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as usize)
}

/// Restores the calling thread's affinity when dropped.
pub struct AffinityGuard(Vec<usize>);

impl AffinityGuard {
    pub fn save() -> Self {
        AffinityGuard(allowed_cpus())
    }
}

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            let _ = set_affinity(&self.0);
        }
    }
}

/// The scheduling policy a measured thread runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    Other,
    Fifo { priority: i32 },
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Policy::Other => write!(f, "SCHED_OTHER"),
            Policy::Fifo { priority } => write!(f, "SCHED_FIFO {priority}"),
        }
    }
}

/// Applies a policy to the calling thread; allocation-free, for forked children.
pub fn apply_policy(p: Policy) -> std::io::Result<()> {
    let (pol, prio) = match p {
        Policy::Other => (libc::SCHED_OTHER, 0),
        Policy::Fifo { priority } => (libc::SCHED_FIFO, priority),
    };
    let param = libc::sched_param { sched_priority: prio };
    // SAFETY: param is a valid sched_param; pid 0 is the calling thread.
    if unsafe { libc::sched_setscheduler(0, pol, &param) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Applies a policy to the calling thread.
pub fn set_policy(p: Policy) -> Result<(), PlacementError> {
    apply_policy(p).map_err(|e| PlacementError::Policy { policy: p.to_string(), err: e.to_string() })
}

/// The policy of the calling thread as the kernel reports it.
pub fn current_policy() -> Policy {
    // SAFETY: pid 0 is the calling thread; param is a valid out-pointer.
    unsafe {
        let pol = libc::sched_getscheduler(0);
        let mut param = libc::sched_param { sched_priority: 0 };
        libc::sched_getparam(0, &mut param);
        if pol == libc::SCHED_FIFO { Policy::Fifo { priority: param.sched_priority } } else { Policy::Other }
    }
}

/// Restores the calling thread's scheduling policy when dropped.
pub struct PolicyGuard(Policy);

impl PolicyGuard {
    pub fn save() -> Self {
        PolicyGuard(current_policy())
    }
}

impl Drop for PolicyGuard {
    fn drop(&mut self) {
        if current_policy() != self.0 {
            let _ = set_policy(self.0);
        }
    }
}

/// Locks all current and future memory of the process.
pub fn lock_memory() -> Result<(), PlacementError> {
    // SAFETY: mlockall has no pointer arguments.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
        return Err(PlacementError::Mlock(std::io::Error::last_os_error().to_string()));
    }
    Ok(())
}

/// Whether the process's memory is locked (VmLck in /proc/self/status).
pub fn memory_locked() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmLck:")).map(|l| !l.contains(" 0 kB")))
        .unwrap_or(false)
}

/// Same core or cross core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Cores {
    Same,
    Cross,
}

/// Two threads of one process, or two processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Space {
    Intra,
    Inter,
}

/// What a result records of where it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// "thread" or "process" for one actor; "threads" or "processes" for pairs.
    pub actors: String,
    /// The CPUs requested, one per actor.
    pub cpus: Vec<usize>,
    /// The CPUs each actor observed itself on (sched_getcpu) at the end.
    pub observed_cpus: Vec<Option<usize>>,
    pub policy: String,
    pub memory_locked: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_ranges() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("1,0").unwrap(), vec![1, 0]);
        assert_eq!(parse_cpu_list("0-2,5, 1").unwrap(), vec![0, 1, 2, 5]);
        for bad in ["", "a", "1-", "3-1", "0,,1", "-1", "0-99999"] {
            assert!(matches!(parse_cpu_list(bad), Err(PlacementError::Syntax(_))), "{bad}");
        }
    }

    #[test]
    fn formats_ranges() {
        assert_eq!(format_cpus(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(format_cpus(&[]), "");
    }

    #[test]
    fn refuses_cpus_outside_affinity() {
        let allowed = allowed_cpus();
        let outside = (0..1024).find(|c| !allowed.contains(c)).unwrap();
        let err = validate_cpus(&outside.to_string()).unwrap_err();
        assert!(matches!(err, PlacementError::NotAllowed { .. }));
        assert!(validate_cpus(&allowed[0].to_string()).is_ok());
    }

    #[test]
    fn pinning_is_observed_and_restored() {
        let before = allowed_cpus();
        {
            let _g = AffinityGuard::save();
            pin_current_thread(before[0]).unwrap();
            assert_eq!(allowed_cpus(), vec![before[0]]);
            assert_eq!(current_cpu(), Some(before[0]));
        }
        assert_eq!(allowed_cpus(), before);
    }
}
