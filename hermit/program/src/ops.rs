//! The operations a Hermit program performs for each family it has:
//! HermitCore's basic benchmark, STREAM, memcpy, the allocators and IPC
//! between threads, timed by oscycles' harness. Each case gives a JSON
//! object: its benchmark id and parameters, and its samples (cycles per
//! operation, one per batch) or STREAM's times, or why it failed or is n/a.

use crate::bench::{alloc, memcpy, stream};
use crate::clock::Tsc;
use crate::grid::{self, Point};
use crate::harness::{self, HarnessConfig, Measurement};
use crate::ipc;
use crate::named::Named;
use crate::watchdog::Stop;
use serde_json::{Value, json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

const PAGE: usize = 4096;

/// Errors of an operation: only the harness's stop, which never comes here.
#[derive(Debug)]
struct Failed(String);

impl From<Stop> for Failed {
    fn from(s: Stop) -> Self {
        Failed(format!("{s:?}"))
    }
}

unsafe extern "C" {
    /// Hermit's getpid: the kernel's system call, which a Hermit program
    /// reaches by a function call (Rust's std has no pid on Hermit).
    fn sys_getpid() -> u32;
}

/// getpid n times (Hermit: a function call into the kernel, no trap).
fn getpids(n: u64) -> Result<(), Failed> {
    for _ in 0..n {
        // SAFETY: sys_getpid takes nothing and only reads the task's id.
        black_box(unsafe { sys_getpid() });
    }
    Ok(())
}

/// yield n times (Hermit's scheduler: alone, it returns to the caller).
fn yields(n: u64) -> Result<(), Failed> {
    for _ in 0..n {
        std::thread::yield_now();
    }
    Ok(())
}

/// malloc(1 MiB) + free, n times, through the system allocator (Hermit's
/// kernel heap), the block untouched.
fn malloc_free(n: u64) -> Result<(), Failed> {
    let layout = Layout::from_size_align(1 << 20, 16).expect("1 MiB layout");
    for _ in 0..n {
        // SAFETY: a non-zero layout; the block is freed at once with it.
        unsafe {
            let p = System.alloc(layout);
            if p.is_null() {
                return Err(Failed("malloc(1 MiB) returned NULL".into()));
            }
            black_box(p);
            System.dealloc(p, layout);
        }
    }
    Ok(())
}

/// A thread that yields until dropped: with it, every yield of the
/// measuring thread switches to it and back.
struct Partner {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Partner {
    fn start() -> Partner {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                std::thread::yield_now();
            }
        });
        Partner { stop, handle: Some(handle) }
    }
}

impl Drop for Partner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A block of fresh pages, freed when dropped (untimed, by the harness).
struct Pages {
    p: *mut u8,
    layout: Layout,
}

impl Pages {
    fn new(n: u64) -> Result<Pages, Failed> {
        let layout = Layout::from_size_align(n as usize * PAGE, PAGE).map_err(|e| Failed(e.to_string()))?;
        // SAFETY: a non-zero layout (n >= 1); freed once, in drop.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() { Err(Failed(format!("no memory for {n} pages"))) } else { Ok(Pages { p, layout }) }
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        // SAFETY: allocated in new with this layout.
        unsafe { System.dealloc(self.p, self.layout) };
    }
}

/// First write access: n fresh pages (allocated untimed), one byte written
/// to each, timed.
fn first_writes(cfg: &HarnessConfig, overhead: u64) -> Result<Measurement, Failed> {
    harness::measure_prepared(&Tsc, overhead, cfg, Pages::new, |s: &mut Pages| {
        for i in 0..s.layout.size() / PAGE {
            // SAFETY: within the block of pages just allocated.
            unsafe { s.p.add(i * PAGE).write_volatile(1) };
        }
        Ok(())
    })
}

/// A measured case as the host reads it: the samples (cycles per
/// operation, one per batch), the inner count and the calibration.
fn measured(m: &Measurement) -> Value {
    json!({"status": "ok", "per_op_cycles": m.per_op_cycles, "inner": m.inner, "calibration": m.calibration})
}

fn per_op(m: Result<Measurement, Failed>) -> Value {
    match m {
        Ok(m) => measured(&m),
        Err(Failed(why)) => json!({"status": "failed", "reason": why}),
    }
}

/// memcpy of `bytes` at the point's offsets with one of oscycles' three
/// implementations (`libc` is the memcpy a Hermit program links).
fn memcpy_case(imp: memcpy::Impl, p: &Point, cfg: &HarnessConfig, overhead: u64) -> Result<Value, String> {
    let (bytes, so, dof) = (grid::num(p, "bytes")?, grid::num(p, "src_off")?, grid::num(p, "dst_off")?);
    let mut b = memcpy::Buffers::new(bytes as usize).map_err(|e| e.to_string())?;
    let (d, s) = b.windows(so as usize, dof as usize);
    let m = harness::measure(&Tsc, overhead, cfg, |n| -> Result<(), Failed> {
        for _ in 0..n {
            memcpy::copy(imp, d, black_box(s));
        }
        Ok(())
    });
    if m.is_ok() && d != s {
        return Err("the copy differs from its source".into());
    }
    Ok(per_op(m))
}

/// One free + one allocation in a live set, with one of oscycles' four
/// block allocators (`system` is Hermit's kernel heap through Rust's System).
fn alloc_case(kind: alloc::Kind, p: &Point, cfg: &HarnessConfig, overhead: u64) -> Result<Value, String> {
    let (live, bytes) = (grid::num(p, "live")? as usize, grid::num(p, "bytes")? as usize);
    let nearly_full = grid::text(p, "fill").unwrap_or("half") == "nearly-full";
    let capacity = alloc::capacity(live, nearly_full);
    let mut w = alloc::Workload::new(kind.build(bytes, capacity), live).ok_or("could not allocate the live set")?;
    let m = harness::measure(&Tsc, overhead, cfg, |n| w.pairs(n).ok_or_else(|| Failed(format!("{} ran out of space", kind.name()))));
    Ok(per_op(m))
}

/// ipc.futex between two threads on the one CPU; processes and a second
/// CPU are not there (one address space, a kernel without smp).
fn futex_case(p: &Point, cfg: &HarnessConfig, overhead: u64) -> Result<Value, String> {
    if grid::text(p, "space")? != "intra" {
        return Ok(json!({"status": "n/a", "reason": "one address space: a unikernel has no processes to pass messages between"}));
    }
    if grid::text(p, "cores")? != "same" {
        return Ok(json!({"status": "n/a", "reason": "one CPU: the Hermit kernel is built without smp"}));
    }
    let r = ipc::futex_pingpong(grid::num(p, "words")? as usize, cfg, overhead)?;
    let mut v = measured(&r.measurement);
    v["round_trips"] = json!(r.round_trips);
    v["requests_verified_by_server"] = json!(r.served);
    Ok(v)
}

/// STREAM single-threaded over three arrays of `array_bytes`, by
/// oscycles' own driver (repetitions as its quick suite: batches + 1).
fn stream_case(cfg: &HarnessConfig, array_bytes: u64) -> Value {
    let elements = stream::array_len(None, Some(array_bytes.max(1 << 20)), 0);
    let reps = (cfg.batches + 1).clamp(3, 11);
    match stream::run(elements, reps, &[0], 1, stream::kernels) {
        Ok(r) => {
            let kernels: Vec<Value> =
                r.kernels.iter().map(|k| json!({"name": k.kernel.name(), "times": k.times, "bytes": k.bytes})).collect();
            json!({"status": "ok", "elements": r.elements, "repetitions": reps, "kernels": kernels})
        }
        Err(e) => json!({"status": "failed", "reason": e.to_string()}),
    }
}

/// Runs the cases of one benchmark (`points`: the parameters of each, or
/// one empty point for a benchmark without), handing each answer, with its
/// parameters, to `answer` as JSON text as soon as it is measured; a
/// benchmark this program does not have is answered once, without
/// parameters (the host marks its every case n/a).
pub fn run(
    bench: &str,
    points: impl Iterator<Item = Result<Point, String>>,
    cfg: &HarnessConfig,
    overhead: u64,
    array_bytes: u64,
    answer: &mut impl FnMut(String),
) {
    if let Some(mut v) = lacking(bench) {
        v["benchmark"] = json!(bench);
        return answer(v.to_string());
    }
    for p in points {
        let mut v = match &p {
            Ok(p) => one(bench, p, cfg, overhead, array_bytes),
            Err(e) => Err(e.clone()),
        }
        .unwrap_or_else(|why| json!({"status": "failed", "reason": why}));
        v["benchmark"] = json!(bench);
        if let Ok(p) = p {
            v["params"] = Value::Object(p);
        }
        answer(v.to_string());
    }
}

/// The answer for a benchmark this program does not have.
fn lacking(bench: &str) -> Option<Value> {
    let has = [
        "syscall.getpid",
        "syscall.sched_yield",
        "hermit.sched_yield-busy",
        "hermit.malloc-1m",
        "pagefault.anon",
        "stream.kernels",
        "ipc.futex",
    ];
    let family = bench.split('.').next().unwrap_or_default();
    if has.contains(&bench) || family == "memcpy" || family == "alloc" {
        None
    } else if family == "ipc" {
        Some(
            json!({"status": "n/a", "reason": "oscycles' Hermit program passes messages with Hermit's futex only (ipc.futex): Hermit has no pipes, FIFOs, message queues, eventfd, or sockets without a network device, and busy-polling needs a second CPU"}),
        )
    } else {
        Some(json!({"status": "absent"}))
    }
}

fn one(bench: &str, p: &Point, cfg: &HarnessConfig, overhead: u64, array_bytes: u64) -> Result<Value, String> {
    let timed = |op: fn(u64) -> Result<(), Failed>| harness::measure(&Tsc, overhead, cfg, op);
    let named = |family: &str| bench.strip_prefix(family).and_then(|s| s.strip_prefix('.'));
    if let Some(imp) = named("memcpy").and_then(memcpy::Impl::parse) {
        return memcpy_case(imp, p, cfg, overhead);
    }
    if let Some(kind) = named("alloc").and_then(alloc::Kind::parse) {
        return alloc_case(kind, p, cfg, overhead);
    }
    Ok(match bench {
        "syscall.getpid" => per_op(timed(getpids)),
        "syscall.sched_yield" => per_op(timed(yields)),
        "hermit.sched_yield-busy" => {
            let _partner = Partner::start();
            per_op(timed(yields))
        }
        "hermit.malloc-1m" => per_op(timed(malloc_free)),
        "pagefault.anon" => {
            // At most 32 MiB of pages a batch, in a guest of a few hundred.
            let pages = HarnessConfig { max_inner: cfg.max_inner.min(8192), fixed_inner: cfg.fixed_inner.map(|n| n.min(8192)), ..*cfg };
            per_op(first_writes(&pages, overhead))
        }
        "stream.kernels" if p.get("threads").and_then(Value::as_str).is_some_and(|t| t != "single") => {
            json!({"status": "n/a", "reason": "one CPU: the Hermit kernel is built without smp"})
        }
        "stream.kernels" => stream_case(cfg, array_bytes),
        "ipc.futex" => return futex_case(p, cfg, overhead),
        _ => return Err(format!("{bench}: not in this program")),
    })
}
