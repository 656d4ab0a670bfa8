//! Checks of the machine before measuring (`oscycles doctor`), as pyperf's `system show` does:
//! each check reads `/proc` and `/sys`, says what it saw and, where it
//! matters, gives the command that would fix it. Nothing is changed and
//! nothing is printed here; `report::doctor` renders the findings.
//!
//! A file that does not exist means the check does not apply here: it is
//! reported as Info or skipped, never as an error.

use crate::measure::placement::{format_cpus, parse_cpu_list};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

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
fn read(root: &Path, rel: &str) -> Option<String> {
    fs::read_to_string(root.join(rel)).ok().map(|s| s.trim().to_string())
}

/// A kernel CPU list ("0-3,8"); empty text or bad syntax gives no CPUs.
fn cpu_list(s: &str) -> Vec<usize> {
    let s = s.trim();
    if s.is_empty() { Vec::new() } else { parse_cpu_list(s).unwrap_or_default() }
}

/// "CPU 0-1" for a set of CPUs.
fn cpus_text(cpus: &[usize]) -> String {
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
fn is_online(root: &Path, cpu: usize, online: &[usize]) -> bool {
    if !online.is_empty() {
        return online.contains(&cpu);
    }
    read(root, &format!("sys/devices/system/cpu/cpu{cpu}/online")).is_none_or(|s| s != "0")
}

/// 1. The cpufreq governor of each measured CPU.
fn governor(root: &Path, cpus: &[usize]) -> Finding {
    let mut by_gov: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for &c in cpus {
        if let Some(g) = read(root, &format!("sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor")) {
            by_gov.entry(g).or_default().push(c);
        }
    }
    if by_gov.is_empty() {
        return Finding::new("governor", Level::Info, "no cpufreq (typical in a VM); the TSC is the clock anyway".into(), None);
    }
    let slow: Vec<String> =
        by_gov.iter().filter(|(g, _)| g.as_str() != "performance").map(|(g, c)| format!("{g} on {}", cpus_text(c))).collect();
    if slow.is_empty() {
        let all: Vec<usize> = by_gov.values().flatten().copied().collect();
        return Finding::new("governor", Level::Ok, format!("governor performance on {}", cpus_text(&all)), None);
    }
    Finding::new(
        "governor",
        Level::Warn,
        format!("governor {}; the core clock may change between cases", slow.join(", ")),
        Some(
            "cpupower frequency-set -g performance (as root), or: \
             echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"
                .into(),
        ),
    )
}

/// 2. Turbo boost (intel_pstate's no_turbo, or cpufreq's boost).
fn turbo(root: &Path) -> Finding {
    let why = "the work done per TSC cycle then depends on temperature and on how many cores are busy";
    if let Some(v) = read(root, "sys/devices/system/cpu/intel_pstate/no_turbo") {
        return if v == "0" {
            Finding::new(
                "turbo",
                Level::Warn,
                format!("turbo boost on (intel_pstate no_turbo=0); {why}"),
                Some("echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo (as root)".into()),
            )
        } else {
            Finding::new("turbo", Level::Ok, format!("turbo boost off (intel_pstate no_turbo={v})"), None)
        };
    }
    if let Some(v) = read(root, "sys/devices/system/cpu/cpufreq/boost") {
        return if v == "1" {
            Finding::new(
                "turbo",
                Level::Warn,
                format!("frequency boost on (cpufreq boost=1); {why}"),
                Some("echo 0 > /sys/devices/system/cpu/cpufreq/boost (as root)".into()),
            )
        } else {
            Finding::new("turbo", Level::Ok, format!("frequency boost off (cpufreq boost={v})"), None)
        };
    }
    Finding::new("turbo", Level::Info, "no turbo control in sysfs (intel_pstate/no_turbo, cpufreq/boost)".into(), None)
}

/// 3. Online SMT siblings of the measured CPUs that are not measured.
fn smt(root: &Path, cpus: &[usize], online: &[usize]) -> Finding {
    let mut known = false;
    let mut shared: Vec<String> = Vec::new();
    for &c in cpus {
        let Some(s) = read(root, &format!("sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list")) else { continue };
        known = true;
        let others: Vec<usize> = cpu_list(&s).into_iter().filter(|&o| o != c && !cpus.contains(&o) && is_online(root, o, online)).collect();
        if !others.is_empty() {
            shared.push(format!("CPU {c} with {}", format_cpus(&others)));
        }
    }
    if !known {
        return Finding::new("smt", Level::Info, "no CPU topology in sysfs; SMT siblings not checked".into(), None);
    }
    if shared.is_empty() {
        return Finding::new(
            "smt",
            Level::Ok,
            format!("no measured CPU shares its core with an online CPU outside {}", cpus_text(cpus)),
            None,
        );
    }
    Finding::new(
        "smt",
        Level::Warn,
        format!("measured CPUs share a core with online, unmeasured SMT siblings: {}; work there competes for the core", shared.join(", ")),
        Some(
            "pick one thread per core with --cpus (see /sys/devices/system/cpu/cpuN/topology/thread_siblings_list), \
             or switch SMT off: echo off > /sys/devices/system/cpu/smt/control (as root)"
                .into(),
        ),
    )
}

/// The fields of `/proc/PID/stat` that the checks use.
#[derive(Debug, Clone, PartialEq)]
struct TaskStat {
    pid: u32,
    comm: String,
    state: char,
    /// Field 39: the CPU the task last ran on.
    processor: Option<usize>,
}

/// Parses one stat line (`host::proc_stat`).
fn parse_stat(line: &str) -> Option<TaskStat> {
    let (pid, comm, rest) = crate::measure::host::proc_stat(line)?;
    // Fields after the comm start at field 3 (state); field 39 is index 36.
    let state = rest.first()?.chars().next()?;
    let processor = rest.get(36).and_then(|p| p.parse().ok());
    Some(TaskStat { pid, comm: comm.to_string(), state, processor })
}

/// The numeric entries of `root/proc`, sorted; None if /proc cannot be read.
fn pids(root: &Path) -> Option<Vec<u32>> {
    let mut v: Vec<u32> = fs::read_dir(root.join("proc")).ok()?.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect();
    v.sort_unstable();
    Some(v)
}

/// Every thread of every process but `self_pid`'s; tasks that vanish while
/// being read are left out.
fn tasks(root: &Path, self_pid: u32) -> Option<Vec<TaskStat>> {
    let mut out = Vec::new();
    for pid in pids(root)?.into_iter().filter(|&p| p != self_pid) {
        let dir = root.join("proc").join(pid.to_string());
        let mut tids: Vec<u32> = fs::read_dir(dir.join("task"))
            .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
            .unwrap_or_default();
        tids.sort_unstable();
        let stats: Vec<String> = if tids.is_empty() {
            fs::read_to_string(dir.join("stat")).into_iter().collect()
        } else {
            tids.iter().filter_map(|t| fs::read_to_string(dir.join("task").join(t.to_string()).join("stat")).ok()).collect()
        };
        out.extend(stats.iter().filter_map(|s| parse_stat(s)));
    }
    Some(out)
}

/// 4. Other runnable tasks on the measured CPUs.
fn runnable(root: &Path, cpus: &[usize], self_pid: u32) -> Finding {
    let Some(all) = tasks(root, self_pid) else {
        return Finding::new("runnable", Level::Info, "cannot read /proc; runnable tasks not checked".into(), None);
    };
    let busy: Vec<&TaskStat> = all.iter().filter(|t| t.state == 'R' && t.processor.is_some_and(|p| cpus.contains(&p))).collect();
    if busy.is_empty() {
        return Finding::new("runnable", Level::Ok, format!("no other runnable task on {}", cpus_text(cpus)), None);
    }
    let mut names: Vec<String> = busy.iter().take(5).map(|t| format!("{}({})", t.comm, t.pid)).collect();
    if busy.len() > 5 {
        names.push(format!("and {} more", busy.len() - 5));
    }
    let n = busy.len();
    Finding::new(
        "runnable",
        Level::Warn,
        format!("{n} other runnable task{} on {}: {}", if n == 1 { "" } else { "s" }, cpus_text(cpus), names.join(", ")),
        Some("stop them, or choose other CPUs with --cpus".into()),
    )
}

/// The value of a boot parameter in a kernel command line (the last one wins).
fn cmdline_param<'a>(cmdline: &'a str, name: &str) -> Option<&'a str> {
    cmdline.split_whitespace().filter_map(|w| w.strip_prefix(name)?.strip_prefix('=')).next_back()
}

/// The CPUs of a boot parameter's value, dropping flags such as
/// "domain,managed_irq," in front of isolcpus' list.
fn param_cpus(value: &str) -> Vec<usize> {
    let list: Vec<&str> = value.split(',').filter(|p| p.starts_with(|c: char| c.is_ascii_digit())).collect();
    cpu_list(&list.join(","))
}

/// 5. Which measured CPUs are isolated (isolcpus) and tickless (nohz_full).
fn isolation(root: &Path, cpus: &[usize]) -> Finding {
    let cmdline = read(root, "proc/cmdline").unwrap_or_default();
    let from = |sys: &str, param: &str| match read(root, sys) {
        Some(s) => cpu_list(&s),
        None => cmdline_param(&cmdline, param).map(param_cpus).unwrap_or_default(),
    };
    let isolated = from("sys/devices/system/cpu/isolated", "isolcpus");
    let nohz = from("sys/devices/system/cpu/nohz_full", "nohz_full");
    let (iso, not_iso): (Vec<usize>, Vec<usize>) = cpus.iter().partition(|c| isolated.contains(c));
    let tickless: Vec<usize> = cpus.iter().copied().filter(|c| nohz.contains(c)).collect();
    if not_iso.is_empty() && tickless.len() == cpus.len() && !cpus.is_empty() {
        return Finding::new("isolation", Level::Ok, format!("{} isolated (isolcpus) and tickless (nohz_full)", cpus_text(cpus)), None);
    }
    let mut parts = Vec::new();
    if !iso.is_empty() {
        parts.push(format!("{} isolated (isolcpus)", cpus_text(&iso)));
    }
    if !not_iso.is_empty() {
        parts.push(format!("{} not isolated", cpus_text(&not_iso)));
    }
    parts.push(if tickless.is_empty() {
        "no measured CPU is tickless (nohz_full)".to_string()
    } else {
        format!("nohz_full on {}", cpus_text(&tickless))
    });
    let l = format_cpus(cpus);
    Finding::new(
        "isolation",
        Level::Info,
        parts.join(", "),
        Some(format!("for a noise-sensitive run, boot with isolcpus={l} nohz_full={l} rcu_nocbs={l}, or use --isolation isolated")),
    )
}

/// 6. irqbalance, which moves IRQs onto measured CPUs mid-run.
fn irqbalance(root: &Path) -> Option<Finding> {
    let running: Vec<String> = pids(root)?
        .into_iter()
        .filter(|p| read(root, &format!("proc/{p}/comm")).is_some_and(|c| c == "irqbalance"))
        .map(|p| p.to_string())
        .collect();
    Some(if running.is_empty() {
        Finding::new("irqbalance", Level::Ok, "irqbalance is not running".into(), None)
    } else {
        Finding::new(
            "irqbalance",
            Level::Warn,
            format!("irqbalance is running (pid {}); it can move IRQs onto measured CPUs mid-run", running.join(", ")),
            Some("systemctl stop irqbalance (as root) for the run; systemctl start irqbalance afterwards".into()),
        )
    })
}

/// 7. Swap devices from `proc/swaps` (sizes in KiB).
fn swap(root: &Path) -> Option<Finding> {
    let text = read(root, "proc/swaps")?;
    let (mut size, mut used, mut n) = (0u64, 0u64, 0usize);
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() >= 4 {
            n += 1;
            size += f[2].parse::<u64>().unwrap_or(0);
            used += f[3].parse::<u64>().unwrap_or(0);
        }
    }
    if n == 0 {
        return Some(Finding::new("swap", Level::Ok, "no swap".into(), None));
    }
    let mib = |k: u64| k.div_ceil(1024);
    let (level, usage) = if used > 0 { (Level::Warn, format!("{} MiB in use", mib(used))) } else { (Level::Info, "none in use".into()) };
    Some(Finding::new(
        "swap",
        level,
        format!("{} MiB of swap on ({usage}); a page swapped out mid-run costs a disk access", mib(size)),
        Some("swapoff -a (as root) for the run; swapon -a afterwards".into()),
    ))
}

/// 8. Transparent huge pages (the bracketed word of `enabled`).
fn thp(root: &Path) -> Option<Finding> {
    let text = read(root, "sys/kernel/mm/transparent_hugepage/enabled")?;
    let mode = text.split_once('[').and_then(|(_, r)| r.split_once(']')).map_or(text.as_str(), |(m, _)| m);
    Some(if mode == "always" {
        Finding::new(
            "thp",
            Level::Info,
            "transparent huge pages: always; memory benchmarks may get huge pages, so first-touch page-fault costs differ".into(),
            Some("echo madvise > /sys/kernel/mm/transparent_hugepage/enabled (as root)".into()),
        )
    } else {
        Finding::new("thp", Level::Ok, format!("transparent huge pages: {mode}"), None)
    })
}

/// 9. Address-space layout randomisation (information only).
fn aslr(root: &Path) -> Option<Finding> {
    let v = read(root, "proc/sys/kernel/randomize_va_space")?;
    Some(if v == "0" {
        Finding::new(
            "aslr",
            Level::Info,
            "ASLR off (randomize_va_space=0); every round gets the same address layout, so rounds do not sample layout effects".into(),
            Some("echo 2 > /proc/sys/kernel/randomize_va_space (as root)".into()),
        )
    } else {
        Finding::new(
            "aslr",
            Level::Info,
            format!(
                "ASLR on (randomize_va_space={v}); oscycles samples address layouts across rounds on purpose, \
                 each round being a fresh process"
            ),
            None,
        )
    })
}

/// 10. The 1-minute load average against the online CPUs.
fn load(root: &Path, online: usize) -> Option<Finding> {
    let l1: f64 = read(root, "proc/loadavg")?.split_whitespace().next()?.parse().ok()?;
    let n = online.max(1);
    let limit = 0.5 * n as f64;
    Some(if l1 > limit {
        Finding::new(
            "load",
            Level::Warn,
            format!("1-minute load average {l1:.2} on {n} online CPUs (above {limit:.1}); the machine is busy"),
            Some("wait until the machine is idle, or find what runs with top".into()),
        )
    } else {
        Finding::new("load", Level::Ok, format!("1-minute load average {l1:.2} on {n} online CPUs"), None)
    })
}

/// 11. RT throttling (`sched_rt_runtime_us` other than -1).
fn rt_throttling(root: &Path) -> Option<Finding> {
    let runtime: i64 = read(root, "proc/sys/kernel/sched_rt_runtime_us")?.parse().ok()?;
    if runtime < 0 {
        return Some(Finding::new("rt_throttling", Level::Ok, "RT throttling off (sched_rt_runtime_us=-1)".into(), None));
    }
    let period: i64 = read(root, "proc/sys/kernel/sched_rt_period_us").and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let each = if period == 1_000_000 { "each second".to_string() } else { format!("each {period} us") };
    Some(Finding::new(
        "rt_throttling",
        Level::Info,
        format!(
            "RT throttling on (sched_rt_runtime_us={runtime}); a SCHED_FIFO thread that never sleeps loses {} us {each}",
            (period - runtime).max(0)
        ),
        Some(
            "only for runs that need it (an rt thread that never sleeps): echo -1 > /proc/sys/kernel/sched_rt_runtime_us \
             (as root); a runaway RT thread can then hold its CPU"
                .into(),
        ),
    ))
}

#[cfg(test)]
mod tests {
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
