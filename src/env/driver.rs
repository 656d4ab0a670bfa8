//! A run across environments: native cases run here; every other
//! environment runs the same arguments in its child and its results come
//! back into this one run, tagged; boot cases are measured here, per
//! environment. An environment that cannot run (no KVM, a guest that hangs)
//! gives every case a reason instead of a number, and the run goes on.

use super::{Env, EnvOptions, boot_once, run_suites};
use crate::registry::Runs;
use crate::results::{CaseResult, CaseStatus, Condition, Metric};
use crate::runner::{self, Execution, Planned, not_measured};
use crate::stats::Summary;
use crate::store::{RunWriter, StoreError};
use crate::watchdog;
use serde_json::{Value, json};

fn native_condition(ex: &Execution) -> Condition {
    Condition {
        load: ex.loads.first().map_or("idle", |l| l.name()).into(),
        isolation: ex.isolations.first().map_or("pinned", |i| i.name()).into(),
        facts: Default::default(),
    }
}

/// Runs `plan` in every environment of `envs`.
pub fn run_envs(
    envs: &[Env],
    plan: &[Planned],
    ex: &Execution,
    writer: &mut RunWriter,
    child_args: &[String],
    o: &EnvOptions,
    boots: usize,
) -> Result<(), StoreError> {
    let (boot, rest): (Vec<Planned>, Vec<Planned>) = plan.iter().cloned().partition(|p| p.benchmark.runs() == Runs::FromHost);
    for &env in envs {
        let (rest, elsewhere): (Vec<Planned>, Vec<Planned>) = rest.iter().cloned().partition(|p| {
            match p.benchmark.runs() {
                Runs::OnlyIn(own) if own == env.name() => true,
                Runs::OnlyIn(own) => !envs.iter().any(|e| e.name() == own) && env != Env::Microvm,
                _ => env != Env::Microvm,
            }
        });
        if env == Env::Microvm {
            for p in &elsewhere {
                let why = "the microvm guest runs only the microvm suite (its exit table); use native, container or qemu-* for the others";
                let mut r = not_measured(p, CaseStatus::NotApplicable, why, native_condition(ex));
                r.environment = Some(env.name().into());
                writer.push(r)?;
            }
        }
        if watchdog::interrupted().is_some() {
            break;
        }
        let name = env.name();
        let mut unusable: Option<String> = None;
        if !rest.is_empty() {
            if env == Env::Native || env == Env::Microvm {
                if env == Env::Microvm {
                    writer
                        .doc
                        .environment
                        .settings
                        .insert(name.into(), json!({"layer": crate::microvm::layer::detect().describe(), "vmm": "oscycles (kvm-ioctls)"}));
                }
                runner::run_rounds(&rest, ex, writer, Some(name))?;
            } else {
                if ex.progress {
                    eprintln!("[{name}] starting the environment and running {} cases in it", rest.len());
                }
                match run_suites(env, child_args, o) {
                    Ok((doc, mut facts)) => {
                        facts.insert(
                            "host_inside".into(),
                            json!({"kernel": doc.host.kernel_release, "cpu": doc.host.cpu_model, "tsc_hz": doc.host.clock.tsc_hz}),
                        );
                        writer.doc.environment.settings.insert(name.into(), Value::Object(facts));
                        for mut r in doc.results.into_iter().filter(|r| crate::registry::find_benchmark(&r.benchmark).is_none_or(|b| b.runs() != Runs::FromHost)) {
                            r.environment = Some(name.into());
                            writer.push(r)?;
                        }
                    }
                    Err(why) => {
                        if ex.progress {
                            eprintln!("[{name}] {why}");
                        }
                        writer.doc.environment.settings.insert(name.into(), json!({"unusable": why}));
                        for p in &rest {
                            let mut r = not_measured(p, CaseStatus::NotApplicable, &why, native_condition(ex));
                            r.environment = Some(name.into());
                            writer.push(r)?;
                        }
                        unusable = Some(why);
                    }
                }
            }
        }
        for p in &boot {
            if watchdog::interrupted().is_some() {
                break;
            }
            let r = measure_boot(env, p, o, boots, unusable.as_deref(), ex);
            writer.push(r)?;
        }
    }
    Ok(())
}

fn measure_boot(env: Env, p: &Planned, o: &EnvOptions, boots: usize, unusable: Option<&str>, ex: &Execution) -> CaseResult {
    let mut r = not_measured(p, CaseStatus::Ok, "", native_condition(ex));
    r.reason = None;
    r.environment = Some(env.name().into());
    if let Some(why) = unusable {
        r.status = CaseStatus::NotApplicable;
        r.reason = Some(why.into());
        return r;
    }
    let t = std::time::Instant::now();
    let mut times = Vec::new();
    for i in 0..boots {
        if ex.progress {
            eprintln!("[{}] boot {}/{boots}", env.name(), i + 1);
        }
        match boot_once(env, o) {
            Ok(x) => times.push(x),
            Err(why) => {
                r.status = if times.is_empty() { CaseStatus::NotApplicable } else { CaseStatus::Failed };
                r.reason = Some(why);
                return r;
            }
        }
    }
    let init: Vec<f64> = times.iter().map(|t| t.0).collect();
    let first: Vec<f64> = times.iter().map(|t| t.1).collect();
    if let (Some(a), Some(b)) = (Summary::of(&init), Summary::of(&first)) {
        r.metrics = vec![Metric::cost("to_init", "s", a), Metric::cost("to_first_result", "s", b)];
    }
    r.details.insert("boots".into(), json!(times));
    r.elapsed_s = t.elapsed().as_secs_f64();
    r
}
