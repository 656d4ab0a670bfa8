//! `container`: made by oscycles itself, no engine: new user, PID, mount,
//! UTS, IPC and network namespaces. The child (`oscycles __env-child --env
//! container`) unshares them, maps root to root, forks so that the
//! suites run as PID 1 of the new PID namespace, mounts its own /proc,
//! sets a hostname, brings up its loopback, and then serves like a guest.
//! Where cgroup v2 offers the cpu and memory controllers, the container is
//! placed in a cgroup with limits; otherwise the facts say why not.

use super::environment::{Environment, Outcome};
use super::error::EnvError;
use super::guest::{self, GuestSpec};
use super::launch::launch_child;
use super::options::EnvOptions;
use serde_json::{Map, Value, json};
use std::ffi::CString;

pub struct Container;

impl Environment for Container {
    fn name(&self) -> &'static str {
        "container"
    }

    fn about(&self) -> &'static str {
        "user, PID, mount, UTS, IPC and network namespaces made by oscycles"
    }

    fn launch(&self, spec: &GuestSpec, _plan: &[crate::run::plan::PlannedCase], o: &EnvOptions) -> Result<Outcome, EnvError> {
        launch_child(self, spec, o, remove_limits)
    }

    /// In its limits, unshares, forks PID 1 of the new PID namespace, which
    /// sets itself up and serves; waits for it and returns its exit code.
    fn serve(&self, spec: &GuestSpec) -> u8 {
        let mut out = std::io::stdout();
        let limits = limit_self(spec.vm_cpus, spec.vm_mem_mib);
        if let Err(e) = unshare_all() {
            guest::send(&mut out, "error", 1, format!("container: {e}").as_bytes());
            return 1;
        }
        // SAFETY: this process is single-threaded here (unshare of a user
        // namespace just succeeded, which requires it), so fork is safe.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            guest::send(&mut out, "error", 1, format!("container: fork: {}", std::io::Error::last_os_error()).as_bytes());
            return 1;
        }
        if pid == 0 {
            std::process::exit(pid_1(spec, limits).into());
        }
        let mut status = 0;
        // SAFETY: waiting for the child just forked; status is a valid out-pointer.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) as u8 } else { 1 }
    }
}

/// PID 1 of the new PID namespace: dies with its parent, mounts its own
/// /proc, says hello and serves; returns its exit code.
fn pid_1(spec: &GuestSpec, limits: Result<String, ContainerError>) -> u8 {
    // SAFETY: prctl with an integer argument.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    if let Err(e) = set_up_inside() {
        guest::send(&mut std::io::stdout(), "error", 1, format!("container: {e}").as_bytes());
        return 1;
    }
    guest::send(&mut std::io::stdout(), "hello", 0, b"start");
    let mut facts = guest::facts_inside();
    facts.extend(facts_inside());
    facts.insert("cgroup_limits".into(), json!(limits.unwrap_or_else(|e| e.to_string())));
    guest::serve_here(spec, facts)
}

/// What failed making the container, or limiting it.
#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    /// A system call or a write under /proc, with the error.
    #[error("{what}: {source}")]
    Sys { what: &'static str, source: std::io::Error },
    #[error("no cgroup v2 hierarchy")]
    NoCgroupV2,
    #[error("cgroup v2 at {} lacks the {missing} controller(s) (bound to cgroup v1 here); no limits set", root.display())]
    NoControllers { root: std::path::PathBuf, missing: String },
    #[error("creating {}: {source}", path.display())]
    Create { path: std::path::PathBuf, source: std::io::Error },
    /// A write to a cgroup file (the error names the file and the value).
    #[error(transparent)]
    Cgroup(std::io::Error),
}

fn sys(what: &'static str) -> impl FnOnce(std::io::Error) -> ContainerError {
    move |source| ContainerError::Sys { what, source }
}

fn check(rc: libc::c_int, what: &'static str) -> Result<(), ContainerError> {
    if rc != 0 {
        return Err(sys(what)(std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Unshares the namespaces and maps uid/gid 0 to the caller's.
pub fn unshare_all() -> Result<(), ContainerError> {
    // SAFETY: getuid/getgid/unshare take no pointers.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWUTS | libc::CLONE_NEWIPC | libc::CLONE_NEWNET | libc::CLONE_NEWPID;
    // SAFETY: as above.
    check(unsafe { libc::unshare(flags) }, "unshare (user, mount, UTS, IPC, network, PID namespaces)")?;
    crate::base::fsafe::write_kernel("/proc/self/setgroups".as_ref(), "deny").map_err(sys("/proc/self/setgroups"))?;
    crate::base::fsafe::write_kernel("/proc/self/uid_map".as_ref(), format!("0 {uid} 1")).map_err(sys("uid_map"))?;
    crate::base::fsafe::write_kernel("/proc/self/gid_map".as_ref(), format!("0 {gid} 1")).map_err(sys("gid_map"))?;
    Ok(())
}

/// Inside, as PID 1: private mounts, a fresh /proc, hostname, loopback up.
pub fn set_up_inside() -> Result<(), ContainerError> {
    let c = |s: &str| CString::new(s).expect("no NUL");
    // SAFETY: NUL-terminated strings that outlive each call.
    unsafe {
        check(
            libc::mount(c("none").as_ptr(), c("/").as_ptr(), std::ptr::null(), libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()),
            "making mounts private",
        )?;
        check(libc::mount(c("proc").as_ptr(), c("/proc").as_ptr(), c("proc").as_ptr(), 0, std::ptr::null()), "mounting /proc")?;
        let host = b"oscycles-container";
        check(libc::sethostname(host.as_ptr().cast(), host.len()), "sethostname")?;
    }
    guest::loopback_up().map_err(|e| ContainerError::Sys { what: e.what, source: e.source })
}

/// What the container looks like from inside, for the results.
pub fn facts_inside() -> Map<String, Value> {
    let mut f = Map::new();
    f.insert("pid_inside".into(), json!(std::process::id()));
    f.insert("hostname".into(), json!(std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim()));
    let ifs: Vec<String> = std::fs::read_to_string("/proc/self/net/dev")
        .unwrap_or_default()
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next().map(|n| n.trim().to_string()))
        .collect();
    f.insert("network_interfaces".into(), json!(ifs));
    f.insert(
        "uid_map".into(),
        json!(std::fs::read_to_string("/proc/self/uid_map").unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ")),
    );
    f.insert("namespaces".into(), json!("user, pid, mount, uts, ipc, net (new)"));
    f
}

/// The cgroup a container child of `pid` is limited by.
pub fn cgroup_path(root: &std::path::Path, pid: u32) -> std::path::PathBuf {
    root.join(format!("oscycles-container-{pid}"))
}

/// Puts the calling process (before it unshares) in a cgroup v2 group with
/// `cpus` CPUs' worth of time and `mem_mib` of memory; the host removes the
/// group when the child has ended. Err says why no limit could be set.
pub fn limit_self(cpus: u32, mem_mib: u32) -> Result<String, ContainerError> {
    let root = crate::measure::cgroup::mounts().v2.ok_or(ContainerError::NoCgroupV2)?;
    let missing: Vec<&str> =
        ["cpu", "memory"].into_iter().filter(|c| !crate::measure::cgroup::lists(&root.join("cgroup.controllers"), c)).collect();
    if !missing.is_empty() {
        return Err(ContainerError::NoControllers { missing: missing.join(" and "), root });
    }
    let sub = root.join("cgroup.subtree_control");
    for c in ["cpu", "memory"] {
        if !crate::measure::cgroup::lists(&sub, c) {
            crate::measure::cgroup::write(&sub, &format!("+{c}")).map_err(ContainerError::Cgroup)?;
        }
    }
    let g = cgroup_path(&root, std::process::id());
    std::fs::create_dir(&g).map_err(|source| ContainerError::Create { path: g.clone(), source })?;
    crate::measure::cgroup::write(&g.join("cpu.max"), &format!("{} 100000", u64::from(cpus) * 100_000)).map_err(ContainerError::Cgroup)?;
    crate::measure::cgroup::write(&g.join("memory.max"), &(u64::from(mem_mib) << 20).to_string()).map_err(ContainerError::Cgroup)?;
    crate::measure::cgroup::write(&g.join("cgroup.procs"), "0").map_err(ContainerError::Cgroup)?;
    Ok(format!("cpu.max {} CPUs, memory.max {mem_mib} MiB ({})", cpus, g.display()))
}

/// Removes the limit group of an ended container child, if there is one.
pub fn remove_limits(child_pid: u32) {
    if let Some(root) = crate::measure::cgroup::mounts().v2 {
        let _ = std::fs::remove_dir(cgroup_path(&root, child_pid));
    }
}
