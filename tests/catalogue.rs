//! The catalogue is open: a family defined here, in the test crate, runs
//! through the real runner, store and exporters without any change to the
//! registry (it is in no list there; a suite made here holds it).

use oscycles::bench::cases::{per_op_metric, pinned};
use oscycles::bench::{Benchmark, CaseCtx, CaseData, CaseError, Family, Scale};
use oscycles::clock::{self, Tsc};
use oscycles::harness::{self, HarnessConfig};
use oscycles::placement;
use oscycles::progress::Quiet;
use oscycles::registry::{self, Member, Suite};
use oscycles::report::export::{Export, Format, exporter};
use oscycles::results::{CaseStatus, Params, RunStatus};
use oscycles::spec::RunSpec;
use oscycles::runner::{self, Execution};
use oscycles::schema::CaseParams;
use oscycles::store::{self, RunWriter};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The family's typed parameters: how many bytes one operation copies.
#[derive(Serialize, Deserialize)]
struct CopyParams {
    bytes: usize,
}

/// `echo.copy`: copies a buffer and checks that the copy is intact.
struct Echo;

impl Family for Echo {
    fn name(&self) -> &'static str {
        "echo"
    }
    fn benchmarks(&'static self) -> Vec<Benchmark> {
        Benchmark::single(self, "copy", "copies a buffer of N bytes (a test family)", "bytes 64,4096", "-")
    }
    fn cases(&self, _: usize, scale: Scale) -> Vec<Params> {
        let sizes: &[usize] = if scale == Scale::Quick { &[64] } else { &[64, 4096] };
        sizes.iter().map(|&bytes| CopyParams { bytes }.to_params()).collect()
    }
    fn run(&self, _: usize, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
        let p: CopyParams = ctx.typed()?;
        let src: Vec<u8> = (0..p.bytes).map(|i| (i * 7 + 1) as u8).collect();
        let mut dst = vec![0u8; p.bytes];
        let (m, placement) = pinned(ctx, || {
            harness::measure(&Tsc, ctx.clock.overhead_cycles, &ctx.harness, |n| {
                for _ in 0..n {
                    dst.copy_from_slice(std::hint::black_box(&src));
                }
                Ok::<(), CaseError>(())
            })
        })?;
        if dst != src {
            return Err(CaseError::Failed("the copy differs from its source".into()));
        }
        Ok(CaseData { placement, metrics: vec![per_op_metric("per_copy", &m, ctx.clock)?], details: Default::default() })
    }
}

static ECHO_SUITE: Suite = Suite { name: "echo", description: "a test family's suite", members: &[Member::Family(&Echo)], min_batch_s: 0.0, scale: Scale::Full };

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
