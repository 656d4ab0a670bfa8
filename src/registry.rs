//! The one registry of benchmarks and suites. `list`, suite membership,
//! `--help` text and the README's table all come from here.

use crate::bench::ipc::Mechanism;
use crate::bench::syscall::Syscall;
use crate::bench::{self, CaseCtx, CaseData, CaseError};
use crate::results::Params;
use std::sync::OnceLock;

/// A group of benchmarks that share code and a table layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    Syscall,
    Ipc,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Syscall => "syscall",
            Family::Ipc => "ipc",
        }
    }
}

/// What a benchmark measures, for dispatch to its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Syscall(Syscall),
    Ipc(Mechanism),
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

impl Benchmark {
    /// Whether it can run on this host at all; the reason when not.
    pub fn supported(&self) -> Result<(), String> {
        match self.kind {
            Kind::Syscall(s) => bench::syscall_family::supported(s),
            Kind::Ipc(m) => bench::ipc_family::supported(m),
        }
    }
    pub fn cases(&self, scale: Scale) -> Vec<Params> {
        match self.kind {
            Kind::Syscall(_) => bench::syscall_family::cases(scale),
            Kind::Ipc(_) => bench::ipc_family::cases(scale),
        }
    }
    pub fn run(&self, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
        match self.kind {
            Kind::Syscall(s) => bench::syscall_family::run(s, ctx),
            Kind::Ipc(m) => bench::ipc_family::run(m, ctx),
        }
    }
}

pub fn benchmarks() -> &'static [Benchmark] {
    static REGISTRY: OnceLock<Vec<Benchmark>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let syscalls = Syscall::ALL.into_iter().map(|s| Benchmark {
            id: format!("syscall.{}", s.name()),
            family: Family::Syscall,
            kind: Kind::Syscall(s),
            description: s.description(),
            parameters: "none (one pinned thread)",
            needs: "-",
        });
        let ipc = Mechanism::ALL.into_iter().map(|m| Benchmark {
            id: format!("ipc.{}", m.name()),
            family: Family::Ipc,
            kind: Kind::Ipc(m),
            description: m.description(),
            parameters: "words 0,1,2,4,8,16,64; space intra|inter; cores same|cross",
            needs: if matches!(m, Mechanism::Tcp | Mechanism::Udp) { "loopback network" } else { "-" },
        });
        syscalls.chain(ipc).collect()
    })
}

pub fn find_benchmark(id: &str) -> Option<&'static Benchmark> {
    benchmarks().iter().find(|b| b.id == id)
}

#[derive(Debug)]
pub struct Suite {
    pub name: &'static str,
    pub description: &'static str,
    pub families: &'static [Family],
    pub scale: Scale,
}

pub const SUITES: &[Suite] = &[
    Suite {
        name: "quick",
        description: "every family briefly: syscalls, and IPC at 0, 8 and 64 words",
        families: &[Family::Syscall, Family::Ipc],
        scale: Scale::Quick,
    },
    Suite {
        name: "syscall",
        description: "system-call cost (seed 004's syscall column)",
        families: &[Family::Syscall],
        scale: Scale::Full,
    },
    Suite {
        name: "l4-ipc",
        description: "one-way IPC cost by payload, intra/inter, same/cross core (seeds 000, 004)",
        families: &[Family::Ipc],
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
    pub fn benchmarks(&self) -> impl Iterator<Item = &'static Benchmark> + '_ {
        benchmarks().iter().filter(|b| self.families.contains(&b.family))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_family_is_in_a_suite() {
        let b = benchmarks();
        let mut ids: Vec<&str> = b.iter().map(|b| b.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), b.len());
        for bench in b {
            assert!(SUITES.iter().any(|s| s.families.contains(&bench.family)), "{}", bench.id);
            assert!(find_suite("quick").unwrap().families.contains(&bench.family), "quick covers {}", bench.id);
        }
    }
}
