//! Allocators: live set x block size per allocator, the bitmap also nearly
//! full; and HermitCore's malloc(1 MiB) + free.

use crate::base::named::Named;
use crate::data::schema_core::Params;
use crate::families::bench::alloc::table;
use crate::families::bench::alloc::{Kind, Workload};
use crate::families::bench::family::round_trip;
use crate::families::bench::schema::{self, alloc::Fill};
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::sampling::{grid, measure, measured, per_op_metric, points};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale};
use serde_json::json;

pub const LIVE: [u64; 4] = [25, 100, 400, 1600];
pub const SIZES: [u64; 4] = [64, 256, 1500, 4096];

fn cases(kind: Kind, scale: Scale) -> Vec<Params> {
    let (live, sizes): (&[u64], &[u64]) = match scale {
        Scale::Quick | Scale::Test => (&[100], &[64, 1500]),
        Scale::Full => (&LIVE, &SIZES),
    };
    let fills: &[Fill] = if kind == Kind::Bitmap { Fill::ALL } else { &[Fill::Half] };
    let sweep = grid(fills, &grid(live, sizes));
    points(sweep.into_iter().map(|(fill, (live, bytes))| schema::alloc::Params { live, bytes, fill: Some(fill) }))
}

fn run(kind: Kind, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let p: schema::alloc::Params = ctx.typed()?;
    let (live, bytes) = (p.live as usize, p.bytes as usize);
    let capacity = crate::families::bench::alloc::capacity(live, p.fill == Some(Fill::NearlyFull));
    let mut w =
        Workload::new(kind.build(bytes, capacity), live).ok_or_else(|| CaseError::Failed("could not allocate the live set".into()))?;
    let (m, placement) = measure(ctx, |n| w.pairs(n).ok_or_else(|| CaseError::Failed(format!("{} ran out of space", kind.name()))), |e| e)?;
    let mut details = serde_json::Map::new();
    details.insert("capacity_blocks".into(), json!(capacity));
    Ok(measured(placement, &m, vec![per_op_metric(schema::alloc::PER_PAIR, &m, ctx.clock)?], details))
}

/// alloc.*: one benchmark per allocator.
pub const ALLOC: Described<Kind> = Described {
    name: schema::alloc::FAMILY,
    variants: Kind::ALL,
    info: |k| {
        let params = if k == Kind::Bitmap {
            "live 25,100,400,1600; bytes 64,256,1500,4096; fill half|nearly-full"
        } else {
            "live 25,100,400,1600; bytes 64,256,1500,4096"
        };
        (k.name(), k.description(), params, "-")
    },
    cases,
    run,
    repeats_in_rounds: true,
    shows: Shows { tables: &[&table::TABLE], comparisons: &[], plots: &[], headline: Some(&table::AllocHeadline) },
    params: round_trip::<schema::alloc::Params>,
    guest: |_, case| case.per_op(schema::alloc::PER_PAIR),
    ..Described::BASE
};
