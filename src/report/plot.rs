//! SVG plots (plotters' SVG backend, no fonts needed): lines of y against x,
//! and histograms over log2 buckets with a log count axis.

use plotters::prelude::*;

/// A plot to draw: labelled axes with units, a caption naming where the
/// numbers come from, and named series of (x, y) points.
#[derive(Debug, Clone)]
pub struct Lines {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub log_x: bool,
    pub log_y: bool,
    pub caption: String,
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// The y axis, where several plots share it (None: from the data).
    pub y_range: Option<(f64, f64)>,
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
    let s = if x.fract().abs() < 1e-9 || x.abs() >= 10.0 { format!("{x:.0}") } else { format!("{x:.1}") };
    format!("{s}{unit}")
}

/// Draws `p` into an SVG string.
pub fn lines(p: &Lines) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let xs = p.series.iter().flat_map(|s| s.1.iter().map(|q| q.0));
        let ys = p.series.iter().flat_map(|s| s.1.iter().map(|q| q.1));
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
        let mut b = ChartBuilder::on(&root);
        b.caption(&p.title, ("sans-serif", 17)).margin(12).x_label_area_size(44).y_label_area_size(70);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut c = $chart.map_err(|e| e.to_string())?;
                c.configure_mesh()
                    .x_desc(p.x_desc.as_str())
                    .y_desc(p.y_desc.as_str())
                    .x_label_formatter(&|v| human(*v))
                    .y_label_formatter(&|v| human(*v))
                    .draw()
                    .map_err(|e| e.to_string())?;
                for (i, (name, pts)) in p.series.iter().enumerate() {
                    let color = palette(i);
                    let pts: Vec<(f64, f64)> = pts.iter().copied().filter(|q| q.0.is_finite() && q.1.is_finite()).collect();
                    c.draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                        .map_err(|e| e.to_string())?
                        .label(name.as_str())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
                    c.draw_series(pts.iter().map(|q| Circle::new(*q, 3, color.filled()))).map_err(|e| e.to_string())?;
                }
                c.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw().map_err(|e| e.to_string())?;
            }};
        }
        match (log_x, log_y) {
            (true, true) => draw!(b.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())),
            (true, false) => draw!(b.build_cartesian_2d((x0..x1).log_scale(), y0..y1)),
            (false, true) => draw!(b.build_cartesian_2d(x0..x1, (y0..y1).log_scale())),
            (false, false) => draw!(b.build_cartesian_2d(x0..x1, y0..y1)),
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// A histogram over log2 buckets (bucket k holds [2^k, 2^(k+1)) cycles),
/// counts on a log axis.
pub fn log2_histogram(title: &str, x_desc: &str, buckets: &[u64]) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let n = buckets.len().max(1) as u32;
        let top = buckets.iter().copied().max().unwrap_or(1).max(1) as f64 * 2.0;
        let mut c = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(0u32..n, (0.5f64..top).log_scale())
            .map_err(|e| e.to_string())?;
        c.configure_mesh()
            .x_desc(x_desc)
            .y_desc("samples (log)")
            .x_label_formatter(&|k| format!("2^{k}"))
            .y_label_formatter(&|v| human(*v))
            .draw()
            .map_err(|e| e.to_string())?;
        c.draw_series(
            buckets
                .iter()
                .enumerate()
                .filter(|(_, v)| **v > 0)
                .map(|(k, v)| Rectangle::new([(k as u32, 0.5), (k as u32 + 1, *v as f64)], palette(0).filled())),
        )
        .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
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
            series: vec![("udp".into(), vec![(64.0, 50.0), (1450.0, 1000.0)])],
            y_range: None,
        };
        let s = lines(&p).unwrap();
        assert!(s.starts_with("<svg") && s.contains("payload (bytes)") && s.contains("MiB/s") && s.contains("udp"));
        assert_eq!([human(1500.0), human(65536.0), human(2e6), human(0.5), human(100.0)], ["1.5k", "66k", "2M", "0.5", "100"]);
        let h = log2_histogram("h", "delta (cycles)", &[5, 0, 3, 1]).unwrap();
        assert!(h.contains("<rect") && h.contains("samples (log)"));
    }
}
