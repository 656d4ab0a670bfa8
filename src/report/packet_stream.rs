//! Packet stream against RPC (seed 002), and every core at once (seed 004).

use super::table::{Table, cycles};
use crate::results::{CaseResult, CaseStatus, RunDoc};
use std::collections::BTreeSet;

fn median(r: &CaseResult, metric: &str) -> f64 {
    r.metric(metric).map_or(f64::NAN, |m| m.summary.median)
}

pub fn render_packet_stream(doc: &RunDoc) -> String {
    let rs: Vec<&CaseResult> = doc.results.iter().filter(|r| r.benchmark == "packet-stream.sweep").collect();
    if rs.is_empty() {
        return String::new();
    }
    let sizes: BTreeSet<u64> = rs.iter().filter_map(|r| r.param_u64("bytes")).collect();
    let stream = |r: &&&CaseResult| r.param_str("mode") == Some("stream") && r.param_str("notify") == Some("futex");
    let batches: BTreeSet<u64> = rs.iter().filter(stream).filter_map(|r| r.param_u64("batch")).collect();
    let depths: BTreeSet<u64> = rs.iter().filter(stream).filter_map(|r| r.param_u64("depth")).collect();
    let where_ = rs
        .iter()
        .find_map(|r| r.placement.as_ref())
        .map_or(String::new(), |p| format!(" (source CPU {}, sink CPU {})", p.cpus[0], p.cpus[1]));
    let mut s =
        format!("packet-stream{where_}: thousands of packets/s / notifications per packet, by batch (rows) and queue depth (columns)\n");
    for &size in &sizes {
        let mut headers = vec![format!("{size} B: batch")];
        headers.extend(depths.iter().map(|d| format!("depth {d}")));
        let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
        for &b in &batches {
            let mut row = vec![b.to_string()];
            for &d in &depths {
                let r = doc.measured("packet-stream.sweep", |r| {
                    r.param_str("mode") == Some("stream")
                        && r.param_str("notify") == Some("futex")
                        && r.param_u64("bytes") == Some(size)
                        && r.param_u64("batch") == Some(b)
                        && r.param_u64("depth") == Some(d)
                });
                row.push(r.map_or("-".into(), |r| {
                    format!("{:.0}k / {:.2}", median(r, "packets_per_s") / 1e3, median(r, "notifications_per_packet"))
                }));
            }
            t.row(row);
        }
        s += &t.render();
    }
    // Stream against RPC, by packet size.
    s += "\npacket stream against synchronous RPC: throughput, submit-to-acknowledge latency (median / p99 TSC cycles), CPU ns per packet (source + sink)\n";
    let mut t = Table::new(&["bytes", "transport", "kpackets/s", "MiB/s", "notif/pkt", "lat median", "lat p99", "CPU ns/pkt"], 2);
    for &size in &sizes {
        let best = rs
            .iter()
            .filter(|r| r.status == CaseStatus::Ok && r.param_str("mode") == Some("stream") && r.param_u64("bytes") == Some(size))
            .max_by(|a, b| median(a, "packets_per_s").total_cmp(&median(b, "packets_per_s")));
        let mut rows: Vec<(String, Option<&CaseResult>)> = Vec::new();
        if let Some(b) = best {
            rows.push((
                format!(
                    "stream (best: batch {}, depth {}, {})",
                    b.param_u64("batch").unwrap_or(0),
                    b.param_u64("depth").unwrap_or(0),
                    b.param_str("notify").unwrap_or("")
                ),
                Some(*b),
            ));
        }
        rows.push((
            "rpc, shared memory + futex".into(),
            doc.measured("packet-stream.sweep", |r| r.param_str("mode") == Some("rpc-shm") && r.param_u64("bytes") == Some(size)),
        ));
        rows.push((
            "rpc, UNIX socket".into(),
            doc.measured("packet-stream.sweep", |r| r.param_str("mode") == Some("rpc-unix") && r.param_u64("bytes") == Some(size)),
        ));
        for (label, r) in rows {
            let Some(r) = r else { continue };
            let lat = r.metric("latency").map(|m| m.summary);
            t.row(vec![
                size.to_string(),
                label,
                format!("{:.1}", median(r, "packets_per_s") / 1e3),
                format!("{:.1}", median(r, "mib_per_s")),
                r.metric("notifications_per_packet").map_or("-".into(), |m| format!("{:.3}", m.summary.median)),
                lat.map_or("-".into(), |l| cycles(l.median)),
                lat.map_or("-".into(), |l| cycles(l.p99)),
                format!("{:.0}", median(r, "source_cpu_per_packet") + median(r, "sink_cpu_per_packet")),
            ]);
        }
    }
    s += &t.render();
    s += "  (a UNIX socket's wake-ups happen inside the kernel and are not counted: '-')\n";
    // Where RPC wins: median latency by depth (batch 1) against the RPCs.
    s += "\nsubmit-to-acknowledge latency, median TSC cycles: stream at batch 1 by queue depth, against synchronous RPC\n";
    let mut headers = vec!["bytes".to_string()];
    headers.extend(depths.iter().map(|d| format!("depth {d}")));
    headers.extend(["rpc shm".to_string(), "rpc unix".to_string()]);
    let mut lt = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    let lat = |r: Option<&CaseResult>| r.and_then(|r| r.metric("latency")).map_or("-".into(), |m| cycles(m.summary.median));
    for &size in &sizes {
        let mut row = vec![size.to_string()];
        for &d in &depths {
            row.push(lat(doc.measured("packet-stream.sweep", |r| {
                stream(&&r) && r.param_u64("bytes") == Some(size) && r.param_u64("batch") == Some(1) && r.param_u64("depth") == Some(d)
            })));
        }
        for mode in ["rpc-shm", "rpc-unix"] {
            row.push(lat(doc.measured("packet-stream.sweep", |r| r.param_str("mode") == Some(mode) && r.param_u64("bytes") == Some(size))));
        }
        lt.row(row);
    }
    s += &lt.render();
    let failed: Vec<String> = rs
        .iter()
        .filter(|r| r.status != CaseStatus::Ok)
        .map(|r| format!("  {}: {}", crate::results::params_label(&r.params), r.reason.as_deref().unwrap_or("")))
        .collect();
    if !failed.is_empty() {
        s += &format!("not measured:\n{}\n", failed.join("\n"));
    }
    s
}

pub fn render_parallel(doc: &RunDoc) -> String {
    let rs: Vec<&CaseResult> = doc.results.iter().filter(|r| r.family == "parallel").collect();
    if rs.is_empty() {
        return String::new();
    }
    // CPU counts as rows (a 64-CPU machine makes a long table, not a wide one).
    let ns: BTreeSet<u64> = rs.iter().filter_map(|r| r.param_u64("instances")).collect();
    let ops: Vec<&str> = ["getppid", "pipe", "futex", "eventfd"]
        .into_iter()
        .filter(|op| rs.iter().any(|r| r.benchmark == format!("parallel.{op}")))
        .collect();
    let mut headers = vec!["CPUs busy".to_string()];
    headers.extend(ops.iter().map(|op| op.to_string()));
    let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    for &n in &ns {
        let mut row = vec![n.to_string()];
        for op in &ops {
            let bench = format!("parallel.{op}");
            let alone = doc.measured(&bench, |r| r.param_u64("instances") == Some(1)).map(|r| median(r, "per_op"));
            row.push(match doc.measured(&bench, |r| r.param_u64("instances") == Some(n)) {
                Some(r) => {
                    let m = median(r, "per_op");
                    match alone {
                        Some(a) if n > 1 => format!("{} ({:.2}x)", cycles(m), m / a),
                        _ => cycles(m),
                    }
                }
                None => "-".into(),
            });
        }
        t.row(row);
    }
    format!(
        "parallel: median per-instance cost in TSC cycles (IPC one-way, same core) with one instance pinned per CPU, all at once; (slowdown against one CPU alone)\n{}",
        t.render()
    )
}
