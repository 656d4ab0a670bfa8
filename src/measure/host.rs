//! Facts about the host that every run records: CPU, clock, kernel,
//! hypervisor, mitigations, frequency scaling.

use crate::measure::arch;
use crate::measure::clock::ClockInfo;
use crate::measure::placement;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TscFlags {
    pub constant_tsc: bool,
    pub nonstop_tsc: bool,
    pub rdtscp: bool,
    pub tsc_known_freq: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    pub cpu_model: String,
    pub cpus_online: String,
    pub cpus_allowed: String,
    pub memory_total_kib: u64,
    pub clock: ClockInfo,
    pub tsc_flags: TscFlags,
    pub clocksource: Option<String>,
    pub kernel_release: String,
    pub kernel_version: String,
    /// From the kernel's version string: "PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT" or "none".
    pub preemption: String,
    /// The preemption mode the kernel runs in now, where it says, and
    /// whether root could switch it (absent in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt: Option<PreemptMode>,
    pub kernel_cmdline: String,
    /// The cpuid hypervisor vendor (leaf 0x40000000), None on bare metal.
    pub hypervisor: Option<String>,
    /// What the kernel says of the hypervisor it runs on (/sys/hypervisor:
    /// Xen, with the guest type PV, PVH or HVM), where it says anything. A
    /// PV guest's cpuid is not Xen's (it is not trapped), so this is how a
    /// run in a Xen PV domain knows it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sys_hypervisor: Option<SysHypervisor>,
    /// Loaded kvm* modules (kvm, kvm_intel, kvm_amd, kvm_pvm...).
    pub kvm_modules: Vec<String>,
    /// /sys/devices/system/cpu/vulnerabilities, file name -> state.
    pub mitigations: BTreeMap<String, String>,
    /// cpufreq scaling governor of the first CPU, None where there is no cpufreq.
    pub governor: Option<String>,
    /// Things a reader of the numbers should know (no constant TSC...).
    pub warnings: Vec<String>,
}

/// The preemption mode: a PREEMPT_DYNAMIC kernel's current one (none,
/// voluntary, full, lazy), the one a kernel was built with, or unknown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreemptMode {
    /// "none", "voluntary", "full", "lazy", "rt"; None where nothing says.
    pub mode: Option<String>,
    /// Where the mode was read (or why nothing says).
    pub source: String,
    /// Why root cannot switch it while the kernel runs; None: it can
    /// (writing /sys/kernel/debug/sched/preempt).
    pub fixed_because: Option<String>,
}

/// Where debugfs is mounted (and where oscycles mounts it for the mode).
pub const DEBUGFS: &str = "/sys/kernel/debug";

/// Where a PREEMPT_DYNAMIC kernel shows (and takes) its current mode.
pub const SCHED_PREEMPT: &str = "/sys/kernel/debug/sched/preempt";

/// Whether `dir` is a mount point (a line of /proc/self/mountinfo names it).
pub fn mounted_at(dir: &str) -> bool {
    let info = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    info.lines().any(|l| l.split_whitespace().nth(4) == Some(dir))
}

impl PreemptMode {
    /// One phrase for a header: "none (from SOURCE); switchable by root" or "...; fixed: WHY".
    pub fn describe(&self) -> String {
        format!(
            "mode {} ({}); {}",
            self.mode.as_deref().unwrap_or("unknown"),
            self.source,
            self.fixed_because.as_deref().map_or_else(|| "switchable by root at run time".to_string(), |w| format!("not switchable: {w}"))
        )
    }
}

/// The mode in debugfs' text: the word in parentheses ("none (voluntary) full").
fn current_in_list(text: &str) -> Option<String> {
    text.split_whitespace().find(|w| w.starts_with('(') && w.ends_with(')')).map(|w| w.trim_matches(['(', ')']).to_string())
}

/// The build's default mode from a kernel config's text (CONFIG_PREEMPT_NONE=y...).
fn mode_in_config(config: &str) -> Option<&'static str> {
    [
        ("CONFIG_PREEMPT_NONE=y", "none"),
        ("CONFIG_PREEMPT_VOLUNTARY=y", "voluntary"),
        ("CONFIG_PREEMPT=y", "full"),
        ("CONFIG_PREEMPT_LAZY=y", "lazy"),
    ]
    .iter()
    .find(|(k, _)| config.lines().any(|l| l.trim() == *k))
    .map(|(_, m)| *m)
}

/// The preemption mode from what the kernel exposes: `model` (uname),
/// the command line, debugfs' sched/preempt (or why it could not be read),
/// the build's config where there is one in plain text.
pub fn preempt_mode(model: &str, cmdline: &str, debugfs: Result<String, String>, config: Option<&str>) -> PreemptMode {
    let from_cmdline = cmdline.split_whitespace().find_map(|w| w.strip_prefix("preempt=")).map(str::to_string);
    let built = config.and_then(mode_in_config);
    let fixed = |why: &str| Some(why.to_string());
    match model {
        "PREEMPT_RT" => {
            PreemptMode { mode: Some("rt".into()), source: "uname: PREEMPT_RT".into(), fixed_because: fixed("a PREEMPT_RT kernel") }
        }
        "PREEMPT_DYNAMIC" => match debugfs.map(|t| current_in_list(&t)) {
            Ok(Some(m)) => PreemptMode { mode: Some(m), source: SCHED_PREEMPT.into(), fixed_because: None },
            Ok(None) => PreemptMode {
                mode: from_cmdline,
                source: format!("{SCHED_PREEMPT} names no current mode"),
                fixed_because: fixed("unreadable mode"),
            },
            Err(why) => {
                let (mode, source) = match (from_cmdline, built) {
                    (Some(m), _) => (Some(m), "preempt= on the kernel command line".to_string()),
                    (None, Some(m)) => (Some(m.to_string()), "the kernel config's boot default".to_string()),
                    (None, None) => {
                        (None, "PREEMPT_DYNAMIC, no preempt= on the command line, no config in /boot or /proc/config.gz".to_string())
                    }
                };
                PreemptMode { mode, source, fixed_because: Some(format!("{SCHED_PREEMPT}: {why}")) }
            }
        },
        _ => PreemptMode {
            mode: if model == "PREEMPT" { Some("full".into()) } else { built.map(str::to_string) },
            source: if model == "PREEMPT" { "uname: PREEMPT".into() } else { "the kernel config".into() },
            fixed_because: fixed("not a PREEMPT_DYNAMIC kernel: the mode is chosen when it is built"),
        },
    }
}

/// [`preempt_mode`] of this kernel. Where debugfs is not mounted, root
/// reads the mode through a private mount of it (in a child's own mount
/// namespace: nothing outside sees it, nothing is left to unmount), so the
/// header says what `--preempt` would find (a kernel that refuses root the
/// file, as a locked-down one does) rather than that nothing is mounted.
fn preempt_here(model: &str, release: &str, cmdline: &str) -> PreemptMode {
    let debugfs = fs::read_to_string(SCHED_PREEMPT).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "not there (debugfs not mounted at /sys/kernel/debug, or no PREEMPT_DYNAMIC)".to_string(),
        _ => format!("reading it: {e}"),
    });
    let debugfs = match debugfs {
        // SAFETY: geteuid has no arguments.
        Err(_) if model == "PREEMPT_DYNAMIC" && unsafe { libc::geteuid() } == 0 && !mounted_at(DEBUGFS) => private_debugfs::read_preempt(),
        other => other,
    };
    let config = fs::read_to_string(format!("/boot/config-{release}")).ok().or_else(running_config);
    preempt_mode(model, cmdline, debugfs, config.as_deref())
}

/// The running kernel's own config (/proc/config.gz, where it was built
/// with IKCONFIG_PROC), read to at most 4 MiB of text.
fn running_config() -> Option<String> {
    use std::io::Read;
    let file = fs::File::open("/proc/config.gz").ok()?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(file).take(4 << 20).read_to_string(&mut text).ok()?;
    Some(text)
}

/// Reading sched/preempt through a debugfs mounted in a child's private
/// mount namespace.
mod private_debugfs {
    /// What the child reports: the file's text, or the step that failed and its errno.
    const MAX: usize = 256;

    /// The file's text, or why it could not be read (as the kernel said it).
    pub fn read_preempt() -> Result<String, String> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array it is given.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(format!("a pipe for the probe: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: the child calls only async-signal-safe functions (unshare,
        // mount, open, read, write, _exit) on memory it owns, then exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: as above; fds[1] is this child's copy of the pipe's write end.
            unsafe { child(fds[1]) }
        }
        // SAFETY: closing our copy of the write end, which we own.
        unsafe { libc::close(fds[1]) };
        let mut buf = [0u8; MAX + 8];
        let mut got = 0;
        while pid > 0 && got < buf.len() {
            // SAFETY: reads into the unused tail of buf, within its length.
            let n = unsafe { libc::read(fds[0], buf[got..].as_mut_ptr().cast(), buf.len() - got) };
            if n <= 0 {
                break;
            }
            got += n as usize;
        }
        // SAFETY: closing the read end we own; reaping our own child (no zombie left).
        unsafe {
            libc::close(fds[0]);
            if pid > 0 {
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
        if pid < 0 {
            return Err(format!("forking the probe: {}", std::io::Error::last_os_error()));
        }
        decode(&buf[..got])
    }

    /// The child's message: b'O' then the text, or b'E', the step and the errno (4 bytes, native order).
    fn decode(msg: &[u8]) -> Result<String, String> {
        match msg {
            [b'O', text @ ..] => Ok(String::from_utf8_lossy(text).into_owned()),
            [b'E', step, e0, e1, e2, e3] => {
                let err = std::io::Error::from_raw_os_error(i32::from_ne_bytes([*e0, *e1, *e2, *e3]));
                let what = match step {
                    b'u' => "a private mount namespace",
                    b'p' => "making its mounts private",
                    b'm' => "mounting debugfs in a private mount namespace",
                    _ => "reading it",
                };
                Err(format!("{what}: {err}"))
            }
            _ => Err("the probe said nothing".into()),
        }
    }

    /// The probe's child: never returns.
    ///
    /// # Safety
    /// Call only in a freshly forked child; `fd` is a pipe's write end.
    unsafe fn child(fd: libc::c_int) -> ! {
        let fail = |step: u8| {
            // SAFETY: the calling thread's errno location; reading it is always allowed.
            let e = unsafe { *libc::__errno_location() }.to_ne_bytes();
            let msg = [b'E', step, e[0], e[1], e[2], e[3]];
            // SAFETY: writes the six bytes of msg to our pipe, then ends the child.
            unsafe {
                libc::write(fd, msg.as_ptr().cast(), msg.len());
                libc::_exit(1)
            }
        };
        // SAFETY: valid NUL-terminated strings and null data pointers; the
        // calls read them only. The namespace dies with this child.
        unsafe {
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                fail(b'u');
            }
            if libc::mount(std::ptr::null(), c"/".as_ptr(), std::ptr::null(), libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()) != 0 {
                fail(b'p');
            }
            if libc::mount(c"debugfs".as_ptr(), c"/sys/kernel/debug".as_ptr(), c"debugfs".as_ptr(), 0, std::ptr::null()) != 0 {
                fail(b'm');
            }
            let f = libc::open(c"/sys/kernel/debug/sched/preempt".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if f < 0 {
                fail(b'r');
            }
            let mut msg = [0u8; MAX + 1];
            msg[0] = b'O';
            let n = libc::read(f, msg[1..].as_mut_ptr().cast(), MAX);
            if n < 0 {
                fail(b'r');
            }
            libc::write(fd, msg.as_ptr().cast(), 1 + n as usize);
            libc::_exit(0)
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn the_probes_message_reads_back() {
            assert_eq!(super::decode(b"Onone (voluntary) full\n"), Ok("none (voluntary) full\n".to_string()));
            let e = super::decode(&[b'E', b'r', 1, 0, 0, 0]).unwrap_err();
            assert!(e.starts_with("reading it: ") && e.contains("os error 1"), "{e}");
            assert!(super::decode(b"").is_err());
            assert!(super::decode(b"E").is_err());
        }
    }
}

/// /sys/hypervisor, as a kernel running on Xen fills it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SysHypervisor {
    /// "xen".
    pub kind: String,
    /// "PV", "PVH" or "HVM".
    pub guest_type: Option<String>,
    /// major.minor and extra, e.g. "4.17.7+13-g2445b30a44-0+deb12u1".
    pub version: Option<String>,
}

/// What /sys/hypervisor says, None where it is missing or empty.
pub fn sys_hypervisor() -> Option<SysHypervisor> {
    let kind = read_trim("/sys/hypervisor/type").filter(|k| !k.is_empty())?;
    let version = match (read_trim("/sys/hypervisor/version/major"), read_trim("/sys/hypervisor/version/minor")) {
        (Some(a), Some(b)) => Some(format!("{a}.{b}{}", read_trim("/sys/hypervisor/version/extra").unwrap_or_default())),
        _ => None,
    };
    Some(SysHypervisor { kind, guest_type: read_trim("/sys/hypervisor/guest_type"), version })
}

/// A /proc/meminfo field's number ("MemTotal" -> kiB, "HugePages_Free" -> pages).
pub fn meminfo(field: &str) -> Option<u64> {
    let m = fs::read_to_string("/proc/meminfo").ok()?;
    m.lines().find(|l| l.split(':').next() == Some(field))?.split_whitespace().nth(1)?.parse().ok()
}

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// This kernel's release, version and node name, as uname(2) gives them.
pub fn uname() -> (String, String, String) {
    // SAFETY: utsname is plain bytes; uname fills it in.
    let u = unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        libc::uname(&mut u);
        u
    };
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    (field(&u.release), field(&u.version), field(&u.nodename))
}

/// A /proc/PID/stat (or task stat) line: pid, command name, and the fields
/// after the name (field 3, the state, first). The name is in parentheses and
/// may itself hold spaces and parentheses, so it ends at the last ')'.
pub fn proc_stat(line: &str) -> Option<(u32, &str, Vec<&str>)> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = line[..open].trim().parse().ok()?;
    Some((pid, &line[open + 1..close], line[close + 1..].split_whitespace().collect()))
}

/// The parent of process `pid`, from its /proc/PID/stat.
pub fn parent_of(pid: i32) -> Option<i32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    proc_stat(&stat)?.2.get(1)?.parse().ok()
}

/// The processes this one can see in /proc.
pub fn pids() -> Vec<i32> {
    numbered_entries("/proc")
}

/// The threads of process `pid` (none when it is gone).
pub fn threads_of(pid: i32) -> Vec<i32> {
    numbered_entries(&format!("/proc/{pid}/task"))
}

/// The entries of `dir` named by a number.
fn numbered_entries(dir: &str) -> Vec<i32> {
    let Ok(d) = fs::read_dir(dir) else { return vec![] };
    d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect()
}

/// CPU time of `cpus` so far, from /proc/stat, in clock ticks: (stolen by
/// the hypervisor, all). None where the kernel does not say.
pub fn cpu_ticks(cpus: &[usize]) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    cpu_ticks_in(&text, cpus)
}

fn cpu_ticks_in(text: &str, cpus: &[usize]) -> Option<(u64, u64)> {
    let (mut steal, mut all, mut found) = (0, 0, 0);
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(cpu) = f.next().and_then(|n| n.strip_prefix("cpu")).and_then(|n| n.parse::<usize>().ok()) else { continue };
        if !cpus.contains(&cpu) {
            continue;
        }
        // user nice system idle iowait irq softirq steal (guest time is inside user)
        let v: Vec<u64> = f.take(8).filter_map(|x| x.parse().ok()).collect();
        if v.len() < 8 {
            return None;
        }
        steal += v[7];
        all += v.iter().sum::<u64>();
        found += 1;
    }
    (found == cpus.len()).then_some((steal, all))
}

/// The share of `cpus`' time stolen between two `cpu_ticks` readings, percent.
pub fn steal_pct(before: (u64, u64), after: (u64, u64)) -> Option<f64> {
    let all = after.1.checked_sub(before.1)?;
    (all > 0).then(|| 100.0 * after.0.saturating_sub(before.0) as f64 / all as f64)
}

/// The running kernel's release (uname's release).
pub fn kernel_release() -> String {
    uname().0
}

/// This machine's name (uname's nodename), as HostFacts records it.
pub fn hostname() -> String {
    uname().2
}

/// The CPU-isolation settings on a kernel command line (isolcpus, nohz_full,
/// rcu_nocbs, irqaffinity), as "name=value" words; "none" where there are none.
pub fn isolation_params(cmdline: &str) -> String {
    let found: Vec<&str> = cmdline
        .split_whitespace()
        .filter(|w| ["isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"].iter().any(|k| w.split('=').next() == Some(*k)))
        .collect();
    if found.is_empty() { "none".into() } else { found.join(" ") }
}

pub fn preemption_model(version: &str) -> String {
    for m in ["PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT"] {
        if version.split_whitespace().any(|w| w == m) {
            return m.into();
        }
    }
    "none".into()
}

fn kvm_modules() -> Vec<String> {
    let from_proc = fs::read_to_string("/proc/modules")
        .map(|s| {
            s.lines().filter_map(|l| l.split_whitespace().next()).filter(|m| m.starts_with("kvm")).map(String::from).collect::<Vec<_>>()
        })
        .unwrap_or_default();
    if !from_proc.is_empty() {
        return from_proc;
    }
    // Without /proc/modules (module support off, or built in), /sys/module
    // still lists kvm and its vendor part.
    let mut v: Vec<String> = fs::read_dir("/sys/module")
        .map(|d| d.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| n.starts_with("kvm")).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn mitigations() -> BTreeMap<String, String> {
    fs::read_dir("/sys/devices/system/cpu/vulnerabilities")
        .map(|d| {
            d.filter_map(|e| {
                let e = e.ok()?;
                Some((e.file_name().into_string().ok()?, fs::read_to_string(e.path()).ok()?.trim().to_string()))
            })
            .collect()
        })
        .unwrap_or_default()
}

fn cpuinfo_field(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.split(':').next().map(str::trim) == Some(key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// Gathers the facts; `clock` comes from the calibration the run uses.
pub fn collect(clock: ClockInfo) -> HostFacts {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags: Vec<String> = cpuinfo_field(&cpuinfo, "flags").unwrap_or_default().split_whitespace().map(String::from).collect();
    let has = |f: &str| flags.iter().any(|x| x == f);
    let tsc_flags = TscFlags {
        constant_tsc: has("constant_tsc"),
        nonstop_tsc: has("nonstop_tsc"),
        rdtscp: has("rdtscp"),
        tsc_known_freq: has("tsc_known_freq"),
    };
    let (release, version, nodename) = uname();
    let cmdline = read_trim("/proc/cmdline").unwrap_or_default();
    let mem = meminfo("MemTotal").unwrap_or(0);
    let mut warnings = Vec::new();
    // The TSC's flags (aarch64's counter has a constant rate by the architecture, and no flags).
    let tsc = clock.counter() == crate::measure::clock::Counter::Tsc;
    if tsc && !tsc_flags.constant_tsc {
        warnings.push("no constant_tsc: TSC cycles may not track time when the CPU frequency changes".to_string());
    }
    if tsc && !tsc_flags.nonstop_tsc {
        warnings.push("no nonstop_tsc: the TSC may stop in deep idle states".to_string());
    }
    if clock.tsc_hz_spread > 0.01 {
        warnings.push(format!("TSC calibration rounds disagree by {:.2}%: frequency is uncertain", clock.tsc_hz_spread * 100.0));
    }
    let governor = read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    if let Some(g) = &governor
        && g != "performance"
    {
        warnings.push(format!("cpufreq governor is '{g}', not 'performance': core clock may vary between cases"));
    }
    HostFacts {
        hostname: nodename,
        cpu_model: arch::cpu_model(cpuinfo_field(&cpuinfo, "model name")).unwrap_or_else(|| "unknown".into()),
        cpus_online: read_trim("/sys/devices/system/cpu/online").unwrap_or_default(),
        cpus_allowed: placement::format_cpus(&placement::allowed_cpus()),
        memory_total_kib: mem,
        clock,
        tsc_flags,
        clocksource: read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        preemption: preemption_model(&version),
        preempt: Some(preempt_here(&preemption_model(&version), &release, &cmdline)),
        kernel_release: release,
        kernel_version: version,
        kernel_cmdline: cmdline,
        hypervisor: arch::hypervisor(),
        sys_hypervisor: sys_hypervisor(),
        kvm_modules: kvm_modules(),
        mitigations: mitigations(),
        governor,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_is_read_for_the_cpus_asked_only() {
        let text = "cpu  10 0 10 100 0 0 0 9 0 0\ncpu0 5 0 5 50 0 0 0 0 0 0\ncpu1 5 0 5 50 0 0 0 9 0 0\nintr 1\n";
        assert_eq!(cpu_ticks_in(text, &[0]), Some((0, 60)));
        assert_eq!(cpu_ticks_in(text, &[1]), Some((9, 69)));
        assert_eq!(cpu_ticks_in(text, &[0, 1]), Some((9, 129)));
        assert_eq!(cpu_ticks_in(text, &[2]), None, "a CPU the kernel does not list");
        assert_eq!(steal_pct((9, 129), (19, 229)), Some(10.0));
        assert_eq!(steal_pct((9, 129), (9, 129)), None);
    }

    #[test]
    fn finds_the_isolation_words_of_a_command_line() {
        assert_eq!(isolation_params("quiet isolcpus=2,3 nohz_full=2-3 rcu_nocbs=2-3 panic=1"), "isolcpus=2,3 nohz_full=2-3 rcu_nocbs=2-3");
        assert_eq!(isolation_params("console=ttyS0 quiet"), "none");
    }

    #[test]
    fn the_running_kernels_config_is_read_where_it_has_one() {
        match std::fs::metadata("/proc/config.gz") {
            Ok(_) => {
                let text = super::running_config().expect("/proc/config.gz is there but did not read");
                assert!(text.lines().any(|l| l.starts_with("CONFIG_")), "{}", &text[..text.len().min(200)]);
            }
            Err(_) => assert_eq!(super::running_config(), None),
        }
    }

    #[test]
    fn the_preemption_mode_comes_from_where_the_kernel_shows_it() {
        let m = preempt_mode("PREEMPT_DYNAMIC", "quiet", Ok("none (voluntary) full lazy\n".into()), None);
        assert_eq!((m.mode.as_deref(), m.fixed_because), (Some("voluntary"), None));
        let m = preempt_mode("PREEMPT_DYNAMIC", "quiet preempt=full", Err("Operation not permitted".into()), Some("CONFIG_PREEMPT_NONE=y"));
        assert_eq!(m.mode.as_deref(), Some("full"));
        assert!(m.fixed_because.unwrap().contains("Operation not permitted"));
        let m =
            preempt_mode("PREEMPT_DYNAMIC", "quiet", Err("not there".into()), Some("# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_NONE=y\n"));
        assert_eq!(m.mode.as_deref(), Some("none"));
        assert!(m.describe().contains("not switchable"), "{}", m.describe());
        let m = preempt_mode("PREEMPT_RT", "", Err("x".into()), None);
        assert_eq!(m.mode.as_deref(), Some("rt"));
        assert_eq!(preempt_mode("none", "", Err("x".into()), None).mode, None);
    }

    #[test]
    fn reads_preemption_model_from_version_string() {
        assert_eq!(preemption_model("#1 SMP PREEMPT_DYNAMIC Debian 6.1.0"), "PREEMPT_DYNAMIC");
        assert_eq!(preemption_model("#1 SMP PREEMPT_RT Debian"), "PREEMPT_RT");
        assert_eq!(preemption_model("#1 SMP PREEMPT Tue"), "PREEMPT");
        assert_eq!(preemption_model("#1 SMP Tue"), "none");
    }

    #[test]
    fn cpuinfo_fields() {
        let c = "processor\t: 0\nmodel name\t: Test CPU @ 2.00GHz\nflags\t\t: fpu tsc\n";
        assert_eq!(cpuinfo_field(c, "model name").as_deref(), Some("Test CPU @ 2.00GHz"));
        assert_eq!(cpuinfo_field(c, "flags").as_deref(), Some("fpu tsc"));
        assert_eq!(cpuinfo_field(c, "nothing"), None);
    }
}
