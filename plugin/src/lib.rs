//! oscycles-kcount: a QEMU TCG plugin (plugin API 1) that counts what a
//! guest executes between the marks oscycles' harness puts around each
//! timed batch (see `decode::BEGIN`), split by the instruction's address:
//! in the hypervisor's range `hyp` (under Xen), the hypervisor's; else at
//! or above `base`, the kernel's; below, the user's. Per window: kernel,
//! user and hypervisor instructions, the privileged code's (the kernel's
//! and the hypervisor's) loads and stores, entries into it and exits from
//! it, writes of the page-table base (x86's CR3, ARM's TTBR0) and of the
//! address-space identifier (ARM's CONTEXTIDR), and with a cache model the
//! lines it touched in a cache emptied at every entry (cold) and its misses
//! in one that never is (warm). The guest's instruction set (x86, or 32-bit
//! ARM) is QEMU's target's: the marks and the register writes are
//! recognised by its bytes (`decode`).
//!
//! Arguments (`-plugin libkcount.so,out=FILE,base=0x...[,hyp=0xLO-0xHI][,cache=SIZE/WAYS/LINE][,probe=on]`):
//! `out`, a file that exists (the host made it), written a header line (the
//! format, the instruction set, the arguments) and one line per window; `hyp`: the hypervisor's addresses, LO included, HI
//! not; `cache=on`: a 32 KiB 8-way cache of 64-byte lines; `probe=on`: say
//! that it loaded and count nothing.
//!
//! Exact with one vCPU only (the counters are plain `u64`s and the vCPU's
//! callbacks never run at once); it refuses more. QEMU 7.2 filters memory
//! callbacks by direction wrongly (one for stores fires on loads too): it
//! registers for both and reads the direction of each access.

mod cache;
mod decode;

use cache::{Cache, Geometry};
use decode::{Arch, Switch};
use qemu_plugin_sys as q;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The plugin API this plugin is built for (QEMU refuses a later one).
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static qemu_plugin_version: c_int = q::QEMU_PLUGIN_VERSION as c_int;

/// At most this many windows are written (a run has a few thousand).
const MAX_WINDOWS: u64 = 1_000_000;

/// The format's name and version, the header's first words.
const FORMAT: &str = "oscycles-kcount 3";

/// The counts a window is the difference of, in the order a window's line
/// lists them.
const COUNTS: usize = 11;
const KERNEL_INSNS: usize = 0;
const USER_INSNS: usize = 1;
const LOADS: usize = 2;
const STORES: usize = 3;
const ENTRIES: usize = 4;
const EXITS: usize = 5;
/// Page-table base writes (x86's CR3, ARM's TTBR0).
const TABLE: usize = 6;
const COLD_LINES: usize = 7;
const WARM_MISSES: usize = 8;
const HYP_INSNS: usize = 9;
/// Address-space identifier writes (ARM's CONTEXTIDR; none on x86).
const ASID: usize = 10;

/// What an instruction's address makes it.
const USER: usize = 0;
const KERNEL: usize = 1;
const HYPERVISOR: usize = 2;

struct Args {
    out: Option<String>,
    base: u64,
    hyp: Option<(u64, u64)>,
    cache: Option<Geometry>,
    probe: bool,
}

fn hex(k: &str, v: &str) -> Result<u64, String> {
    let digits = v.strip_prefix("0x").ok_or_else(|| format!("{k}={v}: a hexadecimal address 0x..."))?;
    u64::from_str_radix(digits, 16).map_err(|e| format!("{k}={v}: {e}"))
}

fn parse_args(raw: &[String]) -> Result<Args, String> {
    let mut a = Args { out: None, base: 0, hyp: None, cache: None, probe: false };
    let mut have_base = false;
    for arg in raw {
        let (k, v) = arg.split_once('=').ok_or_else(|| format!("argument {arg:?} is not key=value"))?;
        match k {
            "out" => a.out = Some(v.to_string()),
            "base" => {
                a.base = hex(k, v)?;
                have_base = true;
            }
            "hyp" if v == "off" => a.hyp = None,
            "hyp" => {
                let (lo, hi) = v.split_once('-').ok_or_else(|| format!("hyp={v}: 0xLO-0xHI"))?;
                let (lo, hi) = (hex(k, lo)?, hex(k, hi)?);
                if lo >= hi {
                    return Err(format!("hyp={v}: an empty range"));
                }
                a.hyp = Some((lo, hi));
            }
            "cache" if v == "off" => a.cache = None,
            "cache" if matches!(v, "on" | "true" | "yes") => a.cache = Some(Geometry::L1D),
            "cache" => a.cache = Some(Geometry::parse(v).ok_or_else(|| format!("cache={v}: SIZE/WAYS/LINE in bytes, powers of two"))?),
            "probe" => a.probe = matches!(v, "on" | "true" | "yes"),
            _ => return Err(format!("unknown argument {k:?} (out, base, hyp, cache, probe)")),
        }
    }
    if !a.probe && (a.out.is_none() || !have_base) {
        return Err("out=FILE and base=0xADDRESS are needed".into());
    }
    Ok(a)
}

/// The counters QEMU's inline operations add to (their addresses are
/// given to QEMU: they never move).
#[repr(C)]
struct Inline {
    /// [user, kernel, hypervisor] instructions.
    insns: [u64; 3],
    /// Page-table base and address-space identifier writes.
    table: u64,
    asid: u64,
}

struct State {
    inline: Inline,
    arch: Arch,
    base: u64,
    hyp: Option<(u64, u64)>,
    /// The class of the last block executed: privileged (the kernel's or
    /// the hypervisor's) or not.
    in_kernel: bool,
    loads: u64,
    stores: u64,
    entries: u64,
    exits: u64,
    cold_lines: u64,
    warm_misses: u64,
    /// Emptied at every entry into the kernel; fed the kernel's accesses.
    cold: Option<Cache>,
    /// Never emptied; fed every access.
    warm: Option<Cache>,
    /// The counts when the open window began.
    open: Option<[u64; COUNTS]>,
    windows: u64,
    out: Option<File>,
}

impl State {
    fn new(a: &Args, arch: Arch, out: Option<File>) -> State {
        State {
            inline: Inline { insns: [0; 3], table: 0, asid: 0 },
            arch,
            base: a.base,
            hyp: a.hyp,
            in_kernel: false,
            loads: 0,
            stores: 0,
            entries: 0,
            exits: 0,
            cold_lines: 0,
            warm_misses: 0,
            cold: a.cache.map(Cache::new),
            warm: a.cache.map(Cache::new),
            open: None,
            windows: 0,
            out,
        }
    }

    fn now(&self) -> [u64; COUNTS] {
        let mut c = [0; COUNTS];
        c[KERNEL_INSNS] = self.inline.insns[KERNEL];
        c[USER_INSNS] = self.inline.insns[USER];
        c[HYP_INSNS] = self.inline.insns[HYPERVISOR];
        c[LOADS] = self.loads;
        c[STORES] = self.stores;
        c[ENTRIES] = self.entries;
        c[EXITS] = self.exits;
        c[TABLE] = self.inline.table;
        c[ASID] = self.inline.asid;
        c[COLD_LINES] = self.cold_lines;
        c[WARM_MISSES] = self.warm_misses;
        c
    }

    /// [`USER`], [`KERNEL`] or [`HYPERVISOR`], by the address.
    fn class(&self, vaddr: u64) -> usize {
        match self.hyp {
            Some((lo, hi)) if (lo..hi).contains(&vaddr) => HYPERVISOR,
            _ if vaddr >= self.base => KERNEL,
            _ => USER,
        }
    }

    fn end_window(&mut self) {
        let Some(begun) = self.open.take() else { return };
        if self.windows >= MAX_WINDOWS {
            return;
        }
        let now = self.now();
        let mut line = format!("window {}", self.windows);
        for (n, b) in now.iter().zip(begun) {
            line += &format!(" {}", n.wrapping_sub(b));
        }
        line.push('\n');
        self.windows += 1;
        if let Some(f) = &mut self.out
            && f.write_all(line.as_bytes()).is_err()
        {
            self.out = None;
        }
    }
}

static STATE: AtomicPtr<State> = AtomicPtr::new(std::ptr::null_mut());

/// The plugin's state.
///
/// # Safety
/// Only from QEMU's callbacks after `qemu_plugin_install` set it: with one
/// vCPU (install refuses more) they run one at a time, and none calls
/// another, so no two references to the state are alive at once.
unsafe fn state() -> &'static mut State {
    // SAFETY: set once in install to a leaked Box, never freed; exclusive
    // as the function's contract says.
    unsafe { &mut *STATE.load(Ordering::Relaxed) }
}

fn flag(kernel: bool) -> *mut c_void {
    usize::from(kernel) as *mut c_void
}

unsafe extern "C" fn on_block(_vcpu: c_uint, kernel: *mut c_void) {
    // SAFETY: a vCPU callback (see `state`).
    let s = unsafe { state() };
    let kernel = !kernel.is_null();
    if kernel != s.in_kernel {
        if kernel {
            s.entries += 1;
            if let Some(c) = &mut s.cold {
                c.empty();
            }
        } else {
            s.exits += 1;
        }
        s.in_kernel = kernel;
    }
}

unsafe extern "C" fn on_memory(_vcpu: c_uint, info: q::qemu_plugin_meminfo_t, vaddr: u64, kernel: *mut c_void) {
    // SAFETY: a vCPU callback (see `state`); `info` is QEMU's for this access.
    let (s, store, shift) = unsafe { (state(), q::qemu_plugin_mem_is_store(info), q::qemu_plugin_mem_size_shift(info)) };
    let size = 1u64 << shift.min(6);
    let kernel = !kernel.is_null();
    if kernel {
        if store {
            s.stores += 1;
        } else {
            s.loads += 1;
        }
        if let Some(c) = &mut s.cold {
            s.cold_lines += c.access(vaddr, size);
        }
    }
    if let Some(w) = &mut s.warm {
        let missed = w.access(vaddr, size);
        if kernel {
            s.warm_misses += missed;
        }
    }
}

unsafe extern "C" fn on_mark(_vcpu: c_uint, mark: *mut c_void) {
    // SAFETY: a vCPU callback (see `state`).
    let s = unsafe { state() };
    if mark as usize == 1 {
        s.open = Some(s.now());
    } else {
        s.end_window();
    }
}

/// Instruments one instruction of a block being translated.
///
/// # Safety
/// `insn` is one of the block QEMU is translating, in its translation callback.
unsafe fn instrument(s: &mut State, insn: *mut q::qemu_plugin_insn) {
    // SAFETY: QEMU's instruction handle, valid during translation; its data
    // is `size` bytes.
    let (vaddr, bytes) = unsafe {
        let size = q::qemu_plugin_insn_size(insn);
        let data = q::qemu_plugin_insn_data(insn) as *const u8;
        (q::qemu_plugin_insn_vaddr(insn), std::slice::from_raw_parts(data, size))
    };
    let class = s.class(vaddr);
    let kernel = class != USER;
    let add = q::qemu_plugin_op::QEMU_PLUGIN_INLINE_ADD_U64;
    let no_regs = q::qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS;
    // SAFETY: the counters live as long as the plugin (a leaked Box);
    // callbacks are this file's, with the signatures QEMU calls.
    unsafe {
        q::qemu_plugin_register_vcpu_insn_exec_inline(insn, add, (&raw mut s.inline.insns[class]).cast(), 1);
        if let Some(w) = s.arch.switch(bytes) {
            let counter = match w {
                Switch::Table => &raw mut s.inline.table,
                Switch::Asid => &raw mut s.inline.asid,
            };
            q::qemu_plugin_register_vcpu_insn_exec_inline(insn, add, counter.cast(), 1);
        }
        if let Some(m) = s.arch.mark(bytes) {
            let which = if m == decode::Mark::Begin { 1 } else { 2 };
            q::qemu_plugin_register_vcpu_insn_exec_cb(insn, Some(on_mark), no_regs, which as *mut c_void);
        }
        // Every instruction, a user one without the cache model too: QEMU
        // 7.2 leaves the memory callbacks of the last instruction that had
        // them armed for the helpers of one that has none (a user-mode call
        // gate's descriptor loads and stack pushes, GNU Mach's traps, were
        // counted as the kernel's, 8 loads and 4 stores a trap, without the
        // cache model and not with it).
        let rw = q::qemu_plugin_mem_rw::QEMU_PLUGIN_MEM_RW;
        q::qemu_plugin_register_vcpu_mem_cb(insn, Some(on_memory), no_regs, rw, flag(kernel));
    }
}

unsafe extern "C" fn on_translate(_id: q::qemu_plugin_id_t, tb: *mut q::qemu_plugin_tb) {
    // SAFETY: a translation callback, on the vCPU's thread (see `state`);
    // `tb` is QEMU's block, its instructions indexed below its count.
    unsafe {
        let s = state();
        let n = q::qemu_plugin_tb_n_insns(tb);
        let kernel = s.class(q::qemu_plugin_tb_vaddr(tb)) != USER;
        q::qemu_plugin_register_vcpu_tb_exec_cb(tb, Some(on_block), q::qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS, flag(kernel));
        for i in 0..n {
            instrument(s, q::qemu_plugin_tb_get_insn(tb, i));
        }
    }
}

unsafe extern "C" fn on_exit(_id: q::qemu_plugin_id_t, _data: *mut c_void) {
    // SAFETY: QEMU calls it once, after the vCPU stopped.
    let s = unsafe { state() };
    if let Some(f) = &mut s.out {
        let _ = f.flush();
    }
}

/// Refuses or installs; what it says goes to QEMU's standard error.
///
/// # Safety
/// Called by QEMU as its plugin API says: `info` valid during the call,
/// `argv` `argc` C strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qemu_plugin_install(
    id: q::qemu_plugin_id_t,
    info: *const q::qemu_info_t,
    argc: c_int,
    argv: *const *const c_char,
) -> c_int {
    // SAFETY: as QEMU passes them (the function's contract).
    let raw: Vec<String> =
        (0..argc.max(0) as usize).map(|i| unsafe { CStr::from_ptr(*argv.add(i)) }.to_string_lossy().into_owned()).collect();
    // SAFETY: `info` is valid during the call; `system` is the union's
    // member under system emulation; `target_name` a C string QEMU keeps.
    let (info, vcpus, target) = unsafe {
        let target =
            if (*info).target_name.is_null() { String::new() } else { CStr::from_ptr((*info).target_name).to_string_lossy().into_owned() };
        (*info, if (*info).system_emulation { Some((*info).__bindgen_anon_1.system.smp_vcpus) } else { None }, target)
    };
    match install(id, &raw, vcpus, &target) {
        Ok(said) => {
            eprintln!("oscycles-kcount: {said} (plugin API {}, QEMU's {}..{})", q::QEMU_PLUGIN_VERSION, info.version.min, info.version.cur);
            0
        }
        Err(e) => {
            eprintln!("oscycles-kcount: refused: {e}");
            1
        }
    }
}

/// Installs the plugin for QEMU's `target` (its `target_name`).
fn install(id: q::qemu_plugin_id_t, raw: &[String], vcpus: Option<c_int>, target: &str) -> Result<String, String> {
    let a = parse_args(raw)?;
    let arch = Arch::of_target(target).ok_or_else(|| format!("QEMU's target {target:?}: the plugin knows x86_64, i386 and arm"))?;
    if a.probe {
        return Ok(format!("loaded, probe only, target {target} ({} instructions)", arch.name()));
    }
    match vcpus {
        None => return Err("only under system emulation (qemu-system-*)".into()),
        Some(1) => {}
        Some(n) => return Err(format!("{n} vCPUs: the counts are exact with one only")),
    }
    let path = a.out.clone().unwrap_or_default();
    let mut out = std::fs::OpenOptions::new().append(true).open(&path).map_err(|e| format!("out={path}: {e}"))?;
    let cache = a.cache.map_or("off".to_string(), |g| format!("{}/{}/{}", g.size, g.ways, g.line));
    let hyp = a.hyp.map_or("off".to_string(), |(lo, hi)| format!("0x{lo:x}-0x{hi:x}"));
    writeln!(out, "{FORMAT} arch={} base=0x{:x} hyp={hyp} cache={cache}", arch.name(), a.base).map_err(|e| format!("out={path}: {e}"))?;
    let s = Box::new(State::new(&a, arch, Some(out)));
    STATE.store(Box::into_raw(s), Ordering::Relaxed);
    // SAFETY: the callbacks are this file's, with the signatures QEMU calls.
    unsafe {
        q::qemu_plugin_register_vcpu_tb_trans_cb(id, Some(on_translate));
        q::qemu_plugin_register_atexit_cb(id, Some(on_exit), std::ptr::null_mut());
    }
    Ok(format!("counting {} windows into {path}, kernel from 0x{:x}, hypervisor {hyp}, cache {cache}", arch.name(), a.base))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_the_hypervisors_the_kernels_or_the_users() {
        let mut s = State::new(&parse_args(&["out=x".into(), "base=0x1000".into(), "hyp=0x2000-0x3000".into()]).unwrap(), Arch::X86, None);
        assert_eq!(
            [s.class(0xfff), s.class(0x1000), s.class(0x2000), s.class(0x2fff), s.class(0x3000)],
            [USER, KERNEL, HYPERVISOR, HYPERVISOR, KERNEL]
        );
        s.hyp = None;
        assert_eq!(s.class(0x2000), KERNEL);
    }

    #[test]
    fn arguments_are_checked() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let a = parse_args(&s(&["out=/tmp/w", "base=0xffff800000000000", "cache=32768/8/64"])).unwrap();
        assert_eq!((a.base, a.cache), (0xffff_8000_0000_0000, Some(Geometry::L1D)));
        assert!(parse_args(&s(&["probe=on"])).unwrap().probe);
        let xen = parse_args(&s(&["out=/tmp/w", "base=0xffff800000000000", "hyp=0xffff800000000000-0xffff880000000000"])).unwrap();
        assert_eq!(xen.hyp, Some((0xffff_8000_0000_0000, 0xffff_8800_0000_0000)));
        let bad: [&[&str]; 9] = [
            &["out=/tmp/w"],
            &["base=0x10"],
            &["out=x", "base=10"],
            &["out=x", "base=0x1", "cache=1/2/3"],
            &["out=x", "base=0x1", "hyp=0x10"],
            &["out=x", "base=0x1", "hyp=0x10-0x10"],
            &["out=x", "base=0x1", "hyp=10-0x20"],
            &["x"],
            &["y=1"],
        ];
        for bad in bad {
            assert!(parse_args(&s(bad)).is_err(), "{bad:?}");
        }
    }
}
