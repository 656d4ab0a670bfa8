//! Names of the command line resolved: lists of names of a closed set,
//! CPUs, and suites and benchmarks against the registry (which the run
//! layer resolves, `run::prepared`, as every process of a run does).

use super::UsageError;
use super::values::split_list;
use crate::base::named::Named;
use crate::measure::placement;
use crate::run::prepared::{self, PrepareError};
use crate::run::registry::Suite;

/// The suites named by --suite, or a sentence naming the bad one.
pub fn resolve_suites(list: &str) -> Result<Vec<&'static Suite>, UsageError> {
    prepared::find_suites(&split_list(list)).map_err(usage)
}

/// The sentence of a name the run layer could not resolve.
fn usage(e: PrepareError) -> UsageError {
    UsageError(e.to_string())
}

/// A comma-separated list of names, each checked by `parse`.
pub fn resolve_names<T: Named>(option: &str, list: &str) -> Result<Vec<T>, UsageError> {
    let names = split_list(list);
    if names.is_empty() {
        return Err(UsageError(format!("{option} needs at least one of: {}", T::names())));
    }
    names.iter().map(|n| T::parse(n).ok_or_else(|| UsageError(format!("{option}: unknown '{n}'; valid: {}", T::names())))).collect()
}

/// The CPUs named by --cpus, or the first two allowed ones.
pub fn resolve_cpus(list: Option<&str>) -> Result<Vec<usize>, UsageError> {
    match list {
        Some(l) => {
            let cpus = placement::validate_cpus(l).map_err(|e| UsageError(format!("--cpus: {e}")))?;
            // Each CPU once: "0,0" would quietly measure cross-core cases on one core.
            let named: usize = l.split(',').filter_map(|part| placement::parse_cpu_list(part).ok()).map(|v| v.len()).sum();
            if named != cpus.len() {
                return Err(UsageError(format!("--cpus {l}: a CPU is named twice; name each CPU once (e.g. 0,1)")));
            }
            Ok(cpus)
        }
        None => {
            let allowed = placement::allowed_cpus();
            if allowed.is_empty() {
                return Err(UsageError("this process may run on no CPU at all (sched_getaffinity failed)".into()));
            }
            Ok(allowed.into_iter().take(2).collect())
        }
    }
}
