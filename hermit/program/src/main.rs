//! oscycles' measuring core as a Hermit unikernel program: booted by
//! `oscycles run --env hermit` (QEMU, oscycles' own loader), it says hello
//! over the serial port as its first act, measures the cases the host names
//! on its command line, and sends their raw samples back framed as the
//! other guests frame their documents. The host turns them into the run
//! document of the environment (`src/run/env/hermit.rs`).
//!
//! The measuring core is oscycles' own source, compiled here for
//! x86_64-unknown-hermit (`#[path]` modules, not copies): the harness that
//! doubles a batch to its target and times the batches (`src/measure/harness.rs`),
//! STREAM's kernels and driver with its validation (`src/families/bench/stream/measure.rs`,
//! the assembly loops of `src/measure/arch/mod.rs`), memcpy's three copies
//! (`src/families/bench/memcpy/measure.rs`), the four block allocators and their workload
//! (`src/families/bench/alloc/measure.rs`), the IPC message fill and check
//! (`src/families/bench/ipc/message.rs`), the TSC read, the framing
//! (`src/run/env/frame.rs`), and the names of their closed lists
//! (`src/base/named.rs`). What differs is only what a unikernel has instead
//! of Linux's system calls: the operations timed (getpid, yield, malloc,
//! first write, futex wait and wake) are Hermit's, through Rust's std or
//! the kernel's functions as any Hermit program calls them, and `shim`
//! stands in for oscycles' Linux-only modules.

#[path = "../../../src/measure/arch/mod.rs"]
#[allow(dead_code)]
mod arch;
mod bench;
#[path = "../../../src/run/env/frame.rs"]
#[allow(dead_code)]
mod frame;
mod grid;
#[path = "../../../src/measure/harness.rs"]
#[allow(dead_code)]
mod harness;
mod ipc;
#[path = "../../../src/measure/marks.rs"]
#[allow(dead_code)]
mod marks;
#[path = "../../../src/base/named.rs"]
#[allow(dead_code)]
mod named;
#[path = "../../../src/base/text.rs"]
mod text;
mod ops;
mod shim;

pub use shim::{clock, counters, placement, watchdog};

// The paths oscycles' shared files name (they say their layer:
// `crate::measure::clock`, `crate::base::named`, ...), mapped onto this
// program's modules, as far as those files reach.
mod base {
    pub(crate) use crate::{named, text};
}
mod measure {
    pub(crate) use crate::{arch, clock, counters, marks, placement, watchdog};
}
mod families {
    pub mod bench {
        pub mod toolkit {
            pub mod fds {
                pub(crate) use crate::ipc::IpcError;
            }
        }
    }
}

use serde_json::json;

/// What the host asks, from the words after `--` on the kernel's command
/// line: `key=value` each.
#[derive(Debug, Default)]
struct Args {
    benches: Vec<String>,
    /// The cases of each benchmark with parameters, as the host wrote them
    /// (`grid::points` reads them one by one).
    grids: std::collections::BTreeMap<String, String>,
    mode: String,
    harness: Option<harness::HarnessConfig>,
    array_bytes: u64,
}

fn args() -> Result<Args, String> {
    let mut a = Args { mode: "run".into(), ..Args::default() };
    let mut cfg = harness::HarnessConfig { target_batch_cycles: 10_000_000, batches: 11, fixed_inner: None, max_inner: 1 << 40 };
    for w in std::env::args().skip(1) {
        let (k, v) = w.split_once('=').ok_or_else(|| format!("argument {w:?} is not key=value"))?;
        let num = || v.parse::<u64>().map_err(|_| format!("argument {k}: {v:?} is not a whole number"));
        match k {
            "benches" => a.benches = v.split(',').filter(|s| !s.is_empty()).map(String::from).collect(),
            "mode" => a.mode = v.into(),
            "batch_cycles" => cfg.target_batch_cycles = num()?,
            "batches" => cfg.batches = num()?.max(1) as usize,
            "inner" => cfg.fixed_inner = Some(num()?).filter(|&n| n > 0),
            "array_bytes" => a.array_bytes = num()?,
            _ if k.starts_with("cases.") => {
                a.grids.insert(k["cases.".len()..].to_string(), v.to_string());
            }
            _ => return Err(format!("unknown argument {k:?}")),
        }
    }
    a.harness = Some(cfg);
    Ok(a)
}

fn send(kind: &str, id: u32, payload: &[u8]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(frame::encode(kind, id, payload).as_bytes());
    let _ = out.flush();
}

fn main() {
    // (tests) A guest that never reaches its program: no hello at all.
    if std::env::args().any(|a| a == "mode=no-init") {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    send("hello", 0, b"hermit");
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            send("error", 1, e.as_bytes());
            std::process::exit(2);
        }
    };
    match a.mode.as_str() {
        "panic" => std::process::exit(1),
        "hang" => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
        _ => {}
    }
    let cfg = a.harness.expect("set by args()");
    let overhead = clock::read_overhead(2000);
    // Each answer is kept as one string: under Hermit 0.11 a thread switch
    // and a small allocation cost more with every object alive on the heap
    // (measured under TCG: sched_yield with a second thread 23.7k -> 204k
    // cycles, alloc.system 8.2k -> 101k, with some 1000 parsed cases alive),
    // so the program holds no parsed lists or JSON trees while it measures.
    let mut answers: Vec<String> = Vec::new();
    for b in &a.benches {
        let points: Box<dyn Iterator<Item = Result<grid::Point, String>>> = match a.grids.get(b) {
            Some(spec) => Box::new(grid::points(spec)),
            None => Box::new(std::iter::once(Ok(grid::Point::new()))),
        };
        ops::run(b, points, &cfg, overhead, a.array_bytes, &mut |text| answers.push(text));
    }
    let head = json!({
        "program": "oscycles-hermit",
        "tsc_hz_inside": clock::tsc_hz_hint(),
        "overhead_cycles": overhead,
        "harness": cfg,
    })
    .to_string();
    // The document: the head's fields, then the answers as they are.
    let doc = format!("{},\"cases\":[{}]}}", head.strip_suffix('}').unwrap_or(&head), answers.join(","));
    send("samples", 1, doc.as_bytes());
}
