//! Two network namespaces joined by a veth pair, made by oscycles and gone
//! with it: the namespaces are anonymous and live only as long as oscycles
//! holds their file descriptors, so they (and the veth devices in them)
//! disappear when the pair is dropped, and even if oscycles is SIGKILLed.
//! `ip` (iproute2) creates the devices and sets the addresses.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

pub const ADDR_A: [u8; 4] = [10, 211, 0, 1];
pub const ADDR_B: [u8; 4] = [10, 211, 0, 2];

/// A new, empty network namespace, held by the returned descriptor. It is
/// made on a short-lived thread so that no thread of oscycles changes namespace.
fn new_netns() -> io::Result<OwnedFd> {
    std::thread::spawn(|| -> io::Result<OwnedFd> {
        // SAFETY: unshare takes no pointers; it moves only this thread.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let f = std::fs::File::open("/proc/thread-self/ns/net")?;
        Ok(f.into())
    })
    .join()
    .map_err(|_| io::Error::other("namespace thread panicked"))?
}

/// Moves the calling thread into the namespace `ns`.
pub fn enter(ns: RawFd) -> io::Result<()> {
    // SAFETY: setns takes a descriptor and a flag; it changes only this thread.
    if unsafe { libc::setns(ns, libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Why the veth path cannot be set up (an n/a reason).
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    #[error("the veth path needs root (network namespaces and devices)")]
    NotRoot,
    #[error("creating a network namespace: {0}")]
    Namespace(#[source] io::Error),
    #[error("creating a veth pair: {0}")]
    Veth(#[source] Box<NetnsError>),
    #[error("running ip (iproute2; scripts/setup installs it): {0}")]
    NoIp(#[source] io::Error),
    /// What ip said on standard error.
    #[error("ip failed: {0}")]
    IpFailed(String),
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Runs `ip -batch -` with `script` inside namespace `ns` (None: oscycles' own).
fn ip_batch(ns: Option<RawFd>, script: &str) -> Result<(), NetnsError> {
    let mut cmd = Command::new("ip");
    cmd.args(["-batch", "-"]).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped());
    if let Some(fd) = ns {
        // SAFETY: the closure runs between fork and exec and calls only
        // setns, an async-signal-safe system call; fd stays open meanwhile.
        unsafe {
            cmd.pre_exec(move || enter(fd));
        }
    }
    let mut child = cmd.spawn().map_err(NetnsError::NoIp)?;
    use std::io::Write;
    child.stdin.take().expect("piped").write_all(script.as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(NetnsError::IpFailed(String::from_utf8_lossy(&out.stderr).trim().to_string()));
    }
    Ok(())
}

pub struct VethPair {
    pub a: OwnedFd,
    pub b: OwnedFd,
    pub names: (String, String),
}

impl VethPair {
    /// Two namespaces, a veth pair between them, 10.211.0.1/24 and .2 up.
    /// Err is a sentence for an n/a result (not root, no veth, no ip).
    pub fn create() -> Result<VethPair, NetnsError> {
        // SAFETY: geteuid has no arguments.
        if unsafe { libc::geteuid() } != 0 {
            return Err(NetnsError::NotRoot);
        }
        let (a, b) = (new_netns().map_err(NetnsError::Namespace)?, new_netns()?);
        let pid = std::process::id();
        let names = (format!("osc{pid}a"), format!("osc{pid}b"));
        let path = |fd: &OwnedFd| format!("/proc/{pid}/fd/{}", fd.as_raw_fd());
        ip_batch(None, &format!("link add {} netns {} type veth peer name {} netns {}\n", names.0, path(&a), names.1, path(&b)))
            .map_err(|e| NetnsError::Veth(Box::new(e)))?;
        let ip = |x: [u8; 4]| format!("{}.{}.{}.{}", x[0], x[1], x[2], x[3]);
        for (fd, name, addr) in [(&a, &names.0, ADDR_A), (&b, &names.1, ADDR_B)] {
            ip_batch(Some(fd.as_raw_fd()), &format!("link set lo up\naddr add {}/24 dev {name}\nlink set {name} up\n", ip(addr)))?;
        }
        Ok(VethPair { a, b, names })
    }
}

/// Duplicates a namespace descriptor for a thread that will enter it.
pub fn dup(fd: &OwnedFd) -> io::Result<OwnedFd> {
    // SAFETY: dup of a valid descriptor; the new one is owned by the result.
    let n = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: n is a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(n) })
}
