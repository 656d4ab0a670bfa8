//! The operations of HermitCore's basic benchmark and STREAM, as a Hermit
//! program performs them, timed by oscycles' harness. Each case gives a
//! JSON object: its benchmark id, and its samples (cycles per operation,
//! one per batch) or STREAM's times, or why it failed.

use crate::bench::stream;
use crate::clock::Tsc;
use crate::harness::{self, HarnessConfig, Measurement};
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

fn per_op(bench: &str, m: Result<Measurement, Failed>) -> Value {
    match m {
        Ok(m) => {
            json!({"benchmark": bench, "status": "ok", "per_op_cycles": m.per_op_cycles, "inner": m.inner, "calibration": m.calibration})
        }
        Err(Failed(why)) => json!({"benchmark": bench, "status": "failed", "reason": why}),
    }
}

/// STREAM single-threaded over three arrays of `array_bytes`, by
/// oscycles' own driver (repetitions as its quick suite: batches + 1).
fn stream_case(bench: &str, cfg: &HarnessConfig, array_bytes: u64) -> Value {
    let elements = stream::array_len(None, Some(array_bytes.max(1 << 20)), 0);
    let reps = (cfg.batches + 1).clamp(3, 11);
    match stream::run(elements, reps, &[0], 1, stream::kernels) {
        Ok(r) => {
            let kernels: Vec<Value> =
                r.kernels.iter().map(|k| json!({"name": k.kernel.name(), "times": k.times, "bytes": k.bytes})).collect();
            json!({"benchmark": bench, "status": "ok", "elements": r.elements, "repetitions": reps, "kernels": kernels})
        }
        Err(e) => json!({"benchmark": bench, "status": "failed", "reason": e.to_string()}),
    }
}

/// Runs one case by benchmark id; an id this program does not have is
/// answered as such (the host marks it n/a).
pub fn run(bench: &str, cfg: &HarnessConfig, overhead: u64, array_bytes: u64) -> Value {
    let timed = |op: fn(u64) -> Result<(), Failed>| harness::measure(&Tsc, overhead, cfg, op);
    match bench {
        "syscall.getpid" => per_op(bench, timed(getpids)),
        "syscall.sched_yield" => per_op(bench, timed(yields)),
        "hermit.sched_yield-busy" => {
            let _partner = Partner::start();
            per_op(bench, timed(yields))
        }
        "hermit.malloc-1m" => per_op(bench, timed(malloc_free)),
        "pagefault.anon" => {
            // At most 32 MiB of pages a batch, in a guest of a few hundred.
            let pages = HarnessConfig { max_inner: cfg.max_inner.min(8192), fixed_inner: cfg.fixed_inner.map(|n| n.min(8192)), ..*cfg };
            per_op(bench, first_writes(&pages, overhead))
        }
        "stream.kernels" => stream_case(bench, cfg, array_bytes),
        _ => json!({"benchmark": bench, "status": "absent"}),
    }
}
