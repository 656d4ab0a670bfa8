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
pub mod schema;
pub mod table;

pub mod netns;

use crate::families::bench::toolkit::window::{thread_cpu_s, window_open};
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

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

/// Which datagrams of a measured phase arrived: unique, duplicated, out of
/// order; with the sender's count, the loss.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SeqTracker {
    seen: Vec<u64>,
    pub unique: u64,
    pub duplicates: u64,
    pub out_of_order: u64,
    highest: Option<u64>,
}

impl SeqTracker {
    pub fn record(&mut self, seq: u64) {
        let (word, bit) = ((seq / 64) as usize, seq % 64);
        if word >= self.seen.len() {
            self.seen.resize(word + 1 + word / 2, 0);
        }
        if self.seen[word] & (1 << bit) != 0 {
            self.duplicates += 1;
            return;
        }
        self.seen[word] |= 1 << bit;
        self.unique += 1;
        if self.highest.is_some_and(|h| seq < h) {
            self.out_of_order += 1;
        }
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
    }

    /// Datagrams sent but never received.
    pub fn lost(&self, sent: u64) -> u64 {
        sent.saturating_sub(self.unique)
    }
}

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
/// A stream sender's bytes and messages by phase, its CPU seconds in the window, and its CPU.
type SenderOut = ([u64; 3], [u64; 3], f64, Option<usize>);

/// Sets a thread up on its side: namespace, CPU.
fn take_side(ns: Option<RawFd>, cpu: usize) -> io::Result<()> {
    if let Some(fd) = ns {
        netns::enter(fd)?;
    }
    crate::measure::placement::set_affinity(&[cpu])
}

/// The receiver's bookkeeping of its measured window.
struct Window {
    phase_seen: u8,
    t0: Instant,
    cpu0: f64,
    bytes: u64,
    msgs: u64,
    slice_start: Instant,
    slice_bytes: u64,
    slices: Vec<f64>,
    t1: Option<Instant>,
    cpu1: f64,
}

impl Window {
    fn new() -> Window {
        let now = Instant::now();
        Window {
            phase_seen: WARM,
            t0: now,
            cpu0: 0.0,
            bytes: 0,
            msgs: 0,
            slice_start: now,
            slice_bytes: 0,
            slices: vec![],
            t1: None,
            cpu1: 0.0,
        }
    }

    /// Accounts `n` bytes (one message) received while the run is in
    /// `phase`; true when that closed a slice.
    fn add(&mut self, phase: u8, n: u64, slice: Duration) -> bool {
        if phase == MEASURE && self.phase_seen == WARM {
            self.phase_seen = MEASURE;
            self.t0 = Instant::now();
            self.slice_start = self.t0;
            self.cpu0 = thread_cpu_s();
        }
        if phase == STOP && self.phase_seen == MEASURE {
            self.close();
        }
        if self.phase_seen == MEASURE {
            self.bytes += n;
            self.msgs += 1;
            self.slice_bytes += n;
            let now = Instant::now();
            let dt = now.duration_since(self.slice_start);
            if dt >= slice {
                self.slices.push(self.slice_bytes as f64 / dt.as_secs_f64() / (1 << 20) as f64);
                self.slice_start = now;
                self.slice_bytes = 0;
                return true;
            }
        }
        false
    }

    fn close(&mut self) {
        if self.phase_seen == MEASURE {
            self.phase_seen = STOP;
            self.t1 = Some(Instant::now());
            self.cpu1 = thread_cpu_s();
        }
    }
}

/// What the driver, the sender and the receiver share: the phase, and how
/// many slices the receiver has closed.
struct Progress {
    phase: AtomicU8,
    slices: AtomicUsize,
}

/// Drives the phases from the calling thread.
fn drive(p: &Progress, t: Timing) {
    std::thread::sleep(t.warm);
    p.phase.store(MEASURE, Ordering::SeqCst);
    let t0 = Instant::now();
    std::thread::sleep(t.measure);
    while window_open(t0.elapsed(), t.measure, p.slices.load(Ordering::Relaxed)) {
        std::thread::sleep(t.slice);
    }
    p.phase.store(STOP, Ordering::SeqCst);
}

/// What the receiving side hands back: its window, every byte it got, the
/// UDP sequence accounting, the CPU it was observed on.
type ReceiverOut = (Window, u64, Option<SeqTracker>, Option<usize>);

/// One stream of `size`-byte payloads from sender to receiver.
pub fn stream(proto: Proto, size: usize, ends: Ends, t: Timing) -> io::Result<StreamResult> {
    if proto == Proto::Udp && size < UDP_HEADER {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("UDP payloads carry a {UDP_HEADER}-byte header; {size} is too small"),
        ));
    }
    let progress = Progress { phase: AtomicU8::new(WARM), slices: AtomicUsize::new(0) };
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<io::Result<u16>>();
    std::thread::scope(|s| {
        let receiver = s.spawn(|| receive(proto, size, &ends, t, &progress, ready_tx));
        let port = match ready_rx.recv() {
            Ok(Ok(p)) => p,
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Err(receiver.join().map_or_else(
                    |_| io::Error::other("receiver panicked"),
                    |r| r.err().unwrap_or_else(|| io::Error::other("receiver quit")),
                ));
            }
        };
        let phase_ref = &progress.phase;
        let sender = s.spawn(move || send(proto, size, &ends, phase_ref, port));
        drive(&progress, t);
        let sent = sender.join().map_err(|_| io::Error::other("sender panicked"))?;
        let recv = receiver.join().map_err(|_| io::Error::other("receiver panicked"))?;
        let (sent_bytes, sent_msgs, sender_cpu_s, scpu) = sent?;
        let (w, received_total, udp, rcpu) = recv?;
        let window_s = w.t1.map_or(0.0, |t1| t1.duration_since(w.t0).as_secs_f64());
        Ok(StreamResult {
            sent_bytes,
            sent_msgs,
            received_total,
            window_bytes: w.bytes,
            window_msgs: w.msgs,
            window_s,
            slice_mib_s: w.slices,
            sender_cpu_s,
            receiver_cpu_s: w.cpu1 - w.cpu0,
            udp,
            observed_cpus: (scpu, rcpu),
        })
    })
}

/// The receiving side: binds, says its port on `ready` (or why it could
/// not), then counts what arrives until the stream ends.
fn receive(proto: Proto, size: usize, ends: &Ends, t: Timing, p: &Progress, ready: Sender<io::Result<u16>>) -> io::Result<ReceiverOut> {
    let setup = || -> io::Result<_> {
        take_side(ends.receiver_ns, ends.receiver_cpu)?;
        let bind = SocketAddr::V4(SocketAddrV4::new(ends.receiver_addr, 0));
        Ok(match proto {
            Proto::Udp => {
                let sock = UdpSocket::bind(bind)?;
                set_buffer(sock.as_raw_fd(), libc::SO_RCVBUF, 4 << 20);
                sock.set_read_timeout(Some(Duration::from_millis(50)))?;
                (Some(sock), None)
            }
            Proto::Tcp => {
                let l = TcpListener::bind(bind)?;
                set_timeout(l.as_raw_fd(), STUCK);
                (None, Some(l))
            }
        })
    };
    let (udp, tcp) = match setup() {
        Ok(v) => v,
        Err(e) => {
            let _ = ready.send(Err(io::Error::new(e.kind(), e.to_string())));
            return Err(e);
        }
    };
    let local = udp.as_ref().map(|u| u.local_addr()).or_else(|| tcp.as_ref().map(|l| l.local_addr())).expect("one socket")?;
    let _ = ready.send(Ok(local.port()));
    let mut buf = vec![0u8; size.max(64 << 10)];
    match (udp, tcp) {
        (Some(sock), _) => receive_udp(&sock, &mut buf, t, p),
        (None, Some(l)) => receive_tcp(&l, &mut buf, t, p),
        (None, None) => unreachable!("setup made one socket"),
    }
}

fn receive_udp(sock: &UdpSocket, buf: &mut [u8], t: Timing, progress: &Progress) -> io::Result<ReceiverOut> {
    let (mut w, mut total, mut seqs) = (Window::new(), 0u64, SeqTracker::default());
    loop {
        match sock.recv(buf) {
            Ok(n) => {
                total += n as u64;
                let p = buf.get(8).copied().unwrap_or(WARM);
                if p == STOP {
                    w.close();
                    break;
                }
                if p == MEASURE {
                    seqs.record(u64::from_le_bytes(buf[..8].try_into().expect("8 bytes")));
                }
                if w.add(p, n as u64, t.slice) {
                    progress.slices.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                // The end markers may all be lost: stop once the driver has.
                if progress.phase.load(Ordering::SeqCst) == STOP {
                    w.close();
                    break;
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok((w, total, Some(seqs), crate::measure::placement::current_cpu()))
}

fn receive_tcp(l: &TcpListener, buf: &mut [u8], t: Timing, progress: &Progress) -> io::Result<ReceiverOut> {
    let (mut w, mut total) = (Window::new(), 0u64);
    let (mut conn, _) = l.accept()?;
    conn.set_read_timeout(Some(STUCK))?;
    loop {
        let n = conn.read(buf)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if w.add(progress.phase.load(Ordering::Relaxed), n as u64, t.slice) {
            progress.slices.fetch_add(1, Ordering::Relaxed);
        }
    }
    w.close();
    Ok((w, total, None, crate::measure::placement::current_cpu()))
}

/// The sending side's accounting: bytes and messages by phase, and its CPU
/// time over the measured window.
struct SendCount {
    bytes: [u64; 3],
    msgs: [u64; 3],
    cpu0: f64,
    cpu1: f64,
    last: u8,
}

impl SendCount {
    /// The phase now; CPU time is read as the phase changes.
    fn phase(&mut self, phase: &AtomicU8) -> u8 {
        let p = phase.load(Ordering::Relaxed);
        if p != self.last {
            if p == MEASURE {
                self.cpu0 = thread_cpu_s();
            } else if p == STOP {
                self.cpu1 = thread_cpu_s();
            }
            self.last = p;
        }
        p
    }
    fn sent(&mut self, p: u8, n: usize) {
        self.bytes[p as usize] += n as u64;
        self.msgs[p as usize] += 1;
    }
}

/// The sending side: sends `size`-byte payloads to `port` until the phase is STOP.
fn send(proto: Proto, size: usize, ends: &Ends, phase: &AtomicU8, port: u16) -> io::Result<SenderOut> {
    take_side(ends.sender_ns, ends.sender_cpu)?;
    let to = SocketAddr::V4(SocketAddrV4::new(ends.receiver_addr, port));
    let mut buf: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    let mut c = SendCount { bytes: [0; 3], msgs: [0; 3], cpu0: 0.0, cpu1: 0.0, last: WARM };
    match proto {
        Proto::Udp => send_udp(to, &mut buf, phase, &mut c)?,
        Proto::Tcp => {
            let mut conn = TcpStream::connect_timeout(&to, STUCK)?;
            conn.set_write_timeout(Some(STUCK))?;
            loop {
                let p = c.phase(phase);
                if p == STOP {
                    break;
                }
                conn.write_all(&buf)?;
                c.sent(p, size);
            }
            conn.shutdown(std::net::Shutdown::Write)?;
        }
    }
    Ok((c.bytes, c.msgs, c.cpu1 - c.cpu0, crate::measure::placement::current_cpu()))
}

fn send_udp(to: SocketAddr, buf: &mut [u8], phase: &AtomicU8, c: &mut SendCount) -> io::Result<()> {
    let sock = UdpSocket::bind(SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0)))?;
    sock.connect(to)?;
    let mut seq = 0u64;
    loop {
        let p = c.phase(phase);
        if p == STOP {
            break;
        }
        buf[..8].copy_from_slice(&seq.to_le_bytes());
        buf[8] = p;
        match sock.send(buf) {
            Ok(n) => {
                c.sent(p, n);
                if p == MEASURE {
                    seq += 1;
                }
            }
            // A full socket buffer or an unreachable port for a moment: the datagram is lost, not sent.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOBUFS) | Some(libc::ECONNREFUSED) | Some(libc::EAGAIN)) => {}
            Err(e) => return Err(e),
        }
    }
    buf[8] = STOP;
    for _ in 0..20 {
        let _ = sock.send(buf);
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
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

/// TCP request/response: `size` bytes each way, one transaction in flight;
/// per-transaction round-trip cycles (TSC) over the measured window.
pub fn request_response(size: usize, ends: Ends, t: Timing) -> io::Result<(Vec<f64>, ObservedCpus)> {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<io::Result<u16>>();
    std::thread::scope(|s| {
        let server = s.spawn(move || -> io::Result<Option<usize>> {
            let setup = || -> io::Result<TcpListener> {
                take_side(ends.receiver_ns, ends.receiver_cpu)?;
                TcpListener::bind(SocketAddr::V4(SocketAddrV4::new(ends.receiver_addr, 0)))
            };
            let l = match setup() {
                Ok(l) => l,
                Err(e) => {
                    let _ = ready_tx.send(Err(io::Error::new(e.kind(), e.to_string())));
                    return Err(e);
                }
            };
            set_timeout(l.as_raw_fd(), STUCK);
            let _ = ready_tx.send(l.local_addr().map(|a| a.port()));
            let (mut c, _) = l.accept()?;
            c.set_nodelay(true)?;
            c.set_read_timeout(Some(STUCK))?;
            let mut buf = vec![0u8; size];
            loop {
                match c.read_exact(&mut buf) {
                    Ok(()) => c.write_all(&buf)?,
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(crate::measure::placement::current_cpu()),
                    Err(e) => return Err(e),
                }
            }
        });
        let port = ready_rx.recv().map_err(|_| io::Error::other("server quit"))??;
        client_side(s, ends, port, size, t).and_then(|(rtts, ccpu)| {
            let scpu = server.join().map_err(|_| io::Error::other("server panicked"))??;
            Ok((rtts, (ccpu, scpu)))
        })
    })
}

/// The client side of request/response, on its own thread (it changes namespace and CPU).
fn client_side<'s>(
    s: &'s std::thread::Scope<'s, '_>,
    ends: Ends,
    port: u16,
    size: usize,
    t: Timing,
) -> io::Result<(Vec<f64>, Option<usize>)> {
    s.spawn(move || -> io::Result<(Vec<f64>, Option<usize>)> {
        take_side(ends.sender_ns, ends.sender_cpu)?;
        let mut c = TcpStream::connect_timeout(&SocketAddr::V4(SocketAddrV4::new(ends.receiver_addr, port)), STUCK)?;
        c.set_nodelay(true)?;
        c.set_read_timeout(Some(STUCK))?;
        let msg: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        let mut back = vec![0u8; size];
        let mut rtts = Vec::with_capacity(1 << 16);
        let start = Instant::now();
        while start.elapsed() < t.warm + t.measure {
            let measuring = start.elapsed() >= t.warm;
            let t0 = crate::measure::arch::rdtscp();
            c.write_all(&msg)?;
            c.read_exact(&mut back)?;
            let t1 = crate::measure::arch::rdtscp();
            if back != msg {
                return Err(io::Error::other("the response differs from the request"));
            }
            if measuring {
                rtts.push((t1 - t0) as f64);
            }
        }
        Ok((rtts, crate::measure::placement::current_cpu()))
    })
    .join()
    .map_err(|_| io::Error::other("client panicked"))?
}

#[cfg(test)]
mod tests {
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
