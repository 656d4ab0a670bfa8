//! `thread`, an environment defined in a test: its "child" is a thread of
//! this process that serves the spec as a guest's /init does (hello, its
//! facts, the run document, all framed as on a console), measuring the echo
//! family with the real executor. Its own option, `--thread-env-tag`, is a
//! clap `Args` type added to a command by `env::with_options`, read back
//! typed from the parsed options, and recorded among its facts. Its own
//! error ([`ThreadError`]) reaches the run wrapped as it is, as the errors of
//! oscycles' environments do: no list in oscycles names it.

use super::echo::ECHO_SUITE;
use oscycles::data::documents::RunWriter;
use oscycles::data::results::RunStatus;
use oscycles::measure::clock;
use oscycles::measure::harness::HarnessConfig;
use oscycles::measure::placement;
use oscycles::run::env::environment::{Environment, Message, Outcome};
use oscycles::run::env::error::{EnvError, OwnError};
use oscycles::run::env::frame::Decoder;
use oscycles::run::env::guest::{self, GuestSpec};
use oscycles::run::env::options::{EnvOptions, OwnOptions};
use oscycles::run::execute::Execution;
use oscycles::run::plan::plan;
use oscycles::run::prepared;
use oscycles::run::progress::Quiet;
use oscycles::run::spec::RunSpec;
use std::time::Duration;

/// The fact its tag is recorded as.
pub const TAG: &str = "tag";

/// The thread environment's own options.
#[derive(clap::Args, Debug)]
pub struct ThreadArgs {
    /// A word the thread environment records among its facts (a test's option)
    #[arg(long = "thread-env-tag", value_name = "WORD", default_value = "plain")]
    pub tag: String,
}

/// The tag that makes the thread environment refuse to start.
pub const REFUSE: &str = "refuse";

/// What goes wrong in the thread environment.
#[derive(Debug, thiserror::Error)]
pub enum ThreadError {
    #[error("thread: told to refuse (--thread-env-tag {0})")]
    Refused(String),
}

impl OwnError for ThreadError {}

pub struct ThreadEnv;

impl Environment for ThreadEnv {
    fn name(&self) -> &'static str {
        "thread"
    }
    fn about(&self) -> &'static str {
        "a thread of this process, serving the spec as a guest would (a test's environment)"
    }
    fn options(&self) -> Option<OwnOptions> {
        Some(OwnOptions::of::<ThreadArgs>("thread"))
    }
    fn launch(&self, spec: &GuestSpec, _plan: &[oscycles::run::plan::PlannedCase], o: &EnvOptions) -> Result<Outcome, EnvError> {
        let own: ThreadArgs = o.own.get()?;
        if own.tag == REFUSE {
            Err(ThreadError::Refused(own.tag.clone()))?;
        }
        let dir = tempfile::tempdir().map_err(EnvError::io("a directory for the thread's results"))?;
        let console = std::thread::scope(|s| {
            s.spawn(|| {
                let mut out: Vec<u8> = Vec::new();
                guest::send(&mut out, "hello", 0, b"start");
                let facts = [(TAG.to_string(), serde_json::Value::from(own.tag.clone()))].into_iter().collect();
                guest::serve_with(&mut out, spec, facts, &dir.path().join("results"), &run_echo);
                out
            })
            .join()
        })
        .map_err(|_| EnvError::Child { env: "thread", message: "its thread panicked".into() })?;
        let mut frames = Decoder::default();
        frames.feed(&String::from_utf8_lossy(&console));
        let messages = frames.take().into_iter().map(|(kind, bytes)| Message { kind, bytes, at_s: 0.0 }).collect();
        Ok(Outcome { messages, status: None, facts: Default::default(), log_tail: String::new(), doc: None })
    }
}

/// The thread's `oscycles run`: the echo suite's cases of `spec`, measured
/// and saved in its results directory. Exit code 0 when complete.
fn run_echo(spec: &RunSpec) -> u8 {
    let cpus: Vec<usize> = placement::allowed_cpus().into_iter().take(2).collect();
    let ex = Execution::in_process(cpus.clone(), HarnessConfig::tiny(), spec.results.clone());
    let plan = plan(&[&ECHO_SUITE], spec.benchmarks.as_deref());
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let Ok(mut w) = RunWriter::create(&spec.results, spec.document(&["thread"], plan.len(), cpus, ex.full, clock)) else { return 1 };
    match prepared::execute(&plan, &ex, &mut w, &mut Quiet) {
        Ok(RunStatus::Complete) => 0,
        _ => 1,
    }
}
