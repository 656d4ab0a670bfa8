//! Packet stream against RPC (Genode's Pandaboard article), and every core at once (the L4Re
//! performance overview).

use super::figures::{Plot, Plots, lines_of, point};
use super::plot::Lines;
use super::table::{TextTable, cycles};
use super::tables::Table;
use crate::named::Named;
use crate::results::{CaseResult, CaseStatus, RunDoc};
use crate::schema::packet_stream::{self as ps, Mode, Notify, Params};
use crate::schema::parallel;
use std::collections::BTreeSet;

fn median(r: &CaseResult, metric: &str) -> f64 {
    r.metric(metric).map_or(f64::NAN, |m| m.summary.median)
}

/// A result with its parameters.
type Typed<'a> = (&'a CaseResult, Params);

/// The first measured result whose parameters `pred` accepts.
fn measured<'a>(rs: &[Typed<'a>], pred: impl Fn(&Params) -> bool) -> Option<&'a CaseResult> {
    rs.iter().find(|(r, p)| r.status == CaseStatus::Ok && pred(p)).map(|(r, _)| *r)
}

/// The stream with futex wake-ups: the sweep over batch and depth.
fn futex_stream(p: &Params) -> bool {
    p.mode == Mode::Stream && p.notify == Notify::Futex
}

/// The value sets the tables are laid out by.
struct Axes {
    sizes: BTreeSet<u64>,
    batches: BTreeSet<u64>,
    depths: BTreeSet<u64>,
}

/// Per packet size: thousands of packets/s / notifications per packet, batch by depth.
fn sweep_tables(rs: &[Typed], axes: &Axes) -> String {
    let mut s = String::new();
    for &size in &axes.sizes {
        let mut headers = vec![format!("{size} B: batch")];
        headers.extend(axes.depths.iter().map(|d| format!("depth {d}")));
        let mut t = TextTable::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
        for &b in &axes.batches {
            let mut row = vec![b.to_string()];
            for &d in &axes.depths {
                let r = measured(rs, |p| futex_stream(p) && p.bytes == size && p.batch == b && p.depth == d);
                row.push(r.map_or("-".into(), |r| {
                    format!("{:.0}k / {:.2}", median(r, ps::PACKETS_PER_S) / 1e3, median(r, ps::NOTIFICATIONS_PER_PACKET))
                }));
            }
            t.row(row);
        }
        s += &t.render();
    }
    s
}

/// The stream's best point against both RPCs, by packet size.
fn against_rpc(rs: &[Typed], sizes: &BTreeSet<u64>) -> String {
    let mut s = "\npacket stream against synchronous RPC: throughput, submit-to-acknowledge latency (median / p99 TSC cycles), CPU ns per packet (source + sink)\n".to_string();
    let mut t = TextTable::new(&["bytes", "transport", "kpackets/s", "MiB/s", "notif/pkt", "lat median", "lat p99", "CPU ns/pkt"], 2);
    for &size in sizes {
        let best = rs
            .iter()
            .filter(|(r, p)| r.status == CaseStatus::Ok && p.mode == Mode::Stream && p.bytes == size)
            .max_by(|a, b| median(a.0, ps::PACKETS_PER_S).total_cmp(&median(b.0, ps::PACKETS_PER_S)));
        let mut rows: Vec<(String, Option<&CaseResult>)> = Vec::new();
        if let Some((b, p)) = best {
            rows.push((format!("stream (best: batch {}, depth {}, {})", p.batch, p.depth, p.notify.name()), Some(*b)));
        }
        rows.push(("rpc, shared memory + futex".into(), measured(rs, |p| p.mode == Mode::RpcShm && p.bytes == size)));
        rows.push(("rpc, UNIX socket".into(), measured(rs, |p| p.mode == Mode::RpcUnix && p.bytes == size)));
        for (label, r) in rows {
            let Some(r) = r else { continue };
            let lat = r.metric(ps::LATENCY).map(|m| m.summary);
            t.row(vec![
                size.to_string(),
                label,
                format!("{:.1}", median(r, ps::PACKETS_PER_S) / 1e3),
                format!("{:.1}", median(r, ps::MIB_PER_S)),
                r.metric(ps::NOTIFICATIONS_PER_PACKET).map_or("-".into(), |m| format!("{:.3}", m.summary.median)),
                lat.map_or("-".into(), |l| cycles(l.median)),
                lat.map_or("-".into(), |l| cycles(l.p99)),
                format!("{:.0}", median(r, ps::SOURCE_CPU_PER_PACKET) + median(r, ps::SINK_CPU_PER_PACKET)),
            ]);
        }
    }
    s += &t.render();
    s += "  (a UNIX socket's wake-ups happen inside the kernel and are not counted: '-')\n";
    s
}

/// Where RPC wins: median latency by depth (batch 1) against the RPCs.
fn latency_by_depth(rs: &[Typed], axes: &Axes) -> String {
    let mut s =
        "\nsubmit-to-acknowledge latency, median TSC cycles: stream at batch 1 by queue depth, against synchronous RPC\n".to_string();
    let mut headers = vec!["bytes".to_string()];
    headers.extend(axes.depths.iter().map(|d| format!("depth {d}")));
    headers.extend(["rpc shm".to_string(), "rpc unix".to_string()]);
    let mut lt = TextTable::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    let lat = |r: Option<&CaseResult>| r.and_then(|r| r.metric(ps::LATENCY)).map_or("-".into(), |m| cycles(m.summary.median));
    for &size in &axes.sizes {
        let mut row = vec![size.to_string()];
        for &d in &axes.depths {
            row.push(lat(measured(rs, |p| futex_stream(p) && p.bytes == size && p.batch == 1 && p.depth == d)));
        }
        for mode in [Mode::RpcShm, Mode::RpcUnix] {
            row.push(lat(measured(rs, |p| p.mode == mode && p.bytes == size)));
        }
        lt.row(row);
    }
    s += &lt.render();
    s
}

pub fn render_packet_stream(doc: &RunDoc) -> String {
    let id = ps::id(ps::SWEEP);
    let rs: Vec<Typed> = super::typed(doc.results.iter().filter(|r| r.benchmark == id));
    if rs.is_empty() {
        return String::new();
    }
    let axes = Axes {
        sizes: rs.iter().map(|(_, p)| p.bytes).collect(),
        batches: rs.iter().filter(|(_, p)| futex_stream(p)).map(|(_, p)| p.batch).collect(),
        depths: rs.iter().filter(|(_, p)| futex_stream(p)).map(|(_, p)| p.depth).collect(),
    };
    let where_ = rs
        .iter()
        .find_map(|(r, _)| r.placement.as_ref())
        .map_or(String::new(), |p| format!(" (source CPU {}, sink CPU {})", p.cpus[0], p.cpus[1]));
    let mut s =
        format!("packet-stream{where_}: thousands of packets/s / notifications per packet, by batch (rows) and queue depth (columns)\n");
    s += &sweep_tables(&rs, &axes);
    s += &against_rpc(&rs, &axes.sizes);
    s += &latency_by_depth(&rs, &axes);
    let failed: Vec<String> = rs
        .iter()
        .filter(|(r, _)| r.status != CaseStatus::Ok)
        .map(|(r, _)| format!("  {}: {}", crate::results::params_label(&r.params), r.reason.as_deref().unwrap_or("")))
        .collect();
    if !failed.is_empty() {
        s += &format!("not measured:\n{}\n", failed.join("\n"));
    }
    s
}

pub fn render_parallel(doc: &RunDoc) -> String {
    let rs: Vec<(&CaseResult, parallel::Params)> = super::typed(doc.results.iter().filter(|r| r.family == parallel::FAMILY));
    if rs.is_empty() {
        return String::new();
    }
    // CPU counts as rows (a 64-CPU machine makes a long table, not a wide one).
    let ns: BTreeSet<u64> = rs.iter().map(|(_, p)| p.instances).collect();
    let ops: Vec<&str> = parallel::OPS.into_iter().filter(|op| rs.iter().any(|(r, _)| r.benchmark == parallel::id(op))).collect();
    let mut headers = vec!["CPUs busy".to_string()];
    headers.extend(ops.iter().map(|op| op.to_string()));
    let mut t = TextTable::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    for &n in &ns {
        let mut row = vec![n.to_string()];
        for op in &ops {
            let bench = parallel::id(op);
            let at = |instances: u64| {
                rs.iter().find(|(r, p)| r.status == CaseStatus::Ok && r.benchmark == bench && p.instances == instances).map(|(r, _)| *r)
            };
            let alone = at(1).map(|r| median(r, parallel::PER_OP));
            row.push(match at(n) {
                Some(r) => {
                    let m = median(r, parallel::PER_OP);
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

/// A packet stream against RPC.
pub struct PacketStream;

impl Table for PacketStream {
    fn families(&self) -> &'static [&'static str] {
        &[ps::FAMILY]
    }
    fn render(&self, doc: &RunDoc) -> String {
        render_packet_stream(doc)
    }
}

/// Instances side by side.
pub struct Parallel;

impl Table for Parallel {
    fn families(&self) -> &'static [&'static str] {
        &[parallel::FAMILY]
    }
    fn render(&self, doc: &RunDoc) -> String {
        render_parallel(doc)
    }
}

/// Cost per operation against the number of CPUs busy at once.
pub struct ParallelPlots;

impl Plots for ParallelPlots {
    fn lines(&self, doc: &RunDoc) -> Vec<Lines> {
        let title = "Cost against the number of CPUs busy at once".into();
        let lines = lines_of::<parallel::Params>(
            doc,
            Plot { title, x_desc: "instances (one pinned per CPU)", y_desc: "cost per operation (TSC cycles)", log: (false, false) },
            |r, _| r.family == parallel::FAMILY,
            |r, _| parallel::name_of(&r.benchmark).into(),
            |r, p| point(p.instances as f64, r, parallel::PER_OP),
        );
        lines.into_iter().collect()
    }
    fn across_environments(&self) -> bool {
        true
    }
}
