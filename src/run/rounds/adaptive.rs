//! Adaptive rounds (`run --rounds auto`): rounds go on while a cell of the
//! plan is unsettled and the time budget lasts, each new round measuring
//! only the benchmarks whose cells are unsettled. A cell is settled when
//! half its 95% interval is within the target (percent of its median), or,
//! with a baseline (`--until-verdict`), when its comparison with the
//! baseline's cell has a verdict (faster, slower or same). The run ends with
//! the cells still unsettled and the rounds each would likely need.
//!
//! Cells counted exactly (guest instructions under QEMU's instruction
//! counter, every sample one number: `sequential::one_number`) are settled
//! by their first round: later rounds leave them out, and a plan of nothing
//! else ends after one round.
//!
//! With several environments the rounds take turns across them and cells
//! settle on paired verdicts between the columns instead: `columns`.
//!
//! This module decides and records; `rounds` measures. The loop takes the
//! clock and the measuring as arguments, so tests drive it with fake ones.

use std::time::Duration;

use crate::data::results::adaptive::{Auto, Ended, MAX_ROUNDS, MIN_ROUNDS, Outcome, Unsettled};
use crate::data::results::{CaseResult, CaseStatus};

/// Rounds in all that would likely bring a half-width of `now_pct` after
/// `rounds` rounds down to `target_pct`: an interval over rounds narrows
/// as one over the square root of their number.
pub fn rounds_for(now_pct: f64, target_pct: f64, rounds: usize) -> Option<usize> {
    if !(now_pct.is_finite() && target_pct > 0.0) {
        return None;
    }
    let n = (rounds as f64 * (now_pct / target_pct).powi(2)).ceil();
    Some((n as usize).max(rounds + 1))
}

/// What the rounds so far leave: the cells still unsettled, and whether
/// every cell measured again is counted exactly (then no more rounds are
/// needed, however few there were).
#[derive(Debug, Clone, Default)]
pub struct Look {
    pub unsettled: Vec<Unsettled>,
    pub all_exact: bool,
}

/// Whether a result is counted exactly: guest instructions, every sample
/// of its first metric one number.
pub fn counted_exactly(r: &CaseResult) -> bool {
    r.metrics.first().is_some_and(|m| m.is_exact() && crate::analysis::sequential::one_number(&m.samples).is_some())
}

/// Of the measured cells of `results` whose benchmark `repeats`: the
/// benchmarks whose every cell is counted exactly, and whether all cells
/// are (at least one).
pub fn exact_benchmarks(results: &[CaseResult], repeats: &dyn Fn(&str) -> bool) -> (Vec<String>, bool) {
    let cells: Vec<&CaseResult> = results.iter().filter(|r| r.status == CaseStatus::Ok && repeats(&r.benchmark)).collect();
    let mut exact: Vec<String> = cells.iter().filter(|r| counted_exactly(r)).map(|r| r.benchmark.clone()).collect();
    exact.sort();
    exact.dedup();
    exact.retain(|id| cells.iter().filter(|r| &r.benchmark == id).all(|r| counted_exactly(r)));
    let all = !cells.is_empty() && cells.iter().all(|r| counted_exactly(r));
    (exact, all)
}

/// The benchmarks a round measures: `only` (None: every one that repeats,
/// as `all` lists them) without those in `exact`; None (all) when nothing
/// is left out.
pub fn without(only: Option<&[String]>, exact: &[String], all: impl FnOnce() -> Vec<String>) -> Option<Vec<String>> {
    if exact.is_empty() {
        return only.map(<[String]>::to_vec);
    }
    let ids = only.map_or_else(all, <[String]>::to_vec);
    Some(ids.into_iter().filter(|id| !exact.contains(id)).collect())
}

/// Measures round k of the benchmarks given (None: all that repeat) and
/// says what is unsettled after it (None: it could not go on).
pub type RoundFn<'a, E> = dyn FnMut(usize, Option<&[String]>) -> Result<Option<Look>, E> + 'a;

/// Runs rounds until the cells settle or the budget ends. `round(k, only)`
/// measures round k (`only`: the benchmarks to measure, None: all that
/// repeat) and returns the cells unsettled after it, or None when it could
/// not go on (interrupted, nothing left). `now` is the time since the
/// rounds began.
pub fn drive<E>(auto: &Auto, now: &mut dyn FnMut() -> Duration, round: &mut RoundFn<'_, E>) -> Result<Outcome, E> {
    let budget = Duration::from_secs_f64(auto.budget_min * 60.0);
    let mut unsettled: Vec<Unsettled> = Vec::new();
    let mut k = 0;
    let mut last = Duration::ZERO;
    let ended = loop {
        if k >= MAX_ROUNDS {
            break Ended::MaxRounds;
        }
        let started = now();
        // The next round takes about as long as the last one did.
        if k > 0 && started + last > budget {
            break Ended::Budget;
        }
        let only: Option<Vec<String>> = (k >= MIN_ROUNDS).then(|| {
            let mut ids: Vec<String> = unsettled.iter().map(|u| u.benchmark.clone()).collect();
            ids.dedup();
            ids
        });
        let all_exact = match round(k, only.as_deref())? {
            Some(look) => {
                unsettled = look.unsettled;
                look.all_exact
            }
            None => break Ended::Stopped,
        };
        k += 1;
        last = now().saturating_sub(started);
        if (k >= MIN_ROUNDS || all_exact) && unsettled.is_empty() {
            break Ended::Settled;
        }
    };
    Ok(Outcome { asked: auto.clone(), environment: None, against: None, rounds: k, elapsed_s: now().as_secs_f64(), ended, unsettled })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two cells whose half-widths shrink as 1/sqrt(rounds) from 20% and
    /// 8% after one round; a round takes 10 s of the fake clock.
    fn fake(auto: &Auto) -> (Outcome, Vec<Option<Vec<String>>>) {
        let clock = std::cell::Cell::new(Duration::ZERO);
        let mut asked = Vec::new();
        let mut measured = [0usize; 2];
        let start = [20.0, 8.0];
        let names = ["a.wide", "b.narrow"];
        let mut now = || clock.get();
        let mut round = |_k: usize, only: Option<&[String]>| -> Result<Option<Look>, ()> {
            asked.push(only.map(<[String]>::to_vec));
            for (i, n) in names.iter().enumerate() {
                if only.is_none_or(|o| o.iter().any(|x| x == n)) {
                    measured[i] += 1;
                }
            }
            clock.set(clock.get() + Duration::from_secs(10));
            let unsettled = (0..2)
                .map(|i| (i, start[i] / (measured[i] as f64).sqrt()))
                .filter(|&(_, hw)| hw > auto.target_pct)
                .map(|(i, hw)| Unsettled {
                    benchmark: names[i].into(),
                    cell: String::new(),
                    half_width_pct: hw,
                    rounds_needed: rounds_for(hw, auto.target_pct, measured[i]),
                })
                .collect();
            Ok(Some(Look { unsettled, all_exact: false }))
        };
        let out = drive(auto, &mut now, &mut round).unwrap();
        (out, asked)
    }

    #[test]
    fn stops_when_every_cell_is_within_the_target() {
        // 20/sqrt(n) <= 5 at n = 16; 8/sqrt(n) <= 5 at n = 3, so from round 6 only a.wide repeats.
        let (out, asked) = fake(&Auto { budget_min: 60.0, target_pct: 5.0, until_verdict: None });
        assert_eq!((out.rounds, out.ended), (16, Ended::Settled));
        assert!(out.unsettled.is_empty());
        assert!(asked[..MIN_ROUNDS].iter().all(Option::is_none), "the first rounds measure everything: {asked:?}");
        assert_eq!(asked[MIN_ROUNDS], Some(vec!["a.wide".to_string()]), "then only the unsettled cell");
    }

    #[test]
    fn stops_when_another_round_would_pass_the_budget() {
        // 1 min at 10 s a round: the 6th round ends at 60 s, a 7th would pass it.
        let (out, _) = fake(&Auto { budget_min: 1.0, target_pct: 5.0, until_verdict: None });
        assert_eq!((out.rounds, out.ended), (6, Ended::Budget));
        assert_eq!(out.unsettled.len(), 1);
        let u = &out.unsettled[0];
        assert_eq!(u.benchmark, "a.wide");
        // 20/sqrt(6) = 8.16% after 6 rounds: 6 * (8.16/5)^2 = 16 rounds.
        assert!(u.rounds_needed.is_some_and(|n| (16..=17).contains(&n)), "{u:?}");
        assert!(out.describe()[0].contains("1 cells unsettled"), "{:?}", out.describe());
    }

    #[test]
    fn settles_no_earlier_than_the_fewest_rounds_a_verdict_needs() {
        let (out, _) = fake(&Auto { budget_min: 60.0, target_pct: 50.0, until_verdict: None });
        assert_eq!((out.rounds, out.ended), (MIN_ROUNDS, Ended::Settled));
    }

    #[test]
    fn cells_counted_exactly_settle_in_one_round_and_are_not_measured_again() {
        let result = |id: &str, samples: Vec<Vec<f64>>| {
            let mut r = crate::data::results::fixture().results.into_iter().find(|r| r.status == CaseStatus::Ok).unwrap();
            r.benchmark = id.into();
            r.metrics.truncate(1);
            r.metrics[0].unit = crate::data::results::UNIT_INSTRUCTIONS.into();
            r.metrics[0].samples = samples;
            r
        };
        let exact = result("a.counted", vec![vec![311.0; 3]]);
        let varies = result("b.varies", vec![vec![311.0, 312.0, 311.0]]);
        let repeats = |_: &str| true;
        assert_eq!(exact_benchmarks(&[exact.clone(), varies.clone()], &repeats), (vec!["a.counted".to_string()], false));
        assert_eq!(exact_benchmarks(std::slice::from_ref(&exact), &repeats), (vec!["a.counted".to_string()], true));
        assert_eq!(exact_benchmarks(&[], &repeats), (vec![], false), "nothing measured is not all exact");
        let all = || vec!["a.counted".to_string(), "b.varies".to_string()];
        assert_eq!(without(None, &["a.counted".into()], all), Some(vec!["b.varies".to_string()]));
        assert_eq!(without(None, &[], all), None, "nothing left out: every benchmark that repeats");
        // A plan of exact cells only: one round, settled.
        let auto = Auto { budget_min: 60.0, target_pct: 5.0, until_verdict: None };
        let mut rounds = 0;
        let out = drive::<()>(&auto, &mut || Duration::ZERO, &mut |_, _| {
            rounds += 1;
            Ok(Some(Look { unsettled: vec![], all_exact: true }))
        })
        .unwrap();
        assert_eq!((out.rounds, out.ended, rounds), (1, Ended::Settled, 1));
    }
}
