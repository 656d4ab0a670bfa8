//! Where an IPC's instructions go, where a QEMU plugin counted the guest's
//! kernel (`--kernel-counters`): per environment, mechanism and address
//! space, at the smallest payload on one core, the kernel's and the user's
//! instructions, the kernel's loads and stores, its entries, the
//! address-space switches and, with the cache model, the lines it touched
//! and missed.

use super::table::of;
use crate::data::results::kernel::{self, KernelMetric};
use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::families::bench::schema::ipc::{self, Cores, Mechanism, Params};
use crate::tables::tabular::table::TextTable;

/// The table's columns after the cell's own count.
const COLUMNS: [KernelMetric; kernel::ALL.len()] = kernel::ALL;

/// The table of `doc`'s counted IPC cells; empty where none was counted.
pub fn render_where(doc: &RunDoc) -> String {
    let typed: Vec<(&CaseResult, Params)> = crate::tables::tabular::typed(
        of(doc, ipc::FAMILY).into_iter().filter(|r| r.status == CaseStatus::Ok && kernel::KERNEL_INSTRUCTIONS.of(r).is_some()),
    );
    if typed.is_empty() {
        return String::new();
    }
    // A column only where a cell has its count (the cache model's, the hypervisor's).
    let columns: Vec<KernelMetric> = COLUMNS.into_iter().filter(|k| typed.iter().any(|(r, _)| k.of(r).is_some())).collect();
    let cached = columns.contains(&kernel::LINES_COLD);
    let mut headers = vec!["environment", "mechanism", "space", "words", "instructions"];
    headers.extend(columns.iter().map(|k| k.heading));
    let mut t = TextTable::new(&headers, 4);
    for env in crate::tables::tabular::distinct(typed.iter().map(|(r, _)| r.env(doc))) {
        for mech in Mechanism::ALL {
            for space in ipc::SPACES {
                let row = typed
                    .iter()
                    .filter(|(r, p)| r.env(doc) == env && r.benchmark == mech.id() && p.space == space && p.cores == Cores::Same);
                let Some((r, p)) = row.min_by_key(|(_, p)| p.words) else { continue };
                let total = r.metric(ipc::ONE_WAY).map_or("-".into(), |m| one(m.summary.median));
                let mut cells = vec![env.to_string(), mech.name().into(), ipc::space_name(space).into(), p.words.to_string(), total];
                cells.extend(columns.iter().map(|k| k.median(r).map_or("-".into(), one)));
                t.row(cells);
            }
        }
    }
    let mut s = "where the instructions go: one-way IPC at the smallest payload, both sides on one core, per operation (half a round trip), counted by oscycles' QEMU plugin (--kernel-counters), exact\n".to_string();
    s += &t.render();
    s += "  kernel = instructions at the kernel's addresses (entry and exit included), user = the rest: oscycles' loop (the payload written and checked) and the library's path; loads, stores = the kernel's memory accesses (QEMU's own on an instruction's behalf, e.g. a descriptor load, included; page-table walks not); entries = into the kernel; switches = CR3 writes\n";
    if columns.contains(&kernel::HYPERVISOR_INSTRUCTIONS) {
        s += "  hypervisor = instructions at the hypervisor's addresses (Xen's part of a PV guest's address space), out of kernel and user; loads, stores and entries are the kernel's and the hypervisor's together\n";
    }
    if columns.contains(&kernel::TTBR0_WRITES) {
        s += "  TTBR0, ASID = writes of 32-bit ARM's page-table base (TTBR0) and address-space identifier (CONTEXTIDR): seL4 on ARMv7 switches both at every thread switch, within one address space too (TTBR0 twice, through its global page directory)\n";
    }
    if cached {
        s += "  lines (cold) = distinct 64-byte lines the kernel touched, a 32 KiB 8-way LRU model emptied at every entry; misses (warm) = the kernel's misses in one never emptied (virtual addresses)\n";
    }
    s
}

/// A per-operation count: whole where it is one, else to a tenth (a
/// round trip's half, an average over batches).
fn one(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 { format!("{v:.0}") } else { format!("{v:.1}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::results::Metric;

    #[test]
    fn counted_cells_show_where_their_instructions_go_and_others_are_left_out() {
        let mut doc = crate::data::results::fixture();
        assert!(render_where(&doc).is_empty(), "nothing counted: no table");
        let pipe = Mechanism::Pipe.id();
        let same = |r: &CaseResult| r.params_as::<Params>().is_some_and(|p| p.cores == Cores::Same);
        let r = doc.results.iter_mut().find(|r| r.benchmark == pipe && r.status == CaseStatus::Ok && same(r)).unwrap();
        for (k, v) in [(kernel::KERNEL_INSTRUCTIONS, 6262.5), (kernel::USER_INSTRUCTIONS, 11.5), (kernel::CR3_WRITES, 1.0)] {
            r.metrics.push(k.metric(&[v]).unwrap());
        }
        r.metrics.push(Metric::cost("other", "x", crate::analysis::stats::Summary::of(&[1.0]).unwrap()));
        let text = render_where(&doc);
        assert!(text.contains("6262.5") && text.contains("11.5"), "{text}");
        assert!(!text.contains("lines (cold)"), "no cache model: no such column\n{text}");
        assert_eq!(text.lines().filter(|l| l.contains(" pipe ")).count(), 1, "{text}");
        let kernel_form = super::super::table::render_l4_page_form_kernel(&[("qemu-tcg", &doc)]);
        assert!(kernel_form.is_empty() || kernel_form.contains("kernel instr"), "{kernel_form}");
    }
}
