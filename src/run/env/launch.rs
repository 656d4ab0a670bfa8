//! Starting an environment from the host: a child `oscycles __env-child`
//! watched to its end ([`launch_child`]), a spec's run document brought back
//! ([`run_in`]), one start timed ([`boot_once`]).

use super::environment::{Env, Environment, Outcome};
use super::error::EnvError;
use super::frame;
use super::guest::{self, GuestSpec};
use super::options::EnvOptions;
use super::output::tail;
use super::supervise::supervise;
use crate::data::results::RunDoc;
use crate::families::bench::schema::boot;
use crate::run::plan::PlannedCase;
use serde_json::{Map, Value};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Starts `oscycles __env-child --env NAME` with `spec` and watches it;
/// `ended` is told the child's pid when it has ended (to clean up after it).
pub fn launch_child(env: &dyn Environment, spec: &GuestSpec, o: &EnvOptions, ended: impl FnOnce(u32)) -> Result<Outcome, EnvError> {
    let mut cmd = Command::new(&o.exe);
    cmd.arg("__env-child").arg("--env").arg(env.name());
    cmd.arg("--spec").arg(serde_json::to_string(spec)?);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    crate::measure::watchdog::die_with_parent(&mut cmd);
    let start = Instant::now();
    let child = cmd.spawn().map_err(EnvError::io(format!("starting {}", o.exe.display())))?;
    let pid = child.id();
    let end = supervise(child, start, o.init_timeout, o.run_timeout);
    ended(pid);
    if let Some(w) = end.why {
        return Err(EnvError::Stopped { env: env.name(), why: w });
    }
    let mut facts = Map::new();
    facts.insert("start".into(), Value::from(format!("oscycles __env-child ({})", env.name())));
    Ok(Outcome { messages: end.messages, status: end.status, facts, log_tail: tail(&end.stderr), doc: None })
}

/// Runs `plan` (with `spec`) in `env` and returns the run document it
/// sent back, or the host made of what it sent, with the facts of how it
/// was started and what it said about itself.
pub fn run_in(env: Env, spec: &GuestSpec, plan: &[PlannedCase], o: &EnvOptions) -> Result<(RunDoc, Map<String, Value>), EnvError> {
    let mut out = env.launch(spec, plan, o)?;
    if let Some(e) = out.first("error") {
        return Err(EnvError::Child {
            env: env.name(),
            message: frame::plain(&String::from_utf8_lossy(&e.bytes), crate::data::results::check::MAX_TEXT),
        });
    }
    let doc = match (out.doc.take(), out.first("run")) {
        (Some(doc), _) => *doc,
        (None, Some(m)) => serde_json::from_slice(&m.bytes).map_err(|source| EnvError::BadResults { env: env.name(), source })?,
        (None, None) => {
            let status = out.status.map_or("killed".into(), |s| s.to_string());
            return Err(EnvError::NoResults { env: env.name(), status, tail: out.log_tail });
        }
    };
    let mut facts = out.facts;
    if let Some(env_facts) = out.messages.iter().find(|m| m.kind == "facts")
        && let Ok(Value::Object(f)) = serde_json::from_slice::<Value>(&env_facts.bytes)
    {
        facts.extend(f);
    }
    Ok((doc, facts))
}

/// One start of `env` running the smallest real run ([`RunSpec::boot`](crate::run::spec::RunSpec::boot)):
/// seconds from start to the hello of its /init, and to its first result;
/// and the faults of earlier starts the environment repeated (Xen under
/// TCG), if any: the times are the last start's own.
pub fn boot_once(env: Env, o: &EnvOptions, seed: u64) -> Result<(f64, f64, Option<Value>), EnvError> {
    // One round: the first result is one small measurement, not the default
    // rounds (each a fresh process) a run takes.
    let run = crate::run::spec::RunSpec { rounds: 1, ..crate::run::spec::RunSpec::boot(seed) };
    let plan = crate::run::prepared::plan_part(&run).map_err(|e| EnvError::Plan { env: env.name(), why: e.to_string() })?;
    let spec = GuestSpec { run, mode: guest::GuestMode::Run, vm_cpus: o.vm_cpus, vm_mem_mib: o.vm_mem_mib };
    let mut out = env.launch(&spec, &plan, o)?;
    let hello = out.first("hello").ok_or_else(|| EnvError::NoHello { env: env.name(), tail: out.log_tail.clone() })?;
    let to_result = out.results_at().ok_or_else(|| EnvError::NoResult { env: env.name(), tail: out.log_tail.clone() })?;
    let to_init = hello.at_s;
    Ok((to_init, to_result, out.facts.remove(boot::RESTARTED_AFTER)))
}
