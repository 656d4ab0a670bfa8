//! Process and thread creation, as lmbench's lat_proc: procedure call,
//! fork+exit+wait, fork+exec, posix_spawn, vfork+exec, thread create+join.
//! lmbench forks its own small, dynamically linked process, whose child
//! leaves through the C library's exit(): `fork-dynamic` has such a process
//! (helpers/fork-dynamic.c, built by build.rs) fork on request; `fork`
//! forks this static process, whose child calls _exit.
//! lmbench's exec runs a dynamically linked hello-world; `exec-dynamic` runs
//! the system's /bin/true (dynamically linked, exits 0) the same way: the
//! loader and the C library's start-up are in the cost. The other exec
//! kinds run a 132-byte static ELF that oscycles writes itself: it exits
//! with status 7 and does nothing else, so exec cost is the kernel's, not a
//! dynamic loader's.

use super::child;
use std::ffi::CString;
use std::io::{self, Write};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcOp {
    Procedure,
    ForkDynamic,
    Fork,
    ForkExec,
    ExecDynamic,
    Spawn,
    VforkExec,
    Thread,
}

/// The exit status of the tiny helper; checked after every exec.
pub const HELPER_STATUS: i32 = 7;

impl ProcOp {
    pub const ALL: [ProcOp; 8] = [
        ProcOp::Procedure,
        ProcOp::ForkDynamic,
        ProcOp::Fork,
        ProcOp::ForkExec,
        ProcOp::ExecDynamic,
        ProcOp::Spawn,
        ProcOp::VforkExec,
        ProcOp::Thread,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProcOp::Procedure => "procedure",
            ProcOp::ForkDynamic => "fork-dynamic",
            ProcOp::Fork => "fork",
            ProcOp::ForkExec => "exec",
            ProcOp::ExecDynamic => "exec-dynamic",
            ProcOp::Spawn => "spawn",
            ProcOp::VforkExec => "vfork-exec",
            ProcOp::Thread => "thread",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            ProcOp::Procedure => "a call of a function the compiler may not inline",
            ProcOp::ForkDynamic => {
                "lat_proc fork: a small dynamically linked C process forks, its child exit()s, it waits (n forks a request, over a pipe)"
            }
            ProcOp::Fork => "fork of this static process, child _exit, parent waitpid",
            ProcOp::ForkExec => "fork, child execve of a tiny static ELF, parent waitpid",
            ProcOp::ExecDynamic => "lat_proc exec: fork, child closes stdout and execve's /bin/true (dynamically linked), parent waitpid",
            ProcOp::Spawn => "posix_spawn of the tiny static ELF, waitpid",
            ProcOp::VforkExec => "clone(CLONE_VM|CLONE_VFORK) + execve of the tiny static ELF, waitpid",
            ProcOp::Thread => "std::thread::spawn of an empty closure + join",
        }
    }
}

/// The tiny helper: ELF64 header, one PT_LOAD program header, 9 bytes of code
/// (`mov edi, 7; mov eax, 60; syscall`).
pub fn helper_elf() -> Vec<u8> {
    const BASE: u64 = 0x40_0000;
    const CODE: [u8; 12] = [0xbf, 7, 0, 0, 0, 0xb8, 60, 0, 0, 0, 0x0f, 0x05];
    let total = (64 + 56 + CODE.len()) as u64;
    let mut e = Vec::with_capacity(total as usize);
    e.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    e.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    e.extend_from_slice(&0x3eu16.to_le_bytes()); // x86-64
    e.extend_from_slice(&1u32.to_le_bytes()); // EV_CURRENT
    e.extend_from_slice(&(BASE + 120).to_le_bytes()); // entry: the code after the headers
    e.extend_from_slice(&64u64.to_le_bytes()); // program headers right after this header
    e.extend_from_slice(&0u64.to_le_bytes()); // no section headers
    e.extend_from_slice(&0u32.to_le_bytes()); // flags
    for v in [64u16, 56, 1, 0, 0, 0] {
        // header size, phdr size, 1 phdr, no shdrs
        e.extend_from_slice(&v.to_le_bytes());
    }
    e.extend_from_slice(&1u32.to_le_bytes()); // PT_LOAD
    e.extend_from_slice(&5u32.to_le_bytes()); // R+X
    e.extend_from_slice(&0u64.to_le_bytes()); // offset 0: the whole file
    e.extend_from_slice(&BASE.to_le_bytes());
    e.extend_from_slice(&BASE.to_le_bytes());
    e.extend_from_slice(&total.to_le_bytes());
    e.extend_from_slice(&total.to_le_bytes());
    e.extend_from_slice(&0x1000u64.to_le_bytes());
    e.extend_from_slice(&CODE);
    e
}

/// The helper written to a file in a private directory (0700, made with
/// mkdtemp) of its own, created exclusively and never reopened for
/// writing: no other user can replace what root executes. Removed on drop.
///
/// A forked child writes it, so this process never holds a writable
/// descriptor to it: a child another thread forks meanwhile (a test's, a
/// ring's) would inherit that descriptor and keep the file busy (exec
/// fails with ETXTBSY) for as long as that child lives.
pub struct Helper {
    _dir: tempfile::TempDir,
    c_path: CString,
}

impl Helper {
    pub fn create(dir: &Path) -> io::Result<Helper> {
        Helper::write(dir, "exit7", &helper_elf())
    }

    /// `bytes` as the executable `name` in a private directory under `dir`.
    fn write(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<Helper> {
        let private = tempfile::Builder::new()
            .prefix("oscycles-exec-")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(dir)?;
        let c_path = Helper::write_at(private.path(), name, bytes)?;
        Ok(Helper { _dir: private, c_path })
    }

    /// `bytes` as the new executable `dir/name`, written by a child.
    fn write_at(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<CString> {
        let path = dir.join(name);
        let c_path = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| io::Error::other("path with a NUL byte"))?;
        let status = child::reap(child::fork_child(|| write_in_child(&c_path, bytes))?)?;
        if !child::exited_with(status, 0) {
            let errno = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { libc::EIO };
            return Err(io::Error::from_raw_os_error(errno));
        }
        Ok(c_path)
    }
}

/// Creates `path` exclusively (0700, never through a symlink) and writes
/// `bytes` to it; returns 0 or the errno. Allocation-free: it runs in a
/// forked child.
fn write_in_child(path: &CString, bytes: &[u8]) -> i32 {
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: path is NUL-terminated; the mode is passed as open's third argument.
    let fd = unsafe { libc::open(path.as_ptr(), flags, 0o700 as libc::c_uint) };
    // SAFETY: errno of this thread.
    let errno = || unsafe { *libc::__errno_location() };
    if fd < 0 {
        return errno();
    }
    let wrote = super::ipc::fd::write_all(fd, bytes);
    // SAFETY: fd is this function's own.
    let closed = unsafe { libc::close(fd) } == 0;
    match wrote {
        Err(super::ipc::IpcError::Sys { errno, .. }) => errno,
        Err(_) => libc::EIO,
        Ok(()) if closed => 0,
        Ok(()) => errno(),
    }
}

/// helpers/fork-dynamic.c, compiled by build.rs (dynamically linked).
pub const FORK_DYNAMIC_ELF: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/fork-dynamic"));

/// lat_proc fork's process, running: asked for `n` forks at a time over
/// its stdin, it answers one byte on its stdout when they are done.
pub struct Forker {
    _program: Helper,
    child: std::process::Child,
    pinned: bool,
}

impl Forker {
    pub fn start(dir: &Path) -> io::Result<Forker> {
        let program = Helper::write(dir, "fork-dynamic", FORK_DYNAMIC_ELF)?;
        let path = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(program.c_path.as_bytes());
        let child = std::process::Command::new(path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| match e.kind() {
                // The file is there: what is missing is its interpreter.
                io::ErrorKind::NotFound => io::Error::new(e.kind(), "no C library's dynamic loader here (a guest's initramfs has none)"),
                _ => e,
            })?;
        Ok(Forker { _program: program, child, pinned: false })
    }

    /// `n` forks in the dynamic process. The first call gives it the CPUs
    /// of the calling (measuring, pinned) thread: the forks run where the
    /// measurement does.
    pub fn forks(&mut self, n: u64) -> io::Result<()> {
        use std::io::Read;
        if !self.pinned {
            crate::placement::set_affinity_of(self.child.id(), &crate::placement::allowed_cpus())?;
            self.pinned = true;
        }
        let (stdin, stdout) = (self.child.stdin.as_mut().expect("piped"), self.child.stdout.as_mut().expect("piped"));
        stdin.write_all(&n.to_ne_bytes())?;
        let mut answer = [1u8];
        stdout.read_exact(&mut answer)?;
        if answer[0] == 0 { Ok(()) } else { Err(io::Error::other("fork-dynamic: a fork failed or a child did not exit with 1")) }
    }
}

impl Drop for Forker {
    fn drop(&mut self) {
        // End of input ends it; then reap it.
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

#[inline(never)]
fn procedure(x: u64) -> u64 {
    std::hint::black_box(x).wrapping_add(1)
}

fn check_status(status: i32, want: i32, what: &str) -> io::Result<()> {
    if child::exited_with(status, want) {
        Ok(())
    } else {
        Err(io::Error::other(format!("{what}: child ended with wait status {status:#x}, not exit {want}")))
    }
}

/// The dynamically linked program exec-dynamic runs.
pub const DYNAMIC_PROGRAM: &str = "/bin/true";

/// Whether an ELF file asks for a program interpreter (PT_INTERP): it is
/// dynamically linked.
pub fn is_dynamic_elf(bytes: &[u8]) -> bool {
    let u16_at = |o: usize| bytes.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let u64_at = |o: usize| bytes.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize);
    if bytes.get(..5) != Some(&[0x7f, b'E', b'L', b'F', 2][..]) {
        return false;
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(32), u16_at(54), u16_at(56)) else {
        return false;
    };
    (0..phnum).any(|i| bytes.get(phoff + i * phentsize..phoff + i * phentsize + 4) == Some(&3u32.to_le_bytes()[..]))
}

/// How often exec retries a helper that is busy (ETXTBSY), 1 ms apart. The
/// kernel refuses to exec a file open for writing anywhere; `Helper` is
/// written by a child of its own so that this process never holds it open,
/// and the retry is for whatever else might (a copy in progress, a tool).
const TXTBSY_TRIES: u32 = 200;

fn pause_1ms() {
    let ts = libc::timespec { tv_sec: 0, tv_nsec: 1_000_000 };
    // SAFETY: ts is a valid timespec; no remainder is wanted.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// execve of the helper, retried while ETXTBSY; returns only on failure.
/// Allocation-free: it runs in forked and vforked children.
fn exec_helper(path: *const libc::c_char) {
    let argv = [path, std::ptr::null()];
    let envp: [*const libc::c_char; 1] = [std::ptr::null()];
    for _ in 0..TXTBSY_TRIES {
        // SAFETY: path is NUL-terminated and alive; argv and envp are NULL-terminated.
        unsafe { libc::execve(path, argv.as_ptr(), envp.as_ptr()) };
        // SAFETY: errno of this thread.
        if unsafe { *libc::__errno_location() } != libc::ETXTBSY {
            return;
        }
        pause_1ms();
    }
}

extern "C" fn vfork_child(arg: *mut libc::c_void) -> libc::c_int {
    // arg is the NUL-terminated path the parent keeps alive until this child
    // has exec'd (CLONE_VFORK suspends the parent until then).
    exec_helper(arg as *const libc::c_char);
    // SAFETY: _exit ends the child without touching the shared memory's state.
    unsafe { libc::_exit(127) }
}

/// Runs one operation `n` times.
pub struct Prepared {
    op: ProcOp,
    helper: Option<Helper>,
    forker: Option<Forker>,
    dynamic: CString,
    /// Stack for the vfork child (which runs until it execs).
    stack: Vec<u8>,
}

impl Prepared {
    pub fn new(op: ProcOp, scratch: &Path) -> io::Result<Prepared> {
        let helper = matches!(op, ProcOp::ForkExec | ProcOp::Spawn | ProcOp::VforkExec).then(|| Helper::create(scratch)).transpose()?;
        let stack = if op == ProcOp::VforkExec { vec![0u8; 64 * 1024] } else { Vec::new() };
        if op == ProcOp::ExecDynamic && !std::fs::read(DYNAMIC_PROGRAM).is_ok_and(|b| is_dynamic_elf(&b)) {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("no dynamically linked {DYNAMIC_PROGRAM}")));
        }
        let forker = (op == ProcOp::ForkDynamic).then(|| Forker::start(scratch)).transpose()?;
        Ok(Prepared { op, helper, forker, dynamic: CString::new(DYNAMIC_PROGRAM).expect("no NUL"), stack })
    }

    fn path(&self) -> &CString {
        &self.helper.as_ref().expect("exec operations have a helper").c_path
    }

    pub fn run(&mut self, n: u64) -> io::Result<()> {
        if let Some(f) = self.forker.as_mut() {
            return f.forks(n);
        }
        for i in 0..n {
            if i % crate::watchdog::POLL_EVERY == 0 && crate::watchdog::check().is_err() {
                return Err(io::Error::from_raw_os_error(libc::EINTR));
            }
            self.once()?;
        }
        Ok(())
    }

    fn once(&mut self) -> io::Result<()> {
        match self.op {
            ProcOp::Procedure => {
                std::hint::black_box(procedure(std::hint::black_box(1)));
                Ok(())
            }
            ProcOp::ForkDynamic => unreachable!("run() hands fork-dynamic to its forker"),
            ProcOp::Fork => {
                let pid = child::fork_child(|| 0)?;
                check_status(child::reap(pid)?, 0, "fork")
            }
            ProcOp::ForkExec => {
                let path = self.path().as_ptr();
                let pid = child::fork_child(|| {
                    exec_helper(path);
                    127
                })?;
                check_status(child::reap(pid)?, HELPER_STATUS, "fork+exec")
            }
            ProcOp::ExecDynamic => {
                let path = self.dynamic.as_ptr();
                let pid = child::fork_child(|| {
                    // SAFETY: the child's own copy of stdout, as lmbench's child closes it.
                    unsafe { libc::close(1) };
                    exec_helper(path);
                    127
                })?;
                check_status(child::reap(pid)?, 0, "fork+exec of /bin/true")
            }
            ProcOp::Spawn => {
                let path = self.path().as_ptr();
                let argv = [path as *mut libc::c_char, std::ptr::null_mut()];
                let envp: [*mut libc::c_char; 1] = [std::ptr::null_mut()];
                let mut pid = 0;
                let mut rc = libc::ETXTBSY;
                for _ in 0..TXTBSY_TRIES {
                    // SAFETY: path, argv and envp are valid and NULL-terminated;
                    // no file actions or attributes.
                    rc = unsafe { libc::posix_spawn(&mut pid, path, std::ptr::null(), std::ptr::null(), argv.as_ptr(), envp.as_ptr()) };
                    if rc != libc::ETXTBSY {
                        break;
                    }
                    pause_1ms();
                }
                if rc != 0 {
                    return Err(io::Error::from_raw_os_error(rc));
                }
                check_status(child::reap(pid)?, HELPER_STATUS, "posix_spawn")
            }
            ProcOp::VforkExec => {
                let arg = self.path().as_ptr() as *mut libc::c_void;
                // SAFETY: the stack grows down from its end, which is 16-byte
                // aligned; the child only execs or _exits, and the parent is
                // suspended until it has (CLONE_VFORK), so sharing memory
                // (CLONE_VM) is safe.
                let pid = unsafe {
                    let top = self.stack.as_mut_ptr().add(self.stack.len());
                    let top = top.sub(top as usize % 16);
                    libc::clone(vfork_child, top.cast(), libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD, arg)
                };
                if pid < 0 {
                    return Err(io::Error::last_os_error());
                }
                check_status(child::reap(pid)?, HELPER_STATUS, "vfork+exec")
            }
            ProcOp::Thread => std::thread::spawn(|| {}).join().map_err(|_| io::Error::other("thread panicked")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dynamic_check_tells_a_static_elf_from_a_dynamic_one() {
        assert!(!is_dynamic_elf(&helper_elf()));
        assert!(!is_dynamic_elf(b"#!/bin/sh"));
        if let Ok(b) = std::fs::read(DYNAMIC_PROGRAM) {
            // Debian's coreutils are dynamically linked.
            assert!(is_dynamic_elf(&b));
        }
    }

    #[test]
    fn the_fork_program_is_dynamically_linked_and_counts_its_children() {
        assert!(is_dynamic_elf(FORK_DYNAMIC_ELF), "lmbench's fork runs in a dynamically linked process");
        let dir = tempfile::tempdir().unwrap();
        let mut f = Forker::start(dir.path()).unwrap();
        f.forks(3).unwrap();
        f.forks(0).unwrap();
        let pid = f.child.id();
        drop(f);
        // Dropping it ends and reaps the process.
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists() || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_err());
    }

    #[test]
    fn every_operation_runs_and_the_helper_exits_with_its_status() {
        let dir = tempfile::tempdir().unwrap();
        for op in ProcOp::ALL {
            Prepared::new(op, dir.path()).unwrap().run(3).unwrap_or_else(|e| panic!("{op:?}: {e}"));
        }
    }

    #[test]
    fn a_helper_written_while_another_thread_forks_is_never_busy() {
        // Before the helper was written by a child of its own, a child
        // forked during the write inherited the writable descriptor and the
        // exec failed with ETXTBSY for as long as that child lived. Here a
        // thread forks a child living 20 ms every millisecond, and the file
        // (the helper and 4 MiB after it, which exec does not load) takes
        // long enough to write that such a fork lands inside the write.
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let started = std::sync::Arc::new(std::sync::Barrier::new(2));
        let forker = {
            let (stop, started) = (stop.clone(), started.clone());
            std::thread::spawn(move || {
                started.wait();
                let mut pids = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    pids.push(child::fork_child(|| {
                        pause_1ms_times(20);
                        0
                    }));
                    pause_1ms();
                }
                pids.into_iter().for_each(|p| drop(child::reap(p.unwrap())));
            })
        };
        started.wait();
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = helper_elf();
        bytes.resize(4 << 20, 0);
        for i in 0..20 {
            let private = tempfile::tempdir_in(dir.path()).unwrap();
            let path = Helper::write_at(private.path(), "exit7", &bytes).unwrap();
            let st = std::process::Command::new(path.to_str().unwrap()).status();
            assert_eq!(st.map(|s| s.code()).map_err(|e| e.kind()), Ok(Some(HELPER_STATUS)), "helper {i}");
        }
        stop.store(true, Ordering::Relaxed);
        forker.join().unwrap();
    }

    fn pause_1ms_times(n: u32) {
        (0..n).for_each(|_| pause_1ms());
    }

    #[test]
    fn a_helper_is_refused_where_a_file_already_is() {
        let dir = tempfile::tempdir().unwrap();
        let h = Helper::create(dir.path()).unwrap();
        let taken = std::path::Path::new(h.c_path.to_str().unwrap()).parent().unwrap();
        let e = Helper::write_at(taken, "exit7", b"x").expect_err("the name is taken");
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    }

    #[test]
    fn the_helper_is_a_valid_static_elf() {
        let dir = tempfile::tempdir().unwrap();
        let h = Helper::create(dir.path()).unwrap();
        let path = std::path::PathBuf::from(h.c_path.to_str().unwrap());
        let dir_mode = std::os::unix::fs::MetadataExt::mode(&std::fs::metadata(path.parent().unwrap()).unwrap());
        assert_eq!(dir_mode & 0o777, 0o700, "the helper's directory is private");
        let st = std::process::Command::new(&path).status().unwrap();
        assert_eq!(st.code(), Some(HELPER_STATUS));
        assert_eq!(helper_elf().len(), 64 + 56 + 12);
    }
}
