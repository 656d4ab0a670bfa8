//! The command line: definitions, and turning arguments into a validated plan.
//! Bad input becomes a `UsageError` (exit code 2) with a sentence naming the
//! input and what would be valid.

use crate::base::named::Named;
use crate::measure::placement;
use crate::run::env::guest::GuestMode;
use crate::run::isolation::Isolation;
use crate::run::load::LoadKind;
use crate::run::registry::{self, Suite};
use crate::run::spec::RunSpec;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A value clap's parsers refuse (clap says which option, then this).
#[derive(Debug, Error)]
pub enum ArgError {
    #[error("'{0}' is not a percentage: use a number above 0, e.g. 5% or 2.5")]
    Percent(String),
    #[error("'{0}' is not KEY=VALUE (a case parameter and its value, e.g. procs=2)")]
    Where(String),
    #[error("'{0}' is not a name: use 1 to 64 letters, digits, '.', '_' or '-' (not starting with '.')")]
    Label(String),
    #[error("'{0}' is neither a number of rounds from 1 to 1000 nor 'auto'")]
    Rounds(String),
    #[error("'{0}' is not a number of minutes (above 0, at most a week)")]
    Budget(String),
    #[error("'{0}' is neither a number of rounds from 5 to 1000 nor 'auto'")]
    Interleave(String),
    #[error("'{0}' is not a percentage above 0 and below 100")]
    Target(String),
    #[error("'{0}' is not a duration in milliseconds between 0 (exclusive) and 60000")]
    Millis(String),
    #[error("'{0}' is not a size: use bytes or a number with K, M or G, at least 1M (e.g. 512M, 2G)")]
    Size(String),
    #[error("'{0}' is not a date: use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (e.g. 2026-11-21)")]
    Date(String),
    #[error("'{given}' is not one of: {valid}")]
    OneOf { given: String, valid: String },
}

#[derive(Parser, Debug)]
#[command(
    name = "oscycles",
    version = concat!(env!("CARGO_PKG_VERSION"), " (git ", env!("OSCYCLES_GIT"), ")"),
    about = "What the layers between a program and the hardware cost, in CPU (TSC) cycles, laid out like the microkernel literature's tables.",
    after_help = "Exit codes: 0 success, 1 failure, 2 bad usage, 130 interrupted (results so far are saved).\nRun `oscycles list` for every benchmark and suite."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Measure suites and print their tables; the run is saved as JSON case by case.
    Run(Box<RunArgs>),
    /// List every benchmark (with whether it can run here) and every suite.
    List {
        /// Everything about this benchmark (parameters, needs, why not here).
        bench: Option<String>,
        /// Everything about every benchmark.
        #[arg(long)]
        long: bool,
        /// The published evaluations whose tables the suites reproduce, and their suites.
        #[arg(long, conflicts_with_all = ["bench", "long"])]
        sources: bool,
    },
    /// A saved run again: its summary, or with --full every table.
    Show {
        /// A run document written by `oscycles run`.
        file: PathBuf,
        /// Every table (as wide as it is), before the summary.
        #[arg(long)]
        full: bool,
        /// The document as JSON on standard output, for scripts.
        #[arg(long, conflicts_with = "full")]
        json: bool,
        /// The kernel's event counts per operation beside each cell (context
        /// switches, migrations, faults, task clock; cycles and instructions
        /// where a PMU counted them), before the summary.
        #[arg(long, conflicts_with = "json")]
        counters: bool,
    },
    /// Shell completions for bash, zsh, fish, elvish or powershell, on standard output.
    Completions {
        #[arg(value_parser = ["bash", "zsh", "fish", "elvish", "powershell"])]
        shell: String,
    },
    /// The manual page (roff) on standard output: `oscycles man | man -l -`.
    Man,
    /// Run background loads (as `run --load` does) until Ctrl-C or --seconds,
    /// printing their throughput: for measuring other tools under the same load.
    Load(LoadArgs),
    /// (internal) The child of an environment (native, container, microvm).
    #[command(name = "__env-child", hide = true)]
    EnvChild(EnvChildArgs),
    /// (internal) One round of a run, in a fresh process.
    #[command(name = "__round", hide = true)]
    Round(RoundArgs),
    /// (internal) The process that carries a load for `run --load` and `load`.
    #[command(name = "__load-worker", hide = true)]
    LoadWorker(LoadWorkerArgs),
    /// List the runs in the store (the SQLite database beside the results), newest first.
    Runs(RunsArgs),
    /// Add run documents (from other machines) to the store: one already
    /// there as it is adds nothing; another under a stored run's id is refused.
    Import {
        /// Run documents written by `oscycles run`.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The store: an SQLite file or a postgres:// URL. Default: oscycles-results/oscycles.sqlite.
        /// A server gets 10 s to connect and 60 s a statement; SIGINT/SIGTERM stop the wait.
        #[arg(long, value_name = "FILE|URL")]
        db: Option<PathBuf>,
    },
    /// Reports over runs: a self-contained HTML page with plots, Markdown tables, CSV, or the JSON documents.
    Report(ReportArgs),
    /// Compare two saved runs case by case: B's performance relative to A's
    /// with its 95% interval and a verdict (faster, slower, same, unsure).
    Compare(CompareArgs),
    /// Saved baselines: runs to compare later runs with (`compare --baseline`).
    Baseline {
        #[command(subcommand)]
        action: BaselineAction,
    },
    /// Fleets: the same suites on many hosts, through Ansible.
    Fleet {
        #[command(subcommand)]
        action: FleetAction,
    },
    /// Check this machine for what makes measurements noisy (governor,
    /// turbo, SMT, busy CPUs, irqbalance, swap, THP...), with the command
    /// that fixes each; changes nothing.
    Doctor {
        /// The CPUs a run would measure on (default: the first two allowed).
        #[arg(long, value_name = "LIST")]
        cpus: Option<String>,
    },
}

impl Command {
    /// Whether the command only reads and prints (a reader that goes away
    /// early, as `| head` does, may simply end it).
    pub fn only_prints(&self) -> bool {
        matches!(
            self,
            Command::List { .. }
                | Command::Show { .. }
                | Command::Completions { .. }
                | Command::Man
                | Command::Runs(_)
                | Command::Report(_)
                | Command::Compare(_)
                | Command::Doctor { .. }
        )
    }
}

#[derive(Subcommand, Debug)]
pub enum BaselineAction {
    /// Save runs as baseline NAME (several runs of one build pool their rounds).
    Save {
        name: String,
        /// Run documents written by `oscycles run`.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// Where baselines live: DIR/baselines/NAME.json.
        #[arg(long, default_value = "oscycles-results", value_name = "DIR")]
        results: PathBuf,
    },
    /// List the saved baselines.
    List {
        #[arg(long, default_value = "oscycles-results", value_name = "DIR")]
        results: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum FleetAction {
    /// Run suites on every host of an Ansible inventory (each host's
    /// inventory name is its label), fetch the run documents into --out,
    /// import them into the store, and write a manifest; exit 0 only when
    /// every host succeeded. Options after -- go to `oscycles run`.
    Run(FleetRunArgs),
}

#[derive(Args, Debug)]
pub struct FleetRunArgs {
    /// An Ansible inventory (INI or YAML); ansible_host, ansible_user,
    /// ansible_connection... as Ansible reads them; `oscycles_run_args`, a
    /// host's extra run options.
    #[arg(long, value_name = "FILE")]
    pub inventory: PathBuf,
    /// Comma-separated suites to run on every host.
    #[arg(long, default_value = "quick", value_name = "LIST")]
    pub suite: String,
    /// Hosts worked on at once (Ansible's forks, and the batch size).
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub forks: u64,
    /// The store the runs are imported into: an SQLite file or a
    /// postgres:// URL. Default: oscycles-results/oscycles.sqlite.
    /// A server gets 10 s to connect and 60 s a statement; SIGINT/SIGTERM stop the wait.
    #[arg(long, value_name = "FILE|URL")]
    pub db: Option<PathBuf>,
    /// Where the run documents (OUT/HOST/*.json) and manifest.json go.
    /// Default: oscycles-results/fleet-ID.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Start no further batch of --forks hosts once more than this share
    /// of the inventory has failed runs (unreachable hosts not counted).
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub max_fail: Option<f64>,
    /// Seconds a host's run may take before it is given up.
    #[arg(long, default_value_t = 3600, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub host_timeout: u64,
    /// Seconds to reach a host (ssh) before it counts as unreachable.
    #[arg(long, default_value_t = 10, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=600))]
    pub connect_timeout: u64,
    /// Options for `oscycles run` on every host (after --), e.g. -- --rounds 5.
    #[arg(last = true, value_name = "RUN OPTIONS")]
    pub run_args: Vec<String>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// A B (B against A), or with --baseline just the run to check.
    #[arg(required_unless_present = "interleave", num_args = 1..=2, value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// Measure A and B now, ROUNDS rounds each, alternately (A then B, then
    /// B then A...), each round one `oscycles run --rounds 1` with the same
    /// seed for both sides, and judge them on paired rounds (median of
    /// per-round ratios, Wilcoxon signed-rank test): drift of the host over
    /// the minutes falls on both. The pooled runs are saved under --results.
    /// `auto`: pairs of rounds (which side first drawn at random) until
    /// every cell has a verdict or the --budget ends, each cell judged
    /// after every pair by a confidence sequence (valid however often it
    /// is looked at) and dropped from the next rounds once settled.
    #[arg(long, value_name = "ROUNDS|auto", value_parser = parse_interleave, conflicts_with = "baseline")]
    pub interleave: Option<InterleaveArg>,
    /// With --interleave auto: minutes the pairs may take in all (default 10).
    #[arg(long, value_name = "MIN", value_parser = parse_budget, requires = "interleave")]
    pub budget: Option<f64>,
    /// With --interleave: A's options of `oscycles run`, as one string
    /// (split at spaces), e.g. --a "--suite syscall --load idle".
    #[arg(long = "a", value_name = "OPTIONS", allow_hyphen_values = true, requires = "interleave")]
    pub a_options: Option<String>,
    /// With --interleave: B's options of `oscycles run` (default: A's).
    #[arg(long = "b", value_name = "OPTIONS", allow_hyphen_values = true, requires = "interleave")]
    pub b_options: Option<String>,
    /// With --interleave: the oscycles binary that measures A (default: this one).
    #[arg(long, value_name = "PATH", requires = "interleave")]
    pub a_exe: Option<PathBuf>,
    /// With --interleave: the oscycles binary that measures B (default: A's).
    #[arg(long, value_name = "PATH", requires = "interleave")]
    pub b_exe: Option<PathBuf>,
    /// Compare the run with this saved baseline (`oscycles baseline save`).
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Where baselines live (DIR/baselines).
    #[arg(long, default_value = "oscycles-results", value_name = "DIR")]
    pub results: PathBuf,
    /// Regression gate: exit 1 when a cell is significantly worse than A
    /// (or the baseline) by more than this, e.g. 5%; the cells are listed.
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub fail_above: Option<f64>,
    /// Equivalence margin: `same` when the interval of the ratio lies within
    /// 1 +- this; `faster`/`slower` only when it lies wholly beyond. Default 5%.
    #[arg(long, default_value = "5%", value_name = "PCT", value_parser = parse_percent)]
    pub margin: f64,
    /// Print the comparison as JSON (one object per cell) instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// "5%" or "5" (percent) or "0.05"?: percent always, 0 < p < 1000.
fn parse_percent(s: &str) -> Result<f64, ArgError> {
    let t = s.trim().trim_end_matches('%');
    match t.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1000.0 => Ok(v / 100.0),
        _ => Err(ArgError::Percent(s.to_string())),
    }
}

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
    pub own: crate::run::env::EnvArgs,
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
    /// Give up on a case after this many seconds.
    #[arg(long, default_value_t = 60, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
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
    /// rounds each would need.
    #[arg(long, value_name = "R|auto", value_parser = parse_rounds)]
    pub rounds: Option<RoundsArg>,
    /// With --rounds auto: minutes the rounds of an environment may take in
    /// all (default 10).
    #[arg(long, value_name = "MIN", value_parser = parse_budget)]
    pub budget: Option<f64>,
    /// With --rounds auto: a cell is settled when half its 95% interval is
    /// within PCT percent of its median (default 5); with --until-verdict,
    /// the margin within which a cell is `same`.
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

/// `--where KEY=VALUE`: both sides non-empty.
fn parse_where(s: &str) -> Result<(String, String), ArgError> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(ArgError::Where(s.to_string())),
    }
}

/// One of a closed list of names (a [`Named`] type), or the sentence that
/// lists them.
fn parse_named<T: Named + Clone + Send + Sync + 'static>(s: &str) -> Result<T, ArgError> {
    T::parse(s).ok_or_else(|| ArgError::OneOf { given: s.to_string(), valid: T::names() })
}

/// A label or fleet id: what a run id may hold, at most 64 characters.
fn parse_label(s: &str) -> Result<String, ArgError> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if s.is_empty() || s.len() > 64 || !s.chars().all(ok) || s.starts_with('.') {
        return Err(ArgError::Label(s.to_string()));
    }
    Ok(s.to_string())
}

/// `--rounds`: a number of rounds, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RoundsArg {
    Fixed(usize),
    Auto,
}

fn parse_rounds(s: &str) -> Result<RoundsArg, ArgError> {
    if s == "auto" {
        return Ok(RoundsArg::Auto);
    }
    match s.parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(RoundsArg::Fixed(n)),
        _ => Err(ArgError::Rounds(s.to_string())),
    }
}

/// `compare --interleave`: a number of rounds, or until the cells settle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InterleaveArg {
    Rounds(u32),
    Auto,
}

fn parse_interleave(s: &str) -> Result<InterleaveArg, ArgError> {
    if s == "auto" {
        return Ok(InterleaveArg::Auto);
    }
    match s.parse::<u32>() {
        Ok(n) if (5..=1000).contains(&n) => Ok(InterleaveArg::Rounds(n)),
        _ => Err(ArgError::Interleave(s.to_string())),
    }
}

fn parse_tsc_hz(s: &str) -> Result<f64, ArgError> {
    match s.parse::<f64>() {
        Ok(hz) if (1e7..=1e11).contains(&hz) => Ok(hz),
        _ => Err(ArgError::OneOf { given: s.to_string(), valid: "a TSC rate in Hz from 1e7 to 1e11".into() }),
    }
}

fn parse_budget(s: &str) -> Result<f64, ArgError> {
    match s.parse::<f64>() {
        Ok(m) if m > 0.0 && m <= 7.0 * 24.0 * 60.0 => Ok(m),
        _ => Err(ArgError::Budget(s.to_string())),
    }
}

fn parse_target(s: &str) -> Result<f64, ArgError> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(p) if p > 0.0 && p < 100.0 => Ok(p),
        _ => Err(ArgError::Target(s.to_string())),
    }
}

impl RunArgs {
    /// `--rounds` with `--budget`, `--target` and `--until-verdict`: the
    /// rounds a run takes (with auto, the most) and what auto aims at.
    fn rounds_asked(&self) -> Result<(usize, Option<crate::run::rounds::adaptive::Auto>), UsageError> {
        use crate::run::rounds::adaptive::{Auto, MAX_ROUNDS};
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
            None if !auto => return Ok((crate::run::rounds::DEFAULT_ROUNDS, None)),
            _ => {}
        }
        let asked = Auto {
            budget_min: self.budget.unwrap_or(10.0),
            target_pct: self.target.unwrap_or(5.0),
            until_verdict: self.until_verdict.clone(),
        };
        Ok((MAX_ROUNDS, Some(asked)))
    }

    /// The run's settings, each checked (a sentence naming a bad one): what
    /// this process and every process it starts measure.
    pub fn spec(&self) -> Result<RunSpec, UsageError> {
        let suites = resolve_suites(&self.suite)?;
        let benchmarks = self.bench.as_deref().map(|b| resolve_benches(b, &suites)).transpose()?;
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
        let (rounds, auto) = self.rounds_asked()?;
        let seed = self.seed.unwrap_or_else(|| {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            (t.as_nanos() as u64) ^ ((std::process::id() as u64) << 40)
        });
        Ok(RunSpec {
            suites: suites.iter().map(|s| s.name.to_string()).collect(),
            benchmarks,
            cases_where: self.cases_where.clone(),
            cases: self.cases.as_deref().map(read_cases).transpose()?,
            cpus,
            loads,
            load_cpus,
            isolations,
            rt: self.rt,
            batches: self.batches,
            batch_ms: self.batch_ms,
            iterations: self.iterations,
            mem_bytes: self.mem_bytes,
            point_ms: self.point_ms,
            scale: self.scale,
            no_counters: self.no_counters,
            timeout_s: self.timeout,
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
        })
    }
}

#[derive(Args, Debug)]
pub struct LoadArgs {
    /// Loads to run together (comma-separated): build, io.
    #[arg(value_name = "LIST")]
    pub loads: String,
    /// CPUs the loads run on. Default: every allowed CPU but the first.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Stop after this many seconds (default: run until Ctrl-C or SIGTERM).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub seconds: Option<u64>,
    /// Directory for the loads' files. Default: the system's temporary directory.
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunsArgs {
    /// The store: an SQLite file or a postgres:// URL. Default: oscycles-results/oscycles.sqlite.
    /// A server gets 10 s to connect and 60 s a statement; SIGINT/SIGTERM stop the wait.
    #[arg(long, value_name = "FILE|URL")]
    pub db: Option<PathBuf>,
    /// Only runs whose suites contain this text.
    #[arg(long)]
    pub suite: Option<String>,
    /// Only runs from hosts whose name contains this text.
    #[arg(long)]
    pub host: Option<String>,
    /// Only runs in environments containing this text (native, qemu-tcg...).
    #[arg(long = "env")]
    pub environment: Option<String>,
    /// Only runs started on or after this date (e.g. 2026-11-21, or 2026-11-21T10:00:00Z).
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    pub since: Option<String>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Runs: JSON documents, or run ids in the store. With --by and none:
    /// every run in the store (or in the --fleet).
    #[arg(required_unless_present_any = ["by", "history"], value_name = "RUN")]
    pub runs: Vec<String>,
    /// The store, for run ids: an SQLite file or a postgres:// URL.
    /// Default: oscycles-results/oscycles.sqlite.
    /// A server gets 10 s to connect and 60 s a statement; SIGINT/SIGTERM stop the wait.
    #[arg(long, value_name = "FILE|URL")]
    pub db: Option<PathBuf>,
    /// Runs side by side: a column per host (its --label, else its
    /// hostname), per kernel or per environment; without a format option,
    /// the tables on standard output. With --history: a row per value of
    /// this key (host, kernel, environment, load, tool, day, or any fact of
    /// the run document), its runs pooled.
    #[arg(long, value_name = "WHAT")]
    pub by: Option<String>,
    /// The column the others are relative to (default: the first).
    #[arg(long, value_name = "NAME", requires = "by")]
    pub baseline: Option<String>,
    /// Only the runs of this fleet run (`fleet run` prints its id).
    #[arg(long, value_name = "ID")]
    pub fleet: Option<String>,
    /// Write a self-contained HTML report (index.html) into this directory.
    #[arg(long, value_name = "DIR")]
    pub html: Option<PathBuf>,
    /// Write Markdown tables to this file ('-': standard output).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write CSV, one row per case and statistic, to this file ('-': standard output).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Copy the run documents (JSON) into this directory.
    #[arg(long, value_name = "DIR")]
    pub json: Option<PathBuf>,
    /// Each cell across the stored runs, oldest first: median, 95% interval,
    /// and the step from the run before judged as `compare` judges (marked
    /// where faster or slower); with --html, a plot per cell.
    #[arg(long, conflicts_with = "runs")]
    pub history: bool,
    /// With --history: only these benchmarks (an id such as syscall.getpid,
    /// a family such as syscall, or a pattern with *); repeatable.
    #[arg(long, value_name = "BENCH", requires = "history")]
    pub bench: Vec<String>,
    /// With --history: only measurements whose parameter or run fact KEY is
    /// VALUE (e.g. words=8, load=build, kernel=6.1.0); repeatable: values of
    /// one key are alternatives, keys must all hold.
    #[arg(long = "where", value_name = "KEY=VALUE", requires = "history")]
    pub where_: Vec<String>,
    /// With --history: the newest N rows of each table (0: all).
    #[arg(long, default_value_t = 50, value_name = "N", requires = "history")]
    pub last: usize,
    /// Write Bencher Metric Format JSON (one run's medians with their 95%
    /// intervals; of two runs, the second's, and its ratio to the first) to this file ('-': standard output).
    #[arg(long, value_name = "FILE", conflicts_with = "history")]
    pub bmf: Option<PathBuf>,
    /// Write github-action-benchmark `customSmallerIsBetter` JSON (the costs:
    /// cycles, ns) to this file ('-': standard output).
    #[arg(long, value_name = "FILE", conflicts_with = "history")]
    pub github_benchmark: Option<PathBuf>,
    /// Write github-action-benchmark `customBiggerIsBetter` JSON (the rates:
    /// MiB/s, jobs/min) to this file ('-': standard output).
    #[arg(long, value_name = "FILE", conflicts_with = "history")]
    pub github_benchmark_bigger: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct EnvChildArgs {
    /// The environment this child serves.
    #[arg(long)]
    pub env: String,
    /// What the host asks of it (a guest spec, JSON).
    #[arg(long)]
    pub spec: String,
}

#[derive(Args, Debug)]
pub struct RoundArgs {
    /// The run's settings with this round's (a run spec, JSON).
    #[arg(long)]
    pub spec: String,
}

#[derive(Args, Debug)]
pub struct LoadWorkerArgs {
    pub kind: String,
    #[arg(long)]
    pub dir: PathBuf,
    #[arg(long)]
    pub cpus: String,
    #[arg(long)]
    pub parent: u32,
    #[arg(long)]
    pub cgroup: Option<PathBuf>,
}

fn parse_positive_ms(s: &str) -> Result<f64, ArgError> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 60_000.0 => Ok(v),
        _ => Err(ArgError::Millis(s.to_string())),
    }
}

fn parse_size_arg(s: &str) -> Result<u64, ArgError> {
    let bad = || ArgError::Size(s.to_string());
    let v = crate::families::bench::bw::parse_size(s.trim()).ok_or_else(bad)?;
    if v < 1 << 20 { Err(bad()) } else { Ok(v) }
}

/// A date, or a date and a UTC time, as runs record them (RFC 3339): the
/// prefix `started_at` is compared with.
fn parse_date(s: &str) -> Result<String, ArgError> {
    let bad = || ArgError::Date(s.to_string());
    let b = s.trim().as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|x| x.iter().all(u8::is_ascii_digit));
    let date_ok = b.len() >= 10 && digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10);
    if !date_ok {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| std::str::from_utf8(&b[r]).ok().and_then(|t| t.parse::<u32>().ok()).unwrap_or(0);
    if !(1..=12).contains(&num(5..7)) || !(1..=31).contains(&num(8..10)) {
        return Err(bad());
    }
    match b.len() {
        10 => Ok(s.trim().to_string()),
        20 if b[10] == b'T' && digits(11..13) && b[13] == b':' && digits(14..16) && b[16] == b':' && digits(17..19) && b[19] == b'Z' => {
            Ok(s.trim().to_string())
        }
        _ => Err(bad()),
    }
}

fn split_list(s: &str) -> Vec<String> {
    s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect()
}

/// The suites named by --suite, or a sentence naming the bad one.
pub fn resolve_suites(list: &str) -> Result<Vec<&'static Suite>, UsageError> {
    let names = split_list(list);
    if names.is_empty() {
        return Err(UsageError(format!("--suite needs at least one suite name; valid suites: {}", registry::suite_names())));
    }
    names
        .iter()
        .map(|n| {
            registry::find_suite(n).ok_or_else(|| UsageError(format!("unknown suite '{n}'; valid suites: {}", registry::suite_names())))
        })
        .collect()
}

/// The benchmark ids named by --bench, each checked against the registry and
/// the chosen suites.
pub fn resolve_benches(list: &str, suites: &[&'static Suite]) -> Result<Vec<String>, UsageError> {
    let ids = split_list(list);
    if ids.is_empty() {
        return Err(UsageError("--bench needs at least one benchmark id; see `oscycles list`".into()));
    }
    for id in &ids {
        let Some(b) = registry::find_benchmark(id) else {
            let all: Vec<&str> = registry::benchmarks().iter().map(|b| b.id.as_str()).collect();
            return Err(UsageError(format!("unknown benchmark '{id}'; valid benchmarks: {}", all.join(", "))));
        };
        if !suites.iter().any(|s| s.contains(b)) {
            let names: Vec<&str> = suites.iter().map(|s| s.name).collect();
            return Err(UsageError(format!(
                "benchmark '{id}' is not part of the suites chosen ({}); add a suite that has it",
                names.join(",")
            )));
        }
    }
    Ok(ids)
}

/// A comma-separated list of names, each checked by `parse`.
pub fn resolve_names<T: Named>(option: &str, list: &str) -> Result<Vec<T>, UsageError> {
    let names = split_list(list);
    if names.is_empty() {
        return Err(UsageError(format!("{option} needs at least one of: {}", T::names())));
    }
    names.iter().map(|n| T::parse(n).ok_or_else(|| UsageError(format!("{option}: unknown '{n}'; valid: {}", T::names())))).collect()
}

/// The CPUs named by --cpus, or the first two allowed ones.
pub fn resolve_cpus(list: Option<&str>) -> Result<Vec<usize>, UsageError> {
    match list {
        Some(l) => {
            let cpus = placement::validate_cpus(l).map_err(|e| UsageError(format!("--cpus: {e}")))?;
            // Each CPU once: "0,0" would quietly measure cross-core cases on one core.
            let named: usize = l.split(',').filter_map(|part| placement::parse_cpu_list(part).ok()).map(|v| v.len()).sum();
            if named != cpus.len() {
                return Err(UsageError(format!("--cpus {l}: a CPU is named twice; name each CPU once (e.g. 0,1)")));
            }
            Ok(cpus)
        }
        None => {
            let allowed = placement::allowed_cpus();
            if allowed.is_empty() {
                return Err(UsageError("this process may run on no CPU at all (sched_getaffinity failed)".into()));
            }
            Ok(allowed.into_iter().take(2).collect())
        }
    }
}

/// The help of `run`, from the registry: every suite with its description,
/// and every benchmark id by family.
pub fn run_after_help() -> String {
    let mut s = String::from("Suites:\n");
    for su in registry::SUITES {
        s += &format!("  {:<14} {}\n", su.name, su.description);
    }
    s += "\nBenchmarks (for --bench), by family; `oscycles list` says which run here:\n";
    for f in registry::FAMILIES {
        let ids: Vec<&str> = registry::benchmarks().iter().filter(|b| b.is_of(*f)).map(|b| b.id.as_str()).collect();
        s += &format!("  {:<14} {}\n", f.name(), ids.join(", "));
    }
    s
}

/// Parses the command line with the registry's suites and benchmarks in
/// `run --help`.
impl Cli {
    /// The command line's definition with the registry's help (suites and
    /// benchmarks after `run --help`): what parsing, completions and the man
    /// page are made from.
    pub fn command_with_registry_help() -> clap::Command {
        Cli::command().mut_subcommand("run", |c| c.after_help(run_after_help()))
    }
}

pub fn parse_with_registry_help() -> Cli {
    let matches = Cli::command_with_registry_help().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}
