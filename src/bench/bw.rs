//! Bandwidths as lmbench measures them, in MB/s (1e6 bytes per second):
//! pipe and UNIX stream socket in 64 KiB chunks, memory read / write / copy
//! over a buffer four times the last-level cache, mmap read of a file and
//! read(2) of a file from the page cache. What a byte is, is said per kind.

use super::child::{self, Private};
use super::scratch::ScratchFile;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

pub const CHUNK: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BwKind {
    Pipe,
    Unix,
    MemRd,
    MemWr,
    MemCp,
    MmapRd,
    FileRd,
}

impl BwKind {
    pub const ALL: [BwKind; 7] = [BwKind::Pipe, BwKind::Unix, BwKind::MemRd, BwKind::MemWr, BwKind::MemCp, BwKind::MmapRd, BwKind::FileRd];

    pub fn name(self) -> &'static str {
        match self {
            BwKind::Pipe => "pipe",
            BwKind::Unix => "unix",
            BwKind::MemRd => "mem-rd",
            BwKind::MemWr => "mem-wr",
            BwKind::MemCp => "mem-cp",
            BwKind::MmapRd => "mmap-rd",
            BwKind::FileRd => "file-rd",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            BwKind::Pipe => "a writer process streams 64 KiB chunks through a pipe; bytes received",
            BwKind::Unix => "a writer process streams 64 KiB chunks through a UNIX stream socket; bytes received",
            BwKind::MemRd => "sum of 64-bit words over a buffer 4x the LLC; bytes read",
            BwKind::MemWr => "store of 64-bit words over a buffer 4x the LLC; bytes written",
            BwKind::MemCp => "memcpy between two buffers 4x the LLC; bytes copied (each read once, written once)",
            BwKind::MmapRd => "mmap a cached 64 MiB file, sum its words, munmap; bytes of the file",
            BwKind::FileRd => "read(2) a cached 64 MiB file in 64 KiB chunks (io_only: no open/close); bytes read",
        }
    }

    /// Stream kinds take a placement.
    pub fn is_stream(self) -> bool {
        matches!(self, BwKind::Pipe | BwKind::Unix)
    }
}

/// The last-level cache in bytes, from sysfs (the highest cache level of
/// CPU 0), or None.
pub fn llc_bytes() -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|e| {
        let p = e.ok()?.path();
        let level: u32 = std::fs::read_to_string(p.join("level")).ok()?.trim().parse().ok()?;
        let size = parse_size(std::fs::read_to_string(p.join("size")).ok()?.trim())?;
        Some((level, size))
    })
    .max()
    .map(|(_, s)| s)
}

/// "48K", "2048K", "32M" -> bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// The memory buffers' size: 4x the LLC, at least 64 MiB, at most 1/8 of RAM.
pub fn mem_buffer_bytes(llc: Option<u64>, ram_bytes: u64) -> u64 {
    let want = llc.map_or(256 << 20, |l| 4 * l).max(64 << 20);
    let cap = (ram_bytes / 8).max(64 << 20);
    want.min(cap) / 4096 * 4096
}

/// Reads whole chunks from a stream, counting the bytes.
pub struct Sink {
    fd: OwnedFd,
    buf: Vec<u8>,
    pub bytes: u64,
}

impl Sink {
    pub fn new(fd: OwnedFd, chunk: usize) -> Self {
        Sink { fd, buf: vec![0; chunk], bytes: 0 }
    }

    /// Reads exactly one chunk (however the kernel splits it); an end of
    /// file is UnexpectedEof and counts nothing.
    pub fn chunk(&mut self) -> io::Result<()> {
        super::ipc::fd::read_exact(self.fd.as_raw_fd(), &mut self.buf)?;
        self.bytes += self.buf.len() as u64;
        Ok(())
    }
}

/// A writer process that streams `chunk`-byte writes into `fd` until the
/// reader goes away (EPIPE). `reader` is the other end, which the child must
/// not keep open.
pub fn spawn_writer(fd: OwnedFd, reader: &OwnedFd, chunk: usize, cpu: usize) -> io::Result<i32> {
    let buf = vec![0x5au8; chunk];
    let raw = fd.as_raw_fd();
    let reader = reader.as_raw_fd();
    let pid = child::fork_child(|| {
        // SAFETY: closing the child's copy of the read end; ignoring SIGPIPE
        // so that a closed reader is an EPIPE error.
        unsafe {
            libc::close(reader);
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
        let _ = crate::placement::set_affinity(&[cpu]);
        loop {
            // SAFETY: buf is a valid readable slice.
            let n = unsafe { libc::write(raw, buf.as_ptr().cast(), buf.len()) };
            if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return 0;
            }
        }
    })?;
    drop(fd);
    Ok(pid)
}

/// A pipe or socketpair: (read side, write side).
pub fn stream_pair(kind: BwKind) -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(match kind {
        BwKind::Unix => super::ipc::socketpair(libc::SOCK_STREAM)?,
        _ => super::ipc::pipe()?,
    })
}

/// Sums words with four accumulators, so the loop is bound by loads.
#[inline(never)]
pub fn read_sum(words: &[u64]) -> u64 {
    let mut acc = [0u64; 4];
    let mut it = words.chunks_exact(4);
    for c in &mut it {
        for k in 0..4 {
            acc[k] = acc[k].wrapping_add(c[k]);
        }
    }
    it.remainder().iter().fold(acc.iter().fold(0, |a, &b| a.wrapping_add(b)), |a, &b| a.wrapping_add(b))
}

#[inline(never)]
pub fn write_fill(words: &mut [u64], v: u64) {
    words.iter_mut().for_each(|w| *w = v);
}

/// Memory for the mem-* kinds.
pub struct MemBuffers {
    pub a: Private,
    pub b: Option<Private>,
}

impl MemBuffers {
    pub fn new(kind: BwKind, bytes: u64) -> io::Result<Self> {
        let a = Private::new(bytes as usize)?;
        let b = if kind == BwKind::MemCp { Some(Private::new(bytes as usize)?) } else { None };
        Ok(MemBuffers { a, b })
    }

    /// One pass; returns the bytes it counts.
    pub fn pass(&mut self, kind: BwKind, round: u64) -> u64 {
        match kind {
            BwKind::MemRd => {
                std::hint::black_box(read_sum(self.a.words()));
            }
            BwKind::MemWr => write_fill(self.a.words_mut(), round),
            BwKind::MemCp => self.b.as_mut().expect("copy has two buffers").words_mut().copy_from_slice(self.a.words()),
            _ => unreachable!("not a memory kind"),
        }
        self.a.words().len() as u64 * 8
    }
}

/// mmap the file, sum it, munmap; returns the bytes read.
pub fn mmap_read(f: &ScratchFile, file: &std::fs::File) -> io::Result<u64> {
    let len = f.bytes as usize;
    // SAFETY: read-only shared mapping of an open file of `len` bytes,
    // checked against MAP_FAILED, unmapped below.
    unsafe {
        let p = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0);
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        std::hint::black_box(read_sum(std::slice::from_raw_parts(p as *const u64, len / 8)));
        libc::munmap(p, len);
    }
    Ok(len as u64)
}

/// pread the whole file in CHUNK pieces; returns the bytes read.
pub fn file_read(file: &std::fs::File, bytes: u64, buf: &mut [u8]) -> io::Result<u64> {
    use std::os::unix::fs::FileExt;
    let mut off = 0u64;
    while off < bytes {
        let n = file.read_at(buf, off)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "file shorter than laid out"));
        }
        off += n as u64;
    }
    Ok(off)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sink_counts_every_byte_of_a_known_transfer() {
        // The writer sends 10 chunks in odd-sized writes, then closes.
        let (r, w) = stream_pair(BwKind::Pipe).unwrap();
        let writer = std::thread::spawn(move || {
            let total = 10 * CHUNK;
            let data = vec![1u8; total];
            let mut sent = 0;
            while sent < total {
                let n = 1000.min(total - sent);
                // SAFETY: data[sent..sent+n] is a valid slice.
                let k = unsafe { libc::write(w.as_raw_fd(), data[sent..].as_ptr().cast(), n) };
                assert!(k > 0);
                sent += k as usize;
            }
        });
        let mut sink = Sink::new(r, CHUNK);
        for _ in 0..10 {
            sink.chunk().unwrap();
        }
        writer.join().unwrap();
        assert_eq!(sink.bytes, 10 * CHUNK as u64);
        // Nothing more: the next chunk is an end of file, not counted.
        assert_eq!(sink.chunk().unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(sink.bytes, 10 * CHUNK as u64);
    }

    #[test]
    fn a_writer_process_stops_when_the_reader_goes() {
        let (r, w) = stream_pair(BwKind::Unix).unwrap();
        let pid = spawn_writer(w, &r, CHUNK, crate::placement::allowed_cpus()[0]).unwrap();
        let mut sink = Sink::new(r, CHUNK);
        sink.chunk().unwrap();
        drop(sink);
        assert!(child::exited_with(child::reap(pid).unwrap(), 0));
    }

    #[test]
    fn memory_and_file_passes_count_their_bytes() {
        let mut m = MemBuffers::new(BwKind::MemCp, 1 << 20).unwrap();
        assert_eq!(m.pass(BwKind::MemCp, 0), 1 << 20);
        assert_eq!(m.b.as_ref().unwrap().words(), m.a.words());
        let mut w = MemBuffers::new(BwKind::MemWr, 1 << 16).unwrap();
        w.pass(BwKind::MemWr, 9);
        assert!(w.a.words().iter().all(|&x| x == 9));
        assert_eq!(read_sum(&[1, 2, 3, 4, 5, 6, 7]), 28);
        let tmp = tempfile::tempdir().unwrap();
        let f = ScratchFile::create(tmp.path(), "bwtest", 3 * CHUNK as u64 + 8).unwrap();
        let file = std::fs::File::open(&f.path).unwrap();
        assert_eq!(file_read(&file, f.bytes, &mut vec![0; CHUNK]).unwrap(), f.bytes);
        assert_eq!(mmap_read(&f, &file).unwrap(), f.bytes);
    }

    #[test]
    fn sizes_parse_and_buffers_follow_the_rule() {
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("x"), None);
        assert_eq!(mem_buffer_bytes(Some(32 << 20), 64 << 30), 128 << 20);
        assert_eq!(mem_buffer_bytes(Some(1 << 20), 64 << 30), 64 << 20);
        assert_eq!(mem_buffer_bytes(Some(8 << 30), 16 << 30), 2 << 30);
    }
}
