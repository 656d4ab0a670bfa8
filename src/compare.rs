//! Comparing two runs: every case present in both, the relative performance
//! of B against A (above 1 means B is better, whichever way the metric
//! improves), and whether the difference is within the runs' own noise.

use crate::results::{Better, CaseResult, CaseStatus, Metric, RunDoc};

/// B's performance relative to A's: A/B for costs, B/A for rates.
pub fn relative(a: &Metric, b: &Metric) -> f64 {
    match a.better {
        Better::Lower => a.summary.median / b.summary.median,
        Better::Higher => b.summary.median / a.summary.median,
    }
}

/// Within noise: the medians differ by at most twice the larger of the two
/// runs' spreads (CV x median, i.e. one standard deviation across batches).
pub fn within_noise(a: &Metric, b: &Metric) -> bool {
    let spread = |m: &Metric| m.summary.cv * m.summary.median.abs();
    (a.summary.median - b.summary.median).abs() <= 2.0 * spread(a).max(spread(b))
}

/// One compared case.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub benchmark: String,
    pub params: String,
    pub metric: String,
    pub unit: String,
    pub a: f64,
    pub b: f64,
    pub relative: f64,
    pub within_noise: bool,
}

/// Where a result was measured, as compared: environment, load, isolation.
fn context(r: &CaseResult, doc: &RunDoc) -> (String, String, String) {
    let (l, i) = r.load_isolation(doc);
    (r.env(doc).to_string(), l.to_string(), i.to_string())
}

/// The first metric of every case measured in both runs (same benchmark,
/// parameters, environment, load and isolation), in A's order.
pub fn rows(a: &RunDoc, b: &RunDoc) -> Vec<Row> {
    a.results
        .iter()
        .filter(|r| r.status == CaseStatus::Ok)
        .filter_map(|ra| {
            let ctx = context(ra, a);
            let rb = b.results.iter().find(|rb| {
                rb.status == CaseStatus::Ok && rb.benchmark == ra.benchmark && rb.params == ra.params && context(rb, b) == ctx
            })?;
            let ma = ra.metrics.first()?;
            let mb = rb.metric(&ma.name)?;
            let mut label = crate::results::params_label(&ra.params);
            if ctx.0 != "native" {
                label = format!("{label} [{}]", ctx.0).trim().to_string();
            }
            if (ctx.1.as_str(), ctx.2.as_str()) != ("idle", "pinned") {
                label = format!("{label} [{}/{}]", ctx.1, ctx.2).trim().to_string();
            }
            Some(Row {
                benchmark: ra.benchmark.clone(),
                params: label,
                metric: ma.name.clone(),
                unit: ma.unit.clone(),
                a: ma.summary.median,
                b: mb.summary.median,
                relative: relative(ma, mb),
                within_noise: within_noise(ma, mb),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Summary;

    fn metric(median: f64, cv: f64, better: Better) -> Metric {
        let s = Summary { n: 10, min: median, median, mean: median, p99: median, p999: median, max: median, stddev: cv * median, cv };
        Metric { name: "m".into(), unit: "u".into(), summary: s, ns: None, better }
    }

    #[test]
    fn relative_is_above_one_when_b_is_better() {
        assert_eq!(relative(&metric(200.0, 0.0, Better::Lower), &metric(100.0, 0.0, Better::Lower)), 2.0);
        assert_eq!(relative(&metric(100.0, 0.0, Better::Higher), &metric(300.0, 0.0, Better::Higher)), 3.0);
    }

    #[test]
    fn noise_is_twice_the_larger_spread() {
        assert!(within_noise(&metric(100.0, 0.05, Better::Lower), &metric(109.0, 0.01, Better::Lower)));
        assert!(!within_noise(&metric(100.0, 0.01, Better::Lower), &metric(109.0, 0.01, Better::Lower)));
    }
}
