//! The independent check: rdtsc around 10^5 getpid calls and 10^5
//! yield_now (the least of 5 such windows), nothing shared with oscycles.
//! Prints one line the host reads: `hermit-check getpid_cycles=X yield_cycles=Y`.

unsafe extern "C" {
    fn sys_getpid() -> u32;
}

fn getpid() -> u32 {
    // SAFETY: Hermit's getpid takes nothing and only reads the task's id.
    unsafe { sys_getpid() }
}

fn per_call(n: u64, mut f: impl FnMut()) -> f64 {
    // SAFETY: rdtsc has no memory effects.
    let t0 = unsafe { core::arch::x86_64::_rdtsc() };
    for _ in 0..n {
        f();
    }
    // SAFETY: as above.
    let t1 = unsafe { core::arch::x86_64::_rdtsc() };
    (t1 - t0) as f64 / n as f64
}

/// The least of `reps` windows of rdtsc around `n` calls: a window the
/// host spent partly on other work (QEMU descheduled, the TSC running on)
/// only lengthens, so the least is the one nearest the call's own cost.
fn least(reps: usize, n: u64, mut f: impl FnMut()) -> f64 {
    (0..reps).map(|_| per_call(n, &mut f)).fold(f64::INFINITY, f64::min)
}

fn main() {
    let n = 100_000;
    per_call(1000, || {
        std::hint::black_box(getpid());
    });
    let getpid = least(5, n, || {
        std::hint::black_box(getpid());
    });
    let yields = least(5, n, std::thread::yield_now);
    println!("hermit-check getpid_cycles={getpid:.1} yield_cycles={yields:.1}");
}
