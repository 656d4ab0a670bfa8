use anyhow::{Context, Result};
use oscycles::cli::{self, Command, EnvChildArgs, LoadArgs, LoadWorkerArgs, RunArgs, UsageError};
use oscycles::clock;
use oscycles::env::{self as envs, Env, EnvOptions};
use oscycles::harness::HarnessConfig;
use oscycles::isolation::{self, Isolation, RT_PRIORITY};
use oscycles::load::{self, Load, LoadKind};
use oscycles::placement::{self, Policy};
use oscycles::results::{Condition, Environment, RunDoc, RunStatus, SCHEMA, SCHEMA_VERSION, Settings, Tool, now_rfc3339};
use oscycles::runner::{self, Execution};
use oscycles::store::{self, RunWriter};
use oscycles::{host, report, watchdog};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// `oscycles run ARGV...` as a guest or container child runs it: parsed like
/// the command line, results where ARGV says; returns the exit code.
fn run_argv(argv: Vec<String>) -> u8 {
    use clap::Parser;
    match cli::Cli::try_parse_from(argv) {
        Ok(cli::Cli { command: Command::Run(args) }) => match run(*args) {
            Ok(code) => {
                if code == ExitCode::SUCCESS {
                    0
                } else {
                    1
                }
            }
            Err(e) => {
                eprintln!("oscycles: {e:#}");
                if e.downcast_ref::<UsageError>().is_some() { 2 } else { 1 }
            }
        },
        Ok(_) => 2,
        Err(e) => {
            eprintln!("{e}");
            2
        }
    }
}

fn main() -> ExitCode {
    if oscycles::env::guest::is_guest_init() {
        oscycles::env::guest::main(&run_argv);
    }
    let cli = cli::parse_with_registry_help();
    let r = match cli.command {
        Command::List { bench, long } => list(bench.as_deref(), long),
        Command::Show { file, full, json } => show(&file, full, json),
        Command::Completions { shell } => {
            let shell: clap_complete::Shell = shell.parse().expect("clap checked the name");
            clap_complete::generate(shell, &mut cli::Cli::command_with_registry_help(), "oscycles", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => clap_mangen::Man::new(cli::Cli::command_with_registry_help())
            .render(&mut std::io::stdout())
            .map(|()| ExitCode::SUCCESS)
            .map_err(anyhow::Error::from),
        Command::Run(args) => run(*args),
        Command::Compare(args) => compare(args),
        Command::Baseline { action } => baseline(action),
        Command::Doctor { cpus } => doctor(cpus.as_deref()),
        Command::Load(args) => run_loads(args),
        Command::Runs(args) => list_runs(args),
        Command::Import { files, db } => import(&files, db),
        Command::Report(args) => report_cmd(args),
        Command::LoadWorker(args) => load_worker(args),
        Command::EnvChild(args) => env_child(args),
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

/// `oscycles list [BENCH] [--long]`, within the terminal's width.
fn list(bench: Option<&str>, long: bool) -> Result<ExitCode> {
    let width = report::terminal_width();
    match bench {
        Some(id) => match oscycles::catalogue::benchmark(id) {
            Some(b) => print!("{}", report::render_benchmark(&b, width)),
            None => {
                return Err(UsageError(format!("unknown benchmark '{id}'; `oscycles list` shows every benchmark id")).into());
            }
        },
        None => print!("{}", report::render_list(&oscycles::catalogue::catalogue(), width, long)),
    }
    Ok(ExitCode::SUCCESS)
}

/// The end of a run or a `show`: the full tables when asked (as wide as
/// they are), then the one-screen summary, then where the run is and how to
/// see the rest.
fn print_results(doc: &RunDoc, path: &std::path::Path, tables: Tables) {
    let width = report::terminal_width();
    match tables {
        Tables::None => {}
        Tables::Fitted => {
            report::table::set_width(Some(width));
            print!("{}", report::for_terminal(&report::fit_text(&report::render_tables(doc), width)));
            report::table::set_width(None);
            println!();
        }
        Tables::Full => {
            print!("{}", report::for_terminal(&report::render_tables(doc)));
            println!();
        }
    }
    print!("{}", report::for_terminal(&report::fit_text(&report::summary::render(doc, width), width)));
    match tables {
        Tables::None => println!("tables: oscycles show {} (--full: every column, unsplit)", path.display()),
        Tables::Fitted => println!("every column, unsplit: oscycles show {} --full", path.display()),
        Tables::Full => {}
    }
}

/// Which tables come before the summary.
#[derive(Clone, Copy, PartialEq)]
enum Tables {
    /// Only the summary (the end of a run).
    None,
    /// Every table, split to the terminal's width (`show`).
    Fitted,
    /// Every table as wide as it is (`--full`).
    Full,
}

/// A run document to show or compare. A run that ended mid-round (killed)
/// has raw samples but no intervals yet: they are computed here.
fn read_doc(path: &std::path::Path) -> Result<RunDoc, UsageError> {
    let mut doc = store::load(path).map_err(|e| UsageError(e.to_string()))?;
    if doc.results.iter().flat_map(|r| &r.metrics).any(|m| !m.samples.is_empty() && m.estimate.is_none()) {
        let seed = oscycles::compare::seed_of(&doc.id);
        oscycles::rounds::estimate_all(&mut doc, seed);
    }
    Ok(doc)
}

/// `oscycles show RUN`: the header and summary; --full every table; --json the document.
fn show(file: &std::path::Path, full: bool, json: bool) -> Result<ExitCode> {
    let doc = read_doc(file)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", report::for_terminal(&report::fit_text(&report::header::render(&doc, false), report::terminal_width())));
    println!();
    print_results(&doc, file, if full { Tables::Full } else { Tables::Fitted });
    Ok(ExitCode::SUCCESS)
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
    // A journal left by a SIGKILLed isolated run is undone first: until then
    // this process' allowed CPUs are that run's leftovers.
    watchdog::install();
    let restored = isolation::recover_stale();
    for line in &restored {
        eprintln!("oscycles: {line}");
    }
    if !restored.is_empty() {
        // This process was born while the dead run had everything else moved
        // away from its CPU, and Linux keeps the narrowed mask: take the
        // parent's again (restored from the journal with the rest).
        // SAFETY: getppid has no preconditions.
        let parent = placement::affinity_of(unsafe { libc::getppid() } as u32);
        if !parent.is_empty() && placement::set_affinity(&parent).is_ok() {
            eprintln!("oscycles: CPUs allowed again: {}", placement::format_cpus(&parent));
        }
    }
    oscycles::cgroup::remove_stale_load_groups();
    // Validate everything before measuring anything.
    let suites = cli::resolve_suites(&args.suite)?;
    let only = args.bench.as_deref().map(|b| cli::resolve_benches(b, &suites)).transpose()?;
    let cpus = cli::resolve_cpus(args.cpus.as_deref())?;
    store::check_writable(&args.results, "results", "--results").map_err(|e| UsageError(e.to_string()))?;
    let scratch_base = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    store::check_writable(&scratch_base, "scratch files", "--scratch").map_err(|e| UsageError(e.to_string()))?;
    let db_path = args.db.clone().unwrap_or_else(|| args.results.join(oscycles::db::DEFAULT_NAME));
    oscycles::db::Db::check_path(&db_path).map_err(UsageError)?;
    let mut plan = runner::plan(&suites, only.as_deref());
    let child_round = args.round.map(|k| k as usize);
    if child_round.is_some() {
        // A round measures; boot is the parent's, per environment.
        plan.retain(|p| p.benchmark.runs() != oscycles::registry::Runs::FromHost);
    }
    if plan.is_empty() {
        return Err(UsageError("the suites and benchmarks chosen contain no case to run".into()).into());
    }
    let loads = cli::resolve_names("--load", &args.load, LoadKind::parse, &LoadKind::names())?;
    let environments = cli::resolve_names("--env", &args.env, Env::parse, &Env::names())?;
    let isolations = match (&args.isolation, args.rt) {
        (Some(list), _) => cli::resolve_names("--isolation", list, Isolation::parse, &Isolation::names())?,
        (None, true) => vec![Isolation::Rt],
        (None, false) => vec![Isolation::Pinned],
    };
    check_fits(&args, &plan, &environments)?;

    if args.rt {
        // --rt is a promise: refuse up front where SCHED_FIFO or locking is not permitted.
        placement::lock_memory().context("--rt asks for locked memory")?;
        placement::set_policy(Policy::Fifo { priority: RT_PRIORITY }).context("--rt asks for SCHED_FIFO")?;
        placement::set_policy(Policy::Other)?;
    }
    let run_dir = private_dir(&scratch_base)?;
    let names = |v: Vec<&str>| v.join(",");

    let clock = match args.tsc_hz {
        Some(hz) if hz > 1e6 => clock::known_tsc(hz),
        _ => clock::calibrate_tsc(5, Duration::from_millis(60)),
    };
    let hz = clock.tsc_hz;
    // A round's process is one round of a run of `round_count`.
    let round_count = args.rounds.map_or(oscycles::rounds::DEFAULT_ROUNDS, |r| r as usize);
    let rounds = if child_round.is_some() { 1 } else { round_count };
    let seed = args.seed.unwrap_or_else(|| {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        (t.as_nanos() as u64) ^ ((std::process::id() as u64) << 40)
    });
    // Several rounds share the batches: fewer per round, the same total.
    let (quick_batches, full_batches) = if round_count > 1 { (2, 3) } else { (11, 15) };
    let ex = Execution {
        cpus: cpus.clone(),
        loads: loads.clone(),
        isolations: isolations.clone(),
        exe: Some(std::env::current_exe().context("finding the oscycles binary (it carries the loads)")?),
        quick: harness_config(&args, hz, 2.0, quick_batches),
        full: harness_config(&args, hz, 5.0, full_batches),
        timeout: Duration::from_secs(args.timeout),
        progress: !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        scratch: run_dir.path().to_path_buf(),
        mem_bytes: args.mem_bytes,
        point_ms: args.point_ms,
        rounds: Some(oscycles::rounds::Rounds {
            count: rounds,
            seed,
            this_round: child_round,
            args: child_args(&args, false),
            bench: args.bench.clone(),
            work: run_dir.path().to_path_buf(),
            tsc_hz: hz,
        }),
    };
    let started = now_rfc3339();
    let suite_names: Vec<String> = suites.iter().map(|s| s.name.to_string()).collect();
    let mut doc = RunDoc {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        id: format!("{}-{}-{}", started.replace([':', '-'], ""), suite_names.join("+"), std::process::id()),
        started_at: started,
        finished_at: None,
        status: RunStatus::Running,
        tool: Tool::this(),
        host: host::collect(clock),
        environment: Environment { name: names(environments.iter().map(|e| e.name()).collect()), settings: Default::default() },
        condition: Condition {
            load: names(loads.iter().map(|l| l.name()).collect()),
            isolation: names(isolations.iter().map(|i| i.name()).collect()),
            facts: Default::default(),
        },
        settings: Settings {
            suites: suite_names,
            benchmarks: only,
            cpus,
            policy: names(isolations.iter().map(|i| i.policy().to_string()).collect::<Vec<_>>().iter().map(String::as_str).collect()),
            memory_locked: isolations.iter().any(|i| matches!(i, Isolation::Rt | Isolation::Isolated)),
            harness: ex.harness_for(suites[0].scale),
            case_timeout_s: args.timeout as f64,
            rounds,
            round_log: vec![],
        },
        planned_cases: plan.len() * loads.len() * isolations.len() * environments.len(),
        results: vec![],
        owner: oscycles::results::Owner::this(),
    };
    if child_round.is_none() {
        // What would make this run noisy, said before it starts (doctor's warnings).
        let findings = oscycles::doctor::check(&doc.settings.cpus);
        doc.host
            .warnings
            .extend(report::doctor::header_warnings(&findings).into_iter().map(|w| w.trim_start_matches("warning: ").to_string()));
    }
    let mut writer = RunWriter::create(&args.results, doc)?;
    // In the store from its start, so that a run killed with SIGKILL is
    // found there (and marked killed) by the next command that opens it.
    let record = |doc: &RunDoc, path: &std::path::Path| {
        if let Err(e) = oscycles::db::Db::open(&db_path).and_then(|mut db| db.upsert(doc, &path.display().to_string())) {
            eprintln!("oscycles: warning: {e}");
        }
    };
    if child_round.is_none() {
        record(&writer.doc, writer.path());
        if !args.json {
            print!("{}", report::for_terminal(&report::header::render(&writer.doc, true)));
        }
    }
    if !args.quiet && child_round.is_none() {
        let per =
            if writer.doc.planned_cases == plan.len() { String::new() } else { format!(" ({} per condition and environment)", plan.len()) };
        eprintln!("measuring {} cases{per}; results go to {}", writer.doc.planned_cases, writer.path().display());
    }
    let status = if environments == [Env::Native] && !plan.iter().any(|p| p.benchmark.runs() == oscycles::registry::Runs::FromHost) {
        runner::execute(&plan, &ex, &mut writer)?
    } else {
        let opts = EnvOptions {
            exe: ex.exe.clone().expect("set above"),
            work: ex.scratch.clone(),
            kernel: args.kernel.clone(),
            vm_mem_mib: args.vm_mem,
            vm_cpus: args.vm_cpus,
            machine: args.machine.clone(),
            init_timeout: Duration::from_secs(args.init_timeout),
            run_timeout: Duration::from_secs(args.env_timeout),
            guest_mode: args.guest_mode.clone(),
        };
        let boots = if args.batches.is_some_and(|b| b < 5) { 1 } else { 3 };
        envs::driver::run_envs(&environments, &plan, &ex, &mut writer, &child_args(&args, true), &opts, boots)?;
        let status = if watchdog::interrupted().is_some() { RunStatus::Interrupted } else { RunStatus::Complete };
        writer.finish(status)?;
        status
    };
    drop(run_dir);
    if child_round.is_some() {
        return Ok(if status == RunStatus::Interrupted { ExitCode::from(130) } else { ExitCode::SUCCESS });
    }
    let doc = &writer.doc;
    // The store is a second home: the JSON stays the record, so a store that
    // cannot be written costs a warning, not the run.
    record(doc, writer.path());
    if args.json {
        println!("{}", serde_json::to_string_pretty(doc)?);
    } else {
        println!();
        print_results(doc, writer.path(), if args.full { Tables::Full } else { Tables::None });
        println!("saved: {} ({} of {} cases, {:?})", writer.path().display(), doc.results.len(), doc.planned_cases, status);
    }
    Ok(match status {
        RunStatus::Interrupted => {
            eprintln!("oscycles: interrupted by signal {}; the results measured so far are saved", watchdog::interrupted().unwrap_or(0));
            ExitCode::from(130)
        }
        _ => ExitCode::SUCCESS,
    })
}

/// Refuses, before measuring, what cannot work: memory buffers larger than
/// this machine has free, a guest kernel or QEMU machine type that does not
/// exist, blk cases on a scratch directory without a disk behind it.
fn check_fits(args: &RunArgs, plan: &[runner::Planned], environments: &[Env]) -> Result<(), UsageError> {
    if let Some(bytes) = args.mem_bytes {
        // STREAM holds three arrays of this size at once (bw_mem cp two).
        let need = bytes.saturating_mul(3);
        let avail = oscycles::host::meminfo("MemAvailable").map(|k| k * 1024);
        if let Some(avail) = avail.filter(|&a| need > a) {
            return Err(UsageError(format!(
                "--mem-bytes {}: STREAM needs three arrays of that size ({:.1} GiB) and this machine has {:.1} GiB available; choose at most {}M",
                bytes,
                need as f64 / (1u64 << 30) as f64,
                avail as f64 / (1u64 << 30) as f64,
                (avail / 3) >> 20
            )));
        }
    }
    if let Some(k) = &args.kernel {
        envs::qemu::find_kernel(Some(k)).map_err(UsageError)?;
    }
    if environments.iter().any(|e| e.is_qemu()) {
        envs::qemu::check_machine(&args.machine).map_err(UsageError)?;
    }
    if let Some(dir) = &args.scratch
        && plan.iter().any(|p| p.benchmark.needs_disk())
        && oscycles::bench::blk::on_tmpfs(dir)
    {
        return Err(UsageError(format!(
            "--scratch {} is tmpfs, which has no disk behind it and no direct I/O: blk cannot measure there; point --scratch at a directory on a disk filesystem, or leave blk out",
            dir.display()
        )));
    }
    Ok(())
}

/// The private directory every file of a run (or of `oscycles load`) lives
/// in, under `base`; what dead runs left there is removed first, and said.
fn private_dir(base: &std::path::Path) -> Result<oscycles::bench::scratch::RunDir, UsageError> {
    let (dir, reaped) = oscycles::bench::scratch::RunDir::create(base)
        .map_err(|e| UsageError(format!("cannot make a private directory in '{}' (--scratch): {e}", base.display())))?;
    for line in reaped {
        eprintln!("oscycles: {line}");
    }
    Ok(dir)
}

fn baseline_path(results: &std::path::Path, name: &str) -> Result<PathBuf, UsageError> {
    store::check_id(name).map_err(|e| UsageError(format!("baseline name: {e}")))?;
    Ok(results.join("baselines").join(format!("{name}.json")))
}

/// `oscycles compare A B` or `compare --baseline NAME RUN`, with the gate.
fn compare(a: cli::CompareArgs) -> Result<ExitCode> {
    let (da, db, names) = match (&a.baseline, a.runs.as_slice()) {
        (Some(name), [run]) => {
            let path = baseline_path(&a.results, name)?;
            if !path.exists() {
                return Err(
                    UsageError(format!("no baseline '{name}' in {} (oscycles baseline save {name} RUN...)", a.results.display())).into()
                );
            }
            (read_doc(&path)?, read_doc(run)?, (format!("baseline {name}"), run.display().to_string()))
        }
        (Some(_), _) => return Err(UsageError("with --baseline, give just the run to check".into()).into()),
        (None, [x, y]) => (read_doc(x)?, read_doc(y)?, (x.display().to_string(), y.display().to_string())),
        (None, _) => return Err(UsageError("compare needs two runs A B, or --baseline NAME and one run".into()).into()),
    };
    let policy = oscycles::uncertainty::Policy { margin: a.margin, ..Default::default() };
    let rows = oscycles::compare::rows(&da, &db, &policy);
    if rows.is_empty() {
        return Err(UsageError(format!("'{}' and '{}' have no measured case in common", names.0, names.1)).into());
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", report::for_terminal(&report::compare::render(&da, &db, &rows, &policy)));
    }
    let Some(limit) = a.fail_above else { return Ok(ExitCode::SUCCESS) };
    let bad = oscycles::compare::regressions(&rows, limit);
    if bad.is_empty() {
        println!("gate: no cell is significantly worse than {} by more than {:.1}%: pass", names.0, limit * 100.0);
        return Ok(ExitCode::SUCCESS);
    }
    println!("gate: {} cells significantly worse than {} by more than {:.1}%: FAIL", bad.len(), names.0, limit * 100.0);
    for r in bad {
        println!("  {} {} {}: rel. {}", r.benchmark, report::for_terminal(&r.params), r.metric, report::compare::ratio_cell(&r.judged));
    }
    Ok(ExitCode::from(1))
}

/// `oscycles baseline save NAME RUN...` and `baseline list`.
fn baseline(action: cli::BaselineAction) -> Result<ExitCode> {
    match action {
        cli::BaselineAction::Save { name, runs, results } => {
            let path = baseline_path(&results, &name)?;
            let docs = runs.iter().map(|r| store::load(r).map_err(|e| UsageError(e.to_string()))).collect::<Result<Vec<_>, _>>()?;
            let n = docs.len();
            let mut pooled = oscycles::rounds::pool(docs, oscycles::compare::seed_of(&name)).expect("at least one run");
            pooled.id = format!("baseline-{name}");
            std::fs::create_dir_all(path.parent().expect("a directory"))
                .map_err(|e| UsageError(format!("cannot create '{}': {e}", path.parent().unwrap_or(&path).display())))?;
            store::write_atomically(&path, serde_json::to_string_pretty(&pooled)?)
                .map_err(|e| UsageError(format!("cannot write '{}': {e}", path.display())))?;
            println!(
                "baseline {name}: {n} runs, {} cells, {} rounds, saved as {}",
                pooled.results.len(),
                pooled.settings.rounds,
                path.display()
            );
        }
        cli::BaselineAction::List { results } => {
            let dir = results.join("baselines");
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(String::from)).collect())
                .unwrap_or_default();
            names.sort();
            for n in &names {
                println!("{}", report::for_terminal(n));
            }
            println!("{} baselines in {}", names.len(), dir.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `oscycles doctor`: what would make measurements noisy here, with fixes.
fn doctor(cpus: Option<&str>) -> Result<ExitCode> {
    let cpus = cli::resolve_cpus(cpus)?;
    let findings = oscycles::doctor::check(&cpus);
    print!("{}", report::for_terminal(&report::doctor::render(&findings, report::terminal_width())));
    Ok(ExitCode::SUCCESS)
}

/// `oscycles load`: the loads of `run --load`, held until SIGINT/SIGTERM or --seconds.
fn run_loads(args: LoadArgs) -> Result<ExitCode> {
    let kinds = cli::resolve_names("the load list", &args.loads, LoadKind::parse, &LoadKind::names())?;
    let cpus = match args.cpus.as_deref() {
        Some(l) => cli::resolve_cpus(Some(l))?,
        None => runner::load_cpus(placement::allowed_cpus().first().copied().unwrap_or(0)),
    };
    let scratch_base = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    store::check_writable(&scratch_base, "load files", "--scratch").map_err(|e| UsageError(e.to_string()))?;
    let run_dir = private_dir(&scratch_base)?;
    let scratch = run_dir.path().to_path_buf();
    watchdog::install();
    let exe = std::env::current_exe().context("finding the oscycles binary (it carries the loads)")?;
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
            let line: Vec<String> = running.iter().zip(&marks).map(|(l, m)| report::load::describe_rates(&l.facts_since(m))).collect();
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

fn load_worker(a: LoadWorkerArgs) -> Result<ExitCode> {
    let kind = LoadKind::parse(&a.kind).ok_or_else(|| UsageError(format!("unknown load '{}'", a.kind)))?;
    let cpus = placement::parse_cpu_list(&a.cpus).map_err(|e| UsageError(e.to_string()))?;
    let code = load::worker_main(load::WorkerArgs { kind, dir: a.dir, cpus, parent: a.parent, cgroup: a.cgroup });
    Ok(ExitCode::from(code as u8))
}

/// The arguments an environment's child (`with_bench_and_rounds`) or a
/// round's process runs with: the user's, without what only the host uses
/// (environments, results, guest settings).
fn child_args(a: &RunArgs, with_bench_and_rounds: bool) -> Vec<String> {
    let mut v: Vec<String> = vec!["--suite".into(), a.suite.clone()];
    let mut opt = |k: &str, val: Option<String>| {
        if let Some(x) = val {
            v.push(k.into());
            v.push(x);
        }
    };
    if with_bench_and_rounds {
        opt("--bench", a.bench.clone());
        opt("--rounds", a.rounds.map(|r| r.to_string()));
        opt("--seed", a.seed.map(|r| r.to_string()));
    }
    opt("--cpus", a.cpus.clone());
    opt("--batches", a.batches.map(|b| b.to_string()));
    opt("--batch-ms", a.batch_ms.map(|b| b.to_string()));
    opt("--iterations", a.iterations.map(|b| b.to_string()));
    opt("--mem-bytes", a.mem_bytes.map(|b| b.to_string()));
    opt("--point-ms", a.point_ms.map(|b| b.to_string()));
    opt("--isolation", a.isolation.clone());
    opt("--load", Some(a.load.clone()));
    opt("--timeout", Some(a.timeout.to_string()));
    if a.rt {
        v.push("--rt".into());
    }
    v
}

/// `oscycles __env-child`: a native or container child of an environment run.
fn env_child(a: EnvChildArgs) -> Result<ExitCode> {
    let spec: envs::guest::GuestSpec = serde_json::from_str(&a.spec).map_err(|e| UsageError(format!("--spec: {e}")))?;
    let mut out = std::io::stdout();
    let results_dir = tempfile::Builder::new()
        .prefix("oscycles-env-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .context("a private directory for the results")?;
    let results = results_dir.path().join("results");
    if a.microvm {
        let mut hello = || envs::guest::send(&mut std::io::stdout(), "hello", 0, b"first instruction");
        let r = oscycles::microvm::run_with(oscycles::microvm::GuestCase::Cpuid, 1000, Duration::from_secs(10), &mut hello);
        match r {
            Ok(o) => envs::guest::send(&mut out, "run", 1, format!("{{\"create_to_marker_cycles\": {}}}", o.create_to_marker).as_bytes()),
            Err(e) => envs::guest::send(&mut out, "error", 1, format!("microvm: {e}").as_bytes()),
        }
        return Ok(ExitCode::SUCCESS);
    }
    if !a.container {
        envs::guest::send(&mut out, "hello", 0, b"start");
        envs::guest::serve(&mut out, &spec, envs::guest::facts_inside(), &results, &run_argv);
        let _ = std::fs::remove_dir_all(&results);
        return Ok(ExitCode::SUCCESS);
    }
    let limits = envs::container::limit_self(a.cpus_limit, a.mem_mib);
    if let Err(e) = envs::container::unshare_all() {
        envs::guest::send(&mut out, "error", 1, format!("container: {e}").as_bytes());
        return Ok(ExitCode::from(1));
    }
    // SAFETY: this process is single-threaded here (unshare of a user
    // namespace just succeeded, which requires it), so fork is safe.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        envs::guest::send(&mut out, "error", 1, format!("container: fork: {}", std::io::Error::last_os_error()).as_bytes());
        return Ok(ExitCode::from(1));
    }
    if pid == 0 {
        // PID 1 of the new PID namespace; it dies with its parent.
        // SAFETY: prctl with an integer argument.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
        if let Err(e) = envs::container::set_up_inside() {
            envs::guest::send(&mut out, "error", 1, format!("container: {e}").as_bytes());
            std::process::exit(1);
        }
        envs::guest::send(&mut out, "hello", 0, b"start");
        let mut facts = envs::guest::facts_inside();
        facts.extend(envs::container::facts_inside());
        facts.insert("cgroup_limits".into(), serde_json::json!(limits.unwrap_or_else(|e| e)));
        envs::guest::serve(&mut out, &spec, facts, &results, &run_argv);
        let _ = std::fs::remove_dir_all(&results);
        std::process::exit(0);
    }
    let mut status = 0;
    // SAFETY: waiting for the child just forked; status is a valid out-pointer.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    Ok(ExitCode::from(if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) as u8 } else { 1 }))
}

/// Opens the store at `path`; a file that is not one is a usage error.
fn open_db(path: &std::path::Path) -> Result<oscycles::db::Db> {
    oscycles::db::Db::check_path(path).map_err(UsageError)?;
    Ok(oscycles::db::Db::open(path)?)
}

fn default_db(db: Option<PathBuf>) -> PathBuf {
    db.unwrap_or_else(|| PathBuf::from("oscycles-results").join(oscycles::db::DEFAULT_NAME))
}

/// `oscycles runs`: the stored runs, newest first.
fn list_runs(a: cli::RunsArgs) -> Result<ExitCode> {
    let path = default_db(a.db);
    if !path.exists() {
        return Err(UsageError(format!("no run store at '{}' (oscycles run creates it; or give --db)", path.display())).into());
    }
    let db = open_db(&path)?;
    let rows = db.list(&oscycles::db::Filter { suite: a.suite, host: a.host, environment: a.environment, since: a.since })?;
    let mut t = report::table::Table::new(&["run", "started", "status", "host", "kernel", "environment", "suites", "cases", "from"], 9);
    for r in &rows {
        t.row(vec![
            r.id.clone(),
            r.started_at.clone(),
            r.status.clone(),
            r.hostname.clone(),
            r.kernel.clone(),
            r.environment.clone(),
            r.suites.clone(),
            r.cases.to_string(),
            r.source.clone(),
        ]);
    }
    print!("{}", report::for_terminal(&t.render()));
    println!("{} runs in {}", rows.len(), path.display());
    Ok(ExitCode::SUCCESS)
}

/// `oscycles import FILES...`: run documents into the store; a duplicate or
/// an unreadable document is refused with exit code 2.
fn import(files: &[PathBuf], db: Option<PathBuf>) -> Result<ExitCode> {
    let path = default_db(db);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| UsageError(format!("cannot create '{}': {e}", dir.display())))?;
    }
    // Every document is read and checked before any is stored, and they are
    // stored in one transaction: all or none.
    let mut docs = Vec::new();
    for f in files {
        let doc = store::load(f).map_err(|e| UsageError(format!("{e}; nothing was imported")))?;
        if let Some((_, other)) = docs.iter().find(|(d, _): &&(RunDoc, String)| d.id == doc.id) {
            return Err(UsageError(format!("{} and {other} hold the same run '{}'; nothing was imported", f.display(), doc.id)).into());
        }
        docs.push((doc, f.display().to_string()));
    }
    let mut db = open_db(&path)?;
    let stored: Vec<(&RunDoc, String)> = docs.iter().map(|(d, f)| (d, format!("imported from {f}"))).collect();
    db.insert_all(&stored).map_err(|e| match e {
        oscycles::db::DbError::Duplicate(_) => anyhow::Error::new(UsageError(format!("{e}; nothing was imported"))),
        e => anyhow::Error::new(e),
    })?;
    for (doc, f) in &docs {
        println!("imported {} ({} cases) from {}", doc.id, doc.results.len(), report::for_terminal(f));
    }
    Ok(ExitCode::SUCCESS)
}

/// `oscycles report RUN...`: HTML, Markdown, CSV or JSON over the runs.
fn report_cmd(a: cli::ReportArgs) -> Result<ExitCode> {
    if a.html.is_none() && a.markdown.is_none() && a.csv.is_none() && a.json.is_none() {
        return Err(UsageError("report needs at least one of --html DIR, --markdown FILE, --csv FILE, --json DIR".into()).into());
    }
    let mut db: Option<oscycles::db::Db> = None;
    let mut docs = Vec::new();
    for r in &a.runs {
        let p = std::path::Path::new(r);
        if p.exists() {
            docs.push(read_doc(p)?);
            continue;
        }
        if db.is_none() {
            let path = default_db(a.db.clone());
            if !path.exists() {
                return Err(UsageError(format!("'{r}' is neither a file nor a run id (no run store at '{}')", path.display())).into());
            }
            db = Some(open_db(&path)?);
        }
        match db.as_ref().expect("opened above").load(r)? {
            Some(d) => docs.push(d),
            None => return Err(UsageError(format!("'{r}' is neither a file nor a run id in the store")).into()),
        }
    }
    let write = |dest: &PathBuf, text: &str| -> Result<()> {
        if dest.as_os_str() == "-" {
            print!("{}", report::for_terminal(text));
            return Ok(());
        }
        std::fs::write(dest, text).map_err(|e| UsageError(format!("cannot write '{}': {e}", dest.display())).into())
    };
    use report::export::{Export, Format};
    let mkdir = |d: &PathBuf| std::fs::create_dir_all(d).map_err(|e| UsageError(format!("cannot create '{}': {e}", d.display())));
    for (format, dest) in [(Format::Markdown, &a.markdown), (Format::Csv, &a.csv), (Format::Json, &a.json), (Format::Html, &a.html)] {
        let Some(dest) = dest else { continue };
        match report::export::exporter(format).export(&docs).map_err(|e| UsageError(e.to_string()))? {
            Export::Text(text) => write(dest, &text)?,
            Export::Files { files, entry } => {
                mkdir(dest)?;
                for (name, text) in &files {
                    write(&dest.join(name), text)?;
                }
                if let Some(e) = entry {
                    eprintln!("report: {}", dest.join(e).display());
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
