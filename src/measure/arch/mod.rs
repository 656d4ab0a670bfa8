//! Everything that is specific to x86-64: the time-stamp counter, cpuid and the
//! raw `syscall` instruction, and the few loops that must stay as written. Nothing outside this module uses inline assembly.

#[cfg(not(target_arch = "x86_64"))]
compile_error!("oscycles measures in TSC cycles and supports x86-64 only");

use std::arch::asm;
use std::arch::x86_64::{__cpuid_count, __rdtscp, _mm_lfence, _rdtsc};
use std::sync::atomic::{AtomicU8, Ordering};

/// Where [`procedure_calls`] adds.
static GLOBAL_SUM: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

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

/// The four forms of STREAM's loops over doubles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum F64Loop {
    /// `d = x`
    Copy,
    /// `d = s * x`
    Scale,
    /// `d = x + y`
    Add,
    /// `d = x + s * y`
    Triad,
}

/// One of STREAM's loops, instruction for instruction as gcc -O2 compiles
/// STREAM's C for x86-64 (no -march): one pair of doubles per iteration,
/// aligned 16-byte SSE2 loads and stores through the cache, the second
/// operand of Add and Triad read by the arithmetic instruction itself
/// (`addpd xmm, [mem]`), no unrolling. In assembly so that neither the
/// compiler's choices (Rust's own vectorisation unrolls by two, which made
/// Scale 20% slower than STREAM's at 256 MiB arrays) nor the C library (Copy
/// as a `memcpy` that streams with non-temporal stores, skipping the
/// read-for-ownership traffic STREAM's Copy pays for) change what is timed.
/// The exact form matters even though the loops wait on memory: here Triad
/// with two separate loads and unaligned moves ran 8 to 10% slower than
/// gcc's loop over the same arrays (fewer instructions per pair keep more
/// pairs in flight). `y` is read by Add and Triad only.
///
/// The slices must start 16-byte aligned, as STREAM's static arrays do
/// (`movapd` and a memory operand of `addpd` fault otherwise): panics if not.
pub fn stream_f64(form: F64Loop, d: &mut [f64], x: &[f64], y: &[f64], s: f64) {
    let n = d.len();
    assert!(x.len() == n && (y.len() == n || matches!(form, F64Loop::Copy | F64Loop::Scale)), "stream_f64 needs slices of one length");
    let y = if y.len() == n { y } else { x };
    let aligned = [d.as_ptr(), x.as_ptr(), y.as_ptr()].iter().all(|p| p.cast::<u8>().align_offset(16) == 0);
    assert!(aligned || n < 2, "stream_f64 needs slices that start 16-byte aligned");
    let bytes = n / 2 * 16;
    if bytes > 0 {
        // SAFETY: SSE2 is part of x86-64, so the intrinsic only broadcasts s.
        let sv = unsafe { std::arch::x86_64::_mm_set1_pd(s) };
        // One loop per form; {i} runs over the bytes of the whole pairs,
        // which every slice holds (lengths checked above), each pair 16-byte
        // aligned (starts checked above), as movapd, movaps and addpd's
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
    if n % 2 == 1 {
        let j = n - 1;
        d[j] = match form {
            F64Loop::Copy => x[j],
            F64Loop::Scale => s * x[j],
            F64Loop::Add => x[j] + y[j],
            F64Loop::Triad => x[j] + s * y[j],
        };
    }
}

/// The `len` doubles of `buf` (which holds at least `len + 1`) that start
/// 16-byte aligned, as [`stream_f64`] needs: an allocation of doubles is
/// 8-byte aligned at least, so one of the first two elements starts a pair.
pub fn aligned16(buf: &mut [f64], len: usize) -> &mut [f64] {
    let skip = buf.as_ptr().cast::<u8>().align_offset(16) / 8;
    assert!(skip <= 1 && buf.len() >= len + skip, "aligned16 needs a buffer of len + 1 doubles");
    &mut buf[skip..skip + len]
}

/// Hint to the CPU that we are in a spin-wait loop.
#[inline(always)]
pub fn spin_hint() {
    std::hint::spin_loop();
}

#[cfg(test)]
mod tests {
    use super::{F64Loop, aligned16, stream_f64};

    #[test]
    fn the_procedure_loop_makes_every_call_and_the_read_sum_reads_every_fourth_int() {
        use std::sync::atomic::Ordering::Relaxed;
        let before = super::GLOBAL_SUM.load(Relaxed);
        super::procedure_calls(1000, 3);
        super::procedure_calls(0, 3);
        // Only the proc family's procedure case calls it besides.
        assert!(super::GLOBAL_SUM.load(Relaxed).wrapping_sub(before) >= 3000);
        // Two 512-byte blocks and a rest that is not read.
        let words: Vec<u64> = (0..64 * 2 + 5).map(|i| i * 0x1_0000_0001).collect();
        let ints: Vec<u32> = words[..128].iter().flat_map(|w| [*w as u32, (*w >> 32) as u32]).collect();
        let want = ints.iter().step_by(4).fold(0u32, |a, &x| a.wrapping_add(x));
        assert_eq!(super::sum_every_fourth_u32(&words), want);
        assert_eq!(super::sum_every_fourth_u32(&words[..63]), 0, "no whole block");
    }

    #[test]
    fn each_stream_loop_computes_its_form_over_odd_and_even_lengths() {
        for n in [0usize, 1, 2, 3, 16, 17, 1001] {
            let (mut xb, mut yb) = (vec![0.0; n + 1], vec![0.0; n + 1]);
            let x = aligned16(&mut xb, n);
            x.iter_mut().enumerate().for_each(|(i, v)| *v = i as f64 * 1.5 - 7.0);
            let y = aligned16(&mut yb, n);
            y.iter_mut().enumerate().for_each(|(i, v)| *v = 3.0 - i as f64 * 0.25);
            let (x, y) = (&*x, &*y);
            type Want = fn(f64, f64) -> f64;
            let forms: [(F64Loop, Want); 4] = [
                (F64Loop::Copy, |x, _| x),
                (F64Loop::Scale, |x, _| 3.0 * x),
                (F64Loop::Add, |x, y| x + y),
                (F64Loop::Triad, |x, y| x + 3.0 * y),
            ];
            for (form, want) in forms {
                let mut db = vec![f64::NAN; n + 1];
                let d = aligned16(&mut db, n);
                stream_f64(form, d, x, y, 3.0);
                let expected: Vec<f64> = x.iter().zip(y).map(|(&x, &y)| want(x, y)).collect();
                assert_eq!(d, &expected[..], "{form:?}, length {n}");
            }
        }
    }

    #[test]
    #[should_panic(expected = "16-byte aligned")]
    fn a_stream_loop_refuses_misaligned_slices() {
        let mut buf = vec![1.0; 10];
        let pair = aligned16(&mut buf, 8).as_ptr() as usize;
        let odd = (pair - buf.as_ptr() as usize) / 8 + 1;
        let (d, x) = buf[odd..odd + 8].split_at_mut(4);
        stream_f64(F64Loop::Copy, d, x, &[], 3.0);
    }
}
