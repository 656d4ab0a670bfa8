//! Allocators: live set x block size per allocator, the bitmap also nearly
//! full; and HermitCore's malloc(1 MiB) + free.

use super::pinned;
use crate::bench::alloc::{Kind, Workload};
use crate::bench::{Benchmark, CaseCtx, CaseData, CaseError, Family, Scale};
use crate::clock::Tsc;
use crate::harness;
use crate::results::Params;
use serde_json::json;

pub const LIVE: [u64; 4] = [25, 100, 400, 1600];
pub const SIZES: [u64; 4] = [64, 256, 1500, 4096];

fn cases(kind: Kind, scale: Scale) -> Vec<Params> {
    let (live, sizes): (&[u64], &[u64]) = match scale {
        Scale::Quick => (&[100], &[64, 1500]),
        Scale::Full => (&LIVE, &SIZES),
    };
    let fills: &[&str] = if kind == Kind::Bitmap { &["half", "nearly-full"] } else { &["half"] };
    let mut out = Vec::new();
    for &fill in fills {
        for &l in live {
            for &s in sizes {
                let mut p = Params::new();
                p.insert("live".into(), json!(l));
                p.insert("bytes".into(), json!(s));
                p.insert("fill".into(), json!(fill));
                out.push(p);
            }
        }
    }
    out
}

fn run(kind: Kind, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let (live, bytes) = (ctx.u64_param("live")? as usize, ctx.u64_param("bytes")? as usize);
    // Half: the arena holds twice the live set. Nearly full: 1% spare (at least one slot).
    let capacity = match ctx.params.get("fill").and_then(|v| v.as_str()) {
        Some("nearly-full") => live + (live / 100).max(1),
        _ => 2 * live,
    };
    let mut w =
        Workload::new(kind.build(bytes, capacity), live).ok_or_else(|| CaseError::Failed("could not allocate the live set".into()))?;
    let (m, placement) = pinned(ctx, || {
        harness::measure(&Tsc, ctx.clock.overhead_cycles, &ctx.harness, |n| {
            w.pairs(n).ok_or_else(|| CaseError::Failed(format!("{} ran out of space", kind.name())))
        })
    })?;
    let mut details = serde_json::Map::new();
    details.insert("capacity_blocks".into(), json!(capacity));
    details.insert("inner".into(), json!(m.inner));
    Ok(CaseData { placement, metrics: vec![super::per_op_metric("per_pair", &m, ctx.clock)?], details })
}

/// alloc.*: one benchmark per allocator.
pub struct Allocators;

impl Family for Allocators {
    fn name(&self) -> &'static str {
        "alloc"
    }
    fn benchmarks(&'static self) -> Vec<Benchmark> {
        Benchmark::each(self, &Kind::ALL, |k| {
            let params = if k == Kind::Bitmap {
                "live 25,100,400,1600; bytes 64,256,1500,4096; fill half|nearly-full"
            } else {
                "live 25,100,400,1600; bytes 64,256,1500,4096"
            };
            (k.name(), k.description(), params, "-")
        })
    }
    fn cases(&self, variant: usize, scale: Scale) -> Vec<Params> {
        cases(Kind::ALL[variant], scale)
    }
    fn run(&self, variant: usize, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
        run(Kind::ALL[variant], ctx)
    }
    fn repeats_in_rounds(&self) -> bool {
        true
    }
}
