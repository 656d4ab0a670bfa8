//! The kernel's perf_event_open interface, as much of it as the counters
//! use: the attribute block, opening an event on a task (in a group,
//! inherited by its children), reading a count with the times it was
//! enabled and running, and switching a group on and off.

use super::Event;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_SOFTWARE: u32 = 1;

/// (perf type, config) of an event.
pub(super) fn perf_id(event: Event) -> (u32, u64) {
    match event {
        Event::ContextSwitches => (PERF_TYPE_SOFTWARE, 3),
        Event::CpuMigrations => (PERF_TYPE_SOFTWARE, 4),
        Event::MinorFaults => (PERF_TYPE_SOFTWARE, 5),
        Event::MajorFaults => (PERF_TYPE_SOFTWARE, 6),
        Event::TaskClock => (PERF_TYPE_SOFTWARE, 1),
        Event::Cycles => (PERF_TYPE_HARDWARE, 0),
        Event::Instructions => (PERF_TYPE_HARDWARE, 1),
        Event::RefCycles => (PERF_TYPE_HARDWARE, 9),
    }
}

/// `struct perf_event_attr` as of its first version (PERF_ATTR_SIZE_VER0,
/// 64 bytes), which every kernel with perf events accepts.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    /// Bit field: disabled (0), inherit (1), ..., exclude_hv (6).
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_INHERIT: u64 = 1 << 1;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
const FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// _IO('$', 0) and _IO('$', 1).
pub(super) const IOC_ENABLE: libc::c_ulong = 0x2400;
pub(super) const IOC_DISABLE: libc::c_ulong = 0x2401;
const IOC_FLAG_GROUP: libc::c_ulong = 1;

/// Opens `event` on task `tid` (0: the calling thread), disabled, inherited
/// by the threads and processes the task starts from now on; in `group`'s
/// group when given.
pub(super) fn open(event: Event, tid: i32, group: Option<&OwnedFd>) -> std::io::Result<OwnedFd> {
    let (kind, config) = perf_id(event);
    let attr = PerfEventAttr {
        kind,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config,
        read_format: FORMAT_TOTAL_TIME_ENABLED | FORMAT_TOTAL_TIME_RUNNING,
        flags: FLAG_DISABLED | FLAG_INHERIT | FLAG_EXCLUDE_HV,
        ..Default::default()
    };
    let group_fd = group.map_or(-1, |g| g.as_raw_fd());
    // SAFETY: attr is a valid perf_event_attr of the size it states and
    // outlives the call; the kernel only reads it. cpu -1: any CPU.
    let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, &attr as *const PerfEventAttr, tid, -1i32, group_fd, PERF_FLAG_FD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// (count, time enabled, time running) of one counter, its inherited
/// children's included.
pub(super) fn read(fd: &OwnedFd) -> std::io::Result<[u64; 3]> {
    let mut v = [0u64; 3];
    // SAFETY: v is 24 writable bytes, what this read_format returns.
    let n = unsafe { libc::read(fd.as_raw_fd(), v.as_mut_ptr().cast(), std::mem::size_of_val(&v)) };
    if n != std::mem::size_of_val(&v) as isize {
        return Err(if n < 0 { std::io::Error::last_os_error() } else { std::io::Error::other("short read of a counter") });
    }
    Ok(v)
}

pub(super) fn ioctl_group(leader: &OwnedFd, request: libc::c_ulong) {
    // SAFETY: an ioctl without argument memory on a perf descriptor we own;
    // a failure leaves the counter as it was, which the counts then show.
    unsafe { libc::ioctl(leader.as_raw_fd(), request as _, IOC_FLAG_GROUP) };
}

/// A count over the time its counter was enabled, from the time it ran.
pub(super) fn scaled(count: u64, enabled: u64, running: u64) -> Option<f64> {
    match (enabled, running) {
        (0, _) => Some(count as f64),
        (_, 0) => None,
        (e, r) if r >= e => Some(count as f64),
        (e, r) => Some(count as f64 * e as f64 / r as f64),
    }
}
