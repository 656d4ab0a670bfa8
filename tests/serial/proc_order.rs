//! Case-order independence of the process-creation rows: a fork copies the
//! process that forks, so a row that forked the measuring process measured
//! whatever the cases before it had left in it (the alloc family's grown
//! heap made `lat_proc exec` 1.8 times and the static fork 2.4 times as
//! dear). Here every alloc case runs in this process, then `lat_proc exec`
//! and the static fork run in rounds (a fresh case each), alternating with
//! rounds of the same rows run alone: by a twin, a copy of this process
//! forked before the alloc cases ran, which runs a round when asked.
//! Alternating the two in time keeps a shared machine's changing load out
//! of the comparison. The invariant is the one an A/A comparison keeps:
//! `compare`'s verdict between the rounds alone and the rounds after the
//! alloc cases is `same` or `unsure`, never `faster` or `slower` (whether
//! the median after lies in the 95% interval alone is printed too: between
//! two samples of the same thing it misses about one time in six, and did
//! so on the shared machine; a 1.6x or 4x shift, the old code's, fails both).
//!
//! It runs alone (the serial binary's tests take turns, and scripts/test
//! runs that binary one test at a time), so that no other test grows or
//! shrinks the process meanwhile (cargo runs the tests of one binary as
//! threads of one process).

use oscycles::data::schema_core::Params;
use oscycles::families::bench::{CaseCtx, Scale};
use oscycles::measure::harness::HarnessConfig;
use oscycles::measure::placement::{Policy, allowed_cpus};

/// The rows: lat_proc exec, and the static fork of the quick suite (the
/// summary's fork: its one case, with nothing touched).
const ROWS: [&str; 2] = ["proc.exec-dynamic", "proc.fork"];
/// Rounds of each side, alternating.
const ROUNDS: usize = 6;

struct Bench {
    clock: oscycles::measure::clock::ClockInfo,
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
        let b = oscycles::run::registry::find_benchmark(id).unwrap();
        let params = b.cases(Scale::Quick).remove(0);
        let harness =
            HarnessConfig { target_batch_cycles: (0.02 * self.clock.tsc_hz) as u64, batches: 8, fixed_inner: None, max_inner: 1 << 16 };
        let data = b.run(&self.ctx(&params, harness, Scale::Quick)).unwrap_or_else(|e| panic!("{id}: {e:?}"));
        data.metrics.into_iter().find(|m| m.name == "per_op").unwrap().samples.remove(0)
    }

    /// Every alloc case at full scale, in this process, as a run of the
    /// alloc suite before the rows would.
    fn alloc_family(&self) -> usize {
        let alloc = oscycles::run::registry::find_family("alloc").unwrap();
        let mut ran = 0;
        for b in oscycles::run::registry::benchmarks().iter().filter(|b| b.is_of(alloc)) {
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

/// A copy of this process, forked before anything ran in it, that runs
/// a round of row `i` whenever asked and answers its samples.
struct Twin {
    pid: i32,
    ask: std::fs::File,
    answers: std::fs::File,
}

fn pipe() -> (std::fs::File, std::fs::File) {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: fds is a valid out-array of two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors are new and owned here.
    unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) }
}

impl Twin {
    fn fork(bench: &Bench) -> Twin {
        use std::io::{Read, Write};
        let ((mut ask_r, ask_w), (ans_r, mut ans_w)) = (pipe(), pipe());
        // SAFETY: the child only runs rounds (this test's own code, on this
        // thread) and leaves with _exit; glibc makes malloc usable after fork.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let mut i = [0u8];
            while ask_r.read_exact(&mut i).is_ok() {
                let samples = bench.round(ROWS[i[0] as usize]);
                let bytes: Vec<u8> = std::iter::once(samples.len() as f64).chain(samples).flat_map(f64::to_ne_bytes).collect();
                if ans_w.write_all(&bytes).is_err() {
                    break;
                }
            }
            // SAFETY: ends the twin without running the parent's destructors.
            unsafe { libc::_exit(0) };
        }
        Twin { pid, ask: ask_w, answers: ans_r }
    }

    fn round(&mut self, i: usize) -> Vec<f64> {
        use std::io::{Read, Write};
        self.ask.write_all(&[i as u8]).unwrap();
        let mut read_f64 = || {
            let mut b = [0u8; 8];
            self.answers.read_exact(&mut b).expect("the twin answers");
            f64::from_ne_bytes(b)
        };
        let n = read_f64() as usize;
        (0..n).map(|_| read_f64()).collect()
    }
}

impl Drop for Twin {
    fn drop(&mut self) {
        // SAFETY: our own child.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        let mut status = 0;
        // SAFETY: status is a valid out-pointer.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
    }
}

#[test]
fn process_creation_costs_do_not_depend_on_the_cases_run_before_them() {
    // Alone in this process (the serial binary's tests take turns).
    let _alone = crate::common::one_at_a_time();
    let cpus = allowed_cpus();
    let bench = Bench {
        clock: oscycles::measure::clock::calibrate_tsc(3, std::time::Duration::from_millis(20)),
        cpus: vec![cpus[0]],
        scratch: tempfile::tempdir().unwrap(),
    };
    for id in ROWS {
        // fork and exec work on every Linux this runs on: where they do not, the test fails saying why.
        if let Err(why) = oscycles::run::registry::find_benchmark(id).unwrap().supported() {
            panic!("{id} cannot run here ({why})");
        }
    }
    let mut twin = Twin::fork(&bench);
    let alloc_cases = bench.alloc_family();
    assert!(alloc_cases > 10, "only {alloc_cases} alloc cases ran");
    let mut alone: Vec<Vec<Vec<f64>>> = vec![Vec::new(); ROWS.len()];
    let mut after: Vec<Vec<Vec<f64>>> = vec![Vec::new(); ROWS.len()];
    for _ in 0..ROUNDS {
        for (i, id) in ROWS.iter().enumerate() {
            alone[i].push(twin.round(i));
            after[i].push(bench.round(id));
        }
    }
    drop(twin);
    let mut failures = Vec::new();
    let policy = oscycles::analysis::uncertainty::verdict::Thresholds::default();
    for (i, id) in ROWS.iter().enumerate() {
        let est = oscycles::analysis::uncertainty::bootstrap::estimate(&alone[i], 37).unwrap();
        let m = median(&after[i].concat());
        let c = oscycles::analysis::uncertainty::verdict::compare(&alone[i], &after[i], true, &policy, 37).unwrap();
        eprintln!(
            "{id}: alone {:.0} cycles [{:.0}, {:.0}] over {} rounds; after the alloc family's {alloc_cases} cases {m:.0} ({:.2}x, {}in the interval); verdict {:?} (ratio {:.2} [{:.2}, {:.2}], p {:.3})",
            est.median,
            est.interval.lo,
            est.interval.hi,
            est.rounds,
            m / est.median,
            if est.interval.contains(m) { "" } else { "not " },
            c.verdict,
            c.ratio,
            c.interval.lo,
            c.interval.hi,
            c.p
        );
        if matches!(
            c.verdict,
            oscycles::analysis::uncertainty::verdict::Verdict::Faster | oscycles::analysis::uncertainty::verdict::Verdict::Slower
        ) {
            failures
                .push(format!("{id}: {:?} after the alloc cases ({m:.0} cycles against {:.0} alone, p {:.3})", c.verdict, est.median, c.p));
        }
    }
    assert!(failures.is_empty(), "the cost depends on what ran before: {failures:?}");
}
