//! The grammar of oscycles' commands: every subcommand and its arguments
//! (`run`'s in [`super::run`]), as clap derives them.

use super::run::RunArgs;
use super::values::*;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

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
        /// Where the run's time went: per family and kind of round, the
        /// seconds measuring and counting its cases; then the rest (process
        /// starts, TSC calibration, planning, writes, cool-downs), before the summary.
        #[arg(long, conflicts_with = "json")]
        time: bool,
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
    /// The run's settings with this round's (a run spec, JSON; `-`: read
    /// from stdin, as the run hands it).
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
