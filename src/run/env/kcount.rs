//! `--kernel-counters`: what the guest's kernel executes in each timed
//! batch, counted by oscycles' own QEMU plugin (the workspace's `plugin/`,
//! built by build.rs and carried inside this binary). The guest's harness
//! (or a guest program's: guest/freestanding/marks.h) marks its timed
//! batches (`measure::marks`); the plugin writes, per
//! marked batch, the kernel's and the user's instructions (by the
//! instruction's address against the kernel's base), the kernel's loads
//! and stores, entries into the kernel, CR3 writes, and with the cache
//! model the lines the kernel touched (cold) and its misses (warm) into a
//! file in the run's private directory; [`Counting::attach`] reads it back
//! (bounded, every line checked, each window against the count its batch
//! read) into metrics of the cells ([`crate::data::results::kernel`]).

use super::environment::Message;
use super::error::{EnvError, OwnError};
use super::guest::GuestSpec;
use super::options::EnvOptions;
use crate::data::results::kernel::{self, KernelMetric};
use crate::data::results::{CaseResult, Metric, RunDoc, UNIT_INSTRUCTIONS};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The environment's fact that says what counted.
pub const FACT: &str = "kernel_counters";

/// The id of [`KernelCountersArgs`] among the environments' options.
pub const KERNEL_COUNTERS_OPTIONS: &str = "kernel-counters";

/// What the kernel of an emulated guest executes, per operation.
#[derive(clap::Args, Debug, Clone)]
pub struct KernelCountersArgs {
    /// Count what the guest's kernel executes in each timed batch (qemu-tcg,
    /// xen-*, sel4 and mach under --accel icount; sel4-arm, in
    /// qemu-system-arm), with oscycles' own QEMU plugin: per operation,
    /// kernel and user instructions (by address, the kernel's from its ELF
    /// where it has one; under Xen the hypervisor's apart, a third class),
    /// the kernel's loads and stores, kernel entries and CR3 writes
    /// (address-space switches; on ARM TTBR0 and CONTEXTIDR writes) as
    /// metrics of each cell beside its instruction count. cache: also the
    /// cache lines the kernel touches per operation from a cold 32 KiB
    /// 8-way L1d of 64-byte lines emptied at every kernel entry, and its
    /// misses in a warm one. A switch of its own, not part of --accel
    /// icount: it needs a QEMU that loads plugins (API 1) and costs
    /// emulation time (a memory callback on every kernel access; with
    /// cache, l4-ipc and syscall at 0 words took 5.1x the CPU time), where
    /// the instruction counter alone costs nothing. The cells stay within
    /// a few instructions of an uncounted run's (the marks move where the
    /// timer's ticks fall) and repeat exactly from run to run.
    #[arg(long, default_value = "off", value_enum, value_name = "WHAT")]
    pub kernel_counters: KernelCounters,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelCounters {
    Off,
    On,
    Cache,
}

/// The plugin, as build.rs built it.
static PLUGIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kcount.so"));

/// Where x86-64 Linux's kernel begins: the upper half of the canonical
/// address space (its text, modules, direct map; user space lies below).
pub const LINUX_X86_64_BASE: u64 = 0xffff_8000_0000_0000;

/// Xen's part of a 64-bit PV guest's address space (the PV ABI's
/// `HYPERVISOR_VIRT_START` to `HYPERVISOR_VIRT_END`, xen/include/public/
/// arch-x86/xen-x86_64.h): its text, data and direct map lie in it, the
/// guest's kernel above it (Linux's direct map from 0xffff888000000000),
/// user space below.
pub const XEN_X86_64_RANGE: (u64, u64) = (0xffff_8000_0000_0000, 0xffff_8800_0000_0000);

/// The plugin's header line, before its arguments.
const FORMAT: &str = "oscycles-kcount 3";
/// The counts of a window's line, in order (`plugin/src/lib.rs`).
const COUNTS: usize = 11;
const KERNEL_INSNS: usize = 0;
const USER_INSNS: usize = 1;
const LOADS: usize = 2;
const STORES: usize = 3;
const ENTRIES: usize = 4;
/// Page-table base writes (x86's CR3, ARM's TTBR0).
const TABLE: usize = 6;
const COLD_LINES: usize = 7;
const WARM_MISSES: usize = 8;
const HYP_INSNS: usize = 9;
/// Address-space identifier writes (ARM's CONTEXTIDR).
const ASID: usize = 10;

/// The guest's instruction set, as the plugin recognises its marks and
/// register writes (QEMU's target: the plugin's header names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// x86-64 and ia32: qemu-system-x86_64, qemu-system-i386.
    X86,
    /// 32-bit ARM (A32): qemu-system-arm.
    Arm,
}

impl Isa {
    /// The instruction set of the guests of QEMU binary `qemu` (its name's
    /// target), if the plugin knows it.
    pub fn of_qemu(qemu: &str) -> Option<Isa> {
        match Path::new(qemu).file_name()?.to_str()? {
            "qemu-system-x86_64" | "qemu-system-i386" => Some(Isa::X86),
            "qemu-system-arm" => Some(Isa::Arm),
            _ => None,
        }
    }

    /// Its word in the plugin's header.
    fn name(self) -> &'static str {
        match self {
            Isa::X86 => "x86",
            Isa::Arm => "arm",
        }
    }

    /// The metrics of a window's page-table base and address-space
    /// identifier writes: CR3 on x86 (it has no identifier apart), TTBR0
    /// and CONTEXTIDR on ARM.
    fn switches(self) -> [(usize, Option<KernelMetric>); 2] {
        match self {
            Isa::X86 => [(TABLE, Some(kernel::CR3_WRITES)), (ASID, None)],
            Isa::Arm => [(TABLE, Some(kernel::TTBR0_WRITES)), (ASID, Some(kernel::CONTEXTIDR_WRITES))],
        }
    }
}
/// A window's file is read up to this size.
const MAX_FILE: u64 = 64 << 20;
/// At most this many instructions between a window's marks and its
/// batch's clock reads (the marks, the reads, the arithmetic between).
const SLACK: u64 = 64;

/// Why the kernel's counts cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum KcountError {
    #[error(
        "--kernel-counters needs --accel icount: the plugin's windows are the timed batches of a guest under QEMU's instruction counter"
    )]
    NeedsIcount,
    #[error("--kernel-counters: {qemu} does not load oscycles' plugin (a QEMU built with plugins, plugin API 1, is needed): {why}")]
    Refused { qemu: String, why: String },
    #[error(
        "--kernel-counters: the plugin knows the instructions of x86 and 32-bit ARM guests (qemu-system-x86_64, qemu-system-i386, qemu-system-arm), not {qemu}'s"
    )]
    UnknownTarget { qemu: String },
}

impl OwnError for KcountError {}

/// One start's plugin: its file and the file it writes, in the run's
/// private directory (removed when dropped), and how it was asked to count.
pub struct Counting {
    plugin: PathBuf,
    windows: PathBuf,
    /// The guest's instruction set (the QEMU's target).
    isa: Isa,
    base: u64,
    /// The hypervisor's addresses, where one runs under the kernel counted.
    hyp: Option<(u64, u64)>,
    cache: bool,
}

impl Drop for Counting {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.plugin);
        let _ = std::fs::remove_file(&self.windows);
    }
}

impl Counting {
    /// The plugin for one start of `qemu` if the options ask for it: laid
    /// out and loaded once by `qemu` to see that it can be (a refusal is
    /// the start's error: the environment's cells are n/a with it).
    /// `counts_instructions`: the guest runs under the instruction counter;
    /// `base`: where its kernel's addresses begin; `hyp`: the hypervisor's
    /// addresses (a third class, taken out of the kernel's), if one runs.
    pub fn start(
        o: &EnvOptions,
        qemu: &str,
        counts_instructions: bool,
        base: u64,
        hyp: Option<(u64, u64)>,
    ) -> Result<Option<Counting>, EnvError> {
        let asked = asked(o);
        if asked == KernelCounters::Off {
            return Ok(None);
        }
        EnvError::x86_only("--kernel-counters", "its QEMU plugin is built for an x86-64 host, with an x86-64 oscycles")?;
        if !counts_instructions {
            return Err(KcountError::NeedsIcount.into());
        }
        let isa = Isa::of_qemu(qemu).ok_or_else(|| KcountError::UnknownTarget { qemu: qemu.to_string() })?;
        let tag = crate::measure::scratch::unique_name("kcount");
        let c = Counting {
            plugin: o.work.join(format!("{tag}.so")),
            windows: o.work.join(format!("{tag}.windows")),
            isa,
            base,
            hyp,
            cache: asked == KernelCounters::Cache,
        };
        let mut f =
            crate::measure::scratch::create_new(&c.plugin, 0o700).map_err(EnvError::io(format!("creating {}", c.plugin.display())))?;
        f.write_all(PLUGIN).map_err(EnvError::io(format!("writing {}", c.plugin.display())))?;
        drop(f);
        crate::measure::scratch::create_new(&c.windows, 0o600).map_err(EnvError::io(format!("creating {}", c.windows.display())))?;
        probe(qemu, &c.plugin)?;
        Ok(Some(c))
    }

    /// QEMU's arguments that load the plugin.
    pub fn qemu_args(&self) -> [OsString; 2] {
        let mut arg = escaped(&self.plugin);
        arg.push(",out=");
        arg.push(escaped(&self.windows));
        arg.push(format!(",base=0x{:x},hyp={},cache={}", self.base, hyp_arg(self.hyp), if self.cache { "on" } else { "off" }));
        ["-plugin".into(), arg]
    }

    /// The facts of the start: what counted.
    pub fn facts(&self) -> serde_json::Value {
        let cache = if self.cache { "L1d 32 KiB, 8-way, 64-byte lines, LRU, virtual addresses" } else { "off" };
        let switches = match self.isa {
            Isa::X86 => "CR3 writes",
            Isa::Arm => "TTBR0 writes (mcr p15, 0, Rt, c2, c0, 0) and CONTEXTIDR writes (mcr p15, 0, Rt, c13, c0, 1)",
        };
        let mut f = serde_json::json!({"plugin": "oscycles-kcount (plugin API 1)", "instruction_set": self.isa.name(), "kernel_base": format!("0x{:x}", self.base), "cache_model": cache, "switches": switches});
        if self.hyp.is_some() {
            f["hypervisor_range"] = hyp_arg(self.hyp).into();
        }
        f
    }

    /// The run document in `messages` with the plugin's counts of each
    /// marked cell as its metrics ([`Counting::attach_doc`]).
    pub fn attach(&self, messages: &mut [Message]) {
        let windows = self.read();
        for m in messages.iter_mut().filter(|m| m.kind == "run") {
            let Ok(mut doc) = serde_json::from_slice::<RunDoc>(&m.bytes) else { continue };
            self.attach_windows(&windows, &mut doc);
            if let Ok(bytes) = serde_json::to_vec(&doc) {
                m.bytes = bytes;
            }
        }
    }

    /// `doc` (a guest program's, made by the host) with the plugin's
    /// counts of each marked cell as its metrics; where a cell's windows
    /// cannot be its batches, the reason in its details instead.
    pub fn attach_doc(&self, doc: &mut RunDoc) {
        self.attach_windows(&self.read(), doc);
    }

    fn attach_windows(&self, windows: &Result<Vec<[u64; COUNTS]>, String>, doc: &mut RunDoc) {
        for r in doc.results.iter_mut().filter(|r| r.marked.is_some()) {
            match windows.as_ref().map_err(String::clone).and_then(|w| metrics_of(r, w, (self.isa, self.hyp.is_some()), self.cache)) {
                Ok(ms) => r.metrics.extend(ms),
                Err(why) => {
                    r.details.insert(kernel::MISSING.into(), format!("not counted: {why}").into());
                }
            }
        }
    }

    /// The windows the plugin wrote, checked.
    fn read(&self) -> Result<Vec<[u64; COUNTS]>, String> {
        read_windows(&self.windows, (self.isa, self.base, self.hyp), self.cache)
    }

    /// The figures of an independent check program that marks each of its
    /// `loops` timed loops in the order it prints their lines, the first
    /// of `round_trips` IPC round trips (`figures`, read from its first
    /// line): the kernel's and the user's instructions one way of that
    /// first loop (half a round trip), as its cells count them; or why not.
    pub fn check_figures(&self, figures: &mut serde_json::Map<String, serde_json::Value>, loops: usize) {
        let trips = figures.get("round_trips").and_then(serde_json::Value::as_u64).filter(|&n| n > 0);
        let counted = match (self.read(), trips) {
            (Ok(w), Some(n)) if w.len() == loops && loops > 0 => {
                Ok((w[0][KERNEL_INSNS] as f64 / n as f64 / 2.0, w[0][USER_INSNS] as f64 / n as f64 / 2.0))
            }
            (Ok(w), Some(_)) => Err(format!("the plugin counted {} windows where the check marks {loops} loops", w.len())),
            (Ok(_), None) => Err("the check's line names no round trips".into()),
            (Err(why), _) => Err(why),
        };
        match counted {
            Ok((k, u)) => {
                figures.insert(CHECK_KERNEL_ONE_WAY.into(), k.into());
                figures.insert(CHECK_USER_ONE_WAY.into(), u.into());
            }
            Err(why) => {
                figures.insert(kernel::MISSING.into(), format!("not counted: {why}").into());
            }
        }
    }
}

/// An independent check's kernel instructions one way ([`Counting::check_figures`];
/// `schema_core::environment::IndependentCheck` reads it back).
pub const CHECK_KERNEL_ONE_WAY: &str = "kernel_instructions_one_way";
/// An independent check's user instructions one way.
pub const CHECK_USER_ONE_WAY: &str = "user_instructions_one_way";

/// What `--kernel-counters` asks for in options `o` (off where the run has no such option).
pub fn asked(o: &EnvOptions) -> KernelCounters {
    o.own.get::<KernelCountersArgs>().map_or(KernelCounters::Off, |a| a.kernel_counters)
}

/// Why a kernel's ELF gives no kernel base.
#[derive(Debug, thiserror::Error)]
#[error("--kernel-counters: {}: {why}", .path.display())]
pub struct KernelBaseError {
    pub path: PathBuf,
    pub why: String,
}

impl OwnError for KernelBaseError {}

/// How much of a kernel's ELF is read for its program headers.
const ELF_HEAD: u64 = 64 * 1024;

/// Where the kernel at `path` (an ELF, 32- or 64-bit, little-endian)
/// begins in the address space: the lowest address of a loadable segment
/// linked above where it is loaded (the kernel's window: seL4 ia32's from
/// 0xe0103000 over its low boot code, GNU Mach i386's from 0xc1000000).
/// A kernel linked where it is loaded has no window to tell its addresses
/// by, and is refused.
pub fn kernel_base(path: &Path) -> Result<u64, KernelBaseError> {
    let err = |why: String| KernelBaseError { path: path.to_path_buf(), why };
    let mut head = Vec::new();
    std::fs::File::open(path).and_then(|f| f.take(ELF_HEAD).read_to_end(&mut head)).map_err(|e| err(e.to_string()))?;
    let segments = load_segments(&head).ok_or_else(|| err("not a little-endian ELF with its program headers near its start".into()))?;
    segments.iter().filter(|(vaddr, paddr)| vaddr > paddr).map(|(vaddr, _)| *vaddr).min().ok_or_else(|| {
        err("no loadable segment is linked above where it is loaded: no kernel window to tell the kernel's addresses from the user's"
            .into())
    })
}

/// The (virtual, physical) addresses of an ELF's PT_LOAD segments, from
/// its first bytes `b`; None where they are not all there.
fn load_segments(b: &[u8]) -> Option<Vec<(u64, u64)>> {
    let n = |at: usize, len: usize| -> Option<u64> {
        let bytes = b.get(at..at.checked_add(len)?)?;
        Some(bytes.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x)))
    };
    if b.get(..4)? != b"\x7fELF" || b.get(5)? != &1 {
        return None;
    }
    // e_phoff; where e_phentsize (then e_phnum) lies; p_vaddr's and p_paddr's offsets in a header, their width.
    let (phoff, entsize_at, vaddr_at, paddr_at, width) = match b.get(4)? {
        1 => (n(28, 4)?, 42, 8, 12, 4),
        2 => (n(32, 8)?, 54, 16, 24, 8),
        _ => return None,
    };
    let (entsize, count) = (n(entsize_at, 2)? as usize, n(entsize_at + 2, 2)? as usize);
    let phoff = usize::try_from(phoff).ok()?;
    (0..count)
        .map(|i| phoff.checked_add(i.checked_mul(entsize)?))
        .map(|h| {
            let h = h?;
            Some((n(h, 4)?, n(h + vaddr_at, width)?, n(h + paddr_at, width)?))
        })
        .filter(|s| s.is_none_or(|(kind, _, _)| kind == 1))
        .map(|s| s.map(|(_, v, p)| (v, p)))
        .collect()
}

/// How many times its usual wait a guest counted by the plugin is given to
/// reach /init: the boot runs the kernel's code, every memory access of it
/// a callback (a counted boot took over the 90 s of the instruction
/// counter's wait on this 2-CPU machine at a load of 20, 2026-11-28).
const BOOT_WAIT: u32 = 3;

/// The options of a start, with a longer wait for /init where the plugin counts.
pub fn options(o: &EnvOptions, counted: bool) -> EnvOptions {
    let init_timeout = if counted { o.init_timeout * BOOT_WAIT } else { o.init_timeout };
    EnvOptions { init_timeout, ..o.clone() }
}

/// `spec` with the guest's timed batches marked when the plugin counts.
pub fn guest_spec(mut spec: GuestSpec, counted: bool) -> GuestSpec {
    spec.run.mark_batches = counted;
    spec
}

/// The plugin's `hyp` argument (and its header's word): the range or off.
fn hyp_arg(hyp: Option<(u64, u64)>) -> String {
    hyp.map_or("off".into(), |(lo, hi)| format!("0x{lo:x}-0x{hi:x}"))
}

/// A path in a QEMU option's value (a comma doubled).
fn escaped(p: &Path) -> OsString {
    p.as_os_str().to_string_lossy().replace(',', ",,").into()
}

/// Whether `qemu` loads the plugin at `plugin`: started with no machine
/// and its monitor on standard input, told to quit; the plugin, asked only
/// to probe, says it loaded.
pub fn probe(qemu: &str, plugin: &Path) -> Result<(), KcountError> {
    let refused = |why: String| KcountError::Refused { qemu: qemu.to_string(), why };
    let mut arg = escaped(plugin);
    arg.push(",probe=on");
    let mut child = Command::new(qemu)
        .args(["-machine", "none", "-nodefaults", "-no-user-config", "-display", "none", "-monitor", "stdio", "-plugin"])
        .arg(arg)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| refused(format!("starting it: {e}")))?;
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(b"quit\n");
    }
    let mut err = String::new();
    if let Some(e) = child.stderr.take() {
        let _ = e.take(64 * 1024).read_to_string(&mut err);
    }
    let _ = child.wait();
    if err.contains("oscycles-kcount: loaded") {
        return Ok(());
    }
    let why = err.lines().find(|l| l.contains("plugin") || l.contains("invalid option")).or(err.lines().last());
    Err(refused(crate::run::env::frame::plain(why.unwrap_or("it said nothing").trim(), 300)))
}

/// The windows the plugin wrote, checked: its header (the instruction set
/// it found, the base and cache it was given), then `window K` lines
/// numbered from 0, [`COUNTS`] counts each.
fn read_windows(path: &Path, (isa, base, hyp): (Isa, u64, Option<(u64, u64)>), cache: bool) -> Result<Vec<[u64; COUNTS]>, String> {
    let mut text = String::new();
    let f = std::fs::File::open(path).map_err(|e| format!("the plugin's windows ({}): {e}", path.display()))?;
    f.take(MAX_FILE).read_to_string(&mut text).map_err(|e| format!("the plugin's windows: {e}"))?;
    let mut lines = text.lines();
    let header = lines.next().ok_or("the plugin wrote nothing (did QEMU load it?)")?;
    let want = format!("{FORMAT} arch={} base=0x{base:x} hyp={} cache=", isa.name(), hyp_arg(hyp));
    let rest = header.strip_prefix(&want).ok_or_else(|| format!("the plugin's header is not {want:?}..."))?;
    if (rest != "off") != cache {
        return Err(format!("the plugin's header says cache={rest}"));
    }
    lines
        .enumerate()
        .map(|(i, l)| {
            let mut it = l.split(' ');
            let numbered = it.next() == Some("window") && it.next() == Some(i.to_string().as_str());
            let counts: Vec<u64> = it.map_while(|n| n.parse().ok()).collect();
            match <[u64; COUNTS]>::try_from(counts) {
                Ok(c) if numbered && l.split(' ').count() == COUNTS + 2 => Ok(c),
                _ => Err(format!("line {} of the plugin's windows is not `window {i}` and {COUNTS} counts", i + 2)),
            }
        })
        .collect()
}

/// The kernel's metrics of cell `r` from `windows`, per operation as the
/// cell counts its operations; an error where its marked windows cannot be
/// its timed batches. `isa`: the guest's instruction set (what its
/// switches are); `hyp`: a hypervisor's instructions were counted apart.
fn metrics_of(r: &CaseResult, windows: &[[u64; COUNTS]], (isa, hyp): (Isa, bool), cache: bool) -> Result<Vec<Metric>, String> {
    let m = r.marked.as_ref().ok_or("no batches marked")?;
    let main = r.metrics.first().filter(|x| x.unit == UNIT_INSTRUCTIONS).ok_or("the cell is not in guest instructions")?;
    let samples = main.samples.first().filter(|s| s.len() == m.batches.len()).ok_or("the cell's samples are not its marked batches")?;
    let n = m.batches.len();
    let first = usize::try_from(m.first).map_err(|_| "no such window".to_string())?;
    let span = first.checked_add(n).and_then(|end| windows.get(first..end)).ok_or_else(|| {
        format!("{n} windows from {first} asked for, the plugin wrote {} (did the guest mark batches it did not say?)", windows.len())
    })?;
    if m.inner == 0 || n == 0 {
        return Err("no operations".into());
    }
    let inner = m.inner as f64;
    let mut per: Vec<Vec<f64>> = vec![Vec::with_capacity(n); kernel::ALL.len()];
    let mut scale = None;
    for ((w, &c), &sample) in span.iter().zip(&m.batches).zip(samples) {
        let total = w[KERNEL_INSNS].saturating_add(w[USER_INSNS]).saturating_add(w[HYP_INSNS]);
        // A clock read that traps (Xen's emulated TSC) takes its own
        // instructions into the window: one read's worth, the overhead.
        if total.abs_diff(c) > SLACK + m.overhead {
            return Err(format!("a window counted {total} instructions where its batch read {c}: not the same batch"));
        }
        // The cell's operations per harness operation (one-way IPC: half a round trip).
        let own = c.saturating_sub(m.overhead) as f64 / inner;
        let s = sample / own;
        if !s.is_finite() || s <= 0.0 || scale.is_some_and(|x: f64| (x - s).abs() > 1e-9 * x) {
            return Err("the cell's samples are not its batches' counts".into());
        }
        scale = Some(s);
        let op = |i: usize| w[i] as f64 / inner * s;
        let (k, h) = (op(KERNEL_INSNS), op(HYP_INSNS));
        let mut values = vec![
            (kernel::KERNEL_INSTRUCTIONS, k),
            (kernel::USER_INSTRUCTIONS, sample - k - h),
            (kernel::HYPERVISOR_INSTRUCTIONS, h),
            (kernel::KERNEL_LOADS, op(LOADS)),
            (kernel::KERNEL_STORES, op(STORES)),
            (kernel::KERNEL_ENTRIES, op(ENTRIES)),
            (kernel::LINES_COLD, op(COLD_LINES)),
            (kernel::MISSES_WARM, op(WARM_MISSES)),
        ];
        values.extend(isa.switches().into_iter().filter_map(|(i, k)| Some((k?, op(i)))));
        for (k, v) in values {
            if let Some(j) = kernel::ALL.iter().position(|x| *x == k) {
                per[j].push(v);
            }
        }
    }
    let counted = |k: &KernelMetric| {
        (cache || ![kernel::LINES_COLD, kernel::MISSES_WARM].contains(k)) && (hyp || *k != kernel::HYPERVISOR_INSTRUCTIONS)
    };
    Ok(kernel::ALL.iter().zip(&per).filter(|(k, _)| counted(k)).filter_map(|(k, v)| k.metric(v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(samples: &[f64], first: u64, inner: u64, batches: &[u64]) -> CaseResult {
        let summary = crate::analysis::stats::Summary::of(samples).unwrap();
        CaseResult {
            suite: "syscall".into(),
            benchmark: "syscall.getpid".into(),
            family: "syscall".into(),
            params: Default::default(),
            status: crate::data::results::CaseStatus::Ok,
            reason: None,
            placement: None,
            metrics: vec![Metric::instructions("per_op", summary).with_samples(samples)],
            details: Default::default(),
            elapsed_s: 0.0,
            condition: None,
            environment: None,
            counters: None,
            inners: vec![],
            marked: Some(crate::measure::marks::Marked { first, inner, overhead: 10, batches: batches.to_vec() }),
        }
    }

    const X86: (Isa, bool) = (Isa::X86, false);

    fn window(k: u64, u: u64) -> [u64; COUNTS] {
        [k, u, k / 3, k / 5, 100, 100, 0, 20, 1, 0, 0]
    }

    #[test]
    fn a_cells_windows_become_its_kernel_metrics_per_operation() {
        // 100 operations of 300 kernel + 10 user instructions, a clock
        // read of 10; the marks add 7 user instructions to each window.
        let ws = vec![window(1, 1), window(30_000, 1_000 + 10 + 7), window(30_000, 1_017)];
        let r = cell(&[310.0, 310.0], 1, 100, &[31_010, 31_010]);
        let ms = metrics_of(&r, &ws, X86, false).unwrap();
        let med = |name: &str| ms.iter().find(|m| m.name == name).unwrap().summary.median;
        assert_eq!((med("kernel_instructions"), med("user_instructions")), (300.0, 10.0));
        assert_eq!((med("kernel_loads"), med("kernel_entries")), (100.0, 1.0));
        assert!(ms.iter().all(|m| m.is_exact()));
        assert_eq!(ms.len(), 6, "no cache model: no lines, no misses");
        assert_eq!(metrics_of(&r, &ws, X86, true).unwrap().len(), 8);
        // One-way IPC: the cell is half its batch's operations.
        let half = cell(&[155.0, 155.0], 1, 100, &[31_010, 31_010]);
        let ms = metrics_of(&half, &ws, X86, false).unwrap();
        assert_eq!(ms[0].summary.median, 150.0);
        // Under Xen: 200 of the 300 privileged instructions are the hypervisor's.
        let xen =
            vec![window(1, 1), [10_000, 1_017, 0, 0, 100, 100, 0, 0, 0, 20_000, 0], [10_000, 1_017, 0, 0, 100, 100, 0, 0, 0, 20_000, 0]];
        let ms = metrics_of(&r, &xen, (Isa::X86, true), false).unwrap();
        let med = |name: &str| ms.iter().find(|m| m.name == name).unwrap().summary.median;
        assert_eq!((med("kernel_instructions"), med("hypervisor_instructions"), med("user_instructions")), (100.0, 200.0, 10.0));
        assert!(metrics_of(&r, &ws, X86, false).unwrap().iter().all(|m| m.name != "hypervisor_instructions"));
    }

    /// On 32-bit ARM the switches are TTBR0's and CONTEXTIDR's (seL4 on
    /// ARMv7: two and one a thread switch), never CR3's.
    #[test]
    fn an_arm_guests_switches_are_its_ttbr0_and_contextidr_writes() {
        let arm = |k: u64, u: u64| [k, u, 0, 0, 100, 100, 200, 0, 0, 0, 100];
        let ws = vec![arm(30_000, 1_017), arm(30_000, 1_017)];
        let r = cell(&[155.0, 155.0], 0, 100, &[31_010, 31_010]);
        let ms = metrics_of(&r, &ws, (Isa::Arm, false), false).unwrap();
        let med = |name: &str| ms.iter().find(|m| m.name == name).map(|m| m.summary.median);
        assert_eq!((med("kernel_instructions"), med("ttbr0_writes"), med("contextidr_writes")), (Some(150.0), Some(1.0), Some(0.5)));
        assert_eq!(med("cr3_writes"), None);
        let x86 = metrics_of(&r, &ws, X86, false).unwrap();
        assert!(x86.iter().any(|m| m.name == "cr3_writes") && x86.iter().all(|m| !m.name.starts_with("ttbr0")));
        assert_eq!(Isa::of_qemu("qemu-system-arm"), Some(Isa::Arm));
        assert_eq!(Isa::of_qemu("/usr/bin/qemu-system-x86_64"), Some(Isa::X86));
        assert_eq!(Isa::of_qemu("qemu-system-aarch64"), None);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w");
        std::fs::write(&p, format!("{FORMAT} arch=arm base=0xe0000000 hyp=off cache=off\nwindow 0 1 2 3 4 5 6 7 8 9 10 11\n")).unwrap();
        assert_eq!(read_windows(&p, (Isa::Arm, 0xe000_0000, None), false).unwrap()[0][ASID], 11);
        assert!(read_windows(&p, (Isa::X86, 0xe000_0000, None), false).is_err(), "another instruction set");
    }

    #[test]
    fn windows_that_are_not_the_batches_are_refused() {
        let ws = vec![window(30_000, 1_017), window(30_000, 1_017)];
        let wrong_count = cell(&[310.0, 310.0], 0, 100, &[41_010, 31_010]);
        assert!(metrics_of(&wrong_count, &ws, X86, false).unwrap_err().contains("not the same batch"));
        let beyond = cell(&[310.0, 310.0], 1, 100, &[31_010, 31_010]);
        assert!(metrics_of(&beyond, &ws, X86, false).unwrap_err().contains("the plugin wrote 2"));
        let huge = cell(&[310.0, 310.0], u64::MAX, 100, &[31_010, 31_010]);
        assert!(metrics_of(&huge, &ws, X86, false).is_err());
        let zero = cell(&[310.0, 310.0], 0, 0, &[31_010, 31_010]);
        assert!(metrics_of(&zero, &ws, X86, false).is_err());
        let unlike = cell(&[310.0, 200.0], 0, 100, &[31_010, 31_010]);
        assert!(metrics_of(&unlike, &ws, X86, false).is_err(), "samples that do not scale alike");
    }

    #[test]
    fn the_windows_file_is_checked_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w");
        let head = format!("{FORMAT} arch=x86 base=0x{LINUX_X86_64_BASE:x} hyp=off cache=off\n");
        std::fs::write(&p, format!("{head}window 0 1 2 3 4 5 6 7 8 9 10 11\nwindow 1 1 2 3 4 5 6 7 8 9 10 11\n")).unwrap();
        let base = LINUX_X86_64_BASE;
        assert_eq!(read_windows(&p, (Isa::X86, base, None), false).unwrap().len(), 2);
        assert!(read_windows(&p, (Isa::X86, base, None), true).is_err(), "asked with cache");
        assert!(read_windows(&p, (Isa::X86, 0x1000, None), false).is_err(), "another base");
        assert!(read_windows(&p, (Isa::X86, base, Some(XEN_X86_64_RANGE)), false).is_err(), "asked with a hypervisor");
        let xen = format!(
            "{FORMAT} arch=x86 base=0x{base:x} hyp=0xffff800000000000-0xffff880000000000 cache=off\nwindow 0 1 2 3 4 5 6 7 8 9 10 11\n"
        );
        std::fs::write(&p, xen).unwrap();
        assert_eq!(read_windows(&p, (Isa::X86, base, Some(XEN_X86_64_RANGE)), false).unwrap()[0][HYP_INSNS], 10);
        for bad in [
            "window 1 1 2 3 4 5 6 7 8 9 10 11\n",
            "window 0 1 2 3\n",
            "window 0 1 2 3 4 5 6 7 8 9 10\n",
            "window 0 1 2 3 4 5 6 7 8 9 10 11 12\n",
            "window 0 -1 2 3 4 5 6 7 8 9 10 11\n",
        ] {
            std::fs::write(&p, format!("{head}{bad}")).unwrap();
            assert!(read_windows(&p, (Isa::X86, base, None), false).is_err(), "{bad}");
        }
        std::fs::write(&p, "").unwrap();
        assert!(read_windows(&p, (Isa::X86, base, None), false).unwrap_err().contains("nothing"));
    }

    /// An ELF of `class` (1: 32-bit, 2: 64-bit) with PT_LOAD segments at
    /// these (virtual, physical) addresses and a PT_GNU_STACK at 0.
    fn elf(class: u8, segments: &[(u64, u64)]) -> Vec<u8> {
        let (phoff, entsize, at, width) = if class == 1 { (52usize, 32usize, 42usize, 4usize) } else { (64, 56, 54, 8) };
        let mut b = vec![0u8; phoff + entsize * (segments.len() + 1)];
        b[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', class, 1]);
        b[if class == 1 { 28 } else { 32 }] = phoff as u8;
        b[at..at + 2].copy_from_slice(&(entsize as u16).to_le_bytes());
        b[at + 2..at + 4].copy_from_slice(&(segments.len() as u16 + 1).to_le_bytes());
        for (i, (v, p)) in segments.iter().chain(&[(0, 0)]).enumerate() {
            let h = phoff + i * entsize;
            let kind: u32 = if i < segments.len() { 1 } else { 0x6474_e551 };
            b[h..h + 4].copy_from_slice(&kind.to_le_bytes());
            let (va, pa) = if class == 1 { (h + 8, h + 12) } else { (h + 16, h + 24) };
            b[va..va + width].copy_from_slice(&v.to_le_bytes()[..width]);
            b[pa..pa + width].copy_from_slice(&p.to_le_bytes()[..width]);
        }
        b
    }

    #[test]
    fn the_kernel_base_is_its_lowest_segment_linked_above_where_it_loads() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            kernel_base(&p)
        };
        // seL4 ia32's: low boot code where it loads, the rest in the kernel window.
        let sel4 = elf(1, &[(0x0010_0000, 0x0010_0000), (0xe010_a000, 0x0010_a000), (0xe010_3000, 0x0010_3000)]);
        assert_eq!(at("sel4", &sel4).unwrap(), 0xe010_3000);
        assert_eq!(at("mach", &elf(1, &[(0xc100_0000, 0x0100_0000), (0xc111_d000, 0x0111_d000)])).unwrap(), 0xc100_0000);
        let linux = elf(2, &[(0xffff_ffff_8100_0000, 0x0100_0000)]);
        assert_eq!(at("linux", &linux).unwrap(), 0xffff_ffff_8100_0000);
        let e = at("identity", &elf(1, &[(0x0010_0000, 0x0010_0000)])).unwrap_err().to_string();
        assert!(e.contains("identity") && e.contains("no kernel window"), "{e}");
        assert!(at("text", b"not an ELF at all").unwrap_err().to_string().contains("not a little-endian ELF"));
        assert!(at("cut", &sel4[..sel4.len() - 40]).is_err(), "program headers cut short");
        assert!(kernel_base(&dir.path().join("absent")).is_err());
    }

    #[test]
    fn a_checks_one_marked_loop_gives_its_kernel_and_user_instructions_one_way() {
        let dir = tempfile::tempdir().unwrap();
        let c = Counting {
            plugin: dir.path().join("p.so"),
            windows: dir.path().join("w"),
            isa: Isa::X86,
            base: 0xe010_3000,
            hyp: None,
            cache: false,
        };
        let head = format!("{FORMAT} arch=x86 base=0xe0103000 hyp=off cache=off\n");
        let figures = |text: &str, trips: u64, loops: usize| {
            std::fs::write(&c.windows, text).unwrap();
            let mut m = serde_json::Map::new();
            m.insert("round_trips".into(), trips.into());
            c.check_figures(&mut m, loops);
            m
        };
        let m = figures(&format!("{head}window 0 44008000 2203000 0 0 0 0 0 0 0 0 0\n"), 100_000, 1);
        assert_eq!((m[CHECK_KERNEL_ONE_WAY].as_f64(), m[CHECK_USER_ONE_WAY].as_f64()), (Some(220.04), Some(11.015)));
        let two = format!("{head}window 0 44008000 2203000 0 0 0 0 0 0 0 0 0\nwindow 1 1 1 0 0 0 0 0 0 0 0 0\n");
        assert!(figures(&two, 100_000, 1)[kernel::MISSING].as_str().unwrap().contains("2 windows"));
        // A check of two loops (seL4 on ARM's: one a line): the first line's is the first window.
        assert_eq!(figures(&two, 100_000, 2)[CHECK_KERNEL_ONE_WAY].as_f64(), Some(220.04));
        assert!(figures(&format!("{head}window 0 1 1 0 0 0 0 0 0 0 0 0\n"), 0, 1).contains_key(kernel::MISSING));
        assert!(figures("", 10, 1).contains_key(kernel::MISSING));
    }

    #[test]
    fn a_qemu_without_plugins_or_api_1_is_refused_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let fake = |name: &str, script: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
            std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
            p.to_string_lossy().to_string()
        };
        let plugin = dir.path().join("kcount.so");
        let no_plugins = fake("no-plugins", "echo \"$0: -plugin: invalid option\" >&2; exit 1");
        let e = probe(&no_plugins, &plugin).unwrap_err().to_string();
        assert!(e.contains("-plugin: invalid option") && e.contains("plugin API 1"), "{e}");
        let api =
            "echo 'qemu: Could not load plugin x: plugin requires API version 1, but this QEMU supports only up to version 0' >&2; exit 1";
        let e = probe(&fake("old-api", api), &plugin).unwrap_err().to_string();
        assert!(e.contains("supports only up to version 0"), "{e}");
        assert!(probe(&dir.path().join("absent").to_string_lossy(), &plugin).unwrap_err().to_string().contains("starting it"));
        assert!(probe(&fake("loads", "echo 'oscycles-kcount: loaded, probe only' >&2"), &plugin).is_ok());
    }
}
