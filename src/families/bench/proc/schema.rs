//! lat_proc: process and thread creation.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("proc");

crate::data::schema_core::params! {
    /// A proc case: the static fork has the size of the process it forks
    /// (`touched_mib` of anonymous memory written, in 4 KiB pages or, with
    /// `thp`, transparent huge pages); the other benchmarks have none.
    Params {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        touched_mib: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thp: Option<bool>,
    }
}

impl Params {
    /// No parameters: every benchmark but the static fork.
    pub const NONE: Params = Params { touched_mib: None, thp: None };

    /// The static fork of a process with `mib` MiB touched (`thp`:
    /// in transparent huge pages; only said where `mib` is above 0).
    pub fn touched(mib: u64, thp: bool) -> Params {
        Params { touched_mib: Some(mib), thp: (mib > 0).then_some(thp) }
    }
}

/// Details key: the process that forked ([`ProcessSize`]).
pub const FORKER: &str = "forker";

/// The size of the process a row's operations were created from, read
/// from /proc after the measurement.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcessSize {
    /// What it is: "static C helper", "dynamic C helper (worker)"...
    pub program: String,
    /// VmSize of /proc/PID/status.
    pub vm_size_kib: u64,
    /// VmRSS.
    pub rss_kib: u64,
    /// Lines of /proc/PID/maps.
    pub mappings: u64,
    pub threads: u64,
    /// AnonHugePages of /proc/PID/smaps_rollup (0 where the kernel has none).
    pub anon_huge_kib: u64,
}
/// Cycles per operation.
pub const PER_OP: &str = "per_op";
pub const PROCEDURE: &str = "procedure";
/// lat_proc fork: fork in a small dynamically linked C process.
pub const FORK_DYNAMIC: &str = "fork-dynamic";
/// fork of a small static C process (touched_mib: with that much memory written).
pub const FORK: &str = "fork";
pub const EXEC: &str = "exec";
/// lat_proc exec: fork + execve of a dynamically linked program.
pub const EXEC_DYNAMIC: &str = "exec-dynamic";
pub const SPAWN: &str = "spawn";
pub const VFORK_EXEC: &str = "vfork-exec";
pub const THREAD: &str = "thread";
