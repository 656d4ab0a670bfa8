//! Presentation: everything that turns run documents into text. Measurement
//! code never prints; this module never measures.

pub mod by;
pub mod compare;
pub mod counters;
pub mod doctor;
pub mod env;
pub mod export;
pub mod forest;
pub mod generic;
pub mod history;
pub mod header;
pub mod io;
pub mod ipc;
pub mod list;
pub mod lmbench;
pub mod load;
pub mod memory;
pub mod microvm;
pub mod noise;
pub mod packet_stream;
pub mod plot;
pub mod rows;
pub mod summary;
pub mod syscall;
pub mod table;
pub mod terminal;

use crate::results::{CaseResult, CaseStatus, RunDoc};
use crate::schema::{self, CaseParams};
pub use list::{render_benchmark, render_list};
use table::percent;
pub use terminal::{fit_text, for_terminal, terminal_width, wrap};

/// One line on how noisy a table's cells were.
pub fn noise_note(results: &[&CaseResult], metric: &str) -> String {
    let mut cvs: Vec<(f64, String)> = results
        .iter()
        .filter(|r| r.status == CaseStatus::Ok)
        .filter_map(|r| {
            let m = r.metric(metric)?;
            let p: Vec<String> = r.params.values().map(|v| v.as_str().map_or_else(|| v.to_string(), String::from)).collect();
            Some((m.summary.cv, format!("{} {}", r.benchmark, p.join(" ")).trim().to_string()))
        })
        .collect();
    if cvs.is_empty() {
        return String::new();
    }
    cvs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median = cvs[cvs.len() / 2].0;
    let (max, which) = cvs.last().cloned().unwrap();
    let noisy = cvs.iter().filter(|c| c.0 > ipc::NOISY_CV).count();
    format!(
        "  noise: CV across batches median {}, max {} ({which}); {noisy} of {} cells above {:.0}%\n",
        percent(median),
        percent(max),
        cvs.len(),
        ipc::NOISY_CV * 100.0
    )
}

/// The results given, each with its parameters as `P` (those whose
/// parameters do not fit it are left out).
pub fn typed<'a, P: CaseParams>(results: impl IntoIterator<Item = &'a CaseResult>) -> Vec<(&'a CaseResult, P)> {
    results.into_iter().filter_map(|r| Some((r, r.params_as::<P>()?))).collect()
}

/// A numeric detail of a result, NaN where it has none.
pub fn num(r: &CaseResult, key: &str) -> f64 {
    r.detail_f64(key).unwrap_or(f64::NAN)
}

/// Distinct values in order of first appearance.
pub fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// The run restricted to some suites' results (the seed tables look cases up
/// by benchmark and parameters, so each draws only on its own suites).
fn only_suites(doc: &RunDoc, suites: &[&str]) -> RunDoc {
    let mut d = doc.clone();
    d.results.retain(|r| suites.contains(&r.suite.as_str()));
    d
}

/// Suites whose cases appear in their own seed tables rather than the
/// generic family tables.
const OWN_TABLES: [&str; 2] = ["lmbench", "hermit-basic"];

/// The tables of a run. Noise and control-loop tables lay every condition
/// out in one grid; the other tables are printed once per condition (load,
/// isolation) when the run had several.
pub fn render_tables(doc: &RunDoc) -> String {
    let envs = env::environments(doc);
    if envs.len() < 2 {
        return format!("{}{}", env::render_emulated(doc), render_conditions(doc));
    }
    let mut out = String::new();
    let mut per_env: Vec<RunDoc> = Vec::new();
    for e in &envs {
        let mut d = doc.clone();
        d.results.retain(|r| r.env(doc) == e && r.family != schema::boot::FAMILY);
        d.environment.name = e.clone();
        if !d.results.is_empty() {
            out += &format!("\n##### environment {e}{} #####\n", env::emulated(doc, e).map_or(String::new(), |n| format!(" ({n})")));
            out += &render_conditions(&d);
        }
        per_env.push(d);
    }
    out += &format!("\n##### environments side by side: {} #####\n", envs.join(", "));
    let named: Vec<(&str, &RunDoc)> = envs.iter().map(String::as_str).zip(&per_env).collect();
    let mut seed = vec![env::render_emulated(doc), env::render_side_by_side(doc)];
    let hermit: Vec<RunDoc> = per_env.iter().map(|d| only_suites(d, &["hermit-basic", "quick"])).collect();
    seed.push(memory::render_hermit_envs(&envs.iter().map(String::as_str).zip(&hermit).collect::<Vec<_>>()));
    seed.push(memory::render_stream_envs(&named));
    // The lmbench tables compare two: the two of the run, else native with each other.
    type Named<'a> = (&'a str, &'a RunDoc);
    let pairs: Vec<(&Named, &Named)> = match named.as_slice() {
        [a, b] => vec![(a, b)],
        all => all.iter().filter(|n| n.0 == "native").flat_map(|n| all.iter().filter(|o| o.0 != "native").map(move |o| (n, o))).collect(),
    };
    for ((a, da), (b, db)) in pairs {
        let (da, db) = (only_suites(da, &["lmbench", "quick"]), only_suites(db, &["lmbench", "quick"]));
        seed.push(lmbench::render_named(&[&da, &db], [a, b]));
    }
    seed.push(env::render_boot(doc));
    for p in seed {
        if !p.is_empty() {
            out += &format!("\n{p}");
        }
    }
    out
}

/// The tables of one environment's results.
fn render_conditions(doc: &RunDoc) -> String {
    let grids = [schema::noise::FAMILY, schema::control::FAMILY, schema::boot::FAMILY];
    let mut conditions: Vec<(String, String)> = Vec::new();
    for r in doc.results.iter().filter(|r| !grids.contains(&r.family.as_str())) {
        let (l, i) = r.load_isolation(doc);
        if !conditions.iter().any(|c| c.0 == l && c.1 == i) {
            conditions.push((l.to_string(), i.to_string()));
        }
    }
    let mut out = String::new();
    if conditions.len() > 1 {
        for (l, i) in &conditions {
            let mut d = doc.clone();
            d.results.retain(|r| !grids.contains(&r.family.as_str()) && r.load_isolation(doc) == (l.as_str(), i.as_str()));
            out += &format!(
                "
=== under load {l}, isolation {i} ===
"
            );
            out += &render_family_tables(&d);
        }
    } else {
        let mut d = doc.clone();
        d.results.retain(|r| !grids.contains(&r.family.as_str()));
        out += &render_family_tables(&d);
    }
    for p in [noise::render_fwq(doc), noise::render_control(doc), env::render_boot(doc)] {
        if !p.is_empty() {
            out += &format!("\n{p}");
        }
    }
    out
}

/// The generic family tables, then the seed tables, of one condition.
fn render_family_tables(doc: &RunDoc) -> String {
    let of = |family: &str| {
        doc.results.iter().filter(|r| r.family == family && !OWN_TABLES.contains(&r.suite.as_str())).collect::<Vec<&CaseResult>>()
    };
    let (sys, ipc) = (of(schema::syscall::FAMILY), of(schema::ipc::FAMILY));
    let mut parts: Vec<String> = Vec::new();
    if !sys.is_empty() {
        parts.push(syscall::render(&sys, doc.settings.rounds));
    }
    if !ipc.is_empty() {
        parts.push(ipc::render(&ipc));
    }
    if !ipc.is_empty() && !sys.is_empty() {
        parts.push(ipc::render_l4re_overview(&ipc, &sys));
    }
    parts.push(lmbench::render(&[&only_suites(doc, &["lmbench", "quick"])]));
    parts.push(memory::render_hermit(&only_suites(doc, &["hermit-basic", "quick"])));
    parts.push(memory::render_stream(doc));
    parts.push(memory::render_memcpy(doc));
    parts.push(memory::render_alloc(doc));
    parts.push(packet_stream::render_packet_stream(doc));
    parts.push(packet_stream::render_parallel(doc));
    parts.push(io::render_net(doc));
    parts.push(io::render_blk(doc));
    parts.push(microvm::render(doc));
    let unknown: Vec<&CaseResult> = doc.results.iter().filter(|r| !schema::FAMILIES.contains(&r.family.as_str())).collect();
    if !unknown.is_empty() {
        parts.push(generic::render(&unknown));
    }
    parts.into_iter().filter(|p| !p.is_empty()).map(|p| format!("\n{p}")).collect()
}
