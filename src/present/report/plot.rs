//! SVG plots (plotters' SVG backend, no fonts needed): lines of y against x,
//! and histograms over log2 buckets with a log count axis.

use crate::tables::tabular::figures::Bars;
use crate::tables::tabular::lines::{Lines, Point};
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Why a plot could not be drawn (plotters' own error, as text: its
/// type depends on the drawing backend).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PlotError(String);

fn drawing(e: impl std::fmt::Display) -> PlotError {
    PlotError(e.to_string())
}

const SIZE: (u32, u32) = (760, 440);

fn palette(i: usize) -> RGBColor {
    const C: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    C[i % C.len()]
}

fn range(v: impl Iterator<Item = f64> + Clone, log: bool) -> (f64, f64) {
    let v = v.filter(|x| x.is_finite() && (!log || *x > 0.0));
    let lo = v.clone().fold(f64::INFINITY, f64::min);
    let hi = v.fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (1.0, 10.0);
    }
    if log {
        (lo / 1.5, hi * 1.5)
    } else {
        // Linear axes start at zero for positive data (bars of cost read honestly).
        let pad = ((hi - lo) * 0.08).max(hi.abs() * 0.05).max(1e-9);
        (if lo >= 0.0 { 0.0 } else { lo - pad }, hi + pad)
    }
}

/// A title's font size: 17 pixels, smaller where the title would not fit
/// `width` (a character is about half the font size wide).
fn title_size(title: &str, width: u32) -> u32 {
    let n = title.chars().count().max(1) as u32;
    (width * 19 / 10 / n).clamp(11, 17)
}

/// Tick labels people read: 1.5k, 64k, 2M rather than 1500.0, 65536.0.
pub fn human(v: f64) -> String {
    let a = v.abs();
    let (x, unit) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    if a > 0.0 && a < 0.1 {
        // 0.01, 0.002: one significant digit, never "0.0".
        let digits = (-a.log10()).ceil() as usize;
        return format!("{v:.digits$}");
    }
    let s = if x.fract().abs() < 1e-9 || x.abs() >= 10.0 { format!("{x:.0}") } else { format!("{x:.1}") };
    format!("{s}{unit}")
}

/// Draws `p` into an SVG string.
pub fn lines(p: &Lines) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        let names: Vec<String> = p.series.iter().map(|s| s.0.clone()).collect();
        let (plot_area, legend_area) = root.split_horizontally(SIZE.0 - legend_width(&names));
        legend(&legend_area, &names)?;
        let xs = p.series.iter().flat_map(|s| s.1.iter().map(|q| q.x));
        let ys = p.series.iter().flat_map(|s| s.1.iter().flat_map(|q| [q.y, q.lo, q.hi]));
        // A log axis only where the data spans a decade (else it shows no ticks).
        let decade = |v: &mut dyn Iterator<Item = f64>| {
            let v: Vec<f64> = v.filter(|x| x.is_finite() && *x > 0.0).collect();
            let (lo, hi) = (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(0.0, f64::max));
            hi / lo >= 10.0
        };
        let log_x = p.log_x && decade(&mut xs.clone());
        let log_y = p.log_y && decade(&mut ys.clone());
        let (x0, x1) = range(xs, log_x);
        let (y0, y1) = p.y_range.unwrap_or_else(|| range(ys, log_y));
        let mut b = ChartBuilder::on(&plot_area);
        b.caption(&p.title, ("sans-serif", title_size(&p.title, plot_area.dim_in_pixel().0)))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut c = $chart.map_err(drawing)?;
                c.configure_mesh()
                    .x_desc(p.x_desc.as_str())
                    .y_desc(p.y_desc.as_str())
                    .x_label_formatter(&|v| human(*v))
                    .y_label_formatter(&|v| human(*v))
                    .draw()
                    .map_err(drawing)?;
                for (i, (_, pts)) in p.series.iter().enumerate() {
                    let color = palette(i);
                    // On a log axis an interval reaching zero or below is cut at the axis.
                    let floor = if log_y { y0 } else { f64::NEG_INFINITY };
                    let bars = pts
                        .iter()
                        .filter(|q| q.has_interval() && q.x.is_finite())
                        .map(|q| ErrorBar::new_vertical(q.x, q.lo.max(floor), q.y, q.hi.max(floor), color.stroke_width(1), 8));
                    c.draw_series(bars).map_err(drawing)?;
                    let pts: Vec<(f64, f64)> = pts.iter().filter(|q| q.x.is_finite() && q.y.is_finite()).map(|q| (q.x, q.y)).collect();
                    c.draw_series(LineSeries::new(pts.clone(), color.stroke_width(2))).map_err(drawing)?;
                    c.draw_series(pts.iter().map(|q| Circle::new(*q, 3, color.filled()))).map_err(drawing)?;
                }
            }};
        }
        match (log_x, log_y) {
            (true, true) => draw!(b.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())),
            (true, false) => draw!(b.build_cartesian_2d((x0..x1).log_scale(), y0..y1)),
            (false, true) => draw!(b.build_cartesian_2d(x0..x1, (y0..y1).log_scale())),
            (false, false) => draw!(b.build_cartesian_2d(x0..x1, y0..y1)),
        }
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// Width of the legend beside a plot (none for a single unnamed series).
fn legend_width(names: &[String]) -> u32 {
    if names.iter().all(|n| n.is_empty()) {
        return 0;
    }
    let longest = names.iter().map(|n| n.chars().count().min(LEGEND_CHARS)).max().unwrap_or(0) as u32;
    (longest * 7 + 44).clamp(90, 230)
}

/// Names in a legend are cut to this many characters.
const LEGEND_CHARS: usize = 26;

/// The legend, beside the data rather than over it: a line of each series'
/// colour and its name, top down.
fn legend<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>, names: &[String]) -> Result<(), PlotError> {
    if area.dim_in_pixel().0 == 0 {
        return Ok(());
    }
    for (i, name) in names.iter().enumerate() {
        let y = 48 + 20 * i as i32;
        let shown: String = if name.chars().count() > LEGEND_CHARS {
            name.chars().take(LEGEND_CHARS - 1).chain(std::iter::once('…')).collect()
        } else {
            name.clone()
        };
        area.draw(&PathElement::new(vec![(4, y), (24, y)], palette(i).stroke_width(3))).map_err(drawing)?;
        area.draw(&Text::new(shown, (30, y - 7), ("sans-serif", 13))).map_err(drawing)?;
    }
    Ok(())
}

/// Height of one row of a bar plot: a bar per series, at least 22 pixels.
fn row_height(series: usize) -> u32 {
    (series as u32 * 11 + 10).max(22)
}

/// The value axis of bars: from the data, the base and the intervals; log
/// only where it spans a decade.
fn bar_axis(p: &Bars) -> (f64, f64, bool) {
    let pos = |v: &f64| v.is_finite() && (!p.log || *v > 0.0);
    let pts: Vec<Point> = p.series.iter().flat_map(|s| s.1.iter().flatten().copied()).collect();
    let vals: Vec<f64> = pts.iter().map(|q| q.y).chain(p.base).filter(pos).collect();
    let (lo, hi) = (vals.iter().copied().fold(f64::INFINITY, f64::min), vals.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let log = p.log && lo > 0.0 && hi / lo >= 10.0;
    // Intervals widen the axis, but at most tenfold (log) or twofold beyond
    // the values: a whisker wider than that is cut at the axis' end.
    let (floor, ceiling) = if log { (lo / 10.0, hi * 10.0) } else { (lo.min(0.0), hi * 2.0) };
    let ivs = pts.iter().filter(|q| q.has_interval()).flat_map(|q| [q.lo, q.hi]).filter(pos).map(|v| v.clamp(floor, ceiling));
    let (a, b) = range(vals.iter().copied().chain(ivs), log);
    (a, b, log)
}

/// Draws bars into an SVG string: rows top down (their labels at the left,
/// as the table says them), a bar per series in each, its interval as a
/// whisker, and a line at the base where bars grow from one.
pub fn bars(p: &Bars) -> Result<String, PlotError> {
    let mut svg = String::new();
    let n = p.rows.len().max(1);
    let label_w = (p.rows.iter().map(|r| r.chars().count()).max().unwrap_or(4) as u32 * 7 + 16).clamp(60, 300);
    let size = (SIZE.0 + label_w.saturating_sub(70), 110 + n as u32 * row_height(p.series.len()));
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        let names: Vec<String> = p.series.iter().map(|s| s.0.clone()).collect();
        let (plot_area, legend_area) = root.split_horizontally(size.0 - legend_width(&names));
        legend(&legend_area, &names)?;
        let (x0, x1, log) = bar_axis(p);
        let mut b = ChartBuilder::on(&plot_area);
        b.caption(&p.title, ("sans-serif", title_size(&p.title, plot_area.dim_in_pixel().0)))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(label_w);
        let y = 0.0..n as f64;
        if log {
            bar_chart(&root, b.build_cartesian_2d((x0..x1).log_scale(), y).map_err(drawing)?, p, (x0, x1))
        } else {
            bar_chart(&root, b.build_cartesian_2d(x0..x1, y).map_err(drawing)?, p, (x0, x1))
        }?;
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// The bars, whiskers, base line and row labels on a chart built by [`bars`].
fn bar_chart<DB: DrawingBackend, X>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    mut c: ChartContext<DB, Cartesian2d<X, plotters::coord::types::RangedCoordf64>>,
    p: &Bars,
    (axis_start, axis_end): (f64, f64),
) -> Result<(), PlotError>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let n = p.rows.len();
    c.configure_mesh()
        .x_desc(p.value_desc.as_str())
        .x_label_formatter(&|v| human(*v))
        .y_labels(0)
        .disable_y_mesh()
        .draw()
        .map_err(drawing)?;
    let k = p.series.len().max(1) as f64;
    let from = p.base.unwrap_or(axis_start);
    for (j, (_, vals)) in p.series.iter().enumerate() {
        let color = palette(j);
        for (i, q) in vals.iter().enumerate() {
            let Some(q) = q.filter(|q| q.y.is_finite()) else { continue };
            // Row i from the top; its bars share 80% of the row's height.
            let top = (n - i) as f64 - 0.1 - 0.8 * j as f64 / k;
            let bottom = top - 0.8 / k;
            c.draw_series(std::iter::once(Rectangle::new([(from, top), (q.y, bottom)], color.filled()))).map_err(drawing)?;
            if q.has_interval() {
                let mid = (top + bottom) / 2.0;
                let (lo, hi) = (q.lo.clamp(axis_start, axis_end), q.hi.clamp(axis_start, axis_end));
                let bar = [vec![(lo, mid), (hi, mid)], vec![(lo, top), (lo, bottom)], vec![(hi, top), (hi, bottom)]];
                c.draw_series(bar.into_iter().map(|pts| PathElement::new(pts, BLACK.stroke_width(1)))).map_err(drawing)?;
            }
        }
    }
    if let Some(base) = p.base {
        c.draw_series(std::iter::once(PathElement::new(vec![(base, 0.0), (base, n as f64)], BLACK.stroke_width(2)))).map_err(drawing)?;
    }
    let style = TextStyle::from(("sans-serif", 13)).pos(Pos::new(HPos::Right, VPos::Center));
    for (i, label) in p.rows.iter().enumerate() {
        let (_, py) = c.backend_coord(&(axis_start, (n - i) as f64 - 0.5));
        let (px, _) = c.plotting_area().get_base_pixel();
        root.draw(&Text::new(label.clone(), (px - 8, py), style.clone())).map_err(drawing)?;
    }
    Ok(())
}

/// A cell's history: per series its medians joined by a line, a band and
/// an error bar from each point's 95% interval, and a ring around each
/// point whose step from the one before was marked (faster or slower).
#[derive(Debug, Clone)]
pub struct History {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    /// Per series: its name and points (x, median, interval low, interval
    /// high, marked); an interval of NaN where there is none.
    pub series: Vec<(String, Vec<HistoryPoint>)>,
}

/// One point of a history plot.
#[derive(Debug, Clone, Copy)]
pub struct HistoryPoint {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
    pub marked: bool,
}

/// Draws a history into an SVG string.
pub fn history(p: &History) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        let mut names: Vec<String> = p.series.iter().map(|s| s.0.clone()).collect();
        if names.len() == 1 && names[0].is_empty() {
            names[0] = "median, 95% interval".into();
        }
        names.push("marked step".into());
        let (plot_area, legend_area) = root.split_horizontally(SIZE.0 - legend_width(&names));
        legend(&legend_area, &names)?;
        let pts = p.series.iter().flat_map(|s| s.1.iter());
        let ys = pts.clone().flat_map(|q| [q.y, q.lo, q.hi]).filter(|v| v.is_finite());
        let (lo, hi) = (ys.clone().fold(f64::INFINITY, f64::min), ys.fold(f64::NEG_INFINITY, f64::max));
        let pad = ((hi - lo) * 0.08).max(hi.abs() * 0.01).max(1e-9);
        let (y0, y1) = if lo.is_finite() { (lo - pad, hi + pad) } else { (0.0, 1.0) };
        let x1 = pts.map(|q| q.x).fold(1.0, f64::max) + 0.5;
        let mut c = ChartBuilder::on(&plot_area)
            .caption(&p.title, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(0.5..x1, y0..y1)
            .map_err(drawing)?;
        c.configure_mesh()
            .x_desc(p.x_desc.as_str())
            .y_desc(p.y_desc.as_str())
            .x_label_formatter(&|v| if v.fract() == 0.0 { format!("{v:.0}") } else { String::new() })
            .y_label_formatter(&|v| human(*v))
            .draw()
            .map_err(drawing)?;
        let marked_ring = legend_marker(&legend_area, names.len() - 1)?;
        for (i, (_, pts)) in p.series.iter().enumerate() {
            history_series(&mut c, pts, palette(i))?;
        }
        c.draw_series(p.series.iter().flat_map(|s| s.1.iter()).filter(|q| q.marked).map(|q| Circle::new((q.x, q.y), 7, marked_ring)))
            .map_err(drawing)?;
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// The legend's "marked step" entry is a ring, not a line: redrawn as one.
fn legend_marker<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>, i: usize) -> Result<ShapeStyle, PlotError> {
    let ring = BLACK.stroke_width(2);
    if area.dim_in_pixel().0 > 0 {
        let y = 48 + 20 * i as i32;
        area.draw(&Rectangle::new([(2, y - 4), (26, y + 4)], WHITE.filled())).map_err(drawing)?;
        area.draw(&Circle::new((14, y), 6, ring)).map_err(drawing)?;
    }
    Ok(ring)
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>;

/// One series of a history: band, error bars, line, points.
fn history_series<DB: DrawingBackend>(c: &mut Chart<DB>, pts: &[HistoryPoint], color: RGBColor) -> Result<(), PlotError> {
    let with_iv: Vec<&HistoryPoint> = pts.iter().filter(|q| q.lo.is_finite() && q.hi.is_finite()).collect();
    if with_iv.len() >= 2 {
        let band: Vec<(f64, f64)> = with_iv.iter().map(|q| (q.x, q.lo)).chain(with_iv.iter().rev().map(|q| (q.x, q.hi))).collect();
        c.draw_series(std::iter::once(Polygon::new(band, color.mix(0.15).filled()))).map_err(drawing)?;
    }
    let bar = |q: &&HistoryPoint| {
        let w = 0.12;
        vec![
            PathElement::new(vec![(q.x, q.lo), (q.x, q.hi)], color.stroke_width(1)),
            PathElement::new(vec![(q.x - w, q.lo), (q.x + w, q.lo)], color.stroke_width(1)),
            PathElement::new(vec![(q.x - w, q.hi), (q.x + w, q.hi)], color.stroke_width(1)),
        ]
    };
    c.draw_series(with_iv.iter().flat_map(bar)).map_err(drawing)?;
    let line: Vec<(f64, f64)> = pts.iter().filter(|q| q.y.is_finite()).map(|q| (q.x, q.y)).collect();
    c.draw_series(LineSeries::new(line.clone(), color.stroke_width(2))).map_err(drawing)?;
    c.draw_series(line.iter().map(|q| Circle::new(*q, 3, color.filled()))).map_err(drawing)?;
    Ok(())
}

/// A histogram over log2 buckets (bucket k holds [2^k, 2^(k+1)) cycles),
/// counts on a log axis.
pub fn log2_histogram(title: &str, x_desc: &str, buckets: &[u64]) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        let n = buckets.len().max(1) as u32;
        let top = buckets.iter().copied().max().unwrap_or(1).max(1) as f64 * 2.0;
        let mut c = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(0u32..n, (0.5f64..top).log_scale())
            .map_err(drawing)?;
        c.configure_mesh()
            .x_desc(x_desc)
            .y_desc("samples (log)")
            .x_label_formatter(&|k| format!("2^{k}"))
            .y_label_formatter(&|v| human(*v))
            .draw()
            .map_err(drawing)?;
        c.draw_series(
            buckets
                .iter()
                .enumerate()
                .filter(|(_, v)| **v > 0)
                .map(|(k, v)| Rectangle::new([(k as u32, 0.5), (k as u32 + 1, *v as f64)], palette(0).filled())),
        )
        .map_err(drawing)?;
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_are_svg_with_their_labels() {
        let p = Lines {
            title: "t".into(),
            x_desc: "payload (bytes)".into(),
            y_desc: "MiB/s".into(),
            log_x: true,
            log_y: false,
            caption: String::new(),
            series: vec![("udp".into(), vec![Point::bare(64.0, 50.0), Point { x: 1450.0, y: 1000.0, lo: 900.0, hi: 1100.0 }])],
            y_range: Some((0.0, 1200.0)),
        };
        let s = lines(&p).unwrap();
        assert!(s.starts_with("<svg") && s.contains("payload (bytes)") && s.contains("MiB/s") && s.contains("udp"));
        // The point with an interval gets an error bar (three more lines), the bare one none.
        let without =
            lines(&Lines { series: vec![("udp".into(), vec![Point::bare(64.0, 50.0), Point::bare(1450.0, 1000.0)])], ..p.clone() })
                .unwrap();
        assert_eq!(
            s.matches("<polyline").count() + s.matches("<line").count(),
            without.matches("<polyline").count() + without.matches("<line").count() + 3,
            "{s}"
        );
        assert_eq!([human(1500.0), human(65536.0), human(2e6), human(0.5), human(100.0)], ["1.5k", "66k", "2M", "0.5", "100"]);
        assert_eq!([human(0.01), human(0.002)], ["0.01", "0.002"]);
        let h = log2_histogram("h", "delta (cycles)", &[5, 0, 3, 1]).unwrap();
        assert!(h.contains("<rect") && h.contains("samples (log)"));
    }

    #[test]
    fn bars_draw_each_row_and_series_with_its_whisker_and_base() {
        let b = Bars {
            title: "Rel".into(),
            value_desc: "Rel. Perf".into(),
            rows: vec!["lat_pipe".into(), "lat_fifo".into()],
            series: vec![
                ("uml against native".into(), vec![Some(Point { x: 0.0, y: 0.5, lo: 0.4, hi: 0.6 }), None]),
                ("container against native".into(), vec![Some(Point::bare(0.0, 1.1)), Some(Point::bare(0.0, 0.9))]),
            ],
            log: true,
            base: Some(1.0),
            caption: String::new(),
        };
        let s = bars(&b).unwrap();
        for text in ["lat_pipe", "lat_fifo", "uml against native", "Rel. Perf"] {
            assert!(s.contains(text), "{text} missing");
        }
        // Three bars (one value missing); one whisker of three lines.
        let without = bars(&Bars {
            series: vec![b.series[1].clone(), ("uml against native".into(), vec![Some(Point::bare(0.0, 0.5)), None])],
            ..b.clone()
        })
        .unwrap();
        assert_eq!(s.matches("<rect").count(), without.matches("<rect").count());
        assert_eq!(
            s.matches("<polyline").count() + s.matches("<line").count(),
            without.matches("<polyline").count() + without.matches("<line").count() + 3
        );
        // A whisker far beyond the values stretches the axis at most twofold
        // (linear: values within a decade), tenfold on a log axis.
        let iv = |y: f64| Some(Point { x: 0.0, y, lo: 1e-9, hi: 1e9 });
        let narrow = Bars { series: vec![("a".into(), vec![iv(2.0), Some(Point::bare(0.0, 3.0))])], ..b.clone() };
        let (lo, hi, log) = bar_axis(&narrow);
        assert!(!log && lo == 0.0 && hi <= 7.0, "{lo}..{hi}");
        let wide = Bars { series: vec![("a".into(), vec![iv(2.0), Some(Point::bare(0.0, 300.0))])], ..b };
        let (lo, hi, log) = bar_axis(&wide);
        assert!(log && lo >= 0.05 && hi <= 3000.0 * 1.5, "{lo}..{hi}");
    }
}
