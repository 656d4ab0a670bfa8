//! The baseline the packet stream is compared with: synchronous per-packet
//! RPC over a UNIX stream socket (the client sends the packet and waits for
//! an 8-byte acknowledgement). Synchronous RPC over shared memory is the
//! packet stream itself at depth 2: one packet in flight, batch 1.

use super::StreamResult;
use crate::bench::child;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

fn io_all(fd: i32, buf: &mut [u8], write: bool) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: rest is a valid slice of rest.len() bytes.
        let n = unsafe {
            if write { libc::write(fd, rest.as_ptr().cast(), rest.len()) } else { libc::read(fd, rest.as_mut_ptr().cast(), rest.len()) }
        };
        match n {
            0 => return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "peer closed")),
            n if n < 0 => {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) && crate::watchdog::check().is_ok() {
                    continue;
                }
                return Err(e);
            }
            n => done += n as usize,
        }
    }
    Ok(())
}

/// RPC over a socketpair: `packet` bytes out (id in the first 8), 8 bytes back.
pub fn unix_rpc(packet: u32, cpus: (usize, usize), duration: Duration, timeout: Duration) -> std::io::Result<StreamResult> {
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors owned by nobody else.
    let (client, server) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let len = (packet as usize).max(8);
    let mut cbuf = vec![0u8; len];
    let mut sbuf = vec![0u8; len];
    let (sfd, cfd) = (server.as_raw_fd(), client.as_raw_fd());
    crate::watchdog::install();
    let server_cpu_ns =
        crate::bench::ipc::shm::Shared::new(std::sync::atomic::AtomicU64::new(0)).map_err(|e| std::io::Error::other(e.to_string()))?;
    let server_cpu = server_cpu_ns.get();
    let pid = child::fork_child(|| {
        // SAFETY: the child keeps only the server end.
        unsafe { libc::close(cfd) };
        let _ = crate::placement::set_affinity(&[cpus.1]);
        let Ok(_d) = crate::watchdog::Deadline::arm(timeout) else { return 2 };
        let start = super::thread_cpu_ns();
        let mut ack = [0u8; 8];
        // Serve until the client closes its end (read fails with EOF).
        while io_all(sfd, &mut sbuf, false).is_ok() {
            ack.copy_from_slice(&sbuf[..8]);
            if sbuf[8..].iter().any(|&b| b != sbuf[0] ^ 0x5a) || io_all(sfd, &mut ack, true).is_err() {
                return 1;
            }
        }
        server_cpu.store(super::thread_cpu_ns() - start, std::sync::atomic::Ordering::Relaxed);
        0
    })?;
    drop(server);
    let _affinity = crate::placement::AffinityGuard::save();
    crate::placement::set_affinity(&[cpus.0])?;
    let _deadline = crate::watchdog::Deadline::arm(timeout)?;
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
        let stamp = crate::arch::rdtscp();
        if let Err(e) = io_all(cfd, &mut cbuf, true).and_then(|_| io_all(cfd, &mut ack, false)) {
            break Err(e);
        }
        if u64::from_le_bytes(ack) != id {
            break Err(std::io::Error::other(format!("acknowledgement {} for request {id}", u64::from_le_bytes(ack))));
        }
        r.latencies.push(crate::arch::rdtscp() - stamp);
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
        let c = crate::placement::allowed_cpus();
        let r = unix_rpc(1500, (c[0], c[0]), Duration::from_millis(30), Duration::from_secs(20)).unwrap();
        assert!(r.packets > 0);
        assert_eq!(r.latencies.len() as u64, r.packets);
        assert!(r.sink_cpu_ns > 0, "the server reports its CPU time");
    }
}
