//! Every core at once (the L4Re performance overview's parallel runs): cost per operation
//! against the number of CPUs busy, and its plot.

use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::families::bench::schema::parallel;
use crate::families::bench::shows::FamilyTable;
use crate::tables::tabular::figures::{Plot, Plots, lines_of, point};
use crate::tables::tabular::lines::Lines;
use crate::tables::tabular::median_of;
use crate::tables::tabular::table::{TextTable, cycles};
use std::collections::BTreeSet;

pub fn render_parallel(doc: &RunDoc) -> String {
    let rs: Vec<(&CaseResult, parallel::Params)> =
        crate::tables::tabular::typed(doc.results.iter().filter(|r| r.family == parallel::FAMILY));
    if rs.is_empty() {
        return String::new();
    }
    // CPU counts as rows (a 64-CPU machine makes a long table, not a wide one).
    let ns: BTreeSet<u64> = rs.iter().map(|(_, p)| p.instances).collect();
    let ops: Vec<&str> = parallel::OPS.into_iter().filter(|op| rs.iter().any(|(r, _)| r.benchmark == parallel::id(op))).collect();
    let mut headers = vec!["CPUs busy".to_string()];
    headers.extend(ops.iter().map(|op| op.to_string()));
    let mut t = TextTable::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    for &n in &ns {
        let mut row = vec![n.to_string()];
        for op in &ops {
            let bench = parallel::id(op);
            let at = |instances: u64| {
                rs.iter().find(|(r, p)| r.status == CaseStatus::Ok && r.benchmark == bench && p.instances == instances).map(|(r, _)| *r)
            };
            let alone = at(1).map(|r| median_of(r, parallel::PER_OP));
            row.push(match at(n) {
                Some(r) => {
                    let m = median_of(r, parallel::PER_OP);
                    match alone {
                        Some(a) if n > 1 => format!("{} ({:.2}x)", cycles(m), m / a),
                        _ => cycles(m),
                    }
                }
                None => "-".into(),
            });
        }
        t.row(row);
    }
    format!(
        "parallel: median per-instance cost in TSC cycles (IPC one-way, same core) with one instance pinned per CPU, all at once; (slowdown against one CPU alone)\n{}",
        t.render()
    )
}

/// Instances side by side.
pub static TABLE: FamilyTable = FamilyTable::new(&[parallel::FAMILY], render_parallel);

/// Cost per operation against the number of CPUs busy at once.
pub struct ParallelPlots;

impl Plots for ParallelPlots {
    fn lines(&self, doc: &RunDoc) -> Vec<Lines> {
        let title = "Cost against the number of CPUs busy at once".into();
        let lines = lines_of::<parallel::Params>(
            doc,
            Plot { title, x_desc: "instances (one pinned per CPU)", y_desc: "cost per operation (TSC cycles)", log: (false, false) },
            |r, _| r.family == parallel::FAMILY,
            |r, _| parallel::name_of(&r.benchmark).into(),
            |r, p| point(p.instances as f64, r, parallel::PER_OP),
        );
        lines.into_iter().collect()
    }
    fn across_environments(&self) -> bool {
        true
    }
}
