//! The L4Re performance overview's table (ipcbench): intra- and inter-address-space IPC
//! beside the syscall, from the ipc and syscall families.

use crate::base::sources::Source;
use crate::data::results::kernel;
use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::families::bench::ipc::table::of;
use crate::families::bench::schema::ipc::{self, Cores, Mechanism, Params, Space};
use crate::families::bench::schema::syscall;
use crate::tables::tabular::table::{TextTable, cycles};
use crate::tables::tabular::tables::{Draws, Table};

/// The microkernels whose cheapest kernel entry is not Linux's getpid, each
/// known by its own IPC mechanism: what its `syscall.null` and
/// `syscall.getpid` rows measure (the guests' programs say so in full).
const KERNELS: [(Mechanism, &str, &str); 2] =
    [(Mechanism::Sel4Call, "seL4_Reply", "getpid"), (Mechanism::MachMsg, "invalid trap", "mach_task_self")];

/// The syscall column's call of one kernel: its cheapest entry measured,
/// which call that is, and the other call measured beside it (for a note).
struct NullCall<'a> {
    case: Option<&'a CaseResult>,
    /// Which call the cell is; None: Linux's getpid, the column's own.
    call: Option<&'static str>,
    other: Option<(&'static str, &'a CaseResult)>,
}

/// The kernel's cheapest entry: on Linux getpid (the column's call); on a
/// microkernel the cheaper of its null and getpid rows, named.
fn null_call<'a>(ipc_results: &[&CaseResult], syscall_results: &[&'a CaseResult]) -> NullCall<'a> {
    let of = |name: &str| syscall_results.iter().find(|r| r.benchmark == syscall::id(name) && r.status == CaseStatus::Ok).copied();
    let Some((_, null, getpid)) =
        KERNELS.into_iter().find(|(m, ..)| ipc_results.iter().any(|r| r.benchmark == m.id() && r.status == CaseStatus::Ok))
    else {
        return NullCall { case: of(syscall::GETPID), call: None, other: None };
    };
    let median = |r: &CaseResult| r.metric(syscall::PER_CALL).map_or(f64::INFINITY, |m| m.summary.median);
    let mut measured: Vec<(&'static str, &CaseResult)> =
        [(null, of(syscall::NULL)), (getpid, of(syscall::GETPID))].into_iter().filter_map(|(c, r)| Some((c, r?))).collect();
    measured.sort_by(|a, b| median(a.1).total_cmp(&median(b.1)));
    let mut it = measured.into_iter();
    match it.next() {
        Some((call, case)) => NullCall { case: Some(case), call: Some(call), other: it.next() },
        None => NullCall { case: None, call: Some(null), other: None },
    }
}

/// A cell of the page: TSC cycles, or where the hardware counted (`hw`)
/// the page's three counters.
fn median_cell(r: Option<&CaseResult>, metric: &str, hw: bool) -> String {
    let Some((r, m)) = r.filter(|r| r.status == CaseStatus::Ok).and_then(|r| Some((r, r.metric(metric)?))) else {
        return "-".to_string();
    };
    // Where a QEMU plugin counted the kernel: kernel / user / total, per
    // operation as the cell counts them (already one way).
    // Under Xen, the guest kernel's + the hypervisor's.
    if let (Some(k), Some(u)) = (kernel::KERNEL_INSTRUCTIONS.median(r), kernel::USER_INSTRUCTIONS.median(r)) {
        let k = match kernel::HYPERVISOR_INSTRUCTIONS.median(r) {
            Some(h) => format!("{} + {} Xen", cycles(k), cycles(h)),
            None => cycles(k),
        };
        return format!("{k} / {} / {}", cycles(u), cycles(m.summary.median));
    }
    // The counts are per operation of the case: a round trip for IPC, whose one-way figure is half.
    let per = if metric == ipc::ONE_WAY { 0.5 } else { 1.0 };
    match crate::tables::tabular::core_and_instructions(r, per).filter(|_| hw) {
        Some((core, instr)) => format!("{} / {} / {}", cycles(m.summary.median), cycles(core), cycles(instr)),
        None => cycles(m.summary.median),
    }
}

/// The syscall cell: the call's figure, named where it is not getpid
/// (`named`: always), and the note on the other call measured.
fn null_cell(n: &NullCall, hw: bool, named: bool) -> (String, Option<String>) {
    let v = median_cell(n.case, syscall::PER_CALL, hw);
    let cell = match n.call {
        Some(call) => format!("{v} ({call})"),
        None if named && v != "-" => format!("{v} (getpid)"),
        None => v,
    };
    let note = n.other.map(|(call, r)| format!("{call} {} (its other call measured)", median_cell(Some(r), syscall::PER_CALL, hw)));
    (cell, note)
}

/// The rows of one kernel: per mechanism measured, one IPC at 0 words on
/// one core, intra and inter address space.
fn ipc_rows(ipc_results: &[&CaseResult], hw: bool) -> Vec<(String, String, String)> {
    let results_typed: Vec<(&CaseResult, Params)> = crate::tables::tabular::typed(ipc_results.iter().copied());
    let mut rows = Vec::new();
    for mech in Mechanism::ALL {
        let id = mech.id();
        let cell = |space: Space| {
            let want = Params { words: 0, space, cores: Cores::Same };
            median_cell(results_typed.iter().find(|(r, p)| r.benchmark == id && *p == want).map(|(r, _)| *r), ipc::ONE_WAY, hw)
        };
        let (intra, inter) = (cell(Space::Intra), cell(Space::Inter));
        if intra != "-" || inter != "-" {
            rows.push((mech.name().to_string(), intra, inter));
        }
    }
    rows
}

/// What the cells count, for the heading.
fn counters_words(hw: bool, counted: crate::tables::tabular::CostUnit, split: bool) -> String {
    if split {
        "kernel / user / total guest instructions, medians (the kernel's part counted by oscycles' QEMU plugin, --kernel-counters: at the kernel's addresses, entry and exit included; under Xen the guest kernel's + the hypervisor's; a cell without the split was not counted)".to_string()
    } else if hw {
        "TSC cycles / unhalted core cycles / instructions, medians (the page's three counters)".to_string()
    } else if counted.short == "instr" {
        "median guest instructions (QEMU's instruction counter: the page's third counter, instructions, exact; no cycles under it)"
            .to_string()
    } else {
        format!("median {}", counted.long)
    }
}

/// The L4Re performance overview's layout: per mechanism, one IPC at 0 words on one core, intra
/// and inter address space, beside the null system call (on a microkernel its cheapest entry, named).
pub fn render_l4re_overview(ipc_results: &[&CaseResult], syscall_results: &[&CaseResult]) -> String {
    // Where the hardware counted, each figure in the page's three counters:
    // TSC cycles / unhalted core cycles / instructions.
    let hw = crate::tables::tabular::any_hardware(ipc_results) || crate::tables::tabular::any_hardware(syscall_results);
    let null = null_call(ipc_results, syscall_results);
    let (sys, other) = null_cell(&null, hw, false);
    // Counted cells: the page's instructions column, under its name.
    let counted = crate::tables::tabular::cost_unit(ipc_results.iter().chain(syscall_results).copied());
    let instr = if counted.short == "instr" { " instr" } else { "" };
    let column = if null.call.is_some() { "null syscall" } else { "syscall (getpid)" };
    let heads = [format!("IPC intra{instr}"), format!("IPC inter{instr}"), format!("{column}{instr}")];
    let mut t = TextTable::new(&["mechanism", &heads[0], &heads[1], &heads[2]], 1);
    for (mech, intra, inter) in ipc_rows(ipc_results, hw) {
        t.row(vec![mech, intra, inter, sys.clone()]);
    }
    if t.rows.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "as in {}: one IPC (0 words, both sides on one core) and a null syscall, {}\n",
        Source::L4ReOverview.short(),
        counters_words(hw, counted, ipc_results.iter().chain(syscall_results).any(|r| kernel::KERNEL_INSTRUCTIONS.of(r).is_some()))
    );
    s += &t.render();
    if let Some(o) = other {
        s += &format!("  null syscall: the kernel's cheapest entry; {o}\n");
    }
    s
}

/// The L4Re performance overview's layout over several environments: a row
/// per environment and mechanism, each in its environment's unit, the null
/// syscall cell naming its call (each kernel's cheapest entry).
pub fn render_l4re_across(envs: &[(&str, &RunDoc)]) -> String {
    let mut t = TextTable::new(&["environment", "mechanism", "unit", "IPC intra", "IPC inter", "null syscall"], 3);
    let mut notes: Vec<String> = Vec::new();
    let mut any_hw = false;
    for (name, doc) in envs {
        let (ipc_results, sys) = (of(doc, ipc::FAMILY), of(doc, syscall::FAMILY));
        if ipc_results.is_empty() || sys.is_empty() {
            continue;
        }
        let hw = crate::tables::tabular::any_hardware(&ipc_results) || crate::tables::tabular::any_hardware(&sys);
        any_hw |= hw;
        let (cell, other) = null_cell(&null_call(&ipc_results, &sys), hw, true);
        let unit = crate::tables::tabular::cost_unit(ipc_results.iter().chain(&sys).copied()).short;
        for (mech, intra, inter) in ipc_rows(&ipc_results, hw) {
            t.row(vec![name.to_string(), mech, unit.to_string(), intra, inter, cell.clone()]);
        }
        notes.extend(other.map(|o| format!("  {name}: {o}")));
    }
    if t.rows.is_empty() {
        return String::new();
    }
    let three = if any_hw { " (where the hardware counted: TSC cycles / unhalted core cycles / instructions)" } else { "" };
    let mut s = format!(
        "as in {}: one IPC (0 words, one core) beside a null syscall (each kernel's cheapest entry), medians{three}; \
         instr = guest instructions, cyc = TSC cycles\n",
        Source::L4ReOverview.short()
    );
    s += &t.render();
    for n in notes {
        s += &format!("{n}\n");
    }
    s
}

/// The L4Re performance overview's layout, where a run has IPC and syscall cases.
pub struct L4ReOverview;

impl Table for L4ReOverview {
    fn families(&self) -> &'static [&'static str] {
        &[ipc::FAMILY, syscall::FAMILY]
    }
    fn draws(&self) -> Draws {
        Draws::NotOwned
    }
    fn render(&self, doc: &RunDoc) -> String {
        let (ipc, sys) = (of(doc, ipc::FAMILY), of(doc, syscall::FAMILY));
        if ipc.is_empty() || sys.is_empty() { String::new() } else { render_l4re_overview(&ipc, &sys) }
    }
    fn render_form(&self, envs: &[(&str, &RunDoc)]) -> String {
        match envs {
            [(_, doc)] => self.render(doc),
            _ => render_l4re_across(envs),
        }
    }
    fn is_form(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::stats::Summary;
    use crate::measure::counters::{Counts, EventCounts};

    /// The fixture's same-core inter-process pipe (0 words) and getpid, with
    /// hardware counts per operation (a round trip for the pipe) where `hw`.
    fn cases(hw: bool) -> (CaseResult, CaseResult) {
        let doc = crate::data::results::fixture();
        let want = Params { words: 0, space: Space::Inter, cores: Cores::Same };
        let typed: Vec<(&CaseResult, Params)> = crate::tables::tabular::typed(doc.results.iter());
        let mut pipe = typed.into_iter().find(|(r, p)| r.benchmark == Mechanism::Pipe.id() && *p == want).unwrap().0.clone();
        let mut getpid = doc.results.iter().find(|r| r.benchmark == syscall::id(syscall::GETPID)).unwrap().clone();
        let counts = |core: f64, instr: f64| {
            let mut c = Counts::none("");
            c.reason = None;
            for (name, v) in [("core_cycles", core), ("instructions", instr)] {
                c.events.insert(name.into(), EventCounts { summary: Summary::of(&[v]).unwrap(), samples: vec![vec![v]] });
            }
            c
        };
        if hw {
            pipe.counters = Some(counts(9000.0, 3000.0));
            getpid.counters = Some(counts(150.0, 50.0));
        }
        (pipe, getpid)
    }

    #[test]
    fn with_hardware_counts_the_overview_takes_the_l4re_pages_three_counters() {
        let (pipe, getpid) = cases(true);
        let text = render_l4re_overview(&[&pipe], &[&getpid]);
        assert!(text.contains("TSC cycles / unhalted core cycles / instructions"), "{text}");
        let one_way = cycles(pipe.metric(ipc::ONE_WAY).unwrap().summary.median);
        // One way is half the round trip the counts are of.
        assert!(text.contains(&format!("{one_way} / 4500 / 1500")), "{text}");
        assert!(text.contains(" / 150 / 50"), "{text}");
        let table = crate::families::bench::syscall::table::render(&[&getpid], 1);
        assert!(table.contains("core cyc") && table.contains("instr"), "{table}");
        let (pipe, getpid) = cases(false);
        let plain = render_l4re_overview(&[&pipe], &[&getpid]);
        assert!(plain.contains("median TSC cycles") && !plain.contains(" / "), "{plain}");
        assert!(!crate::families::bench::syscall::table::render(&[&getpid], 1).contains("core cyc"));
    }

    #[test]
    fn a_counted_kernel_is_split_kernel_user_total() {
        let (mut pipe, mut getpid) = cases(false);
        for (r, k) in [(&mut pipe, 6000.0), (&mut getpid, 300.0)] {
            let total = r.metrics[0].summary.median;
            r.metrics.push(kernel::KERNEL_INSTRUCTIONS.metric(&[k]).unwrap());
            r.metrics.push(kernel::USER_INSTRUCTIONS.metric(&[total - k]).unwrap());
        }
        let text = render_l4re_overview(&[&pipe], &[&getpid]);
        assert!(text.contains("kernel / user / total"), "{text}");
        assert!(text.contains("6000 / ") && text.contains("300 / "), "{text}");
        // Under Xen: the hypervisor's beside the guest kernel's.
        getpid.metrics.push(kernel::HYPERVISOR_INSTRUCTIONS.metric(&[700.0]).unwrap());
        let text = render_l4re_overview(&[&pipe], &[&getpid]);
        assert!(text.contains("300 + 700 Xen / "), "{text}");
    }
}
