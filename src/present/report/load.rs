//! What a background load achieved, as a line for people: the noise tables'
//! "load during" column and `oscycles load`'s progress lines.

use crate::schema::condition;
use serde_json::{Map, Value};

/// The rates of a load's facts (`Load::facts_since`, a result's condition facts).
pub fn describe_rates(f: &Map<String, Value>) -> String {
    let g = |k: &str| f.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
    match f.get(condition::LOAD).and_then(Value::as_str) {
        Some("build") => format!("build {:.1} units/s", g(condition::BUILD_UNITS_PER_S)),
        Some("io") => format!(
            "disk w {:.0} r {:.0} MB/s, tcp {:.0} MB/s",
            g(condition::DISK_WRITE_MB_PER_S),
            g(condition::DISK_READ_MB_PER_S),
            g(condition::TCP_MB_PER_S)
        ),
        _ => "idle".into(),
    }
}
