//! The packet stream swept over batch size, queue depth and packet size,
//! against synchronous RPC over the same shared memory and over a UNIX socket.

use crate::analysis::stats::Summary;
use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::family::round_trip;
use crate::families::bench::packet_stream::table;
use crate::families::bench::packet_stream::{self, StreamResult, StreamSpec, rpc};
use crate::families::bench::schema::{self, packet_stream::Mode, packet_stream::Notify, packet_stream::Params as Point};
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::sampling::{grid, points};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale};
use crate::measure::placement::Placement;
use serde_json::json;
use std::time::Duration;

pub const BATCHES: [u64; 4] = [1, 4, 16, 64];
pub const DEPTHS: [u64; 4] = [16, 64, 256, 1024];
pub const SIZES: [u64; 4] = [64, 1024, 1500, 4096];

fn cases(scale: Scale) -> Vec<Params> {
    let mut out = Vec::new();
    let (batches, depths, sizes): (&[u64], &[u64], &[u64]) = match scale {
        Scale::Quick | Scale::Test => (&[1, 16], &[64], &[64, 1500]),
        Scale::Full => (&BATCHES, &DEPTHS, &SIZES),
    };
    for &bytes in sizes {
        for (depth, batch) in grid(depths, batches) {
            out.push(Point { mode: Mode::Stream, batch, depth, bytes, notify: Notify::Futex });
        }
        if scale == Scale::Full {
            for batch in [1, 16] {
                out.push(Point { mode: Mode::Stream, batch, depth: 256, bytes, notify: Notify::Eventfd });
            }
        }
        // Synchronous RPC: one packet in flight.
        out.push(Point { mode: Mode::RpcShm, batch: 1, depth: 2, bytes, notify: Notify::Futex });
        out.push(Point { mode: Mode::RpcUnix, batch: 1, depth: 1, bytes, notify: Notify::Kernel });
    }
    points(out)
}

fn run(ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let p: Point = ctx.typed()?;
    let (mode, eventfd) = (p.mode, p.notify == Notify::Eventfd);
    let (batch, depth, bytes) = (p.batch as u32, p.depth as u32, p.bytes as u32);
    let cpus = (ctx.cpus[0], *ctx.cpus.get(1).unwrap_or(&ctx.cpus[0]));
    // Each round lasts 12 batch targets (24 ms quick, 60 ms full), at least 10 ms; 3 rounds.
    let round = Duration::from_secs_f64((ctx.harness.target_batch_cycles as f64 / ctx.clock.tsc_hz * 12.0).max(0.01));
    let mut rounds: Vec<StreamResult> = Vec::new();
    for _ in 0..3 {
        if crate::measure::watchdog::interrupted().is_some() {
            return Err(CaseError::Interrupted);
        }
        let r = if mode == Mode::RpcUnix {
            rpc::unix_rpc(bytes, cpus, round, ctx.timeout).map_err(|e| CaseError::from_io("rpc over a UNIX socket", e))?
        } else {
            let spec = StreamSpec {
                batch,
                depth,
                packet: bytes,
                eventfd,
                cpus,
                duration: round,
                max_packets: u64::MAX,
                random_batches: false,
                timeout: ctx.timeout,
            };
            packet_stream::run(&spec).map_err(|e| CaseError::Failed(e.to_string()))?
        };
        rounds.push(r);
    }
    let no = || CaseError::Failed("no packets went through".into());
    let per_round = |f: &dyn Fn(&StreamResult) -> f64| Summary::of(&rounds.iter().map(f).collect::<Vec<_>>()).ok_or_else(no);
    let pps = per_round(&|r| r.packets as f64 / r.seconds)?;
    let mibs = per_round(&|r| r.packets as f64 * bytes as f64 / r.seconds / (1 << 20) as f64)?;
    // Notifications are counted by the rings; a socket's wake-ups happen in
    // the kernel and are not counted, so that mode has no such metric.
    let notif = if mode == Mode::RpcUnix {
        None
    } else {
        Some(Metric::cost(
            schema::packet_stream::NOTIFICATIONS_PER_PACKET,
            "1/packet",
            per_round(&|r| r.notifications as f64 / r.packets.max(1) as f64)?,
        ))
    };
    let src_cpu =
        Metric::cost(schema::packet_stream::SOURCE_CPU_PER_PACKET, "ns", per_round(&|r| r.source_cpu_ns as f64 / r.packets.max(1) as f64)?);
    let sink_cpu =
        Metric::cost(schema::packet_stream::SINK_CPU_PER_PACKET, "ns", per_round(&|r| r.sink_cpu_ns as f64 / r.packets.max(1) as f64)?);
    let lat: Vec<f64> = rounds.iter().flat_map(|r| r.latencies.iter().map(|&c| c as f64)).collect();
    let latency = Summary::of(&lat).ok_or_else(no)?;
    let mut details = serde_json::Map::new();
    details.insert("packets".into(), json!(rounds.iter().map(|r| r.packets).sum::<u64>()));
    details.insert("notifications".into(), json!(rounds.iter().map(|r| r.notifications).sum::<u64>()));
    details.insert("effective_batch".into(), json!(batch.min(depth.saturating_sub(1)).max(1)));
    details.insert("max_in_flight".into(), json!(rounds.iter().map(|r| r.max_in_flight).max()));
    details.insert("round_seconds".into(), json!(round.as_secs_f64()));
    Ok(CaseData {
        placement: Placement {
            actors: "source process + sink process".into(),
            cpus: vec![cpus.0, cpus.1],
            observed_cpus: vec![],
            policy: "SCHED_OTHER".into(),
            memory_locked: ctx.memory_locked,
        },
        metrics: [
            Some(Metric::rate(schema::packet_stream::PACKETS_PER_S, "packets/s", pps)),
            Some(Metric::rate(schema::packet_stream::MIB_PER_S, "MiB/s", mibs)),
            notif,
            Some(Metric::cycles(schema::packet_stream::LATENCY, latency, ctx.clock)),
            Some(src_cpu),
            Some(sink_cpu),
        ]
        .into_iter()
        .flatten()
        .collect(),
        details,
    })
}

/// packet-stream.sweep: a Genode-style packet stream against RPC.
pub const PACKET_STREAM: Described<()> = Described {
    name: schema::packet_stream::FAMILY,
    variants: &[()],
    info: |()| {
        (
            schema::packet_stream::SWEEP,
            "a Genode-style packet stream between two processes (shared submit/ack rings, bitmap packet slots, notifications only when a side sleeps) against synchronous RPC over shared memory and a UNIX socket",
            "mode stream|rpc-shm|rpc-unix; batch 1,4,16,64; depth 16,64,256,1024; bytes 64,1024,1500,4096; notify futex|eventfd",
            "2 CPUs for cross-core",
        )
    },
    cases: |(), scale| cases(scale),
    run: |(), ctx| run(ctx),
    shows: Shows { tables: &[&table::TABLE], comparisons: &[], plots: &[], headline: None },
    params: round_trip::<schema::packet_stream::Params>,
    ..Described::BASE
};
