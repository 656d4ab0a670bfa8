//! What happened on a CPU during a measurement, so that a spike can be
//! traced to a cause: interrupt and softirq counts on that CPU (from
//! /proc/interrupts and /proc/softirqs) and the thread's involuntary
//! context switches.

use crate::data::schema_core::attribution as keys;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    interrupts: BTreeMap<String, u64>,
    softirqs: BTreeMap<String, u64>,
    involuntary_switches: u64,
}

/// The counts of some CPUs' columns, summed, in a /proc/interrupts-style
/// table: the first line names the CPUs, each other line is "NAME: counts... [desc]".
pub fn columns(table: &str, cpus: &[usize]) -> BTreeMap<String, u64> {
    let mut lines = table.lines();
    let Some(header) = lines.next() else { return BTreeMap::new() };
    let heads: Vec<&str> = header.split_whitespace().collect();
    let cols: Vec<usize> = cpus.iter().filter_map(|c| heads.iter().position(|h| *h == format!("CPU{c}"))).collect();
    if cols.is_empty() {
        return BTreeMap::new();
    }
    lines
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let v = cols.iter().map(|&c| fields.get(c)?.parse::<u64>().ok()).sum::<Option<u64>>()?;
            Some((name.trim().to_string(), v))
        })
        .collect()
}

/// Involuntary context switches so far of `who` (`libc::RUSAGE_THREAD`:
/// the calling thread; `libc::RUSAGE_SELF`: every thread of the process).
pub fn involuntary_switches(who: libc::c_int) -> Option<u64> {
    // SAFETY: rusage is plain integers, for which all zeroes is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes only the struct it is given, ours; `who` is one of the targets it takes.
    (unsafe { libc::getrusage(who, &mut ru) } == 0).then_some(ru.ru_nivcsw as u64)
}

impl Snapshot {
    /// Counts on `cpus` (summed) and of the calling thread.
    pub fn take(cpus: &[usize]) -> Snapshot {
        let read = |p: &str| std::fs::read_to_string(p).map(|t| columns(&t, cpus)).unwrap_or_default();
        Snapshot {
            interrupts: read("/proc/interrupts"),
            softirqs: read("/proc/softirqs"),
            involuntary_switches: involuntary_switches(libc::RUSAGE_THREAD).unwrap_or(0),
        }
    }

    /// What changed since `before`, as JSON: non-zero deltas only.
    pub fn since(&self, before: &Snapshot) -> serde_json::Value {
        let delta = |a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>| -> serde_json::Map<String, serde_json::Value> {
            a.iter().filter_map(|(k, v)| v.checked_sub(*b.get(k).unwrap_or(&0)).filter(|d| *d > 0).map(|d| (k.clone(), d.into()))).collect()
        };
        serde_json::json!({
            (keys::INTERRUPTS): delta(&self.interrupts, &before.interrupts),
            (keys::SOFTIRQS): delta(&self.softirqs, &before.softirqs),
            (keys::INVOLUNTARY_CONTEXT_SWITCHES): self.involuntary_switches.saturating_sub(before.involuntary_switches),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_sums_cpu_columns() {
        let t = "           CPU0       CPU1\n  1:         10          0   IO-APIC   1-edge  i8042\nLOC:      12345      67890   Local timer interrupts\nERR:          0\n";
        let c1 = columns(t, &[1]);
        assert_eq!(c1.get("LOC"), Some(&67890));
        assert_eq!(c1.get("1"), Some(&0));
        assert_eq!(c1.get("ERR"), None, "a row without that CPU's column is skipped");
        assert!(columns(t, &[5]).is_empty());
        assert_eq!(columns(t, &[0, 1]).get("LOC"), Some(&80235), "columns are summed");
    }

    #[test]
    fn deltas_keep_only_what_changed() {
        let mut a = Snapshot::default();
        a.interrupts.insert("LOC".into(), 5);
        a.interrupts.insert("RES".into(), 1);
        let mut b = a.clone();
        b.interrupts.insert("LOC".into(), 9);
        b.involuntary_switches = 2;
        let d = b.since(&a);
        assert_eq!(d["interrupts"], serde_json::json!({"LOC": 4}));
        assert_eq!(d["involuntary_context_switches"], 2);
    }
}
