//! Control groups, as far as oscycles uses them: a cgroup v2 group that holds
//! a load and can be killed as a whole (cgroup.kill), and the cpuset
//! hierarchy (v2 or v1) that isolation carves a CPU out of. Paths come from
//! /proc/self/mountinfo, not from assumptions about where things are mounted.

use crate::measure::owner::Owner;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The mount points of the cgroup v2 hierarchy and of a v1 hierarchy that
/// carries the cpuset controller, from mountinfo text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mounts {
    pub v2: Option<PathBuf>,
    pub v1_cpuset: Option<PathBuf>,
}

pub fn parse_mountinfo(text: &str) -> Mounts {
    let mut m = Mounts::default();
    for line in text.lines() {
        // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [optional...] - FSTYPE SOURCE SUPEROPTS"
        let Some((left, right)) = line.split_once(" - ") else { continue };
        let Some(mount_point) = left.split_whitespace().nth(4) else { continue };
        let mut r = right.split_whitespace();
        let (fstype, superopts) = (r.next().unwrap_or(""), r.nth(1).unwrap_or(""));
        match fstype {
            "cgroup2" if m.v2.is_none() => m.v2 = Some(PathBuf::from(mount_point)),
            "cgroup" if m.v1_cpuset.is_none() && superopts.split(',').any(|o| o == "cpuset") => {
                m.v1_cpuset = Some(PathBuf::from(mount_point))
            }
            _ => {}
        }
    }
    m
}

pub fn mounts() -> Mounts {
    fs::read_to_string("/proc/self/mountinfo").map(|t| parse_mountinfo(&t)).unwrap_or_default()
}

/// Writes `value` to a control file, naming the file in the error.
pub fn write(path: &Path, value: &str) -> io::Result<()> {
    crate::base::fsafe::write_kernel(path, value)
        .map_err(|e| io::Error::new(e.kind(), format!("writing '{value}' to {}: {e}", path.display())))
}

pub fn read(path: &Path) -> io::Result<String> {
    fs::read_to_string(path).map(|s| s.trim().to_string())
}

/// Whether a space-separated control file (cgroup.controllers,
/// cgroup.subtree_control) lists `name`; false if it cannot be read.
pub fn lists(path: &Path, name: &str) -> bool {
    read(path).is_ok_and(|t| t.split(' ').any(|x| x == name))
}

/// This process's cgroup v2 path (the "0::" line of /proc/self/cgroup).
pub fn own_v2_path() -> Option<String> {
    fs::read_to_string("/proc/self/cgroup").ok()?.lines().find_map(|l| l.strip_prefix("0::").map(str::to_string))
}

/// A cgroup v2 group oscycles created; killed and removed when dropped.
#[derive(Debug)]
pub struct KillableGroup {
    pub path: PathBuf,
}

impl KillableGroup {
    /// A new group `name` under the v2 root, if cgroup v2 with cgroup.kill
    /// is there and writable.
    pub fn create(name: &str) -> io::Result<KillableGroup> {
        let root = mounts().v2.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no cgroup v2 hierarchy is mounted"))?;
        let path = root.join(name);
        fs::create_dir(&path).map_err(|e| io::Error::new(e.kind(), format!("creating cgroup {}: {e}", path.display())))?;
        let g = KillableGroup { path };
        if !g.path.join("cgroup.kill").exists() {
            return Err(io::Error::new(io::ErrorKind::Unsupported, "this kernel's cgroup v2 has no cgroup.kill (Linux 5.14+)"));
        }
        Ok(g)
    }

    pub fn populated(&self) -> bool {
        read(&self.path.join("cgroup.events")).map(|t| t.lines().any(|l| l == "populated 1")).unwrap_or(false)
    }

    /// SIGKILLs every process in the group and waits (up to 5 s) until it is empty.
    pub fn kill(&self) -> bool {
        let _ = write(&self.path.join("cgroup.kill"), "1");
        let t = Instant::now();
        while self.populated() && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        !self.populated()
    }
}

const LOAD_PREFIX: &str = "oscycles-load-";

/// The owner a load group's name ends with, if it has that form.
pub fn load_group_owner(name: &str) -> Option<Owner> {
    let mut tail = name.strip_prefix(LOAD_PREFIX)?.rsplitn(4, '-');
    let (start, pid, pidns) = (tail.next()?.parse().ok()?, tail.next()?.parse().ok()?, tail.next()?.parse().ok()?);
    tail.next().filter(|kind| !kind.is_empty())?;
    Some(Owner { pidns, pid, start })
}

/// The name of a load group of `kind` made by this process.
pub fn load_group_name(kind: &str) -> String {
    match Owner::this_process() {
        Some(o) => format!("{LOAD_PREFIX}{kind}-{}", o.label()),
        None => format!("{LOAD_PREFIX}{kind}-0-{}-0", std::process::id()),
    }
}

/// Removes load cgroups left by oscycles processes that were SIGKILLed
/// (their workers killed the load; nobody was left to remove the group).
/// A group counts as left only when its name says which process made it and
/// that process is gone from this pid namespace (`Owner::is_gone`); groups
/// of other namespaces, and names of another form, are left alone.
/// Returns how many were removed.
pub fn remove_stale_load_groups() -> usize {
    let Some(root) = mounts().v2 else { return 0 };
    let Some(ours) = Owner::this_process().map(|o| o.pidns) else { return 0 };
    let Ok(dir) = fs::read_dir(&root) else { return 0 };
    let mut n = 0;
    for e in dir.flatten() {
        let Some(owner) = load_group_owner(&e.file_name().to_string_lossy()) else { continue };
        if owner.is_gone(ours, Owner::of(owner.pid)) {
            let g = KillableGroup { path: e.path() };
            g.kill();
            if fs::remove_dir(&g.path).is_ok() {
                n += 1;
            }
            std::mem::forget(g);
        }
    }
    n
}

impl Drop for KillableGroup {
    fn drop(&mut self) {
        self.kill();
        let _ = fs::remove_dir(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_group_is_stale_only_when_its_maker_is_gone_from_this_pid_namespace() {
        let me = Owner::this_process().expect("this process in /proc");
        let name = load_group_name("build");
        assert_eq!(load_group_owner(&name), Some(me), "{name}");
        assert!(!me.is_gone(me.pidns, Owner::of(me.pid)), "a live maker");
        assert!(me.is_gone(me.pidns, None), "a maker gone");
        assert!(me.is_gone(me.pidns, Some(Owner { start: me.start + 1, ..me })), "its pid reused");
        let elsewhere = Owner { pidns: me.pidns + 1, ..me };
        assert!(!elsewhere.is_gone(me.pidns, None), "a run in another pid namespace is never judged from here");
        for other in ["oscycles-load-build-4242", "oscycles-load--1-2-3", "other-build-1-2-3", "oscycles-load-build-x-2-3"] {
            assert_eq!(load_group_owner(other), None, "{other}");
        }
    }

    #[test]
    fn finds_v2_and_the_v1_cpuset_mounts() {
        let t = "31 22 0:27 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw,mode=755\n\
                 35 31 0:31 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu\n\
                 37 31 0:33 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n\
                 41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let m = parse_mountinfo(t);
        assert_eq!(m.v2.as_deref(), Some(Path::new("/sys/fs/cgroup/unified")));
        assert_eq!(m.v1_cpuset.as_deref(), Some(Path::new("/sys/fs/cgroup/cpuset")));
        let only_v2 = parse_mountinfo("30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n");
        assert_eq!(only_v2, Mounts { v2: Some("/sys/fs/cgroup".into()), v1_cpuset: None });
    }
}
