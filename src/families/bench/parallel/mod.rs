//! Every core at once, as L4Re's plots show it: the null syscall and
//! same-core IPC (pipe, futex, eventfd) run as one instance pinned per CPU,
//! all at the same time; each reports its own cost and where it ran.

pub mod family;
pub mod schema;
pub mod table;

use super::ipc::Mechanism;
use super::ipc::pingpong::{self, PingPongSpec};
use super::syscall::{Prepared, Syscall};
use crate::analysis::stats::Summary;
use crate::families::bench::toolkit::fds::IpcError;
use crate::measure::clock::Tsc;
use crate::measure::harness::{self, HarnessConfig};
use crate::measure::placement::{self, Policy, Space};
use std::sync::Barrier;
use std::time::Duration;

crate::named_enum! {
    pub enum ParOp {
        Getppid = "getppid",
        Pipe = "pipe",
        Futex = "futex",
        Eventfd = "eventfd",
    }
}

impl ParOp {
    pub fn description(self) -> &'static str {
        match self {
            ParOp::Getppid => "getppid through the syscall instruction, one pinned thread per CPU at once",
            ParOp::Pipe => "same-core pipe ping-pong (two threads, one-way cost), one pair per CPU at once",
            ParOp::Futex => "same-core futex ping-pong (one-way cost), one pair per CPU at once",
            ParOp::Eventfd => "same-core eventfd ping-pong (one-way cost), one pair per CPU at once",
        }
    }
    fn mechanism(self) -> Option<Mechanism> {
        match self {
            ParOp::Getppid => None,
            ParOp::Pipe => Some(Mechanism::Pipe),
            ParOp::Futex => Some(Mechanism::Futex),
            ParOp::Eventfd => Some(Mechanism::Eventfd),
        }
    }
}

/// One instance's outcome.
#[derive(Debug, Clone)]
pub struct Instance {
    pub cpu: usize,
    /// Where it observed itself at the end (each side, for IPC).
    pub observed: Vec<Option<usize>>,
    /// Cycles per operation (one-way for IPC), per batch.
    pub samples: Vec<f64>,
    pub per_op: Summary,
}

/// Why an instance did not measure.
#[derive(Debug, thiserror::Error)]
pub enum ParallelError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Ipc(#[from] IpcError),
    #[error("no samples")]
    NoSamples,
    #[error("an instance panicked")]
    Panicked,
}

/// Runs `op` on every CPU in `cpus` at once.
pub fn run(op: ParOp, cpus: &[usize], cfg: &HarnessConfig, overhead: u64, timeout: Duration) -> Result<Vec<Instance>, ParallelError> {
    let barrier = Barrier::new(cpus.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let barrier = &barrier;
                s.spawn(move || -> Result<Instance, ParallelError> {
                    crate::measure::watchdog::block_interrupts_in_this_thread();
                    match op.mechanism() {
                        None => {
                            placement::set_affinity(&[cpu])?;
                            let call = Prepared::new(Syscall::Getppid)?;
                            barrier.wait();
                            let m = harness::measure(&Tsc, overhead, cfg, |n| call.run(n))?;
                            let per_op = Summary::of(&m.per_op_cycles).ok_or(ParallelError::NoSamples)?;
                            Ok(Instance { cpu, observed: vec![placement::current_cpu()], samples: m.per_op_cycles, per_op })
                        }
                        Some(mechanism) => {
                            let spec =
                                PingPongSpec { mechanism, words: 0, space: Space::Intra, cpus: (cpu, cpu), policy: Policy::Other, timeout };
                            barrier.wait();
                            let r = pingpong::run(&spec, overhead, cfg)?;
                            let samples: Vec<f64> = r.measurement.per_op_cycles.iter().map(|c| c / 2.0).collect();
                            let per_op = Summary::of(&samples).ok_or(ParallelError::NoSamples)?;
                            Ok(Instance { cpu, observed: vec![r.observed_cpus.0, r.observed_cpus.1], samples, per_op })
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().map_err(|_| ParallelError::Panicked)?).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::named::Named;

    #[test]
    fn every_instance_runs_where_it_is_pinned() {
        let cpus = placement::allowed_cpus();
        let cfg = HarnessConfig::tiny();
        for &op in ParOp::ALL {
            let r = run(op, &cpus, &cfg, 0, Duration::from_secs(20)).unwrap();
            assert_eq!(r.len(), cpus.len());
            for (inst, &cpu) in r.iter().zip(&cpus) {
                assert_eq!(inst.cpu, cpu);
                assert!(inst.observed.iter().all(|&o| o == Some(cpu)), "{op:?}: instance for CPU {cpu} observed on {:?}", inst.observed);
            }
        }
    }
}
