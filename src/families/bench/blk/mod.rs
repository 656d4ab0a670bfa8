//! Block I/O as Genode's Pandaboard article measured the SD card: sequential reads and writes
//! of one block size at a time, with O_DIRECT (the page cache bypassed) and
//! through the page cache for contrast, on a file laid out first in the
//! scratch directory (which must be a real filesystem: tmpfs has no direct
//! I/O). pread/pwrite at increasing offsets, wrapping at the end of the
//! file, one request in flight (fio's psync engine, iodepth 1).

pub mod family;
pub mod schema;
pub mod table;

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
}

/// What direct I/O on a file requires (statx STATX_DIOALIGN, Linux 6.1+;
/// else the device's logical block size; else 512).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DioAlign {
    pub mem: u32,
    pub offset: u32,
}

pub fn dio_align(path: &Path) -> io::Result<DioAlign> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: a zeroed statx is a valid out-buffer; the path is NUL-terminated.
    let stx = unsafe {
        let mut stx: libc::statx = std::mem::zeroed();
        if libc::statx(libc::AT_FDCWD, c.as_ptr(), 0, libc::STATX_DIOALIGN, &mut stx) != 0 {
            return Err(io::Error::last_os_error());
        }
        stx
    };
    if stx.stx_mask & libc::STATX_DIOALIGN != 0 {
        if stx.stx_dio_offset_align == 0 {
            return Err(io::Error::new(io::ErrorKind::Unsupported, "this filesystem does not support direct I/O"));
        }
        return Ok(DioAlign { mem: stx.stx_dio_mem_align, offset: stx.stx_dio_offset_align });
    }
    Ok(DioAlign { mem: 512, offset: 512 })
}

/// What direct I/O needs here and a case does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirectIoError {
    #[error("direct I/O here needs block sizes that are multiples of {offset} bytes; {block} is not")]
    BlockSize { offset: u32, block: usize },
    #[error("direct I/O here needs buffers aligned to {mem} bytes; this one is aligned to {align}")]
    BufferAlign { mem: u32, align: usize },
}

/// Refuses a block size or buffer alignment direct I/O would reject with
/// EINVAL, with a sentence saying what is needed.
pub fn check_direct(block: usize, buffer_align: usize, a: DioAlign) -> Result<(), DirectIoError> {
    if block == 0 || !block.is_multiple_of(a.offset as usize) {
        return Err(DirectIoError::BlockSize { offset: a.offset, block });
    }
    if !buffer_align.is_multiple_of(a.mem as usize) {
        return Err(DirectIoError::BufferAlign { mem: a.mem, align: buffer_align });
    }
    Ok(())
}

/// Whether a directory sits on tmpfs (no direct I/O, no disk behind it).
pub fn on_tmpfs(dir: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else { return false };
    // SAFETY: a zeroed statfs is a valid out-buffer; the path is NUL-terminated.
    unsafe {
        let mut s: libc::statfs = std::mem::zeroed();
        libc::statfs(c.as_ptr(), &mut s) == 0 && s.f_type == libc::TMPFS_MAGIC
    }
}

/// A page-aligned buffer (direct I/O needs aligned memory).
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

pub const BUF_ALIGN: usize = 4096;

impl AlignedBuf {
    pub fn new(len: usize) -> AlignedBuf {
        let layout = std::alloc::Layout::from_size_align(len.max(1), BUF_ALIGN).expect("valid layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory for an I/O buffer");
        AlignedBuf { ptr, layout }
    }
    pub fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: ptr is a live allocation of layout.size() bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

#[derive(Debug, Clone, Default)]
pub struct BlkResult {
    pub bytes: u64,
    pub ops: u64,
    pub window_s: f64,
    pub slice_mib_s: Vec<f64>,
    pub cpu_s: f64,
    /// Cached writes: the fdatasync after the window (not in the rate).
    pub sync_s: f64,
}

pub fn open(path: &Path, direct: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(true);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(path)
}

/// Sequential `op` in `block`-byte requests over `file` (of `file_bytes`),
/// for `warm` unmeasured and then `measure` measured.
pub fn run(
    file: &File,
    file_bytes: u64,
    op: Op,
    block: usize,
    warm: Duration,
    measure: Duration,
    slice: Duration,
) -> io::Result<BlkResult> {
    let mut buf = AlignedBuf::new(block);
    for (i, b) in buf.bytes().iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    let blocks = (file_bytes / block as u64).max(1);
    let mut k = 0u64;
    let mut step = |buf: &mut AlignedBuf| -> io::Result<()> {
        let off = (k % blocks) * block as u64;
        k += 1;
        let b = &mut buf.bytes()[..block];
        match op {
            Op::Read => file.read_exact_at(b, off),
            Op::Write => file.write_all_at(b, off),
        }
    };
    let start = Instant::now();
    while start.elapsed() < warm {
        step(&mut buf)?;
        crate::measure::watchdog::check().map_err(|_| io::Error::from(io::ErrorKind::Interrupted))?;
    }
    let mut r = BlkResult::default();
    let cpu0 = crate::families::bench::toolkit::window::thread_cpu_s();
    let t0 = Instant::now();
    let (mut slice_start, mut slice_bytes) = (t0, 0u64);
    let mut n = 0u32;
    // Runs on past `measure` while it has too few rates (a block that takes
    // longer than a slice on a loaded machine), as net's windows do.
    while crate::families::bench::toolkit::window::window_open(t0.elapsed(), measure, r.slice_mib_s.len()) {
        step(&mut buf)?;
        r.bytes += block as u64;
        r.ops += 1;
        slice_bytes += block as u64;
        let dt = slice_start.elapsed();
        if dt >= slice {
            r.slice_mib_s.push(slice_bytes as f64 / dt.as_secs_f64() / (1 << 20) as f64);
            slice_start = Instant::now();
            slice_bytes = 0;
        }
        n = n.wrapping_add(1);
        if n.is_multiple_of(256) {
            crate::measure::watchdog::check().map_err(|_| io::Error::from(io::ErrorKind::Interrupted))?;
        }
    }
    r.window_s = t0.elapsed().as_secs_f64();
    r.cpu_s = crate::families::bench::toolkit::window::thread_cpu_s() - cpu0;
    if op == Op::Write {
        let s = Instant::now();
        // SAFETY: fdatasync on a valid descriptor.
        if unsafe { libc::fdatasync(file.as_raw_fd()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        r.sync_s = s.elapsed().as_secs_f64();
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misaligned_direct_io_is_refused_with_a_sentence() {
        let a = DioAlign { mem: 512, offset: 512 };
        assert!(check_direct(4096, 4096, a).is_ok());
        let e = check_direct(1000, 4096, a).unwrap_err().to_string();
        assert!(e.contains("multiples of 512 bytes; 1000 is not"), "{e}");
        let e = check_direct(4096, 8, a).unwrap_err().to_string();
        assert!(e.contains("aligned to 512"), "{e}");
        assert!(check_direct(0, 4096, a).is_err());
    }

    #[test]
    fn reads_and_writes_move_whole_blocks_and_the_file_goes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let f = crate::measure::scratch::ScratchFile::create(&dir, "blk-test", 1 << 20).unwrap();
        let path = f.path.clone();
        let direct = !on_tmpfs(&dir) && dio_align(&path).is_ok();
        let file = open(&path, direct).unwrap();
        let short = Duration::from_millis(20);
        for op in [Op::Read, Op::Write] {
            let r = run(&file, f.bytes, op, 64 << 10, Duration::ZERO, short, Duration::from_millis(2)).unwrap();
            assert!(r.ops > 0);
            assert_eq!(r.bytes, r.ops * (64 << 10));
        }
        drop(file);
        drop(f);
        assert!(!path.exists());
    }

    #[test]
    fn a_window_too_short_for_three_slices_runs_on_until_it_has_them() {
        let tmp = tempfile::tempdir().unwrap();
        let f = crate::measure::scratch::ScratchFile::create(tmp.path(), "blk-test", 1 << 20).unwrap();
        let file = open(&f.path, false).unwrap();
        // 30 ms measured in slices of 25 ms: one slice when the time is up
        // (a window may stretch to 300 ms: room for a loaded machine).
        let (measure, slice) = (Duration::from_millis(30), Duration::from_millis(25));
        let r = run(&file, f.bytes, Op::Read, 4096, Duration::ZERO, measure, slice).unwrap();
        assert!(r.slice_mib_s.len() >= crate::families::bench::toolkit::window::MIN_SLICES, "{} slices", r.slice_mib_s.len());
        assert!(r.window_s >= 0.075, "the window ({} s) holds three 25 ms slices", r.window_s);
    }
}
