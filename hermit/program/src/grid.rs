//! The cases of a benchmark with parameters, as the host names them: one
//! argument per benchmark, `cases.<benchmark>=<k1>/<k2>:<v1>/<v2>:<v1>/<v2>`,
//! the parameter names, then each case's values in that order.

use serde_json::{Map, Value};

/// One case's parameters: numbers where the value is a whole number.
pub type Point = Map<String, Value>;

/// The cases `k1/k2:v1/v2:v1/v2` names, parsed one at a time as they are
/// run: a Hermit program's thread switches and small allocations slow down
/// with every object alive on its heap (see `main`), so no list of them is
/// kept.
pub fn points(spec: &str) -> impl Iterator<Item = Result<Point, String>> + '_ {
    let mut rows = spec.split(':');
    let keys = rows.next().unwrap_or_default();
    rows.map(move |row| {
        let (nk, nv) = (keys.split('/').count(), row.split('/').count());
        if nk != nv {
            return Err(format!("case {row:?} has {nv} values for {nk} parameters"));
        }
        Ok(keys.split('/').zip(row.split('/')).map(|(k, v)| (k.to_string(), value(v))).collect())
    })
}

fn value(s: &str) -> Value {
    s.parse::<u64>().map_or_else(|_| Value::String(s.to_string()), Value::from)
}

/// A whole-number parameter of a point.
pub fn num(p: &Point, key: &str) -> Result<u64, String> {
    p.get(key).and_then(Value::as_u64).ok_or_else(|| format!("parameter {key} missing or not a whole number"))
}

/// A text parameter of a point.
pub fn text<'a>(p: &'a Point, key: &str) -> Result<&'a str, String> {
    p.get(key).and_then(Value::as_str).ok_or_else(|| format!("parameter {key} missing or not text"))
}
