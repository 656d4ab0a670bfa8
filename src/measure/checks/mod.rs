//! Checks of the machine before measuring (`oscycles doctor`), as pyperf's `system show` does:
//! each check reads `/proc` and `/sys`, says what it saw and, where it
//! matters, gives the command that would fix it. Nothing is changed and
//! nothing is printed here; `report::doctor` renders the findings.
//!
//! A file that does not exist means the check does not apply here: it is
//! reported as Info or skipped, never as an error.

mod cpus;
mod system;

use crate::measure::placement::{format_cpus, parse_cpu_list};
use cpus::{governor, isolation, runnable, smt, turbo};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use system::{aslr, irqbalance, load, rt_throttling, swap, thp};

/// How much a finding matters to the numbers.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// As it should be.
    Ok,
    /// Worth knowing; the numbers are still sound.
    Info,
    /// Likely to make the numbers noisier or different.
    Warn,
}

/// What one check saw.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Finding {
    /// Short id of the check, e.g. "governor".
    pub check: String,
    pub level: Level,
    /// What was seen, one sentence; a clause after "; " says why it matters
    /// (a run's header keeps only the part before it).
    pub observed: String,
    /// What to do, with the command; None where there is nothing to do.
    pub advice: Option<String>,
}

impl Finding {
    fn new(check: &str, level: Level, observed: String, advice: Option<String>) -> Self {
        Finding { check: check.to_string(), level, observed, advice }
    }
}

/// Runs every check against this machine for the CPUs oscycles will measure
/// on (none given: every online CPU).
pub fn check(cpus: &[usize]) -> Vec<Finding> {
    let mut f = check_at(Path::new("/"), cpus, std::process::id());
    f.push(counters(crate::measure::counters::availability()));
    f
}

/// Which of the kernel's event counters a case's counts can have here.
fn counters(a: &crate::measure::counters::Availability) -> Finding {
    let level = match (&a.software, &a.hardware) {
        (Ok(()), Ok(())) => Level::Ok,
        _ => Level::Info,
    };
    let advice = match (&a.software, &a.hardware) {
        (Err(crate::measure::counters::CounterError::Denied { .. }), _)
        | (_, Err(crate::measure::counters::CounterError::Denied { .. })) => {
            Some("sysctl kernel.perf_event_paranoid=1 (or run as root) lets oscycles count its own processes' events".to_string())
        }
        _ => None,
    };
    Finding::new("counters", level, a.describe(), advice)
}

/// Runs every check against the `proc/` and `sys/` trees under `root`;
/// `self_pid` and its threads are not counted as other work.
pub fn check_at(root: &Path, cpus: &[usize], self_pid: u32) -> Vec<Finding> {
    let online = online_cpus(root);
    let measured: Vec<usize> =
        if cpus.is_empty() { online.clone() } else { cpus.iter().copied().collect::<BTreeSet<_>>().into_iter().collect() };
    [
        Some(governor(root, &measured)),
        Some(turbo(root)),
        Some(smt(root, &measured, &online)),
        Some(runnable(root, &measured, self_pid)),
        Some(isolation(root, &measured)),
        irqbalance(root),
        swap(root),
        thp(root),
        aslr(root),
        load(root, online.len()),
        rt_throttling(root),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The trimmed contents of `root/rel`, None if it cannot be read.
pub(super) fn read(root: &Path, rel: &str) -> Option<String> {
    fs::read_to_string(root.join(rel)).ok().map(|s| s.trim().to_string())
}

/// A kernel CPU list ("0-3,8"); empty text or bad syntax gives no CPUs.
pub(super) fn cpu_list(s: &str) -> Vec<usize> {
    let s = s.trim();
    if s.is_empty() { Vec::new() } else { parse_cpu_list(s).unwrap_or_default() }
}

/// "CPU 0-1" for a set of CPUs.
pub(super) fn cpus_text(cpus: &[usize]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    format!("CPU {}", format_cpus(&v))
}

/// Online CPUs from `sys/devices/system/cpu/online`, else the `cpuN`
/// directories present; empty when neither can be read.
fn online_cpus(root: &Path) -> Vec<usize> {
    if let Some(s) = read(root, "sys/devices/system/cpu/online") {
        let v = cpu_list(&s);
        if !v.is_empty() {
            return v;
        }
    }
    let mut v: Vec<usize> = fs::read_dir(root.join("sys/devices/system/cpu"))
        .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok()).collect())
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// Whether `cpu` is online: in the online list if there is one, else its
/// own `online` file (absent for a CPU that cannot go offline: online).
pub(super) fn is_online(root: &Path, cpu: usize, online: &[usize]) -> bool {
    if !online.is_empty() {
        return online.contains(&cpu);
    }
    read(root, &format!("sys/devices/system/cpu/cpu{cpu}/online")).is_none_or(|s| s != "0")
}

#[cfg(test)]
mod tests {
    use super::cpus::{TaskStat, parse_stat};
    use super::*;

    /// A crafted root directory, removed when dropped.
    struct Fake(tempfile::TempDir);

    impl Fake {
        fn new() -> Self {
            Fake(tempfile::tempdir().unwrap())
        }
        fn file(&self, rel: &str, text: &str) -> &Self {
            let p = self.0.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
            self
        }
        fn stat(&self, pid: u32, tid: u32, comm: &str, state: char, cpu: usize) -> &Self {
            // Fields 3..=39: state, then 35 zeros (fields 4..=38), then the processor.
            let zeros = vec!["0"; 35].join(" ");
            let line = format!("{tid} ({comm}) {state} {zeros} {cpu} 0 0 0\n");
            self.file(&format!("proc/{pid}/task/{tid}/stat"), &line);
            if pid == tid {
                self.file(&format!("proc/{pid}/stat"), &line).file(&format!("proc/{pid}/comm"), &format!("{comm}\n"));
            }
            self
        }
        fn find(&self, cpus: &[usize], check: &str) -> Option<Finding> {
            check_at(self.0.path(), cpus, 1).into_iter().find(|f| f.check == check)
        }
    }

    const CPU: &str = "sys/devices/system/cpu";

    #[test]
    fn empty_root_never_panics() {
        let f = Fake::new();
        let all = check_at(f.0.path(), &[0, 1], 1);
        assert!(all.iter().all(|x| x.level != Level::Warn), "{all:?}");
        assert_eq!(f.find(&[0], "governor").unwrap().level, Level::Info);
        assert_eq!(f.find(&[0], "runnable").unwrap().level, Level::Info);
        assert!(f.find(&[0], "swap").is_none());
        let missing = check_at(Path::new("/nonexistent/oscycles/doctor"), &[], 1);
        assert!(!missing.is_empty());
    }

    #[test]
    fn garbage_files_never_panic() {
        let f = Fake::new();
        for rel in [
            "proc/loadavg",
            "proc/swaps",
            "proc/cmdline",
            "proc/sys/kernel/sched_rt_runtime_us",
            "proc/sys/kernel/randomize_va_space",
            "sys/kernel/mm/transparent_hugepage/enabled",
            "sys/devices/system/cpu/online",
            "sys/devices/system/cpu/isolated",
            "sys/devices/system/cpu/cpu0/topology/thread_siblings_list",
            "proc/5/stat",
        ] {
            f.file(rel, "((( ]x[ -9-2,,\n\n\u{fffd}");
        }
        let _ = check_at(f.0.path(), &[0], 1);
    }

    #[test]
    fn governor_ok_and_warn() {
        let f = Fake::new();
        f.file(&format!("{CPU}/cpu0/cpufreq/scaling_governor"), "performance\n");
        f.file(&format!("{CPU}/cpu1/cpufreq/scaling_governor"), "powersave\n");
        assert_eq!(f.find(&[0], "governor").unwrap().level, Level::Ok);
        let w = f.find(&[0, 1], "governor").unwrap();
        assert_eq!(w.level, Level::Warn);
        assert!(w.observed.starts_with("governor powersave on CPU 1;"), "{}", w.observed);
        assert!(w.advice.unwrap().contains("cpupower frequency-set -g performance"));
    }

    #[test]
    fn turbo_ok_and_warn() {
        let f = Fake::new();
        assert_eq!(f.find(&[0], "turbo").unwrap().level, Level::Info);
        f.file(&format!("{CPU}/cpufreq/boost"), "1\n");
        assert_eq!(f.find(&[0], "turbo").unwrap().level, Level::Warn);
        f.file(&format!("{CPU}/cpufreq/boost"), "0\n");
        assert_eq!(f.find(&[0], "turbo").unwrap().level, Level::Ok);
        f.file(&format!("{CPU}/intel_pstate/no_turbo"), "0\n");
        let w = f.find(&[0], "turbo").unwrap();
        assert_eq!(w.level, Level::Warn);
        assert!(w.advice.unwrap().contains("intel_pstate/no_turbo"));
        f.file(&format!("{CPU}/intel_pstate/no_turbo"), "1\n");
        assert_eq!(f.find(&[0], "turbo").unwrap().level, Level::Ok);
    }

    #[test]
    fn smt_siblings() {
        let f = Fake::new();
        f.file(&format!("{CPU}/online"), "0-3\n");
        for (c, s) in [(0, "0,2"), (1, "1,3"), (2, "0,2"), (3, "1,3")] {
            f.file(&format!("{CPU}/cpu{c}/topology/thread_siblings_list"), s);
        }
        assert_eq!(f.find(&[0, 2], "smt").unwrap().level, Level::Ok);
        let w = f.find(&[0, 1], "smt").unwrap();
        assert_eq!(w.level, Level::Warn);
        assert!(w.observed.contains("CPU 0 with 2") && w.observed.contains("CPU 1 with 3"), "{}", w.observed);
        assert!(w.advice.unwrap().contains("smt/control"));
        // An offline sibling does not count.
        f.file(&format!("{CPU}/online"), "0-1\n");
        assert_eq!(f.find(&[0, 1], "smt").unwrap().level, Level::Ok);
    }

    #[test]
    fn stat_parser_takes_comm_up_to_the_last_paren() {
        let zeros = vec!["0"; 35].join(" ");
        let t = parse_stat(&format!("42 (a) b (c) R {zeros} 7 0 0")).unwrap();
        assert_eq!(t, TaskStat { pid: 42, comm: "a) b (c".into(), state: 'R', processor: Some(7) });
        let short = parse_stat("9 (x y) S 1 2").unwrap();
        assert_eq!((short.comm.as_str(), short.state, short.processor), ("x y", 'S', None));
        assert_eq!(parse_stat(""), None);
        assert_eq!(parse_stat("1 ) (x"), None);
        assert_eq!(parse_stat("1 (x)"), None);
    }

    #[test]
    fn runnable_tasks_on_measured_cpus() {
        let f = Fake::new();
        f.file(&format!("{CPU}/online"), "0-3\n");
        f.stat(1, 1, "init", 'S', 0);
        f.stat(1, 2, "self-worker", 'R', 0);
        f.stat(20, 20, "elsewhere", 'R', 3);
        assert_eq!(f.find(&[0, 1], "runnable").unwrap().level, Level::Ok);
        f.stat(30, 30, "a) b (c", 'R', 1);
        f.stat(30, 31, "thread", 'R', 0);
        let w = f.find(&[0, 1], "runnable").unwrap();
        assert_eq!(w.level, Level::Warn);
        assert!(w.observed.starts_with("2 other runnable tasks on CPU 0-1: a) b (c(30), thread(31)"), "{}", w.observed);
        for p in 40..47 {
            f.stat(p, p, "spin", 'R', 0);
        }
        let w = f.find(&[0], "runnable").unwrap();
        assert!(w.observed.ends_with("and 3 more"), "{}", w.observed);
        assert_eq!(w.observed.matches("spin(").count(), 4);
    }

    #[test]
    fn isolation_from_sysfs_and_cmdline() {
        let f = Fake::new();
        f.file("proc/cmdline", "ro quiet\n");
        let i = f.find(&[2, 3], "isolation").unwrap();
        assert_eq!(i.level, Level::Info);
        assert!(i.observed.contains("CPU 2-3 not isolated"), "{}", i.observed);
        assert!(i.advice.unwrap().contains("isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3"));
        f.file("proc/cmdline", "ro isolcpus=domain,managed_irq,3 nohz_full=2-3\n");
        let i = f.find(&[2, 3], "isolation").unwrap();
        assert!(i.observed.contains("CPU 3 isolated") && i.observed.contains("CPU 2 not isolated"), "{}", i.observed);
        f.file(&format!("{CPU}/isolated"), "2-3\n");
        assert_eq!(f.find(&[2, 3], "isolation").unwrap().level, Level::Ok);
        f.file(&format!("{CPU}/nohz_full"), "\n");
        assert_eq!(f.find(&[2, 3], "isolation").unwrap().level, Level::Info);
    }

    #[test]
    fn irqbalance_running() {
        let f = Fake::new();
        f.stat(10, 10, "sshd", 'S', 0);
        assert_eq!(f.find(&[0], "irqbalance").unwrap().level, Level::Ok);
        f.stat(812, 812, "irqbalance", 'S', 0);
        let w = f.find(&[0], "irqbalance").unwrap();
        assert_eq!(w.level, Level::Warn);
        assert!(w.observed.contains("812"));
        assert!(w.advice.unwrap().contains("systemctl stop irqbalance"));
    }

    #[test]
    fn swap_entries() {
        let f = Fake::new();
        let head = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
        f.file("proc/swaps", head);
        assert_eq!(f.find(&[0], "swap").unwrap().level, Level::Ok);
        f.file("proc/swaps", &format!("{head}/swapfile file 2097148 0 -2\n"));
        let i = f.find(&[0], "swap").unwrap();
        assert_eq!(i.level, Level::Info);
        assert!(i.observed.starts_with("2048 MiB of swap on"), "{}", i.observed);
        f.file("proc/swaps", &format!("{head}/swapfile file 2097148 0 -2\n/dev/sda2 partition 1048576 4096 -3\n"));
        let w = f.find(&[0], "swap").unwrap();
        assert_eq!(w.level, Level::Warn);
        assert!(w.observed.starts_with("3072 MiB of swap on (4 MiB in use)"), "{}", w.observed);
        assert!(w.advice.unwrap().contains("swapoff -a"));
    }

    #[test]
    fn thp_modes() {
        let f = Fake::new();
        f.file("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
        let o = f.find(&[0], "thp").unwrap();
        assert_eq!((o.level, o.observed.as_str()), (Level::Ok, "transparent huge pages: madvise"));
        f.file("sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
        let i = f.find(&[0], "thp").unwrap();
        assert_eq!(i.level, Level::Info);
        assert!(i.advice.unwrap().starts_with("echo madvise >"));
    }

    #[test]
    fn aslr_is_information_only() {
        let f = Fake::new();
        f.file("proc/sys/kernel/randomize_va_space", "2\n");
        let i = f.find(&[0], "aslr").unwrap();
        assert_eq!(i.level, Level::Info);
        assert!(i.observed.contains("on purpose"));
        f.file("proc/sys/kernel/randomize_va_space", "0\n");
        assert_eq!(f.find(&[0], "aslr").unwrap().level, Level::Info);
    }

    #[test]
    fn load_against_online_cpus() {
        let f = Fake::new();
        f.file(&format!("{CPU}/online"), "0-3\n");
        f.file("proc/loadavg", "1.90 0.64 0.24 4/108 5451\n");
        assert_eq!(f.find(&[0], "load").unwrap().level, Level::Ok);
        f.file("proc/loadavg", "2.10 0.64 0.24 4/108 5451\n");
        let w = f.find(&[0], "load").unwrap();
        assert_eq!(w.level, Level::Warn);
        assert!(w.observed.contains("2.10 on 4 online CPUs"), "{}", w.observed);
        // Without an online list, the cpuN directories are counted.
        let g = Fake::new();
        g.file(&format!("{CPU}/cpu0/x"), "").file(&format!("{CPU}/cpu1/x"), "").file("proc/loadavg", "1.5 0 0 1/1 1\n");
        assert!(g.find(&[0], "load").unwrap().observed.contains("on 2 online CPUs"));
    }

    #[test]
    fn rt_throttling_values() {
        let f = Fake::new();
        f.file("proc/sys/kernel/sched_rt_runtime_us", "-1\n");
        assert_eq!(f.find(&[0], "rt_throttling").unwrap().level, Level::Ok);
        f.file("proc/sys/kernel/sched_rt_runtime_us", "950000\n");
        let i = f.find(&[0], "rt_throttling").unwrap();
        assert_eq!(i.level, Level::Info);
        assert!(i.observed.contains("loses 50000 us each second"), "{}", i.observed);
        assert!(i.advice.unwrap().contains("echo -1 > /proc/sys/kernel/sched_rt_runtime_us"));
    }

    #[test]
    fn no_cpus_means_every_online_cpu() {
        let f = Fake::new();
        f.file(&format!("{CPU}/online"), "0-1\n");
        f.file(&format!("{CPU}/cpu1/cpufreq/scaling_governor"), "powersave\n");
        assert_eq!(f.find(&[], "governor").unwrap().level, Level::Warn);
    }

    #[test]
    fn level_serializes_snake_case() {
        let f = Finding::new("x", Level::Warn, "seen".into(), None);
        let j = serde_json::to_string(&f).unwrap();
        assert!(j.contains("\"level\":\"warn\""), "{j}");
        assert_eq!(serde_json::from_str::<Finding>(&j).unwrap(), f);
    }

    #[test]
    fn the_real_machine_does_not_panic() {
        let all = check(&[0]);
        assert!(all.iter().any(|f| f.check == "governor"));
    }
}
