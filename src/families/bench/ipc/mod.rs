//! Message passing between two actors: the mechanisms, and a ping-pong driver
//! that measures their round trip as two threads or two processes.

pub mod family;
pub mod kernel_table;
pub mod schema;
pub mod table;

pub mod fd;
pub mod memory;
pub mod message;
pub mod pingpong;

use crate::families::bench::toolkit::fds::{IpcError, owned, pipe, socketpair};
use crate::measure::placement::{Cores, Space};
use fd::{DatagramKind, FdDatagram, FdStream};
use memory::{EventfdEndpoint, LINE_WORDS, LineEndpoint, SlotEndpoint, SysvEndpoint, Wake};
use std::os::fd::OwnedFd;

/// One side of a channel. `msg.len()` is the payload in words, the same on
/// both sides for the whole exchange.
pub trait Endpoint: Send {
    fn send(&mut self, msg: &[u64]) -> Result<(), IpcError>;
    fn recv(&mut self, msg: &mut [u64]) -> Result<(), IpcError>;
}

/// Every endpoint type, dispatched by a match (no virtual call in the loop).
pub enum AnyEndpoint {
    Stream(FdStream),
    Datagram(FdDatagram),
    Slot(SlotEndpoint),
    Line(LineEndpoint),
    Eventfd(EventfdEndpoint),
    Sysv(SysvEndpoint),
}

impl Endpoint for AnyEndpoint {
    #[inline(always)]
    fn send(&mut self, msg: &[u64]) -> Result<(), IpcError> {
        match self {
            AnyEndpoint::Stream(e) => e.send(msg),
            AnyEndpoint::Datagram(e) => e.send(msg),
            AnyEndpoint::Slot(e) => e.send(msg),
            AnyEndpoint::Line(e) => e.send(msg),
            AnyEndpoint::Eventfd(e) => e.send(msg),
            AnyEndpoint::Sysv(e) => e.send(msg),
        }
    }
    #[inline(always)]
    fn recv(&mut self, msg: &mut [u64]) -> Result<(), IpcError> {
        match self {
            AnyEndpoint::Stream(e) => e.recv(msg),
            AnyEndpoint::Datagram(e) => e.recv(msg),
            AnyEndpoint::Slot(e) => e.recv(msg),
            AnyEndpoint::Line(e) => e.recv(msg),
            AnyEndpoint::Eventfd(e) => e.recv(msg),
            AnyEndpoint::Sysv(e) => e.recv(msg),
        }
    }
}

/// The IPC mechanisms of the l4-ipc suite: names and descriptions are the
/// report's too, so the enum lives in the schema.
pub use crate::families::bench::schema::ipc::Mechanism;

impl Mechanism {
    /// Bytes that cross the mechanism per message of `words` words (byte
    /// streams cannot send an empty message and send a 1-byte token).
    pub fn wire_bytes(self, words: usize) -> usize {
        match self {
            Mechanism::Pipe | Mechanism::Fifo | Mechanism::UnixStream | Mechanism::Tcp => (8 * words).max(1),
            Mechanism::Eventfd => 8,
            Mechanism::Futex | Mechanism::Spin | Mechanism::Cacheline => 0,
            _ => 8 * words,
        }
    }

    /// Why this mechanism cannot run with this placement and payload, if it cannot.
    pub fn unsupported(self, cores: Cores, words: usize) -> Option<&'static str> {
        if let Some(reason) = self.foreign() {
            return Some(reason);
        }
        let polls = matches!(self, Mechanism::Spin | Mechanism::Cacheline);
        if polls && cores == Cores::Same {
            return Some("busy polling cannot make progress when both sides share one core");
        }
        (self == Mechanism::Cacheline && words > LINE_WORDS)
            .then_some("a one-line message carries at most 7 words beside its sequence word")
    }

    /// Creates a connected pair of endpoints.
    pub fn pair(self, space: Space) -> Result<(AnyEndpoint, AnyEndpoint), IpcError> {
        use AnyEndpoint as E;
        Ok(match self {
            Mechanism::Pipe => {
                let (r1, w1) = pipe()?;
                let (r2, w2) = pipe()?;
                (E::Stream(FdStream::new(r2, Some(w1))), E::Stream(FdStream::new(r1, Some(w2))))
            }
            Mechanism::Fifo => {
                let (ab_r, ab_w) = fifo()?;
                let (ba_r, ba_w) = fifo()?;
                (E::Stream(FdStream::new(ba_r, Some(ab_w))), E::Stream(FdStream::new(ab_r, Some(ba_w))))
            }
            Mechanism::UnixStream => {
                let (a, b) = socketpair(libc::SOCK_STREAM)?;
                (E::Stream(FdStream::new(a, None)), E::Stream(FdStream::new(b, None)))
            }
            Mechanism::UnixDgram => {
                let (a, b) = socketpair(libc::SOCK_DGRAM)?;
                (E::Datagram(FdDatagram::new(a, None, DatagramKind::Socket)), E::Datagram(FdDatagram::new(b, None, DatagramKind::Socket)))
            }
            Mechanism::Eventfd => {
                let (a, b) = EventfdEndpoint::pair()?;
                (E::Eventfd(a), E::Eventfd(b))
            }
            Mechanism::Futex => {
                let (a, b) = SlotEndpoint::pair(Wake::Futex { private: space == Space::Intra })?;
                (E::Slot(a), E::Slot(b))
            }
            Mechanism::Spin => {
                let (a, b) = SlotEndpoint::pair(Wake::Spin)?;
                (E::Slot(a), E::Slot(b))
            }
            Mechanism::Cacheline => {
                let (a, b) = LineEndpoint::pair()?;
                (E::Line(a), E::Line(b))
            }
            Mechanism::PosixMq => {
                let (ab_w, ab_r) = posix_mq()?;
                let (ba_w, ba_r) = posix_mq()?;
                (
                    E::Datagram(FdDatagram::new(ab_w, Some(ba_r), DatagramKind::PosixMq)),
                    E::Datagram(FdDatagram::new(ba_w, Some(ab_r), DatagramKind::PosixMq)),
                )
            }
            Mechanism::SysvMq => {
                let (a, b) = SysvEndpoint::pair()?;
                (E::Sysv(a), E::Sysv(b))
            }
            Mechanism::Tcp => {
                let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(IpcError::io("tcp bind"))?;
                let a = std::net::TcpStream::connect(l.local_addr().map_err(IpcError::io("getsockname"))?)
                    .map_err(IpcError::io("tcp connect"))?;
                let (b, _) = l.accept().map_err(IpcError::io("tcp accept"))?;
                a.set_nodelay(true).map_err(IpcError::io("TCP_NODELAY"))?;
                b.set_nodelay(true).map_err(IpcError::io("TCP_NODELAY"))?;
                (E::Stream(FdStream::new(a.into(), None)), E::Stream(FdStream::new(b.into(), None)))
            }
            Mechanism::MachMsg => return Err(IpcError::Elsewhere("mach")),
            Mechanism::Sel4Call => return Err(IpcError::Elsewhere("sel4")),
            Mechanism::Udp => {
                let a = std::net::UdpSocket::bind("127.0.0.1:0").map_err(IpcError::io("udp bind"))?;
                let b = std::net::UdpSocket::bind("127.0.0.1:0").map_err(IpcError::io("udp bind"))?;
                a.connect(b.local_addr().map_err(IpcError::io("getsockname"))?).map_err(IpcError::io("udp connect"))?;
                b.connect(a.local_addr().map_err(IpcError::io("getsockname"))?).map_err(IpcError::io("udp connect"))?;
                let own = |s: std::net::UdpSocket| OwnedFd::from(s);
                (
                    E::Datagram(FdDatagram::new(own(a), None, DatagramKind::Socket)),
                    E::Datagram(FdDatagram::new(own(b), None, DatagramKind::Socket)),
                )
            }
        })
    }
}

/// A named FIFO in a private directory of its own (0700), opened for
/// reading and for writing, then removed with its directory, so that nothing
/// is left behind. O_RDWR keeps either open from blocking.
fn fifo() -> Result<(OwnedFd, OwnedFd), IpcError> {
    let dir = tempfile::Builder::new()
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .prefix("oscycles-fifo-")
        .tempdir()
        .map_err(|e| IpcError::Sys { op: "mkdtemp", errno: e.raw_os_error().unwrap_or(libc::EIO) })?;
    let path = dir.path().join("fifo");
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| IpcError::Sys { op: "mkfifo", errno: libc::EINVAL })?;
    // SAFETY: c is a NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(IpcError::last("mkfifo"));
    }
    let open = || {
        // SAFETY: c is a NUL-terminated path.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if fd < 0 { Err(IpcError::last("open fifo")) } else { Ok(owned(fd)) }
    };
    let r = open();
    let w = open();
    drop(dir);
    Ok((r?, w?))
}

/// A POSIX message queue opened twice (send side, receive side) and unlinked
/// at once, so that nothing is left behind whatever happens next.
fn posix_mq() -> Result<(OwnedFd, OwnedFd), IpcError> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let name = format!("/oscycles-{}-{}\0", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    let mut attr: libc::mq_attr = zeroed_mq_attr();
    attr.mq_maxmsg = 4;
    attr.mq_msgsize = (8 * message::MAX_WORDS) as libc::c_long;
    let open = |flags: i32| {
        // SAFETY: name is NUL-terminated; attr is a valid mq_attr.
        let q =
            unsafe { libc::mq_open(name.as_ptr().cast(), flags | libc::O_CLOEXEC, 0o600 as libc::mode_t, &attr as *const libc::mq_attr) };
        if q < 0 { Err(IpcError::last("mq_open")) } else { Ok(owned(q)) }
    };
    let w = open(libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY);
    let r = w.as_ref().ok().map(|_| open(libc::O_RDONLY));
    // SAFETY: name is NUL-terminated.
    unsafe { libc::mq_unlink(name.as_ptr().cast()) };
    let w = w?;
    let r = r.expect("opened after the write side succeeded")?;
    Ok((w, r))
}

fn zeroed_mq_attr() -> libc::mq_attr {
    // SAFETY: mq_attr is plain integers; all-zero is a valid value.
    unsafe { std::mem::zeroed() }
}
