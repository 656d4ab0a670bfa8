//! Forked children that measure alongside the parent. The child runs one
//! closure that must neither allocate nor take locks (the parent may have
//! other threads), dies with its parent, and leaves with _exit.

use std::io;

/// Forks; the child runs `body` and exits with its return value.
pub fn fork_child(body: impl FnOnce() -> i32) -> io::Result<i32> {
    // SAFETY: in the child only `body` runs, which the caller guarantees is
    // fork-safe, then _exit (no destructors, no atexit handlers).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: PR_SET_PDEATHSIG takes a signal number; _exit never returns.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            libc::_exit(body());
        }
    }
    Ok(pid)
}

/// Waits for a child, retrying after EINTR; returns the raw wait status.
pub fn reap(pid: i32) -> io::Result<i32> {
    let mut status = 0;
    loop {
        // SAFETY: status is a valid out-pointer; pid is our child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Kills a child (ignoring one that is already gone) and reaps it.
pub fn kill_and_reap(pid: i32) {
    // SAFETY: pid is our own child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let _ = reap(pid);
}

/// Whether a wait status says the child exited with `code`.
pub fn exited_with(status: i32, code: i32) -> bool {
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == code
}

/// An anonymous private mapping of `bytes`, written once so that every page
/// is the caller's own; unmapped on drop. Safe to create in a forked child.
pub struct Private {
    ptr: *mut u64,
    words: usize,
    /// Bytes to unmap from `ptr` (the words, and a gap after them).
    mapped: usize,
}

impl Private {
    pub fn new(bytes: usize) -> io::Result<Private> {
        Ok(Private::pair(bytes, 0, false)?.0)
    }

    /// Two buffers of `bytes`, the first `bytes + gap` above the second in
    /// one mapping: where two back-to-back mallocs of that size put them
    /// (lmbench's bw_mem: 8 KiB apart beyond the buffer). Two separate
    /// mappings would lie exactly `bytes` apart, and a copy between
    /// addresses that far apart in a power of two collides in the caches
    /// (about 30% slower here). `second`: whether to make the second.
    pub fn pair(bytes: usize, gap: usize, second: bool) -> io::Result<(Private, Option<Private>)> {
        let words = bytes / 8;
        if words == 0 {
            let empty = || Private { ptr: std::ptr::NonNull::dangling().as_ptr(), words: 0, mapped: 0 };
            return Ok((empty(), second.then(empty)));
        }
        let (len, gap) = (words * 8, gap.next_multiple_of(4096));
        let total = if second { 2 * len + gap } else { len };
        // SAFETY: anonymous private mapping, checked against MAP_FAILED.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), total, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let p: *mut u8 = p.cast();
        // The first owns the top `len` bytes, the second the rest (its
        // words, then the gap); each unmaps its own part.
        let top = if second { len + gap } else { 0 };
        // SAFETY: `top + len` is within the `total` bytes just mapped.
        let mut first = Private { ptr: unsafe { p.add(top) }.cast(), words, mapped: len };
        first.fill();
        let rest = second.then(|| {
            let mut r = Private { ptr: p.cast(), words, mapped: len + gap };
            r.fill();
            r
        });
        Ok((first, rest))
    }

    /// Writes every word once, so that every page is the caller's own.
    fn fill(&mut self) {
        for (i, w) in self.words_mut().iter_mut().enumerate() {
            *w = i as u64;
        }
    }

    pub fn words(&self) -> &[u64] {
        // SAFETY: ptr covers `words` initialised u64s (or is dangling with 0).
        unsafe { std::slice::from_raw_parts(self.ptr, self.words) }
    }

    pub fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: ptr covers `words` initialised u64s, and &mut self makes
        // this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.words) }
    }

    /// The buffer as bytes (page-aligned: a read(2) into it copies as into
    /// lmbench's valloc()ed buffer).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: u64 memory viewed as u8, which every bit pattern is; the
        // borrow is exclusive.
        unsafe { self.words_mut().align_to_mut::<u8>().1 }
    }

    /// Reads every word (lmbench's "sum" of the working set).
    #[inline(never)]
    pub fn touch(&self) -> u64 {
        self.words().iter().fold(0u64, |a, &w| a.wrapping_add(w))
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        if self.mapped > 0 {
            // SAFETY: unmapping this buffer's part of the mapping made in
            // `pair`, once.
            unsafe { libc::munmap(self.ptr.cast(), self.mapped) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_exit_code_reaches_the_parent() {
        let pid = fork_child(|| 42).unwrap();
        assert!(exited_with(reap(pid).unwrap(), 42));
    }

    #[test]
    fn private_memory_is_written_and_summed() {
        let m = Private::new(4096).unwrap();
        assert_eq!(m.words().len(), 512);
        assert_eq!(m.touch(), (0..512u64).sum::<u64>());
        assert_eq!(Private::new(0).unwrap().touch(), 0);
        let (a, b) = Private::pair(3 * 4096, 100, true).unwrap();
        let mut b = b.unwrap();
        assert_eq!(
            a.words().as_ptr() as usize - b.words().as_ptr() as usize,
            3 * 4096 + 4096,
            "the first above the second, the gap in pages"
        );
        b.words_mut().fill(7);
        assert_eq!((a.touch(), b.touch()), ((0..3 * 512).sum::<u64>(), 7 * 3 * 512), "two buffers, neither writing into the other");
        assert!(Private::pair(4096, 8192, false).unwrap().1.is_none());
    }
}
