//! Endpoints over file descriptors: byte streams (pipe, UNIX stream socket,
//! TCP) and datagrams (UNIX datagram socket, UDP, POSIX message queue).

use super::Endpoint;
use super::message::{MAX_WORDS, as_bytes, as_bytes_mut};
use crate::families::bench::toolkit::fds::{IpcError, read_exact, retry, write_all};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// A 0-word message still has to wake the receiver; streams send this byte.
const TOKEN: u8 = 0xA5;

/// One direction in each of two descriptors (pipes), or both in one (sockets).
pub struct FdStream {
    r: OwnedFd,
    w: Option<OwnedFd>,
}

impl FdStream {
    pub fn new(r: OwnedFd, w: Option<OwnedFd>) -> Self {
        FdStream { r, w }
    }
    fn wfd(&self) -> RawFd {
        self.w.as_ref().unwrap_or(&self.r).as_raw_fd()
    }
    fn write_all(&self, buf: &[u8]) -> Result<(), IpcError> {
        write_all(self.wfd(), buf)
    }
    fn read_exact(&self, buf: &mut [u8]) -> Result<(), IpcError> {
        read_exact(self.r.as_raw_fd(), buf)
    }
}

impl Endpoint for FdStream {
    fn send(&mut self, msg: &[u64]) -> Result<(), IpcError> {
        if msg.is_empty() { self.write_all(&[TOKEN]) } else { self.write_all(as_bytes(msg)) }
    }
    fn recv(&mut self, msg: &mut [u64]) -> Result<(), IpcError> {
        if msg.is_empty() {
            let mut t = [0u8; 1];
            self.read_exact(&mut t)?;
            if t[0] != TOKEN {
                return Err(IpcError::Payload { seq: 0, word: 0 });
            }
            Ok(())
        } else {
            self.read_exact(as_bytes_mut(msg))
        }
    }
}

/// How a datagram endpoint moves one message.
#[derive(Clone, Copy)]
pub enum DatagramKind {
    /// send(2) / recv(2) with MSG_TRUNC, so an oversized datagram is noticed.
    Socket,
    /// mq_send(3) / mq_receive(3).
    PosixMq,
}

/// One message per datagram, on one descriptor (sockets) or two (queues).
pub struct FdDatagram {
    out: OwnedFd,
    inp: Option<OwnedFd>,
    kind: DatagramKind,
}

impl FdDatagram {
    pub fn new(out: OwnedFd, inp: Option<OwnedFd>, kind: DatagramKind) -> Self {
        FdDatagram { out, inp, kind }
    }
}

impl Endpoint for FdDatagram {
    fn send(&mut self, msg: &[u64]) -> Result<(), IpcError> {
        let b = as_bytes(msg);
        let fd = self.out.as_raw_fd();
        let n = match self.kind {
            // SAFETY: b is a valid readable slice; fd is a connected socket.
            DatagramKind::Socket => retry("send", || unsafe { libc::send(fd, b.as_ptr().cast(), b.len(), 0) })?,
            DatagramKind::PosixMq => {
                // SAFETY: fd is a message queue descriptor; b is valid.
                retry("mq_send", || unsafe { libc::mq_send(fd, b.as_ptr().cast(), b.len(), 0) as isize })?;
                b.len()
            }
        };
        if n != b.len() {
            return Err(IpcError::Short { got: n, want: b.len() });
        }
        Ok(())
    }
    fn recv(&mut self, msg: &mut [u64]) -> Result<(), IpcError> {
        let want = std::mem::size_of_val(msg);
        let fd = self.inp.as_ref().unwrap_or(&self.out).as_raw_fd();
        let got = match self.kind {
            DatagramKind::Socket => {
                let b = as_bytes_mut(msg);
                // SAFETY: b is a valid writable slice; MSG_TRUNC makes recv
                // return the datagram's real length even if it is longer.
                retry("recv", || unsafe { libc::recv(fd, b.as_mut_ptr().cast(), b.len(), libc::MSG_TRUNC) })?
            }
            DatagramKind::PosixMq => {
                // mq_receive needs a buffer of the queue's full message size.
                let mut buf = [0u64; MAX_WORDS];
                let bytes = as_bytes_mut(&mut buf);
                // SAFETY: bytes is valid for its length, which equals the
                // queue's mq_msgsize (see posix_mq::pair).
                let n =
                    retry("mq_receive", || unsafe { libc::mq_receive(fd, bytes.as_mut_ptr().cast(), bytes.len(), std::ptr::null_mut()) })?;
                let k = want.min(n);
                as_bytes_mut(msg)[..k].copy_from_slice(&bytes[..k]);
                n
            }
        };
        if got != want {
            return Err(IpcError::Short { got, want });
        }
        Ok(())
    }
}
