//! Benchmark families: what to measure. Measurement code returns plain data
//! and prints nothing.

pub mod aim;
pub mod alloc;
pub mod blk;
pub mod boot;
pub mod bw;
pub mod control;
pub mod ctx;
pub mod family;
pub mod hermit;
pub mod ipc;
pub mod memcpy;
pub mod microvm;
pub mod net;
pub mod noise;
pub mod packet_stream;
pub mod pagefault;
pub mod parallel;
pub mod proc;
pub mod schema;
pub mod shows;
pub mod stream;
pub mod syscall;
pub mod toolkit;

pub use family::{Benchmark, Described, Family, Scale, Unsupported, Venue};

use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::schema::CaseParams;
use crate::measure::clock::ClockInfo;
use crate::measure::harness::HarnessConfig;
use crate::measure::placement::Placement;
use crate::measure::placement::Policy;
use serde_json::{Map, Value};
use std::time::Duration;

/// Everything a case needs to know about how to run.
#[derive(Debug, Clone)]
pub struct CaseCtx<'a> {
    pub params: &'a Params,
    /// The CPUs the user allows: the first is the primary, the second the
    /// partner of cross-core cases.
    pub cpus: &'a [usize],
    /// Whether single-threaded cases pin to the first CPU (isolation `none`: no).
    pub pin: bool,
    pub policy: Policy,
    pub memory_locked: bool,
    pub harness: HarnessConfig,
    /// The scale of the suite the case belongs to.
    pub scale: Scale,
    /// Measured milliseconds per point of time-bound cases (net, blk), if the user chose.
    pub point_ms: Option<u64>,
    pub clock: &'a ClockInfo,
    pub timeout: Duration,
    /// Where benchmarks lay out their files.
    pub scratch: &'a std::path::Path,
    /// Overrides the size of large memory buffers (bw_mem, STREAM arrays).
    pub mem_bytes: Option<u64>,
}

/// What a case measured.
#[derive(Debug, Clone)]
pub struct CaseData {
    pub placement: Placement,
    pub metrics: Vec<Metric>,
    pub details: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CaseError {
    /// Cannot run with this placement or on this host (shown as n/a).
    NotApplicable(String),
    Failed(String),
    Interrupted,
}

impl CaseCtx<'_> {
    /// The case's parameters as its family's struct (`schema::X::Params`),
    /// or a failure naming them when they do not read as it.
    pub fn typed<T: CaseParams>(&self) -> Result<T, CaseError> {
        T::from_params(self.params).ok_or_else(|| {
            let label = crate::data::results::params_label(self.params);
            CaseError::Failed(format!(
                "the case parameters ({}) do not read as this family's",
                if label.is_empty() { "none" } else { &label }
            ))
        })
    }
}

/// The C library's allocator, the same for every case whatever ran before:
/// glibc raises its mmap threshold (first 128 KiB) each time a larger mmapped
/// block is freed, up to 32 MiB, so that after an earlier case freed a big
/// buffer, a malloc of 1 MiB came from the heap instead of a fresh mapping
/// (hermit.malloc-1m read 94 to 1032 cycles by round, memcpy's 16 and 64 MiB
/// copies varied 2-5x with their place in the round). Setting the threshold
/// fixes it at glibc's initial value and turns the adjustment off, as a fresh
/// process has it. Called once, first thing in main.
pub fn steady_allocator() -> bool {
    // SAFETY: mallopt takes the allocator's lock and only changes its
    // parameters; no memory is handed out or freed.
    unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 }
}

/// glibc's initial mmap threshold (DEFAULT_MMAP_THRESHOLD_MIN).
pub const MMAP_THRESHOLD: i32 = 128 * 1024;

/// n/a, with the sentence, when `bytes` (what a case is about to allocate)
/// exceeds the memory this machine has available: an allocation that
/// cannot be served aborts the process instead of failing the case.
pub fn fits_in_memory(bytes: u64, what: &str) -> Result<(), CaseError> {
    match crate::measure::host::meminfo("MemAvailable").map(|k| k * 1024) {
        Some(avail) if bytes > avail => Err(CaseError::NotApplicable(format!(
            "{what} needs {:.1} GiB and this machine has {:.1} GiB available (--mem-bytes sets the buffer size)",
            bytes as f64 / (1u64 << 30) as f64,
            avail as f64 / (1u64 << 30) as f64
        ))),
        _ => Ok(()),
    }
}

impl From<crate::measure::watchdog::Stop> for CaseError {
    fn from(s: crate::measure::watchdog::Stop) -> Self {
        match s {
            crate::measure::watchdog::Stop::Interrupted => CaseError::Interrupted,
            crate::measure::watchdog::Stop::TimedOut => CaseError::Failed(s.describe().into()),
        }
    }
}

impl CaseError {
    /// The status and reason a case that ended so gets.
    pub fn into_status(self) -> (crate::data::results::CaseStatus, String) {
        use crate::data::results::CaseStatus;
        match self {
            CaseError::NotApplicable(why) => (CaseStatus::NotApplicable, why),
            CaseError::Failed(why) => (CaseStatus::Failed, why),
            CaseError::Interrupted => (CaseStatus::Failed, "interrupted by a signal".into()),
        }
    }

    /// An I/O error of `what`, or Interrupted when a signal stopped the run.
    pub fn from_io(what: &str, e: std::io::Error) -> Self {
        if crate::measure::watchdog::interrupted().is_some() { CaseError::Interrupted } else { CaseError::Failed(format!("{what}: {e}")) }
    }
}
