//! HermitCore's basic benchmark beyond plain syscalls: sched_yield with a
//! second runnable thread on the same CPU, and malloc(1 MiB) + free.

pub mod family;
pub mod schema;

use crate::measure::arch::syscall3;
use std::sync::atomic::{AtomicBool, Ordering};

/// A thread on `cpu` that calls sched_yield until dropped, so that every
/// sched_yield of another thread on that CPU switches to it and back.
pub struct Yielder {
    stop: std::sync::Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Yielder {
    pub fn start(cpu: usize) -> std::io::Result<Yielder> {
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            crate::measure::watchdog::block_interrupts_in_this_thread();
            let _ = tx.send(crate::measure::placement::set_affinity(&[cpu]));
            while !flag.load(Ordering::Relaxed) {
                // SAFETY: sched_yield takes no arguments.
                unsafe { syscall3(libc::SYS_sched_yield, 0, 0, 0) };
            }
        });
        rx.recv().map_err(|_| std::io::Error::other("yielder thread died"))??;
        Ok(Yielder { stop, handle: Some(handle) })
    }
}

impl Drop for Yielder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// sched_yield `n` times.
pub fn yields(n: u64) -> std::io::Result<()> {
    for i in 0..n {
        if i % crate::measure::watchdog::POLL_EVERY == 0 && crate::measure::watchdog::check().is_err() {
            return Err(std::io::Error::from_raw_os_error(libc::EINTR));
        }
        // SAFETY: sched_yield takes no arguments.
        unsafe { syscall3(libc::SYS_sched_yield, 0, 0, 0) };
    }
    Ok(())
}

/// malloc(1 MiB) then free, `n` times, through the C library.
pub fn malloc_free(n: u64, bytes: usize) -> std::io::Result<()> {
    for _ in 0..n {
        // SAFETY: malloc returns NULL or a block of `bytes`, freed at once.
        unsafe {
            let p = libc::malloc(bytes);
            if p.is_null() {
                return Err(std::io::Error::from_raw_os_error(libc::ENOMEM));
            }
            std::hint::black_box(p);
            libc::free(p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yields_with_a_partner_and_mallocs() {
        let cpu = crate::measure::placement::allowed_cpus()[0];
        let y = Yielder::start(cpu).unwrap();
        yields(10).unwrap();
        drop(y);
        malloc_free(3, 1 << 20).unwrap();
    }
}
