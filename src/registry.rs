//! The one registry of benchmarks and suites. `list`, suite membership,
//! `--bench` validation and the tests' tiny runs all come from here.

use crate::bench::aim;
use crate::bench::alloc::Kind as AllocKind;
use crate::bench::bw::BwKind;
use crate::bench::cases;
use crate::bench::cases::blk::BlkTest;
use crate::bench::cases::hermit::HermitOp;
use crate::bench::cases::microvm::MicroOp;
use crate::bench::cases::net::NetTest;
use crate::bench::control::Wait;
use crate::bench::ipc::Mechanism;
use crate::bench::memcpy::Impl as MemcpyImpl;
use crate::bench::pagefault::FaultKind;
use crate::bench::parallel::ParOp;
use crate::bench::proc::ProcOp;
use crate::bench::syscall::Syscall;
use crate::bench::{CaseCtx, CaseData, CaseError};
use crate::results::Params;
use std::sync::OnceLock;

/// A group of benchmarks that share code and a table layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    Syscall,
    Ipc,
    Ctx,
    Proc,
    Bandwidth,
    Pagefault,
    Aim,
    Hermit,
    Stream,
    Memcpy,
    Alloc,
    PacketStream,
    Parallel,
    Noise,
    Control,
    Net,
    Blk,
    Boot,
    Microvm,
}

impl Family {
    pub const ALL: [Family; 19] = [
        Family::Syscall,
        Family::Ipc,
        Family::Ctx,
        Family::Proc,
        Family::Bandwidth,
        Family::Pagefault,
        Family::Aim,
        Family::Hermit,
        Family::Stream,
        Family::Memcpy,
        Family::Alloc,
        Family::PacketStream,
        Family::Parallel,
        Family::Noise,
        Family::Control,
        Family::Net,
        Family::Blk,
        Family::Boot,
        Family::Microvm,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::Syscall => "syscall",
            Family::Ipc => "ipc",
            Family::Ctx => "ctx",
            Family::Proc => "proc",
            Family::Bandwidth => "bw",
            Family::Pagefault => "pagefault",
            Family::Aim => "aim",
            Family::Hermit => "hermit",
            Family::Stream => "stream",
            Family::Memcpy => "memcpy",
            Family::Alloc => "alloc",
            Family::PacketStream => "packet-stream",
            Family::Parallel => "parallel",
            Family::Noise => "noise",
            Family::Control => "control",
            Family::Net => "net",
            Family::Blk => "blk",
            Family::Boot => "boot",
            Family::Microvm => "microvm",
        }
    }
}

/// What a benchmark measures, for dispatch to its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Syscall(Syscall),
    Ipc(Mechanism),
    Ctx,
    Proc(ProcOp),
    Bandwidth(BwKind),
    Pagefault(FaultKind),
    Aim,
    Hermit(HermitOp),
    Stream,
    Memcpy(MemcpyImpl),
    Alloc(AllocKind),
    PacketStream,
    Parallel(ParOp),
    Fwq,
    Control(Wait),
    Net(NetTest),
    Blk(BlkTest),
    Boot,
    Microvm(MicroOp),
}

/// How thorough a suite is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Every family briefly: fewer parameter points, shorter batches.
    Quick,
    Full,
}

#[derive(Debug, Clone)]
pub struct Benchmark {
    pub id: String,
    pub family: Family,
    pub kind: Kind,
    pub description: &'static str,
    /// The parameters its cases sweep, for people.
    pub parameters: &'static str,
    pub needs: &'static str,
}

/// Where a family's cases are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// In whichever environment the run is in (natively, or inside a guest).
    Anywhere,
    /// By the host, once per environment of the run (boot time): never
    /// inside an environment, never in a round's process.
    FromHost,
    /// Only in the environment of this name, when the run has it (microvm's
    /// exit table belongs to the microvm environment).
    OnlyIn(&'static str),
}

impl Benchmark {
    pub fn runs(&self) -> Runs {
        match self.family {
            Family::Boot => Runs::FromHost,
            Family::Microvm => Runs::OnlyIn("microvm"),
            _ => Runs::Anywhere,
        }
    }

    /// Whether its cases repeat in every round: batch-sampled costs whose
    /// metrics keep raw samples. Cases measured over a fixed time, or whose
    /// summary is over a distribution (noise, net, blk...), run in the first
    /// round only.
    pub fn repeats_in_rounds(&self) -> bool {
        matches!(
            self.family,
            Family::Syscall
                | Family::Ipc
                | Family::Ctx
                | Family::Proc
                | Family::Bandwidth
                | Family::Pagefault
                | Family::Hermit
                | Family::Memcpy
                | Family::Alloc
        )
    }

    /// Whether it does file I/O that needs a disk (not tmpfs) under --scratch.
    pub fn needs_disk(&self) -> bool {
        self.family == Family::Blk
    }

    /// Whether it can run on this host at all; the reason when not.
    pub fn supported(&self) -> Result<(), String> {
        match self.kind {
            Kind::Syscall(s) => cases::syscall::supported(s),
            Kind::Ipc(m) => cases::ipc::supported(m),
            Kind::Proc(op) => cases::proc::supported(op),
            Kind::Pagefault(k) => cases::pagefault::supported(k),
            Kind::Ctx
            | Kind::Bandwidth(_)
            | Kind::Aim
            | Kind::Hermit(_)
            | Kind::Stream
            | Kind::Memcpy(_)
            | Kind::Alloc(_)
            | Kind::PacketStream
            | Kind::Parallel(_)
            | Kind::Fwq
            | Kind::Control(_)
            | Kind::Net(_)
            | Kind::Blk(_)
            | Kind::Boot => Ok(()),
            Kind::Microvm(_) => cases::microvm::supported(),
        }
    }

    pub fn cases(&self, scale: Scale) -> Vec<Params> {
        match self.kind {
            Kind::Syscall(_) | Kind::Proc(_) | Kind::Pagefault(_) | Kind::Hermit(_) | Kind::Boot => vec![Params::new()],
            Kind::Microvm(op) => cases::microvm::cases(op),
            Kind::Stream => cases::stream::cases(scale),
            Kind::Memcpy(_) => cases::memcpy::cases(scale),
            Kind::Alloc(k) => cases::alloc::cases(k, scale),
            Kind::PacketStream => cases::packet_stream::cases(scale),
            Kind::Parallel(_) => cases::parallel::cases(scale),
            Kind::Fwq => cases::noise::fwq_cases(scale),
            Kind::Control(_) => cases::noise::control_cases(scale),
            Kind::Net(t) => cases::net::cases(t, scale),
            Kind::Blk(_) => cases::blk::cases(scale),
            Kind::Ipc(_) => cases::ipc::cases(scale),
            Kind::Ctx => cases::ctx::cases(scale),
            Kind::Bandwidth(k) => cases::bw::cases(k, scale),
            Kind::Aim => cases::aim::cases(scale),
        }
    }

    pub fn run(&self, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
        match self.kind {
            Kind::Syscall(s) => cases::syscall::run(s, ctx),
            Kind::Ipc(m) => cases::ipc::run(m, ctx),
            Kind::Ctx => cases::ctx::run(ctx),
            Kind::Proc(op) => cases::proc::run(op, ctx),
            Kind::Bandwidth(k) => cases::bw::run(k, ctx),
            Kind::Pagefault(k) => cases::pagefault::run(k, ctx),
            Kind::Aim => cases::aim::run(ctx),
            Kind::Hermit(op) => cases::hermit::run(op, ctx),
            Kind::Stream => cases::stream::run(ctx),
            Kind::Memcpy(imp) => cases::memcpy::run(imp, ctx),
            Kind::Alloc(k) => cases::alloc::run(k, ctx),
            Kind::PacketStream => cases::packet_stream::run(ctx),
            Kind::Parallel(op) => cases::parallel::run(op, ctx),
            Kind::Fwq => cases::noise::run_fwq(ctx),
            Kind::Control(w) => cases::noise::run_control(w, ctx),
            Kind::Net(t) => cases::net::run(t, ctx),
            Kind::Blk(t) => cases::blk::run(t, ctx),
            // The host measures boots itself, per environment (main's env loop).
            Kind::Microvm(op) => cases::microvm::run(op, ctx),
            Kind::Boot => Err(CaseError::NotApplicable("boot time is measured by the host for each environment of --env".into())),
        }
    }
}

pub fn benchmarks() -> &'static [Benchmark] {
    static REGISTRY: OnceLock<Vec<Benchmark>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let entry = |id: String, family, kind, description, parameters, needs| Benchmark { id, family, kind, description, parameters, needs };
        let mut v: Vec<Benchmark> = Vec::new();
        v.extend(Syscall::ALL.map(|s| entry(format!("syscall.{}", s.name()), Family::Syscall, Kind::Syscall(s), s.description(), "none (one pinned thread)", "-")));
        v.extend(Mechanism::ALL.map(|m| {
            let needs = if matches!(m, Mechanism::Tcp | Mechanism::Udp) { "loopback network" } else { "-" };
            entry(format!("ipc.{}", m.name()), Family::Ipc, Kind::Ipc(m), m.description(), "words 0,1,2,4,8,16,64; space intra|inter; cores same|cross", needs)
        }));
        v.push(entry(
            "ctx.ring".into(),
            Family::Ctx,
            Kind::Ctx,
            "lat_ctx: N processes pass a token round a ring of pipes, each summing its S KiB working set; ring overhead measured in one process and subtracted",
            "procs 2,3,4,10; ws_kib 0,4,16,64 (all on one CPU)",
            "-",
        ));
        v.extend(ProcOp::ALL.map(|op| entry(format!("proc.{}", op.name()), Family::Proc, Kind::Proc(op), op.description(), "none (one pinned thread)", "exec from --scratch")));
        v.extend(BwKind::ALL.map(|k| {
            let params = if k.is_stream() { "cores same|cross; 64 KiB chunks" } else { "none" };
            entry(format!("bw.{}", k.name()), Family::Bandwidth, Kind::Bandwidth(k), k.description(), params, if k.is_stream() { "-" } else { "memory or --scratch space" })
        }));
        v.extend(FaultKind::ALL.map(|k| entry(format!("pagefault.{}", k.name()), Family::Pagefault, Kind::Pagefault(k), k.description(), "none (pages per batch doubled)", "-")));
        v.push(entry(
            "aim.mix".into(),
            Family::Aim,
            Kind::Aim,
            "AIM7-style jobs/min/task: T processes repeat a fixed compute+memory+file+fork job",
            "tasks 1..2 x CPUs",
            "--scratch space",
        ));
        debug_assert!(v.iter().all(|b| b.family != Family::Aim || aim::MAX_TASKS >= 2));
        v.extend(HermitOp::ALL.map(|op| entry(format!("hermit.{}", op.name()), Family::Hermit, Kind::Hermit(op), op.description(), "none (one pinned thread)", "-")));
        v.push(entry(
            "stream.kernels".into(),
            Family::Stream,
            Kind::Stream,
            "a variant of STREAM: copy, scale, add, triad over three arrays of 4x the LLC (--mem-bytes overrides), validated",
            "threads single|per-cpu (one pinned per --cpus entry)",
            "3 arrays of memory",
        ));
        v.extend(MemcpyImpl::ALL.map(|imp| {
            entry(format!("memcpy.{}", imp.name()), Family::Memcpy, Kind::Memcpy(imp), imp.description(), "bytes 64..64 MiB; src_off, dst_off 0,1,4,8,32,64", "-")
        }));
        v.extend(AllocKind::ALL.map(|k| {
            let params = if k == AllocKind::Bitmap { "live 25,100,400,1600; bytes 64,256,1500,4096; fill half|nearly-full" } else { "live 25,100,400,1600; bytes 64,256,1500,4096" };
            entry(format!("alloc.{}", k.name()), Family::Alloc, Kind::Alloc(k), k.description(), params, "-")
        }));
        v.push(entry(
            "packet-stream.sweep".into(),
            Family::PacketStream,
            Kind::PacketStream,
            "a Genode-style packet stream between two processes (shared submit/ack rings, bitmap packet slots, notifications only when a side sleeps) against synchronous RPC over shared memory and a UNIX socket",
            "mode stream|rpc-shm|rpc-unix; batch 1,4,16,64; depth 16,64,256,1024; bytes 64,1024,1500,4096; notify futex|eventfd",
            "2 CPUs for cross-core",
        ));
        v.push(entry(
            "noise.fwq".into(),
            Family::Noise,
            Kind::Fwq,
            "FWQ: a fixed work quantum (inline-assembly loop) timed over and over on a pinned CPU; deltas to the minimum are OS noise",
            "samples 10,000 (quick) / 100,000",
            "-",
        ));
        v.extend(Wait::ALL.map(|w| entry(format!("control.{}", w.name()), Family::Control, Kind::Control(w), w.description(), "iterations 300 (quick) / 3,000", "-")));
        v.extend(NetTest::ALL.map(|t| entry(format!("net.{}", t.name()), Family::Net, Kind::Net(t), t.description(), t.parameters(), "veth: root and ip (iproute2)")));
        v.extend(BlkTest::ALL.map(|t| {
            entry(format!("blk.{}", t.name()), Family::Blk, Kind::Blk(t), t.description(), cases::blk::PARAMETERS, "--scratch on a disk filesystem (not tmpfs)")
        }));
        v.extend(MicroOp::ALL.map(|op| entry(format!("microvm.{}", op.name()), Family::Microvm, Kind::Microvm(op), op.description(), "cpl 0,3 (guest kernel / user mode); iterations calibrated; a fresh VM per run", "/dev/kvm")));
        v.push(entry(
            "boot.start".into(),
            Family::Boot,
            Kind::Boot,
            "time from starting an environment (process, container, VMM) to the first act of its init (oscycles' hello) and to its first result (a tiny getpid run); median of several starts",
            "one per environment of --env; 3 starts each",
            "-",
        ));
        v.extend(ParOp::ALL.map(|op| entry(format!("parallel.{}", op.name()), Family::Parallel, Kind::Parallel(op), op.description(), "instances 1..all allowed CPUs", "-")));
        v
    })
}

pub fn find_benchmark(id: &str) -> Option<&'static Benchmark> {
    benchmarks().iter().find(|b| b.id == id)
}

/// What a suite holds: whole families, or one case of a benchmark given by
/// its parameters as JSON (a view onto another suite's measurement).
#[derive(Debug)]
pub enum Member {
    Family(Family),
    Case(&'static str, &'static str),
}

#[derive(Debug)]
pub struct Suite {
    pub name: &'static str,
    pub description: &'static str,
    pub members: &'static [Member],
    pub scale: Scale,
}

pub const SUITES: &[Suite] = &[
    Suite {
        name: "quick",
        description: "every family briefly (memory bandwidths, which need buffers 4x the LLC, only in lmbench)",
        members: &[
            Member::Family(Family::Syscall),
            Member::Family(Family::Ipc),
            Member::Family(Family::Ctx),
            Member::Family(Family::Proc),
            Member::Family(Family::Bandwidth),
            Member::Family(Family::Pagefault),
            Member::Family(Family::Aim),
            Member::Family(Family::Hermit),
            Member::Family(Family::Stream),
            Member::Family(Family::Memcpy),
            Member::Family(Family::Alloc),
            Member::Family(Family::PacketStream),
            Member::Family(Family::Parallel),
            Member::Family(Family::Noise),
            Member::Family(Family::Control),
            Member::Family(Family::Net),
            Member::Family(Family::Blk),
            Member::Family(Family::Boot),
            Member::Family(Family::Microvm),
        ],
        scale: Scale::Quick,
    },
    Suite {
        name: "syscall",
        description: "system-call cost (seed 004's syscall column)",
        members: &[Member::Family(Family::Syscall)],
        scale: Scale::Full,
    },
    Suite {
        name: "l4-ipc",
        description: "one-way IPC cost by payload, intra/inter, same/cross core (seeds 000, 004)",
        members: &[Member::Family(Family::Ipc)],
        scale: Scale::Full,
    },
    Suite {
        name: "lmbench",
        description: "seed 000's LMBench latency and bandwidth tables and AIM7-style jobs/min/task",
        members: &[
            Member::Family(Family::Ctx),
            Member::Case("ipc.fifo", r#"{"words":1,"space":"inter","cores":"same"}"#),
            Member::Case("ipc.pipe", r#"{"words":1,"space":"inter","cores":"same"}"#),
            Member::Case("ipc.unix-stream", r#"{"words":1,"space":"inter","cores":"same"}"#),
            Member::Case("syscall.getppid", "{}"),
            Member::Family(Family::Proc),
            Member::Family(Family::Pagefault),
            Member::Family(Family::Bandwidth),
            Member::Family(Family::Aim),
        ],
        scale: Scale::Full,
    },
    Suite {
        name: "hermit-basic",
        description: "seed 003's basic benchmark: getpid, sched_yield (alone, and with a second runnable thread), malloc(1 MiB), first write access",
        members: &[
            Member::Case("syscall.getpid", "{}"),
            Member::Case("syscall.sched_yield", "{}"),
            Member::Case("hermit.sched_yield-busy", "{}"),
            Member::Case("hermit.malloc-1m", "{}"),
            Member::Case("pagefault.anon", "{}"),
            Member::Case("pagefault.anon-thp", "{}"),
            Member::Case("pagefault.anon-hugetlb", "{}"),
        ],
        scale: Scale::Full,
    },
    Suite {
        name: "stream",
        description: "a variant of STREAM (seed 003's table), single-threaded and a thread per CPU",
        members: &[Member::Family(Family::Stream)],
        scale: Scale::Full,
    },
    Suite {
        name: "memcpy",
        description: "memcpy by size and source/destination alignment: C library, byte loop, word loop (seed 002)",
        members: &[Member::Family(Family::Memcpy)],
        scale: Scale::Full,
    },
    Suite {
        name: "alloc",
        description: "allocate+free pairs by live set and block size: system, slab, bitmap, best-fit (seed 002)",
        members: &[Member::Family(Family::Alloc)],
        scale: Scale::Full,
    },
    Suite {
        name: "packet-stream",
        description: "shared-memory packet stream with batched notifications against synchronous RPC (seed 002)",
        members: &[Member::Family(Family::PacketStream)],
        scale: Scale::Full,
    },
    Suite {
        name: "fwq",
        description: "OS noise by fixed work quantum on the first --cpus CPU (seed 001's first table)",
        members: &[Member::Family(Family::Noise)],
        scale: Scale::Full,
    },
    Suite {
        name: "control-loop",
        description: "a 1000 us control loop's deviation from its deadlines: nanosleep, timerfd, busy TSC (seed 001's second table)",
        members: &[Member::Family(Family::Control)],
        scale: Scale::Full,
    },
    Suite {
        name: "boot",
        description: "seed 003's boot-time table: start to /init and to the first result, per environment of --env",
        members: &[Member::Family(Family::Boot)],
        scale: Scale::Full,
    },
    Suite {
        name: "microvm",
        description: "the price of each kind of VM exit in oscycles' own KVM guest (no QEMU), and a VM start; kvm-unit-tests' vmexit table",
        members: &[Member::Family(Family::Microvm)],
        scale: Scale::Full,
    },
    Suite {
        name: "net",
        description: "seed 002's network table: UDP and TCP throughput by payload size over loopback and a veth pair between namespaces, TCP request/response",
        members: &[Member::Family(Family::Net)],
        scale: Scale::Full,
    },
    Suite {
        name: "blk",
        description: "seed 002's block table: sequential read and write by block size, O_DIRECT and through the page cache (--scratch on a disk)",
        members: &[Member::Family(Family::Blk)],
        scale: Scale::Full,
    },
    Suite {
        name: "parallel",
        description: "syscall and same-core IPC on 1..all CPUs at once (seed 004's plots)",
        members: &[Member::Family(Family::Parallel)],
        scale: Scale::Full,
    },
];

pub fn find_suite(name: &str) -> Option<&'static Suite> {
    SUITES.iter().find(|s| s.name == name)
}

pub fn suite_names() -> String {
    SUITES.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

impl Suite {
    /// Every case of the suite, in order.
    pub fn cases(&self) -> Vec<(&'static Benchmark, Params)> {
        let mut out = Vec::new();
        for m in self.members {
            match m {
                Member::Family(f) => {
                    for b in benchmarks().iter().filter(|b| b.family == *f) {
                        out.extend(b.cases(self.scale).into_iter().map(|p| (b, p)));
                    }
                }
                Member::Case(id, params) => {
                    let b = find_benchmark(id).unwrap_or_else(|| panic!("suite {} names unknown benchmark {id}", self.name));
                    let p: Params = serde_json::from_str(params).unwrap_or_else(|e| panic!("suite {} case {id}: {e}", self.name));
                    out.push((b, p));
                }
            }
        }
        out
    }

    pub fn contains(&self, b: &Benchmark) -> bool {
        self.members.iter().any(|m| match m {
            Member::Family(f) => *f == b.family,
            Member::Case(id, _) => *id == b.id,
        })
    }

    pub fn families(&self) -> Vec<Family> {
        let mut f: Vec<Family> = self.cases().iter().map(|(b, _)| b.family).collect();
        f.sort();
        f.dedup();
        f
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
        for f in Family::ALL {
            assert!(quick.families().contains(&f), "quick covers {f:?}");
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
