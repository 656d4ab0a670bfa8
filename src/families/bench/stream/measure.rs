//! A variant of the STREAM benchmark (McCalpin): copy, scale, add and triad
//! over three arrays of f64, each at least 4x the last-level cache. Every
//! repetition runs the four kernels in order; the first repetition is
//! discarded, and each kernel reports its best rate and its average, minimum
//! and maximum time, counting bytes as STREAM does (copy and scale 16 bytes
//! per element, add and triad 24). The results are validated as STREAM
//! validates them: the expected values follow from the same recurrences run
//! on scalars.

use crate::base::named::Named;
use std::sync::Barrier;

pub const SCALAR: f64 = 3.0;
/// STREAM's repetitions (the first is not counted).
pub const NTIMES: usize = 10;

crate::named_enum! {
    /// The four kernels, in STREAM's order.
    pub enum Kernel {
        Copy = "Copy",
        Scale = "Scale",
        Add = "Add",
        Triad = "Triad",
    }
}

impl Kernel {
    /// Bytes STREAM counts per element.
    pub fn bytes_per_element(self) -> u64 {
        match self {
            Kernel::Copy | Kernel::Scale => 16,
            Kernel::Add | Kernel::Triad => 24,
        }
    }
}

/// One kernel over a slice range: (a, b, c) are the three arrays' chunks.
pub type KernelFn = fn(Kernel, &mut [f64], &mut [f64], &mut [f64]);

/// The real kernels: c = a; b = s*c; c = a + b; a = b + s*c, each the loop
/// gcc -O2 makes of STREAM's C ([`crate::measure::arch::stream_f64`]).
pub fn kernels(k: Kernel, a: &mut [f64], b: &mut [f64], c: &mut [f64]) {
    use crate::measure::arch::{F64Loop, stream_f64};
    match k {
        Kernel::Copy => stream_f64(F64Loop::Copy, c, a, &[], SCALAR),
        Kernel::Scale => stream_f64(F64Loop::Scale, b, c, &[], SCALAR),
        Kernel::Add => stream_f64(F64Loop::Add, c, a, b, SCALAR),
        Kernel::Triad => stream_f64(F64Loop::Triad, a, b, c, SCALAR),
    }
}

/// Elements per array: `bytes` each (4x the LLC, or an override), rounded
/// down to whole pairs of doubles (16 bytes), which the kernels move at once.
pub fn array_len(llc: Option<u64>, override_bytes: Option<u64>, ram_bytes: u64) -> usize {
    let bytes = override_bytes.unwrap_or_else(|| super::sizes::mem_buffer_bytes(llc, ram_bytes));
    (bytes / 16 * 2).max(1024) as usize
}

#[derive(Debug, Clone, PartialEq)]
pub struct KernelResult {
    pub kernel: Kernel,
    /// Seconds of each counted repetition.
    pub times: Vec<f64>,
    pub bytes: u64,
}

impl KernelResult {
    pub fn best_rate_mbs(&self) -> f64 {
        self.bytes as f64 / self.times.iter().cloned().fold(f64::INFINITY, f64::min) / 1e6
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct StreamResult {
    pub kernels: Vec<KernelResult>,
    pub elements: usize,
    pub threads: usize,
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("STREAM validation failed for array {array}: average error {error:e} exceeds {limit:e}")]
pub struct ValidationError {
    pub array: char,
    pub error: f64,
    pub limit: f64,
}

/// STREAM's check: replay the recurrences on scalars and compare the average
/// absolute error of each array against epsilon.
pub fn validate(a: &[f64], b: &[f64], c: &[f64], reps: usize) -> Result<(), ValidationError> {
    let (mut aj, mut bj, mut cj) = (1.0f64, 2.0f64, 0.0f64);
    aj *= 2.0; // the initial "a = 2a" of STREAM's timing check
    for _ in 0..reps {
        cj = aj;
        bj = SCALAR * cj;
        cj = aj + bj;
        aj = bj + SCALAR * cj;
    }
    let limit = 1e-13;
    for (name, arr, want) in [('a', a, aj), ('b', b, bj), ('c', c, cj)] {
        let err = arr.iter().map(|x| (x - want).abs()).sum::<f64>() / arr.len() as f64;
        if err / want.abs() > limit {
            return Err(ValidationError { array: name, error: err / want.abs(), limit });
        }
    }
    Ok(())
}

/// Runs `reps` repetitions (the first is discarded) with `threads` pinned
/// threads (to `cpus` in turn), each owning a contiguous chunk, which it
/// also initialises (first touch puts its pages near it). `elements` must
/// be even ([`array_len`] is).
pub fn run(elements: usize, reps: usize, cpus: &[usize], threads: usize, kernel: KernelFn) -> Result<StreamResult, ValidationError> {
    assert!(reps >= 2 && threads >= 1);
    // One block, c then b then a, each exactly `elements` apart: where
    // STREAM's three static arrays lie (its OFFSET 0). The distance matters:
    // at a power of two the arrays collide in the caches (here STREAM built
    // with OFFSET 512 ran 1.4 to 1.7 times as fast at 256 MiB), and a figure
    // comparable with STREAM's must collide as STREAM's does.
    // Zeroed memory from the allocator (fresh pages, not yet touched): each
    // thread's initialisation below is the first touch of its chunk.
    // STREAM's arrays start 16-byte aligned, which gcc's loops (and so
    // ours) rely on: the block starts at a pair, and each array and each
    // thread's chunk is a whole number of pairs.
    assert!(elements.is_multiple_of(2), "STREAM's arrays hold whole pairs of doubles");
    let mut buf = vec![0.0f64; 3 * elements + 1];
    let block = crate::measure::arch::aligned16(&mut buf, 3 * elements);
    let (c, rest) = block.split_at_mut(elements);
    let (b, a) = rest.split_at_mut(elements);
    let chunk = elements.div_ceil(threads).next_multiple_of(2);
    // The threads that run are the chunks there are, which can be fewer
    // than asked when the arrays are small (1024 elements in chunks of 12 are
    // 86 chunks, not 100): the barrier waits for those, not for `threads`.
    let barrier = Barrier::new(elements.div_ceil(chunk));
    let mut times = vec![vec![0.0f64; reps]; 4];
    std::thread::scope(|s| {
        let parts = a.chunks_mut(chunk).zip(b.chunks_mut(chunk)).zip(c.chunks_mut(chunk)).enumerate();
        let mut handles = Vec::new();
        for (i, ((a, b), c)) in parts {
            let cpu = cpus[i % cpus.len()];
            let barrier = &barrier;
            handles.push(s.spawn(move || {
                let _ = crate::measure::placement::set_affinity(&[cpu]);
                a.iter_mut().for_each(|x| *x = 1.0);
                b.iter_mut().for_each(|x| *x = 2.0);
                c.iter_mut().for_each(|x| *x = 0.0);
                a.iter_mut().for_each(|x| *x *= 2.0);
                // Seconds per repetition, per kernel.
                (0..reps)
                    .map(|_| {
                        let mut row = [0.0; 4];
                        for (t, &kern) in row.iter_mut().zip(Kernel::ALL) {
                            barrier.wait();
                            let t0 = crate::measure::clock::monotonic_raw_ns();
                            kernel(kern, a, b, c);
                            barrier.wait();
                            *t = (crate::measure::clock::monotonic_raw_ns() - t0) as f64 * 1e-9;
                        }
                        row
                    })
                    .collect::<Vec<[f64; 4]>>()
            }));
        }
        // Each kernel's time is the slowest thread's (all start together at the barrier).
        for h in handles {
            let mine = h.join().expect("a STREAM thread panicked");
            for (r, row) in mine.iter().enumerate() {
                for (k, t) in row.iter().enumerate() {
                    times[k][r] = f64::max(times[k][r], *t);
                }
            }
        }
    });
    validate(a, b, c, reps)?;
    let kernels = Kernel::ALL
        .iter()
        .enumerate()
        .map(|(k, kern)| KernelResult { kernel: *kern, times: times[k][1..].to_vec(), bytes: kern.bytes_per_element() * elements as u64 })
        .collect();
    Ok(StreamResult { kernels, elements, threads })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correct_kernels_validate_single_and_multi_threaded() {
        for threads in [1, 3] {
            let r = run(10_000, 4, &crate::measure::placement::allowed_cpus(), threads, kernels).unwrap();
            assert_eq!(r.kernels.len(), 4);
            assert!(r.kernels.iter().all(|k| k.times.len() == 3 && k.best_rate_mbs() > 0.0));
        }
    }

    #[test]
    fn more_threads_than_chunks_of_pairs_still_run() {
        // 1024 elements for 100 threads: chunks of 12, so 86 threads run.
        let r = run(1024, 3, &crate::measure::placement::allowed_cpus(), 100, kernels).unwrap();
        assert!(r.kernels.iter().all(|k| k.times.len() == 2 && k.best_rate_mbs() > 0.0));
    }

    #[test]
    fn a_wrong_kernel_is_caught() {
        fn off_by_a_little(k: Kernel, a: &mut [f64], b: &mut [f64], c: &mut [f64]) {
            kernels(k, a, b, c);
            if k == Kernel::Triad {
                a[a.len() / 2] += 1e-3;
            }
        }
        let e = run(10_000, 3, &crate::measure::placement::allowed_cpus(), 1, off_by_a_little).unwrap_err();
        assert_eq!(e.array, 'a');
        fn skips_scale(k: Kernel, a: &mut [f64], b: &mut [f64], c: &mut [f64]) {
            if k != Kernel::Scale {
                kernels(k, a, b, c);
            }
        }
        assert!(run(10_000, 3, &crate::measure::placement::allowed_cpus(), 2, skips_scale).is_err());
    }

    #[test]
    fn arrays_follow_the_sizing_rule_unless_overridden() {
        assert_eq!(array_len(Some(32 << 20), None, 64 << 30), (128 << 20) / 8);
        assert_eq!(array_len(Some(32 << 20), Some(8 << 20), 64 << 30), (8 << 20) / 8);
        assert_eq!(array_len(None, Some(10), 64 << 30), 1024, "never below 1024 elements");
        assert_eq!(array_len(None, Some(8 * 2049), 64 << 30), 2048, "whole pairs only");
    }
}
