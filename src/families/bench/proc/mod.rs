//! Process and thread creation, as lmbench's lat_proc: procedure call,
//! fork+exit+wait, fork+exec, posix_spawn, vfork+exec, thread create+join.
//!
//! A fork copies the forking process (page tables, mappings, open files),
//! so its cost depends on that process's size. This process's size depends
//! on the cases that ran before in it (an allocator's grown heap, buffers
//! kept mapped), so no process is created from it: every process-creation
//! row asks a small C program, started fresh for the case
//! (src/families/bench/proc/forker.c, built by build.rs and embedded), to create processes,
//! and records that program's size (VmSize, RSS, mappings, threads). The
//! lmbench rows (`fork-dynamic`, `exec-dynamic`) use it dynamically linked
//! and forking from a worker child, as lmbench's lat_proc under benchmp();
//! the others use it statically linked, forking itself. `fork` also forks it
//! with a given amount of memory touched: fork cost against process size.
//!
//! lmbench's exec runs a dynamically linked hello-world; `exec-dynamic` runs
//! the system's /bin/true (dynamically linked, exits 0) the same way: the
//! loader and the C library's start-up are in the cost. The other exec
//! kinds run a 132-byte static ELF that oscycles writes itself: it exits
//! with status 7 and does nothing else, so exec cost is the kernel's, not a
//! dynamic loader's. A procedure call and a thread are made in this process
//! (neither copies an address space).

pub mod family;
pub mod schema;
pub mod table;

use crate::families::bench::schema::proc::ProcessSize;
use crate::families::bench::toolkit::child;
use std::ffi::{CStr, CString};
use std::io::{self, Write};
use std::path::Path;

crate::named_enum! {
    pub enum ProcOp {
        Procedure = "procedure",
        ForkDynamic = "fork-dynamic",
        Fork = "fork",
        ForkExec = "exec",
        ExecDynamic = "exec-dynamic",
        Spawn = "spawn",
        VforkExec = "vfork-exec",
        Thread = "thread",
    }
}

/// The exit status of the tiny helper; checked after every exec.
pub const HELPER_STATUS: i32 = 7;

impl ProcOp {
    pub fn description(self) -> &'static str {
        match self {
            ProcOp::Procedure => "a call of a function the compiler may not inline",
            ProcOp::ForkDynamic => {
                "lat_proc fork: a small dynamically linked C process (a worker child, as lmbench's benchmp) forks, its child exit()s, it waits"
            }
            ProcOp::Fork => "a small static C process, with touched_mib MiB of memory written, forks, its child _exits, it waits",
            ProcOp::ForkExec => "a small static C process forks, its child execve's a tiny static ELF, it waits",
            ProcOp::ExecDynamic => {
                "lat_proc exec: a small dynamically linked C process (a worker child) forks, its child closes stdout and execve's /bin/true (dynamically linked), it waits"
            }
            ProcOp::Spawn => "a small static C process posix_spawns the tiny static ELF, waits",
            ProcOp::VforkExec => "a small static C process vforks, its child execve's the tiny static ELF, it waits",
            ProcOp::Thread => "std::thread::spawn of an empty closure + join, in this process",
        }
    }

    /// How the forker does this operation; None for those made in this
    /// process (procedure, thread).
    fn forker_op(self) -> Option<ForkerOp> {
        let (linked, op, status, target, worker) = match self {
            ProcOp::Procedure | ProcOp::Thread => return None,
            ProcOp::ForkDynamic => (Linked::Dynamic, "fork", 1, Target::None, true),
            ProcOp::ExecDynamic => (Linked::Dynamic, "exec", 0, Target::Dynamic, true),
            ProcOp::Fork => (Linked::Static, "fork-raw", 0, Target::None, false),
            ProcOp::ForkExec => (Linked::Static, "exec", HELPER_STATUS, Target::Tiny, false),
            ProcOp::Spawn => (Linked::Static, "spawn", HELPER_STATUS, Target::Tiny, false),
            ProcOp::VforkExec => (Linked::Static, "vfork", HELPER_STATUS, Target::Tiny, false),
        };
        Some(ForkerOp { linked, op, status, target, worker })
    }
}

/// How the forker is linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linked {
    /// lmbench's kind of process (needs the C library's loader).
    Dynamic,
    /// Runs anywhere, a guest's initramfs too.
    Static,
}

/// The program an operation executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    None,
    /// [`DYNAMIC_PROGRAM`].
    Dynamic,
    /// The tiny static ELF ([`helper_elf`]).
    Tiny,
}

/// One operation as src/families/bench/proc/forker.c takes it.
#[derive(Debug, Clone, Copy)]
struct ForkerOp {
    linked: Linked,
    /// Its OP argument.
    op: &'static str,
    /// The exit status every child must end with.
    status: i32,
    target: Target,
    /// Whether a worker child does the operations (lmbench's benchmp).
    worker: bool,
}

/// Memory the forker writes before it forks: `mib` MiB, in transparent
/// huge pages with `thp` (4 KiB pages otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Touch {
    pub mib: u64,
    pub thp: bool,
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
    let wrote = crate::families::bench::toolkit::fds::write_all(fd, bytes);
    // SAFETY: fd is this function's own.
    let closed = unsafe { libc::close(fd) } == 0;
    match wrote {
        Err(crate::families::bench::toolkit::fds::IpcError::Sys { errno, .. }) => errno,
        Err(_) => libc::EIO,
        Ok(()) if closed => 0,
        Ok(()) => errno(),
    }
}

/// src/families/bench/proc/forker.c, compiled by build.rs, dynamically and statically linked.
pub const FORKER_DYNAMIC_ELF: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/forker-dynamic"));
pub const FORKER_STATIC_ELF: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/forker-static"));

/// The process a case's processes are created from, running: asked for
/// `n` operations at a time over its stdin, it answers one byte on its
/// stdout when they are done.
pub struct Forker {
    _program: Helper,
    child: std::process::Child,
    pinned: bool,
    what: String,
}

impl Forker {
    /// Writes the forker into `dir` and starts it doing `op` (on `target`
    /// for the exec kinds), with `touch` written first.
    fn start(dir: &Path, op: ForkerOp, target: Option<&CStr>, touch: Touch) -> io::Result<Forker> {
        let (name, elf) = match op.linked {
            Linked::Dynamic => ("forker-dynamic", FORKER_DYNAMIC_ELF),
            Linked::Static => ("forker-static", FORKER_STATIC_ELF),
        };
        let program = Helper::write(dir, name, elf)?;
        let path = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(program.c_path.as_bytes());
        let mut cmd = std::process::Command::new(path);
        cmd.arg(op.op).arg(op.status.to_string());
        if let Some(t) = target {
            cmd.arg(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(t.to_bytes()));
        }
        if op.worker {
            cmd.arg("--worker");
        }
        if touch.mib > 0 {
            cmd.arg("--touch-mib").arg(touch.mib.to_string());
        }
        if touch.thp {
            cmd.arg("--thp");
        }
        let child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| match e.kind() {
                // The file is there: what is missing is its interpreter.
                io::ErrorKind::NotFound => io::Error::new(e.kind(), "no C library's dynamic loader here (a guest's initramfs has none)"),
                _ => e,
            })?;
        let linked = if op.linked == Linked::Static { "static" } else { "dynamic" };
        let what = format!("{linked} C helper{}", if op.worker { " (its worker child)" } else { "" });
        Ok(Forker { _program: program, child, pinned: false, what })
    }

    fn pipes(&mut self) -> (&mut std::process::ChildStdin, &mut std::process::ChildStdout) {
        (self.child.stdin.as_mut().expect("piped"), self.child.stdout.as_mut().expect("piped"))
    }

    /// `n` operations in the forker. The first call gives it the CPUs of
    /// the calling (measuring, pinned) thread: they run where the
    /// measurement does.
    pub fn run(&mut self, n: u64) -> io::Result<()> {
        use std::io::Read;
        if !self.pinned {
            crate::measure::placement::set_affinity_of(self.child.id(), &crate::measure::placement::allowed_cpus())?;
            self.pinned = true;
        }
        let (stdin, stdout) = self.pipes();
        stdin.write_all(&n.to_ne_bytes())?;
        let mut answer = [1u8];
        stdout.read_exact(&mut answer).map_err(|e| self.ended(e))?;
        if answer[0] == 0 { Ok(()) } else { Err(io::Error::other("the forker: an operation failed or a child ended with another status")) }
    }

    /// The error of a forker that stopped answering, with its exit status.
    fn ended(&mut self, e: io::Error) -> io::Error {
        match self.child.try_wait() {
            // 3: bad arguments, 4: the memory to touch could not be mapped.
            Ok(Some(st)) => io::Error::other(format!("the forker ended ({st}) instead of answering")),
            _ => e,
        }
    }

    /// The size of the process that forks, as /proc has it now.
    pub fn size(&mut self) -> io::Result<ProcessSize> {
        use std::io::Read;
        let (stdin, stdout) = self.pipes();
        stdin.write_all(&u64::MAX.to_ne_bytes())?;
        let mut pid = [0u8; 4];
        stdout.read_exact(&mut pid).map_err(|e| self.ended(e))?;
        process_size(i32::from_ne_bytes(pid), &self.what)
    }
}

impl Drop for Forker {
    fn drop(&mut self) {
        // End of input ends it; then reap it.
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// A field of /proc/PID/status or smaps_rollup ("VmSize:   1008 kB"): its number.
fn proc_field(text: &str, field: &str) -> Option<u64> {
    text.lines().find(|l| l.split(':').next() == Some(field))?.split_whitespace().nth(1)?.parse().ok()
}

/// Process `pid`'s size from /proc.
pub fn process_size(pid: i32, what: &str) -> io::Result<ProcessSize> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))?;
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let field = |f| proc_field(&status, f).ok_or_else(|| io::Error::other(format!("/proc/{pid}/status has no {f}")));
    Ok(ProcessSize {
        program: what.into(),
        vm_size_kib: field("VmSize")?,
        rss_kib: field("VmRSS")?,
        mappings: maps.lines().count() as u64,
        threads: field("Threads")?,
        anon_huge_kib: proc_field(&rollup, "AnonHugePages").unwrap_or(0),
    })
}

#[inline(never)]
fn procedure(x: u64) -> u64 {
    std::hint::black_box(x).wrapping_add(1)
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

/// Runs one operation `n` times.
pub struct Prepared {
    op: ProcOp,
    forker: Option<Forker>,
    /// The tiny ELF the exec kinds run (kept until the forker is gone).
    _tiny: Option<Helper>,
}

impl Prepared {
    /// `touch` applies to the static fork only.
    pub fn new(op: ProcOp, scratch: &Path, touch: Touch) -> io::Result<Prepared> {
        let Some(fop) = op.forker_op() else {
            return Ok(Prepared { op, forker: None, _tiny: None });
        };
        let tiny = (fop.target == Target::Tiny).then(|| Helper::create(scratch)).transpose()?;
        let dynamic = CString::new(DYNAMIC_PROGRAM).expect("no NUL");
        let target = match fop.target {
            Target::None => None,
            Target::Dynamic if std::fs::read(DYNAMIC_PROGRAM).is_ok_and(|b| is_dynamic_elf(&b)) => Some(dynamic.as_c_str()),
            Target::Dynamic => return Err(io::Error::new(io::ErrorKind::NotFound, format!("no dynamically linked {DYNAMIC_PROGRAM}"))),
            Target::Tiny => tiny.as_ref().map(|h| h.c_path.as_c_str()),
        };
        let touch = if op == ProcOp::Fork { touch } else { Touch::default() };
        let forker = Forker::start(scratch, fop, target, touch)?;
        Ok(Prepared { op, forker: Some(forker), _tiny: tiny })
    }

    pub fn run(&mut self, n: u64) -> io::Result<()> {
        if let Some(f) = self.forker.as_mut() {
            return f.run(n);
        }
        for i in 0..n {
            if i % crate::measure::watchdog::POLL_EVERY == 0 && crate::measure::watchdog::check().is_err() {
                return Err(io::Error::from_raw_os_error(libc::EINTR));
            }
            match self.op {
                ProcOp::Thread => std::thread::spawn(|| {}).join().map_err(|_| io::Error::other("thread panicked"))?,
                _ => {
                    std::hint::black_box(procedure(std::hint::black_box(1)));
                }
            }
        }
        Ok(())
    }

    /// The size of the process the operations are created from; None for
    /// those made in this process.
    pub fn forker_size(&mut self) -> Option<io::Result<ProcessSize>> {
        self.forker.as_mut().map(Forker::size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::named::Named;

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
    fn the_forkers_are_linked_as_named_and_count_their_children() {
        assert!(is_dynamic_elf(FORKER_DYNAMIC_ELF), "lmbench's fork runs in a dynamically linked process");
        assert!(!is_dynamic_elf(FORKER_STATIC_ELF), "the static rows fork a static process");
        let dir = tempfile::tempdir().unwrap();
        for (op, worker) in [(ProcOp::ForkDynamic, true), (ProcOp::Fork, false)] {
            let fop = op.forker_op().unwrap();
            let mut f = Forker::start(dir.path(), fop, None, Touch::default()).unwrap();
            f.run(3).unwrap();
            f.run(0).unwrap();
            let size = f.size().unwrap();
            assert_eq!(size.program.contains("worker"), worker, "{size:?}");
            let pid = f.child.id();
            drop(f);
            // Dropping it ends and reaps the process.
            assert!(
                !std::path::Path::new(&format!("/proc/{pid}")).exists() || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_err()
            );
        }
    }

    #[test]
    fn a_forker_whose_children_end_otherwise_says_so() {
        // The tiny ELF exits 7; this forker expects 9 of every child.
        let dir = tempfile::tempdir().unwrap();
        let tiny = Helper::create(dir.path()).unwrap();
        let fop = ForkerOp { status: 9, ..ProcOp::ForkExec.forker_op().unwrap() };
        let mut f = Forker::start(dir.path(), fop, Some(tiny.c_path.as_c_str()), Touch::default()).unwrap();
        assert!(f.run(1).is_err(), "its children exit 7, not 9");
    }

    #[test]
    fn the_static_forker_is_small_and_touched_memory_makes_it_as_large() {
        let dir = tempfile::tempdir().unwrap();
        let mut small = Prepared::new(ProcOp::Fork, dir.path(), Touch::default()).unwrap();
        small.run(1).unwrap();
        let s = small.forker_size().unwrap().unwrap();
        assert_eq!((s.threads, s.program.as_str()), (1, "static C helper"));
        assert!(s.vm_size_kib < 8 << 10 && s.mappings < 32, "a small static process: {s:?}");
        let mut big = Prepared::new(ProcOp::Fork, dir.path(), Touch { mib: 16, thp: false }).unwrap();
        big.run(1).unwrap();
        let b = big.forker_size().unwrap().unwrap();
        // Within a few pages: the helper's own resident pages vary by one or two between starts
        // (a fresh-clone test run once read 16 MiB less 4 KiB more).
        assert!(b.rss_kib + 64 >= s.rss_kib + (16 << 10), "16 MiB written: {b:?} against {s:?}");
        assert_eq!(b.anon_huge_kib, 0, "without thp the region is in 4 KiB pages");
        // Only the static fork takes a size.
        let mut exec = Prepared::new(ProcOp::ForkExec, dir.path(), Touch { mib: 16, thp: false }).unwrap();
        assert!(exec.forker_size().unwrap().unwrap().rss_kib < b.rss_kib);
        assert!(Prepared::new(ProcOp::Thread, dir.path(), Touch::default()).unwrap().forker_size().is_none());
    }

    #[test]
    fn every_operation_runs_and_the_helper_exits_with_its_status() {
        let dir = tempfile::tempdir().unwrap();
        for &op in ProcOp::ALL {
            Prepared::new(op, dir.path(), Touch::default()).unwrap().run(3).unwrap_or_else(|e| panic!("{op:?}: {e}"));
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

    fn pause_1ms() {
        let ts = libc::timespec { tv_sec: 0, tv_nsec: 1_000_000 };
        // SAFETY: ts is a valid timespec; no remainder is wanted.
        unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
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
