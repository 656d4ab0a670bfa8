//! First-touch page faults: the cost per page of touching a fresh mapping,
//! anonymous (written; transparent huge pages off for the region, so each
//! 4 KiB page faults) or of a file in the page cache (read; the kernel may map
//! several cached pages per fault: its fault-around). The file kind is
//! lmbench's lat_pagefault: pages read in a random order, and the munmap of
//! the populated mapping inside the timed region (lmbench times touch +
//! munmap + mmap and subtracts munmap + mmap of an untouched mapping; here
//! the mmap is outside the timed region and the unmap of the touched
//! mapping inside, which is the same difference less the unmap of an empty
//! mapping, a few microseconds a pass). Its unit is a whole pass over the
//! file, so that a batch holds several, as lmbench's 100 ms samples hold
//! several of its iterations.

pub mod family;
pub mod schema;
pub mod table;

use std::io;
use std::os::fd::AsRawFd;

pub const PAGE: usize = 4096;

pub const HUGE: usize = 2 << 20;

/// The file kind's file, in pages (64 MiB): lmbench's lat_pagefault maps and
/// reads all of it each time, so that its random order spans all of it.
pub const FILE_PAGES: usize = 16384;

crate::named_enum! {
    pub enum FaultKind {
        Anon = "anon",
        File = "file",
        /// Transparent huge pages: each 2 MiB of a MADV_HUGEPAGE region faults once.
        AnonThp = "anon-thp",
        /// Explicit huge pages (MAP_HUGETLB), from the reserved pool.
        AnonHugetlb = "anon-hugetlb",
    }
}

impl FaultKind {
    pub fn description(self) -> &'static str {
        match self {
            FaultKind::Anon => "first write to each 4 KiB page of a fresh anonymous mapping (MADV_NOHUGEPAGE)",
            FaultKind::File => {
                "lat_pagefault: read one byte of each page of a fresh shared mapping of a cached file, pages in a random order, then munmap; per page"
            }
            FaultKind::AnonThp => "first write to each 4 KiB page of a fresh 2 MiB-aligned MADV_HUGEPAGE mapping (one fault per 2 MiB)",
            FaultKind::AnonHugetlb => "first write to each 4 KiB page of a fresh MAP_HUGETLB mapping (one fault per 2 MiB huge page)",
        }
    }
    /// 4 KiB pages per unit the harness counts: huge kinds map whole 2 MiB
    /// units, the file kind whole passes over its file (as lmbench's
    /// iterations, so that a batch of lmbench's 100 ms holds several).
    pub fn pages_per_unit(self) -> usize {
        match self {
            FaultKind::Anon => 1,
            FaultKind::File => FILE_PAGES,
            FaultKind::AnonThp | FaultKind::AnonHugetlb => HUGE / PAGE,
        }
    }
    /// Why the kind cannot be measured on this host, if it cannot.
    pub fn unavailable(self) -> Option<String> {
        match self {
            FaultKind::AnonThp if thp_setting().as_deref().is_none_or(|s| s == "never") => {
                Some(format!("transparent huge pages are off ({})", thp_setting().unwrap_or_else(|| "no THP support".into())))
            }
            FaultKind::AnonHugetlb if free_huge_pages() == 0 => {
                Some("no free explicit huge pages (reserve some in /proc/sys/vm/nr_hugepages)".into())
            }
            _ => None,
        }
    }
}

/// HugePages_Free from /proc/meminfo.
pub fn free_huge_pages() -> u64 {
    crate::measure::host::meminfo("HugePages_Free").unwrap_or(0)
}

/// A fresh mapping, unmapped on drop.
pub struct Region {
    ptr: *mut u8,
    pages: usize,
    /// The whole mapping, when it is larger than the pages used (alignment).
    base: *mut u8,
    len: usize,
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
            Ok(Region { ptr: p.cast(), pages, base: p.cast(), len: pages * PAGE })
        }
    }

    /// `units` 2 MiB units of anonymous memory, 2 MiB-aligned: MADV_HUGEPAGE
    /// (transparent) or MAP_HUGETLB (explicit).
    pub fn anon_huge(units: usize, explicit: bool) -> io::Result<Region> {
        let bytes = units * HUGE;
        // SAFETY: anonymous private mappings checked against MAP_FAILED; the
        // aligned window lies inside the mapping (2 MiB of slack for THP;
        // hugetlb mappings are aligned by the kernel).
        unsafe {
            let (flags, len) = if explicit { (libc::MAP_HUGETLB, bytes) } else { (0, bytes + HUGE) };
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            let base: *mut u8 = p.cast();
            let ptr = base.add((HUGE - base as usize % HUGE) % HUGE);
            if !explicit {
                libc::madvise(ptr.cast(), bytes, libc::MADV_HUGEPAGE);
            }
            Ok(Region { ptr, pages: bytes / PAGE, base, len })
        }
    }

    /// Whether the kernel backed the region with huge pages (AnonHugePages
    /// or a hugetlb mapping in /proc/self/smaps).
    pub fn backed_by_huge_pages(&self) -> bool {
        std::fs::read_to_string("/proc/self/smaps").is_ok_and(|smaps| huge_backed_in(&smaps, self.base as usize))
    }
}

/// Whether the mapping that starts at `base` shows huge pages in an smaps text.
pub fn huge_backed_in(smaps: &str, base: usize) -> bool {
    let start = format!("{base:x}-");
    // A mapping's header starts with its address range "start-end".
    let is_header =
        |l: &str| l.split_whitespace().next().is_some_and(|t| t.contains('-') && t.chars().all(|c| c.is_ascii_hexdigit() || c == '-'));
    let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&start));
    if lines.next().is_none() {
        return false;
    }
    lines
        .take_while(|l| !is_header(l))
        .any(|l| (l.starts_with("AnonHugePages:") || l.starts_with("Private_Hugetlb:")) && !l.contains(" 0 kB"))
}

impl Region {
    pub fn file(file: &std::fs::File, pages: usize) -> io::Result<Region> {
        // SAFETY: read-only shared mapping of the first `pages` pages of an
        // open file at least that long, checked against MAP_FAILED.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), pages * PAGE, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Region { ptr: p.cast(), pages, base: p.cast(), len: pages * PAGE })
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

    /// Reads one byte of each page at the given page numbers, in that order.
    pub fn read_pages_in(&self, order: &[u32]) -> u64 {
        order
            .iter()
            .filter(|&&i| (i as usize) < self.pages)
            // SAFETY: the byte lies inside the readable mapping (i < pages).
            .map(|&i| unsafe { self.ptr.add(i as usize * PAGE).read_volatile() } as u64)
            .sum()
    }

    /// Unmaps now (the drop then does nothing): for a timed region that
    /// includes the teardown.
    pub fn unmap(&mut self) {
        if self.len > 0 {
            // SAFETY: unmapping the whole mapping made by the constructor, once.
            unsafe { libc::munmap(self.base.cast(), self.len) };
            self.len = 0;
            self.pages = 0;
        }
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
        self.unmap();
    }
}

/// A random permutation of 0..n (Fisher-Yates driven by xorshift64 from
/// `seed`): lmbench's order of pages.
pub fn permutation(n: usize, seed: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).collect();
    let mut x = seed | 1;
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
    v
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
        let tmp = tempfile::tempdir().unwrap();
        let f = crate::measure::scratch::ScratchFile::create(tmp.path(), "pftest", 16 * PAGE as u64).unwrap();
        let file = std::fs::File::open(&f.path).unwrap();
        let m = Region::file(&file, 16).unwrap();
        // The pattern written is i % 251 per byte: byte 0 of page k is (4096k) % 251.
        let want: u64 = (0..16).map(|k| ((k * PAGE) % 251) as u64).sum();
        assert_eq!(m.read_each_page(), want);
    }

    #[test]
    fn a_permutation_has_every_page_once_and_reads_follow_it() {
        let p = permutation(1000, 42);
        let mut sorted = p.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<u32>>());
        assert_ne!(p, sorted, "not the identity");
        let tmp = tempfile::tempdir().unwrap();
        let f = crate::measure::scratch::ScratchFile::create(tmp.path(), "pfperm", 16 * PAGE as u64).unwrap();
        let file = std::fs::File::open(&f.path).unwrap();
        let mut m = Region::file(&file, 8).unwrap();
        let want: u64 = (0..8).map(|k| ((k * PAGE) % 251) as u64).sum();
        assert_eq!(m.read_pages_in(&permutation(16, 7)), want, "pages past the mapping are skipped");
        m.unmap();
        assert_eq!(m.resident_pages(), 0);
    }

    #[test]
    fn huge_regions_are_aligned_and_small_ones_are_not_huge() {
        let mut r = Region::anon_huge(2, false).unwrap();
        assert_eq!(r.ptr as usize % HUGE, 0);
        assert_eq!(r.pages, 1024);
        r.write_each_page();
        // Whether the kernel grants a huge page depends on free memory; the
        // case reports n/a when it does not. A MADV_NOHUGEPAGE region never has one.
        let mut small = Region::anon(1024).unwrap();
        small.write_each_page();
        assert!(!small.backed_by_huge_pages());
    }

    #[test]
    fn smaps_parsing_finds_the_right_mapping() {
        let smaps = "7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \nSize:               4096 kB\nAnonHugePages:      2048 kB\nVmFlags: rd wr mr mw me ac hg\n7f0000400000-7f0000800000 rw-p 00000000 00:00 0 \nSize:               4096 kB\nAnonHugePages:         0 kB\nVmFlags: rd wr mr mw me ac nh\n";
        assert!(huge_backed_in(smaps, 0x7f00_0000_0000));
        assert!(!huge_backed_in(smaps, 0x7f00_0040_0000), "the next mapping's header ends the first");
        assert!(!huge_backed_in(smaps, 0x1234_0000));
    }
}
