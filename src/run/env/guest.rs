//! oscycles as /init of a guest: mount what the suites need, say hello on
//! the results port as early as possible, run the suites the host asked for
//! (in /oscycles-guest.json), send the run document back framed, power off.
//! [`serve`] is also what every `__env-child` does after its hello.

use super::frame;
use crate::run::prepared;
use crate::run::spec::RunSpec;
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::io::Write;
use std::path::Path;

pub const SPEC_PATH: &str = "/oscycles-guest.json";

crate::named_enum! {
    /// What a child's init does with its spec: run it, or (tests) misbehave
    /// the way a broken guest does.
    pub enum GuestMode {
        /// Run the spec and send the document back.
        Run = "run",
        /// Say hello, then sleep (a guest that stops answering).
        Hang = "hang",
        /// Exit at once (a guest kernel panics).
        Panic = "panic",
        /// A PVH dom0 without an IOMMU: Xen panics (the xen-* environments).
        XenPanic = "xen-panic",
        /// dom0's kernel finds no /init (the xen-* environments).
        NoInit = "no-init",
        /// Try to reach the host's files (UML's hostfs) and say what was
        /// seen, as the error of the run (tests of the isolation).
        ProbeHost = "probe-host",
        /// Run, then return two results of cases no one planned.
        Unplanned = "unplanned",
        /// Run, then return a result whose minimum is above its maximum.
        BadNumbers = "bad-numbers",
    }
}

/// What the host asks of the guest.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GuestSpec {
    /// The run to measure (its results directory is the guest's own).
    pub run: RunSpec,
    /// [`GuestMode::Run`] but in tests.
    pub mode: GuestMode,
    /// The size the host gave the environment: vCPUs (a container: CPUs'
    /// worth of time) and memory in MiB.
    pub vm_cpus: u32,
    pub vm_mem_mib: u32,
}

/// Whether this process is a guest's /init with a spec to follow.
pub fn is_guest_init() -> bool {
    std::process::id() == 1 && Path::new(SPEC_PATH).exists()
}

pub(crate) fn mount(src: &str, target: &str, fstype: &str) {
    let _ = std::fs::create_dir_all(target);
    let (s, t, f) = (CString::new(src).unwrap(), CString::new(target).unwrap(), CString::new(fstype).unwrap());
    // SAFETY: NUL-terminated strings that outlive the call; no data argument.
    unsafe { libc::mount(s.as_ptr(), t.as_ptr(), f.as_ptr(), 0, std::ptr::null()) };
}

/// Where the initramfs names another results port than ttyS1 (a Xen
/// domU: its console, hvc0, which dom0 relays).
pub const PORT_PATH: &str = "/oscycles-port";

/// The results port: the one the initramfs names, else the second serial
/// port (nothing else writes there), else the console.
pub(crate) fn port() -> std::fs::File {
    let named = std::fs::read_to_string(PORT_PATH).map(|p| p.trim().to_string()).ok();
    for p in named.iter().map(String::as_str).chain(["/dev/ttyS1", "/dev/console"]) {
        if let Ok(f) = std::fs::OpenOptions::new().write(true).custom_flags_noctty().open(p) {
            return f;
        }
    }
    std::fs::OpenOptions::new().write(true).open("/dev/null").expect("/dev/null")
}

trait NoCtty {
    fn custom_flags_noctty(&mut self) -> &mut Self;
}

impl NoCtty for std::fs::OpenOptions {
    fn custom_flags_noctty(&mut self) -> &mut Self {
        std::os::unix::fs::OpenOptionsExt::custom_flags(self, libc::O_NOCTTY)
    }
}

/// QEMU's isa-debug-exit device on x86 (exit status 0x10 << 1 | 1 = 33
/// means a clean finish to the host), where the guest may use it.
#[cfg(target_arch = "x86_64")]
fn debug_exit() {
    // SAFETY: ioperm takes no pointers; outb on port 0xf4 after ioperm
    // granted it is the isa-debug-exit protocol.
    unsafe {
        if libc::ioperm(0xf4, 4, 1) == 0 {
            std::arch::asm!("out dx, al", in("dx") 0xf4u16, in("al") 0x10u8, options(nomem, nostack));
        }
    }
}

/// aarch64's `virt` machine has no isa-debug-exit: the power-off (PSCI
/// SYSTEM_OFF) ends QEMU.
#[cfg(not(target_arch = "x86_64"))]
fn debug_exit() {}

/// Ends the guest: QEMU's isa-debug-exit device where there is one, else
/// a power-off (ACPI on x86, PSCI on aarch64).
pub fn power_off() -> ! {
    // SAFETY: sync takes no arguments.
    unsafe { libc::sync() };
    debug_exit();
    // SAFETY: reboot takes no pointers; it ends the guest.
    unsafe { libc::reboot(libc::RB_POWER_OFF) };
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

pub fn send(out: &mut dyn Write, kind: &str, id: u32, payload: &[u8]) {
    let _ = out.write_all(frame::encode(kind, id, payload).as_bytes());
    let _ = out.flush();
}

/// After the hello: sends `facts`, measures the spec with results in
/// `results` (a fresh directory; [`prepared::measure_in_child`]), sends the
/// run document or an error.
pub fn serve(out: &mut dyn Write, spec: &GuestSpec, facts: serde_json::Map<String, serde_json::Value>, results: &Path) {
    serve_with(out, spec, facts, results, &prepared::measure_in_child);
}

/// [`serve`], the spec measured by `measure` (which returns the exit code):
/// an environment of a test's, or of a program with families of its own.
pub fn serve_with(
    out: &mut dyn Write,
    spec: &GuestSpec,
    facts: serde_json::Map<String, serde_json::Value>,
    results: &Path,
    measure: &dyn Fn(&RunSpec) -> u8,
) {
    send(out, "facts", 1, serde_json::Value::Object(facts).to_string().as_bytes());
    if spec.mode == GuestMode::Panic {
        // A guest's PID 1 exiting panics its kernel; a child just ends.
        std::process::exit(1);
    }
    if spec.mode == GuestMode::Hang {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    if spec.mode == GuestMode::ProbeHost {
        send(out, "error", 1, probe_host().as_bytes());
        return;
    }
    let here = RunSpec { results: results.to_path_buf(), quiet: true, ..spec.run.clone() };
    let code = measure(&here);
    let doc = std::fs::read_dir(results)
        .ok()
        .and_then(|d| d.flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|x| x == "json")))
        .and_then(|p| std::fs::read(p).ok());
    match doc {
        Some(bytes) => send(out, "run", 1, &forged(spec.mode, bytes)),
        None => send(out, "error", 1, format!("oscycles run ended with exit code {code} and saved no results").as_bytes()),
    }
}

/// After the hello, in an environment's child: serves `spec` on stdout with
/// `facts`, the results in a private directory removed afterwards.
pub fn serve_here(spec: &GuestSpec, facts: serde_json::Map<String, serde_json::Value>) -> u8 {
    let mut out = std::io::stdout();
    // A run directory (locked while it lives): one a killed container leaves, the next run removes.
    let dir = crate::measure::scratch::RunDir::private(&std::env::temp_dir());
    match dir {
        Ok(dir) => {
            serve(&mut out, spec, facts, &dir.path().join("results"));
            0
        }
        Err(e) => {
            send(&mut out, "error", 1, format!("a private directory for the results: {e}").as_bytes());
            1
        }
    }
}

/// The document as a misbehaving guest of the tests returns it.
fn forged(mode: GuestMode, bytes: Vec<u8>) -> Vec<u8> {
    let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(&bytes) else { return bytes };
    let Some(results) = v["results"].as_array_mut() else { return bytes };
    match mode {
        GuestMode::Unplanned if !results.is_empty() => {
            for name in ["forged.one", "forged.two"] {
                let mut r = results[0].clone();
                r["benchmark"] = name.into();
                results.push(r);
            }
        }
        GuestMode::BadNumbers => {
            for s in results.iter_mut().filter_map(|r| r["metrics"].get_mut(0)).map(|m| &mut m["summary"]) {
                s["min"] = (s["max"].as_f64().unwrap_or(1.0) * 2.0 + 1.0).into();
            }
        }
        _ => return bytes,
    }
    serde_json::to_vec(&v).unwrap_or(bytes)
}

/// What a guest sees when it mounts UML's hostfs (the host's root, or the
/// host's /etc): "probe-host: hostfs of '' -> <entries or error>; ...".
fn probe_host() -> String {
    let mut said = vec![];
    for (i, data) in ["", "/etc"].iter().enumerate() {
        let target = format!("/probe-host-{i}");
        let _ = std::fs::create_dir_all(&target);
        let (s, t, f, d) = (c"none", CString::new(target.as_str()).unwrap(), c"hostfs", CString::new(*data).unwrap());
        let dp = if data.is_empty() { std::ptr::null() } else { d.as_ptr().cast() };
        // SAFETY: NUL-terminated strings that outlive the call.
        let r = unsafe { libc::mount(s.as_ptr(), t.as_ptr(), f.as_ptr(), 0, dp) };
        let seen = if r != 0 {
            format!("refused ({})", std::io::Error::last_os_error())
        } else {
            let names: Vec<String> = std::fs::read_dir(&target)
                .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
                .unwrap_or_default();
            format!("mounted, {} entries: {}", names.len(), names.iter().take(20).cloned().collect::<Vec<_>>().join(" "))
        };
        said.push(format!("hostfs of '{data}' -> {seen}"));
    }
    format!("probe-host: {}", said.join("; "))
}

/// Facts of the environment as seen from inside.
pub fn facts_inside() -> serde_json::Map<String, serde_json::Value> {
    let mut f = serde_json::Map::new();
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default().trim().to_string();
    // uname(2), which every Linux personality answers (gVisor's Sentry has no /proc/sys/kernel).
    f.insert(crate::data::schema_core::environment::KERNEL_INSIDE.into(), crate::measure::host::uname().0.into());
    f.insert("cpus_inside".into(), read("/sys/devices/system/cpu/online").into());
    f.insert("memory_inside_kib".into(), crate::measure::host::meminfo("MemTotal").unwrap_or(0).into());
    if let Some(h) = crate::measure::host::sys_hypervisor() {
        f.insert("hypervisor_inside".into(), serde_json::to_value(h).unwrap_or_default());
    }
    // A TSC the hypervisor emulates in steps (the run lengthens its batches);
    // aarch64's generic timer does not step (its coarse ticks are not steps).
    let steps =
        if crate::measure::arch::COUNTER_MAY_STEP { crate::measure::clock::steps(&crate::measure::clock::Tsc, 100_000) } else { None };
    if let Some(step) = steps {
        f.insert(crate::data::schema_core::environment::TSC_STEP_CYCLES.into(), step.into());
    }
    f
}

/// Why a JSON file of a guest's (its spec, a domU's plan) could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadJsonError {
    #[error(transparent)]
    Read(#[from] std::io::Error),
    #[error(transparent)]
    Parse(#[from] serde_json::Error),
}

/// Reads and parses the JSON file at `path`.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ReadJsonError> {
    Ok(serde_json::from_str(&std::fs::read_to_string(path)?)?)
}

/// A system call that failed, with the error.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct SysError {
    pub what: &'static str,
    pub source: std::io::Error,
}

/// Brings up the loopback interface of the calling thread's network namespace.
pub fn loopback_up() -> Result<(), SysError> {
    // SAFETY: a datagram socket for the ioctl; ifreq is zeroed, named "lo",
    // read, flagged IFF_UP and written back; the socket is closed.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        if s < 0 {
            return Err(SysError { what: "socket", source: std::io::Error::last_os_error() });
        }
        let mut ifr: libc::ifreq = std::mem::zeroed();
        for (d, b) in ifr.ifr_name.iter_mut().zip(b"lo\0") {
            *d = *b as libc::c_char;
        }
        let r = libc::ioctl(s, libc::SIOCGIFFLAGS, &mut ifr);
        if r == 0 {
            ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(s, libc::SIOCSIFFLAGS, &ifr);
        }
        libc::close(s);
        if r != 0 {
            return Err(SysError { what: "bringing up lo", source: std::io::Error::last_os_error() });
        }
        Ok(())
    }
}

/// The guest's main: never returns.
pub fn main() -> ! {
    mount("devtmpfs", "/dev", "devtmpfs");
    let mut out = port();
    send(&mut out, "hello", 0, b"init");
    mount("proc", "/proc", "proc");
    mount("sysfs", "/sys", "sysfs");
    mount("tmpfs", "/tmp", "tmpfs");
    mount("tmpfs", "/run", "tmpfs");
    // TCP and UDP cases talk over loopback, which a bare kernel leaves down.
    let _ = loopback_up();
    match read_json::<GuestSpec>(Path::new(SPEC_PATH)) {
        Ok(spec) => serve(&mut out, &spec, facts_inside(), Path::new("/tmp/oscycles-results")),
        Err(e) => send(&mut out, "error", 1, format!("reading {SPEC_PATH}: {e}").as_bytes()),
    }
    // The UART sends at its own pace: wait until its last byte is out, or
    // the end of the document is lost when the guest powers off.
    // SAFETY: tcdrain on the descriptor `out` owns (a failure on a
    // non-terminal is harmless).
    unsafe { libc::tcdrain(std::os::unix::io::AsRawFd::as_raw_fd(&out)) };
    power_off();
}
