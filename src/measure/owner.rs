//! Which process made something a later run may clean up: a process named
//! so that another pid namespace or a reused pid is never mistaken for it.

use serde::{Deserialize, Serialize};
use std::fs;

/// A process as a run records it for another run to judge later: its pid
/// namespace, pid and start time. A later run takes what it left (a load
/// group, an isolation journal) for a dead run's only when that process is
/// gone from the same pid namespace, so a run in a container or under
/// `unshare` (another namespace) and a reused pid never make it undo or kill
/// a live run's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pidns: u64,
    pub pid: u32,
    pub start: u64,
}

impl Owner {
    /// This process.
    pub fn this_process() -> Option<Owner> {
        Owner::of(std::process::id())
    }

    /// Process `pid` as this process sees it (None: no such process here).
    pub fn of(pid: u32) -> Option<Owner> {
        use std::os::unix::fs::MetadataExt;
        let pidns = fs::metadata(format!("/proc/{pid}/ns/pid")).ok()?.ino();
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        Some(Owner { pidns, pid, start: start_time(&stat)? })
    }

    /// "PIDNS-PID-START", the tail of a load group's name.
    pub fn label(&self) -> String {
        format!("{}-{}-{}", self.pidns, self.pid, self.start)
    }

    /// Whether what this owner left is a dead run's, seen from a process in
    /// pid namespace `ours` that finds `now` at the owner's pid: only an
    /// owner of our namespace whose pid is gone or another process now.
    pub fn is_gone(&self, ours: u64, now: Option<Owner>) -> bool {
        self.pidns == ours && now != Some(*self)
    }
}

/// A process's start time (clock ticks after boot) from its /proc/PID/stat:
/// field 22, counted after the command name's closing parenthesis (the name
/// may hold spaces and parentheses).
fn start_time(stat: &str) -> Option<u64> {
    stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_time_is_read_past_a_command_name_with_parentheses() {
        let stat = "77 (a (b) c) S 1 77 77 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 10";
        assert_eq!(start_time(stat), Some(123456));
    }
}
