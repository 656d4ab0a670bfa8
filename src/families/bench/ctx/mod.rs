//! Context-switch latency as lmbench's lat_ctx measures it: N processes in a
//! ring of pipes pass a token; each reads its private working set of S KiB
//! before passing the token on. The ring's own cost (a pipe write and read
//! and the working-set sum, in one process, with no switch, going round N
//! pipes) is measured the same way and subtracted. As in lmbench, the
//! working set is read as words (every byte of it) with lmbench's bread
//! (scalar adds in blocks of 128 words, not the compiler's vector loop), by
//! every member including the timing one, once per hop. Unlike lmbench on Linux (which
//! leaves placement to the scheduler), every member runs on one CPU.

pub mod family;
pub mod schema;
pub mod table;

use super::ipc::Endpoint;
use super::ipc::fd::FdStream;
use crate::families::bench::toolkit::child::{self, Private};
use crate::families::bench::toolkit::fds::{IpcError, pipe};
use crate::families::bench::toolkit::shm::Shared;
use crate::measure::clock::Tsc;
use crate::measure::harness::{self, HarnessConfig, Measurement};
use crate::measure::placement::{self, Policy};
use crate::measure::watchdog::{self, Deadline};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};
use std::time::Duration;

/// How many hops the visit log records.
pub const LOG_HOPS: usize = 256;

#[derive(Debug, Clone)]
pub struct RingSpec {
    pub procs: usize,
    pub ws_kib: usize,
    /// Every member of the ring runs here.
    pub cpu: usize,
    pub policy: Policy,
    pub timeout: Duration,
}

#[derive(Debug, Clone)]
pub struct RingResult {
    /// Samples: cycles per round (`procs` hops).
    pub rounds: Measurement,
    /// Samples: cycles per hop of the same work in one process.
    pub overhead: Measurement,
    /// Which member handled each of the first LOG_HOPS hops.
    pub visits: Vec<u8>,
}

struct RingCtl {
    stop: AtomicBool,
    /// 1 + index of a member that saw a token out of order; 0 when none did.
    out_of_order: AtomicU32,
    log: [AtomicU8; LOG_HOPS],
}

fn log_visit(ctl: &RingCtl, token: u64, member: usize) {
    if let Some(slot) = ctl.log.get(token as usize) {
        slot.store(member as u8, Ordering::Relaxed);
    }
}

/// Child `i`: wait for a token that is its own, touch, pass on.
fn member(i: usize, n: usize, link: &mut FdStream, ws: &Private, ctl: &RingCtl) -> Result<(), IpcError> {
    let mut t = [0u64; 1];
    loop {
        link.recv(&mut t)?;
        if ctl.stop.load(Ordering::Acquire) {
            return link.send(&t);
        }
        if t[0] as usize % n != i {
            ctl.out_of_order.store(i as u32 + 1, Ordering::Relaxed);
            return Err(IpcError::Payload { seq: t[0], word: 0 });
        }
        log_visit(ctl, t[0], i);
        std::hint::black_box(bread(ws));
        t[0] += 1;
        link.send(&t)?;
    }
}

/// lmbench's bread of the working set: the sum its -O build computes
/// (scalar adds; a vectorised sum reads a cached set several times faster).
fn bread(ws: &Private) -> u64 {
    crate::measure::arch::sum_u64_scalar(ws.words())
}

/// The ring's cost without switches: per hop, one pipe write and read and
/// the working-set sum, in this process. As lmbench's overhead loop, the
/// hops go round `procs` pipes, one after the other, as the ring's do.
fn overhead(ws: &Private, procs: usize, overhead_cycles: u64, cfg: &HarnessConfig) -> Result<Measurement, IpcError> {
    let mut links: Vec<FdStream> = (0..procs).map(|_| pipe().map(|(r, w)| FdStream::new(r, Some(w)))).collect::<Result<_, _>>()?;
    let mut t = [0u64; 1];
    let mut i = 0;
    harness::measure(&Tsc, overhead_cycles, cfg, |n| {
        for _ in 0..n {
            links[i].send(&t)?;
            links[i].recv(&mut t)?;
            // lmbench's `if (++i == procs) i = 0`, not a division.
            i += 1;
            if i == procs {
                i = 0;
            }
            std::hint::black_box(bread(ws));
            t[0] += 1;
        }
        watchdog::check().map_err(IpcError::from)
    })
}

/// Forks ring members 1..n (the caller is member 0), each keeping only the
/// read end of its own pipe and the write end of the next member's. On a
/// failed fork the members already started are killed.
fn spawn_members(spec: &RingSpec, raw: &[(i32, i32)], ctl: &RingCtl) -> Result<Vec<i32>, IpcError> {
    let n = spec.procs;
    let mut pids = Vec::with_capacity(n - 1);
    for i in 1..n {
        let (rfd, wfd) = (raw[i].0, raw[(i + 1) % n].1);
        let spawned = child::fork_child(|| {
            // Keep only this member's two descriptors.
            for &(r, w) in raw {
                // SAFETY: closing inherited copies this child does not use.
                unsafe {
                    if r != rfd {
                        libc::close(r);
                    }
                    if w != wfd {
                        libc::close(w);
                    }
                }
            }
            // SAFETY: the child owns its copies of rfd and wfd from here on.
            let mut link = unsafe { FdStream::new(OwnedFd::from_raw_fd(rfd), Some(OwnedFd::from_raw_fd(wfd))) };
            let ok = Deadline::arm(spec.timeout).is_ok_and(|_d| {
                let ws = Private::new(spec.ws_kib * 1024);
                ws.is_ok_and(|ws| member(i, n, &mut link, &ws, ctl).is_ok())
            });
            if ok { 0 } else { 1 }
        });
        match spawned {
            Ok(pid) => pids.push(pid),
            Err(e) => {
                pids.iter().for_each(|&p| child::kill_and_reap(p));
                return Err(IpcError::io("fork")(e));
            }
        }
    }
    Ok(pids)
}

pub fn run(spec: &RingSpec, overhead_cycles: u64, cfg: &HarnessConfig) -> Result<RingResult, IpcError> {
    assert!(spec.procs >= 2, "a ring needs two processes");
    watchdog::install();
    let n = spec.procs;
    let _affinity = placement::AffinityGuard::save();
    let _policy = placement::PolicyGuard::save();
    placement::set_affinity(&[spec.cpu]).map_err(IpcError::io("sched_setaffinity"))?;
    if spec.policy != Policy::Other {
        placement::apply_policy(spec.policy).map_err(IpcError::io("sched_setscheduler"))?;
    }
    let _deadline = Deadline::arm(spec.timeout).map_err(IpcError::io("timer_create"))?;
    let ws = Private::new(spec.ws_kib * 1024).map_err(IpcError::io("mmap"))?;
    let overhead = overhead(&ws, n, overhead_cycles, cfg)?;

    let ctl_mem = Shared::new(RingCtl {
        stop: AtomicBool::new(false),
        out_of_order: AtomicU32::new(0),
        log: [const { AtomicU8::new(u8::MAX) }; LOG_HOPS],
    })?;
    let ctl = ctl_mem.get();
    // pipes[i] carries the token into member i.
    let pipes: Vec<(OwnedFd, OwnedFd)> = (0..n).map(|_| pipe()).collect::<Result<_, _>>()?;
    let raw: Vec<(i32, i32)> = pipes.iter().map(|(r, w)| (r.as_raw_fd(), w.as_raw_fd())).collect();
    let pids = spawn_members(spec, &raw, ctl)?;
    // The parent is member 0: it reads pipes[0] and writes pipes[1].
    let mut pipes = pipes;
    let (r0, _) = pipes.remove(0);
    let (_, w1) = pipes.remove(0);
    drop(pipes);
    let mut link = FdStream::new(r0, Some(w1));
    let mut token = 0u64;
    let result = harness::measure(&Tsc, overhead_cycles, cfg, |rounds| {
        let mut t = [token];
        for _ in 0..rounds {
            log_visit(ctl, t[0], 0);
            std::hint::black_box(bread(&ws));
            t[0] += 1;
            link.send(&t)?;
            link.recv(&mut t)?;
            if !t[0].is_multiple_of(n as u64) {
                return Err(IpcError::Payload { seq: t[0], word: 0 });
            }
        }
        token = t[0];
        watchdog::check().map_err(IpcError::from)
    });
    ctl.stop.store(true, Ordering::Release);
    let stopped = link.send(&[token]).and_then(|_| link.recv(&mut [0u64]));
    if result.is_err() || stopped.is_err() {
        pids.iter().for_each(|&p| child::kill_and_reap(p));
    } else {
        for &p in &pids {
            let status = child::reap(p).map_err(IpcError::io("waitpid"))?;
            if !child::exited_with(status, 0) {
                return Err(IpcError::PeerDied(status));
            }
        }
    }
    if let Some(i) = std::num::NonZeroU32::new(ctl.out_of_order.load(Ordering::Relaxed)) {
        return Err(IpcError::Payload { seq: u64::from(i.get() - 1), word: 0 });
    }
    let rounds = result?;
    stopped?;
    let visits = ctl.log.iter().map(|v| v.load(Ordering::Relaxed)).take_while(|&v| v != u8::MAX).collect();
    Ok(RingResult { rounds, overhead, visits })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bread_reads_every_word_of_the_working_set() {
        for kib in [0u64, 4, 16, 64] {
            let ws = Private::new(kib as usize * 1024).unwrap();
            // Private writes word i as i: the sum of 0..n.
            let n = kib * 1024 / 8;
            assert_eq!(bread(&ws), n * n.saturating_sub(1) / 2, "{kib} KiB");
        }
    }

    #[test]
    fn the_token_visits_every_process_in_order() {
        let cpu = placement::allowed_cpus()[0];
        for procs in [2, 3, 5, 10] {
            let spec = RingSpec { procs, ws_kib: 4, cpu, policy: Policy::Other, timeout: Duration::from_secs(20) };
            let cfg = HarnessConfig { target_batch_cycles: 0, batches: 2, fixed_inner: Some(10), max_inner: 10 };
            let r = run(&spec, 0, &cfg).unwrap();
            // 1 warm-up round + 10 calibration + 2 x 10: 31 rounds of `procs` hops.
            let hops = (31 * procs).min(LOG_HOPS);
            assert_eq!(r.visits.len(), hops, "{procs} processes");
            for (hop, &who) in r.visits.iter().enumerate() {
                assert_eq!(who as usize, hop % procs, "hop {hop} of a ring of {procs}");
            }
            assert_eq!(r.rounds.per_op_cycles.len(), 2);
        }
    }
}
