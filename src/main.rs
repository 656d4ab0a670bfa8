//! The command-line edge: parse, dispatch to a command (`app/commands/`), map
//! errors to exit codes (0 success, 1 failure, 2 bad usage; 130 interrupted,
//! said by the commands that can be).

#[path = "app/commands/mod.rs"]
mod commands;

use commands::{compare, fleet, load, run, show, store};
use oscycles::app::cli::grammar::{Cli, Command, FleetAction};
use oscycles::app::cli::{self, UsageError};
use oscycles::present::report;
use std::process::ExitCode;

fn main() -> ExitCode {
    // SAFETY: first in main, before any thread starts.
    for entry in unsafe { oscycles::base::fsafe::keep_trusted_env() } {
        eprintln!("oscycles: {}", report::for_terminal(&entry.to_string()));
    }
    oscycles::families::bench::steady_allocator();
    oscycles::run::env::init_hooks();
    let cli = cli::parse_with_registry_help();
    if cli.command.only_prints() {
        // SAFETY: restoring the default action of SIGPIPE before any thread
        // starts: a command whose reader went away (`oscycles show | head`)
        // ends quietly, as other tools do, instead of panicking in println!.
        // Commands that measure keep it ignored (their pipes report EPIPE).
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    let r = match cli.command {
        Command::List { bench, long, sources } => show::list(bench.as_deref(), long, sources),
        Command::Show { file, full, json, counters, time } => show::show(&file, full, json, counters, time),
        Command::Completions { shell } => {
            let shell: clap_complete::Shell = shell.parse().expect("clap checked the name");
            clap_complete::generate(shell, &mut Cli::command_with_registry_help(), "oscycles", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => clap_mangen::Man::new(Cli::command_with_registry_help())
            .render(&mut std::io::stdout())
            .map(|()| ExitCode::SUCCESS)
            .map_err(anyhow::Error::from),
        Command::Run(args) => run::run(*args),
        Command::Compare(args) => compare::compare(args),
        Command::Baseline { action } => compare::baseline(action),
        Command::Fleet { action: FleetAction::Run(args) } => fleet::run(args),
        Command::Doctor { cpus } => show::doctor(cpus.as_deref()),
        Command::Load(args) => load::run_loads(args),
        Command::Runs(args) => store::list_runs(args),
        Command::Import { files, db } => store::import(&files, db),
        Command::Report(args) => store::report_cmd(args),
        Command::LoadWorker(args) => load::load_worker(args),
        Command::EnvChild(args) => run::env_child(args),
        Command::Round(args) => run::round(args),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            if let Some(u) = e.downcast_ref::<UsageError>() {
                eprintln!("oscycles: {}", report::for_terminal(&u.to_string()));
                ExitCode::from(2)
            } else {
                eprintln!("oscycles: error: {}", report::for_terminal(&format!("{e:#}")));
                ExitCode::from(1)
            }
        }
    }
}
