//! `oscycles compare A B`: who A and B are, every common case, then the seed
//! tables side by side where the runs have their rows.

use super::table::{Table, cycles};
use crate::compare::Row;
use crate::results::RunDoc;

fn who(tag: &str, d: &RunDoc) -> String {
    format!(
        "{tag}: {} ({}), {} {}, env {}, load {}, isolation {}, TSC {:.3} GHz\n",
        d.id,
        d.started_at,
        d.host.hostname,
        d.host.kernel_release,
        d.environment.name,
        d.condition.load,
        d.condition.isolation,
        d.host.clock.tsc_hz / 1e9
    )
}

fn value(v: f64, unit: &str) -> String {
    if unit == crate::results::UNIT_CYCLES { cycles(v) } else { format!("{v:.1}") }
}

pub fn render(a: &RunDoc, b: &RunDoc, rows: &[Row]) -> String {
    let mut s = who("A", a) + &who("B", b);
    s += "rel. = B's performance relative to A's: above 1 means B is better (A/B for costs, B/A for rates);\n";
    s += "~ = within noise: the medians differ by less than twice the larger standard deviation across batches.\n\n";
    let mut t = Table::new(&["benchmark", "case", "metric", "unit", "A median", "B median", "rel.", ""], 4);
    for r in rows {
        t.row(vec![
            r.benchmark.clone(),
            r.params.clone(),
            r.metric.clone(),
            r.unit.clone(),
            value(r.a, &r.unit),
            value(r.b, &r.unit),
            format!("{:.2}", r.relative),
            if r.within_noise { "~".into() } else { String::new() },
        ]);
    }
    s += &t.render();
    let noisy = rows.iter().filter(|r| r.within_noise).count();
    s += &format!("{} cases in common; {noisy} within noise\n", rows.len());
    let seed = super::lmbench::render(&[a, b]);
    if !seed.is_empty() {
        s += "\n";
        s += &seed;
    }
    s
}
