//! A stream of payloads from sender to receiver: its three phases, the
//! receiver's measured window and the sender's counts.

use super::*;
use crate::families::bench::toolkit::window::{thread_cpu_s, window_open};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// A stream sender's bytes and messages by phase, its CPU seconds in the window, and its CPU.
type SenderOut = ([u64; 3], [u64; 3], f64, Option<usize>);

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
