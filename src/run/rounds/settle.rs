//! The one loop that measures until cells settle: `run --rounds auto` (one
//! column: an environment), `run --env a,b --rounds auto` (a column per
//! environment) and `compare --interleave auto` (two columns: the
//! configurations A and B). Round k of every column before round k+1 of
//! any, the columns of a round in a seeded random order (`round_order`:
//! drawn, not alternated, so that in an A/A a round's columns are
//! exchangeable whatever the host's drift does, which the confidence
//! sequence's guarantee rests on); after each full round every cell judged
//! again by one rule, the confidence sequence of `analysis::sequential`,
//! valid however often it is looked at:
//! - a cell with a twin in the reference column (same benchmark and
//!   parameters, same unit; same condition unless the columns differ in
//!   it): its paired per-round ratios (`compare::judge_sequential`), settled
//!   with a verdict (faster, slower, same within `--target`);
//! - a cell with no twin: its own per-round values, settled when the
//!   sequence for their median lies within `--target` of it (`alone`);
//! - with `--until-verdict`, every cell against the baseline's, which was
//!   not measured in turn with it (independent rounds).
//!
//! Cells counted exactly settle on their first round. A case whose cells
//! all settled leaves the later rounds of every column; a cell that one
//! column measured in a round and another did not (it failed there) loses
//! that round in every column (`even_rounds`), so that round k pairs with
//! round k.
//!
//! One budget rule: the loop stops before a round that would not fit (the
//! last round's time, the most a round of fewer cells takes; more where
//! more cells are asked, at the last round's seconds a cell). From the
//! first look at which a verdict is possible, each open case's estimate of
//! the rounds it needs (the sequence's projection at the spread seen) ranks
//! them: the rounds go first to the cases that can settle in the time left
//! (`next_cases`), and the others wait, named with their estimate; they are
//! measured again only when nothing reachable is left.
//!
//! This module decides and keeps the rounds even; how a column measures a
//! round is the caller's ([`Columns`]), so tests drive it with fake ones.

use crate::analysis::sequential;
use crate::analysis::uncertainty::random::SplitMix64;
use crate::analysis::uncertainty::verdict::{Thresholds, Verdict};
use crate::data::compare::judge_sequential;
use crate::data::results::adaptive::{Auto, Ended, MAX_ROUNDS, Outcome, Unsettled};
use crate::data::results::{CaseResult, CaseStatus, Metric, RunDoc};
use crate::run::rounds::case_label;
use std::collections::BTreeMap;
use std::time::Duration;

/// Rounds in a row in which a column failed before the loop gives up.
pub const FAILED_ROUNDS_IN_A_ROW: usize = 3;

/// The order of `n` columns in round k: a seeded random permutation.
pub fn round_order(n: usize, seed: u64, k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = SplitMix64::new(seed ^ (k as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}

/// The order of `n` columns in round k of a fixed number of rounds:
/// forward in even rounds, backward in odd ones.
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
    /// The round failed (no document): the round is lost in every column.
    Failed(String),
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
pub struct Layout<'a> {
    /// Each column's tag (`CaseResult::environment`) and name.
    pub tags: Vec<Option<String>>,
    pub names: Vec<String>,
    /// The column the others are judged against.
    pub reference: usize,
    /// Where the columns' results begin in the run.
    pub first: usize,
    /// The seed of the columns' order in each round.
    pub seed: u64,
    /// The columns differ in their conditions (compare's sides: B under
    /// `--load build`): a cell's twin is the same benchmark and parameters
    /// whatever its condition (each column measures one).
    pub across_conditions: bool,
    /// `--until-verdict`: every cell judged against this run's instead.
    pub baseline: Option<&'a RunDoc>,
}

impl Layout<'_> {
    fn column(&self, r: &CaseResult) -> Option<usize> {
        self.tags.iter().position(|t| t.as_deref() == r.environment.as_deref())
    }

    /// Whether two results are one cell in two columns: benchmark,
    /// parameters and (unless the columns differ in it) condition.
    fn twins(&self, a: &CaseResult, b: &CaseResult) -> bool {
        fn cond(r: &CaseResult) -> Option<(&String, &String, &Option<String>)> {
            r.condition.as_ref().map(|c| (&c.load, &c.isolation, &c.preempt))
        }
        a.benchmark == b.benchmark && a.params == b.params && (self.across_conditions || cond(a) == cond(b))
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

/// What the loop carries from round to round.
struct State {
    usable: Vec<bool>,
    /// The cases each column is asked next (None: all).
    cases: Vec<Option<Vec<String>>>,
    open: Vec<Open>,
    /// Cases left waiting (they cannot settle in the time left), with the
    /// round they were left at.
    waiting: BTreeMap<String, usize>,
    failed_in_a_row: usize,
    /// Columns in which none of the cases asked runs.
    nothing: Vec<bool>,
}

/// Runs rounds across the columns of `layout` until every cell settles or
/// the budget ends; `now` is the time since the rounds began.
pub fn drive<E>(auto: &Auto, layout: &Layout, cols: &mut dyn Columns<E>, now: &mut dyn FnMut() -> Duration) -> Result<Outcome, E> {
    let budget = Duration::from_secs_f64(auto.budget_min * 60.0);
    let n = layout.tags.len();
    let mut s = State {
        usable: vec![true; n],
        cases: vec![None; n],
        open: vec![],
        waiting: BTreeMap::new(),
        failed_in_a_row: 0,
        nothing: vec![false; n],
    };
    let (mut k, mut next, mut round_s) = (0, Duration::ZERO, vec![]);
    let ended = loop {
        if k >= MAX_ROUNDS {
            break Ended::MaxRounds;
        }
        let started = now();
        // The next round takes what its cells took a column in the last one.
        if k > 0 && started + next > budget {
            break Ended::Budget;
        }
        let before = rounds_of(&cols.doc().results[layout.first..]);
        let Some(grew) = one_round(layout, cols, &mut s, k, &before)? else { break Ended::Stopped };
        k += 1;
        let last = now().saturating_sub(started);
        round_s.push(last.as_secs_f64());
        s.open = judge(cols.doc(), layout, &s.usable, auto);
        let left_s = (budget.saturating_sub(now())).as_secs_f64();
        let per_case_s = last.as_secs_f64() / grew.max(1) as f64;
        let (cases, waiting) = next_cases(&s.open, n, k, per_case_s, left_s);
        say_waiting(cols, &s.open, &waiting, &s.waiting, k);
        s.waiting = waiting
            .into_iter()
            .map(|c| {
                let since = s.waiting.get(&c).copied().unwrap_or(k);
                (c, since)
            })
            .collect();
        note_round(cols, &s, k, last, now(), auto);
        // A column with nothing measured yet (its first round failed) is asked everything again.
        let results = &cols.doc().results[layout.first..];
        let unmeasured: Vec<usize> =
            (0..n).filter(|&c| s.usable[c] && !s.nothing[c] && !results.iter().any(|r| layout.column(r) == Some(c))).collect();
        if s.open.is_empty() && unmeasured.is_empty() {
            break Ended::Settled;
        }
        s.cases = cases;
        unmeasured.into_iter().for_each(|c| s.cases[c] = None);
        let asked: Option<usize> = s.cases.iter().map(|l| l.as_ref().map(Vec::len)).sum();
        next = asked.map_or(last, |cells| last.max(Duration::from_secs_f64(per_case_s * cells as f64)));
    };
    let waiting = std::mem::take(&mut s.waiting);
    let unsettled = s.open.into_iter().map(|o| Unsettled { waiting_since: waiting.get(&o.case).copied(), ..o.unsettled }).collect();
    let against = (n > 1).then(|| layout.names[layout.reference].clone());
    Ok(Outcome { asked: auto.clone(), environment: None, against, rounds: k, round_s, elapsed_s: now().as_secs_f64(), ended, unsettled })
}

/// Round k of every usable column asked something, in the round's order;
/// the rounds kept even. Returns how many cells grew, None when the loop
/// cannot go on (interrupted, nothing measured, failing round after round).
fn one_round<E>(layout: &Layout, cols: &mut dyn Columns<E>, s: &mut State, k: usize, before: &[usize]) -> Result<Option<usize>, E> {
    let n = s.usable.len();
    let asked = |c: usize, s: &State| s.usable[c] && s.cases[c].as_ref().is_none_or(|l| !l.is_empty());
    let mut measured = vec![false; n];
    let mut failed = None;
    for i in round_order(n, layout.seed, k) {
        if !asked(i, s) {
            continue;
        }
        match cols.measure(i, k, s.cases[i].as_deref())? {
            Step::Measured => measured[i] = true,
            Step::Nothing => s.nothing[i] = true,
            Step::Unusable => s.usable[i] = false,
            // Asked and measured nothing: what the others measured in this round pairs with nothing.
            Step::Failed(why) => (measured[i], failed) = (true, Some(why)),
            Step::Interrupted => {
                // A round half measured pairs with nothing: it is taken back.
                let all: Vec<bool> = (0..n).map(|c| asked(c, s)).collect();
                even_rounds(cols, layout, before, &all, &s.cases)?;
                return Ok(None);
            }
        }
    }
    if !measured.contains(&true) {
        return Ok(None);
    }
    even_rounds(cols, layout, before, &measured, &s.cases)?;
    if let Some(why) = failed {
        s.failed_in_a_row += 1;
        cols.note(&format!("round {} left out in every column: {why}", k + 1));
        if s.failed_in_a_row >= FAILED_ROUNDS_IN_A_ROW {
            cols.note(&format!("{FAILED_ROUNDS_IN_A_ROW} rounds in a row failed: stopping"));
            return Ok(None);
        }
    } else {
        s.failed_in_a_row = 0;
    }
    let now = rounds_of(&cols.doc().results[layout.first..]);
    Ok(Some(now.iter().zip(before.iter().chain(std::iter::repeat(&0))).filter(|(a, b)| a > b).count()))
}

/// The progress line of round k.
fn note_round<E>(cols: &mut dyn Columns<E>, s: &State, k: usize, last: Duration, now: Duration, auto: &Auto) {
    let mut labels: Vec<&str> = s.open.iter().map(|o| o.case.as_str()).collect();
    labels.sort();
    labels.dedup();
    cols.note(&format!(
        "round {k} ({:.1} s): {} cells unsettled in {} cases ({} waiting); {:.1} of {:.1} min",
        last.as_secs_f64(),
        s.open.len(),
        labels.len(),
        s.waiting.len(),
        now.as_secs_f64() / 60.0,
        auto.budget_min
    ));
}

/// Says which cases start waiting after round k (they cannot settle in the
/// time left at the spread seen), with the rounds each would need.
fn say_waiting<E>(cols: &mut dyn Columns<E>, open: &[Open], now: &[String], before: &BTreeMap<String, usize>, k: usize) {
    let new: Vec<&String> = now.iter().filter(|c| !before.contains_key(*c)).collect();
    if new.is_empty() {
        return;
    }
    let need = |c: &str| open.iter().filter(|o| o.case == c).filter_map(|o| o.unsettled.rounds_needed).max();
    let named: Vec<String> = new.iter().take(6).map(|c| format!("{c} (~{})", need(c).map_or("?".into(), |n| n.to_string()))).collect();
    let more = if new.len() > 6 { format!(" and {} more", new.len() - 6) } else { String::new() };
    cols.note(&format!(
        "after {k} rounds: {} cases cannot settle in the time left at the spread seen, measured only if the others settle: {}{more}",
        new.len(),
        named.join(", ")
    ));
}

/// The first look at which a verdict is possible at all: before it, no
/// case is ranked (every open one is measured).
fn first_look(alpha: f64) -> usize {
    (1..=sequential::PAIRS_CAP).find(|&m| sequential::threshold(m, alpha).is_some()).unwrap_or(1)
}

/// The cases each column is asked next, and the cases left waiting. After
/// `k` rounds (from the first look on), the open cases ranked by the rounds
/// they would need: in that order, each costs its rounds still to go x
/// `per_case_s` a column; those that fit `left_s` together are asked, the
/// rest wait. A case without an estimate is asked. When none fits, every
/// open case is asked (a projection is only a projection, and there is
/// nothing better to spend the time on).
pub fn next_cases(open: &[Open], n: usize, k: usize, per_case_s: f64, left_s: f64) -> (Vec<Option<Vec<String>>>, Vec<String>) {
    let mut cases: BTreeMap<&str, (Option<usize>, Vec<usize>)> = BTreeMap::new();
    for o in open {
        let e = cases.entry(&o.case).or_insert((Some(0), vec![]));
        e.0 = e.0.zip(o.unsettled.rounds_needed).map(|(a, b)| a.max(b));
        e.1.extend(&o.columns);
    }
    let mut ranked: Vec<(&str, Option<usize>, Vec<usize>)> = cases.into_iter().map(|(c, (need, cols))| (c, need, cols)).collect();
    ranked.sort_by_key(|(_, need, _)| need.unwrap_or(0));
    let mut waiting = vec![];
    if k >= first_look(Thresholds::default().alpha) {
        let mut spent = 0.0;
        for (case, need, cols) in &ranked {
            let mut cols = cols.clone();
            cols.sort();
            cols.dedup();
            spent += need.map_or(1, |m| m.saturating_sub(k).max(1)) as f64 * per_case_s * cols.len() as f64;
            if spent > left_s && need.is_some() {
                waiting.push(case.to_string());
            }
        }
        if waiting.len() == ranked.len() {
            waiting.clear();
        }
    }
    let asked = (0..n)
        .map(|c| {
            let mut l: Vec<String> = ranked
                .iter()
                .filter(|(case, _, cols)| cols.contains(&c) && !waiting.iter().any(|w| w == case))
                .map(|x| x.0.to_string())
                .collect();
            l.sort();
            l.dedup();
            Some(l)
        })
        .collect();
    (asked, waiting)
}

/// Rounds each result has (of its first metric).
fn rounds_of(results: &[CaseResult]) -> Vec<usize> {
    results.iter().map(|r| r.metrics.first().map_or(0, |m| m.samples.len())).collect()
}

/// After a round: a cell that grew in one column that `measured` it (was
/// asked its case: `cases`, None all) and not in another that did (it
/// failed there) loses the round where it grew; where a column's round
/// measured nothing at all (it failed), every cell loses the round.
/// `before`: each result's rounds before the round (cells new in it had 0).
/// Returns the results to cut, each with the rounds it keeps.
pub fn uneven(
    results: &[CaseResult],
    before: &[usize],
    layout: &Layout,
    measured: &[bool],
    cases: &[Option<Vec<String>>],
) -> Vec<(usize, usize)> {
    let now = rounds_of(results);
    let was = |i: usize| before.get(i).copied().unwrap_or(0);
    let grew = |i: usize| now[i] > was(i);
    let ok = |r: &CaseResult| {
        r.status == CaseStatus::Ok
            && layout.column(r).is_some_and(|c| measured[c] && cases[c].as_ref().is_none_or(|l| l.contains(&case_label(r))))
    };
    let n = results.len();
    let failed_whole =
        measured.len() > 1 && (0..measured.len()).any(|c| measured[c] && !(0..n).any(|i| layout.column(&results[i]) == Some(c) && grew(i)));
    (0..n)
        .filter(|&i| grew(i))
        .filter(|&i| {
            failed_whole || (ok(&results[i]) && (0..n).any(|j| ok(&results[j]) && layout.twins(&results[i], &results[j]) && !grew(j)))
        })
        .map(|i| (i, was(i)))
        .collect()
}

/// Evens the columns' rounds after round k (`uneven`), writing the run
/// only when a cell loses its round; a cell whose only round it was is
/// taken out of the run.
fn even_rounds<E>(
    cols: &mut dyn Columns<E>,
    layout: &Layout,
    before: &[usize],
    measured: &[bool],
    cases: &[Option<Vec<String>>],
) -> Result<(), E> {
    let cut = uneven(&cols.doc().results[layout.first..], before, layout, measured, cases);
    if cut.is_empty() {
        return Ok(());
    }
    cols.change(&mut |doc| {
        // Back to front: a cell new in this round (it keeps no round) leaves the run.
        for &(i, keep) in cut.iter().rev() {
            match keep {
                0 => drop(doc.results.remove(layout.first + i)),
                _ => doc.results[layout.first + i].metrics.iter_mut().for_each(|m| m.keep_rounds(keep)),
            }
        }
    })
}

/// Every cell of the columns judged (see the module's text). Returns the
/// cells without a verdict, in result order.
pub fn judge(doc: &RunDoc, layout: &Layout, usable: &[bool], auto: &Auto) -> Vec<Open> {
    let repeats = |id: &str| crate::run::registry::find_benchmark(id).is_some_and(|b| b.repeats_in_rounds());
    let cells: Vec<(usize, &CaseResult)> = doc.results[layout.first..]
        .iter()
        .filter(|r| r.status == CaseStatus::Ok && repeats(&r.benchmark))
        .filter_map(|r| Some((layout.column(r).filter(|&c| usable[c])?, r)))
        .collect();
    let policy = Thresholds { margin: auto.target_pct / 100.0, ..Default::default() };
    let same_unit = |a: &CaseResult, b: &CaseResult| a.metrics.first().zip(b.metrics.first()).is_some_and(|(x, y)| x.unit == y.unit);
    let reference = |c: usize| c == layout.reference;
    // A cell and its twin across the reference line (either way round).
    let twin_of = |r: &CaseResult, rc: usize| {
        cells.iter().find(|(c, t)| reference(*c) != reference(rc) && layout.twins(r, t) && same_unit(r, t)).map(|x| x.1)
    };
    let mut open = vec![];
    for &(c, r) in &cells {
        let state = match (layout.baseline, twin_of(r, c)) {
            (Some(base), _) => against_baseline(base, r, &policy).map(|j| (vec![c], j)),
            // The reference's cell is judged in its comparisons.
            (None, Some(_)) if reference(c) => None,
            (None, Some(base)) => paired(base, r, &policy).map(|j| (vec![layout.reference, c], j)),
            (None, None) => alone(r, &policy).map(|j| (vec![c], j)),
        };
        open.extend(state.map(|(columns, (half_width_pct, rounds_needed))| Open {
            case: case_label(r),
            columns,
            unsettled: Unsettled {
                benchmark: r.benchmark.clone(),
                cell: r.cell_label(doc),
                half_width_pct,
                rounds_needed,
                waiting_since: None,
            },
        }));
    }
    open
}

/// How far an open cell is: half its interval (percent of its centre) and
/// the rounds in all that would likely settle it.
type Far = (f64, Option<usize>);

fn far(interval: Option<(f64, f64)>, centre: f64, needed: Option<usize>) -> Far {
    (interval.map_or(f64::INFINITY, |(lo, hi)| 100.0 * (hi - lo) / 2.0 / centre), needed)
}

/// A cell of another column against its reference twin, paired by round:
/// None when it has a verdict.
fn paired(base: &CaseResult, r: &CaseResult, policy: &Thresholds) -> Option<Far> {
    let (ma, mb) = (base.metrics.first()?, r.metric(&base.metrics.first()?.name)?);
    let Some(j) = judge_sequential(ma, mb, policy) else {
        // Rounds that do not pair, or values that are not positive: on its own.
        return alone(r, policy);
    };
    (j.verdict == Verdict::Unsure).then(|| far(j.interval.map(|iv| (iv.lo, iv.hi)), j.ratio, j.rounds_needed))
}

/// Each round's median of a metric's batches.
fn round_medians(m: &Metric) -> Vec<f64> {
    m.samples
        .iter()
        .map(|round| {
            let mut s = round.clone();
            s.sort_by(f64::total_cmp);
            crate::analysis::stats::quantile_sorted(&s, 0.5)
        })
        .collect()
}

/// A cell settled on its own: counted exactly, or the confidence sequence
/// for the median of its round medians within the margin of that median.
/// None when settled.
fn alone(r: &CaseResult, policy: &Thresholds) -> Option<Far> {
    let m = r.metrics.first()?;
    if m.is_exact() && sequential::one_number(&m.samples).is_some() {
        return None;
    }
    let logs: Vec<f64> = round_medians(m).into_iter().map(f64::ln).collect();
    if logs.iter().any(|x| !x.is_finite()) {
        // A median of 0 or less: no ratio to settle on.
        return Some((f64::NAN, None));
    }
    let mut sorted = logs.clone();
    sorted.sort_by(f64::total_cmp);
    let centre = crate::analysis::stats::quantile_sorted(&sorted, 0.5);
    let centred: Vec<f64> = logs.iter().map(|x| x - centre).collect();
    let j = sequential::judge(&centred, policy.alpha, policy.margin);
    (j.verdict != Verdict::Same).then(|| far(j.interval, 1.0, j.pairs_needed))
}

/// A cell against the baseline's twin (rounds not paired): None when it has
/// a verdict, or when the baseline has no twin (nothing to settle against).
fn against_baseline(base: &RunDoc, r: &CaseResult, policy: &Thresholds) -> Option<Far> {
    let twin = base.results.iter().find(|b| b.status == CaseStatus::Ok && b.benchmark == r.benchmark && b.params == r.params)?;
    let (ma, mb) = (twin.metrics.first()?, r.metric(&twin.metrics.first()?.name)?);
    let seed = crate::data::compare::seed_of(&case_label(r));
    let j = crate::data::compare::judge(ma, mb, policy, seed);
    (j.verdict == Verdict::Unsure).then(|| far(j.interval.map(|iv| (iv.lo, iv.hi)), j.ratio, j.rounds_needed))
}

#[cfg(test)]
mod tests;
