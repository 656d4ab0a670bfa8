//! Bandwidths: streams take a placement, the rest run on one pinned CPU.

use crate::base::named::Named;
use crate::data::schema_core::Params;
use crate::families::bench::bw::{self, BwKind, CHUNK, Drain, MemBuffers};
use crate::families::bench::family::round_trip;
use crate::families::bench::schema;
use crate::families::bench::toolkit::sampling::{copy_metrics, file_details, measure, measured, pinned, points};
use crate::families::bench::toolkit::{child, sizes};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale};
use crate::measure::clock::Tsc;
use crate::measure::harness::{self, Measurement};
use crate::measure::placement::{Cores, Placement};
use crate::measure::scratch::{FileWrites, ScratchFile};
use serde_json::json;

/// The file the mmap and read kinds read.
pub const FILE_BYTES: u64 = 64 << 20;

fn cases(kind: BwKind, scale: Scale) -> Vec<Params> {
    if kind.is_file() {
        // The file lmbench's own script makes; other layouts on request.
        return points([schema::bw::Params { cores: None, file_writes: Some(FileWrites::LMBENCH) }]);
    }
    let cores: &[Option<Cores>] = match (kind.is_stream(), scale) {
        (true, Scale::Quick | Scale::Test) => &[Some(Cores::Same)],
        (true, Scale::Full) => &[Some(Cores::Same), Some(Cores::Cross)],
        // Memory buffers far beyond the LLC take seconds to lay out: full only.
        (false, Scale::Quick | Scale::Test) if kind.is_memory() => &[],
        (false, _) => &[None],
    };
    points(cores.iter().map(|&cores| schema::bw::Params { cores, file_writes: None }))
}

/// The file kinds' other layouts, run where `--where file_writes=...` names them.
fn offered(kind: BwKind) -> Vec<Params> {
    let other = FileWrites::ALL.iter().filter(|&&w| kind.is_file() && w != FileWrites::LMBENCH);
    points(other.map(|&w| schema::bw::Params { cores: None, file_writes: Some(w) }))
}

fn stream(kind: BwKind, cores: Option<Cores>, ctx: &CaseCtx) -> Result<(Measurement, Placement), CaseError> {
    let reader_cpu = ctx.cpus[0];
    let writer_cpu = if cores == Some(Cores::Cross) {
        *ctx.cpus.get(1).ok_or_else(|| CaseError::NotApplicable("cross-core needs two CPUs; --cpus names one".into()))?
    } else {
        reader_cpu
    };
    let io = |e| CaseError::from_io(kind.name(), e);
    let (r, w) = bw::stream_pair(kind).map_err(io)?;
    let pid = bw::spawn_writer(w, &r, CHUNK, writer_cpu).map_err(io)?;
    let mut drain = Drain::new(r, CHUNK);
    let result = pinned(ctx, || {
        let _deadline = crate::measure::watchdog::Deadline::arm(ctx.timeout).map_err(io)?;
        harness::measure(&Tsc, ctx.clock.overhead_cycles, &ctx.harness, |n| (0..n).try_for_each(|_| drain.chunk())).map_err(io)
    });
    drop(drain);
    let status = child::reap(pid).map_err(io)?;
    let (m, mut placement) = result?;
    if !child::exited_with(status, 0) {
        return Err(CaseError::Failed(format!("the writer process ended with wait status {status:#x}")));
    }
    placement.actors = "reader thread + writer process".into();
    placement.cpus = vec![reader_cpu, writer_cpu];
    Ok((m, placement))
}

fn run(kind: BwKind, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let schema::bw::Params { cores, file_writes } = ctx.typed::<schema::bw::Params>()?;
    let io = |e| CaseError::from_io(kind.name(), e);
    let mut details = serde_json::Map::new();
    let (m, placement, bytes_per_op) = match kind {
        BwKind::Pipe | BwKind::Unix => {
            let (m, p) = stream(kind, cores, ctx)?;
            (m, p, CHUNK as u64)
        }
        _ if kind.is_memory() => {
            let llc = sizes::llc_bytes();
            let bytes = ctx.mem_bytes.unwrap_or_else(|| sizes::mem_buffer_bytes(llc, sizes::ram_bytes()));
            details.insert("llc_bytes".into(), json!(llc));
            details.insert("buffer_bytes".into(), json!(bytes));
            crate::families::bench::fits_in_memory(2 * bytes, "bw_mem's two buffers")?;
            let mut bufs = MemBuffers::new(kind, bytes).map_err(io)?;
            let mut round = 0;
            let passes = |n| {
                for _ in 0..n {
                    round += 1;
                    bufs.pass(kind, round);
                }
                crate::measure::watchdog::check().map_err(|_| std::io::Error::from_raw_os_error(libc::EINTR))
            };
            let (m, p) = measure(ctx, passes, io)?;
            (m, p, bytes)
        }
        _ => {
            // Written as the case says (by default as lmbench's script writes its file).
            let writes = file_writes.unwrap_or(FileWrites::LMBENCH);
            let f = ScratchFile::written_in(ctx.scratch, kind.name(), FILE_BYTES, writes.bytes()).map_err(io)?;
            file_details(&mut details, writes, &f);
            let file = std::fs::File::open(&f.path).map_err(io)?;
            // mmap_only maps the file once, untimed, as bw_mmap_rd's init_open does.
            let map = if kind == BwKind::MmapRd { Some(bw::FileMap::new(&file, f.bytes as usize).map_err(io)?) } else { None };
            // Page-aligned, as lmbench's valloc(XFERSIZE): the kernel's copy
            // into a buffer misaligned by 16 bytes (malloc's) is slower.
            let mut buf = crate::families::bench::toolkit::child::Private::new(CHUNK).map_err(io)?;
            details.insert("file_bytes".into(), json!(FILE_BYTES));
            let read = |n| {
                (0..n).try_for_each(|_| {
                    match (kind, &map) {
                        (BwKind::FileRd, _) => bw::file_read(&file, f.bytes, buf.bytes_mut()),
                        (_, Some(map)) => Ok(map.sum()),
                        _ => bw::mmap_read_open(&f),
                    }
                    .map(|_| ())
                })
            };
            let (m, p) = measure(ctx, read, io)?;
            (m, p, FILE_BYTES)
        }
    };
    details.insert("bytes_per_op".into(), json!(bytes_per_op));
    let metrics = copy_metrics(schema::bw::BANDWIDTH, schema::bw::PER_OP, bytes_per_op, &m, ctx.clock)?;
    Ok(measured(placement, &m, metrics, details))
}

/// bw.*: lmbench bandwidths.
pub const BW: Described<BwKind> = Described {
    name: schema::bw::FAMILY,
    variants: BwKind::ALL,
    info: |k| {
        let params = match () {
            _ if k.is_stream() => "cores same|cross; 64 KiB chunks",
            _ if k.is_file() => "file_writes 8k (lmbench's lmdd: 8 KiB writes, fsync), or 4k|1m where --where names it",
            _ => "none",
        };
        (k.name(), k.description(), params, if k.is_stream() { "-" } else { "memory or --scratch space" })
    },
    cases,
    offered,
    run,
    repeats_in_rounds: true,
    params: round_trip::<schema::bw::Params>,
    ..Described::BASE
};
