//! Shared anonymous memory that stays shared across fork(), holding one value
//! of type T.

use crate::families::bench::toolkit::fds::IpcError;
use std::ptr::NonNull;

pub struct Shared<T> {
    ptr: NonNull<T>,
}

// SAFETY: T is only reached through &T; T's own Sync bound governs sharing.
unsafe impl<T: Sync> Sync for Shared<T> {}
// SAFETY: the mapping may be used from any thread; dropping it from another
// thread is fine.
unsafe impl<T: Sync> Send for Shared<T> {}

impl<T> Shared<T> {
    pub fn new(value: T) -> Result<Self, IpcError> {
        let len = std::mem::size_of::<T>().max(1);
        // SAFETY: anonymous shared mapping with no address hint; the result is
        // checked against MAP_FAILED. mmap returns page-aligned memory, which
        // satisfies T's alignment (at most 64 here).
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0)
        };
        if p == libc::MAP_FAILED {
            return Err(IpcError::last("mmap"));
        }
        let ptr = NonNull::new(p.cast::<T>()).expect("mmap never returns NULL on success");
        // SAFETY: the mapping is fresh, large enough and aligned for T.
        unsafe { ptr.as_ptr().write(value) };
        Ok(Shared { ptr })
    }

    pub fn get(&self) -> &T {
        // SAFETY: the pointer was initialised in `new` and lives until drop.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // SAFETY: unmapping the region mapped in `new`, once. T's destructor
        // is not run: shared values here are plain atomics and buffers.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), std::mem::size_of::<T>().max(1)) };
    }
}
