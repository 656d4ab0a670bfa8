//! Block throughput by block size (Genode's Pandaboard article): rows sizes, columns
//! read / write x direct / cached; and its plot.

use crate::base::named::Named;
use crate::base::sources::Source;
use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::families::bench::schema::blk;
use crate::families::bench::shows::FamilyTable;
use crate::tables::tabular::figures::{Plot, Plots, lines_of};
use crate::tables::tabular::headline::{Headline, Headlines, Pick, extreme, headline};
use crate::tables::tabular::lines::{Lines, Point};
use crate::tables::tabular::table::{TextTable, bytes_label, percent};
use crate::tables::tabular::{ascending, num, unmeasured_reasons, value_cell};

/// A blk result with its parameters.
type Blk<'a> = (&'a CaseResult, blk::Params);

/// A per-case row of the blk detail table.
fn blk_case(r: &CaseResult, op: &str, mode: blk::Mode, block: u64) -> Vec<String> {
    use blk::details::*;
    let sync = num(r, FDATASYNC_AFTER_S);
    vec![
        op.into(),
        mode.name().into(),
        bytes_label(block),
        format!("{:.1}", num(r, MIB_PER_S)),
        format!("{:.0}", num(r, IOPS)),
        format!("{:.2}", num(r, CPU_MS_PER_MIB)),
        percent(num(r, CPU_UTIL)),
        percent(r.metric(blk::THROUGHPUT).map_or(f64::NAN, |m| m.summary.cv)),
        if sync.is_nan() { "-".into() } else { format!("{:.0} ms", sync * 1e3) },
    ]
}

pub fn render_blk(doc: &RunDoc) -> String {
    let rs: Vec<Blk> = crate::tables::tabular::typed(doc.results.iter().filter(|r| r.family == blk::FAMILY));
    if rs.is_empty() {
        return String::new();
    }
    let cols: Vec<(&str, blk::Mode)> = blk::OPS.iter().flat_map(|&op| blk::Mode::ALL.iter().map(move |&m| (op, m))).collect();
    let mut heads = vec!["block".to_string()];
    heads.extend(cols.iter().map(|(op, m)| format!("{op} {}", m.name())));
    let mut t = TextTable::new(&heads.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    let mut d = TextTable::new(&["op", "mode", "block", "MiB/s", "IOPS", "CPU ms/MiB", "CPU util", "CV", "fdatasync after"], 3);
    for b in ascending(rs.iter().map(|(_, p)| p.block)) {
        let mut row = vec![bytes_label(b)];
        for &(op, mode) in &cols {
            let bench = blk::id(op);
            let r = rs.iter().find(|(r, p)| r.benchmark == bench && p.mode == mode && p.block == b).map(|(r, _)| *r);
            row.push(value_cell(r, |r| format!("{:.1}", num(r, blk::details::MIB_PER_S))));
            if let Some(r) = r.filter(|r| r.status == CaseStatus::Ok) {
                d.row(blk_case(r, op, mode, b));
            }
        }
        t.row(row);
    }
    format!(
        "blk: sequential throughput in MiB/s by block size (as in {}), one request in flight, direct = O_DIRECT\n{}\nblk per case (cached writes: the fdatasync after the window is not in the rate)\n{}{}",
        Source::GenodePandaboard.short(),
        t.render(),
        d.render(),
        unmeasured_reasons(rs.iter().map(|(r, p)| (*r, p.mode.name())))
    )
}

/// Block throughput by request size.
pub static TABLE: FamilyTable = FamilyTable::new(&[blk::FAMILY], render_blk);

/// Block throughput against block size.
pub struct BlkPlots;

impl Plots for BlkPlots {
    fn lines(&self, doc: &RunDoc) -> Vec<Lines> {
        lines_of::<blk::Params>(
            doc,
            Plot { title: "Block I/O throughput by block size".into(), x_desc: "block (bytes)", y_desc: "MiB/s", log: (true, true) },
            |r, _| r.family == blk::FAMILY,
            |r, p| format!("{} {}", blk::name_of(&r.benchmark), p.mode.name()),
            |r, p| Some(Point::bare(p.block as f64, r.detail_f64(blk::details::MIB_PER_S)?)),
        )
        .into_iter()
        .collect()
    }
    fn across_environments(&self) -> bool {
        true
    }
}

/// The summary's headline: block I/O's peak.
pub struct BlkHeadline;

impl Headlines for BlkHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        headline("block I/O peak", extreme(pick.of(blk::FAMILY), blk::THROUGHPUT, true)).into_iter().collect()
    }
}
