//! Case-order independence of the process-creation rows: a fork copies the
//! process that forks, so a row that forked the measuring process measured
//! whatever the cases before it had left in it (the alloc family's grown
//! heap made `lat_proc exec` 1.8 times and the static fork 2.4 times as
//! dear). Here `lat_proc exec` and the static fork run alone, in rounds (a
//! fresh case each), then every alloc case runs in this same process, then
//! the two rows again: their median afterwards must lie in the 95% interval
//! of their rounds alone.
//!
//! This file holds one test, so that no other test grows or shrinks the
//! process meanwhile (cargo runs the tests of one file as threads of one
//! process).

use oscycles::bench::{CaseCtx, Scale};
use oscycles::harness::HarnessConfig;
use oscycles::placement::{Policy, allowed_cpus};
use oscycles::results::Params;

/// The rows: lat_proc exec, and the static fork of the quick suite (the
/// summary's fork: its one case, with nothing touched).
const ROWS: [&str; 2] = ["proc.exec-dynamic", "proc.fork"];
const ALONE_ROUNDS: usize = 6;
const AFTER_ROUNDS: usize = 3;

struct Bench {
    clock: oscycles::clock::ClockInfo,
    cpus: Vec<usize>,
    scratch: tempfile::TempDir,
}

impl Bench {
    fn ctx<'a>(&'a self, params: &'a Params, harness: HarnessConfig, scale: Scale) -> CaseCtx<'a> {
        CaseCtx {
            params,
            cpus: &self.cpus,
            pin: true,
            policy: Policy::Other,
            memory_locked: false,
            harness,
            scale,
            point_ms: Some(20),
            clock: &self.clock,
            timeout: std::time::Duration::from_secs(120),
            scratch: self.scratch.path(),
            mem_bytes: Some(32 << 20),
        }
    }

    /// One round of a row: its per-operation samples (8 batches of 20 ms).
    fn round(&self, id: &str) -> Vec<f64> {
        let b = oscycles::registry::find_benchmark(id).unwrap();
        let params = b.cases(Scale::Quick).remove(0);
        let harness =
            HarnessConfig { target_batch_cycles: (0.02 * self.clock.tsc_hz) as u64, batches: 8, fixed_inner: None, max_inner: 1 << 16 };
        let data = b.run(&self.ctx(&params, harness, Scale::Quick)).unwrap_or_else(|e| panic!("{id}: {e:?}"));
        data.metrics.into_iter().find(|m| m.name == "per_op").unwrap().samples.remove(0)
    }

    /// Every alloc case at full scale, in this process, as a run of the
    /// alloc suite before the rows would.
    fn alloc_family(&self) -> usize {
        let alloc = oscycles::registry::find_family("alloc").unwrap();
        let mut ran = 0;
        for b in oscycles::registry::benchmarks().iter().filter(|b| b.is_of(alloc)) {
            for params in b.cases(Scale::Full) {
                b.run(&self.ctx(&params, HarnessConfig::tiny(), Scale::Full)).unwrap_or_else(|e| panic!("{} {params:?}: {e:?}", b.id));
                ran += 1;
            }
        }
        ran
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

#[test]
fn process_creation_costs_do_not_depend_on_the_cases_run_before_them() {
    let cpus = allowed_cpus();
    let bench = Bench {
        clock: oscycles::clock::calibrate_tsc(3, std::time::Duration::from_millis(20)),
        cpus: vec![cpus[0]],
        scratch: tempfile::tempdir().unwrap(),
    };
    for id in ROWS {
        if let Err(why) = oscycles::registry::find_benchmark(id).unwrap().supported() {
            eprintln!("{id} cannot run here ({why}): not checked");
            return;
        }
    }
    let mut alone: Vec<Vec<Vec<f64>>> = vec![Vec::new(); ROWS.len()];
    for _ in 0..ALONE_ROUNDS {
        for (i, id) in ROWS.iter().enumerate() {
            alone[i].push(bench.round(id));
        }
    }
    let alloc_cases = bench.alloc_family();
    assert!(alloc_cases > 10, "only {alloc_cases} alloc cases ran");
    let mut failures = Vec::new();
    for (i, id) in ROWS.iter().enumerate() {
        let after: Vec<f64> = (0..AFTER_ROUNDS).flat_map(|_| bench.round(id)).collect();
        let est = oscycles::uncertainty::estimate(&alone[i], 37).unwrap();
        let m = median(&after);
        eprintln!(
            "{id}: alone {:.0} cycles [{:.0}, {:.0}] over {} rounds; after the alloc family's {alloc_cases} cases {m:.0} ({:.2}x)",
            est.median,
            est.interval.lo,
            est.interval.hi,
            est.rounds,
            m / est.median
        );
        if !est.interval.contains(m) {
            failures
                .push(format!("{id}: {m:.0} cycles after the alloc cases, outside [{:.0}, {:.0}] alone", est.interval.lo, est.interval.hi));
        }
    }
    assert!(failures.is_empty(), "the cost depends on what ran before: {failures:?}");
}
