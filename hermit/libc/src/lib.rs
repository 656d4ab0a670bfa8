//! `libc::memcpy` for the Hermit program: oscycles' `src/families/bench/memcpy/measure.rs`
//! names the C library's memcpy; a Hermit program has no C library, and the
//! memcpy it links is the one its kernel exports (compiler-builtins' `mem`
//! implementation, kept unprefixed by scripts/setup-hermit). This crate
//! gives that symbol the name the shared source calls.
#![no_std]

pub use core::ffi::c_void;

unsafe extern "C" {
    #[link_name = "memcpy"]
    fn linked_memcpy(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void;
}

/// The linked memcpy.
///
/// # Safety
/// As C's memcpy: both ranges valid for `n` bytes, not overlapping.
pub unsafe fn memcpy(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller keeps C's contract.
    unsafe { linked_memcpy(dst, src, n) }
}
