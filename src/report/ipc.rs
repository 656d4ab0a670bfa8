//! The l4-ipc table: seeds 000 and 004 laid out for Linux. Rows are
//! mechanism x space x cores, columns payload words, cells the median one-way
//! cost in TSC cycles.

use super::noise_note;
use super::table::{Table, cycles};
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
    let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 3);
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

/// Seed 004's layout: per mechanism, one IPC at 0 words on one core, intra
/// and inter address space, beside the null system call.
pub fn render_l4re_overview(ipc_results: &[&CaseResult], syscall_results: &[&CaseResult]) -> String {
    let median = |r: Option<&CaseResult>, metric: &str| {
        r.filter(|r| r.status == CaseStatus::Ok).and_then(|r| r.metric(metric)).map_or("-".to_string(), |m| cycles(m.summary.median))
    };
    let getpid_id = syscall::id(syscall::GETPID);
    let getpid = median(syscall_results.iter().find(|r| r.benchmark == getpid_id).copied(), syscall::PER_CALL);
    let results_typed: Vec<(&CaseResult, Params)> = super::typed(ipc_results.iter().copied());
    let mut t = Table::new(&["mechanism", "IPC intra", "IPC inter", "syscall (getpid)"], 1);
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
    let mut s = format!(
        "as in {}: one IPC (0 words, both sides on one core) and a null syscall, median TSC cycles\n",
        Source::L4ReOverview.short()
    );
    s += &t.render();
    s
}
