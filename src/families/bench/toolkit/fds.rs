//! System calls on descriptors that several families make, and their error:
//! pipes, eventfds, socketpairs, whole reads and writes that retry after
//! EINTR. Allocation-free, so that forked children may use them.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use thiserror::Error;

/// Errors are Copy and allocation-free: a forked child reports them through
/// shared memory.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum IpcError {
    #[error("{op} failed: {}", std::io::Error::from_raw_os_error(*errno))]
    Sys { op: &'static str, errno: i32 },
    #[error("payload corrupted: message {seq}, word {word} differs from what was sent")]
    Payload { seq: u64, word: usize },
    #[error("message of {got} bytes where {want} were expected")]
    Short { got: usize, want: usize },
    #[error("the peer closed the channel")]
    Closed,
    /// The case's deadline (--timeout) passed, or the next batch would end after it.
    #[error("timed out: the case would not finish within --timeout (its deadline)")]
    TimedOut,
    #[error("interrupted by a signal")]
    Interrupted,
    #[error("the peer process ended abnormally (wait status {0:#x})")]
    PeerDied(i32),
    /// A mechanism of another kernel (mach-msg): measured in its environment.
    #[error("another kernel's mechanism: measured in --env {0} only")]
    Elsewhere(&'static str),
}

impl IpcError {
    /// The error of the system call that just failed.
    pub fn last(op: &'static str) -> Self {
        Self::io(op)(std::io::Error::last_os_error())
    }

    /// Turns an io::Error from `op` into an IpcError, for `map_err`.
    pub fn io(op: &'static str) -> impl Fn(std::io::Error) -> IpcError {
        move |e| IpcError::Sys { op, errno: e.raw_os_error().unwrap_or(0) }
    }
}

impl From<IpcError> for std::io::Error {
    fn from(e: IpcError) -> Self {
        match e {
            IpcError::Sys { errno, .. } => std::io::Error::from_raw_os_error(errno),
            IpcError::Closed => std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the peer closed the channel"),
            IpcError::Interrupted | IpcError::TimedOut => std::io::Error::from_raw_os_error(libc::EINTR),
            other => std::io::Error::other(other.to_string()),
        }
    }
}

impl From<crate::measure::watchdog::Stop> for IpcError {
    fn from(s: crate::measure::watchdog::Stop) -> Self {
        match s {
            crate::measure::watchdog::Stop::TimedOut => IpcError::TimedOut,
            crate::measure::watchdog::Stop::Interrupted => IpcError::Interrupted,
        }
    }
}

pub fn owned(fd: i32) -> OwnedFd {
    // SAFETY: callers pass descriptors just returned by the kernel, owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// A pipe: (read end, write end), close-on-exec.
pub fn pipe() -> Result<(OwnedFd, OwnedFd), IpcError> {
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(IpcError::last("pipe2"));
    }
    Ok((owned(fds[0]), owned(fds[1])))
}

/// An eventfd with a zero counter, close-on-exec.
pub fn eventfd() -> Result<OwnedFd, IpcError> {
    // SAFETY: eventfd takes no pointers; the result is checked.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
    if fd < 0 { Err(IpcError::last("eventfd")) } else { Ok(owned(fd)) }
}

/// A UNIX socketpair of `kind` (SOCK_STREAM, SOCK_DGRAM), close-on-exec.
pub fn socketpair(kind: i32) -> Result<(OwnedFd, OwnedFd), IpcError> {
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::socketpair(libc::AF_UNIX, kind | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } != 0 {
        return Err(IpcError::last("socketpair"));
    }
    Ok((owned(fds[0]), owned(fds[1])))
}

/// Runs a system call, retrying after EINTR unless the watchdog says stop.
pub fn retry(op: &'static str, mut f: impl FnMut() -> isize) -> Result<usize, IpcError> {
    loop {
        let r = f();
        if r >= 0 {
            return Ok(r as usize);
        }
        let err = IpcError::last(op);
        if matches!(err, IpcError::Sys { errno: libc::EINTR, .. }) {
            crate::measure::watchdog::check()?;
            continue;
        }
        return Err(err);
    }
}

/// Writes all of `buf` to a stream descriptor, however the kernel splits it.
/// Allocation-free (forked children use it).
pub fn write_all(fd: RawFd, mut buf: &[u8]) -> Result<(), IpcError> {
    while !buf.is_empty() {
        // SAFETY: buf is a valid readable slice of buf.len() bytes.
        let n = retry("write", || unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) })?;
        buf = &buf[n..];
    }
    Ok(())
}

/// Fills all of `buf` from a stream descriptor; `Closed` at end of file.
pub fn read_exact(fd: RawFd, mut buf: &mut [u8]) -> Result<(), IpcError> {
    while !buf.is_empty() {
        // SAFETY: buf is a valid writable slice of buf.len() bytes.
        let n = retry("read", || unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) })?;
        if n == 0 {
            return Err(IpcError::Closed);
        }
        buf = &mut buf[n..];
    }
    Ok(())
}
