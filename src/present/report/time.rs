//! Where a run's time went (`show RUN --time`): per family and kind of
//! round (the first, which measures every case and counts them, and the
//! later ones, which repeat the batch-timed cases), the seconds measuring
//! its cases and counting them; then the rest, each part from the numbers
//! the run recorded (`settings.spent`, each round's record), and what no
//! part accounts for, so that the lines add up to the run's wall time.

use crate::data::results::RunDoc;
use crate::data::results::time::{FamilyTime, Spent, by_family, secs};
use crate::tables::tabular::table::TextTable;
use std::collections::BTreeMap;

/// A family's share of one kind of round.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Share {
    pub cases: usize,
    pub measuring_s: f64,
    pub counting_s: f64,
}

/// Where the time went, as numbers: per family its share of the first
/// round and of the later ones; the rest, line by line; the wall time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Breakdown {
    pub families: BTreeMap<String, [Share; 2]>,
    /// (what, seconds), the last the part no other line accounts for
    /// (present only when the run has finished).
    pub rest: Vec<(String, f64)>,
    /// From start to end, in whole seconds as the document dates them (None: not finished).
    pub wall_s: Option<f64>,
    /// Rounds of each kind that ran in a process of their own.
    pub rounds: [usize; 2],
    /// Whether the document records the rounds' time (else the first
    /// column holds the cases' own `elapsed_s`, over every round it kept).
    pub recorded: bool,
    /// What the run's own process did alongside its rounds' processes
    /// (at the same time, on another CPU): not part of the sum.
    pub alongside: Vec<(String, f64)>,
}

impl Breakdown {
    /// The seconds of every line: the families' measuring and counting, and the rest.
    pub fn total_s(&self) -> f64 {
        let fam: f64 = self.families.values().flat_map(|k| k.iter()).map(|s| s.measuring_s + s.counting_s).sum();
        fam + self.rest.iter().map(|(_, s)| s).sum::<f64>()
    }
}

fn add_families(into: &mut BTreeMap<String, [Share; 2]>, kind: usize, measured: &BTreeMap<String, FamilyTime>) {
    for (f, t) in measured {
        let s = &mut into.entry(f.clone()).or_default()[kind];
        s.cases += t.cases;
        s.measuring_s += secs(t.measuring_s);
    }
}

fn add_counting(into: &mut BTreeMap<String, [Share; 2]>, kind: usize, spent: &Spent) {
    for (f, s) in &spent.counting_s {
        into.entry(f.clone()).or_default()[kind].counting_s += secs(*s);
    }
}

/// Seconds of a process's own lines: preparing (with calibration), facts, writes, cool-downs, merges.
fn own(s: &Spent) -> [f64; 6] {
    let cal = secs(s.calibration_s);
    [cal, (secs(s.prepare_s) - cal).max(0.0), secs(s.facts_s), secs(s.writes_s), secs(s.cool_down_s), secs(s.merges_s)]
}

/// The numbers of [`render`].
pub fn breakdown(doc: &RunDoc) -> Breakdown {
    let mut b = Breakdown::default();
    let log = &doc.settings.round_log;
    b.recorded = log.iter().any(|r| !r.families.is_empty());
    if !b.recorded {
        add_families(&mut b.families, 0, &by_family(&doc.results));
    }
    // [calibration, preparing, facts, writes, cool-downs, merges], then the rounds' processes besides.
    let mut lines = [0.0; 7];
    for r in log {
        let kind = usize::from(r.round > 0);
        add_families(&mut b.families, kind, &r.families);
        let Some(process_s) = r.process_s.map(secs) else { continue };
        b.rounds[kind] += 1;
        let spent = r.spent.clone().unwrap_or_default();
        add_counting(&mut b.families, kind, &spent);
        let parts = own(&spent);
        parts.iter().enumerate().for_each(|(i, v)| lines[i] += v);
        let measured: f64 = r.families.values().map(|t| secs(t.measuring_s)).sum();
        lines[6] += process_s - measured - spent.counting_total() - parts.iter().sum::<f64>();
    }
    // The run's own process: its counting (rounds it ran itself) and its
    // own lines; while rounds run in processes of their own, it reads,
    // merges and writes alongside them (on another CPU): not in the sum.
    let host = doc.settings.spent.clone().unwrap_or_default();
    add_counting(&mut b.families, 0, &host);
    let host_lines = own(&host);
    let beside = b.rounds.iter().sum::<usize>() > 0;
    for (i, v) in host_lines.iter().enumerate() {
        match i {
            3 if beside => b.alongside.push((format!("writing the run's document ({} writes)", host.writes), *v)),
            5 if beside => b.alongside.push(("reading and merging the rounds' documents".into(), *v)),
            _ => lines[i] += v,
        }
    }
    let names = [
        "TSC calibration".to_string(),
        "preparing (suites, plan, directories)".into(),
        "host facts for the documents".into(),
        format!("document writes ({} of them)", writes(doc, beside)),
        "cool-downs after counting passes".into(),
        "reading and merging the rounds' documents".into(),
        "the rounds' processes besides (start, exit, case order)".into(),
    ];
    b.rest = names.into_iter().zip(lines).filter(|(_, v)| *v != 0.0).collect();
    let secs_of = |s: &str| crate::data::results::rfc3339_secs(s);
    b.wall_s = doc.finished_at.as_deref().and_then(secs_of).zip(secs_of(&doc.started_at)).map(|(e, s)| e.saturating_sub(s) as f64);
    if let Some(wall) = b.wall_s {
        let accounted = b.total_s();
        b.rest.push(("the run's own process besides (loads settling, environments, intervals, rounding)".into(), wall - accounted));
    }
    b
}

/// Writes of the rounds' processes, and of the run's own where they are in the sum (not `beside` the rounds).
fn writes(doc: &RunDoc, beside: bool) -> u64 {
    let rounds: u64 =
        doc.settings.round_log.iter().filter(|r| r.process_s.is_some()).filter_map(|r| r.spent.as_ref()).map(|s| s.writes).sum();
    rounds + if beside { 0 } else { doc.settings.spent.as_ref().map_or(0, |s| s.writes) }
}

/// The parts of a round's time, as [`RoundCost::parts`] holds them.
pub const ROUND_PARTS: [&str; 9] = [
    "timed batches (with calibration, warm-up)",
    "counting pass",
    "cool-downs after counting",
    "TSC calibration",
    "preparing (suites, plan, dirs)",
    "host facts",
    "document writes",
    "process start, exit, the rest",
    "the run's own process",
];

/// What one round cost, every column of it (a pair of compare's sides, a
/// round of each environment), part by part.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoundCost {
    pub round: usize,
    /// Processes that measured it (one a column).
    pub processes: usize,
    /// Seconds of each of [`ROUND_PARTS`]: the processes' own lines, what
    /// each process took besides them, and what the round took besides its
    /// processes (known where the loop timed its rounds, else 0).
    pub parts: [f64; 9],
    /// The round from its first process's start to its last one merged:
    /// the loop's clock where it has one, else its processes' sum.
    pub wall_s: f64,
}

/// Each round that ran in processes of its own, part by part.
pub fn per_round(doc: &RunDoc) -> Vec<RoundCost> {
    // The loop's clock of its rounds, where one loop ran (several, one an
    // environment after another, number their rounds each from 0).
    let loops: Vec<&Vec<f64>> = doc.settings.adaptive.iter().map(|o| &o.round_s).filter(|r| !r.is_empty()).collect();
    let walls: &[f64] = if loops.len() == 1 { loops[0] } else { &[] };
    let mut rounds: BTreeMap<usize, RoundCost> = BTreeMap::new();
    for r in &doc.settings.round_log {
        let Some(process_s) = r.process_s.map(secs) else { continue };
        let c = rounds.entry(r.round).or_insert_with(|| RoundCost { round: r.round, ..RoundCost::default() });
        c.processes += 1;
        let spent = r.spent.clone().unwrap_or_default();
        let [cal, prep, facts, writes, cool, _] = own(&spent);
        let lines = [r.families.values().map(|t| secs(t.measuring_s)).sum(), spent.counting_total(), cool, cal, prep, facts, writes];
        lines.iter().enumerate().for_each(|(i, v)| c.parts[i] += v);
        c.parts[7] += process_s - lines.iter().sum::<f64>();
    }
    for c in rounds.values_mut() {
        let processes: f64 = c.parts[..8].iter().sum();
        c.wall_s = walls.get(c.round).map_or(processes, |&w| secs(w));
        c.parts[8] = if walls.is_empty() { 0.0 } else { c.wall_s - processes };
    }
    rounds.into_values().collect()
}

/// The table of what a round cost part by part: the first round, the mean
/// of the later ones and the last; None without rounds in processes of their own.
fn render_rounds(doc: &RunDoc) -> Option<String> {
    let rounds = per_round(doc);
    let (first, last) = (rounds.first()?, rounds.last()?);
    let later = &rounds[1..];
    let mean =
        |f: &dyn Fn(&RoundCost) -> f64| if later.is_empty() { f64::NAN } else { later.iter().map(f).sum::<f64>() / later.len() as f64 };
    // A later round's parts take milliseconds: seconds to the millisecond.
    let s3 = |v: f64| format!("{v:.3}");
    let cell = |v: f64| if v.is_nan() { "-".to_string() } else { s3(v) };
    let later_head = format!("rounds 2-{}: mean", rounds.len());
    let last_head = format!("round {}", last.round + 1);
    let mut t = TextTable::new(&["part of a round", "round 1", later_head.as_str(), last_head.as_str()], 1);
    for (i, what) in ROUND_PARTS.iter().enumerate() {
        if rounds.iter().all(|c| c.parts[i] == 0.0) {
            continue;
        }
        t.row(vec![what.to_string(), s3(first.parts[i]), cell(mean(&|c| c.parts[i])), s3(last.parts[i])]);
    }
    t.row(vec!["the round".into(), s3(first.wall_s), cell(mean(&|c| c.wall_s)), s3(last.wall_s)]);
    let procs: usize = rounds.iter().map(|c| c.processes).sum();
    let own = if first.parts[8] != 0.0 {
        "  the run's own process: starting each round's process, waiting for it, reading and merging its document, writing the run's\n"
    } else {
        ""
    };
    Some(format!(
        "what a round cost, part by part, every column of it ({} rounds, {procs} processes in all):\n{}{own}",
        rounds.len(),
        t.render()
    ))
}

fn s1(v: f64) -> String {
    format!("{v:.1}")
}

/// The table of where the run's time went, and the rest line by line.
pub fn render(doc: &RunDoc) -> String {
    let b = breakdown(doc);
    let later = format!("later rounds ({})", b.rounds[1]);
    let mut t =
        TextTable::new(&["family", "round 1: cases", "measuring s", "counting s", later.as_str(), "measuring s", "counting s", "share"], 1);
    let total = b.wall_s.unwrap_or_else(|| b.total_s()).max(f64::MIN_POSITIVE);
    let mut sums = [Share::default(), Share::default()];
    for (f, kinds) in &b.families {
        let mut row = vec![f.clone()];
        for (k, s) in kinds.iter().enumerate() {
            row.extend([s.cases.to_string(), s1(s.measuring_s), s1(s.counting_s)]);
            sums[k].cases += s.cases;
            sums[k].measuring_s += s.measuring_s;
            sums[k].counting_s += s.counting_s;
        }
        let own: f64 = kinds.iter().map(|s| s.measuring_s + s.counting_s).sum();
        row.push(format!("{:.0}%", 100.0 * own / total));
        t.row(row);
    }
    let mut row = vec!["all families".to_string()];
    sums.iter().for_each(|s| row.extend([s.cases.to_string(), s1(s.measuring_s), s1(s.counting_s)]));
    let fam: f64 = sums.iter().map(|s| s.measuring_s + s.counting_s).sum();
    row.push(format!("{:.0}%", 100.0 * fam / total));
    t.row(row);
    let head = match b.wall_s {
        Some(w) => format!("where the time went: {w:.0} s from start to end"),
        None => "where the time went so far (the run has not finished)".to_string(),
    };
    let mut s = format!(
        "{head}; measuring = the cases' timed batches with their calibration and warm-up, counting = the counting pass (cases run again with the kernel's counters armed)\n{}",
        t.render()
    );
    if !b.recorded {
        s += "  (this document does not record its rounds' time: the first column holds every case's own seconds, its later rounds are not in it)\n";
    }
    let mut rest = TextTable::new(&["the rest", "s", "share"], 1);
    for (what, v) in &b.rest {
        rest.row(vec![what.clone(), s1(*v), format!("{:.0}%", 100.0 * v / total)]);
    }
    rest.row(vec!["total".into(), s1(b.total_s()), format!("{:.0}%", 100.0 * b.total_s() / total)]);
    s += &rest.render();
    for (what, v) in &b.alongside {
        s += &format!("  alongside the rounds, in the run's own process: {what}, {} s\n", s1(*v));
    }
    if let Some(rounds) = render_rounds(doc) {
        s += &rounds;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> RunDoc {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn the_lines_add_up_to_the_documents_numbers() {
        let mut doc = fixture();
        doc.started_at = "2026-11-27T10:00:00Z".into();
        doc.finished_at = Some("2026-11-27T10:01:40Z".into());
        let fam = |n: usize, s: f64| -> BTreeMap<String, FamilyTime> {
            [("syscall".to_string(), FamilyTime { cases: n, measuring_s: s })].into_iter().collect()
        };
        let spent = |counting: f64| Spent {
            prepare_s: 0.5,
            calibration_s: 0.25,
            facts_s: 0.125,
            writes_s: 2.0,
            writes: 10,
            counting_s: [("syscall".to_string(), counting)].into_iter().collect(),
            counted: 3,
            cool_down_s: 1.2,
            merges_s: 0.0,
        };
        doc.settings.round_log = vec![
            crate::data::results::RoundRecord {
                round: 0,
                families: fam(3, 20.0),
                spent: Some(spent(4.0)),
                process_s: Some(30.0),
                counted: Some(true),
                ..Default::default()
            },
            crate::data::results::RoundRecord {
                round: 1,
                families: fam(3, 15.0),
                spent: Some(Spent { counting_s: BTreeMap::new(), cool_down_s: 0.0, ..spent(0.0) }),
                process_s: Some(18.0),
                counted: Some(false),
                ..Default::default()
            },
        ];
        doc.settings.spent =
            Some(Spent { prepare_s: 0.75, calibration_s: 0.5, merges_s: 3.0, writes: 5, writes_s: 1.0, ..Spent::default() });
        let b = breakdown(&doc);
        assert!(b.recorded);
        assert_eq!(b.rounds, [1, 1]);
        let s = &b.families["syscall"];
        assert_eq!((s[0].cases, s[0].measuring_s, s[0].counting_s), (3, 20.0, 4.0));
        assert_eq!((s[1].cases, s[1].measuring_s, s[1].counting_s), (3, 15.0, 0.0));
        let line = |what: &str| b.rest.iter().find(|(w, _)| w.starts_with(what)).map(|(_, v)| *v).unwrap();
        assert_eq!(line("TSC calibration"), 0.25 + 0.25 + 0.5);
        assert_eq!(line("document writes (20"), 2.0 + 2.0);
        assert_eq!(line("cool-downs"), 1.2);
        // The run's own process reads, merges and writes while the rounds run: beside the sum.
        assert!(!b.rest.iter().any(|(w, _)| w.starts_with("reading")));
        let beside: Vec<(&str, f64)> = b.alongside.iter().map(|(w, v)| (w.as_str(), *v)).collect();
        assert_eq!(beside, [("writing the run's document (5 writes)", 1.0), ("reading and merging the rounds' documents", 3.0)]);
        // Each round's process: what it took less what its lines account for.
        let besides = (30.0 - 20.0 - 4.0 - (0.5 + 0.125 + 2.0 + 1.2)) + (18.0 - 15.0 - (0.5 + 0.125 + 2.0));
        assert!((line("the rounds' processes besides") - besides).abs() < 1e-9);
        assert_eq!(b.wall_s, Some(100.0));
        assert!((b.total_s() - 100.0).abs() < 1e-9, "{}", b.total_s());
        let text = render(&doc);
        assert!(text.contains("where the time went: 100 s"), "{text}");
        assert!(text.lines().any(|l| l.starts_with("total") && l.contains("100.0")), "{text}");
    }

    #[test]
    fn a_rounds_parts_add_up_to_the_loops_clock_of_it() {
        let mut doc = fixture();
        let record = |round: usize, measuring_s: f64, counting: f64, process_s: f64| crate::data::results::RoundRecord {
            round,
            families: [("syscall".to_string(), FamilyTime { cases: 7, measuring_s })].into_iter().collect(),
            spent: Some(Spent {
                prepare_s: 0.25,
                calibration_s: 0.0,
                facts_s: 0.125,
                writes_s: 0.5,
                counting_s: [("syscall".to_string(), counting)].into_iter().collect(),
                cool_down_s: if counting > 0.0 { 1.2 } else { 0.0 },
                ..Spent::default()
            }),
            process_s: Some(process_s),
            ..Default::default()
        };
        // Two columns a round (compare's sides), the first round counting.
        doc.settings.round_log =
            vec![record(0, 2.0, 1.0, 6.0), record(0, 2.0, 1.0, 6.5), record(1, 1.5, 0.0, 3.0), record(1, 1.0, 0.0, 2.5)];
        let auto = crate::data::results::adaptive::Auto { budget_min: 2.0, target_pct: 5.0, until_verdict: None };
        doc.settings.adaptive = vec![crate::data::results::adaptive::Outcome {
            asked: auto,
            environment: None,
            against: Some("A".into()),
            rounds: 2,
            round_s: vec![13.0, 6.0],
            elapsed_s: 19.5,
            ended: crate::data::results::adaptive::Ended::Budget,
            unsettled: vec![],
        }];
        let rounds = per_round(&doc);
        assert_eq!(rounds.iter().map(|c| (c.round, c.processes, c.wall_s)).collect::<Vec<_>>(), [(0, 2, 13.0), (1, 2, 6.0)]);
        let [first, later] = [&rounds[0], &rounds[1]];
        assert_eq!(&first.parts[..7], &[4.0, 2.0, 2.4, 0.0, 0.5, 0.25, 1.0]);
        assert!((first.parts[7] - (12.5 - 10.15)).abs() < 1e-9, "{:?}", first.parts);
        assert!((first.parts[8] - 0.5).abs() < 1e-9 && (later.parts[8] - 0.5).abs() < 1e-9);
        for c in &rounds {
            assert!((c.parts.iter().sum::<f64>() - c.wall_s).abs() < 1e-9, "{c:?}");
        }
        let text = render(&doc);
        assert!(text.contains("every column of it (2 rounds, 4 processes in all)"), "{text}");
        assert!(text.lines().any(|l| l.starts_with("the round") && l.contains("13.000") && l.contains("6.000")), "{text}");
    }

    #[test]
    fn an_older_document_shows_its_cases_own_seconds() {
        let doc = fixture();
        let b = breakdown(&doc);
        assert!(!b.recorded);
        let cases: usize = b.families.values().map(|k| k[0].cases).sum();
        assert_eq!(cases, doc.results.len());
        let got: f64 = b.families.values().map(|k| k[0].measuring_s).sum();
        let want: f64 = doc.results.iter().map(|r| secs(r.elapsed_s)).sum();
        assert!((got - want).abs() < 1e-9);
        assert!(render(&doc).contains("does not record its rounds' time"));
    }
}
