//! System-call cost: the null calls through the `syscall` instruction, the
//! vDSO's clock_gettime, and the smallest read and write; and lmbench's
//! `lat_syscall null`, getppid() called through the C library in a plain loop.

pub mod family;
pub mod schema;
pub mod table;

use crate::measure::arch::syscall3;
use std::os::fd::AsRawFd;

crate::named_enum! {
    pub enum Syscall {
        Null = "null",
        Getpid = "getpid",
        Getppid = "getppid",
        SchedYield = "sched_yield",
        ClockGettime = "clock_gettime",
        Read = "read",
        Write = "write",
    }
}

impl Syscall {
    pub fn description(self) -> &'static str {
        match self {
            Syscall::Null => "lat_syscall null: getppid() through the C library's wrapper, in a plain loop",
            Syscall::Getpid => "getpid through the syscall instruction (no C-library wrapper or cache)",
            Syscall::Getppid => "getppid through the syscall instruction",
            Syscall::SchedYield => "sched_yield through the syscall instruction, alone on its CPU",
            Syscall::ClockGettime => "clock_gettime(CLOCK_MONOTONIC) through the C library (the vDSO: no kernel entry)",
            Syscall::Read => "read of 1 byte from /dev/zero through the syscall instruction",
            Syscall::Write => "write of 1 byte to /dev/null through the syscall instruction",
        }
    }
}

/// A ready-to-call system call: the files it needs are open.
pub struct Prepared {
    call: Syscall,
    file: Option<std::fs::File>,
}

impl Prepared {
    pub fn new(call: Syscall) -> std::io::Result<Self> {
        let file = match call {
            Syscall::Read => Some(std::fs::File::open("/dev/zero")?),
            Syscall::Write => Some(std::fs::OpenOptions::new().write(true).open("/dev/null")?),
            _ => None,
        };
        Ok(Prepared { call, file })
    }

    /// Makes the call `n` times; fails on the first error the kernel
    /// returns, or when the run is interrupted.
    pub fn run(&self, n: u64) -> std::io::Result<()> {
        let mut byte = [0u8; 1];
        let fd = self.file.as_ref().map_or(-1, |f| f.as_raw_fd()) as u64;
        for i in 0..n {
            if i % crate::measure::watchdog::POLL_EVERY == 0 && crate::measure::watchdog::check().is_err() {
                return Err(std::io::Error::from_raw_os_error(libc::EINTR));
            }
            let r = match self.call {
                // SAFETY: getppid takes no arguments and cannot fail.
                Syscall::Null => i64::from(unsafe { libc::getppid() }),
                // SAFETY: getpid, getppid and sched_yield take no arguments.
                Syscall::Getpid => unsafe { syscall3(libc::SYS_getpid, 0, 0, 0) },
                // SAFETY: as above.
                Syscall::Getppid => unsafe { syscall3(libc::SYS_getppid, 0, 0, 0) },
                // SAFETY: as above.
                Syscall::SchedYield => unsafe { syscall3(libc::SYS_sched_yield, 0, 0, 0) },
                Syscall::ClockGettime => {
                    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
                    // SAFETY: ts is a valid out-pointer.
                    let r = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
                    std::hint::black_box(ts);
                    if r == 0 { 0 } else { -(std::io::Error::last_os_error().raw_os_error().unwrap_or(1) as i64) }
                }
                // SAFETY: fd is /dev/zero, open for reading; byte is a valid 1-byte buffer.
                Syscall::Read => unsafe { syscall3(libc::SYS_read, fd, byte.as_mut_ptr() as u64, 1) },
                // SAFETY: fd is /dev/null, open for writing; byte is a valid 1-byte buffer.
                Syscall::Write => unsafe { syscall3(libc::SYS_write, fd, byte.as_ptr() as u64, 1) },
            };
            if r < 0 {
                return Err(std::io::Error::from_raw_os_error(-r as i32));
            }
        }
        std::hint::black_box(&mut byte);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::named::Named;

    #[test]
    fn raw_getpid_agrees_with_the_c_library() {
        // SAFETY: getpid takes no arguments.
        let raw = unsafe { syscall3(libc::SYS_getpid, 0, 0, 0) };
        assert_eq!(raw as u32, std::process::id());
    }

    #[test]
    fn every_call_succeeds() {
        for &c in Syscall::ALL {
            Prepared::new(c).unwrap().run(3).unwrap();
        }
    }

    #[test]
    fn read_gets_a_zero_byte() {
        let p = Prepared::new(Syscall::Read).unwrap();
        let mut b = [0xffu8; 1];
        let fd = p.file.as_ref().unwrap().as_raw_fd() as u64;
        // SAFETY: fd is /dev/zero; b is a valid 1-byte buffer.
        let r = unsafe { syscall3(libc::SYS_read, fd, b.as_mut_ptr() as u64, 1) };
        assert_eq!((r, b[0]), (1, 0));
    }
}
