//! memcpy by size and alignment: the C library's memcpy against a byte loop
//! and a word loop that aligns the destination first, at source and
//! destination offsets from a page boundary, so that the effect of
//! alignment Genode's Pandaboard article describes is visible.

use super::child::Private;

crate::named_enum! {
    pub enum Impl {
        Libc = "libc",
        Bytes = "bytes",
        Words = "words",
    }
}

impl Impl {
    pub fn description(self) -> &'static str {
        match self {
            Impl::Libc => "the C library's memcpy",
            Impl::Bytes => "a loop of 1-byte loads and stores (volatile, so it stays a byte loop)",
            Impl::Words => "bytes until the destination is 8-aligned, then 8-byte words (unaligned loads where needed), then the tail",
        }
    }
}

/// Copies with the chosen implementation. `dst` and `src` must not overlap
/// and have the same length.
pub fn copy(imp: Impl, dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    let n = dst.len();
    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
    match imp {
        // SAFETY: both ranges are valid for n bytes and do not overlap (distinct slices).
        Impl::Libc => unsafe {
            libc::memcpy(d.cast(), s.cast(), n);
        },
        Impl::Bytes => {
            for i in 0..n {
                // SAFETY: i < n, inside both slices.
                unsafe { d.add(i).write_volatile(s.add(i).read()) };
            }
        }
        Impl::Words => {
            let head = (8 - d as usize % 8) % 8;
            let head = head.min(n);
            for i in 0..head {
                // SAFETY: i < head <= n.
                unsafe { d.add(i).write_volatile(s.add(i).read()) };
            }
            let words = (n - head) / 8;
            for w in 0..words {
                let off = head + 8 * w;
                // SAFETY: off + 8 <= n; the destination is 8-aligned here, the
                // source may not be (read_unaligned).
                unsafe { d.add(off).cast::<u64>().write_volatile(s.add(off).cast::<u64>().read_unaligned()) };
            }
            for i in head + 8 * words..n {
                // SAFETY: i < n.
                unsafe { d.add(i).write_volatile(s.add(i).read()) };
            }
        }
    }
}

/// Page-aligned source and destination with room for offsets up to 64.
pub struct Buffers {
    src: Private,
    dst: Private,
    size: usize,
}

pub const MAX_OFFSET: usize = 64;

impl Buffers {
    pub fn new(size: usize) -> std::io::Result<Buffers> {
        let bytes = (size + MAX_OFFSET).div_ceil(8) * 8;
        Ok(Buffers { src: Private::new(bytes)?, dst: Private::new(bytes)?, size })
    }

    /// (destination, source) windows at the given offsets from the page start.
    pub fn windows(&mut self, src_off: usize, dst_off: usize) -> (&mut [u8], &[u8]) {
        assert!(src_off <= MAX_OFFSET && dst_off <= MAX_OFFSET);
        let n = self.size;
        let s = self.src.words();
        let d = self.dst.words_mut();
        // SAFETY: u64 memory viewed as bytes; offsets + n stay within the
        // buffers (allocated with MAX_OFFSET of slack).
        unsafe {
            (
                std::slice::from_raw_parts_mut(d.as_mut_ptr().cast::<u8>().add(dst_off), n),
                std::slice::from_raw_parts(s.as_ptr().cast::<u8>().add(src_off), n),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::named::Named;

    #[test]
    fn every_implementation_copies_exactly_at_every_offset() {
        for &imp in Impl::ALL {
            for size in [0, 1, 7, 8, 9, 63, 64, 65, 1000, 4096] {
                for (so, dof) in
                    [(0, 0), (1, 0), (4, 0), (8, 0), (32, 0), (64, 0), (0, 1), (0, 4), (0, 8), (0, 32), (0, 64), (1, 1), (3, 5), (64, 64)]
                {
                    let mut b = Buffers::new(size).unwrap();
                    // Fill the source with a pattern and the destination with a marker.
                    let pattern: Vec<u8> = (0..size).map(|i| (i * 7 + 3) as u8).collect();
                    let src_bytes: &mut [u8] = unsafe_bytes_mut(&mut b.src);
                    src_bytes[so..so + size].copy_from_slice(&pattern);
                    unsafe_bytes_mut(&mut b.dst).fill(0xEE);
                    let (d, s) = b.windows(so, dof);
                    copy(imp, d, s);
                    assert_eq!(d, &pattern[..], "{imp:?} size {size} src+{so} dst+{dof}");
                    let dst_all = unsafe_bytes_mut(&mut b.dst);
                    assert!(dst_all[..dof].iter().all(|&x| x == 0xEE), "{imp:?} wrote before the window");
                    assert!(dst_all[dof + size..].iter().all(|&x| x == 0xEE), "{imp:?} wrote past the window");
                }
            }
        }
    }

    fn unsafe_bytes_mut(p: &mut Private) -> &mut [u8] {
        let w = p.words_mut();
        // SAFETY: viewing u64 memory as bytes.
        unsafe { std::slice::from_raw_parts_mut(w.as_mut_ptr().cast::<u8>(), w.len() * 8) }
    }
}
