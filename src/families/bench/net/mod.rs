//! Network throughput and latency as Genode's Pandaboard article measured it: UDP and TCP
//! streams by payload size, and request/response round trips, between a
//! sender and a receiver thread pinned to given CPUs, over loopback or over
//! a veth pair between two network namespaces.
//!
//! A stream has three phases, switched by the caller's clock: warm-up (not
//! counted), measurement, stop. The receiver reports payload bytes and
//! datagrams in the measured window, sliced into intervals (as iperf3
//! reports intervals) for a spread; each side reports its thread CPU time
//! over the window.

pub mod family;
pub mod latency;
pub mod netns;
pub mod schema;
pub mod seq;
pub mod table;
pub mod throughput;

use seq::SeqTracker;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    Udp,
    Tcp,
}

const WARM: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;
/// A UDP datagram starts with its sequence number (little-endian u64) and phase.
pub const UDP_HEADER: usize = 9;

/// Where the two sides run.
#[derive(Debug, Clone, Copy)]
pub struct Ends {
    pub sender_cpu: usize,
    pub receiver_cpu: usize,
    /// Network namespaces to enter (veth path); None: oscycles' own (loopback).
    pub sender_ns: Option<RawFd>,
    pub receiver_ns: Option<RawFd>,
    pub receiver_addr: Ipv4Addr,
}

#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub warm: Duration,
    pub measure: Duration,
    /// Interval for the per-slice rates.
    pub slice: Duration,
}

#[derive(Debug, Clone, Default)]
pub struct StreamResult {
    /// Payload bytes the sender handed to the kernel in each phase.
    pub sent_bytes: [u64; 3],
    pub sent_msgs: [u64; 3],
    /// Everything the receiver got, all phases (TCP: must equal the sum sent).
    pub received_total: u64,
    /// Bytes and messages in the receiver's measured window.
    pub window_bytes: u64,
    pub window_msgs: u64,
    pub window_s: f64,
    /// Per-slice payload MiB/s at the receiver.
    pub slice_mib_s: Vec<f64>,
    pub sender_cpu_s: f64,
    pub receiver_cpu_s: f64,
    pub udp: Option<SeqTracker>,
    pub observed_cpus: ObservedCpus,
}

/// The CPUs the two sides found themselves on at the end (sched_getcpu).
pub type ObservedCpus = (Option<usize>, Option<usize>);
/// Sets a thread up on its side: namespace, CPU.
fn take_side(ns: Option<RawFd>, cpu: usize) -> io::Result<()> {
    if let Some(fd) = ns {
        netns::enter(fd)?;
    }
    crate::measure::placement::set_affinity(&[cpu])
}

/// How long any side waits for the other before the case fails (no side
/// blocks forever: a failed peer cannot hang the run).
const STUCK: Duration = Duration::from_secs(5);

fn set_timeout(fd: RawFd, d: Duration) {
    let tv = libc::timeval { tv_sec: d.as_secs() as libc::time_t, tv_usec: d.subsec_micros() as libc::suseconds_t };
    // SAFETY: a valid socket, a timeval option value of the right size.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
}

fn set_buffer(fd: RawFd, opt: libc::c_int, bytes: libc::c_int) {
    // SAFETY: a valid socket, an int option value of the right size.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&bytes as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::latency::*;
    use super::throughput::*;
    use super::*;

    #[test]
    fn udp_loss_duplicates_and_reordering_on_a_crafted_sequence() {
        let mut t = SeqTracker::default();
        for s in [0, 1, 2, 5, 4, 4, 7, 200, 6] {
            t.record(s);
        }
        assert_eq!(t.unique, 8);
        assert_eq!(t.duplicates, 1);
        assert_eq!(t.out_of_order, 2, "4 after 5, 6 after 200");
        assert_eq!(t.lost(201), 193);
        assert_eq!(t.lost(8), 0);
    }

    fn loopback() -> Ends {
        let cpus = crate::measure::placement::allowed_cpus();
        Ends {
            sender_cpu: cpus[0],
            receiver_cpu: *cpus.get(1).unwrap_or(&cpus[0]),
            sender_ns: None,
            receiver_ns: None,
            receiver_addr: Ipv4Addr::LOCALHOST,
        }
    }

    const SHORT: Timing = Timing { warm: Duration::from_millis(10), measure: Duration::from_millis(60), slice: Duration::from_millis(5) };

    #[test]
    fn a_window_too_short_for_three_slices_runs_on_until_it_has_them() {
        // 30 ms measured in slices of 25 ms: one slice when the time is up
        // (a window may stretch to 300 ms: room for a loaded machine).
        let t = Timing { warm: Duration::from_millis(5), measure: Duration::from_millis(30), slice: Duration::from_millis(25) };
        let r = stream(Proto::Tcp, 1000, loopback(), t).unwrap();
        assert!(r.slice_mib_s.len() >= crate::families::bench::toolkit::window::MIN_SLICES, "{} slices", r.slice_mib_s.len());
        assert!(r.window_s >= 0.075, "the window ({} s) holds three 25 ms slices", r.window_s);
        assert_eq!(r.received_total, r.sent_bytes.iter().sum::<u64>());
    }

    #[test]
    fn every_tcp_byte_sent_is_received() {
        for size in [1, 1000, 65536] {
            let r = stream(Proto::Tcp, size, loopback(), SHORT).unwrap();
            let sent: u64 = r.sent_bytes.iter().sum();
            assert!(r.sent_bytes[1] > 0, "{size}: nothing sent while measuring");
            assert_eq!(r.received_total, sent, "{size}: bytes lost or invented");
            assert!(r.window_bytes > 0 && r.window_bytes <= sent);
        }
    }

    #[test]
    fn udp_accounts_every_measured_datagram_as_received_or_lost() {
        let r = stream(Proto::Udp, 1024, loopback(), SHORT).unwrap();
        let seqs = r.udp.unwrap();
        assert!(r.sent_msgs[1] > 0);
        assert_eq!(seqs.unique + seqs.lost(r.sent_msgs[1]), r.sent_msgs[1]);
        assert_eq!(seqs.duplicates, 0);
        assert!(stream(Proto::Udp, 4, loopback(), SHORT).is_err(), "payloads smaller than the header are refused");
    }

    #[test]
    fn request_response_echoes_and_times_each_transaction() {
        let (rtts, _) = request_response(1024, loopback(), SHORT).unwrap();
        assert!(!rtts.is_empty());
        assert!(rtts.iter().all(|&c| c > 0.0));
    }
}
