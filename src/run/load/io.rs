//! The `io` load: direct-I/O disk writes and reads of a scratch file, and
//! TCP traffic over loopback, each on its own thread, counting bytes.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub const FILE_BYTES: usize = 64 << 20;
pub const BLOCK: usize = 1 << 20;
/// Byte counters of the io load.
#[derive(Debug, Default)]
pub struct Counters {
    pub disk_written: AtomicU64,
    pub disk_read: AtomicU64,
    pub tcp: AtomicU64,
    /// Whether the file is open with O_DIRECT (false: the filesystem refused it, e.g. tmpfs).
    pub direct: AtomicBool,
}

fn open(path: &Path, direct: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(path)
}

/// Writes the file through, syncs, reads it back, forever.
pub fn disk(path: &Path, c: &Counters) -> io::Result<()> {
    let (f, direct) = match open(path, true) {
        Ok(f) => (f, true),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => (open(path, false)?, false),
        Err(e) => return Err(e),
    };
    c.direct.store(direct, Ordering::Relaxed);
    let mut buf = crate::families::bench::blk::AlignedBuf::new(BLOCK); // O_DIRECT needs aligned memory
    for (i, b) in buf.bytes().iter_mut().enumerate() {
        *b = i as u8;
    }
    let mut f = f;
    loop {
        use std::io::Seek;
        f.seek(io::SeekFrom::Start(0))?;
        for _ in 0..FILE_BYTES / BLOCK {
            f.write_all(buf.bytes())?;
            c.disk_written.fetch_add(BLOCK as u64, Ordering::Relaxed);
        }
        f.sync_data()?;
        f.seek(io::SeekFrom::Start(0))?;
        for _ in 0..FILE_BYTES / BLOCK {
            f.read_exact(buf.bytes())?;
            c.disk_read.fetch_add(BLOCK as u64, Ordering::Relaxed);
        }
    }
}

/// Streams 64 KiB writes from one thread to another over loopback TCP, forever.
pub fn tcp(c: &Counters) -> io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let sender = std::thread::spawn(move || -> io::Result<()> {
        let mut s = TcpStream::connect(addr)?;
        let buf = vec![0x5au8; 64 << 10];
        loop {
            s.write_all(&buf)?;
        }
    });
    let (mut r, _) = listener.accept()?;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            return sender.join().unwrap_or_else(|_| Err(io::Error::other("tcp sender panicked")));
        }
        c.tcp.fetch_add(n as u64, Ordering::Relaxed);
    }
}
