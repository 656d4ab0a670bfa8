//! Endpoints that carry the payload through shared memory and differ in how
//! the receiver learns a message is there: a futex, busy polling, or an
//! eventfd. Also the System V message queue, which needs a shared owner.

use super::Endpoint;
use super::message::MAX_WORDS;
use crate::families::bench::toolkit::fds::{IpcError, retry};
use crate::families::bench::toolkit::shm::Shared;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// One direction of a shared-memory channel: a sequence word on its own
/// cache line, then the payload.
#[repr(C, align(64))]
pub struct Slot {
    seq: AtomicU32,
    _pad: [u8; 60],
    data: std::cell::UnsafeCell<[u64; MAX_WORDS]>,
}

// SAFETY: `data` is written only by the one sender before it publishes `seq`
// with Release, and read by the one receiver after it observes `seq` with
// Acquire; the ping-pong protocol never has two messages in flight per slot.
unsafe impl Sync for Slot {}

impl Slot {
    /// Copies a payload in. Only the slot's one sender calls this, while the
    /// receiver is not reading (see `unsafe impl Sync for Slot`).
    fn put(&self, msg: &[u64]) {
        assert!(msg.len() <= MAX_WORDS);
        // SAFETY: the destination is MAX_WORDS u64s inside the slot, msg.len()
        // of them are written; source and destination cannot overlap (msg is
        // the caller's buffer).
        unsafe { std::ptr::copy_nonoverlapping(msg.as_ptr(), self.data.get().cast::<u64>(), msg.len()) };
    }

    /// Copies a payload out, after the receiver has synchronised with the
    /// sender's publication.
    fn take(&self, msg: &mut [u64]) {
        assert!(msg.len() <= MAX_WORDS);
        // SAFETY: as in `put`, reading msg.len() <= MAX_WORDS u64s.
        unsafe { std::ptr::copy_nonoverlapping(self.data.get().cast::<u64>().cast_const(), msg.as_mut_ptr(), msg.len()) };
    }
}

/// Both directions.
#[repr(C)]
pub struct Slots {
    a_to_b: Slot,
    b_to_a: Slot,
}

impl Slots {
    fn new() -> Self {
        let slot = || Slot { seq: AtomicU32::new(0), _pad: [0; 60], data: std::cell::UnsafeCell::new([0; MAX_WORDS]) };
        Slots { a_to_b: slot(), b_to_a: slot() }
    }
}

/// How the receiver waits for a sequence word to move.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// FUTEX_WAIT / FUTEX_WAKE; `private` when both sides share a process.
    Futex { private: bool },
    /// Poll with `pause`; after SPIN_YIELD_EVERY polls, check the watchdog and
    /// yield, so a CPU shared with other work cannot livelock.
    Spin,
}

const SPIN_YIELD_EVERY: u32 = 1 << 16;

/// One poll's wait: `pause`, and every SPIN_YIELD_EVERY polls a look at the
/// watchdog and a yield.
#[inline(always)]
fn spin_once(polls: &mut u32) -> Result<(), IpcError> {
    crate::measure::arch::spin_hint();
    *polls += 1;
    if *polls == SPIN_YIELD_EVERY {
        *polls = 0;
        crate::measure::watchdog::check()?;
        // SAFETY: sched_yield has no arguments.
        unsafe { libc::sched_yield() };
    }
    Ok(())
}

fn futex(word: &AtomicU32, op: i32, val: u32) -> i64 {
    // SAFETY: word is a valid, aligned u32 in memory that outlives the call;
    // the remaining arguments are unused by FUTEX_WAIT (no timeout) and WAKE.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op, val, std::ptr::null::<libc::timespec>(), 0, 0) as i64 }
}

/// Payload in shared memory, signalled through the slot's sequence word.
pub struct SlotEndpoint {
    slots: Arc<Shared<Slots>>,
    /// true: sends on a_to_b and receives on b_to_a.
    is_a: bool,
    wake: Wake,
    sent: u32,
    received: u32,
}

impl SlotEndpoint {
    pub fn pair(wake: Wake) -> Result<(Self, Self), IpcError> {
        let slots = Arc::new(Shared::new(Slots::new())?);
        let mk = |is_a| SlotEndpoint { slots: slots.clone(), is_a, wake, sent: 0, received: 0 };
        Ok((mk(true), mk(false)))
    }
    /// (outgoing, incoming) slot; a free function so that borrowing the
    /// mapping leaves the counters free to change.
    fn dirs(slots: &Shared<Slots>, is_a: bool) -> (&Slot, &Slot) {
        let s = slots.get();
        if is_a { (&s.a_to_b, &s.b_to_a) } else { (&s.b_to_a, &s.a_to_b) }
    }
}

impl Endpoint for SlotEndpoint {
    fn send(&mut self, msg: &[u64]) -> Result<(), IpcError> {
        let (out, _) = Self::dirs(&self.slots, self.is_a);
        // The receiver does not read the payload until it sees the new
        // sequence number published below.
        out.put(msg);
        self.sent = self.sent.wrapping_add(1);
        out.seq.store(self.sent, Ordering::Release);
        if let Wake::Futex { private } = self.wake {
            let op = libc::FUTEX_WAKE | if private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
            if futex(&out.seq, op, 1) < 0 {
                return Err(IpcError::last("futex wake"));
            }
        }
        Ok(())
    }

    fn recv(&mut self, msg: &mut [u64]) -> Result<(), IpcError> {
        let (_, inp) = Self::dirs(&self.slots, self.is_a);
        let want = self.received.wrapping_add(1);
        let mut polls = 0u32;
        loop {
            let now = inp.seq.load(Ordering::Acquire);
            if now == want {
                break;
            }
            match self.wake {
                Wake::Futex { private } => {
                    let op = libc::FUTEX_WAIT | if private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
                    if futex(&inp.seq, op, now) < 0 {
                        let e = IpcError::last("futex wait");
                        match e {
                            IpcError::Sys { errno: libc::EAGAIN, .. } => {}
                            IpcError::Sys { errno: libc::EINTR, .. } => crate::measure::watchdog::check()?,
                            _ => return Err(e),
                        }
                    }
                }
                Wake::Spin => spin_once(&mut polls)?,
            }
        }
        self.received = want;
        // The Acquire load above saw the sender's Release store, so the
        // payload it wrote before is visible and will not change until we reply.
        inp.take(msg);
        Ok(())
    }
}

/// Words a one-line message carries beside its sequence word.
pub const LINE_WORDS: usize = 7;

/// Both directions of a channel on one cache line: the sequence word and up
/// to `LINE_WORDS` words of payload. A message moves the one line from the
/// sender's cache to the receiver's and nothing else: the hardware floor of
/// any shared-memory message between two CPUs.
#[repr(C, align(64))]
pub struct Line {
    seq: AtomicU32,
    _pad: u32,
    data: std::cell::UnsafeCell<[u64; LINE_WORDS]>,
}

// SAFETY: the two sides strictly alternate (ping-pong): `data` is written by
// the side whose turn it is before it publishes `seq` with Release, and read
// by the other after it observes that `seq` with Acquire.
unsafe impl Sync for Line {}

/// One end of a one-line channel: messages are numbered 1, 2, 3... across
/// both directions, the odd ones sent by the side that speaks first.
pub struct LineEndpoint {
    line: Arc<Shared<Line>>,
    /// The number of the last message sent or received here.
    seq: u32,
}

impl LineEndpoint {
    pub fn pair() -> Result<(Self, Self), IpcError> {
        let line = Arc::new(Shared::new(Line { seq: AtomicU32::new(0), _pad: 0, data: std::cell::UnsafeCell::new([0; LINE_WORDS]) })?);
        Ok((LineEndpoint { line: line.clone(), seq: 0 }, LineEndpoint { line, seq: 0 }))
    }
}

impl Endpoint for LineEndpoint {
    fn send(&mut self, msg: &[u64]) -> Result<(), IpcError> {
        if msg.len() > LINE_WORDS {
            return Err(IpcError::Short { got: LINE_WORDS * 8, want: msg.len() * 8 });
        }
        let line = self.line.get();
        // SAFETY: msg.len() <= LINE_WORDS u64s into the line's payload; it is
        // this side's turn, so the peer does not read it until `seq` moves.
        unsafe { std::ptr::copy_nonoverlapping(msg.as_ptr(), line.data.get().cast::<u64>(), msg.len()) };
        self.seq = self.seq.wrapping_add(1);
        line.seq.store(self.seq, Ordering::Release);
        Ok(())
    }

    fn recv(&mut self, msg: &mut [u64]) -> Result<(), IpcError> {
        if msg.len() > LINE_WORDS {
            return Err(IpcError::Short { got: LINE_WORDS * 8, want: msg.len() * 8 });
        }
        let line = self.line.get();
        let want = self.seq.wrapping_add(1);
        let mut polls = 0u32;
        while line.seq.load(Ordering::Acquire) != want {
            spin_once(&mut polls)?;
        }
        self.seq = want;
        // SAFETY: the Acquire load saw the sender's Release store, so the
        // msg.len() <= LINE_WORDS words it wrote are visible and stay until we reply.
        unsafe { std::ptr::copy_nonoverlapping(line.data.get().cast::<u64>().cast_const(), msg.as_mut_ptr(), msg.len()) };
        Ok(())
    }
}

/// Payload in shared memory, signalled with an eventfd per direction.
pub struct EventfdEndpoint {
    mem: SlotEndpoint,
    out: Arc<OwnedFd>,
    inp: Arc<OwnedFd>,
}

impl EventfdEndpoint {
    pub fn pair() -> Result<(Self, Self), IpcError> {
        let (ab, ba) =
            (Arc::new(crate::families::bench::toolkit::fds::eventfd()?), Arc::new(crate::families::bench::toolkit::fds::eventfd()?));
        // The slots' sequence words are bumped but never waited on: the
        // eventfd read is the wait.
        let (ma, mb) = SlotEndpoint::pair(Wake::Spin)?;
        Ok((EventfdEndpoint { mem: ma, out: ab.clone(), inp: ba.clone() }, EventfdEndpoint { mem: mb, out: ba, inp: ab }))
    }
}

impl Endpoint for EventfdEndpoint {
    fn send(&mut self, msg: &[u64]) -> Result<(), IpcError> {
        let (out, _) = SlotEndpoint::dirs(&self.mem.slots, self.mem.is_a);
        // The eventfd write below publishes it.
        out.put(msg);
        let one = 1u64;
        let fd = self.out.as_raw_fd();
        // SAFETY: writes the 8-byte counter increment from a valid u64.
        retry("eventfd write", || unsafe { libc::write(fd, (&one as *const u64).cast(), 8) })?;
        Ok(())
    }
    fn recv(&mut self, msg: &mut [u64]) -> Result<(), IpcError> {
        let mut v = 0u64;
        let fd = self.inp.as_raw_fd();
        // SAFETY: reads the 8-byte counter into a valid u64.
        retry("eventfd read", || unsafe { libc::read(fd, (&mut v as *mut u64).cast(), 8) })?;
        if v != 1 {
            return Err(IpcError::Short { got: v as usize, want: 1 });
        }
        let (_, inp) = SlotEndpoint::dirs(&self.mem.slots, self.mem.is_a);
        // The eventfd read synchronises with the sender's write (the kernel's
        // locking orders them), so the payload is complete.
        inp.take(msg);
        Ok(())
    }
}

/// A System V message queue, removed when the last owner in this process
/// drops it (a forked child never drops it: it leaves with _exit).
pub struct SysvQueue(i32);

impl Drop for SysvQueue {
    fn drop(&mut self) {
        // SAFETY: IPC_RMID takes no buffer.
        unsafe { libc::msgctl(self.0, libc::IPC_RMID, std::ptr::null_mut()) };
    }
}

#[repr(C)]
struct SysvMsg {
    mtype: libc::c_long,
    text: [u64; MAX_WORDS],
}

/// One queue; A sends type 1 and receives type 2, B the reverse.
pub struct SysvEndpoint {
    q: Arc<SysvQueue>,
    send_type: libc::c_long,
    recv_type: libc::c_long,
}

impl SysvEndpoint {
    pub fn pair() -> Result<(Self, Self), IpcError> {
        // SAFETY: msgget takes no pointers.
        let id = unsafe { libc::msgget(libc::IPC_PRIVATE, libc::IPC_CREAT | 0o600) };
        if id < 0 {
            return Err(IpcError::last("msgget"));
        }
        let q = Arc::new(SysvQueue(id));
        Ok((SysvEndpoint { q: q.clone(), send_type: 1, recv_type: 2 }, SysvEndpoint { q, send_type: 2, recv_type: 1 }))
    }
}

impl Endpoint for SysvEndpoint {
    fn send(&mut self, msg: &[u64]) -> Result<(), IpcError> {
        let mut m = SysvMsg { mtype: self.send_type, text: [0; MAX_WORDS] };
        m.text[..msg.len()].copy_from_slice(msg);
        let id = self.q.0;
        let bytes = std::mem::size_of_val(msg);
        // SAFETY: m is a valid msgbuf with at least `bytes` bytes of text.
        retry("msgsnd", || unsafe { libc::msgsnd(id, (&m as *const SysvMsg).cast(), bytes, 0) as isize })?;
        Ok(())
    }
    fn recv(&mut self, msg: &mut [u64]) -> Result<(), IpcError> {
        let mut m = SysvMsg { mtype: 0, text: [0; MAX_WORDS] };
        let id = self.q.0;
        let (t, cap) = (self.recv_type, std::mem::size_of_val(&m.text));
        // SAFETY: m is a valid msgbuf with `cap` bytes of text.
        let n = retry("msgrcv", || unsafe { libc::msgrcv(id, (&mut m as *mut SysvMsg).cast(), cap, t, 0) })?;
        let want = std::mem::size_of_val(msg);
        if n != want {
            return Err(IpcError::Short { got: n, want });
        }
        msg.copy_from_slice(&m.text[..msg.len()]);
        Ok(())
    }
}
