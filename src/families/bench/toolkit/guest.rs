//! A case as a guest program of oscycles' own measured it (the Hermit
//! program, the seL4 root task, the GNU Mach task: `run::env::program`),
//! and the metrics its samples become: a family says which
//! ([`crate::families::bench::Family::guest_metrics`]), so that the code that reads the
//! program's answer names no family.
//!
//! A case's answer is `{"benchmark", "params"?, "status"}` with, when
//! `ok`, either `per_op_cycles` (a float per batch) or `inner` and
//! `batch_cycles` (the whole batch's count, which is divided here), its
//! `calibration`, and what the family reads besides (STREAM's `kernels`).

use super::sampling::per_op_metric;
use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::CaseError;
use crate::measure::clock::ClockInfo;
use crate::measure::harness::Measurement;
use serde_json::{Map, Value, json};

/// A case a guest program answered `ok`.
pub struct GuestCase<'a> {
    /// The planned case's parameters.
    pub params: &'a Params,
    /// What the program sent for it.
    pub sent: &'a Value,
    /// The guest's clock as the host reads the program's counts.
    pub clock: &'a ClockInfo,
    /// The system, as reasons name it ("Hermit").
    pub system: &'a str,
    /// The guest's CPUs.
    pub cpus: u32,
}

/// What a guest's case became: its metrics, its details, and how many
/// threads of the program it took (its placement).
pub struct GuestMeasured {
    pub metrics: Vec<Metric>,
    pub details: Map<String, Value>,
    pub threads: usize,
}

/// What the program may send beside its samples, kept among the details.
/// (seL4 on ARM: what its `words` count, its message registers, and the
/// harness's own work at the case's inner count.)
const SENT_DETAILS: [&str; 7] =
    ["round_trips", "requests_verified_by_server", "path", "words_checked", "message_registers", "payload_unit", "harness_batch_cycles"];

impl GuestCase<'_> {
    /// The harness's measurement as the program sent it: `per_op_cycles`,
    /// or `batch_cycles` divided by `inner`.
    pub fn measurement(&self) -> Result<Measurement, CaseError> {
        let c = self.sent;
        let numbers = |k: &str| -> Vec<f64> {
            c.get(k).and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default()
        };
        let inner = c.get("inner").and_then(Value::as_u64).unwrap_or(0);
        let mut samples = numbers("per_op_cycles");
        if samples.is_empty() && inner > 0 {
            samples = numbers("batch_cycles").iter().map(|b| b / inner as f64).collect();
        }
        if samples.is_empty() {
            return Err(CaseError::Failed("the program sent no samples".into()));
        }
        // A negative or absurd cost is refused as a document's is (issue 58).
        crate::data::results::check::guest_costs(&samples).map_err(|e| CaseError::Failed(format!("the program sent {e}")))?;
        let calibration: Vec<(u64, u64)> = c.get("calibration").cloned().and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default();
        Ok(Measurement { per_op_cycles: samples, inner, calibration, overhead_cycles: 0 })
    }

    /// The details of a measured case: the inner count, the calibration,
    /// and what the program sent beside them.
    pub fn details(&self, m: &Measurement) -> Map<String, Value> {
        let mut details = Map::new();
        details.insert("inner".into(), json!(m.inner));
        details.insert("calibration".into(), json!(m.calibration));
        for k in SENT_DETAILS {
            if let Some(v) = self.sent.get(k) {
                details.insert(k.into(), v.clone());
            }
        }
        details
    }

    /// The case as metrics `make` makes of its measurement, on `threads`.
    pub fn measured(
        &self,
        threads: usize,
        make: impl FnOnce(&Measurement, &ClockInfo) -> Result<Vec<Metric>, CaseError>,
    ) -> Result<GuestMeasured, CaseError> {
        let m = self.measurement()?;
        Ok(GuestMeasured { metrics: make(&m, self.clock)?, details: self.details(&m), threads })
    }

    /// The case as one per-operation metric named `name`, on one thread.
    pub fn per_op(&self, name: &str) -> Result<GuestMeasured, CaseError> {
        self.measured(1, |m, clock| Ok(vec![per_op_metric(name, m, clock)?]))
    }
}
