use anyhow::{Context, Result};
use oscycles::cli::{self, Command, RunArgs, UsageError};
use oscycles::clock;
use oscycles::harness::HarnessConfig;
use oscycles::placement::{self, Policy};
use oscycles::results::{Condition, Environment, RunDoc, RunStatus, SCHEMA, SCHEMA_VERSION, Settings, Tool, now_rfc3339};
use oscycles::runner::{self, Execution};
use oscycles::store::{self, RunWriter};
use oscycles::{host, report, watchdog};
use std::process::ExitCode;
use std::time::Duration;

const RT_PRIORITY: i32 = 50;

fn main() -> ExitCode {
    let cli = cli::parse_with_registry_help();
    let r = match cli.command {
        Command::List => {
            print!("{}", report::render_list());
            Ok(ExitCode::SUCCESS)
        }
        Command::Show { file } => match store::load(&file) {
            Ok(doc) => {
                print!("{}", report::render_run(&doc));
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => Err(anyhow::Error::new(UsageError(e.to_string()))),
        },
        Command::Run(args) => run(args),
        Command::Compare { a, b } => compare(&a, &b),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            if let Some(u) = e.downcast_ref::<UsageError>() {
                eprintln!("oscycles: {u}");
                ExitCode::from(2)
            } else {
                eprintln!("oscycles: error: {e:#}");
                ExitCode::from(1)
            }
        }
    }
}

fn harness_config(args: &RunArgs, tsc_hz: f64, default_ms: f64, default_batches: usize) -> HarnessConfig {
    let ms = args.batch_ms.unwrap_or(default_ms);
    HarnessConfig {
        target_batch_cycles: (ms * 1e-3 * tsc_hz) as u64,
        batches: args.batches.map_or(default_batches, |b| b as usize),
        fixed_inner: args.iterations,
        max_inner: 1 << 40,
    }
}

fn run(args: RunArgs) -> Result<ExitCode> {
    // Validate everything before measuring anything.
    let suites = cli::resolve_suites(&args.suite)?;
    let only = args.bench.as_deref().map(|b| cli::resolve_benches(b, &suites)).transpose()?;
    let cpus = cli::resolve_cpus(args.cpus.as_deref())?;
    store::check_writable(&args.results, "results", "--results").map_err(|e| UsageError(e.to_string()))?;
    let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    store::check_writable(&scratch, "scratch files", "--scratch").map_err(|e| UsageError(e.to_string()))?;
    let plan = runner::plan(&suites, only.as_deref());
    if plan.is_empty() {
        return Err(UsageError("the suites and benchmarks chosen contain no case to run".into()).into());
    }
    watchdog::install();

    let policy = if args.rt {
        placement::lock_memory().context("--rt asks for locked memory")?;
        // Check now that SCHED_FIFO is permitted, rather than in every case.
        placement::set_policy(Policy::Fifo { priority: RT_PRIORITY }).context("--rt asks for SCHED_FIFO")?;
        placement::set_policy(Policy::Other)?;
        Policy::Fifo { priority: RT_PRIORITY }
    } else {
        Policy::Other
    };

    let clock = clock::calibrate_tsc(5, Duration::from_millis(60));
    let hz = clock.tsc_hz;
    let ex = Execution {
        cpus: cpus.clone(),
        policy,
        memory_locked: placement::memory_locked(),
        quick: harness_config(&args, hz, 2.0, 11),
        full: harness_config(&args, hz, 5.0, 15),
        timeout: Duration::from_secs(args.timeout),
        progress: !args.quiet,
        scratch,
        mem_bytes: args.mem_bytes,
    };
    let started = now_rfc3339();
    let suite_names: Vec<String> = suites.iter().map(|s| s.name.to_string()).collect();
    let doc = RunDoc {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        id: format!("{}-{}-{}", started.replace([':', '-'], ""), suite_names.join("+"), std::process::id()),
        started_at: started,
        finished_at: None,
        status: RunStatus::Running,
        tool: Tool::this(),
        host: host::collect(clock),
        environment: Environment { name: "native".into(), settings: Default::default() },
        condition: Condition { load: "idle".into(), isolation: if args.rt { "rt" } else { "pinned" }.into() },
        settings: Settings {
            suites: suite_names,
            benchmarks: only,
            cpus,
            policy: policy.to_string(),
            memory_locked: ex.memory_locked,
            harness: ex.harness_for(suites[0].scale),
            case_timeout_s: args.timeout as f64,
        },
        planned_cases: plan.len(),
        results: vec![],
    };
    let mut writer = RunWriter::create(&args.results, doc)?;
    print!("{}", report::header::render(&writer.doc, true));
    if !args.quiet {
        eprintln!("measuring {} cases; results go to {}", plan.len(), writer.path().display());
    }
    let status = runner::execute(&plan, &ex, &mut writer)?;
    let doc = &writer.doc;
    print!("{}", report::render_tables(doc));
    println!("\nsaved: {} ({} of {} cases, {:?})", writer.path().display(), doc.results.len(), doc.planned_cases, status);
    Ok(match status {
        RunStatus::Interrupted => {
            eprintln!("oscycles: interrupted by signal {}; the results measured so far are saved", watchdog::interrupted().unwrap_or(0));
            ExitCode::from(130)
        }
        _ => ExitCode::SUCCESS,
    })
}

fn compare(a: &std::path::Path, b: &std::path::Path) -> Result<ExitCode> {
    let load = |p: &std::path::Path| store::load(p).map_err(|e| UsageError(e.to_string()));
    let (da, db) = (load(a)?, load(b)?);
    let rows = oscycles::compare::rows(&da, &db);
    if rows.is_empty() {
        return Err(UsageError(format!("'{}' and '{}' have no measured case in common", a.display(), b.display())).into());
    }
    print!("{}", report::compare::render(&da, &db, &rows));
    Ok(ExitCode::SUCCESS)
}
