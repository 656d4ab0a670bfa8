//! The catalogue is open: a family defined here, in the test crate, runs
//! through the real runner, store and exporters without any change to the
//! registry (it is in no list there; a suite made here holds it), and its own
//! table appears beside oscycles' tables without any change to `report/`;
//! an environment defined here, with its own option, runs through the real
//! runner too.

#[path = "catalogue/echo/mod.rs"]
mod echo;
#[path = "catalogue/thread_env.rs"]
mod thread_env;

use echo::{ECHO_SUITE, EchoPlots, EchoTable};
use oscycles::data::results::{CaseStatus, RunDoc, RunStatus};
use oscycles::data::store::{self, RunWriter};
use oscycles::measure::clock;
use oscycles::measure::harness::HarnessConfig;
use oscycles::measure::placement;
use oscycles::present::report::Tables;
use oscycles::present::report::export::{Export, Format, exporter, exporter_with};
use oscycles::run::progress::Quiet;
use oscycles::run::registry;
use oscycles::run::runner::{self, Execution};
use oscycles::run::spec::RunSpec;
use std::time::Duration;

#[test]
fn a_family_outside_the_registry_runs_through_the_runner_store_and_exporters() {
    assert!(registry::find_family("echo").is_none(), "the test family is in no registry list");
    let cpus: Vec<usize> = placement::allowed_cpus().into_iter().take(2).collect();
    let tmp = tempfile::tempdir().unwrap();
    let ex = Execution::in_process(cpus.clone(), HarnessConfig::tiny(), tmp.path().to_path_buf());
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let plan = runner::plan(&[&ECHO_SUITE], None);
    assert_eq!(plan.iter().map(|p| p.label()).collect::<Vec<_>>(), ["echo.copy bytes=64", "echo.copy bytes=4096"]);
    let spec = RunSpec { suites: vec!["echo".into()], ..RunSpec::default() };
    let mut w = RunWriter::create(tmp.path(), spec.document(&["native"], plan.len(), cpus, ex.full, clock)).unwrap();
    assert_eq!(runner::execute(&plan, &ex, &mut w, &mut Quiet).unwrap(), RunStatus::Complete);

    // Stored, and read back as it was written.
    let back = store::load(w.path()).unwrap();
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
    let plan = runner::plan(&[&ECHO_SUITE], None);
    let spec = RunSpec { suites: vec!["echo".into()], ..RunSpec::default() };
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let mut w = RunWriter::create(dir, spec.document(&["native"], plan.len(), cpus, ex.full, clock)).unwrap();
    assert_eq!(runner::execute(&plan, &ex, &mut w, &mut Quiet).unwrap(), RunStatus::Complete);
    store::load(w.path()).unwrap()
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
    let tables = Tables::standard().with(&[&EchoTable]).with_plots(&[&EchoPlots]);
    assert!(tables.shows(echo::FAMILY) && !Tables::standard().shows(echo::FAMILY));
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
    use oscycles::run::env::{self, Env, EnvArgs, EnvOptions};
    use thread_env::{TAG, ThreadArgs, ThreadEnv};
    let envs: [Env; 1] = [&ThreadEnv];
    let mut cmd = env::with_options(clap::Command::new("catalogue"), &envs);
    let help = cmd.render_long_help().to_string();
    assert!(help.contains("--thread-env-tag <WORD>") && help.contains("records among its facts"), "{help}");
    assert!(cmd.clone().try_get_matches_from(["catalogue", "--thread-env-tag"]).is_err(), "a missing value is refused");
    let m = cmd.try_get_matches_from(["catalogue", "--thread-env-tag", "seven"]).unwrap();
    let own = <EnvArgs as clap::FromArgMatches>::from_arg_matches(&m).unwrap();
    assert_eq!(own.get::<ThreadArgs>().unwrap().tag, "seven");

    let tmp = tempfile::tempdir().unwrap();
    let o = EnvOptions {
        exe: "/nonexistent/oscycles".into(),
        work: tmp.path().into(),
        kernel: None,
        vm_mem_mib: 128,
        vm_cpus: 1,
        init_timeout: Duration::from_secs(30),
        run_timeout: Duration::from_secs(120),
        guest_mode: oscycles::run::env::guest::GuestMode::Run,
        own,
        keep_console: None,
    };
    let cpus: Vec<usize> = placement::allowed_cpus().into_iter().take(2).collect();
    let ex = Execution::in_process(cpus.clone(), HarnessConfig::tiny(), tmp.path().to_path_buf());
    let plan = runner::plan(&[&ECHO_SUITE], None);
    let spec = RunSpec { suites: vec!["echo".into()], ..RunSpec::default() };
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let mut w = RunWriter::create(&tmp.path().join("results"), spec.document(&["thread"], plan.len(), cpus, ex.full, clock)).unwrap();
    assert_eq!(runner::run(&envs, &plan, &ex, &spec, &o, &mut w, &mut Quiet).unwrap(), RunStatus::Complete);

    let doc = store::load(w.path()).unwrap();
    assert_eq!(doc.results.len(), 2);
    for r in &doc.results {
        assert_eq!((r.environment.as_deref(), r.status), (Some("thread"), CaseStatus::Ok), "{:?}", r.reason);
        assert!(r.metric(echo::PER_COPY).is_some_and(|m| m.summary.n >= 3 && m.summary.median > 0.0));
    }
    assert_eq!(doc.environment.settings["thread"][TAG], "seven", "{:?}", doc.environment.settings);
}
