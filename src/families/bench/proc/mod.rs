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
pub mod forker;
pub mod helper;
pub mod prepared;
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
            ProcOp::Procedure => "lmbench's procedure: a call that adds its argument into a global, in its compiled instructions",
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

#[cfg(test)]
mod tests {
    use super::forker::*;
    use super::helper::*;
    use super::prepared::*;
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
