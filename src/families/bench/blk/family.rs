//! The blk family on the harness: one case per operation, cache mode and block size.

use crate::analysis::stats::Summary;
use crate::base::named::Named;
use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::blk::table;
use crate::families::bench::blk::{self, Op};
use crate::families::bench::family::round_trip;
use crate::families::bench::schema::{self, blk::Mode, blk::details as keys};
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::sampling::{grid, pinned, points};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale};
use crate::measure::scratch::ScratchFile;
use serde_json::json;

crate::named_enum! {
    pub enum BlkTest {
        Read = schema::blk::READ,
        Write = schema::blk::WRITE,
    }
}

impl BlkTest {
    pub fn op(self) -> Op {
        match self {
            BlkTest::Read => Op::Read,
            BlkTest::Write => Op::Write,
        }
    }
    pub fn description(self) -> &'static str {
        match self {
            BlkTest::Read => {
                "sequential pread of one block size, O_DIRECT or through the page cache, one request in flight: MiB/s and CPU time per MiB"
            }
            BlkTest::Write => {
                "sequential pwrite of one block size, O_DIRECT or through the page cache (fdatasync after the window, timed apart), one request in flight"
            }
        }
    }
}

const PARAMETERS: &str = "mode direct|cached; block 512,1K,2K,4K,8K,16K,32K,64K,128K,256K,1M";

/// The file each case lays out (and removes), by scale: 128 MiB, 4 MiB in tests.
pub fn file_bytes(scale: Scale) -> u64 {
    if scale == Scale::Test { 4 << 20 } else { 128 << 20 }
}

fn cases(scale: Scale) -> Vec<Params> {
    let blocks: &[u64] = match scale {
        Scale::Quick | Scale::Test => &[4 << 10, 1 << 20],
        Scale::Full => &[512, 1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 1 << 20],
    };
    points(grid(Mode::ALL, blocks).into_iter().map(|(mode, block)| schema::blk::Params { mode, block }))
}

fn run(t: BlkTest, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let p: schema::blk::Params = ctx.typed()?;
    let (block, direct) = (p.block as usize, p.mode == Mode::Direct);
    if blk::on_tmpfs(ctx.scratch) {
        return Err(CaseError::NotApplicable(format!(
            "{} is tmpfs, which has no disk behind it and no direct I/O; point --scratch at a directory on a disk filesystem",
            ctx.scratch.display()
        )));
    }
    let io = |e| CaseError::from_io(t.name(), e);
    let bytes = file_bytes(ctx.scale);
    let f = ScratchFile::create(ctx.scratch, "blk", bytes).map_err(io)?;
    if direct {
        let a = blk::dio_align(&f.path).map_err(|e| CaseError::NotApplicable(format!("direct I/O on {}: {e}", ctx.scratch.display())))?;
        blk::check_direct(block, blk::BUF_ALIGN, a).map_err(|e| CaseError::NotApplicable(e.to_string()))?;
    }
    let file = blk::open(&f.path, direct).map_err(io)?;
    let timing = crate::families::bench::net::family::timing(ctx);
    let (r, placement) = pinned(ctx, || blk::run(&file, bytes, t.op(), block, timing.warm, timing.measure, timing.slice).map_err(io))?;
    let window_mib = r.bytes as f64 / (1 << 20) as f64;
    let mut details = serde_json::Map::new();
    details.insert("file_bytes".into(), json!(bytes));
    details.insert("window_s".into(), json!(r.window_s));
    details.insert("ops".into(), json!(r.ops));
    details.insert(keys::MIB_PER_S.into(), json!(window_mib / r.window_s));
    details.insert(keys::IOPS.into(), json!(r.ops as f64 / r.window_s));
    details.insert(keys::CPU_MS_PER_MIB.into(), json!(1e3 * r.cpu_s / window_mib));
    details.insert(keys::CPU_UTIL.into(), json!(r.cpu_s / r.window_s));
    if t == BlkTest::Write {
        details.insert(keys::FDATASYNC_AFTER_S.into(), json!(r.sync_s));
    }
    let slices = Summary::of(&r.slice_mib_s).ok_or_else(|| CaseError::Failed("the window was too short for one interval".into()))?;
    Ok(CaseData { placement, metrics: vec![Metric::rate(schema::blk::THROUGHPUT, "MiB/s", slices)], details })
}

/// blk.*: sequential block I/O by block size, direct and cached.
pub const BLK: Described<BlkTest> = Described {
    name: schema::blk::FAMILY,
    variants: BlkTest::ALL,
    info: |t| (t.name(), t.description(), PARAMETERS, "--scratch on a disk filesystem (not tmpfs)"),
    cases: |_, scale| cases(scale),
    run,
    needs_disk: true,
    // Under QEMU's instruction counter the time it measures is fictitious (throughput over a fixed time).
    measures_time: true,
    shows: Shows { tables: &[&table::TABLE], comparisons: &[], plots: &[&table::BlkPlots], headline: Some(&table::BlkHeadline) },
    params: round_trip::<schema::blk::Params>,
    ..Described::BASE
};
