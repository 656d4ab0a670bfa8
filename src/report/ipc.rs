//! The l4-ipc table: seeds 000 and 004 laid out for Linux. Rows are
//! mechanism x space x cores, columns payload words, cells the median one-way
//! cost in TSC cycles.

use super::noise_note;
use super::table::{Table, cycles};
use crate::bench::ipc::Mechanism;
use crate::results::{CaseResult, CaseStatus};
use std::collections::BTreeSet;

/// CV above which a cell is marked noisy.
pub const NOISY_CV: f64 = 0.10;

pub fn render(results: &[&CaseResult]) -> String {
    let words: BTreeSet<u64> = results.iter().filter_map(|r| r.param_u64("words")).collect();
    let mut headers: Vec<String> = ["mechanism", "space", "cores", "cpus"].map(String::from).to_vec();
    headers.extend(words.iter().map(|w| format!("{w}w")));
    let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 3);
    let mut reasons: BTreeSet<String> = BTreeSet::new();
    let mut moved = false;
    for mech in Mechanism::ALL {
        let id = format!("ipc.{}", mech.name());
        for space in ["intra", "inter"] {
            for cores in ["same", "cross"] {
                let row: Vec<&&CaseResult> = results
                    .iter()
                    .filter(|r| r.benchmark == id && r.param_str("space") == Some(space) && r.param_str("cores") == Some(cores))
                    .collect();
                if row.is_empty() {
                    continue;
                }
                let cpus = row
                    .iter()
                    .find_map(|r| r.placement.as_ref())
                    .map(|p| {
                        let obs: Vec<String> = p.observed_cpus.iter().map(|c| c.map_or("?".into(), |c| c.to_string())).collect();
                        let differs = p.observed_cpus.iter().zip(&p.cpus).any(|(o, c)| *o != Some(*c));
                        moved |= differs;
                        format!("{}{}", obs.join("/"), if differs { "!" } else { "" })
                    })
                    .unwrap_or_else(|| "-".into());
                let mut cells = vec![mech.name().to_string(), space.into(), cores.into(), cpus];
                for w in &words {
                    let cell = match row.iter().find(|r| r.param_u64("words") == Some(*w)) {
                        None => "-".into(),
                        Some(r) => match (r.status, r.metric("one_way")) {
                            (CaseStatus::Ok, Some(m)) => {
                                format!("{}{}", cycles(m.summary.median), if super::table::uncertain(m) { "?" } else { "" })
                            }
                            (CaseStatus::NotApplicable, _) => {
                                reasons.insert(format!("n/a: {}", r.reason.as_deref().unwrap_or("")));
                                "n/a".into()
                            }
                            _ => {
                                reasons.insert(format!(
                                    "fail ({} {space} {cores} {w}w): {}",
                                    mech.name(),
                                    r.reason.as_deref().unwrap_or("")
                                ));
                                "fail".into()
                            }
                        },
                    };
                    cells.push(cell);
                }
                t.row(cells);
            }
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
    s += &noise_note(results, "one_way");
    s
}

/// Seed 004's layout: per mechanism, one IPC at 0 words on one core, intra
/// and inter address space, beside the null system call.
pub fn render_seed004(ipc: &[&CaseResult], syscall: &[&CaseResult]) -> String {
    let median = |r: Option<&&CaseResult>, metric: &str| {
        r.filter(|r| r.status == CaseStatus::Ok).and_then(|r| r.metric(metric)).map_or("-".to_string(), |m| cycles(m.summary.median))
    };
    let getpid = median(syscall.iter().find(|r| r.benchmark == "syscall.getpid"), "per_call");
    let mut t = Table::new(&["mechanism", "IPC intra", "IPC inter", "syscall (getpid)"], 1);
    for mech in Mechanism::ALL {
        let id = format!("ipc.{}", mech.name());
        let cell = |space: &str| {
            median(
                ipc.iter().find(|r| {
                    r.benchmark == id
                        && r.param_u64("words") == Some(0)
                        && r.param_str("space") == Some(space)
                        && r.param_str("cores") == Some("same")
                }),
                "one_way",
            )
        };
        let (intra, inter) = (cell("intra"), cell("inter"));
        if intra != "-" || inter != "-" {
            t.row(vec![mech.name().into(), intra, inter, getpid.clone()]);
        }
    }
    if t.rows.is_empty() {
        return String::new();
    }
    let mut s = "seed 004 layout: one IPC (0 words, both sides on one core) and a null syscall, median TSC cycles\n".to_string();
    s += &t.render();
    s
}
