//! Allocators of fixed-size blocks, as Genode's Pandaboard article compared them: the system
//! allocator, a slab, a bitmap of fixed slots (Genode's packet allocator) and
//! best-fit over an ordered tree of free ranges (Genode's AVL allocator). The
//! workload keeps a live set of blocks and replaces a pseudo-random one per
//! operation: one free and one allocation.

use std::alloc::Layout;
use std::collections::{BTreeMap, BTreeSet};

/// Every block is aligned to this.
pub const ALIGN: usize = 16;

/// A fixed-size block allocator; addresses are plain numbers.
pub trait BlockAllocator {
    fn alloc(&mut self) -> Option<usize>;
    /// `addr` must come from `alloc` and not be freed yet.
    fn free(&mut self, addr: usize);
    /// Bytes per block as placed (the request rounded up to ALIGN).
    fn block(&self) -> usize;
}

crate::named_enum! {
    pub enum Kind {
        System = "system",
        Slab = "slab",
        Bitmap = "bitmap",
        BestFit = "best-fit",
    }
}

impl Kind {
    pub fn description(self) -> &'static str {
        match self {
            Kind::System => "the process's allocator (glibc malloc through Rust's System)",
            Kind::Slab => "fixed-size slab: a free list over 64 KiB chunks",
            Kind::Bitmap => "fixed slots in one arena, a bitmap searched from a rotating hint (Genode's packet allocator)",
            Kind::BestFit => {
                "best fit over free ranges kept in ordered trees by address and size, coalescing on free (Genode's AVL allocator)"
            }
        }
    }
    /// An allocator for blocks of `size` bytes with room for `capacity` blocks
    /// (a hard limit for bitmap and best-fit, a hint for the others).
    pub fn build(self, size: usize, capacity: usize) -> Box<dyn BlockAllocator> {
        let block = size.div_ceil(ALIGN) * ALIGN;
        match self {
            Kind::System => Box::new(System { layout: Layout::from_size_align(block, ALIGN).expect("valid layout") }),
            Kind::Slab => Box::new(Slab::new(block)),
            Kind::Bitmap => Box::new(Bitmap::new(block, capacity)),
            Kind::BestFit => Box::new(BestFit::new(block, capacity)),
        }
    }
}

/// The arena's room in blocks for a live set: twice the live set when half
/// full, 1% spare (at least one slot) when nearly full.
pub fn capacity(live: usize, nearly_full: bool) -> usize {
    if nearly_full { live + (live / 100).max(1) } else { 2 * live }
}

struct System {
    layout: Layout,
}

impl BlockAllocator for System {
    fn alloc(&mut self) -> Option<usize> {
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc(self.layout) };
        (!p.is_null()).then_some(p as usize)
    }
    fn free(&mut self, addr: usize) {
        // SAFETY: addr came from alloc with the same layout.
        unsafe { std::alloc::dealloc(addr as *mut u8, self.layout) }
    }
    fn block(&self) -> usize {
        self.layout.size()
    }
}

/// Memory from the system, freed on drop.
struct Arena {
    base: *mut u8,
    layout: Layout,
}

impl Arena {
    fn new(bytes: usize) -> Arena {
        let layout = Layout::from_size_align(bytes.max(ALIGN), 64).expect("valid layout");
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { std::alloc::alloc(layout) };
        assert!(!base.is_null(), "out of memory for an arena of {bytes} bytes");
        Arena { base, layout }
    }
    fn addr(&self) -> usize {
        self.base as usize
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.base, self.layout) }
    }
}

const SLAB_CHUNK: usize = 64 * 1024;

struct Slab {
    block: usize,
    chunks: Vec<Arena>,
    free: Vec<usize>,
}

impl Slab {
    fn new(block: usize) -> Slab {
        Slab { block, chunks: Vec::new(), free: Vec::new() }
    }
}

impl BlockAllocator for Slab {
    fn alloc(&mut self) -> Option<usize> {
        if self.free.is_empty() {
            let per_chunk = (SLAB_CHUNK / self.block).max(1);
            let chunk = Arena::new(per_chunk * self.block);
            // Push in reverse so the lowest address comes out first.
            self.free.extend((0..per_chunk).rev().map(|i| chunk.addr() + i * self.block));
            self.chunks.push(chunk);
        }
        self.free.pop()
    }
    fn free(&mut self, addr: usize) {
        self.free.push(addr);
    }
    fn block(&self) -> usize {
        self.block
    }
}

/// Fixed slots found through a bitmap, in its own arena or over a range of
/// addresses it does not own (offsets into a shared buffer, say).
pub struct Bitmap {
    block: usize,
    base: usize,
    _arena: Option<Arena>,
    bits: Vec<u64>,
    slots: usize,
    hint: usize,
}

impl Bitmap {
    fn new(block: usize, slots: usize) -> Bitmap {
        let arena = Arena::new(block * slots);
        Bitmap { block, base: arena.addr(), _arena: Some(arena), bits: vec![0; slots.div_ceil(64)], slots, hint: 0 }
    }

    /// Slots of `block` bytes at base, base + block, ... (nothing is allocated).
    pub fn over(base: usize, block: usize, slots: usize) -> Bitmap {
        Bitmap { block, base, _arena: None, bits: vec![0; slots.div_ceil(64)], slots, hint: 0 }
    }
}

impl BlockAllocator for Bitmap {
    fn alloc(&mut self) -> Option<usize> {
        let words = self.bits.len();
        for k in 0..words {
            let w = (self.hint + k) % words;
            let free = !self.bits[w];
            if free == 0 {
                continue;
            }
            let bit = free.trailing_zeros() as usize;
            let slot = w * 64 + bit;
            if slot >= self.slots {
                continue;
            }
            self.bits[w] |= 1 << bit;
            self.hint = w;
            return Some(self.base + slot * self.block);
        }
        None
    }
    fn free(&mut self, addr: usize) {
        let slot = (addr - self.base) / self.block;
        self.bits[slot / 64] &= !(1 << (slot % 64));
    }
    fn block(&self) -> usize {
        self.block
    }
}

struct BestFit {
    block: usize,
    arena: Arena,
    /// Free ranges by start address -> length.
    by_addr: BTreeMap<usize, usize>,
    /// The same ranges by (length, start), for best fit.
    by_size: BTreeSet<(usize, usize)>,
}

impl BestFit {
    fn new(block: usize, capacity: usize) -> BestFit {
        let arena = Arena::new(block * capacity);
        let mut b = BestFit { block, by_addr: BTreeMap::new(), by_size: BTreeSet::new(), arena };
        b.insert(b.arena.addr(), block * capacity);
        b
    }
    fn insert(&mut self, start: usize, len: usize) {
        self.by_addr.insert(start, len);
        self.by_size.insert((len, start));
    }
    fn remove(&mut self, start: usize, len: usize) {
        self.by_addr.remove(&start);
        self.by_size.remove(&(len, start));
    }
}

impl BlockAllocator for BestFit {
    fn alloc(&mut self) -> Option<usize> {
        let &(len, start) = self.by_size.range((self.block, 0)..).next()?;
        self.remove(start, len);
        if len > self.block {
            self.insert(start + self.block, len - self.block);
        }
        Some(start)
    }
    fn free(&mut self, addr: usize) {
        let (mut start, mut len) = (addr, self.block);
        // Coalesce with the free range just before and just after, if adjacent.
        if let Some((&ps, &pl)) = self.by_addr.range(..addr).next_back()
            && ps + pl == addr
        {
            self.remove(ps, pl);
            start = ps;
            len += pl;
        }
        if let Some((&ns, &nl)) = self.by_addr.range(addr + self.block..).next()
            && ns == addr + self.block
        {
            self.remove(ns, nl);
            len += nl;
        }
        self.insert(start, len);
    }
    fn block(&self) -> usize {
        self.block
    }
}

/// The workload: `live` blocks kept allocated; each operation frees a
/// pseudo-random one and allocates its replacement.
pub struct Workload {
    alloc: Box<dyn BlockAllocator>,
    live: Vec<usize>,
    rng: u64,
}

impl Workload {
    pub fn new(alloc: Box<dyn BlockAllocator>, live: usize) -> Option<Workload> {
        let mut w = Workload { alloc, live: Vec::with_capacity(live), rng: 0x2545_F491_4F6C_DD1D };
        for _ in 0..live {
            let a = w.alloc.alloc()?;
            w.live.push(a);
        }
        Some(w)
    }

    /// `n` free + allocate pairs; None if the allocator ran out.
    pub fn pairs(&mut self, n: u64) -> Option<()> {
        for _ in 0..n {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            let i = (self.rng % self.live.len() as u64) as usize;
            self.alloc.free(self.live[i]);
            self.live[i] = self.alloc.alloc()?;
            // Touch the block as a user would.
            // SAFETY: the block is live and at least ALIGN bytes long.
            unsafe { (self.live[i] as *mut u64).write_volatile(i as u64) };
        }
        Some(())
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        for &a in &self.live {
            self.alloc.free(a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::named::Named;

    /// The same property test for every allocator: random allocations and
    /// frees never overlap a live block, keep alignment, and freed memory is
    /// used again.
    #[test]
    fn every_allocator_keeps_blocks_apart_aligned_and_reused() {
        for &kind in Kind::ALL {
            for size in [64, 256, 1500, 4096] {
                let capacity = 200;
                let mut a = kind.build(size, capacity);
                let block = a.block();
                assert!(block >= size && block % ALIGN == 0);
                let mut live: BTreeMap<usize, ()> = BTreeMap::new();
                let mut freed: Vec<usize> = Vec::new();
                let mut reused = 0;
                let mut rng = 12345u64;
                for step in 0..5000 {
                    rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let grow = live.len() < 20 || !(rng >> 33).is_multiple_of(3) && live.len() < capacity;
                    if grow {
                        let Some(p) = a.alloc() else { panic!("{kind:?} {size}: out of space at {} live blocks", live.len()) };
                        assert_eq!(p % ALIGN, 0, "{kind:?}: misaligned block");
                        // No overlap with the live neighbours on either side.
                        if let Some((&prev, _)) = live.range(..=p).next_back() {
                            assert!(prev + block <= p, "{kind:?} {size}: {p:#x} overlaps {prev:#x} (step {step})");
                        }
                        if let Some((&next, _)) = live.range(p..).next() {
                            assert!(p + block <= next, "{kind:?} {size}: {p:#x} overlaps {next:#x} (step {step})");
                        }
                        if freed.contains(&p) {
                            reused += 1;
                        }
                        // SAFETY: the block is ours and `block` bytes long.
                        unsafe { std::ptr::write_bytes(p as *mut u8, 0xAB, block) };
                        live.insert(p, ());
                    } else {
                        let &p = live.keys().nth((rng >> 40) as usize % live.len()).unwrap();
                        live.remove(&p);
                        a.free(p);
                        freed.push(p);
                    }
                }
                assert!(reused > 0, "{kind:?} {size}: freed memory was never used again");
                for p in live.keys() {
                    a.free(*p);
                }
            }
        }
    }

    #[test]
    fn bounded_allocators_refuse_past_capacity_and_refill_after_free() {
        for kind in [Kind::Bitmap, Kind::BestFit] {
            let mut a = kind.build(100, 10);
            let got: Vec<usize> = (0..10).map(|_| a.alloc().unwrap()).collect();
            assert!(a.alloc().is_none(), "{kind:?} gave more than its capacity");
            got.iter().for_each(|&p| a.free(p));
            assert_eq!((0..10).filter_map(|_| a.alloc()).count(), 10, "{kind:?} did not coalesce / clear after free");
        }
    }

    #[test]
    fn the_workload_keeps_its_live_set() {
        for &kind in Kind::ALL {
            let mut w = Workload::new(kind.build(64, 110), 100).unwrap();
            w.pairs(1000).unwrap();
            assert_eq!(w.live.len(), 100);
        }
    }
}
