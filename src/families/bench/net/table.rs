//! The network tables of Genode's Pandaboard article: throughput by packet size (rows sizes,
//! columns path x protocol) with loss and CPU cost per MiB beside it, and
//! request / response round trips; and the plot of throughput by payload.

use crate::base::named::Named;
use crate::base::sources::Source;
use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::families::bench::schema::net;
use crate::families::bench::shows::FamilyTable;
use crate::tables::tabular::figures::{Plot, Plots, lines_of};
use crate::tables::tabular::headline::{Headline, Headlines, Pick, extreme, headline};
use crate::tables::tabular::lines::{Lines, Point};
use crate::tables::tabular::table::{TextTable, bytes_label, percent};
use crate::tables::tabular::{ascending, num, unmeasured_reasons, value_cell};

/// A net result with its parameters.
type Net<'a> = (&'a CaseResult, net::Params);

/// Throughput by payload size, a column per path and protocol.
fn net_grid(rs: &[Net]) -> String {
    let find = |bench: &str, path: net::Path, bytes: u64| {
        rs.iter().find(|(r, p)| r.benchmark == bench && p.path == path && p.bytes == bytes).map(|(r, _)| *r)
    };
    let cols: Vec<(net::Path, String)> = net::Path::ALL
        .iter()
        .flat_map(|&p| [(p, net::id(net::UDP)), (p, net::id(net::TCP))])
        .filter(|(p, b)| rs.iter().any(|(r, q)| q.path == *p && r.benchmark == *b))
        .collect();
    let heads: Vec<String> = cols.iter().map(|(p, b)| format!("{} {}", p.name(), net::name_of(b).to_uppercase())).collect();
    let mut h: Vec<&str> = vec!["payload"];
    h.extend(heads.iter().map(String::as_str));
    let mut t = TextTable::new(&h, 1);
    let mut bytes = ascending(rs.iter().map(|(_, p)| p.bytes));
    // UDP's largest payload (65507) and TCP's (65536) share a row.
    if bytes.contains(&net::UDP_MAX_BYTES) && bytes.contains(&net::TCP_MAX_BYTES) {
        bytes.retain(|&b| b != net::UDP_MAX_BYTES);
    }
    for b in bytes {
        let mut row = vec![if b == net::TCP_MAX_BYTES { "64 KiB (UDP 65507 B)".into() } else { bytes_label(b) }];
        for (p, bench) in &cols {
            let r = find(bench, *p, b).or_else(|| if b == net::TCP_MAX_BYTES { find(bench, *p, net::UDP_MAX_BYTES) } else { None });
            row.push(value_cell(r, |r| format!("{:.1}", num(r, net::details::MIB_PER_S))));
        }
        t.row(row);
    }
    format!("net: payload throughput at the receiver in MiB/s by payload size (as in {})\n{}", Source::GenodePandaboard.short(), t.render())
}

/// Every measured stream case: rate, loss, CPU cost, spread, CPUs.
fn net_cases(rs: &[Net]) -> String {
    use net::details::*;
    let mut d = TextTable::new(
        &["path", "proto", "payload", "MiB/s", "msgs/s", "UDP loss", "send CPU ms/MiB", "recv CPU ms/MiB", "CV", "CPUs (send, recv)"],
        3,
    );
    let udp = net::id(net::UDP);
    for (r, p) in rs.iter().filter(|(r, _)| r.status == CaseStatus::Ok) {
        let cv = r.metric(net::THROUGHPUT).map_or(f64::NAN, |m| m.summary.cv);
        let cpus = r.placement.as_ref().map_or(String::new(), |p| {
            p.observed_cpus.iter().map(|c| c.map_or("?".into(), |c| c.to_string())).collect::<Vec<_>>().join(",")
        });
        d.row(vec![
            p.path.name().into(),
            net::name_of(&r.benchmark).into(),
            bytes_label(p.bytes),
            format!("{:.1}", num(r, MIB_PER_S)),
            format!("{:.0}", num(r, MSGS_PER_S)),
            if r.benchmark == udp { format!("{:.2}%", 100.0 * num(r, UDP_LOSS)) } else { "-".into() },
            format!("{:.2}", num(r, SENDER_CPU_MS_PER_MIB)),
            format!("{:.2}", num(r, RECEIVER_CPU_MS_PER_MIB)),
            percent(cv),
            cpus,
        ]);
    }
    format!(
        "\nnet per case: msgs/s = datagrams received (UDP) or bytes received / payload (TCP); CPU time per MiB received, per thread\n{}",
        d.render()
    )
}

/// Request/response round trips.
fn net_rr(rr: &[Net], hz: f64) -> String {
    let mut t = TextTable::new(&["path", "payload", "RTT median us", "cycles", "p99 us", "transactions"], 2);
    for (r, p) in rr {
        let (path, payload) = (p.path.name().to_string(), bytes_label(p.bytes));
        let Some(m) = r.metric(net::RTT).filter(|_| r.status == CaseStatus::Ok) else {
            t.row(vec![path, payload, value_cell(Some(r), |_| String::new())]);
            continue;
        };
        t.row(vec![
            path,
            payload,
            format!("{:.1}", m.summary.median * 1e6 / hz),
            format!("{:.0}", m.summary.median),
            format!("{:.1}", m.summary.p99 * 1e6 / hz),
            format!("{:.0}", num(r, net::details::TRANSACTIONS)),
        ]);
    }
    format!("\nnet: TCP request/response, one transaction in flight, client on the first CPU, server on the second\n{}", t.render())
}

pub fn render_net(doc: &RunDoc) -> String {
    let streams = [net::id(net::UDP), net::id(net::TCP)];
    let rr_id = net::id(net::TCP_RR);
    let rs: Vec<Net> = crate::tables::tabular::typed(doc.results.iter().filter(|r| streams.contains(&r.benchmark)));
    let rr: Vec<Net> = crate::tables::tabular::typed(doc.results.iter().filter(|r| r.benchmark == rr_id));
    if rs.is_empty() && rr.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    if !rs.is_empty() {
        out += &net_grid(&rs);
        out += &net_cases(&rs);
    }
    if !rr.is_empty() {
        out += &net_rr(&rr, doc.host.clock.tsc_hz);
    }
    out + &unmeasured_reasons(rs.iter().chain(rr.iter()).map(|(r, p)| (*r, p.path.name())))
}

/// Network throughput by packet size.
pub static TABLE: FamilyTable = FamilyTable::new(&[net::FAMILY], render_net);

/// Network throughput against payload size.
pub struct NetPlots;

impl Plots for NetPlots {
    fn lines(&self, doc: &RunDoc) -> Vec<Lines> {
        let streams = [net::id(net::UDP), net::id(net::TCP)];
        let plot = Plot {
            title: "Network throughput by payload size".into(),
            x_desc: "payload (bytes)",
            y_desc: "MiB/s at the receiver",
            log: (true, false),
        };
        lines_of::<net::Params>(
            doc,
            plot,
            |r, _| streams.contains(&r.benchmark),
            |r, p| format!("{} {}", p.path.name(), net::name_of(&r.benchmark)),
            |r, p| Some(Point::bare(p.bytes as f64, r.detail_f64(net::details::MIB_PER_S)?)),
        )
        .into_iter()
        .collect()
    }
    fn across_environments(&self) -> bool {
        true
    }
}

/// The summary's headline: the network's peak.
pub struct NetHeadline;

impl Headlines for NetHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        headline("net peak (UDP/TCP stream)", extreme(pick.of(net::FAMILY), net::THROUGHPUT, true)).into_iter().collect()
    }
}
