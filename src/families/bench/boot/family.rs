//! Boot time: measured by the host, once per environment of the run. The
//! runner hands the family a [`Starter`] for each environment; the family
//! starts it a few times (each timed to its /init's hello and to its first
//! result) and summarises; there is nothing to run inside one.

use crate::analysis::stats::Summary;
use crate::data::results::Metric;
use crate::families::bench::boot::table;
use crate::families::bench::family::round_trip;
use crate::families::bench::family::{FromHost, Started, Starter};
use crate::families::bench::schema::{self, boot};
use crate::families::bench::shows::Shows;
use crate::families::bench::{CaseError, Described, Venue};
use serde_json::json;

/// Starts the environment as often as the run says, each start timed.
fn from_host(starter: &mut dyn Starter) -> Result<FromHost, CaseError> {
    let n = starter.starts();
    let (mut times, mut failed, mut restarts) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        match starter.start_once(i) {
            Ok(Started { to_init_s, to_first_result_s, restarted_after }) => {
                times.push((to_init_s, to_first_result_s));
                // Timed from the last start; the repeated ones are said.
                if let Some(faults) = restarted_after {
                    restarts.push(json!({"start": i + 1, boot::RESTARTED_AFTER: faults}));
                }
            }
            // The first start failing: the environment does not come up
            // here; not two more timeouts' worth of trying.
            Err(why) if i == 0 => return Err(CaseError::NotApplicable(why.to_string())),
            // A later one: the others' times stand, and the failure is said.
            Err(why) => failed.push(format!("start {} of {n}: {why}", i + 1)),
        }
    }
    let mut out = FromHost::default();
    if !failed.is_empty() {
        out.note = Some(format!("{} of {n} starts failed; {}", failed.len(), failed.join("; ")));
        out.details.insert(boot::FAILED_STARTS.into(), json!(failed));
    }
    let init: Vec<f64> = times.iter().map(|t| t.0).collect();
    let first: Vec<f64> = times.iter().map(|t| t.1).collect();
    if let (Some(a), Some(b)) = (Summary::of(&init), Summary::of(&first)) {
        out.metrics = vec![Metric::cost(boot::TO_INIT, "s", a), Metric::cost(boot::TO_FIRST_RESULT, "s", b)];
    }
    out.details.insert(boot::BOOTS.into(), json!(times));
    if !restarts.is_empty() {
        out.details.insert(boot::RESTARTED_STARTS.into(), json!(restarts));
    }
    Ok(out)
}

/// boot.start: from starting an environment to its /init and first result.
pub const BOOT: Described<()> = Described {
    name: schema::boot::FAMILY,
    variants: &[()],
    info: |()| {
        (
            schema::boot::START_BENCH,
            "time from starting an environment (process, container, VMM) to the first act of its init (oscycles' hello) and to its first result (a tiny getpid run); median of several starts",
            "one per environment of --env; 3 starts each",
            "-",
        )
    },
    run: |(), _| Err(CaseError::NotApplicable("boot time is measured by the host for each environment of --env".into())),
    run_from_host: Some(|(), starter| from_host(starter)),
    venue: Venue::FromHost,
    // Under QEMU's instruction counter the time it measures is fictitious (boot time in seconds).
    measures_time: true,
    shows: Shows { tables: &[&table::TABLE], comparisons: &[&table::BootBars], plots: &[], headline: Some(&table::BootHeadline) },
    params: round_trip::<schema::boot::Params>,
    ..Described::BASE
};
