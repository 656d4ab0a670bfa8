//! The boot-time table of the HermitCore PVH/HVM benchmark post: each environment's time to
//! its /init and to a first result.

use crate::base::sources::Source;
use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::families::bench::schema::boot;
use crate::families::bench::shows::FamilyTable;
use crate::tables::tabular::figures::{Bars, Plots, bars_of, capitalised, environments};
use crate::tables::tabular::headline::{Headline, Headlines, Pick, headline};
use crate::tables::tabular::table::TextTable;
use crate::tables::tabular::tables::Layout;

pub fn render_boot(doc: &RunDoc) -> String {
    let rs: Vec<&CaseResult> = doc.results.iter().filter(|r| r.family == boot::FAMILY).collect();
    if rs.is_empty() {
        return String::new();
    }
    let mut t = TextTable::new(&["environment", "to /init (s)", "to first result (s)", "starts", "min..max to /init"], 1);
    let mut notes = String::new();
    for r in rs {
        let e = r.env(doc).to_string();
        match (r.metric(boot::TO_INIT), r.metric(boot::TO_FIRST_RESULT)) {
            (Some(a), Some(b)) if r.status == CaseStatus::Ok => {
                // Starts that failed after one that came up: said, not hidden.
                let failed = r.details.get(boot::FAILED_STARTS).and_then(|f| f.as_array()).map_or(0, Vec::len);
                let starts = if failed > 0 {
                    notes += &format!("  {e}: {}\n", r.reason.as_deref().unwrap_or_default());
                    format!("{} of {}", a.summary.n, a.summary.n + failed)
                } else {
                    a.summary.n.to_string()
                };
                t.row(vec![
                    e,
                    format!("{:.3}", a.summary.median),
                    format!("{:.3}", b.summary.median),
                    starts,
                    format!("{:.3}..{:.3}", a.summary.min, a.summary.max),
                ])
            }
            _ => {
                notes += &format!("  {e}: {}\n", r.reason.as_deref().unwrap_or("failed"));
                t.row(vec![e, if r.status == CaseStatus::NotApplicable { "n/a" } else { "failed" }.into()]);
            }
        }
    }
    if !notes.is_empty() {
        notes = format!("not measured:\n{notes}");
    }
    if doc.results.iter().any(|r| r.family == boot::FAMILY && r.env(doc) == "hermit") {
        notes += "the HermitCore PVH/HVM benchmark post: HermitCore to its hello world in 80 ms under KVM and as a Xen PVH guest, 6140 ms as a Xen HVM guest\n";
    }
    format!(
        "boot: from starting the environment to the first act of its init, and to its first result (as in {}), medians\n{}{notes}",
        Source::HermitCoreXen.short(),
        t.render()
    )
}

/// Start-up time, every environment of the run.
pub static TABLE: FamilyTable = FamilyTable::new(&[boot::FAMILY], render_boot).laid_out(Layout::Run);

/// The summary's headline: the time to /init.
pub struct BootHeadline;

impl Headlines for BootHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        headline("boot to /init", pick.one(boot::id(boot::START_BENCH), boot::TO_INIT)).into_iter().collect()
    }
}

/// The HermitCore post's boot times as a picture: a bar per environment,
/// to /init and to the first result. Timed by the host's clock in every
/// environment, so one axis holds them all.
pub struct BootBars;

impl Plots for BootBars {
    fn bars(&self, doc: &RunDoc) -> Vec<Bars> {
        let envs = environments(doc);
        if envs.len() < 2 {
            return Vec::new();
        }
        let metric = |d: &RunDoc, name: &str| {
            d.results.iter().find(|r| r.family == boot::FAMILY && r.status == CaseStatus::Ok).and_then(|r| r.metric(name)).cloned()
        };
        let rows: Vec<(String, _)> = [("to /init", boot::TO_INIT), ("to the first result", boot::TO_FIRST_RESULT)]
            .into_iter()
            .map(|(label, name)| (label.to_string(), move |d: &RunDoc| metric(d, name)))
            .collect();
        let title = format!("{}: boot time by environment", capitalised(Source::HermitCoreXen.short()));
        bars_of(doc, &envs, title, "seconds from the start (host clock, median of the starts, log)".into(), &rows).into_iter().collect()
    }
    fn across_environments(&self) -> bool {
        true
    }
}
