//! The l4-ipc table: the L4 performance page's and the L4Re performance overview's, laid out for Linux. Rows are
//! mechanism x space x cores, columns payload words, cells the median one-way
//! cost in TSC cycles.

use super::figures::{Plot, Plots, lines_of, point};
use super::noise_note;
use super::plot::Lines;
use super::table::{TextTable, cycles};
use super::tables::{Draws, Table};
use crate::results::RunDoc;
use crate::results::{CaseResult, CaseStatus};
use crate::schema::ipc::{self, Cores, Mechanism, Params, Space};
use crate::schema::syscall;
use crate::sources::Source;
use std::collections::BTreeSet;

/// CV above which a cell is marked noisy.
pub const NOISY_CV: f64 = 0.10;

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
fn cell(r: Option<&CaseResult>, what: &str, reasons: &mut BTreeSet<String>) -> String {
    let Some(r) = r else { return "-".into() };
    match (r.status, r.metric(ipc::ONE_WAY)) {
        (CaseStatus::Ok, Some(m)) => format!("{}{}", cycles(m.summary.median), if super::table::uncertain(m) { "?" } else { "" }),
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
    let results_typed: Vec<(&CaseResult, Params)> = super::typed(results.iter().copied());
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
    let mut s =
        "l4-ipc: one-way IPC cost, median TSC cycles (round trip / 2, as in the L4 tables), by payload in 64-bit words\n".to_string();
    s += "  intra = two threads of one process, inter = two processes; cpus = client/server CPU as observed\n";
    s += &t.render();
    s += &format!(
        "  ? = the 95% interval of the median is wider than {:.0}% of it (the batches' CV, where a document has no interval); '-' = not measured\n",
        super::table::WIDE_INTERVAL * 100.0
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

/// The L4Re performance overview's layout: per mechanism, one IPC at 0 words on one core, intra
/// and inter address space, beside the null system call.
pub fn render_l4re_overview(ipc_results: &[&CaseResult], syscall_results: &[&CaseResult]) -> String {
    // Where the hardware counted, each figure in the page's three counters:
    // TSC cycles / unhalted core cycles / instructions.
    let hw = super::counters::any_hardware(ipc_results) || super::counters::any_hardware(syscall_results);
    let median = |r: Option<&CaseResult>, metric: &str| {
        let Some((r, m)) = r.filter(|r| r.status == CaseStatus::Ok).and_then(|r| Some((r, r.metric(metric)?))) else {
            return "-".to_string();
        };
        // The counts are per operation of the case: a round trip for IPC, whose one-way figure is half.
        let per = if metric == ipc::ONE_WAY { 0.5 } else { 1.0 };
        match super::counters::core_and_instructions(r, per).filter(|_| hw) {
            Some((core, instr)) => format!("{} / {} / {}", cycles(m.summary.median), cycles(core), cycles(instr)),
            None => cycles(m.summary.median),
        }
    };
    let getpid_id = syscall::id(syscall::GETPID);
    let getpid = median(syscall_results.iter().find(|r| r.benchmark == getpid_id).copied(), syscall::PER_CALL);
    let results_typed: Vec<(&CaseResult, Params)> = super::typed(ipc_results.iter().copied());
    let mut t = TextTable::new(&["mechanism", "IPC intra", "IPC inter", "syscall (getpid)"], 1);
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
    let counters =
        if hw { "TSC cycles / unhalted core cycles / instructions, medians (the page's three counters)" } else { "median TSC cycles" };
    let mut s =
        format!("as in {}: one IPC (0 words, both sides on one core) and a null syscall, {counters}\n", Source::L4ReOverview.short());
    s += &t.render();
    s
}

/// The l4-ipc table, of the cases no published evaluation's table owns.
pub struct IpcTable;

/// The L4Re performance overview's layout, where a run has IPC and syscall cases.
pub struct L4ReOverview;

fn of<'a>(doc: &'a RunDoc, family: &str) -> Vec<&'a CaseResult> {
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
        if ipc.is_empty() { String::new() } else { render(&ipc) }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::{Counts, EventCounts};
    use crate::stats::Summary;

    /// The fixture's same-core inter-process pipe (0 words) and getpid, with
    /// hardware counts per operation (a round trip for the pipe) where `hw`.
    fn cases(hw: bool) -> (CaseResult, CaseResult) {
        let doc = crate::results::fixture();
        let want = Params { words: 0, space: Space::Inter, cores: Cores::Same };
        let typed: Vec<(&CaseResult, Params)> = super::super::typed(doc.results.iter());
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
        let table = super::super::syscall::render(&[&getpid], 1);
        assert!(table.contains("core cyc") && table.contains("instr"), "{table}");
        let (pipe, getpid) = cases(false);
        let plain = render_l4re_overview(&[&pipe], &[&getpid]);
        assert!(plain.contains("median TSC cycles") && !plain.contains(" / "), "{plain}");
        assert!(!super::super::syscall::render(&[&getpid], 1).contains("core cyc"));
    }
}
