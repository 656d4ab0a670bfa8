//! dom0's /init when the suites run in a domU: a program of its own, apart
//! from the host side in [`super`]. It mounts what the toolstack needs,
//! loads the Xen modules, starts xenstored, xen-init-dom0 and xenconsoled,
//! creates the domU with `xl create` from the [`DomUPlan`] the host wrote
//! into its initramfs, and copies the domU's console (where its framed
//! results land) to the results port unchanged.

use super::super::guest;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// In dom0's initramfs: what to start (a domU's dom0 only).
pub const PLAN_PATH: &str = "/oscycles-xen-domu.json";
/// The Xen modules of the guest kernel dom0 loads for the toolstack, in order
/// (xenfs uses xen-privcmd).
pub const MODULES: [&str; 5] = ["xen-evtchn.ko", "xen-privcmd.ko", "xen-gntdev.ko", "xen-gntalloc.ko", "xenfs/xenfs.ko"];
const TOOLS: &str = "/usr/lib/xen-4.17/bin";
const DOMU_NAME: &str = "oscycles";

/// What dom0's /init starts, written into its initramfs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DomUPlan {
    /// xl's `type`: "hvm" or "pvh".
    pub kind: String,
    pub memory_mib: u32,
    pub vcpus: u32,
    /// The domU kernel's command line (xl's `extra`; no double quote, as
    /// `--guest-append` takes none).
    pub cmdline: String,
}

/// What failed in dom0 starting a domU.
#[derive(Debug, thiserror::Error)]
pub enum Dom0Error {
    #[error(transparent)]
    Plan(#[from] guest::ReadJsonError),
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    #[error(transparent)]
    System(std::io::Error),
    /// A toolstack program that failed, with its output.
    #[error("{command}: {status}; {output}")]
    Tool { command: String, status: std::process::ExitStatus, output: String },
    #[error("{path} did not appear within {secs} s")]
    NotWithin { path: String, secs: u64 },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Dom0Error {
    let what = what.into();
    move |source| Dom0Error::Io { what, source }
}

/// Whether this process is dom0's /init with a domU to start.
pub fn is_dom0_init() -> bool {
    std::process::id() == 1 && Path::new(PLAN_PATH).exists()
}

/// dom0's /init for a domU: start the toolstack and the domU, copy its
/// console to the results port until it has sent its results or is gone,
/// power off. Never returns.
pub fn dom0_main() -> ! {
    for (src, target, fs) in
        [("devtmpfs", "/dev", "devtmpfs"), ("proc", "/proc", "proc"), ("sysfs", "/sys", "sysfs"), ("tmpfs", "/tmp", "tmpfs")]
    {
        guest::mount(src, target, fs);
    }
    for (src, target, fs) in [("tmpfs", "/run", "tmpfs"), ("tmpfs", "/var", "tmpfs"), ("devpts", "/dev/pts", "devpts")] {
        guest::mount(src, target, fs);
    }
    let mut out = guest::port();
    // Not a hello: the host's init timeout runs until the domU's /init says it.
    guest::send(&mut out, "dom0", 0, b"init");
    let plan: Result<DomUPlan, Dom0Error> = guest::read_json(Path::new(PLAN_PATH)).map_err(Dom0Error::Plan);
    let started = plan.and_then(|p| start_domu(&p));
    match started {
        Ok(()) => relay(&mut out),
        Err(e) => {
            say(&format!("oscycles dom0: {e}"));
            guest::send(&mut out, "error", 1, format!("dom0: {e}").as_bytes());
        }
    }
    // SAFETY: tcdrain on the descriptor `out` owns.
    unsafe { libc::tcdrain(std::os::unix::io::AsRawFd::as_raw_fd(&out)) };
    guest::power_off();
}

/// A line on dom0's console (hvc0, which Xen writes to the console log).
fn say(line: &str) {
    if let Ok(mut c) = std::fs::OpenOptions::new().write(true).open("/dev/console") {
        let _ = writeln!(c, "{line}");
    }
}

/// Loads a kernel module from a file.
fn load_module(path: &Path) -> Result<(), Dom0Error> {
    let f = std::fs::File::open(path).map_err(io(path.display().to_string()))?;
    // SAFETY: finit_module on a descriptor `f` owns, with an empty,
    // NUL-terminated parameter string and no flags.
    let r = unsafe { libc::syscall(libc::SYS_finit_module, std::os::unix::io::AsRawFd::as_raw_fd(&f), c"".as_ptr(), 0) };
    if r != 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
        return Err(io(format!("loading {}", path.display()))(std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Runs a toolstack program to its end; its output is the error if it
/// fails. The output goes through a file, not a pipe: `xl create` leaves a
/// child behind (watching the domain) that would hold a pipe open. While it
/// runs, what it and the toolstack's logs say goes to dom0's console every
/// 20 s (a stuck `xl create` then says where).
fn run_tool(program: &str, args: &[&str]) -> Result<(), Dom0Error> {
    let log = format!("/tmp/{}.out", Path::new(program).file_name().map_or("tool".into(), |n| n.to_string_lossy()));
    let f = std::fs::File::create(&log).map_err(io(log.as_str()))?;
    let mut child = Command::new(program)
        .args(args)
        .env("LD_LIBRARY_PATH", "/lib/x86_64-linux-gnu")
        .env("PATH", format!("{TOOLS}:/usr/libexec"))
        .stdin(std::process::Stdio::null())
        .stdout(f.try_clone().map_err(Dom0Error::System)?)
        .stderr(f)
        .spawn()
        .map_err(io(program))?;
    let t = Instant::now();
    let mut told = 0;
    let status = loop {
        if let Some(st) = child.try_wait().map_err(Dom0Error::System)? {
            break st;
        }
        if t.elapsed().as_secs() / 20 > told {
            told += 1;
            say(&format!("oscycles dom0: {program} {} still running after {} s: {}", args.join(" "), t.elapsed().as_secs(), logs(&log)));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if status.success() {
        Ok(())
    } else {
        let output = std::fs::read_to_string(&log).unwrap_or_default().trim().to_string();
        Err(Dom0Error::Tool { command: format!("{program} {}", args.join(" ")), status, output })
    }
}

/// The last lines of a tool's output and of the toolstack's logs.
fn logs(own: &str) -> String {
    let mut files = vec![PathBuf::from(own)];
    files.extend(std::fs::read_dir("/var/log/xen").into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.is_file()));
    let mut out = String::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        out += &format!("\n  [{}] {}", f.display(), lines[lines.len().saturating_sub(8)..].join("\n    "));
    }
    out
}

/// Waits until `path` exists.
fn wait_for(path: &str, within: Duration) -> Result<(), Dom0Error> {
    let t = Instant::now();
    while !Path::new(path).exists() {
        if t.elapsed() > within {
            return Err(Dom0Error::NotWithin { path: path.to_string(), secs: within.as_secs() });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// xl's configuration of the domU.
fn domu_config(p: &DomUPlan) -> String {
    let mut cfg = format!(
        "name = \"{DOMU_NAME}\"\ntype = \"{}\"\nmemory = {}\nvcpus = {}\nkernel = \"/domu/vmlinuz\"\nramdisk = \"/domu/initrd.cpio\"\n\
         extra = \"{}\"\n\
         on_poweroff = \"preserve\"\non_reboot = \"preserve\"\non_crash = \"preserve\"\n",
        p.kind,
        p.memory_mib,
        p.vcpus,
        p.cmdline.replace('"', "")
    );
    if p.kind == "hvm" {
        cfg += "device_model_override = \"/usr/libexec/xen-qemu-system-i386\"\nvnc = 0\nsdl = 0\nserial = \"none\"\n";
    }
    cfg
}

/// The toolstack (modules, xenfs, xenstored, xen-init-dom0, xenconsoled
/// logging guests' consoles), then `xl create`.
fn start_domu(p: &DomUPlan) -> Result<(), Dom0Error> {
    for m in MODULES {
        load_module(&Path::new("/modules").join(Path::new(m).file_name().expect("a file name")))?;
    }
    guest::mount("xenfs", "/proc/xen", "xenfs");
    for d in ["/run/xen", "/run/xenstored", "/var/lib/xen", "/var/log/xen/console"] {
        std::fs::create_dir_all(d).map_err(io(d))?;
    }
    let _ = std::os::unix::fs::symlink("/run", "/var/run");
    run_tool(&format!("{TOOLS}/xenstored"), &[])?;
    wait_for("/run/xenstored/socket", Duration::from_secs(30))?;
    run_tool(&format!("{TOOLS}/xen-init-dom0"), &[])?;
    run_tool(&format!("{TOOLS}/xenconsoled"), &["--log=guest", "--log-dir=/var/log/xen/console"])?;
    std::fs::write("/tmp/domu.cfg", domu_config(p)).map_err(Dom0Error::System)?;
    let xl = format!("{TOOLS}/xl");
    let mut tries = 0;
    loop {
        tries += 1;
        say(&format!("oscycles dom0: xl create ({} domU, try {tries} of 2)", p.kind));
        match run_tool(&xl, &["-vvv", "create", "/tmp/domu.cfg"]) {
            // libxl gives an HVM domU's device model 60 s to start, a limit
            // built into it; an emulated dom0 on a busy host can miss it once
            // (the second start finds its libraries in the page cache).
            Err(e) if tries < 2 => {
                say(&format!("oscycles dom0: xl create failed, destroying the domU and trying again: {e}"));
                let _ = run_tool(&xl, &["destroy", DOMU_NAME]);
            }
            r => return r,
        }
    }
}

/// The domU's line of `xl list` (name id MiB vcpus state seconds, single
/// spaces), None when it is not listed.
fn domu_line() -> Option<String> {
    run_tool(&format!("{TOOLS}/xl"), &["list"]).ok()?;
    let list = std::fs::read_to_string("/tmp/xl.out").unwrap_or_default();
    list.lines().find(|l| l.starts_with(DOMU_NAME)).map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Whether the domU has stopped running: shut down, crashed or dying (the
/// state letters s, c, d of `xl list`).
fn stopped(line: &str) -> bool {
    line.split_whitespace().nth(4).is_some_and(|state| state.contains(['s', 'c', 'd']))
}

/// Copies the domU's console log to `out` as it grows, until the domU sent
/// its results (or an error), or stopped and its console stayed quiet for
/// a few seconds; says the log's end on dom0's console if no results came.
/// The domU is preserved when it stops (xl's on_poweroff): a destroyed
/// domain takes what xenconsoled has not yet read of its console ring with
/// it, which under an emulated dom0 can be the end of the results.
fn relay(out: &mut std::fs::File) {
    let log = format!("/var/log/xen/console/guest-{DOMU_NAME}.log");
    let mut d = super::super::frame::Decoder::default();
    let (mut at, mut done, mut text) = (0usize, false, String::new());
    let (mut checked, mut last_byte, mut stopped_at, mut misses) = (Instant::now(), Instant::now(), None, 0);
    let (started, mut told) = (Instant::now(), 0);
    loop {
        let bytes = std::fs::read(&log).unwrap_or_default();
        if bytes.len() > at {
            last_byte = Instant::now();
            let _ = out.write_all(&bytes[at..]);
            let _ = out.flush();
            let s = String::from_utf8_lossy(&bytes[at..]).to_string();
            d.feed(&s);
            // The domU's own lines (its kernel's) also on dom0's console,
            // where the host's log of the run and its error messages are.
            text += &s;
            if let Some(nl) = text.rfind('\n') {
                let lines: Vec<String> = text
                    .drain(..=nl)
                    .collect::<String>()
                    .lines()
                    .filter(|l| !l.contains("@@OSCYCLES") && !l.trim().is_empty())
                    .map(|l| format!("domU: {l}"))
                    .collect();
                if !lines.is_empty() {
                    say(&lines.join("\n"));
                }
            }
            at = bytes.len();
            done |= d.take().iter().any(|(k, _)| k == "run" || k == "error");
        }
        if stopped_at.is_none() && checked.elapsed() > Duration::from_secs(2) {
            checked = Instant::now();
            match domu_line() {
                Some(line) if stopped(&line) => {
                    say(&format!("oscycles dom0: domU stopped: {line} (name id MiB vcpus state seconds)"));
                    stopped_at = Some(Instant::now());
                }
                Some(_) => misses = 0,
                // Three misses in a row: gone (not a toolstack busy for a
                // moment; a preserved domU stays listed until destroyed).
                None => {
                    misses += 1;
                    if misses >= 3 {
                        stopped_at = Some(Instant::now());
                    }
                }
            }
        }
        if started.elapsed().as_secs() / 30 > told {
            told += 1;
            let line = domu_line().unwrap_or_else(|| "(not listed)".into());
            say(&format!(
                "oscycles dom0: domU {line} (name id MiB vcpus state seconds) after {} s, {at} bytes of console",
                started.elapsed().as_secs()
            ));
        }
        let drained = |t: Instant| t.elapsed() > Duration::from_secs(5) && last_byte.elapsed() > Duration::from_secs(5);
        if done || stopped_at.is_some_and(drained) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if !done {
        let partial = if d.midway() { "; a message began and did not end" } else { "" };
        say(&format!("oscycles dom0: the domU ended without sending results ({at} bytes of console{partial}); {}", logs("/tmp/xl.out")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_domu_config_names_the_device_model_only_for_hvm() {
        let cmdline = String::from("console=hvc0 rdinit=/init");
        let hvm = domu_config(&DomUPlan { kind: "hvm".into(), memory_mib: 512, vcpus: 1, cmdline: cmdline.clone() });
        assert!(hvm.contains("type = \"hvm\"") && hvm.contains("device_model_override") && hvm.contains("serial = \"none\""));
        let pvh = domu_config(&DomUPlan { kind: "pvh".into(), memory_mib: 512, vcpus: 1, cmdline });
        assert!(pvh.contains("memory = 512") && !pvh.contains("device_model_override"));
        assert!(pvh.contains("on_poweroff = \"preserve\""), "kept until its console is read");
        assert!(pvh.contains("extra = \"console=hvc0 rdinit=/init\""), "the command line the host planned");
    }

    #[test]
    fn a_stopped_domu_is_told_by_its_state() {
        assert!(stopped("oscycles 1 504 1 ---s-- 12.5"));
        assert!(stopped("oscycles 1 504 1 ----c- 3.0"));
        assert!(!stopped("oscycles 1 504 1 r----- 12.5"));
        assert!(!stopped("oscycles 1 504 1 -b---- 12.5"));
    }
}
