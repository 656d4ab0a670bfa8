//! `echo`, a family that lives in the test crate: its primitive (a copy
//! checked word for word), its `Family`, its typed parameters and metric
//! name, and its own report table and plot (`table.rs`), which its `Family`
//! carries. Nothing of it is in the registry or in `report/`.

pub mod table;

use oscycles::data::schema_core::Params;
use oscycles::families::bench::schema::CaseParams;
use oscycles::families::bench::shows::Shows;
use oscycles::families::bench::toolkit::guest::{GuestCase, GuestMeasured};
use oscycles::families::bench::toolkit::sampling::{per_op_metric, pinned};
use oscycles::families::bench::{Benchmark, CaseCtx, CaseData, CaseError, Family, Scale};
use oscycles::measure::clock::Tsc;
use oscycles::measure::harness;
use oscycles::run::registry::{Member, Suite};
use serde::{Deserialize, Serialize};
pub use table::{EchoPlots, EchoTable};

pub const FAMILY: &str = "echo";
/// The metric: TSC cycles per copy.
pub const PER_COPY: &str = "per_copy";

/// The family's typed parameters: how many bytes one operation copies.
#[derive(Serialize, Deserialize)]
pub struct CopyParams {
    pub bytes: usize,
}

/// `echo.copy`: copies a buffer and checks that the copy is intact.
pub struct Echo;

impl Family for Echo {
    fn name(&self) -> &'static str {
        FAMILY
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
        Ok(CaseData { placement, metrics: vec![per_op_metric(PER_COPY, &m, ctx.clock)?], details: Default::default() })
    }
    fn shows(&self) -> Shows {
        Shows { tables: &[&EchoTable], plots: &[&EchoPlots], ..Shows::NOTHING }
    }
    /// A guest program's copies: cycles per copy, as here.
    fn guest_metrics(&self, _: usize, case: &GuestCase) -> Result<GuestMeasured, CaseError> {
        case.per_op(PER_COPY)
    }
}

pub static ECHO_SUITE: Suite =
    Suite { name: "echo", description: "a test family's suite", members: &[Member::Family(&Echo)], min_batch_s: 0.0, scale: Scale::Full };
