//! Marks around the harness's timed batches, for a QEMU plugin that counts
//! what the guest executes between them (`--kernel-counters`, the
//! workspace's `plugin/`). QEMU's plugin API 1 shows a plugin instructions'
//! bytes and addresses but no registers, so a mark is an instruction the
//! plugin recognises by its bytes: `nopl 0x4b4f5301(%rax)` before a timed
//! batch's first clock read, `nopl 0x4b4f5302(%rax)` after its last (a
//! no-op, one instruction each, outside the pair the batch's count is
//! read between). The plugin writes one window per end mark that follows
//! a begin mark; the guest numbers them the same way, and each case's
//! result says which windows are its timed batches ([`Marked`]), with the
//! count each batch read, so that the host can check that a window is the
//! batch it is said to be.
//!
//! Only while armed ([`Marking`], by the runner around a case of a run
//! that asks for it) and only on that thread: calibration, warm-up and
//! counting batches are never marked.

use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The displacements of the two marks (`plugin/src/decode.rs` has the same).
pub const BEGIN: u32 = 0x4b4f_5301;
pub const END: u32 = 0x4b4f_5302;

/// The timed batches of one harness measurement, as the plugin's windows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marked {
    /// The window of its first timed batch: windows are numbered from 0
    /// by the end marks this process made, in order.
    pub first: u64,
    /// Operations per batch.
    pub inner: u64,
    /// The clock-read overhead the harness subtracted from each batch.
    pub overhead: u64,
    /// Each batch's count between its two clock reads (under QEMU's
    /// instruction counter: guest instructions), in order.
    pub batches: Vec<u64>,
}

/// End marks made by this process.
static WINDOWS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static ARMED: RefCell<Option<Vec<Marked>>> = const { RefCell::new(None) };
}

/// While alive, the harness on this thread marks its timed batches and
/// notes which windows they are.
pub struct Marking(());

impl Marking {
    pub fn arm() -> Marking {
        ARMED.with(|a| *a.borrow_mut() = Some(vec![]));
        Marking(())
    }

    /// The windows of the case's last measurement (the one its main metric
    /// is of), if it timed batches on this thread.
    pub fn finish(self) -> Option<Marked> {
        ARMED.with(|a| a.borrow_mut().take()).and_then(|mut v| v.pop())
    }
}

impl Drop for Marking {
    fn drop(&mut self) {
        ARMED.with(|a| a.borrow_mut().take());
    }
}

fn armed() -> bool {
    ARMED.with(|a| a.borrow().is_some())
}

/// Before a timed batch's first clock read: the begin mark, if armed.
#[inline(always)]
pub fn begin() -> bool {
    let on = armed();
    if on {
        mark::<true>();
    }
    on
}

/// After the batch's last clock read (`on`: what [`begin`] said): the end
/// mark; the window's number.
#[inline(always)]
pub fn end(on: bool) -> Option<u64> {
    if !on {
        return None;
    }
    mark::<false>();
    Some(WINDOWS.fetch_add(1, Ordering::Relaxed))
}

/// Notes a measurement's marked batches (`windows`: each batch's window).
pub fn record(windows: &[Option<u64>], inner: u64, overhead: u64, batches: Vec<u64>) {
    let Some(Some(first)) = windows.first() else { return };
    // Consecutive, or the measurement is not one run of windows.
    if windows.iter().enumerate().any(|(i, w)| *w != Some(first + i as u64)) {
        return;
    }
    ARMED.with(|a| {
        if let Some(v) = a.borrow_mut().as_mut() {
            v.push(Marked { first: *first, inner, overhead, batches });
        }
    });
}

#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
#[inline(always)]
fn mark<const BEGINS: bool>() {
    // SAFETY: a multi-byte no-op (`nopl disp32(%rax)`): it reads and
    // writes nothing, not even the flags.
    unsafe {
        if BEGINS {
            std::arch::asm!(".byte 0x0f, 0x1f, 0x80, 0x01, 0x53, 0x4f, 0x4b", options(nostack, preserves_flags));
        } else {
            std::arch::asm!(".byte 0x0f, 0x1f, 0x80, 0x02, 0x53, 0x4f, 0x4b", options(nostack, preserves_flags));
        }
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
fn mark<const BEGINS: bool>() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marks_bytes_are_the_displacements() {
        assert_eq!(BEGIN.to_le_bytes(), [0x01, 0x53, 0x4f, 0x4b]);
        assert_eq!(END.to_le_bytes(), [0x02, 0x53, 0x4f, 0x4b]);
    }

    #[test]
    fn only_an_armed_thread_marks_and_notes_its_last_measurement() {
        assert!(!begin(), "not armed");
        assert_eq!(end(false), None);
        let m = Marking::arm();
        let first: Vec<Option<u64>> = (0..2).map(|_| end(begin())).collect();
        record(&first, 10, 3, vec![100, 101]);
        let second: Vec<Option<u64>> = (0..3).map(|_| end(begin())).collect();
        record(&second, 20, 3, vec![200, 201, 202]);
        let last = m.finish().unwrap();
        assert_eq!(last.first, second[0].unwrap());
        assert_eq!(last.first, first[1].unwrap() + 1, "numbered in order");
        assert_eq!((last.inner, last.batches.len()), (20, 3));
        assert!(!begin(), "disarmed");
    }
}
