//! Bandwidths as lmbench measures them, in MB/s (1e6 bytes per second):
//! pipe and UNIX stream socket in 64 KiB chunks, memory read / write / copy
//! over a buffer four times the last-level cache with lmbench's own loops
//! (bw_mem rd, wr, cp: one 4-byte word every 16 bytes, 512-byte blocks, so
//! every cache line moves but a quarter of the words are touched; the bytes
//! counted are the buffer's), the C library's memcpy beside them, mmap read
//! of a file and read(2) of a file from the page cache, each summed as
//! bw_mmap_rd and bw_file_rd sum them. What a byte is, is said per kind.

pub mod family;
pub mod schema;

use crate::families::bench::toolkit::child::{self, Private};
use crate::measure::scratch::ScratchFile;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

pub const CHUNK: usize = 64 * 1024;

crate::named_enum! {
    pub enum BwKind {
        Pipe = "pipe",
        Unix = "unix",
        MemRd = "mem-rd",
        MemWr = "mem-wr",
        MemCp = "mem-cp",
        MemCpLibc = "mem-cp-libc",
        MmapRd = "mmap-rd",
        MmapRdOpen = "mmap-rd-open2close",
        FileRd = "file-rd",
    }
}

impl BwKind {
    pub fn description(self) -> &'static str {
        match self {
            BwKind::Pipe => "a writer process streams 64 KiB chunks through a pipe; bytes received",
            BwKind::Unix => "a writer process streams 64 KiB chunks through a UNIX stream socket; bytes received",
            BwKind::MemRd => "bw_mem rd: sum one 4-byte word every 16 bytes over a buffer 4x the LLC; bytes of the buffer",
            BwKind::MemWr => "bw_mem wr: store one 4-byte word every 16 bytes over a buffer 4x the LLC; bytes of the buffer",
            BwKind::MemCp => "bw_mem cp: copy one 4-byte word every 16 bytes between two buffers 4x the LLC; bytes of one buffer",
            BwKind::MemCpLibc => "the C library's memcpy between two buffers 4x the LLC (bw_mem bcopy); bytes of one buffer",
            BwKind::MmapRd => "bw_mmap_rd mmap_only: sum every 8-byte word of a cached 64 MiB file mapped once; bytes of the file",
            BwKind::MmapRdOpen => {
                "bw_mmap_rd open2close: open, mmap, sum every 8-byte word, close, munmap a cached 64 MiB file; bytes of the file"
            }
            BwKind::FileRd => {
                "bw_file_rd io_only: lseek to 0, read(2) a cached 64 MiB file in 64 KiB reads, summing every 8-byte word (bread); bytes read"
            }
        }
    }

    /// Kinds over two large memory buffers (full scale only).
    pub fn is_memory(self) -> bool {
        matches!(self, BwKind::MemRd | BwKind::MemWr | BwKind::MemCp | BwKind::MemCpLibc)
    }

    /// Kinds that read a file (the file's layout is their parameter).
    pub fn is_file(self) -> bool {
        matches!(self, BwKind::MmapRd | BwKind::MmapRdOpen | BwKind::FileRd)
    }

    /// Stream kinds take a placement.
    pub fn is_stream(self) -> bool {
        matches!(self, BwKind::Pipe | BwKind::Unix)
    }
}

/// Reads whole chunks from a stream, counting the bytes.
pub struct Drain {
    fd: OwnedFd,
    buf: Vec<u8>,
    pub bytes: u64,
}

impl Drain {
    pub fn new(fd: OwnedFd, chunk: usize) -> Self {
        Drain { fd, buf: vec![0; chunk], bytes: 0 }
    }

    /// Reads exactly one chunk (however the kernel splits it); an end of
    /// file is UnexpectedEof and counts nothing.
    pub fn chunk(&mut self) -> io::Result<()> {
        crate::families::bench::toolkit::fds::read_exact(self.fd.as_raw_fd(), &mut self.buf)?;
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
        let _ = crate::measure::placement::set_affinity(&[cpu]);
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
        BwKind::Unix => crate::families::bench::toolkit::fds::socketpair(libc::SOCK_STREAM)?,
        _ => crate::families::bench::toolkit::fds::pipe()?,
    })
}

/// lmbench's block: 512 bytes, 128 4-byte words, of which the loops touch
/// every fourth.
const BLOCK_INTS: usize = 128;
const STRIDE_INTS: usize = 4;

/// A mapping's words as 4-byte ints (lmbench's TYPE).
fn ints(words: &[u64]) -> &[u32] {
    // SAFETY: u64 memory is aligned for u32 and every bit pattern is a u32.
    unsafe { words.align_to::<u32>().1 }
}

fn ints_mut(words: &mut [u64]) -> &mut [u32] {
    // SAFETY: as above; the borrow is exclusive.
    unsafe { words.align_to_mut::<u32>().1 }
}

/// bw_mem rd: the sum of one 4-byte word every 16 bytes, block by block,
/// in lmbench's instructions (`arch::sum_every_fourth_u32`).
#[inline(never)]
pub fn lm_read(words: &[u64]) -> u32 {
    crate::measure::arch::sum_every_fourth_u32(words)
}

/// bw_mem wr: one 4-byte store every 16 bytes, block by block.
#[inline(never)]
pub fn lm_write(words: &mut [u64], v: u32) {
    for b in ints_mut(words).chunks_exact_mut(BLOCK_INTS) {
        b.iter_mut().step_by(STRIDE_INTS).for_each(|x| *x = v);
    }
}

/// bw_mem cp: one 4-byte word every 16 bytes copied to the same place of
/// the other buffer, block by block.
#[inline(never)]
pub fn lm_copy(src: &[u64], dst: &mut [u64]) {
    for (s, d) in ints(src).chunks_exact(BLOCK_INTS).zip(ints_mut(dst).chunks_exact_mut(BLOCK_INTS)) {
        for k in (0..BLOCK_INTS).step_by(STRIDE_INTS) {
            d[k] = s[k];
        }
    }
}

/// Memory for the mem-* kinds.
pub struct MemBuffers {
    pub a: Private,
    pub b: Option<Private>,
}

impl MemBuffers {
    pub fn new(kind: BwKind, bytes: u64) -> io::Result<Self> {
        // Where lmbench's two valloc()s put its buffers: the source 8 KiB
        // beyond the destination's end (see Private::pair).
        let (a, b) = Private::pair(bytes as usize, 8192, matches!(kind, BwKind::MemCp | BwKind::MemCpLibc))?;
        Ok(MemBuffers { a, b })
    }

    /// One pass; returns the bytes it counts.
    pub fn pass(&mut self, kind: BwKind, round: u64) -> u64 {
        match kind {
            BwKind::MemRd => {
                std::hint::black_box(lm_read(self.a.words()));
            }
            BwKind::MemWr => lm_write(self.a.words_mut(), round as u32),
            BwKind::MemCp => lm_copy(self.a.words(), self.b.as_mut().expect("copy has two buffers").words_mut()),
            BwKind::MemCpLibc => self.b.as_mut().expect("copy has two buffers").words_mut().copy_from_slice(self.a.words()),
            _ => unreachable!("not a memory kind"),
        }
        self.a.words().len() as u64 * 8
    }
}

/// A read-only shared mapping of a whole file; unmapped on drop.
pub struct FileMap {
    ptr: *mut libc::c_void,
    len: usize,
}

impl FileMap {
    pub fn new(file: &std::fs::File, len: usize) -> io::Result<FileMap> {
        // SAFETY: read-only shared mapping of an open file of `len` bytes,
        // checked against MAP_FAILED, unmapped on drop.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(FileMap { ptr, len })
    }

    /// bw_mmap_rd's bread: the sum of every 8-byte word, one scalar add
    /// each (as lmbench's compiled loop); returns the bytes read.
    pub fn sum(&self) -> u64 {
        // SAFETY: the mapping covers `len` readable bytes while self lives.
        let words = unsafe { std::slice::from_raw_parts(self.ptr as *const u64, self.len / 8) };
        std::hint::black_box(crate::measure::arch::sum_u64_scalar(words));
        self.len as u64
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping made in `new`, once.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// bw_mmap_rd open2close: open, mmap, sum, close, munmap; returns the bytes read.
pub fn mmap_read_open(f: &ScratchFile) -> io::Result<u64> {
    let file = std::fs::File::open(&f.path)?;
    let map = FileMap::new(&file, f.bytes as usize)?;
    let n = map.sum();
    drop(file);
    drop(map);
    Ok(n)
}

/// bw_file_rd's sum of a buffer just read: lmbench's bread, every 8-byte
/// word with one scalar add each (arch::sum_u64_scalar), as its compiled
/// loop does (`sum += p[0] + ... + p[127]` over longs, not its TYPE int).
fn sum_words(buf: &[u8]) -> u64 {
    // SAFETY: u8 memory reinterpreted as u64 where aligned (align_to); the
    // unaligned ends are summed byte-wise into words below.
    let (head, body, tail) = unsafe { buf.align_to::<u64>() };
    let ends = head.chunks(8).chain(tail.chunks(8)).fold(0u64, |a, c| {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        a.wrapping_add(u64::from_ne_bytes(w))
    });
    crate::measure::arch::sum_u64_scalar(body).wrapping_add(ends)
}

/// bw_file_rd io_only: lseek to 0, then read(2) the whole file in
/// `buf`-sized reads, summing each; returns the bytes read.
pub fn file_read(file: &std::fs::File, bytes: u64, buf: &mut [u8]) -> io::Result<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::Start(0))?;
    let mut off = 0u64;
    let mut sum = 0u64;
    while off < bytes {
        let n = f.read(buf)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "file shorter than laid out"));
        }
        sum = sum.wrapping_add(sum_words(&buf[..n]));
        off += n as u64;
    }
    std::hint::black_box(sum);
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
        let mut drain = Drain::new(r, CHUNK);
        for _ in 0..10 {
            drain.chunk().unwrap();
        }
        writer.join().unwrap();
        assert_eq!(drain.bytes, 10 * CHUNK as u64);
        // Nothing more: the next chunk is an end of file, not counted.
        assert_eq!(drain.chunk().unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(drain.bytes, 10 * CHUNK as u64);
    }

    #[test]
    fn a_writer_process_stops_when_the_reader_goes() {
        let (r, w) = stream_pair(BwKind::Unix).unwrap();
        let pid = spawn_writer(w, &r, CHUNK, crate::measure::placement::allowed_cpus()[0]).unwrap();
        let mut drain = Drain::new(r, CHUNK);
        drain.chunk().unwrap();
        drop(drain);
        assert!(child::exited_with(child::reap(pid).unwrap(), 0));
    }

    #[test]
    fn memory_and_file_passes_count_their_bytes() {
        let mut m = MemBuffers::new(BwKind::MemCpLibc, 1 << 20).unwrap();
        assert_eq!(m.pass(BwKind::MemCpLibc, 0), 1 << 20);
        assert_eq!(m.b.as_ref().unwrap().words(), m.a.words());
        // lmbench's loops touch the first 4-byte word of every 16 bytes.
        let mut c = MemBuffers::new(BwKind::MemCp, 1 << 12).unwrap();
        c.b.as_mut().unwrap().words_mut().fill(u64::MAX);
        assert_eq!(c.pass(BwKind::MemCp, 0), 1 << 12);
        let (src, dst) = (ints(c.a.words()), ints(c.b.as_ref().unwrap().words()));
        assert!((0..dst.len()).all(|i| dst[i] == if i % 4 == 0 { src[i] } else { u32::MAX }));
        assert_eq!(lm_read(c.a.words()), src.iter().step_by(4).fold(0u32, |a, &x| a.wrapping_add(x)));
        let mut w = MemBuffers::new(BwKind::MemWr, 1 << 16).unwrap();
        w.pass(BwKind::MemWr, 0xdead_beef);
        assert!(ints(w.a.words()).iter().enumerate().all(|(i, &x)| (i % 4 == 0) == (x == 0xdead_beef)));
        let tmp = tempfile::tempdir().unwrap();
        let f = ScratchFile::create(tmp.path(), "bwtest", 3 * CHUNK as u64 + 8).unwrap();
        let file = std::fs::File::open(&f.path).unwrap();
        assert_eq!(file_read(&file, f.bytes, &mut vec![0; CHUNK]).unwrap(), f.bytes);
        assert_eq!(file_read(&file, f.bytes, &mut vec![0; CHUNK]).unwrap(), f.bytes, "read again from offset 0");
        assert_eq!(FileMap::new(&file, f.bytes as usize).unwrap().sum(), f.bytes);
        assert_eq!(mmap_read_open(&f).unwrap(), f.bytes);
        let words = [1u64, 2, 4];
        // SAFETY: u64 memory viewed as bytes.
        let bytes = unsafe { words.align_to::<u8>().1 };
        assert_eq!((sum_words(&bytes[..16]), sum_words(&bytes[..17])), (3, 7), "whole words, and a partial one at the end");
        assert_eq!(crate::measure::arch::sum_u64_scalar(&[]), 0);
        assert_eq!(crate::measure::arch::sum_u64_scalar(&[3, 4, u64::MAX]), 6, "wrapping");
        let many: Vec<u64> = (1..=100).collect();
        assert_eq!(crate::measure::arch::sum_u64_scalar(&many), 5050, "six blocks of 16 and a rest of 4");
        let more: Vec<u64> = (1..=300).collect();
        assert_eq!(crate::measure::arch::sum_u64_scalar(&more), 45150, "two blocks of 128, two of 16, a rest of 12");
    }
}
