//! The header every run prints: who measured what, where, on what.

use crate::data::results::{RunDoc, RunStatus};
use crate::measure::clock::{ClockInfo, Counter};
use crate::measure::host::HostFacts;

/// How the run ended, where that is news: "" when complete, or while it runs (`live`).
fn status(doc: &RunDoc, live: bool) -> String {
    match doc.status {
        _ if live => String::new(),
        RunStatus::Complete => String::new(),
        RunStatus::Running => format!(" [INCOMPLETE: {} of {} cases saved; the run did not finish]", doc.results.len(), doc.planned_cases),
        RunStatus::Interrupted => format!(" [INTERRUPTED: {} of {} cases saved]", doc.results.len(), doc.planned_cases),
        RunStatus::Killed => {
            format!(" [KILLED: {} of {} cases saved; the process died without finishing]", doc.results.len(), doc.planned_cases)
        }
        RunStatus::Failed => format!(" [FAILED: no case of {} measured successfully]", doc.results.len()),
    }
}

/// `live`: printed by the run itself as it starts, so status is not news.
/// Stolen time per round above this share marks a round the host interfered with.
pub const STEAL_MARK_PCT: f64 = 1.0;

/// What the host took from the rounds, where the kernel said: "steal: 3 of
/// 10 rounds had more than 1% of their CPUs' time stolen (at most 4.2%)".
fn steal_line(log: &[crate::data::results::RoundRecord]) -> String {
    let steal: Vec<f64> = log.iter().filter_map(|r| r.steal_pct).collect();
    if steal.is_empty() {
        return String::new();
    }
    let marked = steal.iter().filter(|&&p| p > STEAL_MARK_PCT).count();
    let max = steal.iter().copied().fold(0.0, f64::max);
    let switches: u64 = log.iter().filter_map(|r| r.involuntary_switches).sum();
    format!(
        "steal: {marked} of {} rounds had more than {STEAL_MARK_PCT}% of their CPUs' time stolen by the hypervisor (at most {max:.1}%); \
         {switches} involuntary switches of round processes\n",
        steal.len()
    )
}

/// The header's first line: the tool, the run, when, and how it ended.
fn first_line(doc: &RunDoc, live: bool) -> String {
    format!("oscycles {} (git {}), run {} at {}{}\n", doc.tool.version, doc.tool.git, doc.id, doc.started_at, status(doc, live))
}

pub fn render(doc: &RunDoc, live: bool) -> String {
    let mut s = first_line(doc, live);
    s += &format!(
        "environment {}, load {}, isolation {} ({}{}), CPUs {:?}\n",
        doc.environment.name,
        doc.condition.load,
        doc.condition.isolation_label(),
        doc.settings.policy,
        if doc.settings.memory_locked { ", memory locked" } else { "" },
        doc.settings.cpus
    );
    s += &host(doc);
    s += &scale_line(doc);
    s += &harness(doc);
    s
}

/// The sizes, where they are not the published ones: a line saying so.
fn scale_line(doc: &RunDoc) -> String {
    match doc.settings.scale.as_deref() {
        None | Some("full") => String::new(),
        Some(s) if s.split(',').any(|x| x == "test") => {
            format!(
                "scale: {s}: the smallest sizes (FWQ 100 and 1,000 quanta, 50 control periods, 30 ms net/blk points, a 4 MiB blk file): mechanics, not the published figures\n"
            )
        }
        Some(s) => format!(
            "scale: {s}: the quick suite's shorter stated sizes (FWQ 2,000 quanta of 1.4 ms and 10,000 of 14 us, 300 control periods, 150 ms net/blk points); --scale full for the published ones\n"
        ),
    }
}

/// The host: CPU, memory, kernel, hypervisor, clock, vulnerabilities, warnings.
fn host(doc: &RunDoc) -> String {
    let h = &doc.host;
    let mut s = format!(
        "host {}: {}, CPUs online {} (allowed {}), {:.1} GiB\n",
        h.hostname,
        h.cpu_model,
        h.cpus_online,
        h.cpus_allowed,
        h.memory_total_kib as f64 / 1048576.0
    );
    s += &format!(
        "kernel {} ({}), preemption {}{}, isolation on the command line: {}\n",
        h.kernel_release,
        h.kernel_version,
        h.preemption,
        h.preempt.as_ref().map(|p| format!(" {}", p.describe())).unwrap_or_default(),
        crate::measure::host::isolation_params(&h.kernel_cmdline)
    );
    let mut hv = match &h.hypervisor {
        Some(v) => format!("hypervisor '{v}'"),
        None => "no hypervisor (bare metal)".into(),
    };
    if let Some(x) = &h.sys_hypervisor {
        hv += &format!(
            " (/sys/hypervisor: {} {}{})",
            x.kind,
            x.guest_type.as_deref().unwrap_or("guest"),
            x.version.as_deref().map(|v| format!(" {v}")).unwrap_or_default()
        );
    }
    let kvm = if h.kvm_modules.is_empty() { "none".to_string() } else { h.kvm_modules.join(", ") };
    s += &format!("{hv}; kvm modules: {kvm}; cpufreq governor: {}\n", h.governor.as_deref().unwrap_or("none (no cpufreq)"));
    s += &clock_line(h);
    let vulnerable = h.mitigations.values().filter(|v| v.starts_with("Vulnerable")).count();
    let mitigated = h.mitigations.values().filter(|v| v.starts_with("Mitigation")).count();
    let unaffected = h.mitigations.values().filter(|v| v.starts_with("Not affected")).count();
    s += &format!(
        "CPU vulnerabilities: {mitigated} mitigated, {vulnerable} vulnerable, {unaffected} not affected, {} other (details in the JSON)\n",
        h.mitigations.len() - mitigated - vulnerable - unaffected
    );
    for w in &h.warnings {
        s += &format!("warning: {w}\n");
    }
    s
}

/// The environments of the run whose columns QEMU's instruction counter
/// counted (one round by design: the count is exact), and the others.
fn counted_split(doc: &RunDoc) -> (Vec<String>, Vec<String>) {
    let counted = |e: &String| crate::data::schema_core::environment::Facts::read(doc.environment.settings.get(e)).counted();
    super::env::environments(doc).into_iter().partition(counted)
}

/// The batches a counted column's cells rest on: as its guest recorded
/// them (fewer than a timed column's), else (a run stored before it was
/// recorded) the run's.
fn counted_batches(doc: &RunDoc, counted: &[String]) -> usize {
    let inside =
        |e: &String| crate::data::schema_core::environment::Facts::read(doc.environment.settings.get(e)).host_inside?.harness_batches;
    counted.iter().find_map(inside).unwrap_or(doc.settings.harness.batches)
}

/// What a cell rests on, per kind of column: the rounds of the run for
/// measured columns, one round (exact) for counted ones.
fn rounds_line(doc: &RunDoc) -> String {
    let (rounds, batches) = (doc.settings.rounds, doc.settings.harness.batches);
    let (counted, timed) = counted_split(doc);
    let counted_batches = counted_batches(doc, &counted);
    let exact = |envs: &[String]| {
        format!(
            "{} ran under QEMU's instruction counter: a cell there rests on 1 round x {counted_batches} batches, exact (the same on every run, \
             so one round runs by design)",
            envs.join(", ")
        )
    };
    match (counted.is_empty(), timed.is_empty()) {
        (false, true) => format!(
            "rounds: 1 a cell x {counted_batches} batches ({}: QEMU's instruction counter, exact: one round by design)\n",
            counted.join(", ")
        ),
        (false, false) => format!(
            "rounds: {rounds} for {}, each in a fresh process with its cases in a seeded random order; a cell there rests on {rounds} rounds \
             x {batches} batches (fixed-time cases: the first round), its interval 95% over rounds, then batches; {}\n",
            timed.join(", "),
            exact(&counted)
        ),
        _ => format!(
            "rounds: {rounds}, each in a fresh process with its cases in a seeded random order; a cell rests on {rounds} rounds x {batches} \
             batches (fixed-time cases: the first round); intervals are 95% over rounds, then batches\n"
        ),
    }
}

/// The header in a few lines, for the report that leads with what was
/// measured: the run, where, the host in one line, the clock, what a cell
/// rests on; warnings counted (`show --full` has them all).
pub fn render_brief(doc: &RunDoc) -> String {
    let h = &doc.host;
    let mut s = first_line(doc, false);
    s += &format!(
        "environment {}, load {}, isolation {}; host {}: {}, CPUs {}, kernel {}, {}{}\n",
        doc.environment.name,
        doc.condition.load,
        doc.condition.isolation_label(),
        h.hostname,
        h.cpu_model,
        h.cpus_online,
        h.kernel_release,
        clock_rate(&h.clock, 4),
        match h.warnings.len() {
            0 => String::new(),
            n => format!("; {n} warning{} (show --full)", if n == 1 { "" } else { "s" }),
        }
    );
    s += &scale_line(doc);
    let full = harness(doc);
    s += full.lines().filter(|l| l.starts_with("rounds")).map(|l| format!("{l}\n")).collect::<String>().as_str();
    s
}

/// How cells were sampled: batches, and rounds.
fn harness(doc: &RunDoc) -> String {
    let hc = &doc.settings.harness;
    let c = &doc.host.clock;
    let mut s = format!(
        "harness: {} batches of {}, samples are per-operation means of one batch; cells show the median\n",
        hc.batches,
        match hc.fixed_inner {
            Some(n) => format!("{n} operations"),
            None => format!("at least {:.1} ms (inner count doubled to reach it)", hc.target_batch_cycles as f64 * 1e3 / c.tsc_hz),
        }
    );
    let rounds = doc.settings.rounds;
    s += &steal_line(&doc.settings.round_log);
    if doc.settings.adaptive.is_empty() && doc.settings.rounds >= crate::data::results::adaptive::MAX_ROUNDS {
        s += "rounds: auto (as many as the cells need, within the budget)\n";
        return s;
    }
    for o in &doc.settings.adaptive {
        let env = o.environment.as_deref().map(|e| format!("[{e}] ")).unwrap_or_default();
        o.describe().iter().for_each(|line| s += &format!("{env}{line}\n"));
    }
    s += &if !doc.settings.adaptive.is_empty() {
        "rounds: each in a fresh process with its cases in a seeded random order; later rounds measured only unsettled cells, so a cell rests \
         on the rounds it got (fixed-time cases: the first round); intervals are 95% over rounds, then batches\n"
            .to_string()
    } else if rounds > 1 {
        rounds_line(doc)
    } else {
        "rounds: 1 (one process): a cell's interval covers only its batches, not the spread between invocations; --rounds 5 or more for that\n"
            .into()
    };
    s
}

/// A clock's name and calibrated rate, as the document records them:
/// "TSC 2.5961 GHz", "CNTVCT_EL0 62.5000 MHz" (`decimals` after the point).
pub fn clock_rate(c: &ClockInfo, decimals: usize) -> String {
    format!("{} {}", c.counter().name(), rate(c.tsc_hz, decimals))
}

/// What a run's cycles are: "TSC cycles at 2.60 GHz", "CNTVCT_EL0 ticks at 62.50 MHz".
pub fn clock_units(c: &ClockInfo) -> String {
    let ticks = if c.counter() == Counter::Tsc { "cycles" } else { "ticks" };
    format!("{} {ticks} at {}", c.counter().name(), rate(c.tsc_hz, 2))
}

/// A rate in GHz, or below 1 GHz in MHz.
fn rate(hz: f64, decimals: usize) -> String {
    if hz >= 1e9 { format!("{:.decimals$} GHz", hz / 1e9) } else { format!("{:.decimals$} MHz", hz / 1e6) }
}

/// The clock's line: its counter and rate, calibrated against what, what
/// else states the rate, the TSC's flags (x86-64's /proc/cpuinfo; aarch64's
/// counter has none: its source, as recorded, says what it read), and
/// what two reads cost.
fn clock_line(h: &HostFacts) -> String {
    let c = &h.clock;
    let (counter, spread) = (c.counter(), c.tsc_hz_spread * 100.0);
    let stated = |hz: f64| format!("; {} says {}", counter.stated_by(), rate(hz, 4));
    if counter == Counter::Cntvct {
        return format!(
            "{} ({}; calibrated against CLOCK_MONOTONIC_RAW, spread {spread:.3}%{}); two back-to-back reads cost {} ticks (subtracted)\n",
            clock_rate(c, 4),
            c.source,
            c.cpuid_tsc_hz.map(stated).unwrap_or_default(),
            c.overhead_cycles
        );
    }
    let t = &h.tsc_flags;
    let flags =
        [("constant_tsc", t.constant_tsc), ("nonstop_tsc", t.nonstop_tsc), ("rdtscp", t.rdtscp), ("tsc_known_freq", t.tsc_known_freq)];
    let flags: Vec<&str> = flags.iter().filter(|f| f.1).map(|f| f.0).collect();
    format!(
        "{} (calibrated against CLOCK_MONOTONIC_RAW, spread {spread:.3}%{}), flags {}; two back-to-back reads cost {} cycles (subtracted)\n",
        clock_rate(c, 4),
        c.cpuid_tsc_hz.map(|f| format!("; cpuid says {:.4} GHz", f / 1e9)).unwrap_or_default(),
        flags.join(" "),
        c.overhead_cycles
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::results::fixture;

    #[test]
    fn the_clock_is_named_by_its_source_and_rate_as_the_document_records_them() {
        // The stored x86-64 run: the TSC, its rate and flags, as always.
        let mut doc = fixture();
        let text = render(&doc, false);
        assert!(text.contains("TSC 2.6000 GHz (calibrated") && text.contains("flags "), "{text}");
        assert!(render_brief(&doc).contains(", TSC 2.6000 GHz"), "{}", render_brief(&doc));
        // The aarch64 build under qemu-aarch64's user mode: the generic timer's counter on an x86-64 host,
        // whose /proc/cpuinfo flags are no property of that clock.
        doc.host.clock = ClockInfo {
            source: "cntvct_el0 (isb; mrs), 62.5 MHz: one tick is 16.0 ns, not a CPU cycle".into(),
            tsc_hz: 62_499_870.0,
            cpuid_tsc_hz: Some(62.5e6),
            overhead_cycles: 1,
            ..doc.host.clock
        };
        doc.host.tsc_flags.constant_tsc = true;
        let text = render(&doc, false);
        let line = text.lines().find(|l| l.starts_with("CNTVCT_EL0")).unwrap_or_else(|| panic!("no clock line: {text}"));
        assert_eq!(
            line,
            "CNTVCT_EL0 62.4999 MHz (cntvct_el0 (isb; mrs), 62.5 MHz: one tick is 16.0 ns, not a CPU cycle; calibrated against \
             CLOCK_MONOTONIC_RAW, spread 0.000%; CNTFRQ_EL0 says 62.5000 MHz); two back-to-back reads cost 1 ticks (subtracted)"
        );
        assert!(!text.contains("TSC") && !text.contains("constant_tsc") && !text.contains("GHz"), "{text}");
        let brief = render_brief(&doc);
        assert!(brief.contains(", CNTVCT_EL0 62.4999 MHz") && !brief.contains("TSC"), "{brief}");
        assert_eq!(clock_units(&doc.host.clock), "CNTVCT_EL0 ticks at 62.50 MHz");
    }

    #[test]
    fn a_counted_column_rests_on_the_batches_its_guest_took() {
        // The stored run's container column, as if QEMU's instruction counter had counted it.
        let mut doc = fixture();
        doc.settings.rounds = 10;
        let counted = |batches: serde_json::Value| serde_json::json!({"accel": "icount", "host_inside": {"harness_batches": batches}});
        doc.environment.settings.insert("container".into(), counted(serde_json::json!(5)));
        let batches = doc.settings.harness.batches;
        assert_ne!(batches, 5);
        let line = |doc: &RunDoc| harness(doc).lines().find(|l| l.starts_with("rounds: 10")).unwrap_or_default().to_string();
        assert!(
            line(&doc).contains("container ran under QEMU's instruction counter: a cell there rests on 1 round x 5 batches"),
            "{}",
            line(&doc)
        );
        assert!(
            line(&doc).contains(&format!("rests on 10 rounds x {batches} batches")),
            "the timed column keeps the run's: {}",
            line(&doc)
        );
        // A run stored before the guest's batches were recorded: the run's.
        doc.environment.settings.insert("container".into(), counted(serde_json::Value::Null));
        assert!(line(&doc).contains(&format!("a cell there rests on 1 round x {batches} batches")), "{}", line(&doc));
    }
}
