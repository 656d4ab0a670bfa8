//! IPC between two threads of the one address space, the only kind a
//! unikernel has: the payload in shared memory, Hermit's futex (the
//! kernel's `sys_futex_wait`/`sys_futex_wake`, what its std's locks use) to
//! wait and wake, as oscycles' ipc.futex does between Linux threads. The
//! client times round trips with oscycles' harness; both sides check every
//! word of every message with oscycles' own message module.

#[path = "../../../src/families/bench/ipc/message.rs"]
#[allow(dead_code)]
mod message;

use crate::clock::Tsc;
use crate::harness::{self, HarnessConfig, Measurement};
use crate::watchdog::Stop;
use message::{Direction, MAX_WORDS, check, fill};
use std::cell::UnsafeCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// What message.rs reports: a word that arrived wrong.
#[derive(Debug, Clone, Copy)]
#[allow(dead_code)] // read through Debug, in the failure's text
pub enum IpcError {
    Payload { seq: u64, word: usize },
}

/// One direction: a sequence word the receiver waits on, and the message.
struct Slot {
    seq: AtomicU32,
    msg: UnsafeCell<[u64; MAX_WORDS]>,
}

/// Both directions, the stop flag and what the server saw.
struct Channel {
    request: Slot,
    reply: Slot,
    stop: AtomicBool,
    served: AtomicU64,
    error: UnsafeCell<Option<IpcError>>,
    failed: AtomicBool,
}

// SAFETY: a slot's message is written only by its sender before the Release
// store of its sequence word and read only by its receiver after the Acquire
// load that sees that value; the sender writes again only after the reply to
// it (the receiver is done reading). `error` is written by the server before
// the Release store of `failed` and read after an Acquire load of it.
unsafe impl Sync for Channel {}

unsafe extern "C" {
    fn sys_futex_wait(address: *mut u32, expected: u32, timeout: *const u8, flags: u32) -> i32;
    fn sys_futex_wake(address: *mut u32, count: i32) -> i32;
}

impl Slot {
    fn new() -> Slot {
        Slot { seq: AtomicU32::new(0), msg: UnsafeCell::new([0; MAX_WORDS]) }
    }

    /// Writes message `seq` in direction `dir` and wakes the receiver.
    fn send(&self, seq: u64, words: usize, dir: Direction) {
        // SAFETY: only the sender writes, while the receiver waits (see Channel).
        fill(unsafe { &mut (&mut *self.msg.get())[..words] }, seq, dir);
        self.seq.store(seq as u32, Ordering::Release);
        // SAFETY: the address of a live AtomicU32; Hermit uses it only as a key.
        unsafe { sys_futex_wake(self.seq.as_ptr(), 1) };
    }

    /// Waits until the sequence word leaves `last`, and returns its new value.
    fn wait(&self, last: u32) -> u32 {
        loop {
            let now = self.seq.load(Ordering::Acquire);
            if now != last {
                return now;
            }
            // SAFETY: as in send; no timeout (null), no flags.
            unsafe { sys_futex_wait(self.seq.as_ptr(), last, std::ptr::null(), 0) };
        }
    }

    /// Checks message `seq` in direction `dir`.
    fn check(&self, seq: u64, words: usize, dir: Direction) -> Result<(), IpcError> {
        // SAFETY: read after the Acquire load that saw `seq` (see Channel).
        check(unsafe { &(&*self.msg.get())[..words] }, seq, dir)
    }
}

/// The server: answers each request until told to stop.
fn serve(ch: &Channel, words: usize) {
    let mut last = 0;
    loop {
        last = ch.request.wait(last);
        if ch.stop.load(Ordering::Acquire) {
            return;
        }
        let seq = u64::from(last);
        if let Err(e) = ch.request.check(seq, words, Direction::Request) {
            // SAFETY: written once, before the Release store of `failed`.
            unsafe { *ch.error.get() = Some(e) };
            ch.failed.store(true, Ordering::Release);
            ch.reply.send(seq, 0, Direction::Reply);
            return;
        }
        ch.served.fetch_add(1, Ordering::Relaxed);
        ch.reply.send(seq, words, Direction::Reply);
    }
}

/// What a ping-pong run gives: samples in cycles per round trip.
pub struct PingPong {
    pub measurement: Measurement,
    pub round_trips: u64,
    pub served: u64,
}

/// Round trips of `words` words between this thread and a second one, on
/// the one CPU (every message is a switch to the other thread).
pub fn futex_pingpong(words: usize, cfg: &HarnessConfig, overhead: u64) -> Result<PingPong, String> {
    if words > MAX_WORDS {
        return Err(format!("{words} words: at most {MAX_WORDS}"));
    }
    let ch = Arc::new(Channel {
        request: Slot::new(),
        reply: Slot::new(),
        stop: AtomicBool::new(false),
        served: AtomicU64::new(0),
        error: UnsafeCell::new(None),
        failed: AtomicBool::new(false),
    });
    let server = {
        let ch = ch.clone();
        std::thread::spawn(move || serve(&ch, words))
    };
    let (mut seq, mut trips) = (0u64, 0u64);
    // Warm-up: the server thread started and both sides once through their
    // wait, so that the harness's first calibration step is a round trip
    // and not the thread's start (4 million cycles under TCG).
    let mut round_trips = |n: u64| -> Result<(), Failure> {
        for _ in 0..n {
            let last = seq as u32;
            seq = next(seq);
            ch.request.send(seq, words, Direction::Request);
            let got = ch.reply.wait(last);
            if ch.failed.load(Ordering::Acquire) {
                // SAFETY: read after the Acquire load of `failed` (see Channel).
                return Err(Failure(format!("the server saw a bad request: {:?}", unsafe { *ch.error.get() })));
            }
            if u64::from(got) != seq {
                return Err(Failure(format!("reply {got} to request {seq}")));
            }
            ch.reply.check(seq, words, Direction::Reply).map_err(|e| Failure(format!("bad reply: {e:?}")))?;
            trips += 1;
        }
        Ok(())
    };
    let measured = round_trips(WARM_UP).and_then(|()| harness::measure(&Tsc, overhead, cfg, &mut round_trips));
    ch.stop.store(true, Ordering::Release);
    ch.request.send(next(seq), 0, Direction::Request);
    let _ = server.join();
    let measurement = measured.map_err(|Failure(e)| e)?;
    Ok(PingPong { round_trips: trips, served: ch.served.load(Ordering::Relaxed), measurement })
}

/// Round trips before the measured ones.
const WARM_UP: u64 = 16;

/// The sequence number after `seq`: 1 to 2^32 - 1, never 0 (the initial
/// value of both sequence words).
fn next(seq: u64) -> u64 {
    if seq >= u64::from(u32::MAX) { 1 } else { seq + 1 }
}

struct Failure(String);

impl From<Stop> for Failure {
    fn from(s: Stop) -> Self {
        Failure(format!("{s:?}"))
    }
}
