//! `oscycles list`: the benchmarks and suites as plain data (built from the
//! registry by `crate::app::catalogue`), and their text.

use super::wrap;
use crate::tables::tabular::table::{self, TextTable};

/// One benchmark as `list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkInfo {
    pub id: String,
    pub family: String,
    pub description: String,
    /// The parameters its cases sweep, for people.
    pub parameters: String,
    pub needs: String,
    /// Whether it can run on this host; the reason when not.
    pub runs_here: Result<(), crate::families::bench::family::Unsupported>,
}

/// One suite as `list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteInfo {
    pub name: String,
    pub description: String,
    /// The families of its cases, in the registry's order.
    pub families: Vec<String>,
}

/// Everything `list` shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Catalogue {
    pub benchmarks: Vec<BenchmarkInfo>,
    pub suites: Vec<SuiteInfo>,
}

/// A line per benchmark (id, whether it runs here, the start of its
/// description) within `width`; `long`: every field, wrapped; then the suites.
pub fn render_list(c: &Catalogue, width: usize, long: bool) -> String {
    let mut s = String::new();
    if long {
        for b in &c.benchmarks {
            s += &render_benchmark(b, width);
            s += "\n";
        }
    } else {
        let mut t = TextTable::new(&["benchmark", "here", "description"], 3);
        for b in &c.benchmarks {
            let here = if b.runs_here.is_ok() { "yes" } else { "no" };
            t.row(vec![b.id.clone(), here.into(), b.description.clone()]);
        }
        s += &table::fit(&t.render_natural(), width);
        s += "(oscycles list BENCH or list --long: parameters, needs and why a benchmark does not run here)\n";
    }
    s += "\nsuites:\n";
    let mut st = TextTable::new(&["suite", "families", "description"], 3);
    for su in &c.suites {
        st.row(vec![su.name.clone(), su.families.join(","), su.description.clone()]);
    }
    s += &table::fit(&st.render_natural(), width);
    s
}

/// Everything about one benchmark, wrapped to `width`.
pub fn render_benchmark(b: &BenchmarkInfo, width: usize) -> String {
    let sup = match &b.runs_here {
        Ok(()) => "yes".to_string(),
        Err(why) => format!("no: {why}"),
    };
    let mut s = format!("{} (family {})\n", b.id, b.family);
    for (k, v) in [("runs here", sup.as_str()), ("needs", &b.needs), ("parameters", &b.parameters), ("description", &b.description)] {
        s += &wrap(&format!("{k}: {v}"), width, "  ");
    }
    s
}

/// `oscycles list --sources`: each published evaluation, as cited, with the suites that
/// reproduce its tables, wrapped to `width`.
pub fn render_sources(width: usize) -> String {
    use crate::base::named::Named;
    use crate::base::sources::Source;
    let mut out = String::from("the published evaluations whose tables the suites reproduce:\n");
    for s in Source::ALL {
        out += &wrap(&format!("- {} ({}): {}", s.short(), s.name(), s.citation()), width, "");
        out += &wrap(&format!("suites: {}", s.suites().join(", ")), width, "    ");
    }
    out
}
