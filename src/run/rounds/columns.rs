//! Rounds across columns until every cell knows (`run --env a,b --rounds
//! auto`): round k of every column (environment) before round k+1 of any,
//! in an order that alternates (`interleaved_order`), and after each full
//! round every cell of every column judged against the reference column's
//! on their paired rounds by the sequential rule `compare --interleave
//! auto` uses (`compare::judge_sequential`: a confidence sequence valid
//! however often it is looked at). A case whose cells all have a verdict
//! (faster, slower, same within --target) drops out of the later rounds of
//! every column (the rounds take case lists, `--cases`); the loop ends when
//! every cell has one, or the next round would not fit the budget, and
//! names the unsettled cells with the rounds each would need.
//!
//! A cell no other column can be paired with (the reference column lacks
//! it, its unit differs: cycles against guest instructions, or the
//! reference column could not run) settles on its own interval, as a run
//! of one environment does (`adaptive`); a cell counted exactly settles on
//! its first round either way. A column that cannot run is not asked
//! again. A cell that one column measured in a round and another did not
//! (it failed there) loses that round in every column, so that every cell
//! has as many rounds in each column and round k pairs with round k.
//!
//! This module decides and keeps the rounds even; how a column measures a
//! round is the caller's ([`Columns`]), so tests drive it with fake ones.

use crate::analysis::uncertainty::verdict::{Thresholds, Verdict};
use crate::data::compare::judge_sequential;
use crate::data::results::adaptive::{Auto, Ended, MAX_ROUNDS, MIN_ROUNDS, Outcome, Unsettled};
use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::run::rounds::adaptive::{counted_exactly, rounds_for};
use crate::run::rounds::paired::case_label;
use std::time::Duration;

/// The order of `n` columns in round k: forward in even rounds, backward
/// in odd ones, so that none is always measured first.
pub fn interleaved_order(n: usize, k: usize) -> Vec<usize> {
    if k.is_multiple_of(2) { (0..n).collect() } else { (0..n).rev().collect() }
}

/// What asking a column for a round gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Measured,
    /// No case of the list runs in that column (nothing asked of it).
    Nothing,
    /// The column cannot run (it could not start, or a later round failed):
    /// not asked again.
    Unusable,
    Interrupted,
}

/// The columns of a run, as the loop measures them.
pub trait Columns<E> {
    /// Round k of column i, of the cases labelled `cases` (None: all).
    fn measure(&mut self, i: usize, k: usize, cases: Option<&[String]>) -> Result<Step, E>;
    /// The run so far (every column's results, merged round by round).
    fn doc(&self) -> &RunDoc;
    /// Changes the run (keeping rounds even) and saves it.
    fn change(&mut self, f: &mut dyn FnMut(&mut RunDoc)) -> Result<(), E>;
    /// A progress line (one a round).
    fn note(&mut self, line: &str);
}

/// The columns as their results carry them.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Each column's tag (`CaseResult::environment`) and name.
    pub tags: Vec<Option<String>>,
    pub names: Vec<String>,
    /// The column the others are judged against.
    pub reference: usize,
    /// Where the columns' results begin in the run.
    pub first: usize,
    /// The seed of the intervals of cells judged on their own.
    pub seed: u64,
}

impl Layout {
    fn column(&self, r: &CaseResult) -> Option<usize> {
        self.tags.iter().position(|t| t.as_deref() == r.environment.as_deref())
    }
}

/// A cell still open: the case label its rounds are asked by, the columns
/// that must measure it again (its own, and the reference where it is
/// judged against it), and how far it is.
#[derive(Debug, Clone)]
pub struct Open {
    pub case: String,
    pub columns: Vec<usize>,
    pub unsettled: Unsettled,
}

/// The cases each column is asked next: those of the open cells that
/// need it, sorted (an empty list: the column is not asked).
fn asked_next(open: &[Open], n: usize) -> Vec<Option<Vec<String>>> {
    (0..n)
        .map(|c| {
            let mut l: Vec<String> = open.iter().filter(|o| o.columns.contains(&c)).map(|o| o.case.clone()).collect();
            l.sort();
            l.dedup();
            Some(l)
        })
        .collect()
}

/// Runs rounds across the columns of `layout` until every cell settles or
/// the budget ends; `now` is the time since the rounds began.
pub fn drive<E>(auto: &Auto, layout: &Layout, cols: &mut dyn Columns<E>, now: &mut dyn FnMut() -> Duration) -> Result<Outcome, E> {
    let budget = Duration::from_secs_f64(auto.budget_min * 60.0);
    let n = layout.tags.len();
    let mut usable = vec![true; n];
    let (mut open, mut cases): (Vec<Open>, Vec<Option<Vec<String>>>) = (vec![], vec![None; n]);
    let (mut k, mut last) = (0, Duration::ZERO);
    let ended = 'rounds: loop {
        if k >= MAX_ROUNDS {
            break Ended::MaxRounds;
        }
        let started = now();
        if k > 0 && started + last > budget {
            break Ended::Budget;
        }
        let before = rounds_of(&cols.doc().results[layout.first..]);
        let mut measured = vec![false; n];
        let asked = |i: usize| cases[i].as_ref().is_none_or(|l| !l.is_empty());
        for i in interleaved_order(n, k) {
            if !(usable[i] && asked(i)) {
                continue;
            }
            match cols.measure(i, k, cases[i].as_deref())? {
                Step::Measured => measured[i] = true,
                Step::Nothing => {}
                Step::Unusable => usable[i] = false,
                Step::Interrupted => {
                    // A round half measured pairs with nothing: it is taken back.
                    let usable: Vec<bool> = (0..n).map(|c| usable[c] && asked(c)).collect();
                    cols.change(&mut |doc| even_rounds(&mut doc.results[layout.first..], &before, layout, &usable, &cases))?;
                    break 'rounds Ended::Stopped;
                }
            }
        }
        if !measured.contains(&true) {
            break Ended::Stopped;
        }
        cols.change(&mut |doc| even_rounds(&mut doc.results[layout.first..], &before, layout, &measured, &cases))?;
        k += 1;
        last = now().saturating_sub(started);
        open = judge(cols.doc(), layout, &usable, auto);
        let mut labels: Vec<&str> = open.iter().map(|o| o.case.as_str()).collect();
        labels.sort();
        labels.dedup();
        cols.note(&format!(
            "round {k} ({:.0} s): {} cells unsettled in {} cases; {:.1} of {:.1} min",
            last.as_secs_f64(),
            open.len(),
            labels.len(),
            now().as_secs_f64() / 60.0,
            auto.budget_min
        ));
        if open.is_empty() {
            break Ended::Settled;
        }
        cases = asked_next(&open, n);
    };
    let unsettled = open.into_iter().map(|o| o.unsettled).collect();
    let against = Some(layout.names[layout.reference].clone());
    Ok(Outcome { asked: auto.clone(), environment: None, against, rounds: k, elapsed_s: now().as_secs_f64(), ended, unsettled })
}

/// Rounds each result has (of its first metric).
fn rounds_of(results: &[CaseResult]) -> Vec<usize> {
    results.iter().map(|r| r.metrics.first().map_or(0, |m| m.samples.len())).collect()
}

/// Whether two results are one cell in two columns: benchmark, parameters
/// and condition.
fn twins(a: &CaseResult, b: &CaseResult) -> bool {
    fn cond(r: &CaseResult) -> Option<(&String, &String, &Option<String>)> {
        r.condition.as_ref().map(|c| (&c.load, &c.isolation, &c.preempt))
    }
    a.benchmark == b.benchmark && a.params == b.params && cond(a) == cond(b)
}

/// After a round: a cell that grew in one column that `measured` it (was
/// asked its case: `cases`, None all) and not in another that did (it
/// failed there) loses the round where it grew. `before`: each result's
/// rounds before the round (`results` may have grown since: new cells of
/// the first round have nothing to even).
pub fn even_rounds(results: &mut [CaseResult], before: &[usize], layout: &Layout, measured: &[bool], cases: &[Option<Vec<String>>]) {
    let now = rounds_of(results);
    let ok = |r: &CaseResult| {
        r.status == CaseStatus::Ok
            && layout.column(r).is_some_and(|c| measured[c] && cases[c].as_ref().is_none_or(|l| l.contains(&case_label(r))))
    };
    let n = before.len().min(results.len());
    let cut: Vec<usize> = (0..n)
        .filter(|&i| ok(&results[i]) && now[i] > before[i])
        .filter(|&i| (0..n).any(|j| ok(&results[j]) && twins(&results[i], &results[j]) && now[j] <= before[j]))
        .collect();
    for i in cut {
        results[i].metrics.iter_mut().for_each(|m| m.keep_rounds(before[i]));
    }
}

/// Every cell of the columns judged: against the reference column's twin
/// by the sequential rule where there is one in the same unit, else on its
/// own interval. Returns the cells without a verdict, in result order.
pub fn judge(doc: &RunDoc, layout: &Layout, usable: &[bool], auto: &Auto) -> Vec<Open> {
    let mut now = doc.clone();
    now.results.drain(..layout.first);
    crate::run::rounds::estimate_all(&mut now, layout.seed);
    let repeats = |id: &str| crate::run::registry::find_benchmark(id).is_some_and(|b| b.repeats_in_rounds());
    let cells: Vec<(usize, &CaseResult)> = now
        .results
        .iter()
        .filter(|r| r.status == CaseStatus::Ok && repeats(&r.benchmark))
        .filter_map(|r| Some((layout.column(r).filter(|&c| usable[c])?, r)))
        .collect();
    let same_unit = |a: &CaseResult, b: &CaseResult| a.metrics.first().zip(b.metrics.first()).is_some_and(|(x, y)| x.unit == y.unit);
    let reference = |c: usize| c == layout.reference;
    // A cell and its twin across the reference line (either way round).
    let twin_of = |r: &CaseResult, rc: usize| {
        cells.iter().find(|(c, t)| reference(*c) != reference(rc) && twins(r, t) && same_unit(r, t)).map(|x| x.1)
    };
    let mut open = vec![];
    for &(c, r) in &cells {
        let state = match twin_of(r, c) {
            // The reference's cell is judged in its comparisons.
            Some(_) if reference(c) => None,
            Some(base) => against(base, r, &now, auto).map(|u| (vec![layout.reference, c], u)),
            None => alone(r, &now, auto).map(|u| (vec![c], u)),
        };
        open.extend(state.map(|(columns, unsettled)| Open { case: case_label(r), columns, unsettled }));
    }
    open
}

/// A cell of another column against its reference twin: None when settled.
fn against(base: &CaseResult, r: &CaseResult, doc: &RunDoc, auto: &Auto) -> Option<Unsettled> {
    let policy = Thresholds { margin: auto.target_pct / 100.0, ..Default::default() };
    let (ma, mb) = (base.metrics.first()?, r.metric(&base.metrics.first()?.name)?);
    let Some(j) = judge_sequential(ma, mb, &policy) else {
        // Rounds that do not pair, or values that are not positive: on its own.
        return alone(r, doc, auto);
    };
    (j.verdict == Verdict::Unsure).then(|| Unsettled {
        benchmark: r.benchmark.clone(),
        cell: r.cell_label(doc),
        half_width_pct: j.interval.map_or(f64::INFINITY, |iv| 100.0 * iv.relative_half_width(j.ratio)),
        rounds_needed: j.rounds_needed,
    })
}

/// A cell settled on its own: counted exactly, or at least `MIN_ROUNDS`
/// rounds with half its interval within the target. None when settled.
fn alone(r: &CaseResult, doc: &RunDoc, auto: &Auto) -> Option<Unsettled> {
    if counted_exactly(r) {
        return None;
    }
    let e = r.metrics.first()?.estimate.as_ref()?;
    let half = 100.0 * e.interval.relative_half_width(e.median);
    // NaN (a median of 0) counts as unsettled too.
    (half.is_nan() || half > auto.target_pct || e.rounds < MIN_ROUNDS).then(|| Unsettled {
        benchmark: r.benchmark.clone(),
        cell: r.cell_label(doc),
        half_width_pct: half,
        rounds_needed: rounds_for(half, auto.target_pct, e.rounds).map(|n| n.max(MIN_ROUNDS)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::uncertainty::random::SplitMix64;
    use std::cell::Cell;

    /// Two fake columns, native and container, of the fixture's measured
    /// native cells: a round adds three batches around each cell's centre
    /// (container's ipc.pipe cells `dearer` times native's, 1% of noise),
    /// only of the cases listed; a round takes 5 s of the fake clock.
    struct Fake {
        doc: RunDoc,
        cells: Vec<CaseResult>,
        dearer: f64,
        rng: SplitMix64,
        clock: std::rc::Rc<Cell<Duration>>,
        /// (column, round, cases asked: None all)
        asked: Vec<(usize, usize, Option<Vec<String>>)>,
        /// Counted exactly: every sample the same number of guest instructions.
        exact: bool,
        /// A column that cannot start.
        down: Option<usize>,
        /// (column, round, benchmark) that fails there.
        fails: Option<(usize, usize, &'static str)>,
    }

    const NAMES: [&str; 2] = ["native", "container"];

    fn fake(dearer: f64, exact: bool) -> Fake {
        let mut doc = crate::data::results::fixture();
        let cells: Vec<CaseResult> =
            doc.results.iter().filter(|r| r.environment.as_deref() == Some("native") && r.status == CaseStatus::Ok).cloned().collect();
        doc.results.clear();
        let clock = std::rc::Rc::new(Cell::new(Duration::ZERO));
        Fake { doc, cells, dearer, rng: SplitMix64::new(3), clock, asked: vec![], exact, down: None, fails: None }
    }

    impl Columns<()> for Fake {
        fn measure(&mut self, i: usize, k: usize, cases: Option<&[String]>) -> Result<Step, ()> {
            self.asked.push((i, k, cases.map(<[String]>::to_vec)));
            if self.down == Some(i) {
                return Ok(Step::Unusable);
            }
            self.clock.set(self.clock.get() + Duration::from_secs(5));
            for cell in self.cells.iter().filter(|c| cases.is_none_or(|l| l.contains(&case_label(c)))) {
                let mut r = CaseResult { environment: Some(NAMES[i].into()), ..cell.clone() };
                if self.fails.is_some_and(|(c, kk, b)| (c, kk, b) == (i, k, r.benchmark.as_str())) {
                    continue;
                }
                let factor = if i == 1 && r.benchmark == "ipc.pipe" { self.dearer } else { 1.0 };
                let m = &mut r.metrics[0];
                if self.exact {
                    m.unit = crate::data::results::UNIT_INSTRUCTIONS.into();
                    m.samples = vec![vec![1000.0 * factor; 3]];
                } else {
                    let rng = &mut self.rng;
                    let mut noise = || 1.0 + 0.01 * ((rng.next_u64() % 2001) as f64 / 1000.0 - 1.0);
                    m.samples = vec![(0..3).map(|_| 1000.0 * factor * noise()).collect()];
                }
                match self.doc.results.iter_mut().find(|e| e.same_cell(&r)) {
                    Some(e) => e.absorb(&r),
                    None => self.doc.results.push(r),
                }
            }
            Ok(Step::Measured)
        }
        fn doc(&self) -> &RunDoc {
            &self.doc
        }
        fn change(&mut self, f: &mut dyn FnMut(&mut RunDoc)) -> Result<(), ()> {
            f(&mut self.doc);
            Ok(())
        }
        fn note(&mut self, _line: &str) {}
    }

    fn layout() -> Layout {
        Layout {
            tags: NAMES.map(|n| Some(n.to_string())).to_vec(),
            names: NAMES.map(String::from).to_vec(),
            reference: 0,
            first: 0,
            seed: 1,
        }
    }

    fn auto(budget_min: f64) -> Auto {
        Auto { budget_min, target_pct: 5.0, until_verdict: None }
    }

    fn run(f: &mut Fake, budget_min: f64) -> Outcome {
        let clock = f.clock.clone();
        drive(&auto(budget_min), &layout(), f, &mut || clock.get()).unwrap()
    }

    /// Rounds of each cell in each column: (label, native's, container's).
    fn rounds(f: &Fake) -> Vec<(String, usize, usize)> {
        let of = |r: &CaseResult| r.metrics[0].samples.len();
        f.doc
            .results
            .iter()
            .filter(|r| r.environment.as_deref() == Some("native"))
            .map(|r| {
                let twin = f.doc.results.iter().find(|t| t.environment.as_deref() == Some("container") && twins(r, t)).unwrap();
                (case_label(r), of(r), of(twin))
            })
            .collect()
    }

    #[test]
    fn columns_alternate_settled_cells_drop_out_of_every_column_and_the_verdicts_are_paired() {
        let mut f = fake(1.2, false);
        let out = run(&mut f, 60.0);
        assert_eq!((out.ended, out.against.as_deref()), (Ended::Settled, Some("native")), "{out:?}");
        assert!(out.unsettled.is_empty());
        // Round k of both columns before round k+1 of either, forward then backward.
        for (k, pair) in f.asked.chunks(2).enumerate() {
            let order: Vec<usize> = pair.iter().map(|a| a.0).collect();
            assert_eq!(order, interleaved_order(2, k), "round {k}");
            assert!(pair.iter().all(|a| a.1 == k));
            assert_eq!(pair[0].2, pair[1].2, "round {k}: both columns are asked the same cases");
        }
        assert_eq!(f.asked.len(), 2 * out.rounds);
        assert_eq!(f.asked[0].2, None, "the first round measures everything");
        // Cases drop out and never come back; the fixed-time case is never asked again.
        let lists: Vec<Vec<String>> = f.asked.iter().skip(2).map(|a| a.2.clone().unwrap()).collect();
        for w in lists.windows(2) {
            assert!(w[1].iter().all(|c| w[0].contains(c)), "{w:?}");
        }
        assert!(lists.iter().flatten().all(|c| !c.starts_with("noise.fwq")));
        // Equal rounds per cell in each column; the dearer pipe cells slower, the others same.
        let policy = Thresholds::default();
        for (label, a, b) in rounds(&f) {
            assert_eq!(a, b, "{label}");
            if label.starts_with("noise.fwq") {
                continue;
            }
            let cell = |e: &str| f.doc.results.iter().find(|r| case_label(r) == label && r.environment.as_deref() == Some(e)).unwrap();
            let j = judge_sequential(&cell("native").metrics[0], &cell("container").metrics[0], &policy).unwrap();
            let want = if label.starts_with("ipc.pipe") { Verdict::Slower } else { Verdict::Same };
            assert_eq!(j.verdict, want, "{label}");
        }
    }

    #[test]
    fn the_budget_stops_before_a_round_that_would_not_fit_and_names_the_rounds_needed() {
        // Rounds of 10 s (two columns) in a 25 s budget: 2 rounds, the 3rd would end at 30 s.
        let mut f = fake(1.2, false);
        let out = run(&mut f, 25.0 / 60.0);
        assert_eq!((out.rounds, out.ended), (2, Ended::Budget));
        assert_eq!(out.unsettled.len(), 4, "every repeating container cell: {:?}", out.unsettled);
        assert!(out.unsettled.iter().all(|u| u.cell.contains("[container]") && u.rounds_needed.is_some_and(|n| n >= 8)));
        assert!(out.describe()[0].contains("paired verdicts of every column against native"), "{:?}", out.describe());
    }

    #[test]
    fn cells_counted_exactly_settle_in_one_round() {
        let mut f = fake(1.5, true);
        let out = run(&mut f, 60.0);
        assert_eq!((out.rounds, out.ended, f.asked.len()), (1, Ended::Settled, 2));
    }

    #[test]
    fn a_cell_failing_in_one_column_loses_that_round_in_every_column() {
        let mut f = fake(1.2, false);
        f.fails = Some((1, 2, "syscall.getpid"));
        let out = run(&mut f, 60.0);
        assert_eq!(out.ended, Ended::Settled);
        let r = rounds(&f);
        let getpid = r.iter().find(|c| c.0 == "syscall.getpid").unwrap();
        assert_eq!(getpid.1, getpid.2);
        let pipe = r.iter().find(|c| c.0.starts_with("ipc.pipe")).unwrap();
        assert_eq!(pipe.1, pipe.2);
        assert!(r.iter().all(|c| c.1 == c.2), "{r:?}");
    }

    #[test]
    fn a_column_that_cannot_run_is_asked_once_and_the_others_settle_on_their_own() {
        let mut f = fake(1.2, false);
        f.down = Some(1);
        let out = run(&mut f, 60.0);
        assert_eq!(f.asked.iter().filter(|a| a.0 == 1).count(), 1, "{:?}", f.asked);
        // Native's cells, with nothing to pair with, settle on their intervals after at least 5 rounds.
        assert_eq!((out.ended, out.rounds), (Ended::Settled, MIN_ROUNDS));
    }
}
