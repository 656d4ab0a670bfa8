//! The checks of the kernel's settings that reach every measurement:
//! irqbalance, swap, transparent huge pages, ASLR, the load average, RT
//! throttling (checks 6 to 11).

use super::cpus::pids;
use super::{Finding, Level, read};
use std::path::Path;

/// 6. irqbalance, which moves IRQs onto measured CPUs mid-run.
pub(super) fn irqbalance(root: &Path) -> Option<Finding> {
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
pub(super) fn swap(root: &Path) -> Option<Finding> {
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
pub(super) fn thp(root: &Path) -> Option<Finding> {
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
pub(super) fn aslr(root: &Path) -> Option<Finding> {
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
pub(super) fn load(root: &Path, online: usize) -> Option<Finding> {
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
pub(super) fn rt_throttling(root: &Path) -> Option<Finding> {
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
