//! The registry as plain data for `oscycles list` (`report::list`), so that
//! the report never reads the registry itself.

use crate::registry;
use crate::report::list::{BenchmarkInfo, Catalogue, SuiteInfo};

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
    let mut c = Catalogue::default();
    for b in registry::benchmarks() {
        c.benchmarks.push(info(b));
    }
    for s in registry::SUITES {
        c.suites.push(SuiteInfo {
            name: s.name.to_string(),
            description: s.description.to_string(),
            families: s.families().into_iter().map(|f| f.name().to_string()).collect(),
        });
    }
    c
}

/// The benchmark `id`, asking only it whether it runs here.
pub fn benchmark(id: &str) -> Option<BenchmarkInfo> {
    for b in registry::benchmarks() {
        if b.id == id {
            return Some(info(b));
        }
    }
    None
}
