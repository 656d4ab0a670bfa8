//! The packet stream against RPC, laid out as Genode's Pandaboard article does.

use crate::base::named::Named;
use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::families::bench::schema::packet_stream::{self as ps, Mode, Notify, Params};
use crate::families::bench::shows::FamilyTable;
use crate::tables::tabular::median_of;
use crate::tables::tabular::table::{TextTable, cycles};
use std::collections::BTreeSet;

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
                    format!("{:.0}k / {:.2}", median_of(r, ps::PACKETS_PER_S) / 1e3, median_of(r, ps::NOTIFICATIONS_PER_PACKET))
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
            .max_by(|a, b| median_of(a.0, ps::PACKETS_PER_S).total_cmp(&median_of(b.0, ps::PACKETS_PER_S)));
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
                format!("{:.1}", median_of(r, ps::PACKETS_PER_S) / 1e3),
                format!("{:.1}", median_of(r, ps::MIB_PER_S)),
                r.metric(ps::NOTIFICATIONS_PER_PACKET).map_or("-".into(), |m| format!("{:.3}", m.summary.median)),
                lat.map_or("-".into(), |l| cycles(l.median)),
                lat.map_or("-".into(), |l| cycles(l.p99)),
                format!("{:.0}", median_of(r, ps::SOURCE_CPU_PER_PACKET) + median_of(r, ps::SINK_CPU_PER_PACKET)),
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
    let rs: Vec<Typed> = crate::tables::tabular::typed(doc.results.iter().filter(|r| r.benchmark == id));
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
        .map(|(r, _)| format!("  {}: {}", crate::data::results::params_label(&r.params), r.reason.as_deref().unwrap_or("")))
        .collect();
    if !failed.is_empty() {
        s += &format!("not measured:\n{}\n", failed.join("\n"));
    }
    s
}

/// A packet stream against RPC.
pub static TABLE: FamilyTable = FamilyTable::new(&[ps::FAMILY], render_packet_stream);
