//! What an environment is: the trait every environment implements, where a
//! benchmark's cases stand in one ([`Fit`]), and what one start of it
//! brings back ([`Outcome`], its [`Message`]s).

use super::error::EnvError;
use super::guest::{self, GuestSpec};
use super::options::{EnvOptions, OwnOptions};
use crate::data::results::RunDoc;
use crate::families::bench::Venue;
use crate::run::plan::PlannedCase;
use serde_json::{Map, Value};

/// Where a benchmark's cases stand in one environment of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fit {
    /// Its cases run inside this environment.
    Inside,
    /// The host measures it by starting this environment (boot time).
    FromHost,
    /// Another environment of the run measures it: not here, nothing said.
    Elsewhere,
    /// It cannot run here: every case gets this reason.
    Not(String),
}

/// One place to run suites in.
pub trait Environment: Sync {
    /// Its name in `--env`, in the results and in messages.
    fn name(&self) -> &'static str;

    /// What it is, for `--env`'s help (a phrase after its name).
    fn about(&self) -> &'static str;

    /// Its own options on `oscycles run`, if it has any.
    fn options(&self) -> Option<OwnOptions> {
        None
    }

    /// Whether, with these options, its guest's TSC counts guest
    /// instructions (QEMU's instruction counter, `--accel icount`): its
    /// cells are then guest instructions, and what measures time is n/a.
    fn counts_instructions(&self, _o: &EnvOptions) -> bool {
        false
    }

    /// Its init hook, called first by the binary: where this process is the
    /// first process of one of its guests, it serves the guest (measuring
    /// with the library's `prepared::measure`) and never returns; elsewhere
    /// it returns at once.
    fn init(&self) {}

    /// Where the cases of a benchmark measured as `runs` says stand here,
    /// in a run over `envs`: a benchmark that belongs to one environment
    /// (`Venue::OnlyIn`) runs there when the run has it, else everywhere.
    fn fit(&self, runs: Venue, envs: &[Env]) -> Fit {
        match runs {
            Venue::Anywhere => Fit::Inside,
            Venue::FromHost => Fit::FromHost,
            Venue::OnlyIn(own) if own == self.name() => Fit::Inside,
            Venue::OnlyIn(own) if envs.iter().any(|e| e.name() == own) => Fit::Elsewhere,
            Venue::OnlyIn(_) => Fit::Inside,
        }
    }

    /// Whether its cases run in this process (native; microvm, whose cases
    /// start their own VMs) rather than in a child it launches.
    fn in_process(&self) -> bool {
        false
    }

    /// Facts about it known without starting it, recorded when its cases
    /// run in this process.
    fn facts(&self) -> Map<String, Value> {
        Map::new()
    }

    /// Refuses, before anything is measured, what cannot work with these
    /// options (qemu: a machine type QEMU does not have). The options all
    /// environments share are checked by [`EnvOptions::check`].
    fn check(&self, _o: &EnvOptions) -> Result<(), EnvError> {
        Ok(())
    }

    /// The columns it is in a run with these options: None, itself; or
    /// one environment per setting the run measures side by side (uml and
    /// gvisor at several helper placements, [`super::helpers::At`]).
    fn columns(&self, _o: &EnvOptions) -> Result<Option<Vec<Env>>, EnvError> {
        Ok(None)
    }

    /// Starts it once with `spec` to measure `plan` (the cases the run
    /// layer planned for it: a child of oscycles plans the same from the
    /// spec; a guest program is given them), watches it within the
    /// timeouts of `o`, and collects what it sends.
    fn launch(&self, spec: &GuestSpec, plan: &[PlannedCase], o: &EnvOptions) -> Result<Outcome, EnvError>;

    /// The child's side, in `oscycles __env-child --env NAME`: say hello,
    /// measure the spec (`prepared::measure`), send the document back. Returns the
    /// exit code. A QEMU guest's child is its /init ([`guest::main`]), which
    /// serves the same way.
    fn serve(&self, spec: &GuestSpec) -> u8 {
        guest::send(&mut std::io::stdout(), "hello", 0, b"start");
        guest::serve_here(spec, guest::facts_inside())
    }
}

/// An environment, as the run names and passes them.
pub type Env = &'static dyn Environment;

impl std::fmt::Debug for dyn Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A framed message from a child, with when it arrived (seconds since the
/// child was started).
#[derive(Debug, Clone)]
pub struct Message {
    pub kind: String,
    pub bytes: Vec<u8>,
    pub at_s: f64,
}

/// What came back from one start of an environment.
#[derive(Debug)]
pub struct Outcome {
    pub messages: Vec<Message>,
    /// The child's exit status, if it exited.
    pub status: Option<std::process::ExitStatus>,
    /// Facts of how it was started (command line, machine, kernel...).
    pub facts: Map<String, Value>,
    /// The end of its console or stderr, for error messages.
    pub log_tail: String,
    /// The run document, where the host made it (a guest program's, of
    /// its samples); else the child sends it as its `run` message.
    pub doc: Option<Box<RunDoc>>,
}

impl Outcome {
    pub fn first(&self, kind: &str) -> Option<&Message> {
        self.messages.iter().find(|m| m.kind == kind)
    }

    /// When the results arrived (seconds since the start): the `run`
    /// message, or the `samples` a guest program sent.
    pub fn results_at(&self) -> Option<f64> {
        self.first("run").or_else(|| self.first("samples")).map(|m| m.at_s)
    }
}
