//! The HTML page of `report --history`: a plot per cell (every row's median
//! with its 95% interval as an error bar and a band, one series per host or
//! environment, marked steps ringed), laid out to the page width, then per
//! cell its summary and its table, marked steps coloured.

use super::html::wrap;
use super::markup::{Html, Markup, escape_html as esc};
use crate::data::results::UNIT_CYCLES;
use crate::present::report::history::{self, History, Options};
use crate::present::report::plot::{self, HistoryPoint};

const HTML: Html = Html { class: "cmp" };

/// The plot of one cell's history (the newest `last` rows; 0: all).
pub fn plot_of(h: &History, last: usize) -> plot::History {
    let shown = history::shown_from(h.rows.len(), last);
    let series = h
        .series()
        .into_iter()
        .map(|s| {
            let pts = h
                .rows
                .iter()
                .enumerate()
                .filter(|(i, r)| *i >= shown && r.series == s)
                .map(|(i, r)| HistoryPoint {
                    x: (i + 1) as f64,
                    y: r.median,
                    lo: r.interval.map_or(f64::NAN, |iv| iv.lo),
                    hi: r.interval.map_or(f64::NAN, |iv| iv.hi),
                    marked: r.step.is_some_and(|st| st.marked()),
                })
                .collect();
            (s, pts)
        })
        .collect();
    let unit = if h.unit == UNIT_CYCLES { "TSC cycles".to_string() } else { h.unit.clone() };
    plot::History {
        title: h.title(),
        x_desc: match &h.by {
            Some(k) => format!("row of the table (a value of {k}, by first run)"),
            None => "row of the table (a run, oldest first)".into(),
        },
        y_desc: format!("median ({unit})"),
        series,
    }
}

/// The whole page.
pub fn page(hs: &[History], opts: &Options) -> String {
    let mut body = "<h1>oscycles report: history</h1>\n".to_string();
    body += &format!(
        "<p>{} cells across the stored runs{}. Each point is a median with its 95% interval (error bar and band); a ring marks a step \
         judged faster or slower than the row before it in the same series.</p>\n",
        hs.len(),
        opts.by.as_ref().map_or(String::new(), |k| format!(", pooled per value of {}", esc(k)))
    );
    body += "<section id=\"history\"><h2>History plots</h2>\n<div class=\"plots\">\n";
    for (i, h) in hs.iter().enumerate() {
        let fig = match plot::history(&plot_of(h, opts.last)) {
            Ok(svg) => svg,
            Err(e) => format!("<p>(no plot: {})</p>", esc(&e.to_string())),
        };
        body += &format!(
            "<figure id=\"history{i}\" class=\"plot history\">{fig}<figcaption>{}</figcaption></figure>\n",
            esc(&history::summary(h))
        );
    }
    body += "</div></section>\n";
    for (i, h) in hs.iter().enumerate() {
        body += &format!("<section id=\"table{i}\">");
        body += &HTML.heading(3, &h.title());
        body += &HTML.paragraph(&history::summary(h));
        body += &HTML.table(&history::markup(h, opts.last));
        body += "</section>\n";
    }
    body += &HTML.paragraph(history::legend(&opts.policy).trim());
    wrap(&body)
}
