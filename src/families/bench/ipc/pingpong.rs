//! The ping-pong driver: a client sends a request, a server checks it and
//! replies, the client checks the reply. The client times batches of round
//! trips with the harness; the server runs until told to stop. The pair runs
//! as two threads of this process or as this process and a forked child.

use super::message::{Direction, MAX_WORDS, check, fill};
use super::{AnyEndpoint, Endpoint, Mechanism};
use crate::families::bench::toolkit::child;
use crate::families::bench::toolkit::fds::IpcError;
use crate::families::bench::toolkit::shm::Shared;
use crate::measure::clock::Tsc;
use crate::measure::harness::{self, HarnessConfig, Measurement};
use crate::measure::placement::{self, Policy, Space};
use crate::measure::watchdog::{self, Deadline};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// What to run.
#[derive(Debug, Clone)]
pub struct PingPongSpec {
    pub mechanism: Mechanism,
    pub words: usize,
    pub space: Space,
    /// (client CPU, server CPU).
    pub cpus: (usize, usize),
    pub policy: Policy,
    /// Each side gives up after this long.
    pub timeout: Duration,
}

/// What came back.
#[derive(Debug, Clone)]
pub struct PingPongResult {
    /// Samples are cycles per round trip.
    pub measurement: Measurement,
    /// Round trips the client completed and verified.
    pub round_trips: u64,
    /// Requests the server received and verified.
    pub served: u64,
    /// Where each side observed itself at the end: (client, server).
    pub observed_cpus: (Option<usize>, Option<usize>),
}

/// State shared by the two sides, in shared memory so that it works across fork.
struct Control {
    stop: AtomicBool,
    failed: AtomicBool,
    /// Written once by the server before it sets `failed` (Release).
    error: UnsafeCell<Option<IpcError>>,
    served: AtomicU64,
    server_cpu: AtomicI64,
}

// SAFETY: `error` is written only by the server, before a Release store of
// `failed`, and read only after an Acquire load of `failed` returns true.
unsafe impl Sync for Control {}

impl Control {
    fn server_error(&self) -> Option<IpcError> {
        if self.failed.load(Ordering::Acquire) {
            // SAFETY: see `unsafe impl Sync for Control`.
            unsafe { *self.error.get() }
        } else {
            None
        }
    }
}

/// Placement and deadline of one side; allocation-free, and errors as
/// IpcError, so that a forked child can call it.
fn enter_side(cpu: usize, policy: Policy, timeout: Duration) -> Result<Deadline, IpcError> {
    placement::set_affinity(&[cpu]).map_err(IpcError::io("sched_setaffinity"))?;
    if policy != Policy::Other {
        placement::apply_policy(policy).map_err(IpcError::io("sched_setscheduler"))?;
    }
    Deadline::arm(timeout).map_err(IpcError::io("timer_create"))
}

/// Serves requests until told to stop; the count served is published once,
/// at the end: a store per request would move `Control`'s cache line between
/// the two CPUs on every round trip (the client reads `failed` beside it),
/// a second line per message that no IPC mechanism needs.
fn serve(ep: &mut AnyEndpoint, words: usize, ctl: &Control) -> Result<(), IpcError> {
    let mut seq = 0u64;
    let r = serve_until_stopped(ep, words, ctl, &mut seq);
    ctl.served.store(seq, Ordering::Relaxed);
    r
}

fn serve_until_stopped(ep: &mut AnyEndpoint, words: usize, ctl: &Control, seq: &mut u64) -> Result<(), IpcError> {
    let mut buf = [0u64; MAX_WORDS];
    let msg = &mut buf[..words];
    loop {
        let seq_now = *seq;
        if seq_now.is_multiple_of(watchdog::POLL_EVERY) {
            watchdog::check()?;
        }
        ep.recv(msg)?;
        if ctl.stop.load(Ordering::Acquire) {
            return Ok(());
        }
        check(msg, seq_now, Direction::Request)?;
        fill(msg, seq_now, Direction::Reply);
        ep.send(msg)?;
        *seq = seq_now + 1;
    }
}

/// The server side, start to end; never panics or allocates (it may run in
/// a forked child of a multi-threaded process).
fn server_side(mut ep: AnyEndpoint, spec: &PingPongSpec, ctl: &Control) {
    let r = enter_side(spec.cpus.1, spec.policy, spec.timeout).and_then(|_deadline| serve(&mut ep, spec.words, ctl));
    ctl.server_cpu.store(placement::current_cpu().map_or(-1, |c| c as i64), Ordering::Relaxed);
    if let Err(e) = r {
        // SAFETY: the only write to `error`, published by the Release below.
        unsafe { *ctl.error.get() = Some(e) };
        ctl.failed.store(true, Ordering::Release);
    }
}

fn client_side(
    ep: &mut AnyEndpoint,
    spec: &PingPongSpec,
    ctl: &Control,
    overhead: u64,
    cfg: &HarnessConfig,
) -> Result<(Measurement, u64), IpcError> {
    let (mut req, mut rep) = ([0u64; MAX_WORDS], [0u64; MAX_WORDS]);
    let (req, rep) = (&mut req[..spec.words], &mut rep[..spec.words]);
    let mut seq = 0u64;
    let deadline = enter_side(spec.cpus.0, spec.policy, spec.timeout);
    let result = deadline.as_ref().map_err(|e| *e).and_then(|_| {
        harness::measure(&Tsc, overhead, cfg, |n| {
            for i in 0..n {
                if i % watchdog::POLL_EVERY == 0 {
                    watchdog::check()?;
                }
                fill(req, seq, Direction::Request);
                ep.send(req)?;
                let r = ep.recv(rep);
                if let Some(e) = ctl.server_error() {
                    return Err(e);
                }
                r?;
                check(rep, seq, Direction::Reply)?;
                seq += 1;
            }
            Ok(())
        })
    });
    // Tell the server to stop, also after a failure, and wake it up.
    ctl.stop.store(true, Ordering::Release);
    let stopped = ep.send(req);
    let m = result?;
    stopped?;
    Ok((m, seq))
}

/// Runs one ping-pong case.
pub fn run(spec: &PingPongSpec, overhead: u64, cfg: &HarnessConfig) -> Result<PingPongResult, IpcError> {
    assert!(spec.words <= MAX_WORDS, "payload larger than MAX_WORDS");
    watchdog::install();
    let (mut client, server) = spec.mechanism.pair(spec.space)?;
    let ctl_mem = Shared::new(Control {
        stop: AtomicBool::new(false),
        failed: AtomicBool::new(false),
        error: UnsafeCell::new(None),
        served: AtomicU64::new(0),
        server_cpu: AtomicI64::new(-1),
    })?;
    let ctl = ctl_mem.get();
    let _affinity = placement::AffinityGuard::save();
    let _policy = placement::PolicyGuard::save();

    let client_result = match spec.space {
        Space::Intra => std::thread::scope(|s| {
            let server_thread = s.spawn(move || {
                watchdog::block_interrupts_in_this_thread();
                server_side(server, spec, ctl)
            });
            let r = client_side(&mut client, spec, ctl, overhead, cfg);
            let _ = server_thread.join();
            r
        }),
        Space::Inter => {
            // The child only runs `server_side`, which neither allocates nor
            // takes locks. The parent's copy of the server endpoint is dropped
            // with the closure.
            let pid = child::fork_child(move || {
                server_side(server, spec, ctl);
                0
            })
            .map_err(IpcError::io("fork"))?;
            let r = client_side(&mut client, spec, ctl, overhead, cfg);
            if r.is_err() {
                child::kill_and_reap(pid);
                r
            } else {
                let status = child::reap(pid).map_err(IpcError::io("waitpid"))?;
                if child::exited_with(status, 0) { r } else { Err(IpcError::PeerDied(status)) }
            }
        }
    };
    if let Some(e) = ctl.server_error() {
        return Err(e);
    }
    let (measurement, round_trips) = client_result?;
    let server_cpu = ctl.server_cpu.load(Ordering::Relaxed);
    Ok(PingPongResult {
        measurement,
        round_trips,
        served: ctl.served.load(Ordering::Relaxed),
        observed_cpus: (placement::current_cpu(), (server_cpu >= 0).then_some(server_cpu as usize)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::placement::Cores;

    fn cpus(cores: Cores) -> Option<(usize, usize)> {
        let allowed = placement::allowed_cpus();
        match cores {
            Cores::Same => Some((allowed[0], allowed[0])),
            Cores::Cross => (allowed.len() > 1).then(|| (allowed[0], allowed[1])),
        }
    }

    /// Every mechanism, in every placement this machine allows, at payloads
    /// from empty to the largest: the server verifies each request, the
    /// client each reply, and the two counts agree.
    #[test]
    fn payload_arrives_intact_for_every_mechanism() {
        let cfg = HarnessConfig { target_batch_cycles: 0, batches: 2, fixed_inner: Some(5), max_inner: 5 };
        for mech in Mechanism::ALL {
            for space in [Space::Intra, Space::Inter] {
                for cores in [Cores::Same, Cores::Cross] {
                    let Some(c) = cpus(cores) else { continue };
                    for words in [0, 1, 3, 7, 8, MAX_WORDS] {
                        if mech.unsupported(cores, words).is_some() {
                            continue;
                        }
                        let spec = PingPongSpec {
                            mechanism: mech,
                            words,
                            space,
                            cpus: c,
                            policy: Policy::Other,
                            timeout: Duration::from_secs(20),
                        };
                        let r = run(&spec, 0, &cfg).unwrap_or_else(|e| panic!("{mech:?} {space:?} {cores:?} {words}w: {e}"));
                        // warm-up 1 + one fixed calibration batch + 2 batches of 5
                        assert_eq!(r.round_trips, 1 + 5 + 2 * 5, "{mech:?} {space:?} {words}");
                        assert_eq!(r.served, r.round_trips, "{mech:?} {space:?} {words}");
                        assert_eq!(r.observed_cpus.1, Some(c.1), "server placement {mech:?} {space:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_case_past_its_deadline_ends_with_an_error_not_a_hang() {
        // An endless calibration (no target is ever reached): both sides'
        // watchdogs must end it with TimedOut, and the child must be reaped.
        let spec = PingPongSpec {
            mechanism: Mechanism::Futex,
            words: 1,
            space: Space::Inter,
            cpus: cpus(Cores::Same).unwrap(),
            policy: Policy::Other,
            timeout: Duration::from_millis(300),
        };
        let cfg = HarnessConfig { target_batch_cycles: u64::MAX, batches: 1, fixed_inner: None, max_inner: u64::MAX };
        let t = std::time::Instant::now();
        let e = run(&spec, 0, &cfg).unwrap_err();
        assert!(matches!(e, IpcError::TimedOut), "{e}");
        assert!(t.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_client_that_cannot_be_placed_stops_its_server_at_once() {
        let outside = (0..1024).find(|c| !placement::allowed_cpus().contains(c)).unwrap();
        for space in [Space::Intra, Space::Inter] {
            let spec = PingPongSpec {
                mechanism: Mechanism::Pipe,
                words: 1,
                space,
                cpus: (outside, placement::allowed_cpus()[0]),
                policy: Policy::Other,
                timeout: Duration::from_secs(30),
            };
            let t = std::time::Instant::now();
            let e = run(&spec, 0, &HarnessConfig::tiny()).unwrap_err();
            assert!(matches!(e, IpcError::Sys { op: "sched_setaffinity", .. }), "{e}");
            assert!(t.elapsed() < Duration::from_secs(5), "{space:?}: the server waited for its watchdog");
        }
    }
}
