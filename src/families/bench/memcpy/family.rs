//! memcpy: size x (source offset, destination offset), one benchmark per implementation.

use crate::base::named::Named;
use crate::data::schema_core::Params;
use crate::families::bench::family::round_trip;
use crate::families::bench::memcpy::table;
use crate::families::bench::memcpy::{Buffers, Impl, copy};
use crate::families::bench::schema;
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::guest::{GuestCase, GuestMeasured};
use crate::families::bench::toolkit::sampling::{copy_metrics, grid, measure, measured, points};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale};

pub const SIZES_FULL: [u64; 11] = [64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20];
pub const SIZES_QUICK: [u64; 3] = [64, 4 << 10, 1 << 20];
/// (source, destination) offsets from a page boundary: each side alone, then both.
pub const OFFSETS_FULL: [(u64, u64); 16] = [
    (0, 0),
    (1, 0),
    (4, 0),
    (8, 0),
    (32, 0),
    (64, 0),
    (0, 1),
    (0, 4),
    (0, 8),
    (0, 32),
    (0, 64),
    (1, 1),
    (4, 4),
    (8, 8),
    (32, 32),
    (64, 64),
];
pub const OFFSETS_QUICK: [(u64, u64); 4] = [(0, 0), (1, 0), (0, 1), (1, 1)];

fn cases(scale: Scale) -> Vec<Params> {
    let (sizes, offsets): (&[u64], &[(u64, u64)]) = match scale {
        Scale::Quick | Scale::Test => (&SIZES_QUICK, &OFFSETS_QUICK),
        Scale::Full => (&SIZES_FULL, &OFFSETS_FULL),
    };
    points(grid(sizes, offsets).into_iter().map(|(bytes, (src_off, dst_off))| schema::memcpy::Params { bytes, src_off, dst_off }))
}

fn run(imp: Impl, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let p: schema::memcpy::Params = ctx.typed()?;
    let mut b = Buffers::new(p.bytes as usize).map_err(|e| CaseError::from_io("memcpy buffers", e))?;
    let copies = |n| {
        let (d, s) = b.windows(p.src_off as usize, p.dst_off as usize);
        for _ in 0..n {
            copy(imp, d, s);
        }
        crate::measure::watchdog::check().map_err(|_| CaseError::Interrupted)
    };
    let (m, placement) = measure(ctx, copies, |e| e)?;
    let metrics = copy_metrics(schema::memcpy::BANDWIDTH, schema::memcpy::PER_COPY, p.bytes, &m, ctx.clock)?;
    Ok(measured(placement, &m, metrics, serde_json::Map::new()))
}

/// A guest program's copies of `bytes` (the case's parameter): the rate
/// and the cost per copy, as [`run`] reports them.
fn guest_metrics(_: Impl, case: &GuestCase) -> Result<GuestMeasured, CaseError> {
    let bytes = case.params.get("bytes").and_then(serde_json::Value::as_u64).unwrap_or(0);
    case.measured(1, |m, clock| copy_metrics(schema::memcpy::BANDWIDTH, schema::memcpy::PER_COPY, bytes, m, clock))
}

/// memcpy.*: one benchmark per implementation.
pub const MEMCPY: Described<Impl> = Described {
    name: schema::memcpy::FAMILY,
    variants: Impl::ALL,
    info: |imp| (imp.name(), imp.description(), "bytes 64..64 MiB; src_off, dst_off 0,1,4,8,32,64", "-"),
    cases: |_, scale| cases(scale),
    run,
    repeats_in_rounds: true,
    shows: Shows { tables: &[&table::TABLE], comparisons: &[], plots: &[&table::MemcpyPlots], headline: Some(&table::MemcpyHeadline) },
    params: round_trip::<schema::memcpy::Params>,
    guest: guest_metrics,
    ..Described::BASE
};
