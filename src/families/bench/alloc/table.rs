//! The allocators by live set and block size (Genode's Pandaboard article).

use crate::base::named::Named;
use crate::data::results::{CaseResult, RunDoc};
use crate::families::bench::schema::alloc;
use crate::families::bench::shows::FamilyTable;
use crate::tables::tabular::headline::{Headline, Headlines, Pick, extreme, headline};
use crate::tables::tabular::median_cell;
use crate::tables::tabular::table::{TextTable, bytes_label};
use std::collections::BTreeSet;

/// Allocators: rows allocator x block size, columns live-set sizes; cycles per free+allocate pair.
pub fn render_alloc(doc: &RunDoc) -> String {
    let rs: Vec<(&CaseResult, alloc::Params)> = crate::tables::tabular::typed(doc.results.iter().filter(|r| r.family == alloc::FAMILY));
    if rs.is_empty() {
        return String::new();
    }
    let lives: BTreeSet<u64> = rs.iter().map(|(_, p)| p.live).collect();
    let sizes: BTreeSet<u64> = rs.iter().map(|(_, p)| p.bytes).collect();
    let mut headers = vec!["allocator".to_string(), "fill".into(), "block".into()];
    headers.extend(lives.iter().map(|l| format!("live {l}")));
    let mut t = TextTable::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 3);
    for kind in alloc::KINDS {
        let bench = alloc::id(kind);
        for &fill in alloc::Fill::ALL {
            for &size in &sizes {
                let row_rs: Vec<&(&CaseResult, alloc::Params)> =
                    rs.iter().filter(|(r, p)| r.benchmark == bench && p.fill == Some(fill) && p.bytes == size).collect();
                if row_rs.is_empty() {
                    continue;
                }
                let mut row = vec![kind.to_string(), fill.name().into(), bytes_label(size)];
                for &l in &lives {
                    row.push(median_cell(row_rs.iter().find(|(_, p)| p.live == l).map(|(r, _)| *r), alloc::PER_PAIR).0);
                }
                t.row(row);
            }
        }
    }
    format!(
        "alloc: median TSC cycles per free + allocate pair (a pseudo-random live block replaced); half = arena twice the live set, nearly-full = 1% spare\n{}",
        t.render()
    )
}

/// The allocators by block size.
pub static TABLE: FamilyTable = FamilyTable::new(&[alloc::FAMILY], render_alloc);

/// The summary's headline: the C library's malloc + free at its best.
pub struct AllocHeadline;

impl Headlines for AllocHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        let system = alloc::id(alloc::SYSTEM);
        let best = extreme(pick.measured().filter(|r| r.benchmark == system), alloc::PER_PAIR, false);
        headline("malloc + free (C library, best case)", best).into_iter().collect()
    }
}
