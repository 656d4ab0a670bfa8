//! Running suites: a prepared plan ([`Prepared`]) in every environment of the
//! run ([`run`]: in this process, in rounds, or in a child an environment
//! launches), under every condition ([`crate::run::execute::run_plan`]); each
//! result written to the run's document as soon as it exists ([`RunWriter`]),
//! a [`Reporter`] told how far it got, a SIGINT or SIGTERM ending it cleanly.

use crate::data::documents::{DocumentError, RunWriter};
use crate::data::results::adaptive::Auto;
use crate::data::results::{CaseResult, CaseStatus, Condition, RunStatus};
use crate::families::bench::family::{FromHost, StartFailed, Started, Starter};
use crate::measure::watchdog;
use crate::run::env::environment::{Env, Fit};
use crate::run::env::guest::GuestSpec;
use crate::run::env::launch;
use crate::run::env::options::EnvOptions;
use crate::run::execute::{Destination, Execution, condition};
use crate::run::isolation::Isolation;
use crate::run::load::LoadKind;
use crate::run::plan::{PlannedCase, benchmark_ids, blank, not_measured};
use crate::run::prepared::{Prepared, finish};
use crate::run::progress::Reporter;
use crate::run::rounds::settle::{self, Columns, Layout, Step, interleaved_order};
use crate::run::rounds::{self, Repeated, merge_round, plan_position, round_ids};
use crate::run::spec::RunSpec;
use serde_json::{Value, json};
use std::time::Instant;

/// The environments of a run and how they are started.
pub struct Environments {
    pub list: Vec<Env>,
    pub options: EnvOptions,
}

/// Runs the prepared plan in every environment in turn and finishes the
/// document: each environment runs the cases that fit it (in this process,
/// or in a child it launches with its part of the spec), and the host times
/// its starts for the cases measured from the host. An environment that
/// cannot run (no KVM, a guest that hangs) gives its cases a reason instead
/// of a number, and the run goes on. Returns how the run ended.
pub fn run(p: &Prepared, envs: &Environments, writer: &mut RunWriter, rep: &mut dyn Reporter) -> Result<RunStatus, DocumentError> {
    let (ex, plan) = (&p.execution, &p.plan[..]);
    let mut across = EnvironmentsRun { envs: &envs.list, ex, spec: &ex.spec, o: &envs.options, writer, rep };
    let interleaved = ex.exe.as_deref().filter(|_| interleaves(envs.list.len(), &ex.spec));
    if let Some(exe) = interleaved {
        across.interleaved(plan, exe)?;
    }
    for &env in envs.list.iter().filter(|_| interleaved.is_none()) {
        if watchdog::interrupted().is_some() {
            break;
        }
        across.environment(env, plan)?;
    }
    let status = finish(across.writer)?;
    // A run that measured nothing (every case failed or n/a) is a failure,
    // said in the document too, with the reasons (issue 43, item 8).
    let results = &across.writer.doc.results;
    let measured_nothing = !results.is_empty() && !results.iter().any(|r| r.status == CaseStatus::Ok);
    if status == RunStatus::Complete && measured_nothing {
        across.writer.doc.reason = Some(crate::data::results::nothing_measured(results));
        across.writer.finish(RunStatus::Failed)?;
        return Ok(RunStatus::Failed);
    }
    Ok(status)
}

/// A run across environments, while it goes.
struct EnvironmentsRun<'a> {
    envs: &'a [Env],
    ex: &'a Execution,
    spec: &'a RunSpec,
    o: &'a EnvOptions,
    writer: &'a mut RunWriter,
    rep: &'a mut dyn Reporter,
}

fn tagged(mut r: CaseResult, env: Env) -> CaseResult {
    r.environment = Some(env.name().into());
    r
}

/// Whether a run's environments are interleaved by round: several of them,
/// several rounds (a fixed number, or `--rounds auto` with the columns
/// judged against each other: with `--until-verdict` each environment's
/// cells settle against the baseline in turn), and not `--no-interleave`.
fn interleaves(envs: usize, spec: &RunSpec) -> bool {
    let against_baseline = spec.auto.as_ref().is_some_and(|a| a.until_verdict.is_some());
    envs > 1 && spec.rounds_here() > 1 && !against_baseline && !spec.sequential_envs
}

/// One environment of an interleaved run: its cases measured inside, those
/// measured from the host, and why it cannot run (if it cannot).
type Part = (Env, Vec<PlannedCase>, Vec<PlannedCase>, Option<String>);

/// The tag the results of `env` carry in a run of `envs` environments.
fn self_tag(env: Env, envs: usize) -> Option<&'static str> {
    (envs > 1).then(|| env.name())
}

impl EnvironmentsRun<'_> {
    /// The condition recorded for what does not run under a load of its
    /// own (cases of another environment, boots): the first of the run.
    fn first_condition(&self) -> Condition {
        condition(
            self.spec.loads.first().copied().unwrap_or(LoadKind::Idle),
            self.spec.isolations.first().copied().unwrap_or(Isolation::Pinned),
            self.spec.preempts.first().copied(),
        )
    }

    /// What of the plan runs inside `env` and what the host times (its
    /// starts); what cannot run there is recorded with the reason.
    fn split(&mut self, env: Env, plan: &[PlannedCase]) -> Result<(Vec<PlannedCase>, Vec<PlannedCase>), DocumentError> {
        let (mut inside, mut from_host) = (Vec::new(), Vec::new());
        let counted = env.counts_instructions(self.o);
        for p in plan {
            let fit = match env.fit(p.benchmark.venue(), self.envs) {
                Fit::Inside | Fit::FromHost if counted && p.benchmark.measures_time() => Fit::Not(untimed(env, p)),
                fit => fit,
            };
            match fit {
                Fit::Inside => inside.push(p.clone()),
                Fit::FromHost => from_host.push(p.clone()),
                Fit::Elsewhere => {}
                Fit::Not(why) => self.writer.push(tagged(not_measured(p, CaseStatus::NotApplicable, &why, self.first_condition()), env))?,
            }
        }
        Ok((inside, from_host))
    }

    /// The environment's own facts, where it runs in this process.
    fn note_facts(&mut self, env: Env) {
        let facts = env.facts();
        if !facts.is_empty() {
            self.writer.doc.environment.settings.insert(env.name().into(), Value::Object(facts));
        }
    }

    /// The tag of this environment's results: a run in one environment
    /// leaves them untagged, as run documents always had them (readers take
    /// the run's).
    fn tag(&self, env: Env) -> Option<&'static str> {
        self_tag(env, self.envs.len())
    }

    /// The plan in one environment: what cannot run there says why, what
    /// fits runs, then the host times its starts.
    fn environment(&mut self, env: Env, plan: &[PlannedCase]) -> Result<(), DocumentError> {
        let (inside, from_host) = self.split(env, plan)?;
        if watchdog::interrupted().is_some() {
            return Ok(());
        }
        let unusable = match (inside.is_empty(), env.in_process()) {
            (true, _) => None,
            (false, true) => {
                self.note_facts(env);
                let tag = self.tag(env);
                rounds::run(&inside, self.ex, &mut Destination { writer: &mut *self.writer, env: tag, rep: &mut *self.rep })?;
                None
            }
            (false, false) => self.in_child(env, &inside, None, None)?,
        };
        self.measure_from_host(env, &from_host, unusable.as_deref())
    }

    /// The cases of `env` measured from the host (boot time), each by its
    /// family with an [`EnvStarter`] of `env`.
    fn measure_from_host(&mut self, env: Env, from_host: &[PlannedCase], unusable: Option<&str>) -> Result<(), DocumentError> {
        for p in from_host {
            if watchdog::interrupted().is_some() {
                break;
            }
            let r = self.host_case(env, p, unusable);
            self.writer.push(r)?;
        }
        Ok(())
    }

    /// The environments interleaved by round: round k of every environment
    /// runs before round k+1 of any, in an order that alternates (forward,
    /// then backward), so that drift of the host falls on every column
    /// alike. An environment in this process runs each round in a fresh
    /// process; one in a child (container, guest) starts a child per round.
    /// An environment that cannot start in a round is not tried again. With
    /// `--rounds auto`, until the columns' cells have paired verdicts.
    fn interleaved(&mut self, plan: &[PlannedCase], exe: &std::path::Path) -> Result<(), DocumentError> {
        let mut parts: Vec<Part> = Vec::new();
        for &env in self.envs {
            let (inside, from_host) = self.split(env, plan)?;
            parts.push((env, inside, from_host, None));
        }
        let first = self.writer.doc.results.len();
        self.writer.update(|doc| doc.settings.interleaved = true)?;
        match self.spec.auto.clone() {
            Some(auto) => self.until_verdicts(&mut parts, exe, first, &auto)?,
            None => self.by_round(&mut parts, exe, first)?,
        }
        self.writer.update(|doc| {
            // Grouped by environment, each in plan order.
            let env_position =
                |r: &CaseResult| parts.iter().position(|p| r.environment.as_deref() == self_tag(p.0, parts.len())).unwrap_or(0);
            doc.results[first..].sort_by_key(|r| (env_position(r), plan_position(plan, r)));
            rounds::estimate_all(doc, self.spec.seed);
        })?;
        for (env, _, from_host, unusable) in &parts {
            self.measure_from_host(*env, from_host, unusable.as_deref())?;
        }
        Ok(())
    }

    /// The spec's fixed number of rounds, interleaved.
    fn by_round(&mut self, parts: &mut [Part], exe: &std::path::Path, first: usize) -> Result<(), DocumentError> {
        let rounds = self.spec.rounds;
        for k in 0..rounds {
            for i in interleaved_order(parts.len(), k) {
                // Under the instruction counter one round is enough: the counts repeat.
                if k > 0 && parts[i].0.counts_instructions(self.o) {
                    continue;
                }
                if self.column_round(&mut parts[i], exe, first, (k, rounds), None)? == Step::Interrupted {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// `--rounds auto` across the environments: rounds interleaved until
    /// every cell has a paired verdict against the reference column (native
    /// where it is one, else the first, as the tables compare them) or the
    /// budget ends (`rounds::columns`); the outcome goes into the document.
    fn until_verdicts(&mut self, parts: &mut [Part], exe: &std::path::Path, first: usize, auto: &Auto) -> Result<(), DocumentError> {
        let names: Vec<String> = parts.iter().map(|p| p.0.name().to_string()).collect();
        let layout = Layout {
            tags: parts.iter().map(|p| self.tag(p.0).map(String::from)).collect(),
            reference: names.iter().position(|n| n == "native").unwrap_or(0),
            names,
            first,
            seed: self.spec.seed,
            across_conditions: false,
            baseline: self.ex.rounds.as_ref().and_then(|r| r.baseline.as_ref()),
        };
        let t = Instant::now();
        let outcome = settle::drive(auto, &layout, &mut EnvColumns { run: self, parts, exe, first }, &mut || t.elapsed())?;
        outcome.describe().iter().for_each(|line| self.rep.note(line));
        self.writer.update(|doc| {
            doc.settings.rounds = outcome.rounds;
            doc.settings.adaptive.push(outcome);
        })
    }

    /// Round k (of `count`, 0: as many as needed) of one environment, of
    /// the cases labelled `cases` (None: all): in a fresh process here, or
    /// in a child of its own.
    fn column_round(
        &mut self,
        part: &mut Part,
        exe: &std::path::Path,
        first: usize,
        (k, count): (usize, usize),
        cases: Option<&[String]>,
    ) -> Result<Step, DocumentError> {
        if watchdog::interrupted().is_some() {
            return Ok(Step::Interrupted);
        }
        let (env, tag) = (part.0, self.tag(part.0));
        if part.3.is_some() || part.1.is_empty() {
            return Ok(Step::Nothing);
        }
        let listed = |p: &&PlannedCase| cases.is_none_or(|c| c.contains(&p.label()));
        if env.in_process() {
            if k == 0 {
                self.note_facts(env);
            }
            let Some(r) = self.ex.rounds.as_ref() else { return Ok(Step::Nothing) };
            let rounds = Repeated { exe, plan: &part.1, r, spec: self.spec, env: tag, first };
            return rounds.column_round((k, count), cases, self.writer, &mut *self.rep);
        }
        let ids = round_ids(&part.1, k, &self.writer.doc.results[first..], tag, None);
        let this: Vec<PlannedCase> = part.1.iter().filter(|p| ids.contains(&p.benchmark.id)).filter(listed).cloned().collect();
        if this.is_empty() {
            return Ok(Step::Nothing);
        }
        self.rep.round_started(k, count, &format!("[{}] {} cases", env.name(), this.len()));
        part.3 = self.in_child(env, &this, Some(k), cases)?;
        Ok(if part.3.is_some() { Step::Unusable } else { Step::Measured })
    }

    /// Runs `plan` in a child of `env` and takes its results in (round k
    /// of an interleaved run: only that round, merged into the cells of the
    /// rounds before); returns why the environment is unusable, if it is.
    fn in_child(
        &mut self,
        env: Env,
        plan: &[PlannedCase],
        round: Option<usize>,
        cases: Option<&[String]>,
    ) -> Result<Option<String>, DocumentError> {
        let name = env.name();
        if round.is_none_or(|k| k == 0) {
            self.rep.environment_started(name, plan.len());
        }
        let run = self.spec.for_environment(benchmark_ids(plan));
        let spec = GuestSpec {
            // Counted in the first round only, as rounds in this process are.
            run: RunSpec {
                round,
                cases: cases.map(<[String]>::to_vec).or(run.cases.clone()),
                no_counters: !self.spec.counts_in(round.unwrap_or(0)),
                ..run
            },
            mode: self.o.guest_mode,
            vm_cpus: self.o.vm_cpus,
            vm_mem_mib: self.o.vm_mem_mib,
        };
        let conditions = self.spec.conditions();
        let returned = launch::run_in(env, &spec, plan, self.o).map_err(|e| e.to_string());
        let returned = returned.and_then(|(doc, facts)| within_plan(doc, plan, conditions).map(|(doc, dropped)| (doc, facts, dropped)));
        match (returned, round) {
            (Ok((doc, mut facts, dropped)), _) => {
                if dropped > 0 {
                    self.rep.warning(&format!("[{name}] {dropped} results the environment returned were not in its plan; not taken"));
                }
                facts.insert(
                    "host_inside".into(),
                    json!({"kernel": doc.host.kernel_release, "cpu": doc.host.cpu_model, "tsc_hz": doc.host.clock.tsc_hz,
                        "counts_instructions": doc.host.clock.counts_instructions, "cmdline": doc.host.kernel_cmdline,
                        "harness_batches": doc.settings.harness.batches}),
                );
                self.writer.doc.environment.settings.insert(name.into(), Value::Object(facts));
                match round {
                    // One write for them all (not one per result).
                    None => self.writer.update(|run| run.results.extend(doc.results.into_iter().map(|r| tagged(r, env))))?,
                    Some(k) => {
                        merge_round(self.writer, Some(name), k, doc, 0, true)?;
                    }
                }
                Ok(None)
            }
            // A later round that fails leaves the rounds before standing.
            (Err(why), Some(k)) if k > 0 => {
                self.rep.warning(&format!("[{name}] round {} failed, no more rounds there: {why}", k + 1));
                Ok(Some(why))
            }
            (Err(why), _) => {
                self.rep.environment_unusable(name, &why);
                self.writer.doc.environment.settings.insert(name.into(), json!({"unusable": why}));
                for p in plan {
                    self.writer.push(tagged(not_measured(p, CaseStatus::NotApplicable, &why, self.first_condition()), env))?;
                }
                Ok(Some(why))
            }
        }
    }

    /// A case of `env` measured from the host: its family starts `env`
    /// through an [`EnvStarter`] as often as it needs.
    fn host_case(&mut self, env: Env, p: &PlannedCase, unusable: Option<&str>) -> CaseResult {
        let mut r = tagged(CaseResult { condition: Some(self.first_condition()), ..blank(p) }, env);
        if let Some(why) = unusable {
            r.status = CaseStatus::NotApplicable;
            r.reason = Some(why.into());
            return r;
        }
        let t = Instant::now();
        let mut starter = EnvStarter { env, o: self.o, seed: self.spec.seed, starts: self.spec.boots(), rep: &mut *self.rep };
        match p.benchmark.run_from_host(&mut starter) {
            Ok(FromHost { metrics, details, note }) => (r.metrics, r.details, r.reason) = (metrics, details, note),
            Err(e) => {
                let (status, why) = e.into_status();
                (r.status, r.reason) = (status, Some(why));
            }
        }
        r.elapsed_s = t.elapsed().as_secs_f64();
        r
    }
}

/// The environments of an interleaved run as `rounds::columns` measures
/// them, round by round.
struct EnvColumns<'r, 'a> {
    run: &'r mut EnvironmentsRun<'a>,
    parts: &'r mut [Part],
    exe: &'r std::path::Path,
    first: usize,
}

impl Columns<DocumentError> for EnvColumns<'_, '_> {
    fn measure(&mut self, i: usize, k: usize, cases: Option<&[String]>) -> Result<Step, DocumentError> {
        self.run.column_round(&mut self.parts[i], self.exe, self.first, (k, 0), cases)
    }
    fn doc(&self) -> &crate::data::results::RunDoc {
        &self.run.writer.doc
    }
    fn change(&mut self, f: &mut dyn FnMut(&mut crate::data::results::RunDoc)) -> Result<(), DocumentError> {
        self.run.writer.update(f)
    }
    fn note(&mut self, line: &str) {
        self.run.rep.note(line);
    }
}

/// Why a case that measures time is n/a in an environment under QEMU's
/// instruction counter.
fn untimed(env: Env, p: &PlannedCase) -> String {
    format!(
        "{} in {} under QEMU's instruction counter (--accel icount): it measures time, and the guest's clock there advances \
         one nanosecond per instruction, so that time is fictitious (--accel tcg measures it in emulated time)",
        p.benchmark.id,
        env.name()
    )
}

/// What a child returned, as the run takes it: the document check passed
/// (else why not, and nothing of it is taken), and only results of planned
/// cases, at most one per case and condition; with how many were dropped.
fn within_plan(
    mut doc: crate::data::results::RunDoc,
    plan: &[PlannedCase],
    conditions: usize,
) -> Result<(crate::data::results::RunDoc, usize), String> {
    crate::data::results::check::check(&doc).map_err(|e| format!("the results it returned fail the document check: {e}"))?;
    let n = doc.results.len();
    let planned = |r: &CaseResult| plan.iter().any(|p| p.benchmark.id == r.benchmark && p.params == r.params);
    doc.results = std::mem::take(&mut doc.results).into_iter().filter(planned).take(plan.len() * conditions).collect();
    let kept = doc.results.len();
    Ok((doc, n - kept))
}

/// One environment of the run, as a family measured from the host starts it.
struct EnvStarter<'a> {
    env: Env,
    o: &'a EnvOptions,
    seed: u64,
    starts: usize,
    rep: &'a mut dyn Reporter,
}

impl Starter for EnvStarter<'_> {
    fn starts(&self) -> usize {
        self.starts
    }

    fn start_once(&mut self, i: usize) -> Result<Started, StartFailed> {
        self.rep.boot_started(self.env.name(), i, self.starts);
        let (to_init_s, to_first_result_s, restarted_after) =
            launch::boot_once(self.env, self.o, self.seed).map_err(|e| StartFailed(e.to_string()))?;
        Ok(Started { to_init_s, to_first_result_s, restarted_after })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::harness::HarnessConfig;
    use crate::run::plan::{keep_where, plan};
    use crate::run::registry::Suite;
    use std::time::Duration;

    #[test]
    fn where_keeps_matching_values_and_leaves_cases_without_the_parameter() {
        let suites = [crate::run::registry::find_suite("lmbench").unwrap()];
        let only: Vec<String> = ["ctx.ring", "bw.mem-rd"].map(String::from).to_vec();
        let all = plan(&suites, Some(&only));
        let filters = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
        let mut p = all.clone();
        keep_where(&mut p, &filters(&[("procs", "2"), ("ws_kib", "0"), ("ws_kib", "16")]), true).unwrap();
        let rings: Vec<String> = p.iter().filter(|c| c.benchmark.id == "ctx.ring").map(PlannedCase::label).collect();
        assert_eq!(rings, ["ctx.ring procs=2 ws_kib=0", "ctx.ring procs=2 ws_kib=16"]);
        let others = |p: &[PlannedCase]| p.iter().filter(|c| c.benchmark.id != "ctx.ring").count();
        assert!(others(&p) > 0 && others(&p) == others(&all), "cases without the parameters are all kept");
        let mut p = all.clone();
        let e = keep_where(&mut p, &filters(&[("nosuch", "1")]), true).unwrap_err().to_string();
        assert!(e.contains("procs (2, 3, 4, 10)"), "{e}");
        // A round or an environment's child has part of the plan: a
        // parameter only the rest has restricts nothing there.
        keep_where(&mut p, &filters(&[("nosuch", "1")]), false).unwrap();
        assert_eq!(p.len(), all.len());
        let mut p: Vec<PlannedCase> = all.iter().filter(|c| c.benchmark.id == "ctx.ring").cloned().collect();
        let e = keep_where(&mut p, &filters(&[("procs", "99")]), false).unwrap_err().to_string();
        assert!(e.contains("keeps no case"), "{e}");
        let mut p = all.clone();
        keep_where(&mut p, &[], true).unwrap();
        assert_eq!(p.len(), all.len(), "no filter keeps everything");
    }
    use crate::run::env::environment::{Environment, Message, Outcome};
    use crate::run::env::error::EnvError;
    use crate::run::progress::Log;

    /// An environment that starts nothing (as hyperfine's mock executor runs
    /// no command): its "child" says hello and sends back a document with
    /// one result per benchmark of the spec; or it never comes up.
    struct Fake {
        name: &'static str,
        up: bool,
    }

    impl Environment for Fake {
        fn name(&self) -> &'static str {
            self.name
        }
        fn about(&self) -> &'static str {
            "a test's environment"
        }
        fn launch(&self, spec: &GuestSpec, _plan: &[crate::run::plan::PlannedCase], _o: &EnvOptions) -> Result<Outcome, EnvError> {
            if !self.up {
                return Err(EnvError::Stopped { env: self.name, why: "did not reach its /init within 1 s".into() });
            }
            let suites: Vec<&'static Suite> = spec.run.suites.iter().map(|s| crate::run::registry::find_suite(s).unwrap()).collect();
            let mut doc = spec.run.document(&["native"], 0, vec![0], HarnessConfig::tiny(), crate::measure::clock::known_tsc(1e9));
            for p in plan(&suites, spec.run.benchmarks.as_deref()) {
                doc.results.push(not_measured(&p, CaseStatus::Ok, "measured inside", condition(LoadKind::Idle, Isolation::Pinned, None)));
            }
            let msg = |kind: &str, bytes: Vec<u8>, at_s| Message { kind: kind.into(), bytes, at_s };
            let messages = vec![msg("hello", vec![], 0.1), msg("run", serde_json::to_vec(&doc).unwrap(), 0.2)];
            // As Xen under TCG says a start it repeated after a triple fault.
            let facts =
                [(crate::families::bench::schema::boot::RESTARTED_AFTER.to_string(), json!(["d0v0 Triple fault"]))].into_iter().collect();
            Ok(Outcome { messages, status: None, facts, log_tail: String::new(), doc: None })
        }
    }

    static UP: Fake = Fake { name: "fake", up: true };
    static UP2: Fake = Fake { name: "fake2", up: true };
    static DOWN: Fake = Fake { name: "down", up: false };

    fn options(work: &std::path::Path) -> EnvOptions {
        EnvOptions {
            exe: "/nonexistent/oscycles".into(),
            work: work.into(),
            kernel: None,
            vm_mem_mib: 128,
            vm_cpus: 1,
            cpus: vec![0],
            init_timeout: Duration::from_secs(1),
            run_timeout: Duration::from_secs(1),
            guest_mode: crate::run::env::guest::GuestMode::Run,
            own: crate::run::env::options::EnvArgs::defaults().unwrap(),
            keep_console: None,
        }
    }

    #[test]
    fn one_runner_goes_over_environments_that_launch_children() {
        let tmp = tempfile::tempdir().unwrap();
        let suites: Vec<&'static Suite> = ["syscall", "microvm", "boot"].map(|s| crate::run::registry::find_suite(s).unwrap()).to_vec();
        let only: Vec<String> = ["syscall.getpid", "microvm.cpuid", "boot.start"].map(String::from).to_vec();
        let plan = plan(&suites, Some(&only));
        assert_eq!(plan.iter().map(|p| p.benchmark.venue()).filter(|r| *r == crate::families::bench::Venue::FromHost).count(), 1);
        let spec = RunSpec {
            suites: vec!["syscall".into(), "microvm".into(), "boot".into()],
            batches: Some(2),
            timeout_s: 5,
            ..RunSpec::default()
        };
        let ex = Execution { spec: spec.clone(), ..Execution::in_process(vec![0], HarnessConfig::tiny(), tmp.path().into()) };
        let doc = spec.document(&["fake", "down"], plan.len() * 2, vec![0], HarnessConfig::tiny(), crate::measure::clock::known_tsc(1e9));
        let mut w = RunWriter::create(&tmp.path().join("results"), doc).unwrap();
        let log = Log::default();
        let envs = Environments { list: vec![&UP, &DOWN], options: options(tmp.path()) };
        let p = Prepared::of(plan, ex, crate::measure::clock::known_tsc(1e9));
        let status = run(&p, &envs, &mut w, &mut log.clone()).unwrap();
        assert_eq!(status, RunStatus::Complete);
        let mut got: Vec<(String, String, CaseStatus)> =
            w.doc.results.iter().map(|r| (r.environment.clone().unwrap(), r.benchmark.clone(), r.status)).collect();
        got.dedup();
        let want = |e: &str, b: &str, s| (e.to_string(), b.to_string(), s);
        // The child of `fake` ran both cases measured inside (microvm's is
        // not in its own environment's run, so it runs here); the host timed
        // its start; `down` gave every case its reason.
        let micro = "microvm.cpuid";
        assert_eq!(
            got,
            [
                want("fake", "syscall.getpid", CaseStatus::Ok),
                want("fake", micro, CaseStatus::Ok),
                want("fake", "boot.start", CaseStatus::Ok),
                want("down", "syscall.getpid", CaseStatus::NotApplicable),
                want("down", micro, CaseStatus::NotApplicable),
                want("down", "boot.start", CaseStatus::NotApplicable),
            ]
        );
        let boot = w.doc.results.iter().find(|r| r.benchmark == "boot.start").unwrap();
        assert_eq!(boot.metric("to_init").unwrap().summary.median, 0.1);
        assert_eq!(boot.metric("to_first_result").unwrap().summary.median, 0.2);
        assert_eq!(boot.details["restarted_starts"][0], json!({"start": 1, "restarted_after": ["d0v0 Triple fault"]}));
        assert!(
            w.doc.results.iter().filter(|r| r.environment.as_deref() == Some("down")).all(|r| r
                .reason
                .as_deref()
                .unwrap()
                .contains("did not reach its /init"))
        );
        assert_eq!(w.doc.environment.settings["down"]["unusable"], "down did not reach its /init within 1 s");
        assert!(w.doc.environment.settings["fake"]["host_inside"]["tsc_hz"].is_number());
        assert!(w.doc.environment.settings["fake"]["host_inside"]["harness_batches"].is_number(), "the batches its cells rest on");
        assert_eq!(log.lines().iter().filter(|l| l.starts_with("started ")).count(), 2, "{:?}", log.lines());
        assert!(log.lines().iter().any(|l| l.starts_with("unusable down")), "{:?}", log.lines());
    }

    #[test]
    fn environments_take_turns_round_by_round_in_an_alternating_order() {
        assert_eq!(interleaved_order(3, 0), [0, 1, 2]);
        assert_eq!(interleaved_order(3, 1), [2, 1, 0]);
        assert_eq!(interleaved_order(3, 2), [0, 1, 2]);
        let tmp = tempfile::tempdir().unwrap();
        let suites = [crate::run::registry::find_suite("syscall").unwrap()];
        let only: Vec<String> = ["syscall.getpid", "syscall.getppid"].map(String::from).to_vec();
        let plan = plan(&suites, Some(&only));
        let spec = RunSpec { suites: vec!["syscall".into()], rounds: 3, ..RunSpec::default() };
        let ex = Execution {
            spec: spec.clone(),
            exe: Some("/nonexistent/oscycles".into()),
            ..Execution::in_process(vec![0], HarnessConfig::tiny(), tmp.path().into())
        };
        let doc = spec.document(
            &["fake", "fake2", "down"],
            plan.len() * 3,
            vec![0],
            HarnessConfig::tiny(),
            crate::measure::clock::known_tsc(1e9),
        );
        let mut w = RunWriter::create(&tmp.path().join("results"), doc).unwrap();
        let log = Log::default();
        let envs = Environments { list: vec![&UP, &UP2, &DOWN], options: options(tmp.path()) };
        run(&Prepared::of(plan.clone(), ex, crate::measure::clock::known_tsc(1e9)), &envs, &mut w, &mut log.clone()).unwrap();
        let rounds: Vec<String> = log.lines().into_iter().filter(|l| l.starts_with("round ")).collect();
        // `down` fails to start in round 0 and is not tried again.
        let want = ["round 0/3 [fake] 2", "round 0/3 [fake2] 2", "round 0/3 [down] 2", "round 1/3 [fake2] 2", "round 1/3 [fake] 2"];
        for (got, want) in rounds.iter().zip(want) {
            assert!(got.starts_with(want), "{rounds:?}");
        }
        assert_eq!(rounds.len(), 7, "{rounds:?}");
        // One result per cell and environment, the rounds merged into it, grouped by environment in plan order.
        let got: Vec<(String, String, CaseStatus)> =
            w.doc.results.iter().map(|r| (r.environment.clone().unwrap(), r.benchmark.clone(), r.status)).collect();
        let want = |e: &str, b: &str, s| (e.to_string(), b.to_string(), s);
        assert_eq!(
            got,
            [
                want("fake", "syscall.getpid", CaseStatus::Ok),
                want("fake", "syscall.getppid", CaseStatus::Ok),
                want("fake2", "syscall.getpid", CaseStatus::Ok),
                want("fake2", "syscall.getppid", CaseStatus::Ok),
                want("down", "syscall.getpid", CaseStatus::NotApplicable),
                want("down", "syscall.getppid", CaseStatus::NotApplicable),
            ]
        );
    }

    #[test]
    fn rounds_auto_across_environments_takes_turns_and_records_how_it_ended() {
        use crate::data::results::adaptive::{Ended, MAX_ROUNDS};
        let tmp = tempfile::tempdir().unwrap();
        let suites = [crate::run::registry::find_suite("syscall").unwrap()];
        let only: Vec<String> = ["syscall.getpid", "syscall.getppid"].map(String::from).to_vec();
        let plan = plan(&suites, Some(&only));
        let auto = Auto { budget_min: 1.0, target_pct: 5.0, until_verdict: None };
        let spec = RunSpec { suites: vec!["syscall".into()], rounds: MAX_ROUNDS, auto: Some(auto), ..RunSpec::default() };
        assert!(interleaves(3, &spec));
        let baseline = RunSpec { auto: spec.auto.clone().map(|a| Auto { until_verdict: Some("main".into()), ..a }), ..spec.clone() };
        assert!(!interleaves(3, &baseline), "against a baseline each environment settles in turn");
        let ex = Execution {
            spec: spec.clone(),
            exe: Some("/nonexistent/oscycles".into()),
            ..Execution::in_process(vec![0], HarnessConfig::tiny(), tmp.path().into())
        };
        let names = ["fake", "fake2", "down"];
        let doc = spec.document(&names, plan.len() * 3, vec![0], HarnessConfig::tiny(), crate::measure::clock::known_tsc(1e9));
        let mut w = RunWriter::create(&tmp.path().join("results"), doc).unwrap();
        let log = Log::default();
        let envs = Environments { list: vec![&UP, &UP2, &DOWN], options: options(tmp.path()) };
        run(&Prepared::of(plan.clone(), ex, crate::measure::clock::known_tsc(1e9)), &envs, &mut w, &mut log.clone()).unwrap();
        let mut rounds: Vec<String> = log.lines().into_iter().filter(|l| l.starts_with("round ")).collect();
        // The fake children return cells without samples: nothing to judge, so one round settles them;
        // `down` is n/a once. The columns' order is drawn anew each round (rounds::settle).
        rounds.sort();
        assert_eq!(rounds, ["round 0/0 [down] 2 cases", "round 0/0 [fake2] 2 cases", "round 0/0 [fake] 2 cases"]);
        let o = &w.doc.settings.adaptive[0];
        assert_eq!((o.against.as_deref(), o.ended, o.rounds), (Some("fake"), Ended::Settled, 1), "no native: the first column");
        assert!(w.doc.settings.interleaved && w.doc.settings.rounds == 1);
        let down: Vec<CaseStatus> = w.doc.results.iter().filter(|r| r.environment.as_deref() == Some("down")).map(|r| r.status).collect();
        assert_eq!(down, [CaseStatus::NotApplicable; 2]);
    }
}
