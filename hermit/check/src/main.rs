//! The independent check: rdtsc around 10^5 getpid calls, 10^5 yield_now
//! and 2000 futex round trips between two threads (the least of 5 such
//! windows), nothing shared with oscycles. Prints one line the host reads:
//! `hermit-check getpid_cycles=X yield_cycles=Y futex_one_way_cycles=Z`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

unsafe extern "C" {
    fn sys_getpid() -> u32;
    fn sys_futex_wait(address: *mut u32, expected: u32, timeout: *const u8, flags: u32) -> i32;
    fn sys_futex_wake(address: *mut u32, count: i32) -> i32;
}

/// Waits until `w` holds `want`, sleeping on Hermit's futex.
fn wait_for(w: &AtomicU32, want: u32) {
    loop {
        let v = w.load(Ordering::Acquire);
        if v == want {
            return;
        }
        // SAFETY: the address of a live AtomicU32; no timeout, no flags.
        unsafe { sys_futex_wait(w.as_ptr(), v, std::ptr::null(), 0) };
    }
}

/// Stores `v` in `w` and wakes its waiter.
fn post(w: &AtomicU32, v: u32) {
    w.store(v, Ordering::Release);
    // SAFETY: as in wait_for.
    unsafe { sys_futex_wake(w.as_ptr(), 1) };
}

/// Cycles of one way of `n` futex round trips with a second thread (the
/// least of `reps` windows).
fn futex_one_way(reps: usize, n: u32) -> f64 {
    let words = Arc::new([AtomicU32::new(0), AtomicU32::new(0)]);
    let peer = words.clone();
    let total = n * (reps as u32 + 1);
    let server = std::thread::spawn(move || {
        for i in 1..=total {
            wait_for(&peer[0], i);
            post(&peer[1], i);
        }
    });
    let mut i = 0;
    let mut trips = |k: u32| {
        for _ in 0..k {
            i += 1;
            post(&words[0], i);
            wait_for(&words[1], i);
        }
    };
    trips(n);
    let best = (0..reps).map(|_| per_call(1, || trips(n)) / f64::from(n) / 2.0).fold(f64::INFINITY, f64::min);
    let _ = server.join();
    best
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
    let futex = futex_one_way(5, 2000);
    println!("hermit-check getpid_cycles={getpid:.1} yield_cycles={yields:.1} futex_one_way_cycles={futex:.1}");
}
