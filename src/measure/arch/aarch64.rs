//! aarch64: the generic timer's virtual counter (CNTVCT_EL0) as the clock,
//! /proc and /sys for what cpuid tells on x86 (the MIDR), the raw `svc`
//! instruction, and lmbench's and STREAM's loops as their C compiles for
//! aarch64 (loads into registers, then adds: no add from memory).
//!
//! The clock. CNTVCT_EL0 is readable from user mode on every Linux (the
//! kernel's vDSO reads it), ticks at the constant rate CNTFRQ_EL0 states
//! (19.2 MHz to 1 GHz; 62.5 MHz under QEMU's `virt`; 1 GHz from Armv8.6
//! on), and is calibrated against CLOCK_MONOTONIC_RAW like the TSC. It is,
//! like the TSC, a constant-rate counter, not the core's cycles; its ticks
//! are coarser: one tick is 1e9 / CNTFRQ ns, so batches last at least
//! [`min_batch_ticks`] ticks (a quantization error under 0.1%). The PMU's
//! cycle counter (PMCCNTR_EL0, through perf with `kernel.perf_user_access=1`
//! and `config1=0x3`) is not the clock: perf gives user mode a per-task
//! count only (a CPU-wide event refuses rdpmc), which stops while the task
//! sleeps, so a pipe's or a context switch's round trip, where the time
//! passes in the peer, would lose it.

use super::F64Loop;
use std::arch::asm;
use std::sync::atomic::{AtomicU64, Ordering};

/// The fewest counter ticks a batch lasts: one tick of resolution at either
/// end stays under 0.1% of the batch.
pub fn min_batch_ticks() -> u64 {
    1000
}

/// Whether the counter may move in steps of many ticks between updates (a
/// hypervisor's emulated TSC, [`crate::measure::clock::steps`]): the
/// generic timer does not; its one-tick resolution is [`min_batch_ticks`]'s.
pub const COUNTER_MAY_STEP: bool = false;

/// ELF's machine number of AArch64, and the code of a program that exits
/// with status 7 (`movz x0, #7; movz x8, #93 (exit); svc #0`, little-endian
/// words): the exec kinds' tiny static helper of the proc family.
pub const ELF_MACHINE: u16 = 183;
pub const EXIT_7: [u8; 12] = [0xe0, 0x00, 0x80, 0xd2, 0xa8, 0x0b, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4];

/// The counter's frequency, CNTFRQ_EL0 (Hz, as the firmware set it).
pub fn counter_hz() -> u64 {
    let hz: u64;
    // SAFETY: CNTFRQ_EL0 is readable at EL0 (Linux sets CNTKCTL_EL1.EL0VCTEN,
    // which its vDSO relies on); a register read, no memory touched.
    unsafe { asm!("mrs {}, cntfrq_el0", out(reg) hz, options(nomem, nostack, preserves_flags)) };
    hz
}

/// What the clock is, for the run document: the register, how it is read
/// and its resolution.
pub fn counter_source() -> String {
    let hz = counter_hz();
    let scale = TICK_SCALE.load(Ordering::Relaxed);
    if scale > 1 {
        return format!(
            "cntvct_el0 (isb; mrs), {:.1} MHz, its ticks x {scale} (10^9 / CNTFRQ: a guest nanosecond per instruction)",
            hz as f64 / 1e6
        );
    }
    format!("cntvct_el0 (isb; mrs), {:.1} MHz: one tick is {:.1} ns, not a CPU cycle", hz as f64 / 1e6, 1e9 / hz.max(1) as f64)
}

/// What [`rdtscp`] multiplies the counter by: 1, or under QEMU's
/// instruction counter the guest instructions a tick stands for ([`count_instructions`]).
static TICK_SCALE: AtomicU64 = AtomicU64::new(1);

/// Makes the clock read guest instructions under QEMU's instruction
/// counter (`on`; `-icount shift=0`: a guest nanosecond is one
/// instruction, and the counter ticks at CNTFRQ of those nanoseconds): its
/// ticks times 10^9 / CNTFRQ (16 on `virt`'s 62.5 MHz), so that the cells
/// are instructions as the TSC's are on x86; a batch then resolves to that
/// many instructions at either end. Off: the counter's own ticks. Whether
/// the clock now counts as asked (no: a rate that does not divide 10^9).
pub fn count_instructions(on: bool) -> bool {
    let (scale, counts) = tick_scale(on, counter_hz());
    TICK_SCALE.store(scale, Ordering::Relaxed);
    counts
}

/// The scale of a counter at `hz` (under the instruction counter where
/// `on`), and whether it then counts as asked.
fn tick_scale(on: bool, hz: u64) -> (u64, bool) {
    const NS: u64 = 1_000_000_000;
    match on {
        true if hz > 0 && NS % hz == 0 => (NS / hz, true),
        true => (1, false),
        false => (1, true),
    }
}

/// Reads the virtual counter after an `isb`, so that no earlier instruction
/// is still in flight when it is read (Arm's recipe; the counter read is not
/// ordered otherwise), and another `isb` after it, so that no later one
/// starts before. Named as x86's for the callers both architectures share.
#[inline(always)]
pub fn rdtscp() -> u64 {
    let t: u64;
    // SAFETY: isb and a read of CNTVCT_EL0 (EL0-readable under Linux, as
    // above) have no memory effects.
    unsafe { asm!("isb", "mrs {}, cntvct_el0", "isb", out(reg) t, options(nomem, nostack, preserves_flags)) };
    t * TICK_SCALE.load(Ordering::Relaxed)
}

/// The counter's stated frequency: what fills x86's cpuid-stated TSC rate.
pub fn cpuid_tsc_hz() -> Option<f64> {
    Some(counter_hz() as f64).filter(|&hz| hz > 0.0)
}

/// The CPU as its Main ID register names it (the kernel exports it per CPU;
/// /proc/cpuinfo's implementer and part, where sysfs lacks it):
/// "MIDR 0x410fd034 (implementer 0x41, part 0xd03, variant 0, revision 4)".
pub fn brand_string() -> Option<String> {
    let midr = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1")
        .ok()
        .and_then(|s| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok())
        .or_else(|| midr_of_cpuinfo(&std::fs::read_to_string("/proc/cpuinfo").ok()?))?;
    Some(describe_midr(midr))
}

/// The CPU's name for the host facts: its MIDR ([`brand_string`]). An arm64
/// kernel's /proc/cpuinfo has no `model name`; one that does is an x86
/// host's, seen by this aarch64 code under QEMU's user mode, which is said.
pub fn cpu_model(model_name: Option<String>) -> Option<String> {
    brand_string().or_else(|| model_name.map(|host| format!("aarch64 emulated by QEMU's user mode on {host} (emulated time)")))
}

fn describe_midr(midr: u64) -> String {
    let (implementer, variant, part, revision) = ((midr >> 24) & 0xff, (midr >> 20) & 0xf, (midr >> 4) & 0xfff, midr & 0xf);
    format!("MIDR {midr:#010x} (implementer {implementer:#04x}, part {part:#05x}, variant {variant}, revision {revision})")
}

/// The MIDR /proc/cpuinfo's first processor spells out field by field.
fn midr_of_cpuinfo(cpuinfo: &str) -> Option<u64> {
    let field = |key: &str| {
        let line = cpuinfo.lines().find(|l| l.split(':').next().is_some_and(|k| k.trim() == key))?;
        let v = line.split(':').nth(1)?.trim();
        if let Some(hex) = v.strip_prefix("0x") { u64::from_str_radix(hex, 16).ok() } else { v.parse().ok() }
    };
    let (imp, var, arch, part, rev) =
        (field("CPU implementer")?, field("CPU variant")?, field("CPU architecture")?, field("CPU part")?, field("CPU revision")?);
    Some(imp << 24 | var << 20 | (if arch == 8 { 0xf } else { arch & 0xf }) << 16 | part << 4 | rev)
}

/// No cpuid: a hypervisor shows in /sys/hypervisor (Xen), which the host
/// facts read apart; nothing here.
pub fn hypervisor() -> Option<String> {
    None
}

/// A system call with up to three arguments, issued with `svc #0` itself
/// (number in x8, arguments in x0-x2, result in x0) so that no C-library
/// wrapper or cache is in the way. Returns the kernel's raw result
/// (negative errno on failure).
///
/// # Safety
/// The caller must pass a system call number and arguments that are valid
/// for that call (pointers must point to memory of the size the call expects).
#[inline(always)]
pub unsafe fn syscall3(nr: i64, a1: u64, a2: u64, a3: u64) -> i64 {
    let ret: i64;
    // SAFETY: the caller guarantees the arguments; the kernel preserves
    // every register but x0, which is declared.
    unsafe {
        asm!(
            "svc #0",
            in("x8") nr,
            inlateout("x0") a1 => ret,
            in("x1") a2,
            in("x2") a3,
            options(nostack)
        );
    }
    ret
}

/// Where [`procedure_calls`] adds.
pub(super) static GLOBAL_SUM: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// lmbench's `use_int`: load a global, add the argument, store it back,
/// return. On aarch64 the compiler's code is lmbench's (adrp; ldr; add;
/// str; ret: there is no add to memory to fuse into), so it is Rust.
#[inline(never)]
extern "C" fn add_into_global(x: u64) {
    use std::sync::atomic::Ordering::Relaxed;
    GLOBAL_SUM.store(GLOBAL_SUM.load(Relaxed).wrapping_add(x), Relaxed);
}

/// lmbench's lat_proc procedure loop as its -O build runs it: `n` direct
/// calls (`bl`) of `use_int(x)`, the loop nothing but the argument's move,
/// the call and the count.
pub fn procedure_calls(n: u64, x: u64) {
    if n == 0 {
        return;
    }
    // SAFETY: calls add_into_global (C ABI: argument in x0; x0-x17 and the
    // link register x30 clobbered, as clobber_abi declares) n times; the
    // count and the argument live in callee-saved x20 and x21, which the
    // call keeps; the stack (16-byte aligned at the asm's start, as asm!
    // without `nostack` guarantees) is only used by the call itself.
    unsafe {
        asm!(
            "2:",
            "mov x0, x20",
            "bl {f}",
            "subs x21, x21, #1",
            "b.ne 2b",
            f = sym add_into_global,
            in("x20") x,
            inout("x21") n => _,
            clobber_abi("C"),
        );
    }
}

/// The wrapping sum of 8-byte words as lmbench's bread compiles (-O, no
/// vectorisation): per block of 128 words, a fresh chain of loads and adds
/// (`sum += p[0] + ... + p[127]`), added into the sum at the block's end;
/// then blocks of 16 the same way; the rest in Rust. In assembly so that the
/// compiler cannot vectorise it (see the x86-64 twin).
pub fn sum_u64_scalar(words: &[u64]) -> u64 {
    macro_rules! blocks {
        ($p:expr, $blocks:expr, $acc:expr, $width:literal) => {{
            let mut p = $p;
            if $blocks > 0 {
                // SAFETY: the loop reads `8 * $width * $blocks` bytes from
                // `p`, which the slice holds (computed from its length); the
                // registers changed are declared; no stack is touched.
                unsafe {
                    asm!(
                        "2:",
                        "ldr {t}, [{p}]",
                        ".set oscycles_off, 8",
                        concat!(".rept ", $width, " - 1"),
                        "ldr {u}, [{p}, #oscycles_off]",
                        "add {t}, {t}, {u}",
                        ".set oscycles_off, oscycles_off + 8",
                        ".endr",
                        "add {a}, {a}, {t}",
                        concat!("add {p}, {p}, #8 * ", $width),
                        "subs {n}, {n}, #1",
                        "b.ne 2b",
                        a = inout(reg) $acc,
                        p = inout(reg) p,
                        n = inout(reg) $blocks => _,
                        t = out(reg) _,
                        u = out(reg) _,
                        options(nostack, readonly),
                    );
                }
            }
            p
        }};
    }
    let (wide, narrow) = (words.len() / 128, words.len() % 128 / 16);
    let mut acc = 0u64;
    let p = blocks!(words.as_ptr(), wide, acc, 128);
    blocks!(p, narrow, acc, 16);
    words[128 * wide + 16 * narrow..].iter().fold(acc, |a, &w| a.wrapping_add(w))
}

/// bw_mem rd as lmbench compiles it (-O): per 512-byte block, a chain of 32
/// 4-byte loads and adds, one word every 16 bytes (`p[0] + p[4] + ... +
/// p[124]` over ints), added into the sum at the block's end; whole blocks
/// only, as lmbench reads.
pub fn sum_every_fourth_u32(words: &[u64]) -> u32 {
    let blocks = words.len() / 64;
    let mut acc = 0u32;
    if blocks > 0 {
        // SAFETY: the loop reads 512 bytes a block from `p`, `blocks` blocks,
        // which the slice holds (64 u64 a block); registers declared; no
        // stack is touched.
        unsafe {
            asm!(
                "2:",
                "ldr {t:w}, [{p}, #16]",
                "ldr {u:w}, [{p}]",
                "add {t:w}, {t:w}, {u:w}",
                ".set oscycles_off, 32",
                ".rept 30",
                "ldr {u:w}, [{p}, #oscycles_off]",
                "add {t:w}, {t:w}, {u:w}",
                ".set oscycles_off, oscycles_off + 16",
                ".endr",
                "add {a:w}, {a:w}, {t:w}",
                "add {p}, {p}, #512",
                "subs {n}, {n}, #1",
                "b.ne 2b",
                a = inout(reg) acc,
                p = inout(reg) words.as_ptr() => _,
                n = inout(reg) blocks => _,
                t = out(reg) _,
                u = out(reg) _,
                options(nostack, readonly),
            );
        }
    }
    acc
}

/// The whole pairs of STREAM's loop `form` (see [`super::stream_f64`],
/// which checked the lengths and the alignment), `bytes` bytes of each
/// slice, as gcc -O2 compiles STREAM's C for aarch64: one pair of doubles
/// per iteration in a 128-bit NEON register (`ldr q`, `fmul`/`fadd` .2d,
/// `str q`), Triad's multiply and add apart (as STREAM's C, no fused
/// multiply-add: gcc fuses only under -ffp-contract=fast, which -O2 with
/// -std=c99 does not set).
#[inline(always)]
pub(super) fn stream_pairs(form: F64Loop, d: &mut [f64], x: &[f64], y: &[f64], s: f64, bytes: usize) {
    // One loop per form; {i} runs over the bytes of the whole pairs, which
    // every slice holds (lengths checked by stream_f64). d is exclusive, so
    // it overlaps neither x nor y. The registers changed are declared; no
    // stack is touched. The comment line names every operand, which asm!
    // wants used.
    macro_rules! pairs {
        ($($body:literal),+) => {
            // SAFETY: see above.
            unsafe {
                asm!(
                    "// {d} {x} {y} {s:d} {v:v} {w:v}",
                    "2:",
                    $($body),+,
                    "add {i}, {i}, #16",
                    "cmp {i}, {end}",
                    "b.lo 2b",
                    i = inout(reg) 0usize => _,
                    end = in(reg) bytes,
                    d = in(reg) d.as_mut_ptr(),
                    x = in(reg) x.as_ptr(),
                    y = in(reg) y.as_ptr(),
                    s = in(vreg) s,
                    v = out(vreg) _,
                    w = out(vreg) _,
                    options(nostack),
                )
            }
        };
    }
    match form {
        F64Loop::Copy => pairs!("ldr {v:q}, [{x}, {i}]", "str {v:q}, [{d}, {i}]"),
        F64Loop::Scale => pairs!("ldr {v:q}, [{x}, {i}]", "fmul {v:v}.2d, {v:v}.2d, {s:v}.d[0]", "str {v:q}, [{d}, {i}]"),
        F64Loop::Add => {
            pairs!("ldr {v:q}, [{x}, {i}]", "ldr {w:q}, [{y}, {i}]", "fadd {v:v}.2d, {v:v}.2d, {w:v}.2d", "str {v:q}, [{d}, {i}]")
        }
        F64Loop::Triad => pairs!(
            "ldr {v:q}, [{y}, {i}]",
            "ldr {w:q}, [{x}, {i}]",
            "fmul {v:v}.2d, {v:v}.2d, {s:v}.d[0]",
            "fadd {v:v}.2d, {w:v}.2d, {v:v}.2d",
            "str {v:q}, [{d}, {i}]"
        ),
    }
}

/// A loop of `iterations` decrements the compiler can neither remove nor
/// change (the noise family's fixed work quantum).
#[inline(always)]
pub fn countdown(iterations: u64) {
    if iterations == 0 {
        return;
    }
    // SAFETY: only the counter's register (declared through inout) and the flags change.
    unsafe {
        asm!("2:", "subs {n}, {n}, #1", "b.ne 2b", n = inout(reg) iterations => _, options(nomem, nostack));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_moves_forward_at_its_stated_rate() {
        assert!(counter_hz() > 0, "CNTFRQ_EL0 is set");
        let a = rdtscp();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(rdtscp() > a, "CNTVCT_EL0 advanced over 2 ms");
        assert!(counter_source().starts_with("cntvct_el0"));
    }

    /// Under the instruction counter the clock reads the counter's ticks
    /// times 10^9 / CNTFRQ; off, its own ticks.
    #[test]
    fn under_the_instruction_counter_a_tick_is_the_instructions_it_stands_for() {
        assert_eq!(tick_scale(true, 62_500_000), (16, true), "QEMU virt's 62.5 MHz");
        assert_eq!(tick_scale(true, 1_000_000_000), (1, true), "Armv8.6's 1 GHz");
        assert_eq!(tick_scale(true, 19_200_000), (1, false), "a rate that does not divide 10^9");
        assert_eq!(tick_scale(false, 62_500_000), (1, true));
        assert_eq!(TICK_SCALE.load(Ordering::Relaxed), 1, "off unless a guest's spec asks");
    }

    #[test]
    fn a_raw_system_call_returns_the_kernels_answer() {
        // SAFETY: getpid takes no arguments.
        let pid = unsafe { syscall3(libc::SYS_getpid, 0, 0, 0) };
        assert_eq!(pid, i64::from(std::process::id()));
        // SAFETY: close of a descriptor that is not open: EBADF, nothing else.
        assert_eq!(unsafe { syscall3(libc::SYS_close, 1 << 20, 0, 0) }, -i64::from(libc::EBADF));
    }

    #[test]
    fn the_midr_is_read_from_cpuinfo_fields() {
        let cpuinfo =
            "processor\t: 0\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd03\nCPU revision\t: 4\n";
        assert_eq!(midr_of_cpuinfo(cpuinfo), Some(0x410f_d034));
        assert_eq!(describe_midr(0x410f_d034), "MIDR 0x410fd034 (implementer 0x41, part 0xd03, variant 0, revision 4)");
        assert_eq!(midr_of_cpuinfo("processor\t: 0\n"), None);
    }

    #[test]
    fn the_countdown_ends() {
        countdown(0);
        countdown(1000);
    }
}
