//! The comparison as people would rather read it than a table: one row per
//! cell, B's performance relative to A's as a dot with its 95% interval on a
//! log scale, grouped by family, coloured by verdict, the equivalence band
//! shaded around 1 (a forest plot). Plain SVG, no script.

use super::export::markup::{Align, Cell, Html, Markup, MarkupTable, escape_html as esc};
use crate::compare::{Row, verdict_word};
use crate::uncertainty::{Policy, Verdict};

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

/// The forest plot of `rows`, grouped by family in their order.
pub fn svg(rows: &[Row], policy: &Policy) -> String {
    // The x range: every interval and the band, on a log scale, at least 0.8..1.25.
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
    let (lo, hi) = (lo.max(1e-3).ln(), hi.min(1e3).ln());
    let x = |v: f64| LABEL_W + (v.max(1e-3).ln() - lo) / (hi - lo) * PLOT_W;
    let mut families: Vec<&str> = Vec::new();
    for r in rows {
        if !families.contains(&r.family.as_str()) {
            families.push(&r.family);
        }
    }
    let lines = rows.len() + families.len();
    let height = 40.0 + lines as f64 * ROW_H + 30.0;
    let width = LABEL_W + PLOT_W + VERDICT_W;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n"
    );
    let top = 30.0;
    let bottom = height - 30.0;
    // The band of `same`, the line at 1, the axis ticks.
    s += &format!(
        "<rect x=\"{:.1}\" y=\"{top}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#ddf4ff\"/>\n",
        x(1.0 / (1.0 + policy.margin)),
        x(1.0 + policy.margin) - x(1.0 / (1.0 + policy.margin)),
        bottom - top
    );
    s += &format!("<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{top}\" y2=\"{bottom}\" stroke=\"#333\"/>\n", x(1.0));
    for t in [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.8, 0.9, 1.0, 1.1, 1.25, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0] {
        let tx = x(t);
        if (LABEL_W..=LABEL_W + PLOT_W).contains(&tx) {
            s += &format!(
                "<line x1=\"{tx:.1}\" x2=\"{tx:.1}\" y1=\"{bottom}\" y2=\"{:.1}\" stroke=\"#333\"/><text x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t}</text>\n",
                bottom + 4.0,
                bottom + 16.0
            );
        }
    }
    s += &format!(
        "<text x=\"{:.1}\" y=\"18\" text-anchor=\"middle\">B relative to A (log scale; above 1: B better); band: same within +-{:.0}%</text>\n",
        LABEL_W + PLOT_W / 2.0,
        policy.margin * 100.0
    );
    let mut y = top + ROW_H;
    for f in families {
        s += &format!("<text x=\"4\" y=\"{y:.1}\" font-weight=\"bold\">{}</text>\n", esc(f));
        y += ROW_H;
        for r in rows.iter().filter(|r| r.family == f) {
            let c = colour(r.judged.verdict);
            let label = format!("{} {} {}", r.benchmark, r.params, r.metric);
            let label: String = label.chars().take(70).collect();
            s += &format!("<text x=\"14\" y=\"{y:.1}\">{}</text>\n", esc(&label));
            if let Some(i) = r.judged.interval {
                s += &format!(
                    "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{c}\" stroke-width=\"2\"/>\n",
                    x(i.lo),
                    x(i.hi),
                    y - 4.0,
                    y - 4.0
                );
            }
            s += &format!("<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{c}\"/>\n", x(r.judged.ratio), y - 4.0);
            s += &format!(
                "<text x=\"{:.1}\" y=\"{y:.1}\" fill=\"{c}\">{:.2} {}</text>\n",
                LABEL_W + PLOT_W + 8.0,
                r.judged.ratio,
                verdict_word(r.judged.verdict)
            );
            y += ROW_H;
        }
    }
    s += "</svg>\n";
    s
}

/// The columns of the comparison table.
const COLUMNS: [(&str, Align); 12] = [
    ("family", Align::Left),
    ("benchmark", Align::Left),
    ("case", Align::Left),
    ("metric", Align::Left),
    ("unit", Align::Left),
    ("A median", Align::Right),
    ("B median", Align::Right),
    ("rel. (B vs A)", Align::Right),
    ("95% interval", Align::Right),
    ("p", Align::Right),
    ("rounds A/B", Align::Right),
    ("verdict", Align::Left),
];

/// The comparison as an HTML table, verdicts coloured; rows ordered by
/// ratio, worst first, within each family.
pub fn table(rows: &[Row]) -> String {
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by(|a, b| a.family.cmp(&b.family).then(a.judged.ratio.total_cmp(&b.judged.ratio)));
    let mut t = MarkupTable::new(&COLUMNS);
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
    use crate::compare::Judged;
    use crate::uncertainty::Interval;

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
            },
        }
    }

    #[test]
    fn one_mark_per_row_grouped_and_escaped() {
        let rows = vec![row("ipc", 0.5, Verdict::Slower), row("syscall", 1.0, Verdict::Same), row("ipc", 2.0, Verdict::Faster)];
        let s = svg(&rows, &Policy::default());
        assert_eq!(s.matches("<circle").count(), 3);
        assert_eq!(s.matches("font-weight=\"bold\"").count(), 2, "one heading per family");
        assert!(s.contains(colour(Verdict::Slower)) && s.contains(colour(Verdict::Faster)));
        assert!(!s.contains("<p>") && s.contains("&lt;p&gt;"));
        let t = table(&rows);
        assert_eq!(t.matches("<tr>").count(), 4);
        assert!(t.find("0.500").unwrap() < t.find("2.000").unwrap(), "worst first within a family");
    }
}
