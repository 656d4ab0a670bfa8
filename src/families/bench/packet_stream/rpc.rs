//! The baseline the packet stream is compared with: synchronous per-packet
//! RPC over a UNIX stream socket (the client sends the packet and waits for
//! an 8-byte acknowledgement). Synchronous RPC over shared memory is the
//! packet stream itself at depth 2: one packet in flight, batch 1.

use super::StreamResult;
use crate::families::bench::toolkit::child;
use crate::families::bench::toolkit::fds::{read_exact, write_all};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// RPC over a socketpair: `packet` bytes out (id in the first 8), 8 bytes back.
pub fn unix_rpc(packet: u32, cpus: (usize, usize), duration: Duration, timeout: Duration) -> std::io::Result<StreamResult> {
    let (client, server) = crate::families::bench::toolkit::fds::socketpair(libc::SOCK_STREAM)?;
    let len = (packet as usize).max(8);
    let mut cbuf = vec![0u8; len];
    let mut sbuf = vec![0u8; len];
    let (sfd, cfd) = (server.as_raw_fd(), client.as_raw_fd());
    crate::measure::watchdog::install();
    let server_cpu_ns = crate::families::bench::toolkit::shm::Shared::new(std::sync::atomic::AtomicU64::new(0))
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let server_cpu = server_cpu_ns.get();
    let pid = child::fork_child(|| {
        // SAFETY: the child keeps only the server end.
        unsafe { libc::close(cfd) };
        let _ = crate::measure::placement::set_affinity(&[cpus.1]);
        let Ok(_d) = crate::measure::watchdog::Deadline::arm(timeout) else { return 2 };
        let start = super::thread_cpu_ns();
        let mut ack = [0u8; 8];
        // Serve until the client closes its end (read fails with EOF).
        while read_exact(sfd, &mut sbuf).is_ok() {
            ack.copy_from_slice(&sbuf[..8]);
            if sbuf[8..].iter().any(|&b| b != sbuf[0] ^ 0x5a) || write_all(sfd, &ack).is_err() {
                return 1;
            }
        }
        server_cpu.store(super::thread_cpu_ns() - start, std::sync::atomic::Ordering::Relaxed);
        0
    })?;
    drop(server);
    let _affinity = crate::measure::placement::AffinityGuard::save();
    crate::measure::placement::set_affinity(&[cpus.0])?;
    let _deadline = crate::measure::watchdog::Deadline::arm(timeout)?;
    let mut r = StreamResult { latencies: Vec::with_capacity(1 << 16), ..Default::default() };
    let cpu0 = super::thread_cpu_ns();
    let t0 = std::time::Instant::now();
    let mut ack = [0u8; 8];
    let mut id = 0u64;
    let outcome = loop {
        if t0.elapsed() >= duration {
            break Ok(());
        }
        cbuf[..8].copy_from_slice(&id.to_le_bytes());
        cbuf[8..].fill(id.to_le_bytes()[0] ^ 0x5a);
        let stamp = crate::measure::arch::rdtscp();
        if let Err(e) = write_all(cfd, &cbuf).and_then(|_| read_exact(cfd, &mut ack)) {
            break Err(e.into());
        }
        if u64::from_le_bytes(ack) != id {
            break Err(std::io::Error::other(format!("acknowledgement {} for request {id}", u64::from_le_bytes(ack))));
        }
        r.latencies.push(crate::measure::arch::rdtscp() - stamp);
        id += 1;
    };
    r.seconds = t0.elapsed().as_secs_f64();
    r.source_cpu_ns = super::thread_cpu_ns() - cpu0;
    r.packets = id;
    r.max_in_flight = 1;
    drop(client);
    let status = child::reap(pid)?;
    outcome?;
    if !child::exited_with(status, 0) {
        return Err(std::io::Error::other(format!("the RPC server ended with wait status {status:#x}")));
    }
    r.sink_cpu_ns = server_cpu.load(std::sync::atomic::Ordering::Relaxed);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_rpc_round_trips_with_checked_contents() {
        let c = crate::measure::placement::allowed_cpus();
        let r = unix_rpc(1500, (c[0], c[0]), Duration::from_millis(30), Duration::from_secs(20)).unwrap();
        assert!(r.packets > 0);
        assert_eq!(r.latencies.len() as u64, r.packets);
        assert!(r.sink_cpu_ns > 0, "the server reports its CPU time");
    }
}
