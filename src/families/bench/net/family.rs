//! The net family on the harness: one case per protocol, path and payload.

use crate::analysis::stats::Summary;
use crate::base::named::Named;
use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::family::round_trip;
use crate::families::bench::net::table;
use crate::families::bench::net::{self, Ends, Proto, Timing, netns};
use crate::families::bench::schema::{self, net::Path, net::details as keys};
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::sampling::{grid, points};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale};
use crate::measure::placement::Placement;
use serde_json::json;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::time::Duration;

crate::named_enum! {
    pub enum NetTest {
        Udp = schema::net::UDP,
        Tcp = schema::net::TCP,
        TcpRr = schema::net::TCP_RR,
    }
}

impl NetTest {
    pub fn description(self) -> &'static str {
        match self {
            NetTest::Udp => {
                "UDP stream as fast as the sender can send: payload MiB/s and datagrams/s at the receiver, loss, CPU time per MiB each side"
            }
            NetTest::Tcp => {
                "TCP stream: payload MiB/s at the receiver, CPU time per MiB each side; every byte sent is counted at the receiver"
            }
            NetTest::TcpRr => "TCP request/response, one transaction in flight (netperf TCP_RR): round-trip time median and p99",
        }
    }
    pub fn parameters(self) -> &'static str {
        match self {
            NetTest::Udp => "path loopback|veth; bytes 64,128,256,512,1024,1450,4096,16384,65507",
            NetTest::Tcp => "path loopback|veth; bytes 64,128,256,512,1024,1450,4096,16384,65536",
            NetTest::TcpRr => "path loopback|veth; bytes 1,1024",
        }
    }
}

pub fn sizes(t: NetTest, scale: Scale) -> Vec<u64> {
    let max = if t == NetTest::Udp { schema::net::UDP_MAX_BYTES } else { schema::net::TCP_MAX_BYTES };
    match (t, scale) {
        (NetTest::TcpRr, _) => vec![1, 1024],
        (_, Scale::Quick | Scale::Test) => vec![64, 1450, max],
        (_, Scale::Full) => vec![64, 128, 256, 512, 1024, 1450, 4096, 16384, max],
    }
}

fn cases(t: NetTest, scale: Scale) -> Vec<Params> {
    points(grid(Path::ALL, &sizes(t, scale)).into_iter().map(|(path, bytes)| schema::net::Params { path, bytes }))
}

/// Warm-up and measured milliseconds per point: --point-ms, else by scale
/// (the Genode article's full second; 150 ms quick; 30 ms in tests).
pub fn point_ms(point_ms: Option<u64>, scale: Scale) -> (u64, u64) {
    match (point_ms, scale) {
        (Some(ms), _) => (ms / 5, ms),
        (None, Scale::Test) => (5, 30),
        (None, Scale::Quick) => (30, 150),
        (None, Scale::Full) => (200, 1000),
    }
}

/// Warm-up and measured time per point, and the slice of it ([`point_ms`]).
pub fn timing(ctx: &CaseCtx) -> Timing {
    let (warm, measure) = point_ms(ctx.point_ms, ctx.scale);
    let measure = Duration::from_millis(measure.max(1));
    Timing { warm: Duration::from_millis(warm), measure, slice: measure / 20 }
}

fn mib(b: f64) -> f64 {
    b / (1 << 20) as f64
}

fn run(t: NetTest, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let p: schema::net::Params = ctx.typed()?;
    let size = p.bytes as usize;
    let sender_cpu = ctx.cpus[0];
    let receiver_cpu = *ctx.cpus.get(1).unwrap_or(&sender_cpu);
    let veth =
        if p.path == Path::Veth { Some(netns::VethPair::create().map_err(|e| CaseError::NotApplicable(e.to_string()))?) } else { None };
    let ends = Ends {
        sender_cpu,
        receiver_cpu,
        sender_ns: veth.as_ref().map(|v| v.b.as_raw_fd()),
        receiver_ns: veth.as_ref().map(|v| v.a.as_raw_fd()),
        receiver_addr: if veth.is_some() { Ipv4Addr::from(netns::ADDR_A) } else { Ipv4Addr::LOCALHOST },
    };
    let timing = timing(ctx);
    // Both sides run on threads of their own with socket timeouts (no side
    // waits for the other more than 5 s), so no watchdog is armed here.
    let io = |e| CaseError::from_io(t.name(), e);
    let mut details = serde_json::Map::new();
    details.insert("warm_s".into(), json!(timing.warm.as_secs_f64()));
    if let Some(v) = &veth {
        details.insert("veth".into(), json!(format!("{} <-> {} in two namespaces of their own", v.names.1, v.names.0)));
    }
    let placement = |observed: (Option<usize>, Option<usize>)| Placement {
        actors: "sender thread + receiver thread".into(),
        cpus: vec![sender_cpu, receiver_cpu],
        observed_cpus: vec![observed.0, observed.1],
        policy: ctx.policy.to_string(),
        memory_locked: ctx.memory_locked,
    };
    if t == NetTest::TcpRr {
        let (rtts, observed) = net::latency::request_response(size, ends, timing).map_err(io)?;
        let s = Summary::of(&rtts).ok_or_else(|| CaseError::Failed("no transaction completed in the window".into()))?;
        details.insert(keys::TRANSACTIONS.into(), json!(rtts.len()));
        return Ok(CaseData { placement: placement(observed), metrics: vec![Metric::cycles(schema::net::RTT, s, ctx.clock)], details });
    }
    let proto = if t == NetTest::Udp { Proto::Udp } else { Proto::Tcp };
    let r = net::throughput::stream(proto, size, ends, timing).map_err(io)?;
    if r.window_s <= 0.0 || r.window_bytes == 0 {
        return Err(CaseError::Failed("the receiver got nothing in the measured window".into()));
    }
    let window_mib = mib(r.window_bytes as f64);
    details.insert("window_s".into(), json!(r.window_s));
    details.insert(keys::MIB_PER_S.into(), json!(window_mib / r.window_s));
    // UDP: datagrams received; TCP: the stream in payload-sized messages.
    let msgs = if proto == Proto::Udp { r.window_msgs as f64 } else { r.window_bytes as f64 / size as f64 };
    details.insert(keys::MSGS_PER_S.into(), json!(msgs / r.window_s));
    details.insert("sent_bytes_by_phase".into(), json!(r.sent_bytes));
    details.insert("sent_msgs_by_phase".into(), json!(r.sent_msgs));
    details.insert("received_total_bytes".into(), json!(r.received_total));
    details.insert(keys::SENDER_CPU_MS_PER_MIB.into(), json!(1e3 * r.sender_cpu_s / window_mib));
    details.insert(keys::RECEIVER_CPU_MS_PER_MIB.into(), json!(1e3 * r.receiver_cpu_s / window_mib));
    details.insert("sender_cpu_util".into(), json!(r.sender_cpu_s / r.window_s));
    details.insert("receiver_cpu_util".into(), json!(r.receiver_cpu_s / r.window_s));
    if let Some(u) = &r.udp {
        let sent = r.sent_msgs[1];
        details.insert("udp_sent".into(), json!(sent));
        details.insert("udp_received".into(), json!(u.unique));
        details.insert("udp_lost".into(), json!(u.lost(sent)));
        details.insert(keys::UDP_LOSS.into(), json!(if sent > 0 { u.lost(sent) as f64 / sent as f64 } else { 0.0 }));
        details.insert("udp_out_of_order".into(), json!(u.out_of_order));
        details.insert("udp_duplicates".into(), json!(u.duplicates));
    } else if r.received_total != r.sent_bytes.iter().sum::<u64>() {
        return Err(CaseError::Failed(format!("TCP lost bytes: {} sent, {} received", r.sent_bytes.iter().sum::<u64>(), r.received_total)));
    }
    let slices = Summary::of(&r.slice_mib_s).ok_or_else(|| CaseError::Failed("the window was too short for one interval".into()))?;
    Ok(CaseData { placement: placement(r.observed_cpus), metrics: vec![Metric::rate(schema::net::THROUGHPUT, "MiB/s", slices)], details })
}

/// net.*: network throughput and request/response over loopback and veth.
pub const NET: Described<NetTest> = Described {
    name: schema::net::FAMILY,
    variants: NetTest::ALL,
    info: |t| (t.name(), t.description(), t.parameters(), "veth: root and ip (iproute2)"),
    cases,
    run,
    // Under QEMU's instruction counter the time it measures is fictitious (throughput over a fixed time).
    measures_time: true,
    shows: Shows { tables: &[&table::TABLE], comparisons: &[], plots: &[&table::NetPlots], headline: Some(&table::NetHeadline) },
    params: round_trip::<schema::net::Params>,
    ..Described::BASE
};
