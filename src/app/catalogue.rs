//! The registry as plain data for `oscycles list` (`report::list`), so that
//! the report never reads the registry itself.

use crate::present::report::list::{BenchmarkInfo, Catalogue, SuiteInfo};
use crate::run::registry;

fn info(b: &registry::Benchmark) -> BenchmarkInfo {
    BenchmarkInfo {
        id: b.id.clone(),
        family: b.family.name().to_string(),
        description: b.description.to_string(),
        parameters: b.parameters.to_string(),
        needs: b.needs.to_string(),
        runs_here: b.supported(),
    }
}

/// Every benchmark (each asked whether it runs here) and every suite.
pub fn catalogue() -> Catalogue {
    let suite = |s: &registry::Suite| SuiteInfo {
        name: s.name.to_string(),
        description: s.description.to_string(),
        families: s.families().into_iter().map(|f| f.name().to_string()).collect(),
    };
    Catalogue { benchmarks: registry::benchmarks().iter().map(info).collect(), suites: registry::SUITES.iter().map(suite).collect() }
}

/// The benchmark `id`, asking only it whether it runs here.
pub fn benchmark(id: &str) -> Option<BenchmarkInfo> {
    registry::find_benchmark(id).map(info)
}
