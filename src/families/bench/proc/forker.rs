//! The forker: src/families/bench/proc/forker.c, started fresh for a case,
//! creating processes on request; and the size of a process.

use super::helper::Helper;
use super::*;

/// src/families/bench/proc/forker.c, compiled by build.rs, dynamically and statically linked.
pub const FORKER_DYNAMIC_ELF: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/forker-dynamic"));
pub const FORKER_STATIC_ELF: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/forker-static"));

/// The process a case's processes are created from, running: asked for
/// `n` operations at a time over its stdin, it answers one byte on its
/// stdout when they are done.
pub struct Forker {
    _program: Helper,
    pub(super) child: std::process::Child,
    pinned: bool,
    what: String,
}

impl Forker {
    /// Writes the forker into `dir` and starts it doing `op` (on `target`
    /// for the exec kinds), with `touch` written first.
    pub(super) fn start(dir: &Path, op: ForkerOp, target: Option<&CStr>, touch: Touch) -> io::Result<Forker> {
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
