//! The results model: a run document (versioned JSON, the format of record)
//! holding host facts, environment, condition and one result per case.

use crate::analysis::stats::Summary;
use crate::measure::clock::ClockInfo;
use crate::measure::harness::HarnessConfig;
use crate::measure::host::HostFacts;
use crate::measure::placement::Placement;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub mod adaptive;
pub mod check;
pub mod kernel;
pub mod time;

pub const SCHEMA: &str = "oscycles.run";
/// Version 2 added raw samples by round, intervals, rounds and the case
/// order; version 3 the kernel's event counts per operation of each case
/// (`counters`). Versions 1 and 2 still load (they have none of those).
pub const SCHEMA_VERSION: u32 = 3;
/// The oldest version this oscycles reads.
pub const OLDEST_SCHEMA_VERSION: u32 = 1;

use crate::data::schema_core::Params;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Being measured, or the process died before it could say otherwise.
    Running,
    Complete,
    /// Stopped by SIGINT / SIGTERM; the results so far are kept.
    Interrupted,
    /// The process died without finishing (SIGKILL, a crash, power loss):
    /// found by a later command that opened the store.
    Killed,
    /// Finished, but no case measured successfully: some failed or timed
    /// out and the rest were not applicable (the run exits 1).
    Failed,
}

/// Which process writes a run: enough to tell later whether it still lives
/// (a pid alone may be reused; its start time since this boot may not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    pub boot_id: String,
    /// Field 22 of /proc/PID/stat: clock ticks from boot to the process' start.
    pub start_ticks: u64,
}

impl Owner {
    pub fn this() -> Option<Owner> {
        Owner::of(std::process::id())
    }

    /// The process `pid` as it is now, if it exists.
    pub fn of(pid: u32) -> Option<Owner> {
        let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?.trim().to_string();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        Some(Owner { pid, boot_id, start_ticks: start_ticks(&stat)? })
    }

    /// Whether this process is still running (on this boot).
    pub fn alive(&self) -> bool {
        Owner::of(self.pid).is_some_and(|now| now == *self)
    }
}

/// The start time field (22) of a /proc/PID/stat line.
pub fn start_ticks(stat: &str) -> Option<u64> {
    // After the name, field 3 (state) is the first; field 22 is the 20th.
    crate::measure::host::proc_stat(stat)?.2.get(19)?.parse().ok()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
    pub git: String,
}

impl Tool {
    pub fn this() -> Self {
        Tool { name: "oscycles".into(), version: env!("CARGO_PKG_VERSION").into(), git: env!("OSCYCLES_GIT").into() }
    }
}

/// Where the suites ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvRecord {
    pub name: String,
    pub settings: Map<String, Value>,
}

/// Background load and isolation mode. On the run: the lists asked for; on
/// a result: the one it was measured under, with `facts` saying what the
/// load achieved during the case and what the isolation did (or lacked).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    pub load: String,
    pub isolation: String,
    /// The kernel's preemption mode the run switched to (`--preempt`);
    /// absent where it left the kernel's own (its mode is in the host facts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt: Option<String>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub facts: Map<String, Value>,
}

impl Condition {
    /// The isolation column's text: the mode, and the preemption mode where
    /// the run set one ("rt preempt=full").
    pub fn isolation_label(&self) -> std::borrow::Cow<'_, str> {
        match &self.preempt {
            None => self.isolation.as_str().into(),
            Some(p) => format!("{} preempt={p}", self.isolation).into(),
        }
    }
    /// Whether a run's condition lists several of a load, isolation or preemption mode.
    pub fn several(&self) -> bool {
        [Some(&self.load), Some(&self.isolation), self.preempt.as_ref()].iter().flatten().any(|s| s.contains(','))
    }
}

/// What the user asked for, as the run interpreted it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub suites: Vec<String>,
    pub benchmarks: Option<Vec<String>>,
    /// `--where`: the cases kept, as KEY=VALUE.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases_where: Vec<String>,
    /// The scale of the sizes measured (`--scale`, or the suites' own):
    /// full (the published sizes), quick, test; absent in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<String>,
    pub cpus: Vec<usize>,
    pub policy: String,
    pub memory_locked: bool,
    pub harness: HarnessConfig,
    pub case_timeout_s: f64,
    /// Rounds of the plan, each in a fresh process (1 in version 1 documents).
    #[serde(default = "one")]
    pub rounds: usize,
    /// Each round's process, placement and case order (seeded shuffle).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_log: Vec<RoundRecord>,
    /// Whether the environments took turns round by round (their rounds
    /// pair: round k of each ran beside the others').
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interleaved: bool,
    /// `--rounds auto`: how the rounds went, per environment that ran them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adaptive: Vec<adaptive::Outcome>,
    /// What the run's own process spent outside its cases (absent in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent: Option<time::Spent>,
}

fn one() -> usize {
    1
}

/// One round as it ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    pub round: usize,
    /// The seed of this round's case order.
    pub seed: u64,
    pub pid: u32,
    /// Case labels in the order they ran.
    pub order: Vec<String>,
    pub elapsed_s: f64,
    /// Where it ended: "complete", "failed: ...".
    pub status: String,
    /// Share of the measured CPUs' time the hypervisor stole during the
    /// round, percent (/proc/stat): a VM's view of a busy host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_pct: Option<f64>,
    /// Times the round's process was switched out against its will.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub involuntary_switches: Option<u64>,
    /// Whether the round ran a counting pass after its timed cases (absent
    /// in older documents, where every round did unless `--no-counters`):
    /// later rounds of a run do not, a cell's counts per operation being
    /// the same in every round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted: Option<bool>,
    /// What the round measured, per family.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub families: std::collections::BTreeMap<String, time::FamilyTime>,
    /// What the round's process spent besides (absent in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent: Option<time::Spent>,
    /// Seconds from the start of the round's process to its end, as the
    /// run's own process timed it (absent where the round ran in it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_s: Option<f64>,
}

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Costs: cycles, ns.
    #[default]
    Lower,
    /// Rates: MB/s, jobs per minute.
    Higher,
}

/// A summary in TSC cycles (or another unit), with its nanosecond twin when
/// the unit is cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    pub unit: String,
    pub summary: Summary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns: Option<Summary>,
    #[serde(default)]
    pub better: Better,
    /// The raw samples (one per batch, in the metric's unit), one list per
    /// round; empty where the summary is over something else (a histogram).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Vec<f64>>,
    /// The median with its 95% interval over rounds and batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<crate::analysis::uncertainty::bootstrap::Estimate>,
}

pub const UNIT_CYCLES: &str = "tsc_cycles";

/// Guest instructions retired, counted by QEMU's instruction counter
/// (`-icount shift=0`: the guest's TSC advances one per instruction). Exact
/// and deterministic, a unit of its own: never cycles, never beside them on
/// one axis.
pub const UNIT_INSTRUCTIONS: &str = "guest_instructions";

/// A unit as a table's text names it: "cycles" (TSC cycles),
/// "instructions" (guest instructions), else the unit itself.
pub fn unit_word(unit: &str) -> &str {
    match unit {
        UNIT_CYCLES => "cycles",
        UNIT_INSTRUCTIONS => "instructions",
        other => kernel::unit_word(other).unwrap_or(other),
    }
}

/// Whether a unit is counted exactly, the same on every run (guest
/// instructions, and the counts of a QEMU plugin beside them): its cells have no spread but their own, an interval of
/// zero width, and any difference between two of them is real.
pub fn is_exact(unit: &str) -> bool {
    unit == UNIT_INSTRUCTIONS || kernel::is_count(unit)
}

impl Metric {
    /// A cost in TSC cycles, with its ns twin; in guest instructions, without
    /// one, where the clock counts them (QEMU's instruction counter).
    pub fn cycles(name: &str, summary: Summary, clock: &ClockInfo) -> Self {
        if clock.counts_instructions {
            return Metric::instructions(name, summary);
        }
        Metric {
            name: name.into(),
            unit: UNIT_CYCLES.into(),
            summary,
            ns: Some(summary.scaled(1e9 / clock.tsc_hz)),
            better: Better::Lower,
            samples: vec![],
            estimate: None,
        }
    }

    /// A cost in guest instructions (QEMU's instruction counter): no ns
    /// twin, since under the counter a nanosecond is an instruction.
    pub fn instructions(name: &str, summary: Summary) -> Self {
        Metric::cost(name, UNIT_INSTRUCTIONS, summary)
    }

    /// A rate in `unit` (MB/s, jobs/min...): higher is better.
    pub fn rate(name: &str, unit: &str, summary: Summary) -> Self {
        Metric { name: name.into(), unit: unit.into(), summary, ns: None, better: Better::Higher, samples: vec![], estimate: None }
    }

    /// A cost in a unit other than cycles (seconds, ns, notifications): lower is better.
    pub fn cost(name: &str, unit: &str, summary: Summary) -> Self {
        Metric { name: name.into(), unit: unit.into(), summary, ns: None, better: Better::Lower, samples: vec![], estimate: None }
    }

    /// The same metric keeping its raw samples (one round's batches), the
    /// ones its summary was made of. Distributions of thousands of samples
    /// (noise, jitter) keep their histogram instead.
    pub fn with_samples(mut self, samples: &[f64]) -> Self {
        if samples.len() <= MAX_KEPT_SAMPLES {
            self.samples = vec![samples.to_vec()];
        }
        self
    }

    /// Adds another round's samples: summary and interval are then over
    /// every round's batches.
    pub fn absorb(&mut self, other: &Metric) {
        if self.samples.is_empty() || other.samples.is_empty() {
            return;
        }
        self.samples.extend(other.samples.iter().cloned());
        self.summarize_rounds();
    }

    /// Keeps the first `n` rounds only (a round that has no twin in the
    /// column it is paired with), the summary again over those.
    pub fn keep_rounds(&mut self, n: usize) {
        if n > 0 && n < self.samples.len() {
            self.samples.truncate(n);
            self.summarize_rounds();
        }
    }

    /// The summary (and its ns twin) over every round's samples.
    fn summarize_rounds(&mut self) {
        let pooled: Vec<f64> = self.samples.iter().flatten().copied().collect();
        if let Some(s) = crate::analysis::stats::Summary::of(&pooled) {
            if let Some(ns) = &mut self.ns {
                let factor = if self.summary.median != 0.0 { ns.median / self.summary.median } else { 0.0 };
                *ns = s.scaled(factor);
            }
            self.summary = s;
        }
    }

    /// Computes the interval from the samples (seeded: the same samples give
    /// the same interval).
    pub fn estimate_now(&mut self, seed: u64) {
        self.estimate = if self.is_exact() {
            crate::analysis::uncertainty::bootstrap::estimate_exact(&self.samples)
        } else {
            crate::analysis::uncertainty::bootstrap::estimate(&self.samples, seed)
        };
    }

    /// Whether it is counted exactly ([`is_exact`]): the same on every run.
    pub fn is_exact(&self) -> bool {
        is_exact(&self.unit)
    }
}

/// At most this many samples a round are kept in the document.
pub const MAX_KEPT_SAMPLES: usize = 4096;

impl CaseResult {
    /// Adds another round of the same case (same benchmark, parameters and
    /// condition): metric by metric, where both have raw samples.
    pub fn absorb(&mut self, other: &CaseResult) {
        for m in &mut self.metrics {
            if let Some(o) = other.metrics.iter().find(|o| o.name == m.name) {
                m.absorb(o);
            }
        }
        match (&mut self.counters, &other.counters) {
            (Some(c), Some(o)) => c.absorb(o),
            (None, Some(o)) => self.counters = Some(o.clone()),
            _ => {}
        }
    }

    /// Intervals for every metric with raw samples.
    pub fn estimate_now(&mut self, seed: u64) {
        for (i, m) in self.metrics.iter_mut().enumerate() {
            m.estimate_now(seed.wrapping_add(i as u64));
        }
    }

    /// Whether `other` is the same cell: benchmark, parameters, environment, load, isolation.
    pub fn same_cell(&self, other: &CaseResult) -> bool {
        let cond = |r: &CaseResult| r.condition.as_ref().map(|c| (c.load.clone(), c.isolation.clone(), c.preempt.clone()));
        self.benchmark == other.benchmark
            && self.params == other.params
            && self.environment == other.environment
            && cond(self) == cond(other)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseStatus {
    Ok,
    /// The case cannot run with this placement or on this host; `reason` says why.
    NotApplicable,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    pub suite: String,
    pub benchmark: String,
    pub family: String,
    pub params: Params,
    pub status: CaseStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    pub metrics: Vec<Metric>,
    /// Family-specific facts: iteration counts, bytes on the wire...
    pub details: Map<String, Value>,
    pub elapsed_s: f64,
    /// The load and isolation this result was measured under (absent in
    /// documents written before conditions were per result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<Condition>,
    /// The environment it was measured in (native, container, qemu-tcg...);
    /// absent in single-environment documents of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// The kernel's event counts per operation, from counting batches after
    /// the timed ones (absent before version 3, and with `--no-counters`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<crate::measure::counters::Counts>,
    /// The inner counts its harness measurements on the runner's thread
    /// settled on, in order (`harness::Inners`): the counting pass and the
    /// later rounds start their calibration there. A merged cell keeps
    /// its first round's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inners: Vec<u64>,
    /// Which windows of a counting QEMU plugin its timed batches are
    /// (`measure::marks`), as the guest numbered them: the host reads the
    /// plugin's counts of those windows into metrics of the cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marked: Option<crate::measure::marks::Marked>,
}

impl CaseResult {
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }
    /// The parameters as their family's struct (`schema::ipc::Params`...);
    /// None where they do not fit it.
    pub fn params_as<T: crate::data::schema_core::CaseParams>(&self) -> Option<T> {
        T::from_params(&self.params)
    }
    /// A numeric detail (`schema::net::details::MIB_PER_S`...).
    pub fn detail_f64(&self, key: &str) -> Option<f64> {
        self.details.get(key).and_then(Value::as_f64)
    }
    /// The environment of this result, falling back to the run's.
    pub fn env<'a>(&'a self, doc: &'a RunDoc) -> &'a str {
        self.environment.as_deref().unwrap_or(&doc.environment.name)
    }
    /// (load, isolation) of this result, falling back to the run's; the
    /// isolation with the preemption mode where the run set one.
    pub fn load_isolation<'a>(&'a self, doc: &'a RunDoc) -> (&'a str, std::borrow::Cow<'a, str>) {
        let c = self.condition.as_ref().unwrap_or(&doc.condition);
        (&c.load, c.isolation_label())
    }
    /// Whether this result was measured under load `l` and isolation label `i`.
    pub fn measured_under(&self, doc: &RunDoc, l: &str, i: &str) -> bool {
        let (load, iso) = self.load_isolation(doc);
        load == l && iso == i
    }
    /// The cell within its benchmark, as a person reads it: parameters,
    /// then environment, load and isolation where the run has several.
    pub fn cell_label(&self, doc: &RunDoc) -> String {
        let mut label = params_label(&self.params);
        let (l, i) = self.load_isolation(doc);
        if doc.environment.name.contains(',') {
            label += &format!(" [{}]", self.env(doc));
        }
        if doc.condition.several() {
            label += &format!(" [{l}/{i}]");
        }
        label.trim().to_string()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDoc {
    pub schema: String,
    pub schema_version: u32,
    pub id: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunStatus,
    pub tool: Tool,
    pub host: HostFacts,
    pub environment: EnvRecord,
    pub condition: Condition,
    pub settings: Settings,
    pub planned_cases: usize,
    pub results: Vec<CaseResult>,
    /// The process that writes the run, while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// The host's name in a fleet (`run --label`, the inventory name under
    /// `fleet run`): the column a by-host report puts the run in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The fleet run this run belongs to (`run --fleet`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<String>,
    /// Why the run ended `failed`: no case measured (the cases' reasons),
    /// or what stopped it (a full disk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Why a run whose `results` hold no measured case measured nothing: how
/// many failed and were not applicable, and their first distinct reasons
/// (each bounded, control characters escaped).
pub fn nothing_measured(results: &[CaseResult]) -> String {
    let count = |s: CaseStatus| results.iter().filter(|r| r.status == s).count();
    let mut reasons: Vec<String> = Vec::new();
    for r in results.iter().filter_map(|r| r.reason.as_deref()) {
        let one: String = r.chars().take(240).map(|c| if c.is_control() { ' ' } else { c }).collect();
        if reasons.len() < 3 && !reasons.contains(&one) {
            reasons.push(one);
        }
    }
    let more =
        results.iter().filter_map(|r| r.reason.as_deref()).collect::<std::collections::BTreeSet<_>>().len().saturating_sub(reasons.len());
    let tail = if more > 0 { format!(" (and {more} other reasons)") } else { String::new() };
    format!(
        "no case measured: {} failed, {} not applicable: {}{tail}",
        count(CaseStatus::Failed),
        count(CaseStatus::NotApplicable),
        if reasons.is_empty() { "no reason given".to_string() } else { reasons.join("; ") }
    )
}

/// Parameters as people read them: "words=8 space=inter cores=cross".
pub fn params_label(p: &Params) -> String {
    p.iter().map(|(k, v)| format!("{k}={}", param_text(v))).collect::<Vec<_>>().join(" ")
}

/// A parameter's value as labels print it (and `--where` matches it).
pub fn param_text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), String::from)
}

impl RunDoc {
    /// The first result of `bench` that `pred` accepts, whatever its status.
    pub fn case(&self, bench: &str, pred: impl Fn(&CaseResult) -> bool) -> Option<&CaseResult> {
        self.results.iter().find(|r| r.benchmark == bench && pred(r))
    }

    /// The same, among measured results only.
    pub fn measured(&self, bench: &str, pred: impl Fn(&CaseResult) -> bool) -> Option<&CaseResult> {
        self.case(bench, |r| r.status == CaseStatus::Ok && pred(r))
    }
}

/// Formats a Unix time as RFC 3339 UTC ("2026-11-21T11:11:34Z").
pub fn rfc3339_utc(unix_secs: u64) -> String {
    let (days, rem) = (unix_secs / 86_400, unix_secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Reads back what `rfc3339_utc` writes ("2026-11-21T11:11:34Z"): Unix
/// seconds, None for anything else.
pub fn rfc3339_secs(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' || b[19] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days since 1970-01-01 from a civil date (Howard Hinnant's algorithm).
    let y = y - i64::from(m <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).ok()
}

pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    rfc3339_utc(secs)
}

/// The stored fixture run (tests/fixtures/run.json), for the unit tests.
#[cfg(test)]
pub(crate) fn fixture() -> RunDoc {
    serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json")).unwrap()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_ticks_of_a_hostile_command_name() {
        let stat = "42 (a) b (c) S 1 42 42 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 123456 1000 50";
        assert_eq!(start_ticks(stat), Some(123456));
        let me = Owner::this().unwrap();
        assert!(me.alive());
        assert!(!Owner { start_ticks: me.start_ticks + 1, ..me.clone() }.alive());
    }

    #[test]
    fn reads_back_the_dates_it_writes() {
        for t in [0, 951_782_400, 1_795_260_694, 4_102_444_799] {
            assert_eq!(rfc3339_secs(&rfc3339_utc(t)), Some(t));
        }
        assert_eq!(rfc3339_secs("2026-13-01T00:00:00Z"), None);
        assert_eq!(rfc3339_secs("2026-11-21 11:31:34"), None);
    }

    #[test]
    fn formats_known_dates() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_795_260_694), "2026-11-21T11:31:34Z");
    }
}
