//! First-touch page faults: the cost per page of touching a fresh mapping,
//! anonymous (written; transparent huge pages off for the region, so each
//! 4 KiB page faults) or of a file in the page cache (read; the kernel may map
//! several cached pages per fault: its fault-around).

use std::io;
use std::os::fd::AsRawFd;

pub const PAGE: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    Anon,
    File,
}

impl FaultKind {
    pub const ALL: [FaultKind; 2] = [FaultKind::Anon, FaultKind::File];
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Anon => "anon",
            FaultKind::File => "file",
        }
    }
    pub fn description(self) -> &'static str {
        match self {
            FaultKind::Anon => "first write to each 4 KiB page of a fresh anonymous mapping (MADV_NOHUGEPAGE)",
            FaultKind::File => "first read of each page of a fresh shared mapping of a cached file",
        }
    }
}

/// A fresh mapping, unmapped on drop.
pub struct Region {
    ptr: *mut u8,
    pages: usize,
}

impl Region {
    pub fn anon(pages: usize) -> io::Result<Region> {
        // SAFETY: anonymous private mapping, checked against MAP_FAILED; the
        // madvise only affects this fresh region.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                pages * PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            libc::madvise(p, pages * PAGE, libc::MADV_NOHUGEPAGE);
            Ok(Region { ptr: p.cast(), pages })
        }
    }

    pub fn file(file: &std::fs::File, pages: usize) -> io::Result<Region> {
        // SAFETY: read-only shared mapping of the first `pages` pages of an
        // open file at least that long, checked against MAP_FAILED.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), pages * PAGE, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Region { ptr: p.cast(), pages })
    }

    /// Writes one byte in each page.
    pub fn write_each_page(&mut self) {
        for i in 0..self.pages {
            // SAFETY: the byte lies inside the writable mapping.
            unsafe { self.ptr.add(i * PAGE).write_volatile(1) };
        }
    }

    /// Reads one byte in each page; returns their sum so it cannot be elided.
    pub fn read_each_page(&self) -> u64 {
        (0..self.pages)
            // SAFETY: the byte lies inside the readable mapping.
            .map(|i| unsafe { self.ptr.add(i * PAGE).read_volatile() } as u64)
            .sum()
    }

    /// Pages of this mapping that are resident (mincore).
    pub fn resident_pages(&self) -> usize {
        let mut vec = vec![0u8; self.pages];
        // SAFETY: vec has one byte per page of the mapping.
        let rc = unsafe { libc::mincore(self.ptr.cast(), self.pages * PAGE, vec.as_mut_ptr()) };
        if rc != 0 { 0 } else { vec.iter().filter(|&&b| b & 1 == 1).count() }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: unmapping the region mapped by the constructor, once.
        unsafe { libc::munmap(self.ptr.cast(), self.pages * PAGE) };
    }
}

/// The transparent huge page setting, for the record.
pub fn thp_setting() -> Option<String> {
    let s = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok()?;
    s.split_whitespace().find(|w| w.starts_with('[')).map(|w| w.trim_matches(['[', ']']).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_makes_every_page_resident() {
        let mut r = Region::anon(64).unwrap();
        assert_eq!(r.resident_pages(), 0);
        r.write_each_page();
        assert_eq!(r.resident_pages(), 64);
        let f = crate::bench::scratch::ScratchFile::create(&std::env::temp_dir(), "pftest", 16 * PAGE as u64).unwrap();
        let file = std::fs::File::open(&f.path).unwrap();
        let m = Region::file(&file, 16).unwrap();
        // The pattern written is i % 251 per byte: byte 0 of page k is (4096k) % 251.
        let want: u64 = (0..16).map(|k| ((k * PAGE) % 251) as u64).sum();
        assert_eq!(m.read_each_page(), want);
    }
}
