//! `oscycles run`'s arguments, and what they make: the run's [`RunSpec`]
//! (checked, resolved against the registry through the run layer), the
//! environments and how they are started.

use super::UsageError;
use super::resolve::{resolve_cpus, resolve_names};
use super::values::*;
use crate::measure::placement;
use crate::run::env::guest::GuestMode;
use crate::run::isolation::Isolation;
use crate::run::isolation::preempt::Preempt;
use crate::run::load::LoadKind;
use crate::run::spec::{CASE_TIMEOUT_S, FULL_CASE_TIMEOUT_S, RunSpec};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Comma-separated suites to run (see `oscycles list`).
    #[arg(long, default_value = "quick", value_name = "LIST")]
    pub suite: String,
    /// Only these benchmark ids (comma-separated), within the chosen suites.
    #[arg(long = "bench", value_name = "LIST")]
    pub bench: Option<String>,
    /// Of the cases that have parameter KEY, only those where it reads
    /// VALUE, as the tables print it (e.g. `--where procs=2`); cases
    /// without KEY are kept. Repeat it: values of one key are
    /// alternatives, different keys must all hold.
    #[arg(long = "where", value_name = "KEY=VALUE", value_parser = parse_where)]
    pub cases_where: Vec<(String, String)>,
    /// Only the cases listed in FILE, one a line as progress and round logs
    /// name them ("syscall.getpid", "ipc.pipe words=0 cores=same"); lines
    /// that are empty or start with '#' are skipped. `compare --interleave
    /// auto` hands its rounds the cells still unsettled this way.
    #[arg(long, value_name = "FILE")]
    pub cases: Option<PathBuf>,
    /// CPUs to use: the first runs single-threaded cases and the client of
    /// IPC cases; the second is the partner for cross-core cases. Default:
    /// the first two CPUs this process may use.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Directory for the run documents.
    #[arg(long, default_value = "oscycles-results", value_name = "DIR")]
    pub results: PathBuf,
    /// The store the run is also recorded in: an SQLite file or a
    /// postgres:// URL. Default: oscycles.sqlite in --results.
    /// A server gets 10 s to connect and 60 s a statement; SIGINT/SIGTERM stop the wait.
    #[arg(long, value_name = "FILE|URL")]
    pub db: Option<PathBuf>,
    /// The sizes measured: full (the published evaluations': FWQ 100,000
    /// quanta, the control loop 3,000 periods, net and blk points of 1 s, a
    /// 128 MiB blk file), quick (the quick suite's shorter stated sizes) or
    /// test (the smallest, which prove mechanics). Default: each suite's own.
    #[arg(long, value_name = "full|quick|test", value_parser = parse_named::<crate::run::registry::Scale>)]
    pub scale: Option<crate::run::registry::Scale>,
    /// Timed batches per case (samples for the statistics).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub batches: Option<u32>,
    /// Target duration of one batch in milliseconds; the inner count doubles until a batch lasts this long.
    #[arg(long, value_name = "MS", value_parser = parse_positive_ms)]
    pub batch_ms: Option<f64>,
    /// Fixed operations per batch instead of doubling to --batch-ms.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000_000))]
    pub iterations: Option<u64>,
    /// Run measured threads under SCHED_FIFO (priority 50) with all memory
    /// locked (needs root or CAP_SYS_NICE and CAP_IPC_LOCK); the same as
    /// --isolation rt.
    #[arg(long, conflicts_with = "isolation")]
    pub rt: bool,
    /// Background loads to measure under, each in turn (comma-separated):
    /// idle; build (make -jN with gcc over a generated C tree); io (direct-I/O
    /// disk writes and reads plus loopback TCP). Loads run on the CPUs that
    /// --cpus does not name first.
    #[arg(long, default_value = "idle", value_name = "LIST")]
    pub load: String,
    /// CPUs the loads run on (e.g. 0-1 to share the measured CPU with the
    /// load, as a machine without a spare core would). Default: every
    /// allowed CPU but the first of --cpus.
    #[arg(long, value_name = "LIST")]
    pub load_cpus: Option<String>,
    /// How far the measured thread is detached, each in turn (comma-separated):
    /// none (single-threaded cases may run anywhere), pinned (affinity), rt
    /// (pinned, SCHED_FIFO, memory locked, 0 us held on /dev/cpu_dma_latency),
    /// isolated (rt, plus a cpuset of its own and IRQs moved away; root only;
    /// restored afterwards, also on Ctrl-C). Default: pinned.
    #[arg(long, value_name = "LIST")]
    pub isolation: Option<String>,
    /// The kernel's preemption modes to measure under, each in turn under
    /// every isolation mode (comma-separated): none, voluntary, full, lazy.
    /// Root switches a PREEMPT_DYNAMIC kernel's mode through debugfs
    /// (sched/preempt) and puts it back afterwards; where the kernel does not
    /// let it, the cases say why (n/a). Default: the kernel's own, untouched.
    #[arg(long, value_name = "LIST")]
    pub preempt: Option<String>,
    /// Directory where benchmarks lay out their files (a 64 MiB file, a tiny
    /// executable); it must allow exec. Default: the system's temporary directory.
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// Size of each large memory buffer (bw_mem buffers, STREAM arrays),
    /// e.g. 512M or 2G; default 4x the last-level cache.
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub mem_bytes: Option<u64>,
    /// Measured milliseconds per point of the net and blk suites (after a
    /// warm-up of a fifth of it). Default: 150 in quick, 1000 in full suites.
    /// The rate is sampled in 20 slices; a point with fewer than 3 when the
    /// time is up runs on (up to 10 times as long) until it has them.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(10..=600_000))]
    pub point_ms: Option<u64>,
    /// No counting batches: by default every batch-timed case is followed by
    /// three untimed batches that count the kernel's events per operation
    /// (context switches, migrations, faults, task clock; core cycles,
    /// reference cycles and instructions where a PMU exists) over every
    /// thread and process the case runs.
    #[arg(long)]
    pub no_counters: bool,
    /// (compare) The TSC rate in Hz, calibrated once by the invocation that
    /// starts this run: the run does not calibrate again.
    #[arg(long, hide = true, value_name = "HZ", value_parser = parse_tsc_hz)]
    pub tsc_hz: Option<f64>,
    /// Environments to run the suites in, each in turn (comma-separated);
    /// the list and what each is: `oscycles run --help`.
    #[arg(long, default_value = "native", value_name = "LIST", long_help = crate::run::env::help())]
    pub env: String,
    /// Guest kernel for qemu-* and xen-* (default: the newest /boot/vmlinuz-*).
    #[arg(long, value_name = "PATH")]
    pub kernel: Option<PathBuf>,
    /// Guest memory in MiB.
    #[arg(long, default_value_t = 1024, value_name = "MIB", value_parser = clap::value_parser!(u32).range(128..=65536))]
    pub vm_mem: u32,
    /// Guest vCPUs.
    #[arg(long, default_value_t = 2, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub vm_cpus: u32,
    /// The environments' own options (each environment's module declares them).
    #[command(flatten)]
    pub own: crate::run::env::options::EnvArgs,
    /// Seconds an environment may take to reach its /init; a guest that does
    /// not (a KVM that cannot run it hangs in early boot) is given up. The
    /// slow boots get a multiple: qemu-tcg under the instruction counter 3x,
    /// Xen under TCG 4x (a domU 12x), GNU Mach 4x.
    #[arg(long, default_value_t = 30, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub init_timeout: u64,
    /// (tests) What an environment's init does: run, hang (say hello, then
    /// sleep), or panic (exit at once: a guest kernel panics); for the xen-*
    /// environments also xen-panic (a PVH dom0 without an IOMMU: Xen
    /// panics) and no-init (dom0's kernel finds no /init).
    #[arg(long, hide = true, default_value = "run", value_parser = parse_named::<GuestMode>)]
    pub guest_mode: GuestMode,
    /// Seconds a whole environment's run may take.
    #[arg(long, default_value_t = 3600, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub env_timeout: u64,
    /// Give up on a case after this many seconds. Default: 60, or 300 when
    /// a suite measures at the full scale (its FWQ case runs 100,000 quanta
    /// of ~1.4 ms: 140 s on a quiet CPU). FWQ stops between quanta at the
    /// timeout and keeps what it measured, marked as cut.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: Option<u64>,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// At the end, every table (as wide as it is) before the summary;
    /// without it, the one-screen summary and the command for the tables.
    #[arg(long)]
    pub full: bool,
    /// At the end, the run document as JSON on standard output (nothing
    /// else there), for scripts.
    #[arg(long, conflicts_with = "full")]
    pub json: bool,
    /// Rounds: the plan runs this many times, each round in a fresh process
    /// (new address space, new placement) with the cases in a new random
    /// order; a cell's median and its 95% interval rest on every round's
    /// batches. Cases measured over a fixed time (net, blk, noise, control
    /// loop, boot, microvm, STREAM, AIM, packet stream) run in the first round
    /// only. Comparisons need at least 5 rounds a side to give a verdict.
    /// Default: 10 (of 2 batches in quick suites, 3 in full ones; 1 round
    /// has 11 or 15).
    /// `auto`: rounds go on while a cell's 95% interval is wider than
    /// --target and the --budget lasts, later rounds measuring only the
    /// unsettled cells; the run ends with the cells still unsettled and the
    /// rounds each would need. With several environments the rounds take
    /// turns across them, and a cell settles when its paired verdict against
    /// the reference column (native where it is one, else the first) is
    /// faster, slower or same within --target (a confidence sequence, as in
    /// `compare --interleave auto`); a case leaves the later rounds of every
    /// environment once all its cells have one. Cells counted exactly (guest
    /// instructions that do not vary) settle in one round.
    #[arg(long, value_name = "R|auto", value_parser = parse_rounds)]
    pub rounds: Option<RoundsArg>,
    /// With --rounds auto: minutes the rounds may take in all (default 10):
    /// of all environments together where they take turns, of each one
    /// where they do not (--no-interleave, --until-verdict).
    #[arg(long, value_name = "MIN", value_parser = parse_budget)]
    pub budget: Option<f64>,
    /// With --rounds auto: a cell is settled when half its 95% interval is
    /// within PCT percent of its median (default 5); with --until-verdict or
    /// several environments taking turns, the margin within which a cell is
    /// `same`.
    #[arg(long, value_name = "PCT", value_parser = parse_target)]
    pub target: Option<f64>,
    /// Rounds (as --rounds auto) until every cell has a verdict (faster,
    /// slower, same within --target) against BASELINE: a baseline's name
    /// (oscycles baseline save) or a run document. Environments run in a
    /// child of their own (container, guests) aim at --target instead.
    #[arg(long, value_name = "BASELINE")]
    pub until_verdict: Option<String>,
    /// With several environments: run each one's rounds one after the other
    /// (a guest boots once for all its rounds) instead of interleaving them
    /// round by round (round k of every environment before round k+1 of
    /// any, so drift of the host falls on every column alike).
    #[arg(long)]
    pub no_interleave: bool,
    /// Seed of the case order (default: from the clock; the document records it).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// This host's name in a fleet: the column `report --by host` puts the
    /// run in (default: the hostname). Letters, digits, '.', '_', '-'.
    #[arg(long, value_name = "NAME", value_parser = parse_label)]
    pub label: Option<String>,
    /// The fleet run this run belongs to (`fleet run` sets it).
    #[arg(long, value_name = "ID", value_parser = parse_label)]
    pub fleet: Option<String>,
}

/// The case labels of a `--cases` file: at most 1 MiB, one a line.
fn read_cases(path: &std::path::Path) -> Result<Vec<String>, UsageError> {
    let bad = |why: String| UsageError(format!("--cases '{}': {why}", path.display()));
    let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
    if !meta.is_file() || meta.len() > 1 << 20 {
        return Err(bad("not a file of case labels of at most 1 MiB".into()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let labels: Vec<String> = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from).collect();
    if labels.is_empty() {
        return Err(bad("lists no case".into()));
    }
    Ok(labels)
}

impl RunArgs {
    /// `--rounds` with `--budget`, `--target` and `--until-verdict`: the
    /// rounds a run takes (with auto, the most) and what auto aims at.
    fn rounds_asked(&self) -> Result<(usize, Option<crate::data::results::adaptive::Auto>), UsageError> {
        use crate::data::results::adaptive::{Auto, MAX_ROUNDS};
        let auto = self.rounds == Some(RoundsArg::Auto) || self.until_verdict.is_some();
        match self.rounds {
            Some(RoundsArg::Fixed(n)) if auto => {
                return Err(UsageError(format!(
                    "--until-verdict adds rounds as it needs them: leave out --rounds {n} (or say --rounds auto)"
                )));
            }
            Some(RoundsArg::Fixed(n)) if self.budget.is_some() || self.target.is_some() => {
                return Err(UsageError(format!("--budget and --target steer --rounds auto, not --rounds {n}")));
            }
            Some(RoundsArg::Fixed(n)) => return Ok((n, None)),
            None if !auto && (self.budget.is_some() || self.target.is_some()) => {
                return Err(UsageError("--budget and --target steer --rounds auto: add it".into()));
            }
            None if !auto => return Ok((crate::run::spec::DEFAULT_ROUNDS, None)),
            _ => {}
        }
        let asked = Auto {
            budget_min: self.budget.unwrap_or(10.0),
            target_pct: self.target.unwrap_or(5.0),
            until_verdict: self.until_verdict.clone(),
        };
        Ok((MAX_ROUNDS, Some(asked)))
    }

    /// The environments of `--env`.
    pub fn envs(&self) -> Result<Vec<crate::run::env::environment::Env>, UsageError> {
        resolve_names("--env", &self.env)
    }

    /// How environments are started: the options of the command line, the
    /// binary `exe` they run, files in the run's private directory `work`.
    pub fn env_options(&self, exe: PathBuf, work: PathBuf) -> crate::run::env::options::EnvOptions {
        crate::run::env::options::EnvOptions {
            exe,
            work,
            kernel: self.kernel.clone(),
            vm_mem_mib: self.vm_mem,
            vm_cpus: self.vm_cpus,
            cpus: Vec::new(),
            init_timeout: std::time::Duration::from_secs(self.init_timeout),
            run_timeout: std::time::Duration::from_secs(self.env_timeout),
            guest_mode: self.guest_mode,
            own: self.own.clone(),
            keep_console: None,
        }
    }

    /// The run's settings, each checked (a sentence naming a bad one): what
    /// this process and every process it starts measure.
    pub fn spec(&self) -> Result<RunSpec, UsageError> {
        // Names only: the run layer resolves them against the registry
        // (`Prepared::new`), once in each process of the run.
        let suites = split_list(&self.suite);
        let benchmarks = self.bench.as_deref().map(split_list);
        let cpus = self.cpus.as_deref().map(|l| resolve_cpus(Some(l))).transpose()?;
        let loads = resolve_names::<LoadKind>("--load", &self.load)?;
        let load_cpus = self
            .load_cpus
            .as_deref()
            .map(|l| placement::validate_cpus(l).map_err(|e| UsageError(format!("--load-cpus: {e}"))))
            .transpose()?;
        if load_cpus.is_some() && loads.iter().all(|&l| l == LoadKind::Idle) {
            return Err(UsageError("--load-cpus places a load: name one with --load (build, io)".into()));
        }
        let isolations = match (&self.isolation, self.rt) {
            (Some(list), _) => resolve_names::<Isolation>("--isolation", list)?,
            (None, true) => vec![Isolation::Rt],
            (None, false) => vec![Isolation::Pinned],
        };
        let preempts = self.preempt.as_deref().map(|l| resolve_names::<Preempt>("--preempt", l)).transpose()?.unwrap_or_default();
        let (rounds, auto) = self.rounds_asked()?;
        let seed = self.seed.unwrap_or_else(|| {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            (t.as_nanos() as u64) ^ ((std::process::id() as u64) << 40)
        });
        let mut spec = RunSpec {
            suites,
            benchmarks,
            cases_where: self.cases_where.clone(),
            cases: self.cases.as_deref().map(read_cases).transpose()?,
            cpus,
            loads,
            load_cpus,
            isolations,
            preempts,
            rt: self.rt,
            batches: self.batches,
            batch_ms: self.batch_ms,
            iterations: self.iterations,
            mem_bytes: self.mem_bytes,
            point_ms: self.point_ms,
            scale: self.scale,
            no_counters: self.no_counters,
            timeout_s: self.timeout.unwrap_or(CASE_TIMEOUT_S),
            rounds,
            auto,
            sequential_envs: self.no_interleave,
            seed,
            round: None,
            tsc_hz: self.tsc_hz,
            quiet: self.quiet,
            results: self.results.clone(),
            scratch: self.scratch.clone(),
            db: self.db.clone(),
            label: self.label.clone(),
            fleet: self.fleet.clone(),
            instruction_counter: false,
            mark_batches: false,
            inners: Default::default(),
            host: None,
        };
        if self.timeout.is_none() && spec.measures_full_scale() {
            spec.timeout_s = FULL_CASE_TIMEOUT_S;
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::super::grammar::{Cli, Command};
    use clap::Parser;

    fn timeout_of(args: &[&str]) -> u64 {
        let cli = Cli::try_parse_from(["oscycles", "run"].iter().chain(args)).unwrap();
        let Command::Run(run) = cli.command else { panic!("not run") };
        run.spec().unwrap().timeout_s
    }

    #[test]
    fn a_case_gets_time_for_the_full_scale_unless_timeout_says_otherwise() {
        assert_eq!(timeout_of(&["--suite", "fwq"]), super::FULL_CASE_TIMEOUT_S);
        assert_eq!(timeout_of(&["--suite", "fwq", "--scale", "full"]), super::FULL_CASE_TIMEOUT_S);
        assert_eq!(timeout_of(&["--suite", "fwq", "--scale", "quick"]), super::CASE_TIMEOUT_S);
        assert_eq!(timeout_of(&["--suite", "quick"]), super::CASE_TIMEOUT_S);
        assert_eq!(timeout_of(&["--suite", "fwq", "--timeout", "7"]), 7);
        assert_eq!(timeout_of(&["--suite", "fwq", "--scale", "test", "--timeout", "900"]), 900);
    }
}
