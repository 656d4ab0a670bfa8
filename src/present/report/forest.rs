//! The comparison as people would rather read it than a table: one row per
//! cell, B's performance relative to A's as a dot with its 95% interval on a
//! log scale, grouped by family, coloured by verdict, the equivalence band
//! shaded around 1 (a forest plot). Plain SVG, no script.

use super::export::markup::{Cell, Html, Markup, MarkupTable, escape_html as esc};
use crate::analysis::uncertainty::{verdict::Thresholds, verdict::Verdict};
use crate::data::compare::{Row, verdict_word};

/// The colour of a verdict (also used by the HTML comparison table).
pub fn colour(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "#1a7f37",
        Verdict::Slower => "#cf222e",
        Verdict::Same => "#0969da",
        Verdict::Unsure => "#8c959f",
    }
}

const ROW_H: f64 = 14.0;
const LABEL_W: f64 = 430.0;
const PLOT_W: f64 = 420.0;
const VERDICT_W: f64 = 150.0;

/// The x position of a ratio: a log scale from `lo` to `hi` (logarithms).
#[derive(Clone, Copy)]
struct Scale {
    lo: f64,
    hi: f64,
}

impl Scale {
    /// Every interval and the band, at least 0.8..1.25.
    fn of(rows: &[Row], policy: &Thresholds) -> Scale {
        let (mut lo, mut hi) = (1.0 / (1.0 + policy.margin) / 1.05, (1.0 + policy.margin) * 1.05);
        for r in rows {
            let (a, b) = r.judged.interval.map_or((r.judged.ratio, r.judged.ratio), |i| (i.lo, i.hi));
            if a.is_finite() && a > 0.0 {
                lo = f64::min(lo, a);
            }
            if b.is_finite() && b > 0.0 {
                hi = f64::max(hi, b);
            }
        }
        Scale { lo: lo.max(1e-3).ln(), hi: hi.min(1e3).ln() }
    }

    fn x(self, v: f64) -> f64 {
        LABEL_W + (v.max(1e-3).ln() - self.lo) / (self.hi - self.lo) * PLOT_W
    }
}

/// The band of `same`, the line at 1, the axis ticks and the title.
fn axes(x: Scale, top: f64, bottom: f64, policy: &Thresholds) -> String {
    let mut s = format!(
        "<rect x=\"{:.1}\" y=\"{top}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#ddf4ff\"/>\n",
        x.x(1.0 / (1.0 + policy.margin)),
        x.x(1.0 + policy.margin) - x.x(1.0 / (1.0 + policy.margin)),
        bottom - top
    );
    s += &format!("<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{top}\" y2=\"{bottom}\" stroke=\"#333\"/>\n", x.x(1.0));
    for t in [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.8, 0.9, 1.0, 1.1, 1.25, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0] {
        let tx = x.x(t);
        if (LABEL_W..=LABEL_W + PLOT_W).contains(&tx) {
            s += &format!(
                "<line x1=\"{tx:.1}\" x2=\"{tx:.1}\" y1=\"{bottom}\" y2=\"{:.1}\" stroke=\"#333\"/><text x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t}</text>\n",
                bottom + 4.0,
                bottom + 16.0
            );
        }
    }
    s + &format!(
        "<text x=\"{:.1}\" y=\"18\" text-anchor=\"middle\">B relative to A (log scale; above 1: B better); band: same within +-{:.0}%</text>\n",
        LABEL_W + PLOT_W / 2.0,
        policy.margin * 100.0
    )
}

/// One row's label, interval, dot and verdict at height `y`.
fn marks(r: &Row, x: Scale, y: f64) -> String {
    let c = colour(r.judged.verdict);
    let label = format!("{} {} {}", r.benchmark, r.params, r.metric);
    let label: String = label.chars().take(70).collect();
    let mut s = format!("<text x=\"14\" y=\"{y:.1}\">{}</text>\n", esc(&label));
    if let Some(i) = r.judged.interval {
        s += &format!(
            "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{c}\" stroke-width=\"2\"/>\n",
            x.x(i.lo),
            x.x(i.hi),
            y - 4.0,
            y - 4.0
        );
    }
    s += &format!("<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{c}\"/>\n", x.x(r.judged.ratio), y - 4.0);
    s + &format!(
        "<text x=\"{:.1}\" y=\"{y:.1}\" fill=\"{c}\">{:.2} {}</text>\n",
        LABEL_W + PLOT_W + 8.0,
        r.judged.ratio,
        verdict_word(r.judged.verdict)
    )
}

/// The forest plot of `rows`, grouped by family in their order.
pub fn svg(rows: &[Row], policy: &Thresholds) -> String {
    let x = Scale::of(rows, policy);
    let families = crate::tables::tabular::distinct(rows.iter().map(|r| r.family.as_str()));
    let lines = rows.len() + families.len();
    let height = 40.0 + lines as f64 * ROW_H + 30.0;
    let width = LABEL_W + PLOT_W + VERDICT_W;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n"
    );
    let top = 30.0;
    s += &axes(x, top, height - 30.0, policy);
    let mut y = top + ROW_H;
    for f in families {
        s += &format!("<text x=\"4\" y=\"{y:.1}\" font-weight=\"bold\">{}</text>\n", esc(f));
        y += ROW_H;
        for r in rows.iter().filter(|r| r.family == f) {
            s += &marks(r, x, y);
            y += ROW_H;
        }
    }
    s += "</svg>\n";
    s
}

/// The columns of the comparison table.
const COLUMNS: [&str; 12] = [
    "family",
    "benchmark",
    "case",
    "metric",
    "unit",
    "A median",
    "B median",
    "rel. (B vs A)",
    "95% interval",
    "p",
    "rounds A/B",
    "verdict",
];

/// The comparison as an HTML table, verdicts coloured; rows ordered by
/// ratio, worst first, within each family.
pub fn table(rows: &[Row]) -> String {
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by(|a, b| a.family.cmp(&b.family).then(a.judged.ratio.total_cmp(&b.judged.ratio)));
    let mut t = MarkupTable::new(&COLUMNS, &[5, 6, 7, 8, 9, 10]);
    for r in sorted {
        let j = &r.judged;
        let mut cells: Vec<Cell> = [
            r.family.clone(),
            r.benchmark.clone(),
            r.params.clone(),
            r.metric.clone(),
            r.unit.clone(),
            format!("{:.1}", r.a),
            format!("{:.1}", r.b),
            format!("{:.3}", j.ratio),
            j.interval.map_or("-".into(), |i| format!("[{:.3}, {:.3}]", i.lo, i.hi)),
            j.p.map_or("-".into(), |p| format!("{p:.3}")),
            format!("{}/{}", j.rounds.0, j.rounds.1),
        ]
        .map(Cell::from)
        .to_vec();
        cells.push(Cell::coloured(super::compare::verdict_cell(j), colour(j.verdict)));
        t.row(cells);
    }
    Html { class: "cmp" }.table(&t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::uncertainty::bootstrap::Interval;
    use crate::data::compare::Judged;

    fn row(family: &str, ratio: f64, verdict: Verdict) -> Row {
        Row {
            benchmark: format!("{family}.x"),
            params: "<p>".into(),
            family: family.into(),
            metric: "m".into(),
            unit: "u".into(),
            a: 1.0,
            b: 1.0,
            judged: Judged {
                ratio,
                interval: Some(Interval { lo: ratio * 0.9, hi: ratio * 1.1 }),
                p: Some(0.01),
                verdict,
                rounds_needed: None,
                rounds: (5, 5),
                paired: false,
            },
            counts_changed: vec![],
        }
    }

    #[test]
    fn one_mark_per_row_grouped_and_escaped() {
        let rows = vec![row("ipc", 0.5, Verdict::Slower), row("syscall", 1.0, Verdict::Same), row("ipc", 2.0, Verdict::Faster)];
        let s = svg(&rows, &Thresholds::default());
        assert_eq!(s.matches("<circle").count(), 3);
        assert_eq!(s.matches("font-weight=\"bold\"").count(), 2, "one heading per family");
        assert!(s.contains(colour(Verdict::Slower)) && s.contains(colour(Verdict::Faster)));
        assert!(!s.contains("<p>") && s.contains("&lt;p&gt;"));
        let t = table(&rows);
        assert_eq!(t.matches("<tr>").count(), 4);
        assert!(t.find("0.500").unwrap() < t.find("2.000").unwrap(), "worst first within a family");
    }
}
