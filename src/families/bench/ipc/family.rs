//! The ipc family on the harness: cases are payload x space x cores, each a
//! ping-pong whose one-way cost is half the round trip.

use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::family::round_trip;
use crate::families::bench::ipc::Mechanism;
use crate::families::bench::ipc::pingpong::{self, PingPongSpec};
use crate::families::bench::ipc::table;
use crate::families::bench::schema;
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::fds::IpcError;
use crate::families::bench::toolkit::sampling::{grid, points, summary_of};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale, Unsupported};
use crate::measure::clock::ClockInfo;
use crate::measure::placement::{Cores, Placement, Space};
use serde_json::json;

pub const WORDS_FULL: [u64; 7] = [0, 1, 2, 4, 8, 16, 64];
pub const WORDS_QUICK: [u64; 3] = [0, 8, 64];

fn supported(m: Mechanism) -> Result<(), Unsupported> {
    m.pair(Space::Intra).map(|_| ()).map_err(|e| Unsupported(format!("cannot create a {} channel: {e}", m.name())))
}

fn cases(scale: Scale) -> Vec<Params> {
    let words: &[u64] = match scale {
        Scale::Quick | Scale::Test => &WORDS_QUICK,
        Scale::Full => &WORDS_FULL,
    };
    let sweep = grid(&schema::ipc::SPACES, &grid(&schema::ipc::CORES, words));
    points(sweep.into_iter().map(|(space, (cores, words))| schema::ipc::Params { words, space, cores }))
}

fn run(m: Mechanism, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let schema::ipc::Params { words, space, cores } = ctx.typed()?;
    let words = words as usize;
    if let Some(why) = m.unsupported(cores, words) {
        return Err(CaseError::NotApplicable(why.into()));
    }
    let cpus = match cores {
        Cores::Same => (ctx.cpus[0], ctx.cpus[0]),
        Cores::Cross => match ctx.cpus.get(1) {
            Some(&c) => (ctx.cpus[0], c),
            None => return Err(CaseError::NotApplicable("cross-core needs two CPUs; --cpus names one".into())),
        },
    };
    let spec = PingPongSpec { mechanism: m, words, space, cpus, policy: ctx.policy, timeout: ctx.timeout };
    let r = pingpong::run(&spec, ctx.clock.overhead_cycles, &ctx.harness).map_err(|e| match e {
        IpcError::Interrupted => CaseError::Interrupted,
        e => CaseError::Failed(e.to_string()),
    })?;
    let mut details = serde_json::Map::new();
    details.insert("inner".into(), json!(r.measurement.inner));
    details.insert("round_trips".into(), json!(r.round_trips));
    details.insert("requests_verified_by_server".into(), json!(r.served));
    details.insert("wire_bytes".into(), json!(m.wire_bytes(words)));
    details.insert("calibration".into(), json!(r.measurement.calibration));
    Ok(CaseData {
        placement: Placement {
            actors: match space {
                Space::Intra => "threads",
                Space::Inter => "processes",
            }
            .into(),
            cpus: vec![cpus.0, cpus.1],
            observed_cpus: vec![r.observed_cpus.0, r.observed_cpus.1],
            policy: ctx.policy.to_string(),
            memory_locked: ctx.memory_locked,
        },
        metrics: metrics(&r.measurement.per_op_cycles, ctx.clock)?,
        details,
    })
}

/// One way (half the round trip, as the L4 tables count) and the round
/// trip, from samples of cycles per round trip.
pub fn metrics(round_trips: &[f64], clock: &ClockInfo) -> Result<Vec<Metric>, CaseError> {
    let rt = summary_of(round_trips)?;
    Ok(vec![
        Metric::cycles(schema::ipc::ONE_WAY, rt.scaled(0.5), clock).with_samples(&round_trips.iter().map(|c| c / 2.0).collect::<Vec<_>>()),
        Metric::cycles(schema::ipc::ROUND_TRIP, rt, clock).with_samples(round_trips),
    ])
}

/// ipc.*: one-way IPC cost by mechanism and payload.
pub const IPC: Described<Mechanism> = Described {
    name: schema::ipc::FAMILY,
    variants: &Mechanism::ALL,
    info: |m| {
        let needs = if matches!(m, Mechanism::Tcp | Mechanism::Udp) { "loopback network" } else { "-" };
        (m.name(), m.description(), "words 0,1,2,4,8,16,64; space intra|inter; cores same|cross", needs)
    },
    cases: |_, scale| cases(scale),
    supported,
    run,
    repeats_in_rounds: true,
    shows: Shows {
        tables: &[&table::IpcTable],
        comparisons: &[&table::IpcByEnvironment],
        plots: &[&table::IpcPlots],
        headline: Some(&table::IpcHeadlines),
    },
    params: round_trip::<schema::ipc::Params>,
    // Client and server: two threads of the program.
    guest: |_, case| case.measured(2, |m, clock| metrics(&m.per_op_cycles, clock)),
    ..Described::BASE
};
