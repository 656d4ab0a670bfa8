//! Rounds: the plan again, each time in a fresh process (new address space,
//! new placement draw, new heap and page-cache state) with its cases in a
//! new seeded random order, so that a cell's interval samples the
//! process-level effects that move a systems benchmark between invocations,
//! not only the batch-to-batch noise inside one process.
//!
//! Round k runs as `oscycles __round --spec JSON`, the run's [`RunSpec`]
//! with its round, benchmarks and directories; this process merges each
//! round's document into the run as it arrives (the run on disk is complete
//! after every round), then computes every cell's interval.

pub mod settle;

use crate::analysis::uncertainty::random::SplitMix64;
use crate::data::documents::{DocumentError, RunWriter};
use crate::data::results::time::by_family;
use crate::data::results::{CaseResult, CaseStatus, RoundRecord, RunDoc};
use crate::measure::watchdog;
use crate::run::execute::{self, Destination, Execution};
use crate::run::plan::{self, PlannedCase};
use crate::run::progress::Reporter;
use crate::run::spec::{Rounds, RunSpec};
use settle::{Columns, Layout, Step};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The seed of round k's case order.
pub fn round_seed(seed: u64, k: usize) -> u64 {
    SplitMix64::new(seed ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_u64()
}

/// The plan in a seeded random order (Fisher-Yates).
pub fn shuffled(plan: &[PlannedCase], seed: u64) -> Vec<PlannedCase> {
    let mut out = plan.to_vec();
    let mut rng = SplitMix64::new(seed);
    for i in (1..out.len()).rev() {
        out.swap(i, rng.below(i + 1));
    }
    out
}

/// The label `--cases` takes for a result: "benchmark params".
pub fn case_label(r: &CaseResult) -> String {
    plan::case_label(&r.benchmark, &r.params)
}

/// Where a result's case stands in the plan (after it: not in the plan).
pub fn plan_position(plan: &[PlannedCase], r: &CaseResult) -> usize {
    plan.iter().position(|p| p.benchmark.id == r.benchmark && p.params == r.params).unwrap_or(usize::MAX)
}

/// Puts results back in plan order (rounds ran them shuffled).
fn sort_like_plan(results: &mut [CaseResult], plan: &[PlannedCase]) {
    results.sort_by_key(|r| plan_position(plan, r));
}

/// Whether benchmark `id` of the plan is measured again in later rounds.
fn repeats(plan: &[PlannedCase], id: &str) -> bool {
    plan.iter().any(|p| p.benchmark.id == id && p.benchmark.repeats_in_rounds())
}

/// Intervals for every result with raw samples.
pub fn estimate_all(doc: &mut RunDoc, seed: u64) {
    for (i, r) in doc.results.iter_mut().enumerate() {
        r.estimate_now(seed.wrapping_add((i as u64) << 8));
    }
}

/// Runs the plan in this process as one round (`k`), in the seeded order;
/// records the round.
pub fn run_here(plan: &[PlannedCase], ex: &Execution, out: &mut Destination) -> Result<(), DocumentError> {
    let spec = &ex.spec;
    let k = spec.round.unwrap_or(0);
    let seed = round_seed(spec.seed, k);
    let order = shuffled(plan, seed);
    let t = Instant::now();
    let first = out.writer.doc.results.len();
    let switches = || crate::families::bench::toolkit::attribution::involuntary_switches(libc::RUSAGE_SELF);
    let (ticks, switches_before) = (crate::measure::host::cpu_ticks(&ex.cpus), switches());
    execute::run_plan(&order, ex, out)?;
    let status = if watchdog::interrupted().is_some() { "interrupted".to_string() } else { "complete".to_string() };
    let rec = RoundRecord {
        round: k,
        seed,
        pid: std::process::id(),
        order: order.iter().map(PlannedCase::label).collect(),
        elapsed_s: t.elapsed().as_secs_f64(),
        status,
        steal_pct: ticks.zip(crate::measure::host::cpu_ticks(&ex.cpus)).and_then(|(b, a)| crate::measure::host::steal_pct(b, a)),
        involuntary_switches: switches_before.zip(switches()).map(|(b, a)| a.saturating_sub(b)),
        counted: Some(ex.counters()),
        families: by_family(&out.writer.doc.results[first..]),
        ..RoundRecord::default()
    };
    out.writer.update(|doc| {
        doc.settings.round_log.push(rec);
        // A round's results stay in the order they ran (the parent merges
        // them as they come, by count), and the parent computes the
        // intervals over every round: a round's own would be thrown away.
        if spec.round.is_none() {
            sort_like_plan(&mut doc.results[first..], plan);
            estimate_all(doc, spec.seed);
        }
    })
}

/// Runs the plan as `ex.rounds` says: in the spec's rounds (or, with
/// `--rounds auto`, until its cells settle or the budget ends), each in a
/// fresh process, merging each round's results into the run as it ends;
/// without rounds, once here in plan order.
pub fn run(plan: &[PlannedCase], ex: &Execution, out: &mut Destination) -> Result<(), DocumentError> {
    let Some(r) = &ex.rounds else {
        return execute::run_plan(plan, ex, out);
    };
    let spec = &ex.spec;
    let Some(exe) = ex.exe.as_deref().filter(|_| spec.rounds_here() > 1) else {
        return run_here(plan, ex, out);
    };
    let Destination { writer, env, rep } = out;
    let env: Option<&str> = *env;
    // Results of other environments may precede these: only ours are sorted.
    let rounds = Repeated { exe, plan, r, spec, env, first: writer.doc.results.len() };
    match &spec.auto {
        None => {
            for k in 0..spec.rounds {
                if matches!(rounds.one(k, spec.rounds, None, writer, &mut **rep)?, Step::Nothing | Step::Interrupted) {
                    break;
                }
            }
        }
        Some(auto) => {
            let names = vec![env.unwrap_or("native").to_string()];
            let layout = Layout {
                tags: vec![env.map(String::from)],
                names,
                reference: 0,
                first: rounds.first,
                seed: spec.seed,
                across_conditions: false,
                baseline: r.baseline.as_ref(),
            };
            let t = Instant::now();
            let mut column = Fresh { columns: vec![rounds], writer, rep: &mut **rep };
            let mut outcome = settle::drive(auto, &layout, &mut column, &mut || t.elapsed())?;
            outcome.environment = env.map(String::from);
            outcome.describe().iter().for_each(|line| rep.note(line));
            writer.update(|doc| {
                doc.settings.adaptive.push(outcome);
                doc.settings.rounds = doc.settings.adaptive.iter().map(|o| o.rounds).max().unwrap_or(0);
            })?;
        }
    }
    writer.update(|doc| {
        sort_like_plan(&mut doc.results[rounds.first..], plan);
        estimate_all(doc, spec.seed);
    })
}

/// The benchmarks of `plan` that round k measures, given the results so
/// far (`env`: those of this environment): all in round 0; later, only what
/// repeats in rounds and round 0 measured (a case that failed, timed out or
/// cannot run here would only do so again), and of those only the ones in
/// `only` where given.
pub fn round_ids(plan: &[PlannedCase], k: usize, results: &[CaseResult], env: Option<&str>, only: Option<&[String]>) -> Vec<String> {
    let mut ids = plan::benchmark_ids(plan);
    if k > 0 {
        let measured =
            |id: &str| results.iter().any(|res| res.benchmark == id && res.status == CaseStatus::Ok && res.environment.as_deref() == env);
        ids.retain(|id| repeats(plan, id) && measured(id) && only.is_none_or(|o| o.contains(id)));
    }
    ids
}

/// The inner counts each case of `env` settled on in its first round
/// (a merged cell keeps its first round's), by case label.
fn inners_of(results: &[CaseResult], env: Option<&str>) -> std::collections::BTreeMap<String, Vec<u64>> {
    results.iter().filter(|r| r.environment.as_deref() == env && !r.inners.is_empty()).map(|r| (case_label(r), r.inners.clone())).collect()
}

/// A plan measured round after round, each round in a fresh process.
#[derive(Clone, Copy)]
pub struct Repeated<'a> {
    pub exe: &'a std::path::Path,
    pub plan: &'a [PlannedCase],
    pub r: &'a Rounds,
    /// The run's settings (rounds, seed, round of this process).
    pub spec: &'a RunSpec,
    /// The environment its results are tagged with (None: the run's own).
    pub env: Option<&'a str>,
    /// Where this plan's results begin in the run.
    pub first: usize,
}

impl Repeated<'_> {
    /// Round k (of `count`, 0: not known ahead) of the cases labelled
    /// `cases` (None: all that repeat), merged into the run: what the
    /// column loop asks of a column measured in fresh processes.
    pub fn column_round(
        &self,
        (k, count): (usize, usize),
        cases: Option<&[String]>,
        writer: &mut RunWriter,
        rep: &mut dyn Reporter,
    ) -> Result<Step, DocumentError> {
        let listed = |p: &&PlannedCase| cases.is_none_or(|c| c.contains(&p.label()));
        let spec = RunSpec { cases: cases.map(<[String]>::to_vec).or_else(|| self.spec.cases.clone()), ..self.spec.clone() };
        let only = cases.map(|_| plan::benchmark_ids(&self.plan.iter().filter(listed).cloned().collect::<Vec<_>>()));
        let rounds = Repeated { spec: &spec, ..*self };
        rounds.one(k, count, only.as_deref(), writer, rep)
    }

    /// Round k (of `count`, 0: not known ahead) of the benchmarks in `only`
    /// (None: all that repeat), merged into the run; `Nothing` when nothing
    /// is left to measure again, `Failed` when the round gave no document.
    pub fn one(
        &self,
        k: usize,
        count: usize,
        only: Option<&[String]>,
        writer: &mut RunWriter,
        rep: &mut dyn Reporter,
    ) -> Result<Step, DocumentError> {
        if watchdog::interrupted().is_some() {
            return Ok(Step::Interrupted);
        }
        let ids = round_ids(self.plan, k, &writer.doc.results[self.first..], self.env, only);
        if ids.is_empty() {
            return Ok(Step::Nothing);
        }
        let here = self.env.map(|e| format!("[{e}] ")).unwrap_or_default();
        let what = match (k, only) {
            (0, _) => format!("{here}{} cases", self.plan.len()),
            (_, Some(_)) => format!("{here}{} unsettled benchmarks", ids.len()),
            (_, None) => format!("{here}{} repeating benchmarks", ids.len()),
        };
        rep.round_started(k, count, &what);
        let (r, env) = (self.r, self.env);
        let dir = r.work.join(format!("round-{k}"));
        let mut spec = self.spec.for_round(k, ids, dir.clone(), r.work.clone());
        if k > 0 {
            spec.inners = inners_of(&writer.doc.results[self.first..], env);
        }
        // The round runs on this host: its facts are the run's.
        spec.host = Some(writer.doc.host.clone());
        let mut reading_s = 0.0;
        let mut step = Step::Measured;
        match run_round(self.exe, &spec, &dir, &mut reading_s, &mut |doc, merged, last| merge_round(writer, env, k, doc, merged, last)) {
            Ok(()) => writer.spent().merges_s += reading_s,
            Err(RoundError::Store(e)) => return Err(e),
            Err(RoundError::Failed(why)) => {
                step = Step::Failed(why.clone());
                rep.warning(&format!("round {} failed: {why}", k + 1));
                writer.update(|run| {
                    run.settings.round_log.push(RoundRecord {
                        round: k,
                        seed: round_seed(self.spec.seed, k),
                        status: format!("failed: {why}"),
                        ..RoundRecord::default()
                    })
                })?
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        if watchdog::interrupted().is_some() {
            return Ok(Step::Interrupted);
        }
        Ok(step)
    }
}

/// Columns each measured round by round in fresh processes (`Repeated`),
/// into one run, as the loop asks them: one environment's rounds (`run
/// --rounds auto`), or compare's two sides.
pub struct Fresh<'r, 'a> {
    pub columns: Vec<Repeated<'a>>,
    pub writer: &'r mut RunWriter,
    pub rep: &'r mut dyn Reporter,
}

impl Columns<DocumentError> for Fresh<'_, '_> {
    fn measure(&mut self, i: usize, k: usize, cases: Option<&[String]>) -> Result<Step, DocumentError> {
        self.columns[i].column_round((k, 0), cases, self.writer, &mut *self.rep)
    }
    fn doc(&self) -> &RunDoc {
        &self.writer.doc
    }
    fn change(&mut self, f: &mut dyn FnMut(&mut RunDoc)) -> Result<(), DocumentError> {
        self.writer.update(f)
    }
    fn note(&mut self, line: &str) {
        self.rep.note(line);
    }
}

/// Takes round k's document (as far as it got: `merged` of its results are
/// in already; `last`: it has ended) into the run: its new results (tagged
/// with `env`), and at the end its round record. Returns how many of its
/// results are in now.
pub fn merge_round(
    writer: &mut RunWriter,
    env: Option<&str>,
    k: usize,
    doc: RunDoc,
    merged: usize,
    last: bool,
) -> Result<usize, DocumentError> {
    let fresh = doc.results.len().saturating_sub(merged);
    if fresh == 0 && !last {
        return Ok(merged);
    }
    let n = doc.results.len();
    // The round's counting pass comes after its timed cases, writing counts
    // into results already there: a round's counts are merged once, at its end.
    let new = doc.results[merged..].iter().cloned().map(|mut res| {
        res.environment = env.map(String::from);
        res.counters = None;
        res
    });
    let mut took = 0.0;
    writer.update(|run| {
        let t = Instant::now();
        merge(run, new);
        if last {
            let tagged =
                doc.results.iter().filter(|r| r.counters.is_some()).map(|r| CaseResult { environment: env.map(String::from), ..r.clone() });
            merge_counts(run, tagged);
            let spent = doc.settings.spent;
            run.settings.round_log.extend(doc.settings.round_log.into_iter().map(|mut rec| {
                rec.round = k;
                rec.spent = rec.spent.or_else(|| spent.clone());
                rec
            }));
        }
        took = t.elapsed().as_secs_f64();
    })?;
    // Its write is counted with the others (`writes_s`).
    writer.spent().merges_s += took;
    Ok(n)
}

/// Why a round gave nothing (more).
enum RoundError {
    Failed(String),
    Store(DocumentError),
}

impl From<String> for RoundError {
    fn from(s: String) -> Self {
        RoundError::Failed(s)
    }
}

/// The round's document as it is on disk now (it is replaced whole, never
/// written in place), if there is one.
fn round_doc(dir: &std::path::Path) -> Option<RunDoc> {
    crate::data::documents::load(&round_path(dir)?).ok()
}

/// Where the round's document is in `dir`, once it has one.
fn round_path(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    std::fs::read_dir(dir).ok()?.flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|x| x == "json"))
}

/// Starts a round's process (`exe __round --spec -`, the spec's JSON on its
/// stdin, which has no length limit as an argument has; its document in
/// `dir`) and waits for it, handing `sink` its document whenever it was
/// saved again, with how many of its results are merged already and
/// whether it has ended; `sink` returns how many are merged now. Results
/// are merged as the round saves them, at most every `MERGE_EVERY`: a run
/// killed mid-round keeps the cases measured until then. The round's records get the seconds its process
/// took; `reading_s` the seconds spent reading its document.
fn run_round(
    exe: &std::path::Path,
    spec: &RunSpec,
    dir: &std::path::Path,
    reading_s: &mut f64,
    sink: &mut dyn FnMut(RunDoc, usize, bool) -> Result<usize, DocumentError>,
) -> Result<(), RoundError> {
    let k = spec.round.unwrap_or(0);
    std::fs::create_dir(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let json = serde_json::to_string(spec).map_err(|e| format!("round {k}: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.arg("__round").arg("--spec").arg("-");
    cmd.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::inherit());
    watchdog::die_with_parent(&mut cmd);
    let spawned = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("starting round {k} ({}): {e}", exe.display()))?;
    // Written whole, then closed: the round reads to the end before it measures.
    let handed = child.stdin.take().map(|mut pipe| std::io::Write::write_all(&mut pipe, json.as_bytes()));
    if let Some(Err(e)) = handed {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("handing round {k} its spec: {e}").into());
    }
    // SIGINT/SIGTERM reach this process (the round's own process group may
    // not be the terminal's): pass them on, so the round saves and stops.
    let mut passed_on = false;
    let exits = pidfd(child.id());
    let mut polled = Instant::now();
    let mut merged = 0;
    let mut seen = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for round {k}: {e}").into()),
        }
        if polled.elapsed() > MERGE_EVERY {
            polled = Instant::now();
            if let Some(doc) = saved_again(dir, &mut seen, reading_s) {
                merged = sink(doc, merged, false).map_err(RoundError::Store)?;
            }
        }
        if !passed_on && let Some(sig) = watchdog::interrupted() {
            // SAFETY: a signal to our own child, which has not been reaped yet.
            unsafe { libc::kill(child.id() as libc::pid_t, sig) };
            passed_on = true;
        }
        until_exit(exits.as_ref(), std::time::Duration::from_millis(20));
    };
    let process_s = spawned.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut doc = round_doc(dir).ok_or_else(|| format!("round {k} saved no document (it ended with {status})"))?;
    *reading_s += t.elapsed().as_secs_f64();
    doc.settings.round_log.iter_mut().for_each(|rec| rec.process_s = Some(process_s));
    sink(doc, merged, true).map(|_| ()).map_err(RoundError::Store)
}

/// A descriptor that turns readable when our child `pid` exits (Linux
/// 5.3's pidfd_open), None where the kernel has none.
fn pidfd(pid: u32) -> Option<std::os::fd::OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags, no pointers.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a descriptor the call just opened for this process, closed once, by the OwnedFd.
    (fd >= 0).then(|| unsafe { std::os::fd::FromRawFd::from_raw_fd(fd as std::os::fd::RawFd) })
}

/// Waits up to `most` for the child behind `exits` to end, returning as
/// soon as it has (a round's end is not rounded up to the next look: 10 ms
/// a round on average, 20 at most); without a pidfd, sleeps `most`.
fn until_exit(exits: Option<&std::os::fd::OwnedFd>, most: std::time::Duration) {
    let Some(fd) = exits else { return std::thread::sleep(most) };
    let mut p = libc::pollfd { fd: std::os::fd::AsRawFd::as_raw_fd(fd), events: libc::POLLIN, revents: 0 };
    // SAFETY: one pollfd of ours, valid for the call; a signal ends it early (EINTR), which the caller's loop looks at.
    unsafe { libc::poll(&mut p, 1, most.as_millis() as libc::c_int) };
}

/// How often a round's results are merged into the run while it runs (and
/// the run's document written with them): a round of a few seconds is
/// merged once, at its end (each of its results safe on disk before the
/// next round begins); a long round loses at most this much to a crash.
const MERGE_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// The round's document if it was saved again since `seen` (each save
/// replaces the file, a new inode; a look at its metadata is cheap, reading
/// a document of a thousand cases is not), adding the time to `reading_s`.
fn saved_again(dir: &std::path::Path, seen: &mut Option<(u64, i64, i64, u64)>, reading_s: &mut f64) -> Option<RunDoc> {
    use std::os::unix::fs::MetadataExt;
    let t = Instant::now();
    let p = round_path(dir)?;
    let m = std::fs::symlink_metadata(&p).ok()?;
    let now = Some((m.ino(), m.mtime(), m.mtime_nsec(), m.len()));
    if now == *seen {
        return None;
    }
    *seen = now;
    let doc = crate::data::documents::load(&p).ok();
    *reading_s += t.elapsed().as_secs_f64();
    doc
}

/// The counts of `results` into the run's same cells.
fn merge_counts(run: &mut RunDoc, results: impl IntoIterator<Item = CaseResult>) {
    for r in results {
        if let (Some(existing), Some(counts)) = (run.results.iter_mut().find(|e| e.same_cell(&r)), &r.counters) {
            match &mut existing.counters {
                Some(c) => c.absorb(counts),
                None => existing.counters = Some(counts.clone()),
            }
        }
    }
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
        // Its rounds follow those pooled so far (each run numbers its own from 0).
        let before = first.settings.rounds;
        first.settings.rounds += d.settings.rounds;
        first.settings.round_log.extend(d.settings.round_log.into_iter().map(|mut rec| {
            rec.round += before;
            rec
        }));
    }
    estimate_all(&mut first, seed);
    Some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_permutations_seeded_and_differ_by_round() {
        let suites = [crate::run::registry::find_suite("syscall").unwrap()];
        let plan = crate::run::plan::plan(&suites, None);
        let a = shuffled(&plan, round_seed(7, 0));
        let again = shuffled(&plan, round_seed(7, 0));
        let b = shuffled(&plan, round_seed(7, 1));
        let labels = |p: &[PlannedCase]| p.iter().map(PlannedCase::label).collect::<Vec<_>>();
        assert_eq!(labels(&a), labels(&again), "the same seed gives the same order");
        assert_ne!(labels(&a), labels(&b), "another round, another order");
        let mut sorted = labels(&a);
        sorted.sort();
        let mut orig = labels(&plan);
        orig.sort();
        assert_eq!(sorted, orig, "a permutation of the plan");
    }

    /// Round k's document of one getpid cell: its samples, its counts
    /// where the round counted, its round record.
    fn round_doc_of(k: usize, counted: bool) -> RunDoc {
        use crate::data::results::{Metric, time::FamilyTime};
        let suites = [crate::run::registry::find_suite("syscall").unwrap()];
        let plan = crate::run::plan::plan(&suites, Some(&["syscall.getpid".to_string()]));
        let clock = crate::measure::clock::known_tsc(1e9);
        let spec = RunSpec { round: Some(k), ..RunSpec::default() };
        let mut doc = spec.document(&["native"], 1, vec![0], crate::measure::harness::HarnessConfig::tiny(), clock.clone());
        let cond = crate::run::execute::condition(crate::run::load::LoadKind::Idle, crate::run::isolation::Isolation::Pinned, None);
        let mut r = crate::run::plan::not_measured(&plan[0], CaseStatus::Ok, "", cond);
        let samples = vec![100.0 + k as f64, 101.0];
        let mut m = Metric::cycles("cycles", crate::analysis::stats::Summary::of(&samples).unwrap(), &clock);
        m.samples = vec![samples];
        r.metrics = vec![m];
        r.counters = counted.then(|| crate::measure::counters::Counts::none("counted in round 1"));
        r.inners = vec![1000 + k as u64];
        doc.results.push(r);
        let families = [("syscall".to_string(), FamilyTime { cases: 1, measuring_s: 0.5 })].into_iter().collect();
        doc.settings.round_log.push(RoundRecord { round: k, counted: Some(counted), families, ..RoundRecord::default() });
        doc.settings.spent = Some(Default::default());
        doc
    }

    #[test]
    fn the_counts_of_the_first_round_survive_the_later_rounds() {
        let tmp = tempfile::tempdir().unwrap();
        let first = round_doc_of(0, true);
        let mut run = first.clone();
        run.results.clear();
        run.settings.round_log.clear();
        let mut w = RunWriter::create(tmp.path(), run).unwrap();
        merge_round(&mut w, None, 0, first.clone(), 0, true).unwrap();
        for k in 1..3 {
            merge_round(&mut w, None, k, round_doc_of(k, false), 0, true).unwrap();
        }
        assert_eq!(w.doc.results.len(), 1, "one cell");
        let cell = &w.doc.results[0];
        assert_eq!(cell.metrics[0].samples.len(), 3, "every round's samples");
        assert_eq!(cell.counters, first.results[0].counters, "the first round's counts");
        let later_rounds_start_at = inners_of(&w.doc.results, None);
        assert_eq!(
            later_rounds_start_at.into_iter().collect::<Vec<_>>(),
            [("syscall.getpid".to_string(), vec![1000])],
            "the first round's inner counts"
        );
        let counted: Vec<Option<bool>> = w.doc.settings.round_log.iter().map(|r| r.counted).collect();
        assert_eq!(counted, [Some(true), Some(false), Some(false)]);
        assert!(w.doc.settings.round_log.iter().all(|r| r.families["syscall"].cases == 1 && r.spent.is_some()));
        assert!(w.doc.settings.spent.as_ref().is_some_and(|s| s.writes >= 3), "the merges were written");
    }
}
