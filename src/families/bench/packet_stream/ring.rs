//! A single-producer single-consumer ring of packet descriptors in shared
//! memory. It holds at most `depth - 1` entries (one slot stays empty so
//! that full and empty differ). Either side that cannot proceed announces
//! that it waits, checks again, and sleeps; the other side wakes it only
//! when it sees that announcement. So a batch costs at most one
//! notification, and only on the empty-to-non-empty or full-to-not-full edge.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

/// One packet: where it lies in the bulk buffer, how long it is, which it is,
/// and when it was submitted (TSC), for the submit-to-acknowledge latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C)]
pub struct Descriptor {
    pub offset: u32,
    pub len: u32,
    pub id: u64,
    pub stamp: u64,
}

/// How a sleeping side is woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notify {
    Futex,
    /// An eventfd per direction: (wakes the consumer, wakes the producer).
    Eventfd(i32, i32),
}

#[repr(C, align(64))]
struct Padded<T>(T);

/// The ring's header and slots, laid out in shared memory.
#[repr(C)]
pub struct Ring<const N: usize> {
    head: Padded<AtomicU32>,
    tail: Padded<AtomicU32>,
    consumer_waiting: Padded<AtomicU32>,
    producer_waiting: Padded<AtomicU32>,
    /// Notifications sent, for counting (not timing).
    notifications: Padded<AtomicU64>,
    slots: [std::cell::UnsafeCell<Descriptor>; N],
    depth: u32,
}

// SAFETY: a slot is written only by the producer before it publishes `head`
// (Release) and read only by the consumer after it observes `head`
// (Acquire), and not rewritten until the consumer publishes `tail`.
unsafe impl<const N: usize> Sync for Ring<N> {}

fn futex_wait(word: &AtomicU32, val: u32) {
    // SAFETY: word is a valid aligned u32 in shared memory (no PRIVATE flag:
    // the ring is shared between processes); no timeout.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAIT, val, std::ptr::null::<libc::timespec>(), 0, 0) };
}

fn futex_wake(word: &AtomicU32) {
    // SAFETY: as in futex_wait; wakes at most one waiter.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, 1, std::ptr::null::<libc::timespec>(), 0, 0) };
}

fn eventfd_signal(fd: i32) {
    let one = 1u64;
    // SAFETY: writes an 8-byte counter increment from a valid u64.
    unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
}

fn eventfd_drain(fd: i32) {
    let mut v = 0u64;
    // SAFETY: reads the 8-byte counter into a valid u64 (blocks until non-zero).
    unsafe { libc::read(fd, (&mut v as *mut u64).cast(), 8) };
}

impl<const N: usize> Ring<N> {
    /// A ring using `depth` of its N slots (depth a power of two, 2..=N).
    pub fn new(depth: u32) -> Self {
        assert!(depth.is_power_of_two() && depth >= 2 && depth as usize <= N, "depth must be a power of two in 2..={N}");
        Ring {
            head: Padded(AtomicU32::new(0)),
            tail: Padded(AtomicU32::new(0)),
            consumer_waiting: Padded(AtomicU32::new(0)),
            producer_waiting: Padded(AtomicU32::new(0)),
            notifications: Padded(AtomicU64::new(0)),
            slots: std::array::from_fn(|_| std::cell::UnsafeCell::new(Descriptor::default())),
            depth,
        }
    }

    /// Notifications this ring has sent (wake-ups of either side).
    pub fn notifications(&self) -> u64 {
        self.notifications.0.load(Ordering::Relaxed)
    }

    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Entries in the ring now.
    pub fn len(&self) -> u32 {
        self.head.0.load(Ordering::Acquire).wrapping_sub(self.tail.0.load(Ordering::Acquire))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Producer: room for more?
    pub fn free_slots(&self) -> u32 {
        self.depth - 1 - self.len()
    }

    /// Producer: puts one descriptor in, without publishing it. Returns false
    /// when the ring is full. `pending` counts entries written but not yet
    /// published by `publish`.
    pub fn put(&self, d: Descriptor, pending: &mut u32) -> bool {
        let head = self.head.0.load(Ordering::Relaxed).wrapping_add(*pending);
        if head.wrapping_sub(self.tail.0.load(Ordering::Acquire)) >= self.depth - 1 {
            return false;
        }
        // SAFETY: the slot at `head` is outside the consumer's published
        // range (checked above), so only the producer touches it now.
        unsafe { *self.slots[(head & (self.depth - 1)) as usize].get() = d };
        *pending += 1;
        true
    }

    /// Producer: makes `pending` entries visible; wakes the consumer if it
    /// announced that it waits. Returns whether it sent a notification.
    pub fn publish(&self, pending: &mut u32, notify: Notify) -> bool {
        if *pending == 0 {
            return false;
        }
        let head = self.head.0.load(Ordering::Relaxed).wrapping_add(*pending);
        self.head.0.store(head, Ordering::Release);
        *pending = 0;
        let to_consumer = if let Notify::Eventfd(c, _) = notify { c } else { -1 };
        self.wake_if_waiting(&self.consumer_waiting.0, notify, to_consumer)
    }

    /// After publishing: if the other side announced that it sleeps on
    /// `flag`, clear the flag and wake it (futex on the flag, or `fd`).
    fn wake_if_waiting(&self, flag: &AtomicU32, notify: Notify, fd: i32) -> bool {
        fence(Ordering::SeqCst);
        if flag.swap(0, Ordering::SeqCst) != 1 {
            return false;
        }
        self.notifications.0.fetch_add(1, Ordering::Relaxed);
        match notify {
            Notify::Futex => futex_wake(flag),
            Notify::Eventfd(..) => eventfd_signal(fd),
        }
        true
    }

    /// Consumer: takes the next descriptor, if any (the slot is released at
    /// once: the descriptor is copied out).
    pub fn take(&self) -> Option<Descriptor> {
        let tail = self.tail.0.load(Ordering::Relaxed);
        if tail == self.head.0.load(Ordering::Acquire) {
            return None;
        }
        // SAFETY: the Acquire load of head above saw the producer's Release,
        // so the slot at `tail` holds a published descriptor.
        let d = unsafe { *self.slots[(tail & (self.depth - 1)) as usize].get() };
        self.tail.0.store(tail.wrapping_add(1), Ordering::Release);
        Some(d)
    }

    /// Consumer: after taking entries, wakes a producer that waits for room.
    pub fn released(&self, notify: Notify) -> bool {
        let to_producer = if let Notify::Eventfd(_, p) = notify { p } else { -1 };
        self.wake_if_waiting(&self.producer_waiting.0, notify, to_producer)
    }

    /// Sleeps on `flag` until `ready()` (or `stop()`): announce, check again,
    /// sleep; the other side clears the flag and wakes us (see `publish` and
    /// `released`). `fd` is the eventfd that side signals.
    fn sleep_until(flag: &AtomicU32, ready: impl Fn() -> bool, notify: Notify, fd: impl Fn(Notify) -> i32, stop: impl Fn() -> bool) {
        while !ready() && !stop() {
            flag.store(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if ready() || stop() {
                flag.store(0, Ordering::SeqCst);
                return;
            }
            match notify {
                Notify::Futex => futex_wait(flag, 1),
                Notify::Eventfd(..) => eventfd_drain(fd(notify)),
            }
        }
    }

    /// Consumer: sleeps until the ring is not empty (or `stop()` says so).
    pub fn wait_not_empty(&self, notify: Notify, stop: impl Fn() -> bool) {
        let to_consumer = |n| if let Notify::Eventfd(c, _) = n { c } else { -1 };
        Self::sleep_until(&self.consumer_waiting.0, || !self.is_empty(), notify, to_consumer, stop);
    }

    /// Producer: sleeps until the ring has room for `want` entries.
    pub fn wait_room(&self, want: u32, notify: Notify, stop: impl Fn() -> bool) {
        let to_producer = |n| if let Notify::Eventfd(_, p) = n { p } else { -1 };
        Self::sleep_until(&self.producer_waiting.0, || self.free_slots() >= want, notify, to_producer, stop);
    }

    /// Wakes both sides whatever they wait for (used to stop).
    pub fn wake_all(&self, notify: Notify) {
        self.consumer_waiting.0.store(0, Ordering::SeqCst);
        self.producer_waiting.0.store(0, Ordering::SeqCst);
        match notify {
            Notify::Futex => {
                futex_wake(&self.consumer_waiting.0);
                futex_wake(&self.producer_waiting.0);
            }
            Notify::Eventfd(a, b) => {
                eventfd_signal(a);
                eventfd_signal(b);
            }
        }
    }
}
