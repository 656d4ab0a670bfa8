//! Environments side by side: every case measured in more than one
//! environment, one column per environment and a relative column against
//! native (the "Rel. Perf" of the L4 performance page's Wombat table: above 1 = faster than
//! native). The boot-time table is the boot family's (`bench/boot/table.rs`).

use crate::data::results::kernel::KERNEL_INSTRUCTIONS;
use crate::data::results::{Better, CaseResult, CaseStatus, RunDoc, params_label};
use crate::data::schema_core::environment::Facts;
use crate::tables::tabular::table::TextTable;
/// The environments of a run, in order of first appearance.
pub fn environments(doc: &RunDoc) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &doc.results {
        let e = r.env(doc).to_string();
        if !out.contains(&e) {
            out.push(e);
        }
    }
    out
}

fn value(r: &CaseResult) -> Option<(f64, String, Better)> {
    let m = r.metrics.first()?;
    (r.status == CaseStatus::Ok).then(|| (m.summary.median, m.unit.clone(), m.better))
}

fn fmt(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Every case of `doc` measured in more than one environment, a column
/// each, but those of `own_table` (families whose table lays every
/// environment out itself, as boot's does).
pub fn render_side_by_side(doc: &RunDoc, own_table: &[&str]) -> String {
    side_by_side(doc, own_table, false)
}

/// As [`render_side_by_side`], of the cases measured in two environments
/// or more (its purpose is comparison: a case measured in one environment
/// only is in that environment's table).
pub fn render_side_by_side_measured(doc: &RunDoc, own_table: &[&str]) -> String {
    side_by_side(doc, own_table, true)
}

/// The cases (benchmark, parameters label) measured in two environments or
/// more, but those of `own_table`: the side-by-side table's in the report
/// that leads with what was measured.
pub fn measured_in_two(doc: &RunDoc, own_table: &[&str]) -> Vec<(String, String)> {
    present_in_two(doc, own_table, true)
}

/// The cases present (`measured`: measured) in two environments or more,
/// in order of first appearance, but those of `own_table`.
fn present_in_two(doc: &RunDoc, own_table: &[&str], measured: bool) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = Vec::new();
    let mut envs_of: Vec<Vec<&str>> = Vec::new();
    for r in doc.results.iter().filter(|r| !own_table.contains(&r.family.as_str()) && (!measured || value(r).is_some())) {
        let k = (r.benchmark.clone(), params_label(&r.params));
        let i = keys.iter().position(|x| *x == k).unwrap_or_else(|| {
            keys.push(k);
            envs_of.push(Vec::new());
            keys.len() - 1
        });
        if !envs_of[i].contains(&r.env(doc)) {
            envs_of[i].push(r.env(doc));
        }
    }
    keys.into_iter().zip(envs_of).filter(|(_, e)| e.len() >= 2).map(|(k, _)| k).collect()
}

/// The side-by-side table of the cases present in two environments or more;
/// `measured`: of those measured in two or more.
fn side_by_side(doc: &RunDoc, own_table: &[&str], measured: bool) -> String {
    let envs = environments(doc);
    if envs.len() < 2 {
        return String::new();
    }
    let others: Vec<&String> = envs.iter().filter(|e| *e != "native").collect();
    let mut h: Vec<String> = vec!["case".into(), "unit".into()];
    h.extend(envs.iter().cloned());
    if envs.iter().any(|e| e == "native") {
        h.extend(others.iter().map(|e| format!("rel. {e}")));
    }
    let hr: Vec<&str> = h.iter().map(String::as_str).collect();
    let mut t = TextTable::new(&hr, 2);
    let mut reasons: Vec<String> = Vec::new();
    let shown = if measured { measured_in_two(doc, own_table) } else { present_in_two(doc, own_table, false) };
    for (bench, params) in shown {
        let of = |e: &str| doc.results.iter().find(|r| r.benchmark == bench && params_label(&r.params) == params && r.env(doc) == e);
        let unit = envs.iter().find_map(|e| of(e).and_then(value)).map(|v| v.1).unwrap_or_default();
        let mut row = vec![format!("{bench} {params}").trim().to_string(), unit];
        for e in &envs {
            row.push(match of(e) {
                Some(r) => match value(r) {
                    Some(v) => fmt(v.0),
                    None => {
                        let why = match measured {
                            // The report that leads with what was measured: a line each, in brief.
                            true => format!("  {} in {e}: {}: {}", status_word(r), r.benchmark, super::brief::reason(r)),
                            false => format!("  {e}: {}", r.reason.as_deref().unwrap_or("failed")),
                        };
                        if !reasons.contains(&why) {
                            reasons.push(why);
                        }
                        status_word(r).into()
                    }
                },
                None => "-".into(),
            });
        }
        fn first_ok(r: Option<&CaseResult>) -> Option<&crate::data::results::Metric> {
            r.filter(|r| r.status == CaseStatus::Ok).and_then(|r| r.metrics.first())
        }
        if let Some(n) = first_ok(of("native")) {
            for e in &others {
                row.push(first_ok(of(e)).map_or("-".into(), |m| {
                    let j = crate::data::compare::judge_in(
                        doc,
                        n,
                        m,
                        &crate::analysis::uncertainty::verdict::Thresholds::default(),
                        crate::data::compare::seed_of(&format!("{bench} {params} {e}")),
                    );
                    format!("{} {}", super::compare::ratio_cell(&j), crate::data::compare::verdict_word(j.verdict))
                }));
            }
        }
        t.row(row);
    }
    if measured && t.rows.is_empty() {
        return String::new();
    }
    let notes = match (reasons.is_empty(), measured) {
        (true, _) => String::new(),
        (false, true) => format!("{}\n", reasons.join("\n")),
        (false, false) => format!("not measured:\n{}\n", reasons.join("\n")),
    };
    let paired = match crate::data::compare::method_in(doc).paired_words() {
        Some(how) => format!("; the environments took turns by round, so rel. pairs their rounds ({how})"),
        None => String::new(),
    };
    let legend = if envs.iter().any(|e| e == "native") {
        format!(
            "; rel. = performance relative to native (above 1 = faster than native) [95% interval], with the verdict \
             of its 95% interval over rounds (faster, slower, same within 5%, unsure), as in compare{paired}"
        )
    } else {
        String::new()
    };
    format!("environments side by side: medians{legend}\n{}{notes}", t.render())
}

/// A cell that has no figure: "n/a" or "failed".
fn status_word(r: &CaseResult) -> &'static str {
    if r.status == CaseStatus::NotApplicable { "n/a" } else { "failed" }
}

/// What to say of environment `e`'s cycles if QEMU emulated its CPU (its
/// facts say accel tcg; qemu-tcg always): they are emulated cycles.
pub fn emulated(doc: &RunDoc, e: &str) -> Option<String> {
    let facts = Facts::read(doc.environment.settings.get(e));
    if facts.counted() {
        return Some("under QEMU's instruction counter: guest instructions, not cycles".to_string());
    }
    facts.emulated(e).then(|| "under QEMU's TCG: emulated cycles".to_string())
}

/// Lines naming the environments whose cycles are emulated, if any, and
/// those whose TSC moved in steps.
pub fn render_emulated(doc: &RunDoc) -> String {
    emulated_notes(doc, true)
}

/// As [`render_emulated`], but for the note on the instruction counter
/// (which the brief header's rounds line and each environment's heading
/// say) and a guest kernel's command line: for the report that leads with
/// what was measured.
pub fn render_emulated_brief(doc: &RunDoc) -> String {
    emulated_notes(doc, false)
}

/// The notes on the environments; `counted_note`: with the one on QEMU's
/// instruction counter and the guest kernels' command lines (`--full`).
fn emulated_notes(doc: &RunDoc, counted_note: bool) -> String {
    let facts = |e: &String| Facts::read(doc.environment.settings.get(e));
    let tcg: Vec<String> = environments(doc).into_iter().filter(|e| facts(e).emulated(e)).collect();
    let counted: Vec<String> = environments(doc).into_iter().filter(|e| facts(e).counted()).collect();
    let mut s = String::new();
    if counted_note && !counted.is_empty() {
        s += &format!(
            "note: {} ran under QEMU's instruction counter (-icount shift=0): their figures are guest instructions per operation \
             (user and kernel together, exact: the same on every run), not cycles; they see no cache miss, TLB refill or the \
             cost of an address-space switch itself, and are comparable with each other only\n",
            counted.join(", ")
        );
    }
    if !tcg.is_empty() {
        s += &format!(
            "note: {} ran under QEMU's TCG emulator: their cycles are emulated cycles (the host's TSC while QEMU translated and ran \
             the guest's code), comparable with each other, not with a CPU's\n",
            tcg.join(", ")
        );
    }
    for e in environments(doc) {
        let f = Facts::read(doc.environment.settings.get(&e));
        if let Some(k) = f.kernel_inside.as_deref().filter(|k| *k != doc.host.kernel_release) {
            let line = f.guest_cmdline.as_deref().filter(|_| counted_note).map(|c| format!(", booted with '{c}'")).unwrap_or_default();
            s += &format!("note: {e} ran the guest kernel {k}{line}\n");
        }
        if let Some(step) = f.tsc_step_cycles {
            s += &format!(
                "note: in {e} the TSC moves in steps of about {step} cycles (its hypervisor emulates it and hands out the last value\n\
                 plus one between updates): batches there lasted at least 50 steps\n"
            );
        }
        s += &render_check(doc, &e);
        s += &render_placement(doc, &e);
    }
    s
}

/// Where environment `e`'s intercepting process ran against the
/// program's (uml, gvisor: `--helper-placement`), and the default.
fn render_placement(doc: &RunDoc, e: &str) -> String {
    let Some(p) = Facts::read(doc.environment.settings.get(e)).helper_placement else {
        return String::new();
    };
    let cpu = |c: Option<u64>| c.map_or("?".to_string(), |c| c.to_string());
    let default = if p.placement == p.default { " (the default)".to_string() } else { format!(" (the default is {})", p.default) };
    format!(
        "note: in {e}, helper={}{default}: {} on CPU {}, {} on CPU {}\n",
        p.placement,
        p.intercepting,
        cpu(p.intercepting_cpu),
        p.program,
        cpu(p.program_cpu)
    )
}

/// The independent few-line program's figures beside oscycles' cells of
/// the same calls in environment `e`, with their ratio (oscycles / check).
fn render_check(doc: &RunDoc, e: &str) -> String {
    let facts = Facts::read(doc.environment.settings.get(e));
    let unit = if facts.counted() { "instructions" } else { "cycles" };
    let Some(c) = facts.independent_check else {
        return String::new();
    };
    if let Some(why) = c.failed {
        return format!("check: in {e} the independent few-line program gave no figures: {why}\n");
    }
    // The cell of `bench` in `e`: the one case, or for IPC the 0-word one
    // between two threads on one CPU.
    let bare = |r: &&CaseResult| {
        let is = |k: &str, v: serde_json::Value| r.params.get(k).is_none_or(|x| *x == v);
        is("words", 0.into()) && is("space", "intra".into()) && is("cores", "same".into())
    };
    let cell = |bench: &str| doc.results.iter().filter(|r| r.benchmark == bench && r.env(doc) == e).find(bare).and_then(value).map(|v| v.0);
    let pair = |what: &str, check: Option<f64>, bench: &str| match (check, cell(bench)) {
        (Some(c), Some(o)) => Some(format!("{what} {c:.0} {unit} (oscycles' {bench} {}: ratio {:.2})", fmt(o), o / c)),
        (Some(c), None) => Some(format!("{what} {c:.0} {unit}")),
        _ => None,
    };
    let parts: Vec<String> = [
        pair("getpid", c.getpid_cycles, "syscall.getpid"),
        pair("yield_now", c.yield_cycles, "syscall.sched_yield"),
        pair("futex one way", c.futex_one_way_cycles, "ipc.futex"),
    ]
    .into_iter()
    .flatten()
    .collect();
    // Its IPC loop's kernel, where the kernel counters counted it, beside the 0-word cell's.
    let kernel = c.kernel_instructions_one_way.map_or(String::new(), |k| {
        let ipc = doc.results.iter().filter(|r| r.family == crate::families::bench::schema::ipc::FAMILY && r.env(doc) == e).filter(|r| bare(r));
        let beside = ipc.filter_map(|r| KERNEL_INSTRUCTIONS.median(r).map(|m| (&r.benchmark, m))).next();
        let beside = beside.map_or(String::new(), |(b, m)| format!(" (oscycles' {b} at 0 words, intra: {m:.1}, {:+.1})", m - k));
        format!("check: in {e}, the independent few-line program's IPC loop, booted the same way and counted by the same plugin: {k:.1} kernel instructions one way{beside}\n")
    });
    if parts.is_empty() {
        return kernel;
    }
    format!(
        "check: in {e}, an independent few-line program booted the same way (rdtsc around 10^5 calls, least of 5 windows):\n  {}\n{kernel}",
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// seL4's and GNU Mach's checks under --kernel-counters: the loop's
    /// kernel instructions one way, beside the 0-word cell's where it has them.
    #[test]
    fn a_checks_counted_kernel_stands_beside_the_bare_cells() {
        let mut doc = crate::data::results::fixture();
        let check = serde_json::json!({"independent_check": {"round_trips": 100000, "kernel_instructions_one_way": 220.04}});
        doc.environment.settings.insert("native".into(), check);
        let text = render_check(&doc, "native");
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("counted by the same plugin: 220.0 kernel instructions one way\n"), "{text}");
        let pipe = doc
            .results
            .iter_mut()
            .find(|r| r.benchmark == "ipc.pipe" && r.status == CaseStatus::Ok && r.environment.as_deref() == Some("native"));
        let pipe = pipe.unwrap();
        pipe.params.insert("space".into(), "intra".into());
        pipe.params.insert("cores".into(), "same".into());
        pipe.params.insert("words".into(), 0.into());
        pipe.metrics.push(KERNEL_INSTRUCTIONS.metric(&[220.5, 220.5]).unwrap());
        let text = render_check(&doc, "native");
        assert!(text.contains("220.0 kernel instructions one way (oscycles' ipc.pipe at 0 words, intra: 220.5, +0.5)"), "{text}");
    }
}
