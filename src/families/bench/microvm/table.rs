//! The microvm table in the manner of kvm-unit-tests' vmexit results: rows
//! are exit kinds; columns the guest's own cycles per operation (median,
//! min), the VMM's round trip where the exit reaches it, and the ratio to a
//! native equivalent where there is one.

use crate::data::results::{CaseStatus, RunDoc};
use crate::families::bench::schema::microvm::{self, details};
use crate::families::bench::shows::FamilyTable;
use crate::tables::tabular::headline::{Headline, Headlines, Pick, headline};
use crate::tables::tabular::table::TextTable;

pub fn render(doc: &RunDoc) -> String {
    let rs: Vec<_> = doc.results.iter().filter(|r| r.family == microvm::FAMILY).collect();
    if rs.is_empty() {
        return String::new();
    }
    let mut t = TextTable::new(
        &["exit kind", "CPL", "guest median", "guest min", "VMM round trip", "native equivalent", "native", "x native", "iterations"],
        2,
    );
    t.also_left = vec![5];
    let mut notes = Vec::new();
    let mut layer = None;
    for r in &rs {
        let name = microvm::name_of(&r.benchmark).to_string();
        let cpl = r.params_as::<microvm::Params>().map_or("-".into(), |p| p.cpl.to_string());
        if r.status != CaseStatus::Ok {
            t.row(vec![name.clone(), cpl.clone(), if r.status == CaseStatus::NotApplicable { "n/a" } else { "failed" }.into()]);
            notes.push(format!("  {name} (CPL {cpl}): {}", r.reason.as_deref().unwrap_or("")));
            continue;
        }
        layer = layer.or_else(|| r.details.get(details::LAYER).and_then(|v| v.as_str()).map(String::from));
        let Some(g) = r.metrics.first() else { continue };
        let vmm = r.metric(microvm::VMM_ROUND_TRIP).map_or("-".into(), |m| format!("{:.0}", m.summary.median));
        let native = r.details.get(details::NATIVE_CYCLES).and_then(|v| v.as_f64());
        let what = r.details.get(details::NATIVE_EQUIVALENT).and_then(|v| v.as_str()).unwrap_or("-");
        t.row(vec![
            name,
            cpl,
            format!("{:.0}", g.summary.median),
            format!("{:.0}", g.summary.min),
            vmm,
            what.into(),
            native.map_or("-".into(), |n| format!("{n:.0}")),
            native.map_or("-".into(), |n| format!("{:.2}", g.summary.median / n)),
            r.details.get(details::ITERATIONS).map_or("-".into(), |v| v.to_string()),
        ]);
    }
    let mode = rs.iter().find_map(|r| r.details.get(details::GUEST_MODE).and_then(|v| v.as_str())).unwrap_or("");
    let mode = mode.split(" at CPL").next().unwrap_or(mode);
    let mut out = format!(
        "microvm: VM exits in oscycles' own KVM guest, TSC cycles per operation (kvm-unit-tests' vmexit table)\n  layer under /dev/kvm: {}; guest: {mode}; CPL 0 = guest kernel mode, CPL 3 = guest user mode\n  start = KVM_CREATE_VM to the guest's first instruction; read = cycles per 64 KiB\n{}",
        layer.unwrap_or_else(|| "unknown".into()),
        t.render()
    );
    if !notes.is_empty() {
        out += &format!("not measured:\n{}\n", notes.join("\n"));
    }
    out
}

/// The price of a VM exit in oscycles' own guest.
pub static TABLE: FamilyTable = FamilyTable::new(&[microvm::FAMILY], render);

/// The summary's headline: a VM exit's round trip.
pub struct MicrovmHeadline;

impl Headlines for MicrovmHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        headline("VM exit round trip (microvm, pio)", pick.one(microvm::id(microvm::PIO), microvm::VMM_ROUND_TRIP)).into_iter().collect()
    }
}
