use super::*;
use crate::analysis::sequential::sim::Host;
use std::cell::Cell;

/// Fake columns of the fixture's measured native cells: a round adds three
/// batches around each cell's centre (column 1's ipc.pipe cells `dearer`
/// times column 0's, 1% of noise), only of the cases listed; a round of a
/// column takes 5 s of the fake clock. With a simulated `host`, only
/// syscall.getpid, each round one level of the host at the clock's time.
struct Fake {
    doc: RunDoc,
    cells: Vec<CaseResult>,
    columns: usize,
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
    /// (column, round) whose whole round fails.
    round_fails: Option<(usize, usize)>,
    host: Option<Host>,
}

const NAMES: [&str; 2] = ["native", "container"];

fn fake(columns: usize, dearer: f64, exact: bool) -> Fake {
    let mut doc = crate::data::results::fixture();
    let cells: Vec<CaseResult> =
        doc.results.iter().filter(|r| r.environment.as_deref() == Some("native") && r.status == CaseStatus::Ok).cloned().collect();
    doc.results.clear();
    let clock = std::rc::Rc::new(Cell::new(Duration::ZERO));
    let rng = SplitMix64::new(3);
    Fake { doc, cells, columns, dearer, rng, clock, asked: vec![], exact, down: None, fails: None, round_fails: None, host: None }
}

/// An A/A of syscall.getpid in two columns on the simulated host.
fn simulated(seed: u64) -> Fake {
    let mut f = fake(2, 1.0, false);
    f.cells.retain(|c| c.benchmark == "syscall.getpid");
    f.host = Some(Host::shared(seed));
    f.rng = SplitMix64::new(seed);
    f
}

impl Fake {
    fn tag(&self, i: usize) -> Option<String> {
        (self.columns > 1).then(|| NAMES[i].to_string())
    }

    /// One round's three batches of a cell of column i.
    fn batches(&mut self, i: usize, benchmark: &str) -> Vec<f64> {
        let factor = if i == 1 && benchmark == "ipc.pipe" { self.dearer } else { 1.0 };
        if self.exact {
            return vec![1000.0 * factor; 3];
        }
        let level = match &mut self.host {
            Some(h) => h.round(self.clock.get().as_secs_f64() / 5.0, 0.0).exp(),
            None => 1.0,
        };
        let rng = &mut self.rng;
        let mut noise = || 1.0 + 0.01 * ((rng.next_u64() % 2001) as f64 / 1000.0 - 1.0);
        (0..3).map(|_| 1000.0 * factor * level * noise()).collect()
    }
}

impl Columns<()> for Fake {
    fn measure(&mut self, i: usize, k: usize, cases: Option<&[String]>) -> Result<Step, ()> {
        self.asked.push((i, k, cases.map(<[String]>::to_vec)));
        if self.down == Some(i) {
            return Ok(Step::Unusable);
        }
        self.clock.set(self.clock.get() + Duration::from_secs(5));
        if self.round_fails == Some((i, k)) {
            return Ok(Step::Failed("no CPU".into()));
        }
        let cells: Vec<CaseResult> = self.cells.iter().filter(|c| cases.is_none_or(|l| l.contains(&case_label(c)))).cloned().collect();
        for cell in cells {
            let mut r = CaseResult { environment: self.tag(i), ..cell };
            if self.fails.is_some_and(|(c, kk, b)| (c, kk, b) == (i, k, r.benchmark.as_str())) {
                continue;
            }
            let samples = self.batches(i, &r.benchmark);
            let m = &mut r.metrics[0];
            if self.exact {
                m.unit = crate::data::results::UNIT_INSTRUCTIONS.into();
            }
            m.samples = vec![samples];
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

fn layout(f: &Fake) -> Layout<'static> {
    Layout {
        tags: (0..f.columns).map(|i| f.tag(i)).collect(),
        names: NAMES[..f.columns].iter().map(|n| n.to_string()).collect(),
        reference: 0,
        first: 0,
        seed: 1,
        across_conditions: false,
        baseline: None,
    }
}

fn auto(budget_min: f64) -> Auto {
    Auto { budget_min, target_pct: 5.0, until_verdict: None }
}

fn run(f: &mut Fake, budget_min: f64) -> Outcome {
    let clock = f.clock.clone();
    let l = layout(f);
    drive(&auto(budget_min), &l, f, &mut || clock.get()).unwrap()
}

/// Rounds of each cell in each column: (label, column 0's, column 1's).
fn rounds(f: &Fake) -> Vec<(String, usize, usize)> {
    let of = |r: &CaseResult| r.metrics[0].samples.len();
    let l = layout(f);
    f.doc
        .results
        .iter()
        .filter(|r| r.environment.as_deref() == Some("native"))
        .filter_map(|r| {
            let twin = f.doc.results.iter().find(|t| t.environment.as_deref() == Some("container") && l.twins(r, t))?;
            Some((case_label(r), of(r), of(twin)))
        })
        .collect()
}

#[test]
fn columns_take_turns_in_drawn_orders_settled_cells_drop_out_and_the_verdicts_are_paired() {
    let mut f = fake(2, 1.2, false);
    let out = run(&mut f, 60.0);
    assert_eq!((out.ended, out.against.as_deref()), (Ended::Settled, Some("native")), "{out:?}");
    assert!(out.unsettled.is_empty());
    // Round k of both columns before round k+1 of either, in the round's drawn order.
    let mut firsts = [0, 0];
    for (k, pair) in f.asked.chunks(2).enumerate() {
        let order: Vec<usize> = pair.iter().map(|a| a.0).collect();
        assert_eq!(order, round_order(2, 1, k), "round {k}");
        firsts[order[0]] += 1;
        assert!(pair.iter().all(|a| a.1 == k));
        assert_eq!(pair[0].2, pair[1].2, "round {k}: both columns are asked the same cases");
    }
    assert!(firsts[0] > 0 && firsts[1] > 0, "each column goes first sometimes: {firsts:?}");
    assert_eq!(f.asked.len(), 2 * out.rounds);
    assert_eq!(f.asked[0].2, None, "the first round measures everything");
    // Cases drop out and never come back; the fixed-time case is never asked again.
    let lists: Vec<Vec<String>> = f.asked.iter().skip(2).map(|a| a.2.clone().unwrap()).collect();
    for w in lists.windows(2) {
        assert!(w[1].iter().all(|c| w[0].contains(c)), "{w:?}");
    }
    assert!(lists.iter().flatten().all(|c| !c.starts_with("noise.fwq")));
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
    let mut f = fake(2, 1.2, false);
    let out = run(&mut f, 25.0 / 60.0);
    assert_eq!((out.rounds, out.ended), (2, Ended::Budget));
    assert_eq!(out.unsettled.len(), 4, "every repeating container cell: {:?}", out.unsettled);
    assert!(out.unsettled.iter().all(|u| u.cell.contains("[container]") && u.rounds_needed.is_some_and(|n| n >= 8)));
    assert!(out.describe()[0].contains("paired verdicts of every column against native"), "{:?}", out.describe());
}

#[test]
fn cells_counted_exactly_settle_in_one_round() {
    let mut f = fake(2, 1.5, true);
    let out = run(&mut f, 60.0);
    assert_eq!((out.rounds, out.ended, f.asked.len()), (1, Ended::Settled, 2));
    let mut one = fake(1, 1.0, true);
    let out = run(&mut one, 60.0);
    assert_eq!((out.rounds, out.ended, one.asked.len(), out.against), (1, Ended::Settled, 1, None));
}

#[test]
fn a_cell_failing_in_one_column_loses_that_round_in_every_column() {
    let mut f = fake(2, 1.2, false);
    f.fails = Some((1, 2, "syscall.getpid"));
    let out = run(&mut f, 60.0);
    assert_eq!(out.ended, Ended::Settled);
    let r = rounds(&f);
    assert!(r.iter().all(|c| c.1 == c.2), "{r:?}");
}

#[test]
fn a_round_that_fails_whole_is_lost_in_every_column_and_three_in_a_row_end_the_loop() {
    let mut f = fake(2, 1.2, false);
    f.round_fails = Some((1, 0));
    let out = run(&mut f, 60.0);
    assert_eq!(out.ended, Ended::Settled);
    let r = rounds(&f);
    assert!(r.len() >= 4 && r.iter().all(|c| c.1 == c.2), "{r:?}");
    let g = fake(2, 1.2, false);
    struct Failing(Fake);
    impl Columns<()> for Failing {
        fn measure(&mut self, i: usize, k: usize, cases: Option<&[String]>) -> Result<Step, ()> {
            if k >= 1 && i == 0 {
                return Ok(Step::Failed("no CPU".into()));
            }
            self.0.measure(i, k, cases)
        }
        fn doc(&self) -> &RunDoc {
            self.0.doc()
        }
        fn change(&mut self, f: &mut dyn FnMut(&mut RunDoc)) -> Result<(), ()> {
            self.0.change(f)
        }
        fn note(&mut self, line: &str) {
            self.0.note(line)
        }
    }
    let l = layout(&g);
    let mut failing = Failing(g);
    let out = drive(&auto(60.0), &l, &mut failing, &mut || Duration::ZERO).unwrap();
    assert_eq!((out.ended, out.rounds), (Ended::Stopped, 1 + FAILED_ROUNDS_IN_A_ROW - 1));
    let r = rounds(&failing.0);
    assert!(r.iter().all(|c| (c.1, c.2) == (1, 1)), "the failed rounds add nothing: {r:?}");
}

#[test]
fn a_column_that_cannot_run_is_asked_once_and_the_others_settle_on_their_own() {
    let mut f = fake(2, 1.2, false);
    f.down = Some(1);
    let out = run(&mut f, 60.0);
    assert_eq!(f.asked.iter().filter(|a| a.0 == 1).count(), 1, "{:?}", f.asked);
    // Native's cells, with nothing to pair with, settle on their own at the first look.
    assert_eq!((out.ended, out.rounds), (Ended::Settled, first_look(0.05)));
}

#[test]
fn one_column_settles_on_its_own_intervals_and_the_budget_names_what_is_left() {
    let mut f = fake(1, 1.0, false);
    let out = run(&mut f, 60.0);
    assert_eq!((out.ended, out.rounds, out.against.as_deref()), (Ended::Settled, 8, None));
    assert!(out.describe()[0].contains("intervals within +-5%"), "{:?}", out.describe());
    // A host that moves 30% between rounds: not settled in 40 s of rounds of 5 s.
    let mut f = fake(1, 1.0, false);
    f.host = Some(Host::shared(5));
    let out = run(&mut f, 40.0 / 60.0);
    assert_eq!((out.ended, out.rounds), (Ended::Budget, 8));
    assert!(out.unsettled.iter().all(|u| u.rounds_needed.is_some_and(|n| n > 8)), "{:?}", out.unsettled);
}

#[test]
fn open_cases_are_ranked_and_those_that_cannot_settle_in_the_time_left_wait() {
    let open = |case: &str, need: usize| Open {
        case: case.into(),
        columns: vec![0, 1],
        unsettled: Unsettled { rounds_needed: Some(need), ..Unsettled::default() },
    };
    let cells = [open("c.far", 500), open("a.near", 10), open("b.mid", 50)];
    // After 8 rounds, 1 s a case and column, 100 s left: a.near costs 2 x 2, b.mid 42 x 2; c.far 492 x 2 does not fit.
    let (asked, waiting) = next_cases(&cells, 2, 8, 1.0, 100.0);
    assert_eq!(waiting, ["c.far"]);
    assert_eq!(asked, vec![Some(vec!["a.near".to_string(), "b.mid".into()]); 2]);
    // Before the first look nothing is ranked; when nothing fits, everything is asked.
    assert!(next_cases(&cells, 2, 3, 1.0, 100.0).1.is_empty());
    let (asked, waiting) = next_cases(&cells, 2, 8, 1.0, 1.0);
    assert!(waiting.is_empty() && asked[0].as_ref().is_some_and(|l| l.len() == 3));
}

#[test]
fn the_one_loop_on_a_drifting_two_level_host_rarely_gives_a_false_verdict() {
    // A/A's through the loop itself: the columns' order drawn each round,
    // the host drifting by the fake clock, every cell looked at after every
    // round until it settles or 200 rounds (the budget) end.
    let runs = 300;
    let (mut false_verdicts, mut same) = (0, 0);
    for s in 0..runs {
        let mut f = simulated(9000 + s);
        let out = run(&mut f, 200.0 * 10.0 / 60.0);
        let cell = |e: &str| f.doc.results.iter().find(|r| r.environment.as_deref() == Some(e)).unwrap().metrics[0].clone();
        match judge_sequential(&cell("native"), &cell("container"), &Thresholds::default()).unwrap().verdict {
            Verdict::Faster | Verdict::Slower => false_verdicts += 1,
            Verdict::Same => same += 1,
            Verdict::Unsure => assert!(out.ended != Ended::Settled),
        }
    }
    eprintln!("A/A through the loop: {false_verdicts} false verdicts, {same} same of {runs}");
    assert!(false_verdicts as f64 <= 0.05 * runs as f64, "false verdicts in {false_verdicts} of {runs}");
    assert!(same > runs / 2, "the A/A's should mostly end `same` within 200 rounds: {same} of {runs}");
}
