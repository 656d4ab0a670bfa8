//! Stand-ins for the parts of oscycles' Linux modules that the shared
//! source calls: the clock (TSC through `arch`), the watchdog (a unikernel
//! run has no other thread to stop it: the host's timeout ends the VM) and
//! CPU placement (one CPU).

pub mod clock {
    use std::sync::OnceLock;

    pub trait Clock {
        fn now(&self) -> u64;
    }

    /// The TSC, read as oscycles reads it.
    pub struct Tsc;

    impl Clock for Tsc {
        fn now(&self) -> u64 {
            crate::arch::rdtscp()
        }
    }

    /// Nanoseconds of a monotonic clock (Hermit's, from its own timer).
    pub fn monotonic_raw_ns() -> u64 {
        static START: OnceLock<std::time::Instant> = OnceLock::new();
        START.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64
    }

    /// The TSC rate against Hermit's clock over 50 ms, measured once.
    pub fn tsc_hz_hint() -> f64 {
        static HZ: OnceLock<f64> = OnceLock::new();
        *HZ.get_or_init(|| {
            let (n0, t0) = (monotonic_raw_ns(), crate::arch::rdtscp());
            while monotonic_raw_ns() - n0 < 50_000_000 {}
            let (n1, t1) = (monotonic_raw_ns(), crate::arch::rdtscp());
            (t1 - t0) as f64 * 1e9 / (n1 - n0) as f64
        })
    }

    /// The least cost of two back-to-back reads, as oscycles subtracts it.
    pub fn read_overhead(rounds: usize) -> u64 {
        (0..rounds).map(|_| Tsc.now().wrapping_neg().wrapping_add(Tsc.now())).min().unwrap_or(0)
    }
}

pub mod watchdog {
    use std::time::Duration;

    pub const POLL_EVERY: u64 = 1024;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Stop {
        TimedOut,
        Interrupted,
    }

    pub fn check() -> Result<(), Stop> {
        Ok(())
    }

    pub fn remaining() -> Option<Duration> {
        None
    }
}

pub mod placement {
    /// One CPU: every thread runs on it.
    pub fn set_affinity(_cpus: &[usize]) -> std::io::Result<()> {
        Ok(())
    }
}

pub mod counters {
    //! A unikernel has no perf events: the harness's counting batches never run here
    //! (`armed_batches` is None), and the types the harness names stand empty.

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Event {}

    pub enum Counted {
        #[allow(dead_code)]
        Batches {
            batches: Vec<Vec<(Event, Option<f64>)>>,
            unavailable: Vec<(Event, String)>,
        },
        #[allow(dead_code)]
        NotCounted(String),
        Deferred,
    }

    pub struct CaseCounters {
        pub events: Vec<Event>,
        pub unavailable: Vec<(Event, String)>,
    }

    impl CaseCounters {
        pub fn read(&self) -> Vec<Option<f64>> {
            Vec::new()
        }
        pub fn enable(&self) {}
        pub fn disable(&self) {}
    }

    pub fn armed_batches() -> Option<usize> {
        None
    }

    pub fn open_for_case() -> Result<CaseCounters, String> {
        Err("a unikernel has no perf events".into())
    }

    pub fn record(_c: Counted) {}
}
