//! A run's settings as one value, [`RunSpec`]: what `oscycles run` made of
//! its arguments (checked), and what a round's process (`__round`) and an
//! environment's child (`__env-child`, a guest's /init) receive serialized,
//! instead of a command line rebuilt flag by flag and parsed again.
//!
//! Only what the measuring process needs travels: where to start
//! environments (kernel, guest size, timeouts) and how to print the end of
//! a run stay with the host.

use crate::base::named::Named;
use crate::data::results::{Condition, EnvRecord, Owner, RunDoc, RunStatus, SCHEMA, SCHEMA_VERSION, Settings, Tool, now_rfc3339};
use crate::measure::clock::ClockInfo;
use crate::measure::harness::HarnessConfig;
use crate::run::isolation::Isolation;
use crate::run::isolation::preempt::Preempt;
use crate::run::load::LoadKind;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Rounds when the user does not say. Five is the fewest with which a
/// comparison can come out significant at all (two-sided Mann-Whitney over
/// 5 + 5 round medians reaches p = 0.008; over 3 + 3 never below 0.1); on a
/// shared VM a process often lands in a slow mode for a whole round (a cell
/// reads 275 or 345 cycles depending on the process), and with 5 rounds one
/// such round on each side keeps a 25% difference `unsure`. Ten rounds of
/// fewer batches cost about the same time and settle those.
pub const DEFAULT_ROUNDS: usize = 10;

/// Seconds a case may take unless `--timeout` says otherwise.
pub const CASE_TIMEOUT_S: u64 = 60;

/// The same when a suite measures at the full scale: its FWQ case alone
/// runs 100,000 quanta of ~1.4 ms (140 s on a quiet CPU).
pub const FULL_CASE_TIMEOUT_S: u64 = 300;

/// The settings of a run, as every process of it sees them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Suite names (`--suite`), known to the registry.
    pub suites: Vec<String>,
    /// Benchmark ids (`--bench`) within those suites; None: all of them.
    pub benchmarks: Option<Vec<String>>,
    /// `--where`: (parameter, value) pairs a case must match (values of one
    /// parameter are alternatives).
    #[serde(default)]
    pub cases_where: Vec<(String, String)>,
    /// `--cases`: only the cases of these labels (`PlannedCase::label`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cases: Option<Vec<String>>,
    /// `--cpus`; each process checks them against the CPUs it may use (a
    /// guest has its own). None: the first two allowed.
    pub cpus: Option<Vec<usize>>,
    pub loads: Vec<LoadKind>,
    /// `--load-cpus`: where loads run; None: every allowed CPU but the
    /// measured one.
    #[serde(default)]
    pub load_cpus: Option<Vec<usize>>,
    pub isolations: Vec<Isolation>,
    /// `--preempt`: the kernel's preemption modes, each in turn under every
    /// isolation mode; empty: the kernel's own, untouched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preempts: Vec<Preempt>,
    /// `--rt`: SCHED_FIFO and locked memory are a promise, refused up front
    /// where not permitted.
    pub rt: bool,
    /// Harness overrides (`--batches`, `--batch-ms`, `--iterations`).
    pub batches: Option<u32>,
    pub batch_ms: Option<f64>,
    pub iterations: Option<u64>,
    pub mem_bytes: Option<u64>,
    pub point_ms: Option<u64>,
    /// `--scale`: every suite at this scale; None: each at its own (the
    /// quick suite quick, the others at the published sizes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<crate::run::registry::Scale>,
    /// `--no-counters`: no counting batches after the timed ones.
    #[serde(default)]
    pub no_counters: bool,
    /// Seconds a case may take.
    pub timeout_s: u64,
    /// Rounds of the run (with `auto`, the most it may take), and the seed
    /// of their case orders.
    pub rounds: usize,
    /// `--no-interleave`: each environment's rounds one after the other
    /// (a guest boots once) instead of round by round.
    #[serde(default)]
    pub sequential_envs: bool,
    /// `--rounds auto`: rounds until the cells settle or the budget ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto: Option<crate::data::results::adaptive::Auto>,
    pub seed: u64,
    /// This process is round k of the run (a round's process).
    pub round: Option<usize>,
    /// The TSC rate the parent calibrated (rounds skip calibrating).
    pub tsc_hz: Option<f64>,
    /// `--quiet`: no progress on stderr.
    pub quiet: bool,
    /// Where the run document goes, files are laid out, the run is recorded.
    pub results: PathBuf,
    pub scratch: Option<PathBuf>,
    pub db: Option<PathBuf>,
    /// `--label`, `--fleet`: the host's name in a fleet and the fleet run.
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub fleet: Option<String>,
    /// The TSC counts guest instructions, one tick each (a guest under
    /// QEMU's instruction counter, `--accel icount`): its cycles are then
    /// guest instructions, and the clock records it. The environment sets it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub instruction_counter: bool,
    /// The harness marks each case's timed batches for a QEMU plugin that
    /// counts what the guest executes between the marks
    /// (`measure::marks`, `--kernel-counters`). The environment sets it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mark_batches: bool,
    /// The inner counts round 1 settled on, per case label
    /// (`PlannedCase::label`): a later round starts each case's
    /// calibration there (`harness::Inners`), one batch instead of about
    /// two. Empty in round 1, outside rounds and in environments' children.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub inners: std::collections::BTreeMap<String, Vec<u64>>,
    /// The facts of the host the run's own process collected: a round's
    /// process runs on that host seconds later and takes them (with its own
    /// clock) instead of collecting them again, a kernel-config read and a
    /// forked probe a round. None outside rounds: an environment's child
    /// has a host of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::measure::host::HostFacts>,
}

/// The batches of a case under QEMU's instruction counter, unless
/// `--batches` says. A batch's count is exact: batches of one case differ
/// only where the guest's timer ticks fall among them, and in a first
/// batch of another regime (a forked peer's first round trips, whose
/// wake-ups preempt). The median of five leaves both out; fifteen, the
/// timed default, cost the emulator three times as much for the same cell.
pub const COUNTED_BATCHES: usize = 5;

/// What `oscycles run` measures without options: the quick suite at idle,
/// pinned, in the default rounds, results in ./oscycles-results.
impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            suites: vec!["quick".into()],
            benchmarks: None,
            cases_where: vec![],
            cases: None,
            cpus: None,
            loads: vec![LoadKind::Idle],
            load_cpus: None,
            isolations: vec![Isolation::Pinned],
            preempts: vec![],
            rt: false,
            batches: None,
            batch_ms: None,
            iterations: None,
            mem_bytes: None,
            point_ms: None,
            scale: None,
            no_counters: false,
            timeout_s: CASE_TIMEOUT_S,
            rounds: DEFAULT_ROUNDS,
            auto: None,
            sequential_envs: false,
            seed: 0,
            round: None,
            tsc_hz: None,
            quiet: false,
            results: PathBuf::from("oscycles-results"),
            scratch: None,
            db: None,
            label: None,
            fleet: None,
            instruction_counter: false,
            mark_batches: false,
            inners: Default::default(),
            host: None,
        }
    }
}

impl RunSpec {
    /// The smallest real run, as a boot measurement's child runs it:
    /// getpid, three batches of 1000.
    pub fn boot(seed: u64) -> RunSpec {
        let s = RunSpec { suites: vec!["syscall".into()], batches: Some(3), iterations: Some(1000), seed, ..RunSpec::default() };
        s.for_environment(vec!["syscall.getpid".into()])
    }

    /// What an environment's child runs: these benchmarks, quietly, with its
    /// own clock and directories (the child sets `results`).
    pub fn for_environment(&self, benchmarks: Vec<String>) -> RunSpec {
        RunSpec {
            benchmarks: Some(benchmarks),
            round: None,
            tsc_hz: None,
            quiet: true,
            results: PathBuf::from("oscycles-results"),
            scratch: None,
            db: None,
            inners: Default::default(),
            host: None,
            ..self.clone()
        }
    }

    /// What round k's process runs: these benchmarks, with the parent's
    /// clock (`tsc_hz`: the round does not calibrate), its document in
    /// `results`, its files under `scratch`; counted in the first round
    /// only ([`RunSpec::counts_in`]).
    pub fn for_round(&self, k: usize, benchmarks: Vec<String>, results: PathBuf, scratch: PathBuf) -> RunSpec {
        RunSpec {
            benchmarks: Some(benchmarks),
            round: Some(k),
            no_counters: !self.counts_in(k),
            results,
            scratch: Some(scratch),
            db: None,
            ..self.clone()
        }
    }

    /// Whether round k runs a counting pass: the first round only (unless
    /// `--no-counters`). A cell's kernel event counts per operation count
    /// the same code path in every round (the interval is over the timed
    /// batches, not the counts), while a counting pass and its cool-down
    /// cost a round more than its timed batches (memcpy: 154 s against 51 s).
    pub fn counts_in(&self, k: usize) -> bool {
        !self.no_counters && k == 0
    }

    /// The run store: `--db`, else beside the results.
    pub fn db_path(&self) -> PathBuf {
        self.db.clone().unwrap_or_else(|| self.results.join(crate::data::db::DEFAULT_NAME))
    }

    /// Rounds measured by this process: one in a round's process.
    pub fn rounds_here(&self) -> usize {
        if self.round.is_some() { 1 } else { self.rounds }
    }

    /// The harness for cases of a quick (`quick`) or full suite, with a
    /// batch of `default_ms` unless `--batch-ms` says. Several rounds share
    /// the batches: fewer per round, about the same total; under QEMU's
    /// instruction counter a case takes [`COUNTED_BATCHES`].
    pub fn harness(&self, tsc_hz: f64, quick: bool) -> HarnessConfig {
        let (default_ms, default_batches) = match (quick, self.rounds > 1) {
            _ if self.instruction_counter => (if quick { 2.0 } else { 5.0 }, COUNTED_BATCHES),
            (true, true) => (2.0, 2),
            (true, false) => (2.0, 11),
            (false, true) => (5.0, 3),
            (false, false) => (5.0, 15),
        };
        let ms = self.batch_ms.unwrap_or(default_ms);
        HarnessConfig {
            // A coarse counter (aarch64's generic timer) sets a floor.
            target_batch_cycles: ((ms * 1e-3 * tsc_hz) as u64).max(crate::measure::arch::min_batch_ticks()),
            batches: self.batches.map_or(default_batches, |b| b as usize),
            fixed_inner: self.iterations,
            max_inner: 1 << 40,
        }
    }

    /// Starts per environment when boot time is measured: one for a tiny
    /// run (fewer than 5 batches), else three.
    pub fn boots(&self) -> usize {
        if self.batches.is_some_and(|b| b < 5) { 1 } else { 3 }
    }

    /// The scales the run measures at: `--scale`, else each suite's own.
    fn scales(&self) -> Vec<crate::run::registry::Scale> {
        match self.scale {
            Some(s) => vec![s],
            None => self.suites.iter().filter_map(|s| crate::run::registry::find_suite(s)).map(|s| s.scale).collect(),
        }
    }

    /// Whether a suite of the run measures at the full scale (`--scale full`,
    /// or a suite whose own scale is full).
    pub fn measures_full_scale(&self) -> bool {
        self.scales().contains(&crate::run::registry::Scale::Full)
    }

    /// The scale the run measures at, as the document records it: `--scale`,
    /// else its suites' own ("full", "quick", or both as "quick,full").
    pub fn scale_name(&self) -> String {
        use crate::base::named::Named;
        let mut names: Vec<&str> = self.scales().iter().map(|s| s.name()).collect();
        names.sort_unstable();
        names.dedup();
        names.join(",")
    }

    /// Conditions each case runs under: loads x isolation modes x preemption modes.
    pub fn conditions(&self) -> usize {
        self.loads.len().max(1) * self.isolations.len().max(1) * self.preempts.len().max(1)
    }

    /// Each isolation mode with each preemption mode (None: the kernel's
    /// own), in the order they run (preemption modes innermost).
    pub fn isolation_modes(&self) -> Vec<(Isolation, Option<Preempt>)> {
        let preempts: Vec<Option<Preempt>> =
            if self.preempts.is_empty() { vec![None] } else { self.preempts.iter().copied().map(Some).collect() };
        self.isolations.iter().flat_map(|&i| preempts.iter().map(move |&p| (i, p))).collect()
    }

    /// Whether measured threads lock memory (rt and isolated do).
    pub fn memory_locked(&self) -> bool {
        self.isolations.iter().any(|i| matches!(i, Isolation::Rt | Isolation::Isolated))
    }

    /// The run document this spec starts, before any result: `envs` the
    /// environments' names, `cases` the results planned, `cpus` those
    /// resolved here, `harness` the first suite's.
    pub fn document(&self, envs: &[&str], cases: usize, cpus: Vec<usize>, harness: HarnessConfig, clock: ClockInfo) -> RunDoc {
        let started = now_rfc3339();
        let names = |v: Vec<String>| v.join(",");
        RunDoc {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            // The label keeps ids of a fleet's hosts apart (same second, same pid).
            id: format!(
                "{}-{}-{}{}",
                started.replace([':', '-'], ""),
                self.suites.join("+"),
                self.label.as_ref().map_or(String::new(), |l| format!("{l}-")),
                std::process::id()
            ),
            started_at: started,
            finished_at: None,
            status: RunStatus::Running,
            tool: Tool::this(),
            host: match &self.host {
                Some(facts) => crate::measure::host::HostFacts { clock, ..facts.clone() },
                None => crate::measure::host::collect(clock),
            },
            environment: EnvRecord { name: envs.join(","), settings: Default::default() },
            condition: Condition {
                load: names(self.loads.iter().map(|l| l.name().to_string()).collect()),
                isolation: names(self.isolations.iter().map(|i| i.name().to_string()).collect()),
                preempt: (!self.preempts.is_empty()).then(|| names(self.preempts.iter().map(|p| p.name().to_string()).collect())),
                facts: Default::default(),
            },
            settings: Settings {
                suites: self.suites.clone(),
                benchmarks: self.benchmarks.clone(),
                cases_where: self.cases_where.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                scale: Some(self.scale_name()),
                cpus,
                policy: names(self.isolations.iter().map(|i| i.policy().to_string()).collect()),
                memory_locked: self.memory_locked(),
                harness,
                case_timeout_s: self.timeout_s as f64,
                rounds: self.rounds_here(),
                round_log: vec![],
                interleaved: false,
                adaptive: vec![],
                spent: None,
            },
            planned_cases: cases,
            results: vec![],
            owner: Owner::this(),
            label: self.label.clone(),
            fleet: self.fleet.clone(),
            reason: None,
        }
    }
}

/// How rounds are run; how many, their seed, which round this process is
/// and the TSC rate rounds take instead of calibrating are the spec's
/// (`Execution::spec`).
#[derive(Debug, Clone)]
pub struct Rounds {
    /// Where rounds write their documents (the run's private directory).
    pub work: PathBuf,
    /// `--until-verdict`: the baseline adaptive rounds judge cells against
    /// (None: they aim at the interval width; also in an environment's
    /// child, which has no baseline).
    pub baseline: Option<RunDoc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_survives_json_and_children_get_their_part() {
        let mut s = RunSpec::boot(7);
        s.loads = vec![LoadKind::Idle, LoadKind::Io];
        s.isolations = vec![Isolation::None, Isolation::Rt];
        s.inners.insert("ctx.ring procs=2 ws_kib=0".into(), vec![262_144, 32_768]);
        let text = serde_json::to_string(&s).unwrap();
        assert!(text.contains(r#""loads":["idle","io"]"#), "{text}");
        assert_eq!(serde_json::from_str::<RunSpec>(&text).unwrap(), s);
        s.tsc_hz = Some(2.5e9);
        let r = s.for_round(3, vec!["syscall.getppid".into()], "/r".into(), "/w".into());
        assert_eq!((r.round, r.rounds_here(), r.seed), (Some(3), 1, 7));
        // A round takes the parent's TSC rate, and only the first counts.
        assert_eq!(r.tsc_hz, Some(2.5e9));
        assert!(r.no_counters && !s.for_round(0, vec![], "/r".into(), "/w".into()).no_counters);
        s.no_counters = true;
        assert!(s.for_round(0, vec![], "/r".into(), "/w".into()).no_counters, "--no-counters holds in every round");
        assert_eq!(r.benchmarks.as_deref(), Some(&["syscall.getppid".to_string()][..]));
        let e = s.for_environment(vec!["syscall.getpid".into()]);
        assert!(e.quiet && e.round.is_none() && e.scratch.is_none());
        assert!(e.inners.is_empty() && !r.inners.is_empty(), "a round starts from the counts given, a child calibrates");
        assert_eq!(e.rounds_here(), s.rounds);
    }

    #[test]
    fn the_harness_shares_batches_between_rounds() {
        let mut s = RunSpec::boot(1);
        s.batches = None;
        s.iterations = None;
        assert_eq!(s.harness(1e9, true).batches, 2);
        assert_eq!(s.harness(1e9, false).target_batch_cycles, 5_000_000);
        s.rounds = 1;
        assert_eq!((s.harness(1e9, true).batches, s.harness(1e9, false).batches), (11, 15));
        // A guest under QEMU's instruction counter: exact counts, few batches, the same lengths.
        s.instruction_counter = true;
        assert_eq!((s.harness(1e9, true).batches, s.harness(1e9, false).batches), (COUNTED_BATCHES, COUNTED_BATCHES));
        assert_eq!(s.harness(1e9, false).target_batch_cycles, 5_000_000);
        s.batches = Some(9);
        assert_eq!(s.harness(1e9, false).batches, 9, "--batches holds under the counter too");
    }
}
