//! lat_pagefault: cost per page of a first touch.

use super::{pinned, summary};
use crate::bench::pagefault::{FaultKind, PAGE, Region, thp_setting};
use crate::bench::scratch::ScratchFile;
use crate::bench::{CaseCtx, CaseData, CaseError};
use crate::clock::Tsc;
use crate::harness;
use crate::results::Metric;
use serde_json::json;

/// The file's size; also the most pages one batch can map.
pub const FILE_PAGES: usize = 16384;

pub fn run(kind: FaultKind, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    if ctx.memory_locked {
        return Err(CaseError::NotApplicable(
            "memory is locked (mlockall MCL_FUTURE, --rt): new mappings are populated when mapped, so a first touch does not fault".into(),
        ));
    }
    let io = |e| CaseError::from_io(kind.name(), e);
    let scratch = match kind {
        FaultKind::File => Some(ScratchFile::create(ctx.scratch, "pagefault", (FILE_PAGES * PAGE) as u64).map_err(io)?),
        FaultKind::Anon => None,
    };
    let file = scratch.as_ref().map(|f| std::fs::File::open(&f.path)).transpose().map_err(io)?;
    let mut cfg = ctx.harness;
    cfg.max_inner = cfg.max_inner.min(FILE_PAGES as u64);
    cfg.fixed_inner = cfg.fixed_inner.map(|n| n.min(FILE_PAGES as u64));
    let (m, placement) = pinned(ctx, || {
        harness::measure_prepared(
            &Tsc,
            ctx.clock.overhead_cycles,
            &cfg,
            |pages| match &file {
                Some(f) => Region::file(f, pages as usize),
                None => Region::anon(pages as usize),
            },
            |r| {
                match kind {
                    FaultKind::Anon => r.write_each_page(),
                    FaultKind::File => {
                        std::hint::black_box(r.read_each_page());
                    }
                }
                Ok(())
            },
        )
        .map_err(io)
    })?;
    let mut details = serde_json::Map::new();
    details.insert("pages_per_batch".into(), json!(m.inner));
    details.insert("transparent_hugepage".into(), json!(thp_setting()));
    Ok(CaseData { placement, metrics: vec![Metric::cycles("per_page", summary(&m)?, ctx.clock)], details })
}
