//! lat_pagefault and HermitCore's "first write access": cost per 4 KiB page
//! of a first touch.

use crate::base::named::Named;
use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::Scale;
use crate::families::bench::family::round_trip;
use crate::families::bench::pagefault::table;
use crate::families::bench::pagefault::{FILE_PAGES, FaultKind, PAGE, Region, permutation, thp_setting};
use crate::families::bench::schema;
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::sampling::{file_details, pinned, points, summary};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Unsupported};
use crate::measure::clock::Tsc;
use crate::measure::harness;
use crate::measure::scratch::{FileWrites, ScratchFile};
use serde_json::json;

/// The most 4 KiB pages one batch of the anonymous kind maps.
pub const MAX_ANON_PAGES: u64 = 16384;
/// The most 2 MiB units one batch maps (the huge kinds).
pub const MAX_HUGE_UNITS: u64 = 64;
/// The most passes over the file one batch makes (each its own 64 MiB
/// mapping, made before the batch: 2 GiB of address space, no memory).
pub const MAX_FILE_PASSES: u64 = 32;

/// The file kind reads the file lmbench's own script makes; the others have no parameters.
fn cases(kind: FaultKind, _scale: Scale) -> Vec<Params> {
    let file_writes = (kind == FaultKind::File).then_some(FileWrites::LMBENCH);
    points([schema::pagefault::Params { file_writes }])
}

/// The file kind's other layouts, run where `--where file_writes=...` names them.
fn offered(kind: FaultKind) -> Vec<Params> {
    let other = FileWrites::ALL.iter().filter(|&&w| kind == FaultKind::File && w != FileWrites::LMBENCH);
    points(other.map(|&w| schema::pagefault::Params { file_writes: Some(w) }))
}

fn supported(kind: FaultKind) -> Result<(), Unsupported> {
    kind.unavailable().map_or(Ok(()), |why| Err(Unsupported(why)))
}

fn run(kind: FaultKind, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    if ctx.memory_locked {
        return Err(CaseError::NotApplicable(
            "memory is locked (mlockall MCL_FUTURE, --rt): new mappings are populated when mapped, so a first touch does not fault".into(),
        ));
    }
    if let Some(why) = kind.unavailable() {
        return Err(CaseError::NotApplicable(why));
    }
    let io = |e| CaseError::from_io(kind.name(), e);
    let mut details = serde_json::Map::new();
    let scratch = match kind {
        FaultKind::File => {
            let writes = ctx.typed::<schema::pagefault::Params>()?.file_writes.unwrap_or(FileWrites::LMBENCH);
            let f = ScratchFile::written_in(ctx.scratch, "pagefault", (FILE_PAGES * PAGE) as u64, writes.bytes()).map_err(io)?;
            file_details(&mut details, writes, &f);
            Some(f)
        }
        _ => None,
    };
    let file = scratch.as_ref().map(|f| std::fs::File::open(&f.path)).transpose().map_err(io)?;
    // The harness counts units: pages, 2 MiB units for the huge kinds, or
    // whole passes over the file.
    let max_units = match kind {
        FaultKind::Anon => MAX_ANON_PAGES,
        FaultKind::File => MAX_FILE_PASSES,
        FaultKind::AnonThp | FaultKind::AnonHugetlb => MAX_HUGE_UNITS,
    };
    let mut cfg = ctx.harness;
    cfg.max_inner = cfg.max_inner.min(max_units);
    cfg.fixed_inner = cfg.fixed_inner.map(|n| n.min(max_units));
    // One mapping per unit of the file kind (each pass maps the whole file
    // afresh, as lat_pagefault's iterations); one of `units` units otherwise.
    let map = |units: u64| -> std::io::Result<Vec<Region>> {
        match (kind, &file) {
            (FaultKind::File, Some(f)) => (0..units).map(|_| Region::file(f, FILE_PAGES)).collect(),
            (FaultKind::AnonThp, _) => Ok(vec![Region::anon_huge(units as usize, false)?]),
            (FaultKind::AnonHugetlb, _) => Ok(vec![Region::anon_huge(units as usize, true)?]),
            _ => Ok(vec![Region::anon(units as usize)?]),
        }
    };
    // The huge kinds must really get huge pages, or they measure something else.
    if matches!(kind, FaultKind::AnonThp | FaultKind::AnonHugetlb) {
        let mut probe = map(1).map_err(io)?;
        probe[0].write_each_page();
        if !probe[0].backed_by_huge_pages() {
            return Err(CaseError::NotApplicable("the kernel did not back a fresh 2 MiB region with a huge page".into()));
        }
    }
    // lat_pagefault's order: a random permutation of the file's pages.
    let order = if kind == FaultKind::File { permutation(FILE_PAGES, 0x9e37_79b9_7f4a_7c15) } else { Vec::new() };
    let (m, placement) = pinned(ctx, || {
        harness::measure_prepared(&Tsc, ctx.clock.overhead_cycles, &cfg, map, |regions| {
            for r in regions.iter_mut() {
                match kind {
                    FaultKind::File => {
                        std::hint::black_box(r.read_pages_in(&order));
                        r.unmap();
                    }
                    _ => r.write_each_page(),
                }
            }
            Ok(())
        })
        .map_err(io)
    })?;
    let per_page = summary(&m)?.scaled(1.0 / kind.pages_per_unit() as f64);
    details.insert("units_per_batch".into(), json!(m.inner));
    details.insert("pages_per_unit".into(), json!(kind.pages_per_unit()));
    details.insert("transparent_hugepage".into(), json!(thp_setting()));
    Ok(CaseData {
        placement,
        metrics: vec![
            Metric::cycles(schema::pagefault::PER_PAGE, per_page, ctx.clock)
                .with_samples(&m.per_op_cycles.iter().map(|c| c / kind.pages_per_unit() as f64).collect::<Vec<_>>()),
        ],
        details,
    })
}

/// pagefault.*: first touch of a page, by kind of memory.
pub const PAGEFAULT: Described<FaultKind> = Described {
    name: schema::pagefault::FAMILY,
    variants: FaultKind::ALL,
    info: |k| {
        let params = match k {
            FaultKind::File => {
                "file_writes 8k (lmbench's lmdd: 8 KiB writes, fsync), or 4k|1m where --where names it; passes over the file per batch doubled"
            }
            _ => "none (pages per batch doubled)",
        };
        (k.name(), k.description(), params, "-")
    },
    cases,
    offered,
    supported,
    run,
    repeats_in_rounds: true,
    shows: Shows { tables: &[], comparisons: &[], plots: &[], headline: Some(&table::PagefaultHeadline) },
    params: round_trip::<schema::pagefault::Params>,
    guest: |_, case| case.per_op(schema::pagefault::PER_PAGE),
    ..Described::BASE
};
