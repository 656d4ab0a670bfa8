//! The list of benchmark families and the suites. A family is one folder of
//! `bench/` (its measurement, its `family.rs` with its [`Family`], which
//! carries its table, plots and headline, its `schema.rs`); adding one is
//! that folder and a line in [`FAMILIES`] (the quick suite holds every family
//! of it; a suite of its own is a choice). `list`, suite membership, `--bench`
//! validation, the report's tables, plots and headlines and the tests' tiny
//! runs all come from here.

use crate::data::schema_core::Params;
use crate::families::bench::schema::{self, CaseParams};
use crate::families::bench::shows::Shows;
pub use crate::families::bench::{Benchmark, Family, Scale, Venue};
use crate::families::{bench, published};
use crate::tables::tabular::figures::Plots;
use crate::tables::tabular::headline::Headlines;
use crate::tables::tabular::tables::Table;
use std::sync::OnceLock;

/// Every family, in the order `list` shows them and the report lays out
/// their tables.
pub const FAMILIES: &[&dyn Family] = &[
    &bench::syscall::family::SYSCALL,
    &bench::ipc::family::IPC,
    &bench::ctx::family::CTX,
    &bench::proc::family::PROC,
    &bench::bw::family::BW,
    &bench::pagefault::family::PAGEFAULT,
    &bench::aim::family::AIM,
    &bench::hermit::family::HERMIT,
    &bench::stream::family::STREAM,
    &bench::memcpy::family::MEMCPY,
    &bench::alloc::family::ALLOC,
    &bench::packet_stream::family::PACKET_STREAM,
    &bench::parallel::family::PARALLEL,
    &bench::noise::family::NOISE,
    &bench::control::family::CONTROL,
    &bench::net::family::NET,
    &bench::blk::family::BLK,
    &bench::boot::family::BOOT,
    &bench::microvm::family::MICROVM,
];

/// The order in which the report has laid out the families' own plots and
/// the summary's headlines, where it is not [`FAMILIES`]' (names of
/// families; one not named follows them, in [`FAMILIES`]' order). A new
/// family need not be here.
const PLOTS_ORDER: &[&str] = &[
    schema::ipc::FAMILY,
    schema::net::FAMILY,
    schema::blk::FAMILY,
    schema::memcpy::FAMILY,
    schema::stream::FAMILY,
    schema::parallel::FAMILY,
];
const HEADLINES_ORDER: &[&str] = &[
    schema::syscall::FAMILY,
    schema::ipc::FAMILY,
    schema::ctx::FAMILY,
    schema::proc::FAMILY,
    schema::pagefault::FAMILY,
    schema::memcpy::FAMILY,
    schema::alloc::FAMILY,
    schema::stream::FAMILY,
    schema::boot::FAMILY,
    schema::noise::FAMILY,
    schema::control::FAMILY,
    schema::microvm::FAMILY,
];

/// The published evaluations' tables and comparisons, which span
/// families, each laid out after the tables (and comparisons) of the family
/// it names.
const PUBLISHED: &[(&str, Shows)] = &[
    (schema::ipc::FAMILY, Shows { tables: &[&published::l4re::L4ReOverview], ..Shows::NOTHING }),
    (
        schema::bw::FAMILY,
        Shows { tables: &[&published::lmbench::LmbenchTable], comparisons: &[&published::lmbench::RelPerfBars], ..Shows::NOTHING },
    ),
    (
        schema::hermit::FAMILY,
        Shows {
            tables: &[&published::hermit_basic::HermitBasicTable],
            comparisons: &[&published::hermit_basic::HermitBasicBars],
            ..Shows::NOTHING
        },
    ),
];

/// What the report shows of a family, and after it the published
/// evaluations laid out after it.
fn shown_after(f: &dyn Family) -> impl Iterator<Item = Shows> + use<> {
    let name = f.name();
    std::iter::once(f.shows()).chain(PUBLISHED.iter().filter(move |(after, _)| *after == name).map(|(_, s)| *s))
}

/// The families in the order `order` names them, the rest after in [`FAMILIES`]' order.
fn in_order(order: &[&str]) -> Vec<&'static dyn Family> {
    let mut fams: Vec<&'static dyn Family> = FAMILIES.to_vec();
    fams.sort_by_key(|f| order.iter().position(|n| *n == f.name()).unwrap_or(order.len()));
    fams
}

/// The report's tables, in the order it lays them out: each family's own
/// (in its folder), in [`FAMILIES`]' order, the published evaluations'
/// where [`PUBLISHED`] places them. A family that no table shows gets the report's
/// generic table.
pub fn tables() -> Vec<&'static dyn Table> {
    FAMILIES.iter().flat_map(|f| shown_after(*f)).flat_map(|s| s.tables.iter().copied()).collect()
}

/// The plots an exporter that draws lays out, in order: first the
/// comparisons across environments, then each family's own.
pub fn plots() -> Vec<&'static dyn Plots> {
    let comparisons = FAMILIES.iter().flat_map(|f| shown_after(*f)).flat_map(|s| s.comparisons.iter().copied());
    comparisons.chain(in_order(PLOTS_ORDER).into_iter().flat_map(|f| f.shows().plots.iter().copied())).collect()
}

/// The headlines of a run's summary, in its order: the figure that stands
/// for each family that has one.
pub fn headlines() -> Vec<&'static dyn Headlines> {
    in_order(HEADLINES_ORDER).into_iter().filter_map(|f| f.shows().headline).collect()
}

/// Every benchmark of every family, built once.
pub fn benchmarks() -> &'static [Benchmark] {
    static REGISTRY: OnceLock<Vec<Benchmark>> = OnceLock::new();
    REGISTRY.get_or_init(|| FAMILIES.iter().flat_map(|f| f.benchmarks()).collect())
}

pub fn find_benchmark(id: &str) -> Option<&'static Benchmark> {
    benchmarks().iter().find(|b| b.id == id)
}

pub fn find_family(name: &str) -> Option<&'static dyn Family> {
    FAMILIES.iter().copied().find(|f| f.name() == name)
}

/// What a suite holds: whole families, or one case of a benchmark given by
/// its parameters as JSON (a view onto another suite's measurement).
pub enum Member {
    Family(&'static dyn Family),
    /// One case of a benchmark (its id) with fixed, typed parameters.
    Case(&'static str, Fixed),
    /// Every family of [`FAMILIES`] (the quick suite), so that a family
    /// added there is in it without a second list.
    EveryFamily,
}

/// The parameters of a suite's single case, typed: none, or an IPC case's.
#[derive(Debug, Clone, Copy)]
pub enum Fixed {
    None,
    Ipc(schema::ipc::Params),
}

impl Fixed {
    /// The JSON map a result stores.
    pub fn params(self) -> Params {
        match self {
            Fixed::None => Params::new(),
            Fixed::Ipc(p) => p.to_params(),
        }
    }
}

/// One word, both sides of one core, two processes: LMBench's IPC latencies.
const LMBENCH_IPC: Fixed = Fixed::Ipc(schema::ipc::Params { words: 1, space: schema::ipc::Space::Inter, cores: schema::ipc::Cores::Same });

pub struct Suite {
    pub name: &'static str,
    pub description: &'static str,
    pub members: &'static [Member],
    pub scale: Scale,
    /// The shortest batch of its cases in seconds, unless `--batch-ms`
    /// says (0: the harness's own).
    pub min_batch_s: f64,
}

impl Suite {
    /// A suite at full scale with the harness's own batches.
    const fn full(name: &'static str, description: &'static str, members: &'static [Member]) -> Suite {
        Suite { name, description, members, scale: Scale::Full, min_batch_s: 0.0 }
    }
}

pub const SUITES: &[Suite] = &[
    Suite {
        name: "quick",
        description: "every family briefly (memory bandwidths, which need buffers 4x the LLC, only in lmbench)",
        members: &[Member::EveryFamily],
        scale: Scale::Quick,
        min_batch_s: 0.0,
    },
    Suite::full(
        "syscall",
        "system-call cost (the L4Re performance overview's syscall column)",
        &[Member::Family(&bench::syscall::family::SYSCALL)],
    ),
    Suite::full(
        "l4-ipc",
        "one-way IPC cost by payload, intra/inter, same/cross core (the L4 performance page, the L4Re performance overview)",
        &[Member::Family(&bench::ipc::family::IPC)],
    ),
    Suite {
        // LMBench times each sample over ENOUGH (its probe picks 5 ms
        // to 1 s; 1 s on this VM). Measured here against lmbench at ENOUGH =
        // 100 ms, interleaved: with oscycles' 5 ms batches lat_pipe read 1.37
        // of lmbench's and bw_pipe 0.83, bw_mmap_rd 0.77; with 100 ms batches
        // 1.04, 1.02, 1.03.
        min_batch_s: 0.1,
        ..Suite::full(
            "lmbench",
            "the LMBench latency and bandwidth tables of the L4 performance page (Wombat) and AIM7-style jobs/min/task; batches of at least 100 ms, as LMBench times its samples",
            &[
                Member::Family(&bench::ctx::family::CTX),
                Member::Case("ipc.fifo", LMBENCH_IPC),
                Member::Case("ipc.pipe", LMBENCH_IPC),
                Member::Case("ipc.unix-stream", LMBENCH_IPC),
                Member::Case("syscall.null", Fixed::None),
                Member::Case("syscall.getppid", Fixed::None),
                Member::Family(&bench::proc::family::PROC),
                Member::Family(&bench::pagefault::family::PAGEFAULT),
                Member::Family(&bench::bw::family::BW),
                Member::Family(&bench::aim::family::AIM),
            ],
        )
    },
    Suite::full(
        "hermit-basic",
        "the HermitCore PVH/HVM benchmark post's basic benchmark: getpid, sched_yield (alone, and with a second runnable thread), malloc(1 MiB), first write access",
        &[
            Member::Case("syscall.getpid", Fixed::None),
            Member::Case("syscall.sched_yield", Fixed::None),
            Member::Case("hermit.sched_yield-busy", Fixed::None),
            Member::Case("hermit.malloc-1m", Fixed::None),
            Member::Case("pagefault.anon", Fixed::None),
            Member::Case("pagefault.anon-thp", Fixed::None),
            Member::Case("pagefault.anon-hugetlb", Fixed::None),
        ],
    ),
    Suite::full(
        "stream",
        "a variant of STREAM (the HermitCore post's table), single-threaded and a thread per CPU",
        &[Member::Family(&bench::stream::family::STREAM)],
    ),
    Suite::full(
        "memcpy",
        "memcpy by size and source/destination alignment: C library, byte loop, word loop (Genode's Pandaboard article)",
        &[Member::Family(&bench::memcpy::family::MEMCPY)],
    ),
    Suite::full(
        "alloc",
        "allocate+free pairs by live set and block size: system, slab, bitmap, best-fit (Genode's Pandaboard article)",
        &[Member::Family(&bench::alloc::family::ALLOC)],
    ),
    Suite::full(
        "packet-stream",
        "shared-memory packet stream with batched notifications against synchronous RPC (Genode's Pandaboard article)",
        &[Member::Family(&bench::packet_stream::family::PACKET_STREAM)],
    ),
    Suite::full(
        "fwq",
        "OS noise by fixed work quantum on the first --cpus CPU (the L4Re detaching slides' first table)",
        &[Member::Family(&bench::noise::family::NOISE)],
    ),
    Suite::full(
        "control-loop",
        "a 1000 us control loop's deviation from its deadlines: nanosleep, timerfd, busy TSC (the L4Re detaching slides' second table)",
        &[Member::Family(&bench::control::family::CONTROL)],
    ),
    Suite::full(
        "boot",
        "the HermitCore post's boot-time table: start to /init and to the first result, per environment of --env",
        &[Member::Family(&bench::boot::family::BOOT)],
    ),
    Suite::full(
        "microvm",
        "the price of each kind of VM exit in oscycles' own KVM guest (no QEMU), and a VM start; kvm-unit-tests' vmexit table",
        &[Member::Family(&bench::microvm::family::MICROVM)],
    ),
    Suite::full(
        "net",
        "Genode's Pandaboard network table: UDP and TCP throughput by payload size over loopback and a veth pair between namespaces, TCP request/response",
        &[Member::Family(&bench::net::family::NET)],
    ),
    Suite::full(
        "blk",
        "Genode's Pandaboard block table: sequential read and write by block size, O_DIRECT and through the page cache (--scratch on a disk)",
        &[Member::Family(&bench::blk::family::BLK)],
    ),
    Suite::full(
        "parallel",
        "syscall and same-core IPC on 1..all CPUs at once (the L4Re performance overview's plots)",
        &[Member::Family(&bench::parallel::family::PARALLEL)],
    ),
];

pub fn find_suite(name: &str) -> Option<&'static Suite> {
    SUITES.iter().find(|s| s.name == name)
}

pub fn suite_names() -> String {
    SUITES.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

impl Suite {
    /// Every case of the suite, in order. A family member need not be in
    /// [`FAMILIES`]: its benchmarks come from the family itself.
    pub fn cases(&self) -> Vec<(Benchmark, Params)> {
        self.cases_at(self.scale)
    }

    /// Every case of the suite at `scale` (`--scale`), in order.
    pub fn cases_at(&self, scale: Scale) -> Vec<(Benchmark, Params)> {
        let mut out = Vec::new();
        for m in self.members {
            match m {
                Member::Family(f) => {
                    for b in f.benchmarks() {
                        out.extend(b.cases(scale).into_iter().map(|p| (b.clone(), p)));
                    }
                }
                // An id no family has is left out (a test checks that every
                // suite's ids are benchmarks).
                Member::Case(id, fixed) => out.extend(find_benchmark(id).map(|b| (b.clone(), fixed.params()))),
                Member::EveryFamily => {
                    for b in benchmarks() {
                        out.extend(b.cases(scale).into_iter().map(|p| (b.clone(), p)));
                    }
                }
            }
        }
        out
    }

    pub fn contains(&self, b: &Benchmark) -> bool {
        self.members.iter().any(|m| match m {
            Member::Family(f) => b.is_of(*f),
            Member::Case(id, _) => *id == b.id,
            Member::EveryFamily => FAMILIES.iter().any(|f| b.is_of(*f)),
        })
    }

    /// The families its cases belong to, in [`FAMILIES`] order (families
    /// not listed there last).
    pub fn families(&self) -> Vec<&'static dyn Family> {
        let rank = |f: &dyn Family| FAMILIES.iter().position(|g| g.name() == f.name()).unwrap_or(usize::MAX);
        let mut out: Vec<&'static dyn Family> = Vec::new();
        for (b, _) in self.cases() {
            if !out.iter().any(|f| f.name() == b.family.name()) {
                out.push(b.family);
            }
        }
        out.sort_by_key(|f| rank(*f));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_quick_covers_every_family() {
        let b = benchmarks();
        let mut ids: Vec<&str> = b.iter().map(|b| b.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), b.len());
        let quick = find_suite("quick").unwrap();
        for f in FAMILIES {
            assert!(quick.families().iter().any(|q| q.name() == f.name()), "quick covers {}", f.name());
        }
        for bench in b {
            assert!(SUITES.iter().any(|s| s.contains(bench)), "{} is in a suite", bench.id);
        }
    }

    #[test]
    fn every_suite_case_names_a_real_benchmark_with_valid_parameters() {
        for s in SUITES {
            let cases = s.cases();
            assert!(!cases.is_empty(), "{}", s.name);
            for (b, p) in cases {
                if let Member::Case(..) =
                    s.members.iter().find(|m| matches!(m, Member::Case(id, _) if *id == b.id)).unwrap_or(&Member::Family(b.family))
                {
                    assert!(b.cases(Scale::Full).contains(&p), "{} {}: {p:?} is not one of its cases", s.name, b.id);
                }
            }
        }
    }
}
