//! An AIM7-style throughput mix: T concurrent processes each repeat a fixed,
//! deterministic job (compute, memory, file, process) for a fixed time; the
//! result is jobs per minute per task, as in the AIM7 table of the L4 performance page (Wombat).

pub mod family;
pub mod schema;

use crate::families::bench::toolkit::child::{self, Private};
use crate::families::bench::toolkit::shm::Shared;
use std::ffi::CString;
use std::path::Path;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// The most tasks a case may run (the report's table has a row for each).
pub use crate::families::bench::schema::aim::MAX_TASKS;

/// One job: the same work every time.
pub struct Job {
    src: Private,
    dst: Private,
    path: CString,
    file_buf: [u8; 16 * 1024],
}

impl Job {
    /// `path` is this task's own scratch file name.
    pub fn new(path: &Path) -> std::io::Result<Job> {
        Ok(Job {
            src: Private::new(256 * 1024)?,
            dst: Private::new(256 * 1024)?,
            path: CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| std::io::Error::other("path with a NUL byte"))?,
            file_buf: [0x42; 16 * 1024],
        })
    }

    /// Runs the mix once; false if any part failed. Allocation-free, so it
    /// can run in a forked child.
    pub fn run(&mut self) -> bool {
        // Compute: an integer LCG and a floating-point recurrence.
        let (mut x, mut f) = (12345u64, 1.0f64);
        for _ in 0..50_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            f = f * 1.000_000_1 + (x >> 40) as f64 * 1e-12;
        }
        std::hint::black_box((x, f));
        // Memory: copy 256 KiB four times.
        for _ in 0..4 {
            let (src, dst) = (&self.src, &mut self.dst);
            dst.words_mut().copy_from_slice(src.words());
        }
        std::hint::black_box(self.dst.words()[0]);
        self.file() && self.process()
    }

    /// File: create (exclusively, never through a link), write 16 KiB, read
    /// it back, unlink.
    fn file(&mut self) -> bool {
        let p = self.path.as_ptr();
        let len = self.file_buf.len();
        // SAFETY: p is NUL-terminated; the buffer is valid for len bytes; the
        // descriptor is closed before returning.
        unsafe {
            let fd = libc::open(p, libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_RDWR | libc::O_CLOEXEC, 0o600);
            if fd < 0 {
                return false;
            }
            let ok = libc::write(fd, self.file_buf.as_ptr().cast(), len) == len as isize
                && libc::pread(fd, self.file_buf.as_mut_ptr().cast(), len, 0) == len as isize;
            libc::close(fd);
            libc::unlink(p);
            ok
        }
    }

    /// Process: fork a child that exits at once, and wait for it.
    fn process(&self) -> bool {
        child::fork_child(|| 0).and_then(child::reap).is_ok_and(|s| child::exited_with(s, 0))
    }
}

/// What each task reports.
struct Slot {
    jobs: AtomicU64,
    elapsed_ns: AtomicU64,
    cpu: AtomicI64,
}

#[derive(Debug, Clone)]
pub struct AimRound {
    /// Jobs per minute of each task.
    pub per_task: Vec<f64>,
    pub cpus: Vec<Option<usize>>,
}

/// One round: `tasks` processes (allowed on `cpus`) each run jobs for `duration`.
pub fn round(tasks: usize, cpus: &[usize], duration: Duration, scratch: &Path) -> std::io::Result<AimRound> {
    assert!((1..=MAX_TASKS).contains(&tasks));
    let slots =
        Shared::new([const { Slot { jobs: AtomicU64::new(0), elapsed_ns: AtomicU64::new(0), cpu: AtomicI64::new(-1) } }; MAX_TASKS])
            .map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut jobs: Vec<Job> =
        (0..tasks).map(|i| Job::new(&scratch.join(format!("oscycles-aim-{}-{i}", std::process::id())))).collect::<Result<_, _>>()?;
    let mut pids = Vec::new();
    for (i, job) in jobs.iter_mut().enumerate() {
        let slot = &slots.get()[i];
        let spawned = child::fork_child(|| {
            let _ = crate::measure::placement::set_affinity(cpus);
            let start = crate::measure::clock::monotonic_raw_ns();
            let end = start + duration.as_nanos() as u64;
            let mut done = 0u64;
            let mut now = start;
            while now < end {
                if !job.run() {
                    return 1;
                }
                done += 1;
                now = crate::measure::clock::monotonic_raw_ns();
            }
            slot.jobs.store(done, Ordering::Relaxed);
            slot.elapsed_ns.store(now - start, Ordering::Relaxed);
            slot.cpu.store(crate::measure::placement::current_cpu().map_or(-1, |c| c as i64), Ordering::Relaxed);
            0
        });
        match spawned {
            Ok(pid) => pids.push(pid),
            Err(e) => {
                pids.iter().for_each(|&p| child::kill_and_reap(p));
                return Err(e);
            }
        }
    }
    let mut failed = false;
    for p in pids {
        failed |= !child::exited_with(child::reap(p)?, 0);
    }
    if failed {
        return Err(std::io::Error::other("a task's job failed (file or fork error in the mix)"));
    }
    let s = slots.get();
    Ok(AimRound {
        per_task: (0..tasks)
            .map(|i| s[i].jobs.load(Ordering::Relaxed) as f64 * 60e9 / s[i].elapsed_ns.load(Ordering::Relaxed).max(1) as f64)
            .collect(),
        cpus: (0..tasks).map(|i| usize::try_from(s[i].cpu.load(Ordering::Relaxed)).ok()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_runs_and_every_task_reports() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let mut job = Job::new(&dir.join("aimtest")).unwrap();
        assert!(job.run());
        let r = round(3, &crate::measure::placement::allowed_cpus(), Duration::from_millis(50), dir).unwrap();
        assert_eq!(r.per_task.len(), 3);
        assert!(r.per_task.iter().all(|&j| j > 0.0), "{:?}", r.per_task);
    }
}
