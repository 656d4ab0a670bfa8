//! Measured windows of a fixed time (net's streams, blk's sequential
//! I/O): how long one stays open, and the thread CPU time spent in it.

use std::time::Duration;

/// Thread CPU time of the calling thread, seconds.
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The fewest per-slice rates a measured window holds: a window that has
/// fewer when `measure` is over (a receiver starved of CPU on a loaded
/// machine) runs on, up to `MAX_STRETCH` times as long or [`STRETCH_FLOOR`]
/// (whichever is longer), until it has them. Fewer samples than this give
/// no interval.
pub const MIN_SLICES: usize = 3;
const MAX_STRETCH: u32 = 10;
/// How long a window may stretch at least: a multiple of a test's 30 ms
/// window is shorter than a loaded scheduler leaves a starved receiver
/// between two turns (at a load of 20 on 2 CPUs a UDP window closed 2
/// slices in 300 ms; issue 58, item 12). The sockets' own timeout.
const STRETCH_FLOOR: Duration = Duration::from_secs(5);

/// Whether a measured window (net's, blk's) that has run `elapsed` and
/// closed `slices` slices goes on: until `measure`, then while it has
/// fewer than `MIN_SLICES`, up to `MAX_STRETCH` times `measure` or
/// [`STRETCH_FLOOR`].
pub fn window_open(elapsed: Duration, measure: Duration, slices: usize) -> bool {
    elapsed < measure || (slices < MIN_SLICES && elapsed < (measure * MAX_STRETCH).max(STRETCH_FLOOR))
}
