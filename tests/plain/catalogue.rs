//! The catalogue is open: a family defined here, in the test crate, runs
//! through the real runner, store and exporters without any change to the
//! registry (it is in no list there; a suite made here holds it), and its own
//! table and plot, which its `Family` carries, appear beside oscycles' tables
//! without any change to `report/`;
//! an environment defined here, in no list of oscycles' either, with its own
//! option and its own error, runs through the real runner too; so does a
//! guest-program environment, one file of the guest-program kit's.

#[path = "catalogue/echo/mod.rs"]
mod echo;
#[path = "catalogue/echo_program.rs"]
mod echo_program;
#[path = "catalogue/thread_env.rs"]
mod thread_env;

use echo::{ECHO_SUITE, Echo};
use oscycles::base::named::Named;
use oscycles::data::documents::{self, RunWriter};
use oscycles::data::results::{CaseStatus, RunDoc, RunStatus};
use oscycles::measure::clock;
use oscycles::measure::harness::HarnessConfig;
use oscycles::measure::placement;
use oscycles::present::report::export::{Export, Format, exporter, exporter_with};
use oscycles::present::report::tables::Lineup;
use oscycles::run::env::environment::Env;
use oscycles::run::env::error::EnvError;
use oscycles::run::env::guest::{GuestMode, GuestSpec};
use oscycles::run::env::options::{EnvArgs, EnvOptions};
use oscycles::run::env::{self, launch};
use oscycles::run::execute::Execution;
use oscycles::run::plan;
use oscycles::run::prepared::{self, Prepared};
use oscycles::run::progress::Quiet;
use oscycles::run::registry;
use oscycles::run::runner::{self, Environments};
use oscycles::run::spec::RunSpec;
use std::time::Duration;

#[test]
fn a_family_outside_the_registry_runs_through_the_runner_store_and_exporters() {
    assert!(registry::find_family("echo").is_none(), "the test family is in no registry list");
    let cpus: Vec<usize> = placement::allowed_cpus().into_iter().take(2).collect();
    let tmp = tempfile::tempdir().unwrap();
    let ex = Execution::in_process(cpus.clone(), HarnessConfig::tiny(), tmp.path().to_path_buf());
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let plan = plan::plan(&[&ECHO_SUITE], None);
    assert_eq!(plan.iter().map(|p| p.label()).collect::<Vec<_>>(), ["echo.copy bytes=64", "echo.copy bytes=4096"]);
    let spec = RunSpec { suites: vec!["echo".into()], ..RunSpec::default() };
    let mut w = RunWriter::create(tmp.path(), spec.document(&["native"], plan.len(), cpus, ex.full, clock)).unwrap();
    assert_eq!(prepared::execute(&plan, &ex, &mut w, &mut Quiet).unwrap(), RunStatus::Complete);

    // Stored, and read back as it was written.
    let back = documents::load(w.path()).unwrap();
    assert_eq!(back, w.doc);
    assert_eq!(back.results.len(), 2);
    for r in &back.results {
        assert_eq!((r.family.as_str(), r.suite.as_str(), r.status), ("echo", "echo", CaseStatus::Ok), "{:?}", r.reason);
        let m = r.metric("per_copy").expect("its metric");
        assert!(m.summary.n >= 3 && m.summary.median > 0.0);
    }

    // The exporters know nothing of the family, and show it all the same.
    for format in Format::ALL {
        let text = match exporter(format).export(std::slice::from_ref(&back)).unwrap() {
            Export::Text(t) => t,
            Export::Files { files, .. } => files.into_iter().map(|(_, body)| body).collect(),
        };
        assert!(text.contains("echo.copy"), "{}: {text}", format.name());
        if matches!(format, Format::Text | Format::Markdown | Format::Csv) {
            assert!(text.contains("bytes=4096") && text.contains("per_copy"), "{}: {text}", format.name());
        }
    }
}

/// The echo suite measured in this process, stored, read back.
fn echo_run(dir: &std::path::Path) -> RunDoc {
    let cpus: Vec<usize> = placement::allowed_cpus().into_iter().take(2).collect();
    let ex = Execution::in_process(cpus.clone(), HarnessConfig::tiny(), dir.to_path_buf());
    let plan = plan::plan(&[&ECHO_SUITE], None);
    let spec = RunSpec { suites: vec!["echo".into()], ..RunSpec::default() };
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let mut w = RunWriter::create(dir, spec.document(&["native"], plan.len(), cpus, ex.full, clock)).unwrap();
    assert_eq!(prepared::execute(&plan, &ex, &mut w, &mut Quiet).unwrap(), RunStatus::Complete);
    documents::load(w.path()).unwrap()
}

/// The text of an export, whatever its form.
fn text_of(export: Export) -> String {
    match export {
        Export::Text(t) => t,
        Export::Files { files, .. } => files.into_iter().map(|(_, body)| body).collect(),
    }
}

#[test]
fn a_family_table_and_plot_defined_here_are_laid_out_by_every_exporter_that_lays_them_out() {
    let tmp = tempfile::tempdir().unwrap();
    let doc = echo_run(tmp.path());
    let tables = Lineup::standard().with_family(&Echo);
    assert!(tables.shows(echo::FAMILY) && !Lineup::standard().shows(echo::FAMILY));
    for format in Format::ALL {
        let text = text_of(exporter_with(format, tables.clone()).export(std::slice::from_ref(&doc)).unwrap());
        assert!(text.contains("echo.copy") || text.contains("4096"), "{}: {text}", format.name());
        if matches!(format, Format::Text | Format::Html) {
            // Its own table, with its rows; not the generic one.
            assert!(text.contains(echo::table::TITLE), "{}: {text}", format.name());
            if format == Format::Text {
                let row = text.lines().find(|l| l.trim_start().starts_with("4096 ")).unwrap_or_else(|| panic!("no 4096 row: {text}"));
                assert_eq!(row.split_whitespace().count(), 3, "{row}");
            } else {
                // HTML lays the same table out as an HTML table, cell for cell.
                let row = text.split("<tr>").find(|r| r.starts_with("<td>4096</td>")).unwrap_or_else(|| panic!("no 4096 row: {text}"));
                assert_eq!(row.matches("<td").count(), 3, "{row}");
            }
            assert!(!text.contains("family echo: every metric"), "{}: {text}", format.name());
        }
        // Its own plot, in the format that draws.
        assert_eq!(text.contains(echo::table::PLOT_TITLE), format == Format::Html, "{}", format.name());
        // Without it, the generic table shows every metric instead.
        if format == Format::Text {
            let plain = text_of(exporter(format).export(std::slice::from_ref(&doc)).unwrap());
            assert!(!plain.contains(echo::table::TITLE) && plain.contains("family echo: every metric"), "{plain}");
        }
    }
}

#[test]
fn an_environment_defined_here_with_its_own_option_runs_through_the_runner() {
    use thread_env::{TAG, ThreadArgs, ThreadEnv};
    assert!(Env::parse("thread").is_none(), "the test environment is in no registration");
    let envs: [Env; 1] = [&ThreadEnv];
    let mut cmd = env::with_options(clap::Command::new("catalogue"), &envs);
    let help = cmd.render_long_help().to_string();
    assert!(help.contains("--thread-env-tag <WORD>") && help.contains("records among its facts"), "{help}");
    assert!(cmd.clone().try_get_matches_from(["catalogue", "--thread-env-tag"]).is_err(), "a missing value is refused");
    let m = cmd.try_get_matches_from(["catalogue", "--thread-env-tag", "seven"]).unwrap();
    let own = <EnvArgs as clap::FromArgMatches>::from_arg_matches(&m).unwrap();
    assert_eq!(own.get::<ThreadArgs>().unwrap().tag, "seven");

    let tmp = tempfile::tempdir().unwrap();
    let o = thread_options(own, tmp.path());
    let cpus: Vec<usize> = placement::allowed_cpus().into_iter().take(2).collect();
    let ex = Execution::in_process(cpus.clone(), HarnessConfig::tiny(), tmp.path().to_path_buf());
    let plan = plan::plan(&[&ECHO_SUITE], None);
    let spec = RunSpec { suites: vec!["echo".into()], ..RunSpec::default() };
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let mut w =
        RunWriter::create(&tmp.path().join("results"), spec.document(&["thread"], plan.len(), cpus, ex.full, clock.clone())).unwrap();
    let envs = Environments { list: envs.to_vec(), options: o };
    assert_eq!(runner::run(&Prepared::of(plan, ex, clock), &envs, &mut w, &mut Quiet).unwrap(), RunStatus::Complete);

    let doc = documents::load(w.path()).unwrap();
    assert_eq!(doc.results.len(), 2);
    for r in &doc.results {
        assert_eq!((r.environment.as_deref(), r.status), (Some("thread"), CaseStatus::Ok), "{:?}", r.reason);
        assert!(r.metric(echo::PER_COPY).is_some_and(|m| m.summary.n >= 3 && m.summary.median > 0.0));
    }
    assert_eq!(doc.environment.settings["thread"][TAG], "seven", "{:?}", doc.environment.settings);
}

/// How the thread environment is started in these tests: its own options
/// `own`, its work in `dir`.
fn thread_options(own: EnvArgs, dir: &std::path::Path) -> EnvOptions {
    EnvOptions {
        exe: "/nonexistent/oscycles".into(),
        work: dir.into(),
        kernel: None,
        vm_mem_mib: 128,
        vm_cpus: 1,
        cpus: vec![0],
        init_timeout: Duration::from_secs(30),
        run_timeout: Duration::from_secs(120),
        guest_mode: GuestMode::Run,
        own,
        keep_console: None,
    }
}

#[test]
fn an_environment_defined_here_has_its_own_error_wrapped_as_it_is() {
    use thread_env::{REFUSE, ThreadEnv, ThreadError};
    let cmd = env::with_options(clap::Command::new("catalogue"), &[&ThreadEnv]);
    let m = cmd.try_get_matches_from(["catalogue", "--thread-env-tag", REFUSE]).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let o = thread_options(<EnvArgs as clap::FromArgMatches>::from_arg_matches(&m).unwrap(), tmp.path());
    let spec = GuestSpec { run: RunSpec::default(), mode: GuestMode::Run, vm_cpus: 1, vm_mem_mib: 128 };
    let e = launch::run_in(&ThreadEnv, &spec, &[], &o).unwrap_err();
    assert_eq!(e.to_string(), "thread: told to refuse (--thread-env-tag refuse)");
    assert!(matches!(&e, EnvError::Own(own) if own.downcast_ref::<ThreadError>().is_some()), "{e:?}");
}

/// The echo program through the real runner: `plan` (a part of the echo
/// suite), its console kept under `dir` as `oscycles run` keeps them; the
/// document.
fn echo_program_run(dir: &std::path::Path, plan: Vec<plan::PlannedCase>, mode: GuestMode) -> RunDoc {
    use oscycles::run::env::program::Program;
    let envs: [Env; 1] = [&Program(echo_program::EchoProgram)];
    let cpus: Vec<usize> = placement::allowed_cpus().into_iter().take(2).collect();
    let ex = Execution::in_process(cpus.clone(), HarnessConfig::tiny(), dir.to_path_buf());
    let spec = RunSpec { suites: vec!["echo".into()], ..RunSpec::default() };
    let clock = clock::known_tsc(1e9);
    let doc = spec.document(&["echo-program"], plan.len(), cpus, ex.full, clock.clone());
    let mut w = RunWriter::create(&dir.join("results"), doc).unwrap();
    let mut o = thread_options(EnvArgs::defaults().unwrap(), dir);
    (o.guest_mode, o.init_timeout, o.keep_console) = (mode, Duration::from_secs(2), Some(w.path().with_extension("")));
    let envs = Environments { list: envs.to_vec(), options: o };
    runner::run(&Prepared::of(plan, ex, clock), &envs, &mut w, &mut Quiet).unwrap();
    documents::load(w.path()).unwrap()
}

/// A guest program's environment is one file of the kit's: the cases the
/// run planned (here one of the suite's two, as `--cases` leaves it) are
/// what it is asked and what comes back, measured with the metric its
/// family names, with the facts every guest program has and its own.
#[test]
fn a_guest_program_defined_here_is_one_file_and_gets_exactly_the_planned_cases() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cases = plan::plan(&[&ECHO_SUITE], None);
    plan::keep_cases(&mut cases, &["echo.copy bytes=4096".to_string()]).unwrap();
    let doc = echo_program_run(tmp.path(), cases, GuestMode::Run);
    let got: Vec<(String, CaseStatus)> = doc.results.iter().map(|r| (plan::case_label(&r.benchmark, &r.params), r.status)).collect();
    assert_eq!(got, [("echo.copy bytes=4096".to_string(), CaseStatus::Ok)], "{:?}", doc.results);
    let m = doc.results[0].metric(echo::PER_COPY).expect("the metric the echo family names");
    assert_eq!((m.summary.median, m.unit.as_str()), (100.0, "tsc_cycles"));
    let facts = &doc.environment.settings["echo-program"];
    assert_eq!((facts["vmm"].as_str(), facts["clean_exit"].as_bool()), (Some("sh (a test's VMM)"), Some(true)), "{facts}");
    assert_eq!(facts[echo_program::BUILD_FACT], "echo build 1", "{facts}");
}

/// A guest program that never says hello is given up at the init timeout,
/// and its console is kept beside the run's document, named in the reason.
#[test]
fn a_guest_program_that_never_says_hello_leaves_its_console_beside_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let doc = echo_program_run(tmp.path(), plan::plan(&[&ECHO_SUITE], None), GuestMode::Hang);
    let r = &doc.results[0];
    assert_eq!(r.status, CaseStatus::NotApplicable, "{r:?}");
    let why = r.reason.as_deref().unwrap();
    assert!(why.contains("did not reach its /init within 2 s") && why.contains("echo booting"), "{why}");
    let kept = why.split("(console: ").nth(1).and_then(|k| k.strip_suffix(')')).unwrap_or_else(|| panic!("no console kept: {why}"));
    assert!(kept.starts_with(&tmp.path().join("results").display().to_string()), "{kept}");
    assert_eq!(std::fs::read_to_string(kept).unwrap(), "echo booting\n");
}
