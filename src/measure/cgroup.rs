//! Control groups, as far as oscycles uses them: a cgroup v2 group that holds
//! a load and can be killed as a whole (cgroup.kill), and the cpuset
//! hierarchy (v2 or v1) that isolation carves a CPU out of. Paths come from
//! /proc/self/mountinfo, not from assumptions about where things are mounted.

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
    fs::write(path, value).map_err(|e| io::Error::new(e.kind(), format!("writing '{value}' to {}: {e}", path.display())))
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

/// Removes load cgroups left by oscycles processes that were SIGKILLed
/// (their workers killed the load; nobody was left to remove the group).
/// Returns how many were removed.
pub fn remove_stale_load_groups() -> usize {
    let Some(root) = mounts().v2 else { return 0 };
    let Ok(dir) = fs::read_dir(&root) else { return 0 };
    let mut n = 0;
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name.strip_prefix("oscycles-load-").and_then(|r| r.rsplit('-').next()).and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
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
