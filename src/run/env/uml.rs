//! `uml`: User-Mode Linux (Debian's `user-mode-linux`, `linux.uml`), a
//! Linux kernel para-virtualised to run as processes of this one, as Wombat
//! and L4Linux run Linux as a server on L4 (the Trustworthy Systems L4
//! performance page). Its processes' system calls stop them under ptrace
//! and are served by the UML kernel, another host process; their page
//! faults reach it as signals.
//!
//! The kernel boots with an initramfs oscycles writes (as for the QEMU
//! guests: this static binary as /init and the spec); its console goes to
//! the kernel's stderr (the log), its second serial line (/dev/ttyS1, the
//! results port a guest writes) to its stdout, which the host reads. Its memory file, its `umid` directory and the
//! initramfs live in the run's private directory or are unlinked at once
//! (the memory file, in /dev/shm); its host processes are one process
//! group, killed on the way out, and die with oscycles (SIGKILL included:
//! the kernel's process with oscycles, its address spaces' processes with it).
//!
//! Where the kernel's process runs against its address spaces' processes
//! is `--helper-placement` ([`super::helpers`]): on the measured CPU with
//! them (same, the default), or on the partner CPU (cross).

use super::cmdline::{GUEST_KERNEL_OPTIONS, GuestKernelArgs, boot_line};
use super::environment::{Environment, Outcome};
use super::error::{EnvError, OwnError};
use super::guest::GuestSpec;
use super::helpers::{self, At, HelperArgs, HelperPlacement, Placer, Roles, Rule};
use super::initramfs::write_initramfs;
use super::options::{EnvOptions, OwnOptions};
use super::output::tail;
use super::supervise::supervise_watching;
use super::vm::Files;
use serde_json::{Map, Value, json};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

pub struct Uml;

/// The columns of a run that measures UML at both helper placements.
static AT: [At; 2] = [
    At { base: &Uml, at: HelperPlacement::Same, name: "uml helper=same", launch },
    At { base: &Uml, at: HelperPlacement::Cross, name: "uml helper=cross", launch },
];

/// Its processes: the kernel's intercepts, those it traces run the program.
const ROLES: Roles = Roles {
    rule: Rule::Traced,
    intercepting: "the UML kernel's process (and its helpers, which it does not trace)",
    program: "the processes it traces, one per guest address space",
};

/// The kernel Debian's user-mode-linux installs.
pub const UML: &str = "linux.uml";
const INSTALL: &str = "apt-get install user-mode-linux (scripts/setup installs it)";
/// What the UML kernel does with its processes (6.1: the only mode there is).
const MODE: &str = "SKAS0: each address space a host process the UML kernel traces with ptrace; a system call stops it and \
                    the kernel's process serves it, a page fault reaches the kernel as SIGSEGV";

/// The uml environment's own options.
#[derive(clap::Args, Debug, Clone)]
pub struct UmlArgs {
    /// The User-Mode Linux kernel of --env uml (default: linux.uml on the
    /// PATH, from Debian's user-mode-linux).
    #[arg(long, value_name = "PATH")]
    pub uml_kernel: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum UmlError {
    #[error("uml: no User-Mode Linux kernel: {UML} is not on the PATH; {INSTALL}, or name one with --uml-kernel")]
    Missing,
    #[error("--uml-kernel {0}: not an executable file (a User-Mode Linux kernel such as /usr/bin/{UML} is)")]
    NotExecutable(PathBuf),
    #[error("--uml-kernel: {0}")]
    Untrusted(crate::base::fsafe::UnsafePath),
    #[error("uml: its options: {0}")]
    Options(#[from] clap::Error),
    #[error("uml: starting {0}: {1}")]
    Start(PathBuf, std::io::Error),
    #[error(
        "--guest-append {0}: uml sets that parameter itself (its memory, initramfs, runtime files, consoles and the hostfs it keeps shut); leave it out"
    )]
    Reserved(String),
}

impl OwnError for UmlError {}

impl Environment for Uml {
    fn name(&self) -> &'static str {
        "uml"
    }

    fn about(&self) -> &'static str {
        "User-Mode Linux: a Linux kernel para-virtualised as processes of this one, this static binary its /init; one CPU"
    }

    fn options(&self) -> Option<OwnOptions> {
        Some(OwnOptions::of::<UmlArgs>("uml").and::<GuestKernelArgs>(GUEST_KERNEL_OPTIONS).and::<HelperArgs>(helpers::OPTIONS))
    }

    fn check(&self, o: &EnvOptions) -> Result<(), EnvError> {
        helpers::check(o)?;
        match o.own.get::<UmlArgs>()?.uml_kernel {
            Some(k) => named_kernel(k).map(drop).map_err(Into::into),
            None => Ok(()),
        }
    }

    fn columns(&self, o: &EnvOptions) -> Result<Option<Vec<super::environment::Env>>, EnvError> {
        helpers::columns(o, &AT)
    }

    fn launch(&self, spec: &GuestSpec, _plan: &[crate::run::plan::PlannedCase], o: &EnvOptions) -> Result<Outcome, EnvError> {
        launch(spec, o, helpers::single(o)?)
    }
}

/// The kernel --uml-kernel names, by its real path, checked: it runs as the
/// caller, so no other user may be able to change it or a directory above it.
fn named_kernel(k: PathBuf) -> Result<PathBuf, UmlError> {
    if !executable(&k) {
        return Err(UmlError::NotExecutable(k));
    }
    crate::base::fsafe::trusted_program(&k).map_err(UmlError::Untrusted)
}

/// The UML kernel: the one given, else linux.uml on the PATH.
fn find(o: &EnvOptions) -> Result<PathBuf, UmlError> {
    if let Some(k) = o.own.get::<UmlArgs>()?.uml_kernel {
        return named_kernel(k);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path).map(|d| d.join(UML)).find(|p| executable(p)).ok_or(UmlError::Missing)
}

/// The UML kernel's version (`linux.uml --version` prints its release).
fn version(kernel: &Path) -> String {
    Command::new(kernel)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The empty directory of the run's private one that is a UML guest's
/// hostfs root, should its kernel register hostfs at all.
const HOSTFS_ROOT: &str = "uml-hostfs-root";

/// Parameters of the UML kernel that [`command`] sets and `--guest-append` may not.
const RESERVED: [&str; 8] = ["mem", "initrd", "uml_dir", "umid", "con", "ssl", "hostfs", "initcall_blacklist"];

/// The words of `--guest-append` (and the isolated parameters: none on one
/// CPU), refused where they name a parameter oscycles sets.
fn appended(line: &str) -> Result<Vec<String>, UmlError> {
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    let name = |w: &str| w.split('=').next().unwrap_or(w).trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
    match words.iter().find(|w| RESERVED.contains(&name(w).as_str())) {
        Some(w) => Err(UmlError::Reserved(w.clone())),
        None => Ok(words),
    }
}

/// The kernel's command line: memory, the initramfs, its runtime files in
/// the run's private directory, the console on stdout only; then `extra`.
fn command(kernel: &Path, files: &Files, o: &EnvOptions, extra: &[String]) -> Command {
    let mut cmd = Command::new(kernel);
    cmd.arg(format!("mem={}M", o.vm_mem_mib));
    cmd.arg(format!("initrd={}", files.initrd.display()));
    cmd.arg(format!("uml_dir={}", o.work.display()));
    cmd.arg(format!("umid={}", crate::measure::scratch::unique_name("uml")));
    cmd.args(["con=null", "con0=null,fd:2", "ssl=null", "ssl1=null,fd:1", "quiet", "loglevel=3"]);
    // No hostfs: Debian's kernel has it built in, and a guest mounting it
    // would reach the host's files as the user running oscycles (root).
    // Its initcall is not run (no such file system in the guest), and should
    // a kernel name it otherwise, its root is an empty private directory.
    cmd.arg("initcall_blacklist=init_hostfs");
    cmd.arg(format!("hostfs={}", o.work.join(HOSTFS_ROOT).display()));
    cmd.args(extra);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Its own process group, so that every process of it is killed at the end.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    crate::measure::watchdog::die_with_parent(&mut cmd);
    cmd
}

/// Boots the UML kernel once with `spec` in its initramfs and watches it,
/// its processes placed `at`.
fn launch(spec: &GuestSpec, o: &EnvOptions, at: HelperPlacement) -> Result<Outcome, EnvError> {
    EnvError::x86_only("uml", "Debian's User-Mode Linux kernel is x86-64 (and so is its /init, this binary, there)")?;
    let kernel = find(o)?;
    let cpus = helpers::cpus_of(at, o)?;
    let files = Files::new("uml", o)?;
    let empty = o.work.join(HOSTFS_ROOT);
    if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(&empty)
        && e.kind() != std::io::ErrorKind::AlreadyExists
    {
        return Err(EnvError::io(format!("creating {}", empty.display()))(e));
    }
    // Debian's UML is built without SMP: one CPU, nothing to detach the measured one from.
    let (line, spec) = boot_line(&GuestSpec { vm_cpus: 1, ..spec.clone() }, "", o)?;
    let extra = appended(&line)?;
    write_initramfs(&files.initrd, &o.exe, &spec, &[])?;
    let start = Instant::now();
    let mut cmd = command(&kernel, &files, o, &extra);
    let cmdline: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
    let child = cmd.spawn().map_err(|e| UmlError::Start(kernel.clone(), e))?;
    let group = child.id() as libc::pid_t;
    // Its helpers die with oscycles too, SIGKILL included (issue 43, item 10).
    let guard = crate::measure::watchdog::guard_group(group).map_err(|e| {
        // SAFETY: kill takes no pointers; the group is the one just started.
        unsafe { libc::kill(-group, libc::SIGKILL) };
        UmlError::Start(kernel.clone(), e)
    })?;
    let placer = Placer::start(child.id(), at, cpus, ROLES);
    let end = supervise_watching(child, start, o.init_timeout, o.run_timeout, &mut |hello| {
        if hello {
            placer.arm();
        }
        None
    });
    let placed = placer.finish();
    // SAFETY: kill takes no pointers; the group is the one its kernel led
    // (its address spaces' processes), none of which can have been reaped
    // and reused while its leader's group id is ours to name.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    drop(guard);
    let log_tail = tail(&end.stderr);
    if let Some(w) = end.why {
        return Err(EnvError::Ended { env: "uml", why: w, hint: "", tail: log_tail });
    }
    let mut facts = Map::new();
    facts.insert("kernel".into(), json!(kernel.display().to_string()));
    facts.insert("uml_version".into(), json!(version(&kernel)));
    facts.insert("uml_mode".into(), json!(MODE));
    facts.insert("memory_mib".into(), json!(o.vm_mem_mib));
    facts.insert(crate::data::schema_core::environment::GUEST_CMDLINE.into(), json!(cmdline.join(" ")));
    // Debian's UML is built without SMP: one CPU whatever --vm-cpus says.
    facts.insert("vcpus".into(), json!(1));
    if o.vm_cpus > 1 {
        facts.insert("vcpus_asked".into(), json!(o.vm_cpus));
    }
    facts.insert(helpers::FACT.into(), placed);
    facts.insert("clean_exit".into(), Value::Bool(end.status.is_some_and(|s| s.success())));
    Ok(Outcome { messages: end.messages, status: end.status, facts, log_tail, doc: None })
}

/// Whether `p` exists and can be executed.
pub fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_words_go_on_unless_they_are_parameters_uml_sets() {
        assert_eq!(appended("preempt=full nohz=on").unwrap(), ["preempt=full", "nohz=on"]);
        assert!(appended("").unwrap().is_empty());
        for bad in ["hostfs=/", "con0=fd:0,fd:1", "ssl1=null", "initcall_blacklist=x", "quiet mem=64G", "umid=other"] {
            assert!(matches!(appended(bad), Err(UmlError::Reserved(_))), "{bad}");
        }
    }
}
