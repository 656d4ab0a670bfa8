//! Boot time: measured by the host, once per environment of the run (the
//! runner starts each environment and times its /init's hello and first
//! result); there is nothing to run inside one.

use crate::bench::{Benchmark, CaseCtx, CaseData, CaseError, Family, Runs};
use crate::schema;

/// boot.start: from starting an environment to its /init and first result.
pub struct Boot;

impl Family for Boot {
    fn name(&self) -> &'static str {
        schema::boot::FAMILY
    }
    fn benchmarks(&'static self) -> Vec<Benchmark> {
        Benchmark::single(
            self,
            schema::boot::START_BENCH,
            "time from starting an environment (process, container, VMM) to the first act of its init (oscycles' hello) and to its first result (a tiny getpid run); median of several starts",
            "one per environment of --env; 3 starts each",
            "-",
        )
    }
    fn run(&self, _: usize, _: &CaseCtx) -> Result<CaseData, CaseError> {
        Err(CaseError::NotApplicable("boot time is measured by the host for each environment of --env".into()))
    }
    fn runs(&self) -> Runs {
        Runs::FromHost
    }
}
