//! x86-64: the time-stamp counter, cpuid, the raw `syscall` instruction
//! and lmbench's and STREAM's loops as their C compiles for x86-64.

use super::F64Loop;
use std::arch::asm;
use std::arch::x86_64::{__cpuid_count, __rdtscp, _mm_lfence, _rdtsc};
use std::sync::atomic::{AtomicU8, Ordering};

/// The fewest counter ticks a batch lasts for the counter's resolution: the
/// TSC counts at the CPU's nominal rate, so the batch's own length rules.
#[inline(always)]
pub fn min_batch_ticks() -> u64 {
    0
}

/// Whether the counter may move in steps of many ticks between updates: a
/// hypervisor's emulated TSC can ([`crate::measure::clock::steps`]).
pub const COUNTER_MAY_STEP: bool = true;

/// ELF's machine number of x86-64, and the code of a program that exits
/// with status 7 (`mov edi, 7; mov eax, 60 (exit); syscall`): the exec
/// kinds' tiny static helper of the proc family.
pub const ELF_MACHINE: u16 = 0x3e;
pub const EXIT_7: [u8; 12] = [0xbf, 7, 0, 0, 0, 0xb8, 60, 0, 0, 0, 0x0f, 0x05];

/// What the clock is, for the run document.
pub fn counter_source() -> String {
    "tsc (rdtscp; lfence)".into()
}

/// Where [`procedure_calls`] adds.
pub(super) static GLOBAL_SUM: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// lmbench's `use_int`: load a global, add the argument, store it back
/// (each call's load waits on the last one's store), return.
extern "C" fn add_into_global(x: u64) {
    // SAFETY: an aligned 8-byte load from and store to GLOBAL_SUM, a static
    // AtomicU64 (on x86-64 a plain mov is a relaxed atomic load or store,
    // so concurrent callers can only lose adds, as lmbench's could); one
    // scratch register and the flags change; no stack is touched.
    unsafe {
        asm!(
            "mov {t}, qword ptr [rip + {g}]",
            "add {t}, {x}",
            "mov qword ptr [rip + {g}], {t}",
            g = sym GLOBAL_SUM,
            x = in(reg) x,
            t = out(reg) _,
            options(nostack),
        );
    }
}

/// lmbench's lat_proc procedure loop as its -O build runs it: `n` direct
/// calls of `use_int(x)`, the loop nothing but the argument's move, the
/// call and the count. Compiled from Rust the same loop came out 1.27x
/// and 1.47x lmbench's per call on this VM's AMD EPYC (2026-11-27): the
/// compiler fused the callee's load, add and store into one
/// memory-destination add, or called through a register.
pub fn procedure_calls(n: u64, x: u64) {
    if n == 0 {
        return;
    }
    // SAFETY: calls add_into_global (C ABI: argument in rdi, caller-saved
    // registers clobbered, as clobber_abi declares) n times; the count and
    // the argument live in callee-saved registers the call keeps; the
    // stack (aligned for a call at the asm's start, as asm! without
    // `nostack` guarantees) is only used by the call itself.
    unsafe {
        asm!(
            "2:",
            "mov rdi, r12",
            "call {f}",
            "dec r13",
            "jnz 2b",
            f = sym add_into_global,
            in("r12") x,
            inout("r13") n => _,
            clobber_abi("C"),
        );
    }
}

/// Whether the CPU has `rdtscp` (cpuid 0x80000001 edx bit 27): 0 not
/// asked yet, 1 yes, 2 no.
static RDTSCP: AtomicU8 = AtomicU8::new(0);

/// Whether the CPU has `rdtscp`: every x86-64 CPU since 2008 does, but not
/// QEMU's qemu64 model, which Xen's guests under TCG need (QEMU's TCG
/// reports an rdtscp exit as rdtsc, which Xen's SVM cannot emulate).
#[inline(always)]
pub fn has_rdtscp() -> bool {
    match RDTSCP.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let max = cpuid(0x8000_0000, 0).0;
            let has = max >= 0x8000_0001 && cpuid(0x8000_0001, 0).3 & (1 << 27) != 0;
            RDTSCP.store(if has { 1 } else { 2 }, Ordering::Relaxed);
            has
        }
    }
}

/// The TSC already counts guest instructions under QEMU's instruction
/// counter (`-icount shift=0`): nothing to change; it counts as asked.
pub fn count_instructions(_on: bool) -> bool {
    true
}

/// Reads the TSC with `rdtscp` followed by `lfence`: `rdtscp` waits for every
/// earlier instruction to finish, and the `lfence` keeps later ones from
/// starting before the counter is read. Without `rdtscp`, `lfence; rdtsc;
/// lfence` orders the read the same way.
#[inline(always)]
pub fn rdtscp() -> u64 {
    let mut aux = 0u32;
    // SAFETY: rdtscp, rdtsc and lfence have no memory effects; rdtscp is
    // used only where cpuid says the CPU has it.
    unsafe {
        let t = if has_rdtscp() {
            __rdtscp(&mut aux)
        } else {
            _mm_lfence();
            _rdtsc()
        };
        _mm_lfence();
        t
    }
}

/// One cpuid leaf: (eax, ebx, ecx, edx).
pub fn cpuid(leaf: u32, subleaf: u32) -> (u32, u32, u32, u32) {
    let r = __cpuid_count(leaf, subleaf);
    (r.eax, r.ebx, r.ecx, r.edx)
}

fn regs_to_string(regs: &[u32]) -> String {
    let bytes: Vec<u8> = regs.iter().flat_map(|r| r.to_le_bytes()).collect();
    String::from_utf8_lossy(&bytes).trim_matches(char::from(0)).trim().to_string()
}

/// Whether cpuid says we run under a hypervisor (leaf 1, ecx bit 31) and, if
/// so, the vendor signature of leaf 0x40000000 ("KVMKVMKVM", "Microsoft Hv"...).
pub fn hypervisor() -> Option<String> {
    let (_, _, ecx, _) = cpuid(1, 0);
    if ecx & (1 << 31) == 0 {
        return None;
    }
    let (_, b, c, d) = cpuid(0x4000_0000, 0);
    Some(regs_to_string(&[b, c, d]))
}

/// The nominal TSC frequency that cpuid leaf 0x15 (or 0x16, base MHz) states,
/// when the CPU or hypervisor fills them in.
pub fn cpuid_tsc_hz() -> Option<f64> {
    let (max_leaf, _, _, _) = cpuid(0, 0);
    if max_leaf >= 0x15 {
        let (den, num, crystal, _) = cpuid(0x15, 0);
        if den != 0 && num != 0 && crystal != 0 {
            return Some(crystal as f64 * num as f64 / den as f64);
        }
    }
    if max_leaf >= 0x16 {
        let (base_mhz, _, _, _) = cpuid(0x16, 0);
        if base_mhz != 0 {
            return Some(base_mhz as f64 * 1e6);
        }
    }
    None
}

/// The CPU's name for the host facts: /proc/cpuinfo's `model name`, else
/// cpuid's brand string.
pub fn cpu_model(model_name: Option<String>) -> Option<String> {
    model_name.or_else(brand_string)
}

/// The processor brand string from cpuid leaves 0x80000002..4.
pub fn brand_string() -> Option<String> {
    let (max_ext, _, _, _) = cpuid(0x8000_0000, 0);
    if max_ext < 0x8000_0004 {
        return None;
    }
    let mut regs = Vec::with_capacity(12);
    for leaf in 0x8000_0002..=0x8000_0004u32 {
        let (a, b, c, d) = cpuid(leaf, 0);
        regs.extend([a, b, c, d]);
    }
    Some(regs_to_string(&regs))
}

/// A system call with up to three arguments, issued with the `syscall`
/// instruction itself so that no C-library wrapper or cache is in the way.
/// Returns the kernel's raw result (negative errno on failure).
///
/// # Safety
/// The caller must pass a system call number and arguments that are valid
/// for that call (pointers must point to memory of the size the call expects).
#[inline(always)]
pub unsafe fn syscall3(nr: i64, a1: u64, a2: u64, a3: u64) -> i64 {
    let ret: i64;
    // SAFETY: the caller guarantees the arguments; the kernel clobbers rcx
    // and r11, which are declared.
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") nr => ret,
            in("rdi") a1,
            in("rsi") a2,
            in("rdx") a3,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack)
        );
    }
    ret
}

/// The wrapping sum of 8-byte words as lmbench's bread compiles (its
/// makefile's -O, no vectorisation): per block of 128 words, a fresh chain
/// of scalar `add`s from memory (`sum += p[0] + p[1] + ... + p[127]` over
/// longs), added into the sum at the block's end; then blocks of 16 the same
/// way; the rest in Rust. A block's chain does not wait for the previous
/// block's, so the processor runs about two at once: one accumulator over
/// all the words ran a cached buffer's sum 15-25% slower than lmbench's
/// (bw_file_rd, bw_mmap_rd). In assembly so that the compiler cannot
/// vectorise it (several times cheaper than lmbench's on a cached buffer).
pub fn sum_u64_scalar(words: &[u64]) -> u64 {
    // SAFETY (both blocks below): each loop reads `8 * width * blocks` bytes
    // from `p`, which holds at least `width * blocks` u64 (computed from the
    // slice's length); the registers changed are declared; no stack is touched.
    macro_rules! blocks {
        ($p:expr, $blocks:expr, $acc:expr, $width:literal) => {{
            let mut p = $p;
            if $blocks > 0 {
                // SAFETY: as above: the loop reads `8 * $width * $blocks`
                // bytes from `p`, which the slice holds; registers declared.
                unsafe {
                    asm!(
                        "2:",
                        "mov {t}, qword ptr [{p}]",
                        ".set oscycles_off, 8",
                        concat!(".rept ", $width, " - 1"),
                        "add {t}, qword ptr [{p} + oscycles_off]",
                        ".set oscycles_off, oscycles_off + 8",
                        ".endr",
                        "add {a}, {t}",
                        concat!("add {p}, 8 * ", $width),
                        "dec {n}",
                        "jnz 2b",
                        a = inout(reg) $acc,
                        p = inout(reg) p,
                        n = inout(reg) $blocks => _,
                        t = out(reg) _,
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

/// bw_mem rd as lmbench compiles it (its makefile's -O): per 512-byte
/// block, a chain of 32 scalar 4-byte `add`s from memory, one word every
/// 16 bytes (`p[0] + p[4] + ... + p[124]` over ints), added into the sum at
/// the block's end; whole blocks only, as lmbench reads. The compiler's own
/// loop for the same sum (five instructions a load, not unrolled) read a
/// 128 MiB buffer at 0.87 of lmbench's rate (2026-11-27, 3 interleaved
/// rounds): fewer loads in flight.
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
                "mov {t:e}, dword ptr [{p} + 16]",
                "add {t:e}, dword ptr [{p}]",
                ".set oscycles_off, 32",
                ".rept 30",
                "add {t:e}, dword ptr [{p} + oscycles_off]",
                ".set oscycles_off, oscycles_off + 16",
                ".endr",
                "add {a:e}, {t:e}",
                "add {p}, 512",
                "dec {n}",
                "jnz 2b",
                a = inout(reg) acc,
                p = inout(reg) words.as_ptr() => _,
                n = inout(reg) blocks => _,
                t = out(reg) _,
                options(nostack, readonly),
            );
        }
    }
    acc
}

/// The whole pairs of STREAM's loop `form` (see [`super::stream_f64`],
/// which checked the lengths and the alignment): `bytes` bytes of each slice.
#[inline(always)]
pub(super) fn stream_pairs(form: F64Loop, d: &mut [f64], x: &[f64], y: &[f64], s: f64, bytes: usize) {
    if bytes > 0 {
        // SAFETY: SSE2 is part of x86-64, so the intrinsic only broadcasts s.
        let sv = unsafe { std::arch::x86_64::_mm_set1_pd(s) };
        // One loop per form; {i} runs over the bytes of the whole pairs,
        // which every slice holds (lengths checked by stream_f64), each pair
        // 16-byte aligned (starts checked there), as movapd, movaps and addpd's
        // memory operand require. d is exclusive, so it overlaps neither x
        // nor y. The registers changed are declared; no stack is touched.
        // The comment line names every operand, which asm! wants used.
        macro_rules! pairs {
            ($($body:literal),+) => {
                // SAFETY: see above.
                unsafe {
                    asm!(
                        "# {d} {x} {y} {s} {v}",
                        "2:",
                        $($body),+,
                        "add {i}, 16",
                        "cmp {i}, {end}",
                        "jb 2b",
                        i = inout(reg) 0usize => _,
                        end = in(reg) bytes,
                        d = in(reg) d.as_mut_ptr(),
                        x = in(reg) x.as_ptr(),
                        y = in(reg) y.as_ptr(),
                        s = in(xmm_reg) sv,
                        v = out(xmm_reg) _,
                        options(nostack),
                    )
                }
            };
        }
        match form {
            F64Loop::Copy => pairs!("movapd {v}, xmmword ptr [{x} + {i}]", "movaps xmmword ptr [{d} + {i}], {v}"),
            F64Loop::Scale => pairs!("movapd {v}, xmmword ptr [{x} + {i}]", "mulpd {v}, {s}", "movaps xmmword ptr [{d} + {i}], {v}"),
            F64Loop::Add => {
                pairs!("movapd {v}, xmmword ptr [{x} + {i}]", "addpd {v}, xmmword ptr [{y} + {i}]", "movaps xmmword ptr [{d} + {i}], {v}")
            }
            F64Loop::Triad => pairs!(
                "movapd {v}, xmmword ptr [{y} + {i}]",
                "mulpd {v}, {s}",
                "addpd {v}, xmmword ptr [{x} + {i}]",
                "movaps xmmword ptr [{d} + {i}], {v}"
            ),
        }
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
        asm!("2:", "dec {n}", "jnz 2b", n = inout(reg) iterations => _, options(nomem, nostack));
    }
}
