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
}

impl Private {
    pub fn new(bytes: usize) -> io::Result<Private> {
        let words = bytes / 8;
        if words == 0 {
            return Ok(Private { ptr: std::ptr::NonNull::dangling().as_ptr(), words: 0 });
        }
        // SAFETY: anonymous private mapping, checked against MAP_FAILED.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), words * 8, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut m = Private { ptr: p.cast(), words };
        for (i, w) in m.words_mut().iter_mut().enumerate() {
            *w = i as u64;
        }
        Ok(m)
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

    /// Reads every word (lmbench's "sum" of the working set).
    #[inline(never)]
    pub fn touch(&self) -> u64 {
        self.words().iter().fold(0u64, |a, &w| a.wrapping_add(w))
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        if self.words > 0 {
            // SAFETY: unmapping the region mapped in `new`, once.
            unsafe { libc::munmap(self.ptr.cast(), self.words * 8) };
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
    }
}
