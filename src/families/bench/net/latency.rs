//! TCP request/response: one transaction in flight, each timed.

use super::*;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::time::Instant;

/// Transactions a point measures at the least, however long they take
/// (each bounded by the sockets' timeout).
pub const MIN_TRANSACTIONS: usize = 10;

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
        // The window's time, and at least MIN_TRANSACTIONS measured in it: on
        // a loaded machine a transaction waits for both threads to be
        // scheduled, and a 30 ms window held only 2 (issue 58, item 12).
        while start.elapsed() < t.warm + t.measure || rtts.len() < MIN_TRANSACTIONS {
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
