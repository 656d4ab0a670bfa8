//! What adaptive rounds (`run --rounds auto`, `compare --interleave auto`:
//! the loop of `rounds::settle`) ask for
//! and how they went, as the run document records it (`settings.auto`,
//! `settings.adaptive`): the document's types, so that the store does not
//! reach up into the rounds that fill them.

use serde::{Deserialize, Serialize};

/// What `--rounds auto` asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Auto {
    /// Minutes all rounds together may take (`--budget`).
    pub budget_min: f64,
    /// Half of a settled cell's 95% interval, in percent of its median
    /// (`--target`); with a baseline, also the margin within which a cell
    /// is `same` as the baseline's.
    pub target_pct: f64,
    /// `--until-verdict`: the baseline (a name or a run document) every
    /// cell is to get a verdict against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_verdict: Option<String>,
}

/// Rounds at most, whatever the budget.
pub const MAX_ROUNDS: usize = 1000;

/// A cell not settled when the rounds ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Unsettled {
    pub benchmark: String,
    /// The cell within the benchmark: parameters, environment, condition.
    pub cell: String,
    /// Half its 95% interval, percent of its median.
    pub half_width_pct: f64,
    /// Rounds in all that would likely settle it (None: no estimate).
    pub rounds_needed: Option<usize>,
    /// The round after which it was no longer measured: at the spread seen
    /// it could not settle in the time left, and the rounds went to cells
    /// that could (None: measured to the end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_since: Option<usize>,
}

/// Why the rounds stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// Every cell settled.
    Settled,
    /// Another round would have gone past the budget.
    Budget,
    /// `MAX_ROUNDS` reached.
    MaxRounds,
    /// Interrupted, or nothing left that could be measured again.
    Stopped,
}

impl Ended {
    pub fn describe(self) -> &'static str {
        match self {
            Ended::Settled => "every cell settled",
            Ended::Budget => "the budget would not fit another round",
            Ended::MaxRounds => "the most rounds a run takes",
            Ended::Stopped => "interrupted, or nothing left to measure again",
        }
    }
}

/// How adaptive rounds went: recorded in the run document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub asked: Auto,
    /// The environment whose rounds these were (None: the run's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// The column every other was judged against, where columns
    /// (environments, compare's sides) took turns by round and their cells
    /// settled on paired verdicts (`rounds::settle`); None: one column, on
    /// its own intervals (or against `asked.until_verdict`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
    /// Rounds run.
    pub rounds: usize,
    /// Seconds each round took, every column of it (what a round costs as
    /// cells leave: the first, with every cell and the counting pass, the
    /// most).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_s: Vec<f64>,
    pub elapsed_s: f64,
    pub ended: Ended,
    pub unsettled: Vec<Unsettled>,
}

impl Outcome {
    /// One line for the terminal, and the unsettled cells under it.
    pub fn describe(&self) -> Vec<String> {
        let goal = match (&self.against, &self.asked.until_verdict) {
            (Some(c), _) => format!("paired verdicts of every column against {c} (margin {}%)", self.asked.target_pct),
            (None, Some(b)) => format!("a verdict against {b} (margin {}%)", self.asked.target_pct),
            (None, None) => format!("intervals within +-{}%", self.asked.target_pct),
        };
        let cost = match (self.round_s.first(), self.round_s.last()) {
            (Some(a), Some(b)) => format!(" (a round took {a:.1} s at first, {b:.1} s at the end)"),
            _ => String::new(),
        };
        let mut out = vec![format!(
            "rounds auto: {} rounds in {:.1} of {} min for {goal}{cost}; stopped: {}; {} cells unsettled",
            self.rounds,
            self.elapsed_s / 60.0,
            self.asked.budget_min,
            self.ended.describe(),
            self.unsettled.len()
        )];
        for u in self.unsettled.iter().take(12) {
            let need = u.rounds_needed.map_or("?".to_string(), |n| n.to_string());
            let cell = if u.cell.is_empty() { String::new() } else { format!(" {}", u.cell) };
            let waited = u.waiting_since.map_or(String::new(), |k| format!(" (not measured after round {k}: more than the time left)"));
            out.push(format!("  {}{cell}: +-{:.1}% now, about {need} rounds would settle it{waited}", u.benchmark, u.half_width_pct));
        }
        if self.unsettled.len() > 12 {
            out.push(format!("  ... and {} more (in the document)", self.unsettled.len() - 12));
        }
        out
    }
}
