//! Everything that is specific to the processor: its cycle counter, its
//! identification, the raw system-call instruction, and the few loops that
//! must stay as written, one file per architecture ([`x86_64`]: the TSC,
//! cpuid, `syscall`; [`aarch64`]: the generic timer or the PMU's cycle
//! counter, /proc and /sys for what cpuid says on x86, `svc`). Each file
//! exports the same functions; nothing outside this module uses inline
//! assembly but the guest's power-off and the kernel counters' marks.

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("oscycles measures with x86-64's TSC or aarch64's counters and supports those two only");

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
#[cfg(target_arch = "aarch64")]
pub use aarch64::*;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;
#[cfg(target_arch = "x86_64")]
pub use x86_64::*;

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
/// STREAM's C (the x86-64 loop described here; aarch64's twin is in
/// [`aarch64`]'s `stream_pairs`): one pair of doubles per iteration,
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
/// (`movapd` and a memory operand of `addpd` fault otherwise; aarch64 asks
/// the same of its callers, so that both time the same layout): panics if not.
pub fn stream_f64(form: F64Loop, d: &mut [f64], x: &[f64], y: &[f64], s: f64) {
    let n = d.len();
    assert!(x.len() == n && (y.len() == n || matches!(form, F64Loop::Copy | F64Loop::Scale)), "stream_f64 needs slices of one length");
    let y = if y.len() == n { y } else { x };
    let aligned = [d.as_ptr(), x.as_ptr(), y.as_ptr()].iter().all(|p| p.cast::<u8>().align_offset(16) == 0);
    assert!(aligned || n < 2, "stream_f64 needs slices that start 16-byte aligned");
    let bytes = n / 2 * 16;
    if bytes > 0 {
        stream_pairs(form, d, x, y, s, bytes);
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
