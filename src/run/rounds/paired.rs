//! Pairs of rounds until every cell knows (`compare --interleave auto`):
//! A and B measured one round each per pair, which one first drawn at
//! random (`sequential::a_first`), every cell judged again after each pair
//! by the sequential rule (`compare::judge_sequential`, valid however often
//! it is looked at); a cell with a verdict (faster, slower, same) drops out
//! and the next rounds measure only the unsettled ones. The loop ends when
//! every cell has a verdict, when the next pair would not fit the budget
//! (the last pair's time, the most a pair of fewer cells can take), or when
//! interrupted.
//!
//! How a round is measured is the caller's (`compare` starts an `oscycles
//! run --rounds 1` per round); this is the loop and its bookkeeping.

use crate::analysis::uncertainty::{verdict::Thresholds, verdict::Verdict};
use crate::data::compare::{Judged, judge_sequential};
use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use std::time::Duration;

/// How the loop runs.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub budget: Duration,
    pub policy: Thresholds,
    /// The seed of the case orders (round k: `round_seed(seed, k)`, the
    /// same on both sides) and of the pair orders.
    pub seed: u64,
}

/// A round to measure: side (0 = A, 1 = B), round number, its seed, and
/// the cases (labels as `--cases` takes them; None: all).
pub struct RoundAsk<'a> {
    pub side: usize,
    pub k: usize,
    pub seed: u64,
    pub cases: Option<&'a [String]>,
}

/// What measuring a round gave.
pub enum Round {
    Measured(Box<RunDoc>),
    /// It ended without a document or with nothing measured (a CPU taken
    /// away for a moment): its pair is left out.
    Failed(String),
    Interrupted,
}

/// Pairs in a row that may fail before the loop gives up.
pub const FAILED_PAIRS_IN_A_ROW: usize = 3;

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Every cell has a verdict (or cannot be paired).
    Settled,
    /// The next pair would not have fitted the budget.
    Budget,
    Interrupted,
    /// `FAILED_PAIRS_IN_A_ROW` pairs in a row failed.
    Failing,
}

/// What the loop found: the pooled runs of each side and every cell's
/// judgement at the end.
pub struct Outcome {
    pub docs: [RunDoc; 2],
    pub pairs: usize,
    pub end: End,
    /// Every cell (its `--cases` label) with its judgement at the end.
    pub cells: Vec<(String, Judged)>,
}

/// The label `--cases` takes for a result: "benchmark params".
pub fn case_label(r: &CaseResult) -> String {
    crate::run::plan::case_label(&r.benchmark, &r.params)
}

/// Every cell measured on both sides, judged by the sequential rule:
/// cells whose rounds do not pair (a round failed on one side) are judged
/// `None`.
pub fn judge_all(a: &RunDoc, b: &RunDoc, policy: &Thresholds) -> Vec<(String, Option<Judged>)> {
    a.results
        .iter()
        .filter(|r| r.status == CaseStatus::Ok)
        .filter_map(|ra| {
            let rb = b.results.iter().find(|rb| rb.status == CaseStatus::Ok && rb.same_cell(ra))?;
            let ma = ra.metrics.first()?;
            let mb = rb.metric(&ma.name)?;
            Some((case_label(ra), judge_sequential(ma, mb, policy)))
        })
        .collect()
}

/// The tally of verdicts of `cells`: faster, slower, same, unsure.
pub fn tally(cells: &[(String, Judged)]) -> [usize; 4] {
    let mut t = [0; 4];
    for (_, j) in cells {
        t[match j.verdict {
            Verdict::Faster => 0,
            Verdict::Slower => 1,
            Verdict::Same => 2,
            Verdict::Unsure => 3,
        }] += 1;
    }
    t
}

/// Keeps in each of a pair's two rounds only the cells measured (ok) in
/// both: a cell that failed on one side in this pair has no pair in it.
fn only_paired(da: &mut RunDoc, db: &mut RunDoc) {
    let ok = |r: &CaseResult| r.status == CaseStatus::Ok;
    let in_b: Vec<bool> = da.results.iter().map(|ra| ok(ra) && db.results.iter().any(|rb| ok(rb) && rb.same_cell(ra))).collect();
    let mut keep = in_b.into_iter();
    da.results.retain(|_| keep.next().unwrap_or(false));
    db.results.retain(|rb| da.results.iter().any(|ra| ra.same_cell(rb)));
}

/// Runs the loop. `measure` measures one round; `elapsed` is the time
/// since the start; `note` takes the progress lines.
pub fn drive<E>(
    s: &Settings,
    measure: &mut dyn FnMut(RoundAsk) -> Result<Round, E>,
    elapsed: &mut dyn FnMut() -> Duration,
    note: &mut dyn FnMut(&str),
) -> Result<Option<Outcome>, E> {
    let mut pooled: [Option<RunDoc>; 2] = [None, None];
    let mut only: Option<Vec<String>> = None;
    let (mut last_pair, mut pairs, mut end, mut failed) = (Duration::ZERO, 0, End::Settled, 0);
    let mut cells: Vec<(String, Judged)> = vec![];
    for k in 0.. {
        let started = elapsed();
        if k > 0 && started + last_pair > s.budget {
            end = End::Budget;
            break;
        }
        let order = if crate::analysis::sequential::a_first(s.seed, k) { [0, 1] } else { [1, 0] };
        let mut got: [Option<RunDoc>; 2] = [None, None];
        let mut why = None;
        for side in order {
            let seed = super::round_seed(s.seed, k);
            match measure(RoundAsk { side, k, seed, cases: only.as_deref() })? {
                Round::Measured(doc) => got[side] = Some(*doc),
                Round::Failed(w) => why = Some(w),
                Round::Interrupted => end = End::Interrupted,
            }
            if why.is_some() || end == End::Interrupted {
                break;
            }
        }
        if end == End::Interrupted {
            // A pair half measured pairs with nothing: it is left out.
            break;
        }
        let [Some(mut da), Some(mut db)] = got else {
            failed += 1;
            note(&format!("pair {} left out: {}", k + 1, why.unwrap_or_default()));
            if failed >= FAILED_PAIRS_IN_A_ROW {
                end = End::Failing;
                break;
            }
            continue;
        };
        failed = 0;
        only_paired(&mut da, &mut db);
        for (i, d) in [da, db].into_iter().enumerate() {
            pooled[i] = super::pool(pooled[i].take().into_iter().chain([d]).collect(), s.seed);
        }
        pairs += 1;
        last_pair = elapsed().saturating_sub(started);
        let (Some(a), Some(b)) = (&pooled[0], &pooled[1]) else { break };
        let judged = judge_all(a, b, &s.policy);
        let open: Vec<String> =
            judged.iter().filter(|(_, j)| j.is_some_and(|j| j.verdict == Verdict::Unsure)).map(|(l, _)| l.clone()).collect();
        cells = judged.into_iter().filter_map(|(l, j)| Some((l, j?))).collect();
        let [f, sl, same, _] = tally(&cells);
        note(&format!(
            "pair {pairs} ({:.0} s): {f} faster, {sl} slower, {same} same, {} unsure; {:.1} of {:.1} min",
            last_pair.as_secs_f64(),
            open.len(),
            elapsed().as_secs_f64() / 60.0,
            s.budget.as_secs_f64() / 60.0
        ));
        if open.is_empty() {
            break;
        }
        only = Some(open);
    }
    let [Some(a), Some(b)] = pooled else { return Ok(None) };
    Ok(Some(Outcome { docs: [a, b], pairs, end, cells }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::uncertainty::random::SplitMix64;

    /// A fake round: the fixture's native cells that `cases` names, each
    /// with one round of three batches around its centre: B's ipc.pipe
    /// cells 20% dearer, everything else alike, with 1% of noise.
    fn fake(ask: &RoundAsk, rng: &mut SplitMix64) -> RunDoc {
        let mut doc = crate::data::results::fixture();
        doc.results.retain(|r| r.environment.as_deref() == Some("native") && r.status == CaseStatus::Ok);
        doc.results.retain(|r| ask.cases.is_none_or(|c| c.contains(&case_label(r))));
        for r in &mut doc.results {
            r.environment = None;
            let dearer = if ask.side == 1 && r.benchmark == "ipc.pipe" { 1.2 } else { 1.0 };
            let m = &mut r.metrics[0];
            let noise = |rng: &mut SplitMix64| 1.0 + 0.01 * ((rng.next_u64() % 2001) as f64 / 1000.0 - 1.0);
            m.samples = vec![(0..3).map(|_| 1000.0 * dearer * noise(rng)).collect()];
        }
        doc
    }

    fn settings(budget_s: u64) -> Settings {
        Settings { budget: Duration::from_secs(budget_s), policy: Thresholds::default(), seed: 11 }
    }

    #[test]
    fn cells_settle_drop_out_and_the_slower_ones_are_called_slower() {
        let mut rng = SplitMix64::new(3);
        let mut asked: Vec<Option<usize>> = vec![];
        let now = std::cell::Cell::new(Duration::ZERO);
        let out = drive::<()>(
            &settings(3600),
            &mut |ask| {
                asked.push(ask.cases.map(<[String]>::len));
                now.set(now.get() + Duration::from_secs(5));
                Ok(Round::Measured(Box::new(fake(&ask, &mut rng))))
            },
            &mut || now.get(),
            &mut |_| {},
        )
        .unwrap()
        .unwrap();
        assert_eq!(out.end, End::Settled);
        for (label, j) in &out.cells {
            let want = if label.starts_with("ipc.pipe") { Verdict::Slower } else { Verdict::Same };
            assert_eq!(j.verdict, want, "{label}");
            assert_eq!(j.rounds.0, j.rounds.1);
        }
        assert_eq!(asked[0], None, "the first pair measures everything");
        assert!(asked.iter().all(|a| a.is_none_or(|n| n <= out.cells.len())));
        assert_eq!(out.pairs * 2, asked.len());
    }

    #[test]
    fn the_budget_stops_before_a_pair_that_would_not_fit_and_interruption_ends_it() {
        let mut rng = SplitMix64::new(4);
        let now = std::cell::Cell::new(Duration::ZERO);
        // Pairs of 60 s in a 200 s budget: 3 pairs (the 4th would end at 240 s).
        let out = drive::<()>(
            &settings(200),
            &mut |ask| {
                now.set(now.get() + Duration::from_secs(30));
                Ok(Round::Measured(Box::new(fake(&ask, &mut rng))))
            },
            &mut || now.get(),
            &mut |_| {},
        )
        .unwrap()
        .unwrap();
        assert_eq!((out.pairs, out.end), (3, End::Budget));
        assert!(out.cells.iter().all(|(_, j)| j.verdict == Verdict::Unsure && j.rounds_needed.is_some()));
        // Interrupted in the second pair's second round: one pair kept.
        let mut calls = 0;
        let out = drive::<()>(
            &settings(3600),
            &mut |ask| {
                calls += 1;
                Ok(if calls < 4 { Round::Measured(Box::new(fake(&ask, &mut rng))) } else { Round::Interrupted })
            },
            &mut || Duration::ZERO,
            &mut |_| {},
        )
        .unwrap()
        .unwrap();
        assert_eq!((out.pairs, out.end), (1, End::Interrupted));
        // A round that fails loses its pair; three in a row end the loop.
        let mut calls = 0;
        let out = drive::<()>(
            &settings(3600),
            &mut |ask| {
                calls += 1;
                Ok(if calls <= 2 || calls == 4 { Round::Measured(Box::new(fake(&ask, &mut rng))) } else { Round::Failed("no CPU".into()) })
            },
            &mut || Duration::ZERO,
            &mut |_| {},
        )
        .unwrap()
        .unwrap();
        assert_eq!((out.pairs, out.end), (1, End::Failing));
        assert!(out.cells.iter().all(|(_, j)| j.rounds == (1, 1)), "the failed pairs add no rounds");
    }

    #[test]
    fn a_cell_failing_on_one_side_of_a_pair_loses_that_pair_only() {
        let mut rng = SplitMix64::new(5);
        let mut calls = 0;
        let out = drive::<()>(
            &settings(3600),
            &mut |ask| {
                calls += 1;
                let mut doc = fake(&ask, &mut rng);
                if calls == 3 {
                    doc.results.iter_mut().filter(|r| r.benchmark == "syscall.getpid").for_each(|r| r.status = CaseStatus::Failed);
                }
                Ok(if calls <= 6 { Round::Measured(Box::new(doc)) } else { Round::Interrupted })
            },
            &mut || Duration::ZERO,
            &mut |_| {},
        )
        .unwrap()
        .unwrap();
        assert_eq!(out.pairs, 3);
        let rounds = |l: &str| out.cells.iter().find(|(c, _)| c == l).map(|(_, j)| j.rounds);
        assert_eq!(rounds("syscall.getpid"), Some((2, 2)));
        assert!(out.cells.iter().filter(|(c, _)| c != "syscall.getpid").all(|(_, j)| j.rounds == (3, 3)));
    }

    #[test]
    fn exact_cells_settle_after_one_pair() {
        let mut asked = 0;
        let out = drive::<()>(
            &settings(3600),
            &mut |ask| {
                asked += 1;
                let mut doc = fake(&ask, &mut SplitMix64::new(1));
                for r in &mut doc.results {
                    r.metrics[0].unit = crate::data::results::UNIT_INSTRUCTIONS.into();
                    r.metrics[0].samples = vec![vec![if ask.side == 1 && r.benchmark == "ipc.pipe" { 1500.0 } else { 1000.0 }; 3]];
                }
                Ok(Round::Measured(Box::new(doc)))
            },
            &mut || Duration::ZERO,
            &mut |_| {},
        )
        .unwrap()
        .unwrap();
        assert_eq!((out.pairs, asked, out.end), (1, 2, End::Settled));
        assert!(out.cells.iter().all(|(l, j)| j.verdict == if l.starts_with("ipc.pipe") { Verdict::Slower } else { Verdict::Same }));
    }
}
