//! Rounds: the plan again, each time in a fresh process (new address space,
//! new placement draw, new heap and page-cache state) with its cases in a
//! new seeded random order, so that a cell's interval samples the
//! process-level effects that move a systems benchmark between invocations,
//! not only the batch-to-batch noise inside one process.
//!
//! Round k runs as `oscycles run ... --round k`; this process merges each
//! round's document into the run as it arrives (the run on disk is complete
//! after every round), then computes every cell's interval.

use crate::results::{CaseResult, RoundRecord, RunDoc};
use crate::runner::{self, Execution, Planned};
use crate::store::{RunWriter, StoreError};
use crate::uncertainty::SplitMix64;
use crate::watchdog;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Rounds when the user does not say. Five is the fewest with which a
/// comparison can come out significant at all (two-sided Mann-Whitney over
/// 5 + 5 round medians reaches p = 0.008; over 3 + 3 never below 0.1); on a
/// shared VM a process often lands in a slow mode for a whole round (a cell
/// reads 275 or 345 cycles depending on the process), and with 5 rounds one
/// such round on each side keeps a 25% difference `unsure`. Ten rounds of
/// fewer batches cost about the same time and settle those.
pub const DEFAULT_ROUNDS: usize = 10;

/// How rounds are run.
#[derive(Debug, Clone)]
pub struct Rounds {
    pub count: usize,
    /// The seed of the case orders; round k uses `round_seed(seed, k)`.
    pub seed: u64,
    /// Which round this process is, when it is one (`--round K`).
    pub this_round: Option<usize>,
    /// The arguments of `oscycles run` a round's process gets (suites,
    /// harness, condition), without --bench, --results and the round flags.
    pub args: Vec<String>,
    /// --bench as the user gave it.
    pub bench: Option<String>,
    /// Where rounds write their documents (the run's private directory).
    pub work: PathBuf,
    pub tsc_hz: f64,
}

/// The seed of round k's case order.
pub fn round_seed(seed: u64, k: usize) -> u64 {
    SplitMix64::new(seed ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_u64()
}

/// The plan in a seeded random order (Fisher-Yates).
pub fn shuffled(plan: &[Planned], seed: u64) -> Vec<Planned> {
    let mut out = plan.to_vec();
    let mut rng = SplitMix64::new(seed);
    for i in (1..out.len()).rev() {
        out.swap(i, rng.below(i + 1));
    }
    out
}

/// Puts results back in plan order (rounds ran them shuffled).
fn sort_like_plan(results: &mut [CaseResult], plan: &[Planned]) {
    let pos = |r: &CaseResult| plan.iter().position(|p| p.benchmark.id == r.benchmark && p.params == r.params).unwrap_or(usize::MAX);
    results.sort_by_key(pos);
}

/// Intervals for every result with raw samples.
pub fn estimate_all(doc: &mut RunDoc, seed: u64) {
    for (i, r) in doc.results.iter_mut().enumerate() {
        r.estimate_now(seed.wrapping_add((i as u64) << 8));
    }
}

/// Runs the plan in this process as one round (`k`), in the seeded order;
/// records the round.
pub fn run_here(plan: &[Planned], ex: &Execution, writer: &mut RunWriter, env: Option<&str>, r: &Rounds) -> Result<(), StoreError> {
    let k = r.this_round.unwrap_or(0);
    let seed = round_seed(r.seed, k);
    let order = shuffled(plan, seed);
    let t = Instant::now();
    let first = writer.doc.results.len();
    runner::run_plan(&order, ex, writer, env)?;
    let status = if watchdog::interrupted().is_some() { "interrupted".to_string() } else { "complete".to_string() };
    let rec = RoundRecord {
        round: k,
        seed,
        pid: std::process::id(),
        order: order.iter().map(Planned::label).collect(),
        elapsed_s: t.elapsed().as_secs_f64(),
        status,
    };
    writer.update(|doc| {
        doc.settings.round_log.push(rec);
        // A round's results stay in the order they ran (the parent merges
        // them as they come, by count), and the parent computes the
        // intervals over every round: a round's own would be thrown away.
        if r.this_round.is_none() {
            sort_like_plan(&mut doc.results[first..], plan);
            estimate_all(doc, r.seed);
        }
    })
}

/// Runs the plan in `r.count` rounds, each in a fresh process, merging each
/// round's results into the run as it ends.
pub fn run(plan: &[Planned], ex: &Execution, writer: &mut RunWriter, env: Option<&str>, r: &Rounds) -> Result<(), StoreError> {
    if r.count <= 1 || r.this_round.is_some() || ex.exe.is_none() {
        return run_here(plan, ex, writer, env, r);
    }
    let exe = ex.exe.clone().expect("checked above");
    // Results of other environments may precede these: only ours are sorted.
    let first = writer.doc.results.len();
    let repeating: Vec<&Planned> = plan.iter().filter(|p| p.benchmark.repeats_in_rounds()).collect();
    for k in 0..r.count {
        if watchdog::interrupted().is_some() {
            break;
        }
        let mut ids: Vec<&str> = Vec::new();
        if k > 0 {
            // Only what round 0 could measure repeats: a case that failed,
            // timed out or cannot run here would only do so again.
            let measured = |id: &str| {
                writer.doc.results[first..].iter().any(|res| res.benchmark == id && res.status == crate::results::CaseStatus::Ok)
            };
            for p in &repeating {
                if !ids.contains(&p.benchmark.id.as_str()) && measured(&p.benchmark.id) {
                    ids.push(&p.benchmark.id);
                }
            }
            if ids.is_empty() {
                break;
            }
        }
        if ex.progress {
            let what = if k == 0 { format!("{} cases", plan.len()) } else { format!("{} repeating cases", repeating.len()) };
            eprintln!("round {}/{}: {what} in a fresh process", k + 1, r.count);
        }
        let dir = r.work.join(format!("round-{k}"));
        // Results are merged as the round saves them: a run killed mid-round
        // keeps every case measured so far.
        let mut merged = 0;
        let mut sink = |doc: RunDoc, last: bool| -> Result<(), StoreError> {
            let fresh = doc.results.len().saturating_sub(merged);
            if fresh == 0 && !last {
                return Ok(());
            }
            let new = doc.results[merged..].iter().cloned().map(|mut res| {
                res.environment = env.map(String::from);
                res
            });
            merged = doc.results.len();
            writer.update(|run| {
                merge(run, new);
                if last {
                    run.settings.round_log.extend(doc.settings.round_log.into_iter().map(|mut rec| {
                        rec.round = k;
                        rec
                    }));
                }
            })
        };
        let outcome = run_round(&exe, r, k, &ids, &dir, ex.progress, &mut sink);
        match outcome {
            Ok(()) => {}
            Err(RoundError::Store(e)) => return Err(e),
            Err(RoundError::Failed(why)) => writer.update(|run| {
                eprintln!("oscycles: round {} failed: {why}", k + 1);
                run.settings.round_log.push(RoundRecord {
                    round: k,
                    seed: round_seed(r.seed, k),
                    pid: 0,
                    order: vec![],
                    elapsed_s: 0.0,
                    status: format!("failed: {why}"),
                })
            })?,
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    writer.update(|doc| {
        sort_like_plan(&mut doc.results[first..], plan);
        estimate_all(doc, r.seed);
    })
}

/// Why a round gave nothing (more).
enum RoundError {
    Failed(String),
    Store(StoreError),
}

impl From<String> for RoundError {
    fn from(s: String) -> Self {
        RoundError::Failed(s)
    }
}

/// The round's document as it is on disk now (it is replaced whole, never
/// written in place), if there is one.
fn round_doc(dir: &std::path::Path) -> Option<RunDoc> {
    let p = std::fs::read_dir(dir).ok()?.flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|x| x == "json"))?;
    crate::store::load(&p).ok()
}

/// Starts round k and waits for it, handing `sink` its document whenever it
/// grew (`last`: the final one).
fn run_round(
    exe: &std::path::Path,
    r: &Rounds,
    k: usize,
    ids: &[&str],
    dir: &std::path::Path,
    progress: bool,
    sink: &mut dyn FnMut(RunDoc, bool) -> Result<(), StoreError>,
) -> Result<(), RoundError> {
    std::fs::create_dir(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut cmd = Command::new(exe);
    cmd.arg("run").args(&r.args);
    match (k, &r.bench) {
        (0, Some(b)) => {
            cmd.arg("--bench").arg(b);
        }
        (0, None) => {}
        _ => {
            cmd.arg("--bench").arg(ids.join(","));
        }
    }
    cmd.arg("--round").arg(k.to_string()).arg("--rounds").arg(r.count.to_string());
    cmd.arg("--seed").arg(r.seed.to_string()).arg("--tsc-hz").arg(r.tsc_hz.to_string());
    cmd.arg("--results").arg(dir).arg("--scratch").arg(&r.work);
    if !progress {
        cmd.arg("--quiet");
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::inherit());
    watchdog::die_with_parent(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| format!("starting round {k} ({}): {e}", exe.display()))?;
    // SIGINT/SIGTERM reach this process (the round's own process group may
    // not be the terminal's): pass them on, so the round saves and stops.
    let mut passed_on = false;
    let mut polled = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for round {k}: {e}").into()),
        }
        if polled.elapsed() > std::time::Duration::from_millis(250) {
            polled = Instant::now();
            if let Some(doc) = round_doc(dir) {
                sink(doc, false).map_err(RoundError::Store)?;
            }
        }
        if !passed_on && let Some(sig) = watchdog::interrupted() {
            // SAFETY: a signal to our own child, which has not been reaped yet.
            unsafe { libc::kill(child.id() as libc::pid_t, sig) };
            passed_on = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let doc = round_doc(dir).ok_or_else(|| format!("round {k} saved no document (it ended with {status})"))?;
    sink(doc, true).map_err(RoundError::Store)
}

/// Adds a round's results to the run: a cell already there absorbs the
/// round's samples, a new one is added.
fn merge(run: &mut RunDoc, results: impl IntoIterator<Item = CaseResult>) {
    for r in results {
        match run.results.iter_mut().find(|e| e.same_cell(&r)) {
            Some(existing) => existing.absorb(&r),
            None => run.results.push(r),
        }
    }
}

/// Pools runs of the same build into one (a baseline): every cell's
/// rounds side by side; the first document's facts stay. Documents of
/// other hosts or benchmark parameters simply add cells.
pub fn pool(mut docs: Vec<RunDoc>, seed: u64) -> Option<RunDoc> {
    if docs.is_empty() {
        return None;
    }
    let mut first = docs.remove(0);
    for d in docs {
        merge(&mut first, d.results);
        first.settings.rounds += d.settings.rounds;
        first.settings.round_log.extend(d.settings.round_log);
    }
    estimate_all(&mut first, seed);
    Some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_permutations_seeded_and_differ_by_round() {
        let suites = [crate::registry::find_suite("syscall").unwrap()];
        let plan = runner::plan(&suites, None);
        let a = shuffled(&plan, round_seed(7, 0));
        let again = shuffled(&plan, round_seed(7, 0));
        let b = shuffled(&plan, round_seed(7, 1));
        let labels = |p: &[Planned]| p.iter().map(Planned::label).collect::<Vec<_>>();
        assert_eq!(labels(&a), labels(&again), "the same seed gives the same order");
        assert_ne!(labels(&a), labels(&b), "another round, another order");
        let mut sorted = labels(&a);
        sorted.sort();
        let mut orig = labels(&plan);
        orig.sort();
        assert_eq!(sorted, orig, "a permutation of the plan");
    }
}
