//! Progress of a run, as events (after criterion's `Report` trait): the
//! runner, the rounds and the environments say what is happening to one
//! [`Reporter`]; what (if anything) reaches a person is the reporter's
//! business: [`Terminal`] rewrites one line on a terminal and writes one
//! line per benchmark elsewhere, [`Quiet`] says nothing.

use crate::run::plan::PlannedCase;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// What a run tells about itself while it goes. Every event does nothing
/// unless an implementation says otherwise, except warnings, which reach
/// stderr (they are not progress: `--quiet` keeps them).
pub trait Reporter {
    /// The run starts: `cases` results to come, `per` of them per condition
    /// and environment, saved to `path`.
    fn run_started(&mut self, _cases: usize, _per: usize, _path: &Path) {}
    /// A plan starts in this process: one entry per case to come (over
    /// every condition, in order), the seconds it is planned to take where
    /// its family says ([`crate::families::bench::family::Family::planned_s`]).
    fn plan_started(&mut self, _planned: &[Option<f64>]) {}
    /// Case `i` (from 0) of the plan starts; `condition` is "load/isolation: "
    /// when the plan runs under several, else empty.
    fn case_started(&mut self, _i: usize, _p: &PlannedCase, _condition: &str) {}
    /// The plan's cases are done (or stopped).
    fn plan_done(&mut self) {}
    /// Round k (from 0) of `count` starts in a fresh process, running `what`.
    fn round_started(&mut self, _k: usize, _count: usize, _what: &str) {}
    /// An environment is started to run `cases` cases in it.
    fn environment_started(&mut self, _env: &str, _cases: usize) {}
    /// An environment cannot be used; its cases say why.
    fn environment_unusable(&mut self, _env: &str, _why: &str) {}
    /// Start `i` (from 0) of `n` of an environment, timed from the host.
    fn boot_started(&mut self, _env: &str, _i: usize, _n: usize) {}
    /// Something went wrong that the results record, but a person should
    /// hear of now.
    fn warning(&mut self, text: &str) {
        eprintln!("oscycles: {text}");
    }
    /// A line a person following the run should read (how adaptive rounds
    /// ended); quiet reporters keep it to themselves.
    fn note(&mut self, _text: &str) {}
}

/// No progress at all (`--quiet`, round and environment children).
pub struct Quiet;

impl Reporter for Quiet {}

/// Progress on stderr: on a terminal one line rewritten per case, else one
/// line per benchmark (and condition), with the time left estimated from
/// the cases so far.
pub struct Terminal {
    tty: bool,
    /// The plan's cases, with the seconds planned where known.
    planned: Vec<Option<f64>>,
    started: Instant,
    last: String,
}

impl Terminal {
    /// Rewritten lines when stderr is a terminal.
    pub fn new() -> Terminal {
        Terminal::with_tty(std::io::IsTerminal::is_terminal(&std::io::stderr()))
    }

    pub fn with_tty(tty: bool) -> Terminal {
        Terminal { tty, planned: vec![], started: Instant::now(), last: String::new() }
    }

    /// The line of case `i`: "[3/10, ~4 s left] load/iso: label".
    pub fn case_line(&self, i: usize, what: &str) -> String {
        let eta = if i > 0 { format!(", ~{:.0} s left", self.left_s(i, self.started.elapsed().as_secs_f64())) } else { String::new() };
        format!("[{}/{}{eta}] {what}", i + 1, self.planned.len())
    }

    /// Seconds left when case `i` starts, `elapsed` after the first: the
    /// planned seconds of the cases left that have them, and for each of
    /// the others what a case without them has taken so far.
    fn left_s(&self, i: usize, elapsed: f64) -> f64 {
        let (done, left) = self.planned.split_at(i.min(self.planned.len()));
        let known = |p: &[Option<f64>]| p.iter().flatten().sum::<f64>();
        let unknown = |p: &[Option<f64>]| p.iter().filter(|x| x.is_none()).count();
        let per_case = match unknown(done) {
            0 => elapsed / i.max(1) as f64,
            n => (elapsed - known(done)).max(0.0) / n as f64,
        };
        known(left) + unknown(left) as f64 * per_case
    }
}

impl Default for Terminal {
    fn default() -> Self {
        Terminal::new()
    }
}

impl Reporter for Terminal {
    fn run_started(&mut self, cases: usize, per: usize, path: &Path) {
        let per = if cases == per { String::new() } else { format!(" ({per} per condition and environment)") };
        eprintln!("measuring {cases} cases{per}; results go to {}", path.display());
    }
    fn plan_started(&mut self, planned: &[Option<f64>]) {
        self.planned = planned.to_vec();
        self.started = Instant::now();
        self.last.clear();
    }
    fn case_started(&mut self, i: usize, p: &PlannedCase, condition: &str) {
        let bench = format!("{condition}{}", p.benchmark.id);
        if self.tty {
            eprint!("\r\x1b[K{}", self.case_line(i, &format!("{condition}{}", p.label())));
            let _ = std::io::stderr().flush();
        } else if bench != self.last {
            eprintln!("{}", self.case_line(i, &bench));
        }
        self.last = bench;
    }
    fn plan_done(&mut self) {
        if self.tty {
            eprint!("\r\x1b[K");
        }
    }
    fn round_started(&mut self, k: usize, count: usize, what: &str) {
        match count {
            0 => eprintln!("round {}: {what} in a fresh process", k + 1),
            _ => eprintln!("round {}/{count}: {what} in a fresh process", k + 1),
        }
    }
    fn note(&mut self, text: &str) {
        eprintln!("{text}");
    }
    fn environment_started(&mut self, env: &str, cases: usize) {
        eprintln!("[{env}] starting the environment and running {cases} cases in it");
    }
    fn environment_unusable(&mut self, env: &str, why: &str) {
        eprintln!("[{env}] {why}");
    }
    fn boot_started(&mut self, env: &str, i: usize, n: usize) {
        eprintln!("[{env}] boot {}/{n}", i + 1);
    }
}

/// The reporter a run's process uses: nothing with `--quiet`, else the terminal's.
pub fn for_run(quiet: bool) -> Box<dyn Reporter> {
    if quiet { Box::new(Quiet) } else { Box::new(Terminal::new()) }
}

/// Records events into a shared list, so that tests can check what was
/// said and in which order.
#[cfg(test)]
#[derive(Default, Clone)]
pub(crate) struct Log(pub std::rc::Rc<std::cell::RefCell<Vec<String>>>);

#[cfg(test)]
impl Log {
    fn say(&self, s: String) {
        self.0.borrow_mut().push(s);
    }
    pub(crate) fn lines(&self) -> Vec<String> {
        self.0.borrow().clone()
    }
}

#[cfg(test)]
impl Reporter for Log {
    fn plan_started(&mut self, planned: &[Option<f64>]) {
        self.say(format!("plan {}", planned.len()));
    }
    fn case_started(&mut self, i: usize, p: &PlannedCase, condition: &str) {
        self.say(format!("case {i} {condition}{}", p.benchmark.id));
    }
    fn plan_done(&mut self) {
        self.say("done".into());
    }
    fn round_started(&mut self, k: usize, count: usize, what: &str) {
        self.say(format!("round {k}/{count} {what}"));
    }
    fn environment_started(&mut self, env: &str, cases: usize) {
        self.say(format!("started {env} {cases}"));
    }
    fn environment_unusable(&mut self, env: &str, why: &str) {
        self.say(format!("unusable {env}: {why}"));
    }
    fn boot_started(&mut self, env: &str, i: usize, n: usize) {
        self.say(format!("boot {env} {i}/{n}"));
    }
    fn warning(&mut self, text: &str) {
        self.say(format!("warning {text}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_line_counts_and_estimates() {
        let mut t = Terminal::with_tty(false);
        t.plan_started(&[None; 4]);
        assert_eq!(t.case_line(0, "syscall.getpid"), "[1/4] syscall.getpid");
        assert!(t.case_line(2, "x").starts_with("[3/4, ~"), "{}", t.case_line(2, "x"));
    }

    #[test]
    fn the_estimate_knows_a_fixed_time_case() {
        let mut t = Terminal::with_tty(false);
        // Two short cases took 4 s; an FWQ of 140 s and one short case are left.
        t.plan_started(&[None, None, Some(140.0), None]);
        assert_eq!(t.left_s(2, 4.0), 142.0);
        // After the FWQ (its 140 s taken off what the others took), one short case.
        assert_eq!(t.left_s(3, 144.0), 2.0);
        // With only fixed-time cases done, each other case counts as the average case so far.
        t.plan_started(&[Some(3.0), None]);
        assert_eq!(t.left_s(1, 3.0), 3.0);
    }
}
