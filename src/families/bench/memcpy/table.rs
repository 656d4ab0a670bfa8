//! memcpy by size and alignment (Genode's Pandaboard article), and its plot of
//! bandwidth by size.

use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::families::bench::schema::memcpy;
use crate::families::bench::shows::FamilyTable;
use crate::tables::tabular::figures::{Plot, Plots, lines_of, point};
use crate::tables::tabular::headline::{Headline, Headlines, Pick, extreme, headline};
use crate::tables::tabular::lines::Lines;
use crate::tables::tabular::table::{TextTable, bytes_label};
use std::collections::BTreeSet;

/// memcpy: one table per implementation, rows sizes, columns src/dst offsets; MB/s.
pub fn render_memcpy(doc: &RunDoc) -> String {
    let rs: Vec<(&CaseResult, memcpy::Params)> = crate::tables::tabular::typed(doc.results.iter().filter(|r| r.family == memcpy::FAMILY));
    if rs.is_empty() {
        return String::new();
    }
    let offsets: Vec<(u64, u64)> = crate::tables::tabular::distinct(rs.iter().map(|(_, p)| (p.src_off, p.dst_off)));
    let sizes: BTreeSet<u64> = rs.iter().map(|(_, p)| p.bytes).collect();
    let mut s = "memcpy: MB/s by size (rows) and source/destination offset from a page boundary (columns \"src/dst\")\n".to_string();
    for imp in memcpy::IMPLS {
        let bench = memcpy::id(imp);
        if !rs.iter().any(|(r, _)| r.benchmark == bench) {
            continue;
        }
        let mut headers = vec![format!("{imp}: bytes")];
        headers.extend(offsets.iter().map(|(a, b)| format!("{a}/{b}")));
        let mut t = TextTable::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
        for &bytes in &sizes {
            let mut row = vec![bytes_label(bytes)];
            for &(src_off, dst_off) in &offsets {
                let want = memcpy::Params { bytes, src_off, dst_off };
                row.push(match rs.iter().find(|(r, p)| r.benchmark == bench && *p == want).map(|(r, _)| r) {
                    Some(r) if r.status == CaseStatus::Ok => {
                        r.metric(memcpy::BANDWIDTH).map_or("-".into(), |m| format!("{:.0}", m.summary.median))
                    }
                    Some(_) => "fail".into(),
                    None => "-".into(),
                });
            }
            t.row(row);
        }
        s += &t.render();
    }
    s
}

/// memcpy by size and alignment.
pub static TABLE: FamilyTable = FamilyTable::new(&[memcpy::FAMILY], render_memcpy);

/// memcpy bandwidth against size (aligned).
pub struct MemcpyPlots;

impl Plots for MemcpyPlots {
    fn lines(&self, doc: &RunDoc) -> Vec<Lines> {
        lines_of::<memcpy::Params>(
            doc,
            Plot { title: "memcpy bandwidth by size (aligned)".into(), x_desc: "bytes copied", y_desc: "MB/s", log: (true, false) },
            |r, p| r.family == memcpy::FAMILY && p.src_off == 0 && p.dst_off == 0,
            |r, _| memcpy::name_of(&r.benchmark).into(),
            |r, p| point(p.bytes as f64, r, memcpy::BANDWIDTH),
        )
        .into_iter()
        .collect()
    }
    fn across_environments(&self) -> bool {
        true
    }
}

/// The summary's headline: the C library's memcpy at its peak, aligned.
pub struct MemcpyHeadline;

impl Headlines for MemcpyHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        let libc = memcpy::id(memcpy::LIBC);
        let aligned = |r: &CaseResult| r.params_as::<memcpy::Params>().is_some_and(|p| p.src_off == 0 && p.dst_off == 0);
        let peak = extreme(pick.measured().filter(|r| r.benchmark == libc && aligned(r)), memcpy::BANDWIDTH, true);
        headline("memcpy peak (C library, aligned)", peak).into_iter().collect()
    }
}
