//! The loader's memory: a bump allocator over 4 MiB of its bss (below the
//! program, so the kernel never hands it out). Nothing is freed; the
//! loader runs once.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicUsize, Ordering};

const SIZE: usize = 4 << 20;

#[repr(C, align(4096))]
struct Arena(UnsafeCell<[u8; SIZE]>);

// SAFETY: one CPU, and the bump below hands out disjoint blocks.
unsafe impl Sync for Arena {}

static ARENA: Arena = Arena(UnsafeCell::new([0; SIZE]));
static NEXT: AtomicUsize = AtomicUsize::new(0);

struct Bump;

// SAFETY: blocks are disjoint, aligned as asked, inside the arena; null
// when the arena is spent.
unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let base = ARENA.0.get() as usize;
        let start = (base + NEXT.load(Ordering::Relaxed)).next_multiple_of(layout.align());
        let end = start + layout.size();
        if end > base + SIZE {
            return core::ptr::null_mut();
        }
        NEXT.store(end - base, Ordering::Relaxed);
        start as *mut u8
    }

    unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {}
}

#[global_allocator]
static BUMP: Bump = Bump;

/// `bytes` of zeroed memory, page aligned, for good (the kernel's stack).
pub fn zeroed_pages(bytes: usize) -> *mut u8 {
    let layout = Layout::from_size_align(bytes, 4096).expect("a page-aligned layout");
    // SAFETY: a non-zero layout; the block is never freed.
    let p = unsafe { alloc::alloc::alloc_zeroed(layout) };
    assert!(!p.is_null(), "the loader's 4 MiB arena is spent");
    p
}
