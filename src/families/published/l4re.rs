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

/// The L4Re performance overview's layout: per mechanism, one IPC at 0 words on one core, intra
/// and inter address space, beside the null system call.
pub fn render_l4re_overview(ipc_results: &[&CaseResult], syscall_results: &[&CaseResult]) -> String {
    // Where the hardware counted, each figure in the page's three counters:
    // TSC cycles / unhalted core cycles / instructions.
    let hw = crate::tables::tabular::any_hardware(ipc_results) || crate::tables::tabular::any_hardware(syscall_results);
    let median = |r: Option<&CaseResult>, metric: &str| {
        let Some((r, m)) = r.filter(|r| r.status == CaseStatus::Ok).and_then(|r| Some((r, r.metric(metric)?))) else {
            return "-".to_string();
        };
        // Where a QEMU plugin counted the kernel: kernel / user / total, per
        // operation as the cell counts them (already one way).
        if let (Some(k), Some(u)) = (kernel::KERNEL_INSTRUCTIONS.median(r), kernel::USER_INSTRUCTIONS.median(r)) {
            return format!("{} / {} / {}", cycles(k), cycles(u), cycles(m.summary.median));
        }
        // The counts are per operation of the case: a round trip for IPC, whose one-way figure is half.
        let per = if metric == ipc::ONE_WAY { 0.5 } else { 1.0 };
        match crate::tables::tabular::core_and_instructions(r, per).filter(|_| hw) {
            Some((core, instr)) => format!("{} / {} / {}", cycles(m.summary.median), cycles(core), cycles(instr)),
            None => cycles(m.summary.median),
        }
    };
    // getpid; where a kernel has none (seL4), its cheapest entry (syscall.null), said so.
    let of = |name: &str| syscall_results.iter().find(|r| r.benchmark == syscall::id(name) && r.status == CaseStatus::Ok).copied();
    let getpid = match (of(syscall::GETPID), of(syscall::NULL)) {
        (None, Some(null)) if ipc_results.iter().any(|r| r.benchmark == Mechanism::Sel4Call.id()) => {
            format!("{} (seL4_Reply)", median(Some(null), syscall::PER_CALL))
        }
        (getpid, _) => median(getpid, syscall::PER_CALL),
    };
    let results_typed: Vec<(&CaseResult, Params)> = crate::tables::tabular::typed(ipc_results.iter().copied());
    // Counted cells: the page's instructions column, under its name.
    let instr =
        if crate::tables::tabular::cost_unit(ipc_results.iter().chain(syscall_results).copied()).short == "instr" { " instr" } else { "" };
    let heads = [format!("IPC intra{instr}"), format!("IPC inter{instr}"), format!("syscall (getpid){instr}")];
    let mut t = TextTable::new(&["mechanism", &heads[0], &heads[1], &heads[2]], 1);
    for mech in Mechanism::ALL {
        let id = mech.id();
        let cell = |space: Space| {
            let want = Params { words: 0, space, cores: Cores::Same };
            median(results_typed.iter().find(|(r, p)| r.benchmark == id && *p == want).map(|(r, _)| *r), ipc::ONE_WAY)
        };
        let (intra, inter) = (cell(Space::Intra), cell(Space::Inter));
        if intra != "-" || inter != "-" {
            t.row(vec![mech.name().into(), intra, inter, getpid.clone()]);
        }
    }
    if t.rows.is_empty() {
        return String::new();
    }
    let counted = crate::tables::tabular::cost_unit(ipc_results.iter().chain(syscall_results).copied());
    let split = ipc_results.iter().chain(syscall_results).any(|r| kernel::KERNEL_INSTRUCTIONS.of(r).is_some());
    let counters = if split {
        "kernel / user / total guest instructions, medians (the kernel's part counted by oscycles' QEMU plugin, --kernel-counters: at the kernel's addresses, entry and exit included; a cell without the split was not counted)".to_string()
    } else if hw {
        "TSC cycles / unhalted core cycles / instructions, medians (the page's three counters)".to_string()
    } else if counted.short == "instr" {
        "median guest instructions (QEMU's instruction counter: the page's third counter, instructions, exact; no cycles under it)"
            .to_string()
    } else {
        format!("median {}", counted.long)
    };
    let mut s =
        format!("as in {}: one IPC (0 words, both sides on one core) and a null syscall, {counters}\n", Source::L4ReOverview.short());
    s += &t.render();
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
    }
}
