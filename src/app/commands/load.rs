//! `oscycles load` (the loads of `run --load`, on their own) and
//! `__load-worker` (the process that carries one).

use super::private_dir;
use anyhow::{Context, Result};
use oscycles::app::cli::grammar::{LoadArgs, LoadWorkerArgs};
use oscycles::app::cli::{self, UsageError};
use oscycles::base::named::Named;
use oscycles::data::documents;
use oscycles::measure::placement;
use oscycles::measure::watchdog;
use oscycles::run::execute;
use oscycles::run::load::{self, Load, LoadKind};
use std::process::ExitCode;
use std::time::Duration;

/// `oscycles load`: the loads of `run --load`, held until SIGINT/SIGTERM or --seconds.
pub fn run_loads(args: LoadArgs) -> Result<ExitCode> {
    let kinds = cli::resolve::resolve_names::<LoadKind>("the load list", &args.loads)?;
    let cpus = match args.cpus.as_deref() {
        Some(l) => cli::resolve::resolve_cpus(Some(l))?,
        None => execute::load_cpus(placement::allowed_cpus().first().copied().unwrap_or(0)),
    };
    let scratch_base = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    documents::check_writable(&scratch_base, "load files", "--scratch").map_err(|e| UsageError(e.to_string()))?;
    let run_dir = private_dir(&scratch_base)?;
    let scratch = run_dir.path().to_path_buf();
    watchdog::install();
    let exe = oscycles::base::fsafe::own_exe().context("finding the oscycles binary (it carries the loads)")?;
    let mut running = Vec::new();
    for k in kinds.into_iter().filter(|k| *k != LoadKind::Idle) {
        let mut l = Load::start(k, &exe, &scratch, &cpus).map_err(anyhow::Error::msg)?;
        l.warm_up(Duration::ZERO).map_err(anyhow::Error::msg)?;
        running.push(l);
    }
    eprintln!("oscycles: loads running on CPUs {}; Ctrl-C stops them", placement::format_cpus(&cpus));
    let started = std::time::Instant::now();
    let mut marks: Vec<_> = running.iter().map(Load::mark).collect();
    let mut next_report = Duration::from_secs(5);
    while watchdog::interrupted().is_none() && args.seconds.is_none_or(|s| started.elapsed().as_secs() < s) {
        std::thread::sleep(Duration::from_millis(100));
        if started.elapsed() >= next_report {
            next_report += Duration::from_secs(5);
            let line: Vec<String> =
                running.iter().zip(&marks).map(|(l, m)| oscycles::tables::tabular::describe_rates(&l.facts_since(m))).collect();
            println!("{:>6.0} s  {}", started.elapsed().as_secs_f64(), line.join("; "));
            marks = running.iter().map(Load::mark).collect();
        }
        for l in &mut running {
            l.check().map_err(anyhow::Error::msg)?;
        }
    }
    drop(running);
    Ok(if watchdog::interrupted().is_some() { ExitCode::from(130) } else { ExitCode::SUCCESS })
}

pub fn load_worker(a: LoadWorkerArgs) -> Result<ExitCode> {
    let kind = LoadKind::parse(&a.kind).ok_or_else(|| UsageError(format!("unknown load '{}'", a.kind)))?;
    let cpus = placement::parse_cpu_list(&a.cpus).map_err(|e| UsageError(e.to_string()))?;
    let code = load::worker_main(load::WorkerArgs { kind, dir: a.dir, cpus, parent: a.parent, cgroup: a.cgroup });
    Ok(ExitCode::from(code as u8))
}
