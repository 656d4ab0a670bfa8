//! Bounded waiting. A per-thread POSIX timer interrupts a blocked system call
//! (SIGALRM without SA_RESTART, so the call returns EINTR) when a case runs
//! past its deadline; SIGINT and SIGTERM set a process-wide flag so that a run
//! stops after saving what it has measured. Wait loops call `check()` when a
//! call returns EINTR and while they spin.

use std::cell::Cell;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INTERRUPT_SIGNAL: AtomicI32 = AtomicI32::new(0);
static INSTALL: Once = Once::new();

/// How often (in operations) busy loops poll `check()`.
pub const POLL_EVERY: u64 = 1024;

thread_local! {
    static EXPIRED: Cell<bool> = const { Cell::new(false) };
    /// When the innermost armed deadline of this thread falls due.
    static DUE: Cell<Option<std::time::Instant>> = const { Cell::new(None) };
}

/// Time left before the calling thread's deadline, if one is armed.
pub fn remaining() -> Option<Duration> {
    DUE.with(|d| d.get()).map(|due| due.saturating_duration_since(std::time::Instant::now()))
}

/// Why a wait was abandoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    TimedOut,
    Interrupted,
}

impl Stop {
    pub fn describe(self) -> &'static str {
        match self {
            Stop::TimedOut => "timed out: the case would not finish within --timeout",
            Stop::Interrupted => "interrupted by a signal",
        }
    }
}

impl From<Stop> for std::io::Error {
    fn from(s: Stop) -> Self {
        let kind = match s {
            Stop::TimedOut => std::io::ErrorKind::TimedOut,
            Stop::Interrupted => std::io::ErrorKind::Interrupted,
        };
        std::io::Error::new(kind, s.describe())
    }
}

impl From<Stop> for String {
    fn from(s: Stop) -> Self {
        s.describe().to_string()
    }
}

extern "C" fn on_alarm(_: libc::c_int) {
    // A const-initialised thread-local without destructor is a plain TLS
    // access: safe in a signal handler of the thread it belongs to.
    EXPIRED.with(|e| e.set(true));
}

extern "C" fn on_interrupt(sig: libc::c_int) {
    INTERRUPT_SIGNAL.store(sig, Ordering::Relaxed);
    INTERRUPTED.store(true, Ordering::SeqCst);
}

fn install_handler(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // SAFETY: a zeroed sigaction is valid; the handler is async-signal-safe
    // (it only stores to atomics / thread-local cells). No SA_RESTART, so
    // blocking calls return EINTR.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = 0;
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// Installs the signal handlers (once per process).
pub fn install() {
    INSTALL.call_once(|| {
        install_handler(libc::SIGALRM, on_alarm);
        install_handler(libc::SIGINT, on_interrupt);
        install_handler(libc::SIGTERM, on_interrupt);
    });
}

/// Whether SIGINT or SIGTERM arrived; the signal number if so.
pub fn interrupted() -> Option<i32> {
    INTERRUPTED.load(Ordering::Relaxed).then(|| INTERRUPT_SIGNAL.load(Ordering::Relaxed))
}

/// Ok while the calling thread's deadline has not passed and no interrupt
/// arrived. Loops that may run long without blocking call this every
/// `POLL_EVERY` operations.
#[inline]
pub fn check() -> Result<(), Stop> {
    if EXPIRED.with(|e| e.get()) {
        return Err(Stop::TimedOut);
    }
    if INTERRUPTED.load(Ordering::Relaxed) {
        return Err(Stop::Interrupted);
    }
    Ok(())
}

/// Blocks SIGINT and SIGTERM in the calling thread, so that they reach the
/// main thread (helper threads call this first).
pub fn block_interrupts_in_this_thread() {
    // SAFETY: the set is initialised by sigemptyset before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Makes the child `cmd` starts die (SIGKILL) when this process dies, however
/// it dies, SIGKILL included: PR_SET_PDEATHSIG, and an exit at once if the
/// parent is already gone by the time the child sets it. The death signal
/// follows the thread that spawned the child: spawn from a thread that lives
/// as long as the child should (the main thread).
pub fn die_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and calls only prctl,
    // getppid and _exit, which are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// A process that kills a process group when this process dies, however it
/// dies (SIGKILL included), and is itself ended on drop. For a child whose
/// own children outlive it (User-Mode Linux's helper processes are forked
/// by its kernel process, so its PR_SET_PDEATHSIG does not reach them):
/// the child leads a group of its own, and the whole group goes.
pub struct GroupGuard {
    pid: libc::pid_t,
}

/// Starts the guard of process group `group` (see [`GroupGuard`]): a fork of
/// this process that holds no file of it, waits for its parent's death
/// signal and then kills the group. Call it from the thread that started
/// the group's leader (the death signal follows that thread, as
/// [`die_with_parent`]'s does).
pub fn guard_group(group: libc::pid_t) -> std::io::Result<GroupGuard> {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: after fork the child calls only async-signal-safe functions
    // (sigemptyset, sigaddset, sigprocmask, signal, syscall, close, prctl, getppid,
    // sigwaitinfo, kill, _exit) and never returns; the parent only reads
    // fork's result.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if pid == 0 {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGUSR2);
            libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            // A terminal's ^C reaches oscycles' whole group: oscycles ends the
            // child itself then; the guard stays for a later SIGKILL.
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                libc::signal(sig, libc::SIG_IGN);
            }
            // No file of oscycles' held open (its output pipes, its store).
            if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
                for fd in 0..4096 {
                    libc::close(fd);
                }
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGUSR2);
            while libc::getppid() == parent {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                if libc::sigwaitinfo(&set, &mut info) == libc::SIGUSR2 {
                    break;
                }
            }
            libc::kill(-group, libc::SIGKILL);
            libc::_exit(0);
        }
        Ok(GroupGuard { pid })
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        // SAFETY: kill and waitpid take no pointers but a null status; the
        // pid is this process' own child, not yet reaped (only this drop
        // reaps it), so it names no other process.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
}

/// A deadline for the calling thread; disarmed on drop. Deadlines nest: an
/// inner one (a case's own) replaces the outer (the runner's) until dropped.
pub struct Deadline {
    timer: libc::timer_t,
    outer_due: Option<std::time::Instant>,
    outer_expired: bool,
}

impl Deadline {
    pub fn arm(after: Duration) -> std::io::Result<Deadline> {
        install();
        let outer_expired = EXPIRED.with(|e| e.replace(false));
        let due = std::time::Instant::now() + after;
        let outer_due = DUE.with(|d| d.replace(Some(d.get().map_or(due, |o| o.min(due)))));
        // SAFETY: sigevent is zeroed then filled for SIGEV_THREAD_ID, which
        // targets the calling thread (gettid); timer_create writes the id.
        unsafe {
            let mut sev: libc::sigevent = std::mem::zeroed();
            sev.sigev_notify = libc::SIGEV_THREAD_ID;
            sev.sigev_signo = libc::SIGALRM;
            sev.sigev_notify_thread_id = libc::gettid();
            let mut timer: libc::timer_t = std::mem::zeroed();
            if libc::timer_create(libc::CLOCK_MONOTONIC, &mut sev, &mut timer) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // After the deadline the timer keeps firing every 50 ms, so that a
            // call that blocks after the first signal (which may have landed
            // while the thread ran user code) is interrupted too.
            let its = libc::itimerspec {
                it_interval: libc::timespec { tv_sec: 0, tv_nsec: 50_000_000 },
                it_value: libc::timespec { tv_sec: after.as_secs() as libc::time_t, tv_nsec: after.subsec_nanos().max(1) as libc::c_long },
            };
            if libc::timer_settime(timer, 0, &its, std::ptr::null_mut()) != 0 {
                let e = std::io::Error::last_os_error();
                libc::timer_delete(timer);
                DUE.with(|d| d.set(outer_due));
                EXPIRED.with(|e| e.set(outer_expired));
                return Err(e);
            }
            Ok(Deadline { timer, outer_due, outer_expired })
        }
    }
}

impl Deadline {
    /// Whether this deadline (or an outer one) has passed.
    pub fn passed(&self) -> bool {
        EXPIRED.with(|e| e.get()) || remaining() == Some(Duration::ZERO)
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        // SAFETY: the timer was created by timer_create and is deleted once.
        unsafe { libc::timer_delete(self.timer) };
        DUE.with(|d| d.set(self.outer_due));
        // An outer deadline that passed meanwhile is still passed.
        let outer_passed = self.outer_expired || self.outer_due.is_some_and(|due| due <= std::time::Instant::now());
        EXPIRED.with(|e| e.set(outer_passed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_interrupts_a_blocking_read() {
        let mut fds = [0i32; 2];
        // SAFETY: fds has room for the two descriptors pipe() writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let _d = Deadline::arm(Duration::from_millis(50)).unwrap();
        let mut b = [0u8; 1];
        // SAFETY: b is a valid 1-byte buffer; nobody writes to the pipe, so
        // read blocks until the timer's signal interrupts it.
        let rc = unsafe { libc::read(fds[0], b.as_mut_ptr().cast(), 1) };
        let err = std::io::Error::last_os_error().raw_os_error();
        assert_eq!(rc, -1);
        assert_eq!(err, Some(libc::EINTR));
        assert_eq!(check(), Err(Stop::TimedOut));
        drop(_d);
        assert_eq!(check(), Ok(()));
        // SAFETY: closing the descriptors pipe() returned.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }
}
