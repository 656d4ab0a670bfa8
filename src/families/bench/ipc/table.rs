//! The l4-ipc table: the L4 performance page's and the L4Re performance overview's, laid out
//! for Linux. Rows are mechanism x space x cores, columns payload words, cells
//! the median one-way cost in TSC cycles; and the plots of cost by payload.

use crate::data::results::kernel;
use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::families::bench::schema::ipc::{self, Mechanism, Params, Space};
use crate::tables::tabular::figures::{Plot, Plots, lines_of, panels, point};
use crate::tables::tabular::headline::{Headline, Headlines, Pick, extreme, headline};
use crate::tables::tabular::lines::{Lines, Point};
use crate::tables::tabular::noise_note;
use crate::tables::tabular::table::{TextTable, cycles};
use crate::tables::tabular::tables::{Draws, Table};
use std::collections::BTreeSet;

/// The CPUs a row's cases observed ("0/1", "!" where one moved), or "-".
fn cpus_cell(row: &[&(&CaseResult, Params)], moved: &mut bool) -> String {
    row.iter()
        .find_map(|(r, _)| r.placement.as_ref())
        .map(|p| {
            let obs: Vec<String> = p.observed_cpus.iter().map(|c| c.map_or("?".into(), |c| c.to_string())).collect();
            let differs = p.observed_cpus.iter().zip(&p.cpus).any(|(o, c)| *o != Some(*c));
            *moved |= differs;
            format!("{}{}", obs.join("/"), if differs { "!" } else { "" })
        })
        .unwrap_or_else(|| "-".into())
}

/// A payload's cell: the median one-way cost ("?" when uncertain), or
/// n/a / fail with the reason noted.
pub(crate) fn cell(r: Option<&CaseResult>, what: &str, reasons: &mut BTreeSet<String>) -> String {
    cell_of(r, ipc::ONE_WAY, what, reasons)
}

/// A cell of `metric` as [`cell`] lays it out; a measured cell without it
/// (a kernel count where nothing counted) n/a with the reason.
fn cell_of(r: Option<&CaseResult>, metric: &str, what: &str, reasons: &mut BTreeSet<String>) -> String {
    let Some(r) = r else { return "-".into() };
    match (r.status, r.metric(metric)) {
        (CaseStatus::Ok, Some(m)) => {
            format!("{}{}", cycles(m.summary.median), if crate::tables::tabular::table::uncertain(m) { "?" } else { "" })
        }
        (CaseStatus::Ok, None) if metric != ipc::ONE_WAY => {
            reasons.insert(format!("n/a ({what}): {}", kernel_counts_missing(r)));
            "n/a".into()
        }
        (CaseStatus::NotApplicable, _) => {
            reasons.insert(format!("n/a: {}", r.reason.as_deref().unwrap_or("")));
            "n/a".into()
        }
        _ => {
            reasons.insert(format!("fail ({what}): {}", r.reason.as_deref().unwrap_or("")));
            "fail".into()
        }
    }
}

pub fn render(results: &[&CaseResult]) -> String {
    let results_typed: Vec<(&CaseResult, Params)> = crate::tables::tabular::typed(results.iter().copied());
    let words: BTreeSet<u64> = results_typed.iter().map(|(_, p)| p.words).collect();
    let mut headers: Vec<String> = ["mechanism", "space", "cores", "cpus"].map(String::from).to_vec();
    headers.extend(words.iter().map(|w| format!("{w}w")));
    let mut t = TextTable::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 3);
    let mut reasons: BTreeSet<String> = BTreeSet::new();
    let mut moved = false;
    for mech in Mechanism::ALL {
        let id = mech.id();
        for (space, cores) in ipc::SPACES.into_iter().flat_map(|s| ipc::CORES.map(|c| (s, c))) {
            let (sn, cn) = (ipc::space_name(space), ipc::cores_name(cores));
            let row: Vec<&(&CaseResult, Params)> =
                results_typed.iter().filter(|(r, p)| r.benchmark == id && p.space == space && p.cores == cores).collect();
            if row.is_empty() {
                continue;
            }
            let mut cells = vec![mech.name().to_string(), sn.into(), cn.into(), cpus_cell(&row, &mut moved)];
            for &w in &words {
                let r = row.iter().find(|(_, p)| p.words == w).map(|(r, _)| *r);
                cells.push(cell(r, &format!("{} {sn} {cn} {w}w", mech.name()), &mut reasons));
            }
            t.row(cells);
        }
    }
    let mut s = format!(
        "l4-ipc: one-way IPC cost, median {} (round trip / 2, as in the L4 tables), by payload in 64-bit words\n",
        crate::tables::tabular::cost_unit(results.iter().copied()).long
    );
    s += "  intra = two threads of one process, inter = two processes; cpus = client/server CPU as observed\n";
    s += &t.render();
    s += &format!(
        "  ? = the 95% interval of the median is wider than {:.0}% of it (the batches' CV, where a document has no interval); '-' = not measured\n",
        crate::tables::tabular::table::WIDE_INTERVAL * 100.0
    );
    if moved {
        s += "  ! = a side was observed on another CPU than requested\n";
    }
    for r in reasons {
        s += &format!("  {r}\n");
    }
    s += &noise_note(results, ipc::ONE_WAY);
    s
}

/// Why a measured cell has no kernel counts: what the host found, or that
/// none were asked for.
pub(crate) fn kernel_counts_missing(r: &CaseResult) -> String {
    r.details.get(kernel::MISSING).and_then(|v| v.as_str()).map_or_else(
        || "not counted (only an emulated guest under --accel icount with --kernel-counters counts its kernel)".to_string(),
        |why| why.chars().take(300).collect(),
    )
}

/// A form and its kernel-instructions variant (empty where nothing was
/// counted), a blank line between.
fn joined(form: String, kernel: String) -> String {
    if kernel.is_empty() || form.is_empty() { form + &kernel } else { format!("{form}\n{kernel}") }
}

/// The l4-ipc table, of the cases no published evaluation's table owns.
pub struct IpcTable;

pub(crate) fn of<'a>(doc: &'a RunDoc, family: &str) -> Vec<&'a CaseResult> {
    doc.results.iter().filter(|r| r.family == family).collect()
}

impl Table for IpcTable {
    fn families(&self) -> &'static [&'static str] {
        &[ipc::FAMILY]
    }
    fn draws(&self) -> Draws {
        Draws::NotOwned
    }
    fn render(&self, doc: &RunDoc) -> String {
        let ipc = of(doc, ipc::FAMILY);
        if ipc.is_empty() {
            return String::new();
        }
        let counted = [render_l4_page_form_kernel(&[(&doc.environment.name, doc)]), super::kernel_table::render_where(doc)];
        counted.iter().filter(|t| !t.is_empty()).fold(render(&ipc), |s, t| format!("{s}\n{t}"))
    }
    fn render_across(&self, envs: &[(&str, &RunDoc)]) -> String {
        joined(render_l4_page_form(envs), render_l4_page_form_kernel(envs))
    }
    /// The page's form, and in the page's own quantity where a plugin
    /// counted the kernel.
    fn render_form(&self, envs: &[(&str, &RunDoc)]) -> String {
        // Where a QEMU plugin counted the kernels: the page's own quantity, and where the instructions go.
        let mut all = envs.first().map(|(_, d)| (*d).clone());
        if let Some(a) = all.as_mut() {
            a.results = envs.iter().flat_map(|(_, d)| d.results.iter().cloned()).collect();
        }
        let kernel = joined(render_l4_page_form_kernel(envs), all.as_ref().map_or(String::new(), super::kernel_table::render_where));
        joined(l4_page_form(envs, 1), kernel)
    }
    fn in_form(&self, r: &CaseResult) -> bool {
        FORM.iter().any(|m| m.id() == r.benchmark) && r.params_as::<Params>().is_some_and(|p| p.cores == ipc::Cores::Same)
    }
}

/// The mechanisms the L4 performance page's form sets side by side: Linux's
/// pipe (lmbench's lat_pipe, the page's Linux figure) and futex (its cheapest
/// blocking hand-over), an L4 kernel's own call, and the first-generation
/// microkernel's message that L4 was measured against (GNU Mach's mach_msg).
const FORM: [Mechanism; 4] = [Mechanism::Pipe, Mechanism::Futex, Mechanism::Sel4Call, Mechanism::MachMsg];

/// The L4 performance page's form, a column per environment and mechanism
/// it measured: one-way cost by payload on one core, in and between
/// address spaces. Each column says its unit (guest instructions under
/// QEMU's instruction counter, TSC cycles otherwise): never one axis; and
/// what its payload counts (64-bit words, or 32-bit message registers
/// where a case says so: seL4 on ARM, as the page's ARM table). Under a
/// column in message registers, the page's own ARM figures as the
/// reference they are.
pub fn render_l4_page_form(envs: &[(&str, &RunDoc)]) -> String {
    l4_page_form(envs, 2)
}

/// The L4 performance page's form where it has at least `min` columns.
fn l4_page_form(envs: &[(&str, &RunDoc)], min: usize) -> String {
    let head = "as in the L4 performance page: one-way IPC by payload (64-bit words; seL4 on ia32 carries a word in two message registers), both sides on one core, a column per environment and mechanism; instr = guest instructions (QEMU's instruction counter), cyc = TSC cycles: not one axis\n";
    page_form(envs, ipc::ONE_WAY, min, head)
}

/// The L4 performance page's own quantity, where a QEMU plugin counted the
/// guests' kernels (`--kernel-counters`): the form in kernel instructions
/// ("in the kernel, entry and exit included"), a column per emulated
/// environment and mechanism (one without the counts n/a, saying why).
pub fn render_l4_page_form_kernel(envs: &[(&str, &RunDoc)]) -> String {
    let counted = envs.iter().any(|(_, d)| of(d, ipc::FAMILY).iter().any(|r| kernel::KERNEL_INSTRUCTIONS.of(r).is_some()));
    if !counted {
        return String::new();
    }
    let head = "as in the L4 performance page, in the page's own quantity: one-way IPC by payload in kernel instructions (at the kernel's addresses, entry and exit included; oscycles' loop and the library's path left out), both sides on one core; counted by oscycles' QEMU plugin (--kernel-counters), exact\n";
    page_form(envs, kernel::KERNEL_INSTRUCTIONS.name, 1, head)
}

/// The L4 performance page's form of `metric`, when it has `min_columns`
/// columns or more: for the kernel's counts, only the columns counted in
/// guest instructions.
fn page_form(envs: &[(&str, &RunDoc)], metric: &str, min_columns: usize, head: &str) -> String {
    let mut columns: Vec<(String, Vec<(&CaseResult, Params)>)> = Vec::new();
    for (name, doc) in envs {
        let typed: Vec<(&CaseResult, Params)> = crate::tables::tabular::typed(of(doc, ipc::FAMILY));
        for mech in FORM {
            let cases: Vec<(&CaseResult, Params)> =
                typed.iter().filter(|(r, p)| r.benchmark == mech.id() && p.cores == ipc::Cores::Same).cloned().collect();
            let Some(unit) = cases.iter().find_map(|(r, _)| r.metric(ipc::ONE_WAY).map(|m| m.unit.clone())) else { continue };
            let counted = unit == crate::data::results::UNIT_INSTRUCTIONS;
            if metric != ipc::ONE_WAY && !counted {
                continue;
            }
            let unit = if metric != ipc::ONE_WAY {
                "kernel instr"
            } else if counted {
                "instr"
            } else {
                "cyc"
            };
            let payload = if cases.iter().any(|(r, _)| counts_registers(r)) { ", MRs" } else { "" };
            columns.push((format!("{name} {} ({unit}{payload})", mech.name()), cases));
        }
    }
    if columns.len() < min_columns.max(1) {
        return String::new();
    }
    let mut headers = vec!["space".to_string(), "words".to_string()];
    headers.extend(columns.iter().map(|c| c.0.clone()));
    let mut t = TextTable::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 2);
    let mut reasons: BTreeSet<String> = BTreeSet::new();
    let words: BTreeSet<u64> = columns.iter().flat_map(|c| c.1.iter().map(|(_, p)| p.words)).collect();
    for space in ipc::SPACES {
        for &w in &words {
            let mut cells = vec![ipc::space_name(space).to_string(), w.to_string()];
            for (name, cases) in &columns {
                let r = cases.iter().find(|(_, p)| p.space == space && p.words == w).map(|(r, _)| *r);
                cells.push(cell_of(r, metric, &format!("{name} {w}w"), &mut reasons));
            }
            t.row(cells);
        }
    }
    let registers = columns.iter().any(|c| c.0.ends_with(", MRs)"));
    let arm = envs.iter().any(|(name, _)| crate::tables::tabular::is_arm_linux(name)) && columns.iter().any(|c| is_arm_column(&c.0));
    let mut s = head.to_string();
    if registers {
        s += "  MRs: the column's words are 32-bit message registers, as the page's ARM table counts them (seL4 on ARM: MR0..3 in machine registers, so 0..4 take the fastpath)\n";
    }
    s += &t.render();
    for r in reasons {
        s += &format!("  {r}\n");
    }
    if registers || arm {
        s += &page_arm_reference(arm);
    }
    s
}

/// Whether a column of the form (named "<environment> <mechanism> (...)") is Linux on ARM's.
fn is_arm_column(name: &str) -> bool {
    name.split(' ').next().is_some_and(crate::tables::tabular::is_arm_linux)
}

/// Whether an ipc case's `words` are 32-bit message registers.
fn counts_registers(r: &CaseResult) -> bool {
    r.details.get(ipc::PAYLOAD_UNIT).and_then(serde_json::Value::as_str) == Some(ipc::MESSAGE_REGISTERS)
}

/// The L4 performance page's ARM table: processor, then one-way cycles at
/// 0..4, 8 and 16 message registers.
const PAGE_ARM: [(&str, [u32; 3]); 2] =
    [("XScale PXA255 (ARMv5) 400 MHz", [151, 188, 228]), ("StrongARM SA1100 (ARMv4) 206 MHz", [131, 141, 161])];

/// The page's ARM figures, quoted as a reference: CPU cycles on real
/// hardware of another kernel (NICTA::Pistachio-embedded), not a column;
/// beside a column of Linux on ARM (`linux`), also the page's Linux pipe on
/// the XScale (its Wombat table's lat_pipe).
fn page_arm_reference(linux: bool) -> String {
    let mut s = format!(
        "  reference, not a column: {} (NICTA::Pistachio-embedded, ARM with 5 physical message registers, between address spaces, fast address-space switching on; CPU cycles on real hardware, another kernel):\n",
        crate::base::sources::Source::L4Performance.short()
    );
    for (cpu, [fast, eight, sixteen]) in PAGE_ARM {
        s += &format!("    {cpu}: 0..4 MRs {fast}, 8 MRs {eight}, 16 MRs {sixteen} cycles\n");
    }
    if linux {
        s += "    and native Linux on an XScale PXA255 at 200 MHz (its Wombat table): lat_pipe 378.4 us a round trip (real time, not guest instructions)\n";
    }
    s
}

/// One-way IPC cost against payload, one plot per space and cores, a series per mechanism.
pub struct IpcPlots;

impl Plots for IpcPlots {
    fn lines(&self, doc: &RunDoc) -> Vec<Lines> {
        let mut lines = Vec::new();
        for cores in ipc::CORES {
            for space in ipc::SPACES {
                let (sn, cn) = (ipc::space_name(space), ipc::cores_name(cores));
                let title = format!("One-way IPC by payload ({sn}-process, {cn} core)");
                lines.extend(lines_of::<ipc::Params>(
                    doc,
                    Plot { title, x_desc: "payload (64-bit words)", y_desc: "one-way cost (TSC cycles)", log: (false, true) },
                    |r, p| r.family == ipc::FAMILY && p.space == space && p.cores == cores,
                    |r, _| ipc::name_of(&r.benchmark).into(),
                    |r, p| point(p.words as f64, r, ipc::ONE_WAY),
                ));
            }
        }
        lines
    }
}

/// Whether `r` is an ipc case whose parameters `pred` accepts.
fn ipc_case(r: &CaseResult, pred: impl Fn(&Params) -> bool) -> bool {
    r.family == ipc::FAMILY && r.params_as::<Params>().is_some_and(|p| pred(&p))
}

/// The summary's headlines: per cores, the best one-way IPC at 0 words and the pipe's.
pub struct IpcHeadlines;

impl Headlines for IpcHeadlines {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        let mut out = Vec::new();
        let pipe = Mechanism::Pipe.id();
        for cores in ipc::CORES {
            let ipc0 = || pick.measured().filter(move |r| ipc_case(r, |p| p.words == 0 && p.cores == cores));
            let best = extreme(ipc0(), ipc::ONE_WAY, false);
            let cn = ipc::cores_name(cores);
            if let Some((r, _)) = best {
                let space = r.params_as::<Params>().map_or("?", |p| ipc::space_name(p.space));
                out.extend(headline(format!("one-way IPC, {cn}-core, best ({}, {space})", ipc::name_of(&r.benchmark)), best));
            }
            let pipe_inter =
                extreme(ipc0().filter(|r| r.benchmark == pipe && ipc_case(r, |p| p.space == Space::Inter)), ipc::ONE_WAY, false)
                    .or_else(|| extreme(ipc0().filter(|r| r.benchmark == pipe), ipc::ONE_WAY, false));
            out.extend(headline(format!("one-way IPC, {cn}-core, pipe"), pipe_inter));
        }
        out
    }
}

/// The L4 performance page's form across environments: one-way IPC by
/// payload, a line per environment (its cheapest mechanism at the smallest
/// payload, named), a plot per address-space and core placement and per
/// clock (CPU, emulated and instruction-counted costs never share axes).
pub struct IpcByEnvironment;

impl Plots for IpcByEnvironment {
    fn lines(&self, doc: &RunDoc) -> Vec<Lines> {
        let mut out = Vec::new();
        for (clock, envs) in panels(doc) {
            for space in ipc::SPACES {
                for cores in ipc::CORES {
                    let series: Vec<(String, Vec<Point>)> = envs.iter().filter_map(|e| cheapest_line(doc, e, space, cores)).collect();
                    if series.is_empty() {
                        continue;
                    }
                    let (sn, cn) = (ipc::space_name(space), ipc::cores_name(cores));
                    out.push(Lines {
                        title: format!("One-way IPC by payload per environment ({sn}, {cn} core; {})", clock.panel()),
                        x_desc: "payload (64-bit words)".into(),
                        y_desc: format!("one-way cost ({})", clock.cost_unit()),
                        log_x: false,
                        log_y: true,
                        caption: format!(
                            "host {} ({}), environments {}, run {}; each line the environment's cheapest mechanism at its smallest payload",
                            doc.host.hostname,
                            doc.host.cpu_model,
                            envs.join(", "),
                            doc.id
                        ),
                        series,
                        y_range: None,
                    });
                }
            }
        }
        out
    }
    fn across_environments(&self) -> bool {
        true
    }
}

/// Environment `e`'s line of one placement: its mechanism with the lowest
/// one-way cost at the smallest payload measured, over two payloads or more.
fn cheapest_line(doc: &RunDoc, e: &str, space: Space, cores: ipc::Cores) -> Option<(String, Vec<Point>)> {
    let cells: Vec<(&CaseResult, Params)> = crate::tables::tabular::typed::<Params>(
        doc.results.iter().filter(|r| r.env(doc) == e && r.family == ipc::FAMILY && r.status == CaseStatus::Ok),
    )
    .into_iter()
    .filter(|(r, p)| p.space == space && p.cores == cores && r.metric(ipc::ONE_WAY).is_some())
    .collect();
    let mut mechanisms: Vec<&str> = crate::tables::tabular::distinct(cells.iter().map(|(r, _)| r.benchmark.as_str()));
    mechanisms.retain(|m| cells.iter().filter(|(r, _)| r.benchmark == *m).count() >= 2);
    let first = |m: &str| {
        let (r, _) = cells.iter().filter(|(r, _)| r.benchmark == m).min_by_key(|(_, p)| p.words)?;
        Some(r.metric(ipc::ONE_WAY)?.summary.median)
    };
    let best = mechanisms.into_iter().filter_map(|m| Some((m, first(m)?))).min_by(|a, b| a.1.total_cmp(&b.1))?.0;
    let mut pts: Vec<Point> =
        cells.iter().filter(|(r, _)| r.benchmark == best).filter_map(|(r, p)| point(p.words as f64, r, ipc::ONE_WAY)).collect();
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    Some((format!("{e} ({})", ipc::name_of(best)), pts))
}

#[cfg(test)]
mod form_tests {
    use super::*;

    /// The fixture's pipe as one environment's column (TSC cycles), and the
    /// same cases as another's sel4-call in guest instructions: the form has
    /// both columns, each with its unit, and a row per space and payload.
    #[test]
    fn the_l4_page_form_sets_environments_side_by_side_each_with_its_unit() {
        let linux = crate::data::results::fixture();
        let mut sel4 = linux.clone();
        sel4.results.retain(|r| r.benchmark == Mechanism::Pipe.id());
        for r in &mut sel4.results {
            r.benchmark = Mechanism::Sel4Call.id();
            for m in &mut r.metrics {
                (m.unit, m.ns) = (crate::data::results::UNIT_INSTRUCTIONS.into(), None);
            }
        }
        let text = render_l4_page_form(&[("qemu-tcg", &linux), ("sel4", &sel4)]);
        assert!(text.contains("qemu-tcg pipe (cyc)") && text.contains("sel4 sel4-call (instr)"), "{text}");
        assert!(text.lines().any(|l| l.trim_start().starts_with("intra") && l.contains(" 0 ")), "{text}");
        assert!(!text.contains("MRs") && !text.contains("PXA255"), "no column in registers, no reference: {text}");
        let mut arm = sel4.clone();
        for r in &mut arm.results {
            r.details.insert(ipc::PAYLOAD_UNIT.into(), ipc::MESSAGE_REGISTERS.into());
        }
        let text = render_l4_page_form(&[("sel4", &sel4), ("sel4-arm", &arm)]);
        assert!(text.contains("sel4 sel4-call (instr)") && text.contains("sel4-arm sel4-call (instr, MRs)"), "{text}");
        assert!(text.contains("XScale PXA255 (ARMv5) 400 MHz: 0..4 MRs 151, 8 MRs 188, 16 MRs 228 cycles"), "{text}");
        assert!(text.contains("reference, not a column") && text.contains("another kernel"), "{text}");
        let text = render_l4_page_form(&[("qemu-tcg", &linux), ("qemu-arm64", &sel4)]);
        assert!(text.contains("qemu-arm64 sel4-call (instr)") && text.contains("XScale PXA255 (ARMv5) 400 MHz"), "{text}");
        assert!(text.contains("native Linux on an XScale PXA255 at 200 MHz (its Wombat table): lat_pipe 378.4 us"), "{text}");
        let mut pipe_only = linux.clone();
        pipe_only.results.retain(|r| r.benchmark == Mechanism::Pipe.id());
        assert!(render_l4_page_form(&[("qemu-tcg", &pipe_only)]).is_empty(), "one column: no side by side");
    }

    /// Where the plugin counted seL4 on ARM (in qemu-system-arm), the
    /// kernel-instructions form has its column by message registers beside
    /// ia32's, and the page's ARM figures under it; a column not counted
    /// is n/a with the reason.
    #[test]
    fn the_kernel_instructions_form_lays_the_arm_column_out_by_message_registers() {
        let mut sel4 = crate::data::results::fixture();
        sel4.results.retain(|r| r.benchmark == Mechanism::Pipe.id());
        for r in &mut sel4.results {
            r.benchmark = Mechanism::Sel4Call.id();
            for m in &mut r.metrics {
                (m.unit, m.ns) = (crate::data::results::UNIT_INSTRUCTIONS.into(), None);
            }
        }
        let mut arm = sel4.clone();
        for r in &mut arm.results {
            r.details.insert(ipc::PAYLOAD_UNIT.into(), ipc::MESSAGE_REGISTERS.into());
            if r.status == CaseStatus::Ok {
                r.metrics.push(kernel::KERNEL_INSTRUCTIONS.metric(&[142.0]).unwrap());
            }
        }
        let text = render_l4_page_form_kernel(&[("sel4", &sel4), ("sel4-arm", &arm)]);
        assert!(text.contains("sel4-arm sel4-call (kernel instr, MRs)") && text.contains("sel4 sel4-call (kernel instr)"), "{text}");
        assert!(text.lines().any(|l| l.starts_with("inter") && l.ends_with(" 142")), "{text}");
        assert!(text.contains("MRs: the column's words are 32-bit message registers"), "{text}");
        assert!(text.contains("n/a (sel4 sel4-call") && text.contains("XScale PXA255"), "{text}");
    }
}
