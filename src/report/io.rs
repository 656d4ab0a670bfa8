//! Seed 002's I/O tables: throughput by packet size (rows sizes, columns
//! path x protocol) with loss and CPU cost per MiB beside it, request /
//! response round trips, and throughput by block size (rows sizes, columns
//! read / write x direct / cached).

use super::table::{Table, percent};
use crate::results::{CaseResult, CaseStatus, RunDoc};

fn num(r: &CaseResult, key: &str) -> f64 {
    r.details.get(key).and_then(|v| v.as_f64()).unwrap_or(f64::NAN)
}

fn size_label(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

/// A cell: the value, or n/a / failed.
fn cell(r: Option<&CaseResult>, f: impl Fn(&CaseResult) -> String) -> String {
    match r {
        None => "-".into(),
        Some(r) if r.status == CaseStatus::Ok => f(r),
        Some(r) if r.status == CaseStatus::NotApplicable => "n/a".into(),
        Some(_) => "failed".into(),
    }
}

fn reasons(rs: &[&CaseResult]) -> String {
    let mut out: Vec<String> = Vec::new();
    for r in rs.iter().filter(|r| r.status != CaseStatus::Ok) {
        let line = format!(
            "  {} {}: {}",
            r.benchmark,
            r.param_str("path").or(r.param_str("mode")).unwrap_or(""),
            r.reason.as_deref().unwrap_or("")
        );
        if !out.contains(&line) {
            out.push(line);
        }
    }
    if out.is_empty() { String::new() } else { format!("n/a and failed:\n{}\n", out.join("\n")) }
}

fn sizes(rs: &[&CaseResult], key: &str) -> Vec<u64> {
    let mut v: Vec<u64> = rs.iter().filter_map(|r| r.param_u64(key)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

pub fn render_net(doc: &RunDoc) -> String {
    let rs: Vec<&CaseResult> = doc.results.iter().filter(|r| r.benchmark == "net.udp" || r.benchmark == "net.tcp").collect();
    let rr: Vec<&CaseResult> = doc.results.iter().filter(|r| r.benchmark == "net.tcp-rr").collect();
    if rs.is_empty() && rr.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let paths = ["loopback", "veth"];
    let find = |bench: &str, path: &str, bytes: u64| {
        rs.iter().copied().find(|r| r.benchmark == bench && r.param_str("path") == Some(path) && r.param_u64("bytes") == Some(bytes))
    };
    if !rs.is_empty() {
        let cols: Vec<(&str, &str)> = paths
            .iter()
            .flat_map(|p| [(*p, "net.udp"), (*p, "net.tcp")])
            .filter(|(p, b)| rs.iter().any(|r| r.param_str("path") == Some(p) && r.benchmark == *b))
            .collect();
        let heads: Vec<String> = cols.iter().map(|(p, b)| format!("{p} {}", b.trim_start_matches("net.").to_uppercase())).collect();
        let mut h: Vec<&str> = vec!["payload"];
        h.extend(heads.iter().map(String::as_str));
        let mut t = Table::new(&h, 1);
        let mut bytes = sizes(&rs, "bytes");
        // UDP's largest payload (65507) and TCP's (65536) share a row.
        if bytes.contains(&65507) && bytes.contains(&65536) {
            bytes.retain(|&b| b != 65507);
        }
        for b in bytes {
            let mut row = vec![if b == 65536 { "64 KiB (UDP 65507 B)".into() } else { size_label(b) }];
            for (p, bench) in &cols {
                let r = find(bench, p, b).or_else(|| if b == 65536 { find(bench, p, 65507) } else { None });
                row.push(cell(r, |r| format!("{:.1}", num(r, "mib_per_s"))));
            }
            t.row(row);
        }
        out += &format!("net: payload throughput at the receiver in MiB/s by payload size (seed 002)\n{}", t.render());
        let mut d = Table::new(
            &["path", "proto", "payload", "MiB/s", "msgs/s", "UDP loss", "send CPU ms/MiB", "recv CPU ms/MiB", "CV", "CPUs (send, recv)"],
            3,
        );
        for r in rs.iter().filter(|r| r.status == CaseStatus::Ok) {
            let udp = r.benchmark == "net.udp";
            let cv = r.metric("throughput").map_or(f64::NAN, |m| m.summary.cv);
            let cpus = r.placement.as_ref().map_or(String::new(), |p| {
                p.observed_cpus.iter().map(|c| c.map_or("?".into(), |c| c.to_string())).collect::<Vec<_>>().join(",")
            });
            d.row(vec![
                r.param_str("path").unwrap_or("").into(),
                r.benchmark.trim_start_matches("net.").into(),
                size_label(r.param_u64("bytes").unwrap_or(0)),
                format!("{:.1}", num(r, "mib_per_s")),
                format!("{:.0}", num(r, "msgs_per_s")),
                if udp { format!("{:.2}%", 100.0 * num(r, "udp_loss")) } else { "-".into() },
                format!("{:.2}", num(r, "sender_cpu_ms_per_mib")),
                format!("{:.2}", num(r, "receiver_cpu_ms_per_mib")),
                percent(cv),
                cpus,
            ]);
        }
        out += &format!(
            "\nnet per case: msgs/s = datagrams received (UDP) or bytes received / payload (TCP); CPU time per MiB received, per thread\n{}",
            d.render()
        );
    }
    if !rr.is_empty() {
        let mut t = Table::new(&["path", "payload", "RTT median us", "cycles", "p99 us", "transactions"], 2);
        let hz = doc.host.clock.tsc_hz;
        for r in &rr {
            let Some(m) = r.metric("rtt").filter(|_| r.status == CaseStatus::Ok) else {
                t.row(vec![
                    r.param_str("path").unwrap_or("").into(),
                    size_label(r.param_u64("bytes").unwrap_or(0)),
                    cell(Some(r), |_| String::new()),
                ]);
                continue;
            };
            t.row(vec![
                r.param_str("path").unwrap_or("").into(),
                size_label(r.param_u64("bytes").unwrap_or(0)),
                format!("{:.1}", m.summary.median * 1e6 / hz),
                format!("{:.0}", m.summary.median),
                format!("{:.1}", m.summary.p99 * 1e6 / hz),
                format!("{:.0}", num(r, "transactions")),
            ]);
        }
        out += &format!(
            "\nnet: TCP request/response, one transaction in flight, client on the first CPU, server on the second\n{}",
            t.render()
        );
    }
    let all: Vec<&CaseResult> = rs.iter().chain(rr.iter()).copied().collect();
    out + &reasons(&all)
}

pub fn render_blk(doc: &RunDoc) -> String {
    let rs: Vec<&CaseResult> = doc.results.iter().filter(|r| r.family == "blk").collect();
    if rs.is_empty() {
        return String::new();
    }
    let cols = [("blk.read", "direct"), ("blk.read", "cached"), ("blk.write", "direct"), ("blk.write", "cached")];
    let mut t = Table::new(&["block", "read direct", "read cached", "write direct", "write cached"], 1);
    let mut d = Table::new(&["op", "mode", "block", "MiB/s", "IOPS", "CPU ms/MiB", "CPU util", "CV", "fdatasync after"], 3);
    for b in sizes(&rs, "block") {
        let mut row = vec![size_label(b)];
        for (bench, mode) in cols {
            let r =
                rs.iter().copied().find(|r| r.benchmark == bench && r.param_str("mode") == Some(mode) && r.param_u64("block") == Some(b));
            row.push(cell(r, |r| format!("{:.1}", num(r, "mib_per_s"))));
            if let Some(r) = r.filter(|r| r.status == CaseStatus::Ok) {
                let sync = num(r, "fdatasync_after_s");
                d.row(vec![
                    bench.trim_start_matches("blk.").into(),
                    mode.into(),
                    size_label(b),
                    format!("{:.1}", num(r, "mib_per_s")),
                    format!("{:.0}", num(r, "iops")),
                    format!("{:.2}", num(r, "cpu_ms_per_mib")),
                    percent(num(r, "cpu_util")),
                    percent(r.metric("throughput").map_or(f64::NAN, |m| m.summary.cv)),
                    if sync.is_nan() { "-".into() } else { format!("{:.0} ms", sync * 1e3) },
                ]);
            }
        }
        t.row(row);
    }
    format!(
        "blk: sequential throughput in MiB/s by block size (seed 002), one request in flight, direct = O_DIRECT\n{}\nblk per case (cached writes: the fdatasync after the window is not in the rate)\n{}{}",
        t.render(),
        d.render(),
        reasons(&rs)
    )
}
