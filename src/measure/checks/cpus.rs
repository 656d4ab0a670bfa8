//! The checks of the measured CPUs: their governor, turbo, SMT siblings,
//! other runnable tasks on them, isolation (checks 1 to 5).

use super::{Finding, Level, cpu_list, cpus_text, is_online, read};
use crate::measure::placement::format_cpus;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// 1. The cpufreq governor of each measured CPU.
pub(super) fn governor(root: &Path, cpus: &[usize]) -> Finding {
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
pub(super) fn turbo(root: &Path) -> Finding {
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
pub(super) fn smt(root: &Path, cpus: &[usize], online: &[usize]) -> Finding {
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
pub(super) struct TaskStat {
    pub(super) pid: u32,
    pub(super) comm: String,
    pub(super) state: char,
    /// Field 39: the CPU the task last ran on.
    pub(super) processor: Option<usize>,
}

/// Parses one stat line (`host::proc_stat`).
pub(super) fn parse_stat(line: &str) -> Option<TaskStat> {
    let (pid, comm, rest) = crate::measure::host::proc_stat(line)?;
    // Fields after the comm start at field 3 (state); field 39 is index 36.
    let state = rest.first()?.chars().next()?;
    let processor = rest.get(36).and_then(|p| p.parse().ok());
    Some(TaskStat { pid, comm: comm.to_string(), state, processor })
}

/// The numeric entries of `root/proc`, sorted; None if /proc cannot be read.
pub(super) fn pids(root: &Path) -> Option<Vec<u32>> {
    let mut v: Vec<u32> = fs::read_dir(root.join("proc")).ok()?.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect();
    v.sort_unstable();
    Some(v)
}

/// Every thread of every process but `self_pid`'s; tasks that vanish while
/// being read are left out.
pub(super) fn tasks(root: &Path, self_pid: u32) -> Option<Vec<TaskStat>> {
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
pub(super) fn runnable(root: &Path, cpus: &[usize], self_pid: u32) -> Finding {
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
pub(super) fn cmdline_param<'a>(cmdline: &'a str, name: &str) -> Option<&'a str> {
    cmdline.split_whitespace().filter_map(|w| w.strip_prefix(name)?.strip_prefix('=')).next_back()
}

/// The CPUs of a boot parameter's value, dropping flags such as
/// "domain,managed_irq," in front of isolcpus' list.
pub(super) fn param_cpus(value: &str) -> Vec<usize> {
    let list: Vec<&str> = value.split(',').filter(|p| p.starts_with(|c: char| c.is_ascii_digit())).collect();
    cpu_list(&list.join(","))
}

/// 5. Which measured CPUs are isolated (isolcpus) and tickless (nohz_full).
pub(super) fn isolation(root: &Path, cpus: &[usize]) -> Finding {
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
