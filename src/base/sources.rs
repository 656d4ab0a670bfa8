//! The published evaluations whose tables oscycles reproduces, named as a reader would cite
//! them. Table titles cite one briefly ([`Source::short`]); `oscycles list --sources` and the
//! README list them in full ([`Source::citation`]).

crate::named_enum! {
    /// One published evaluation.
    pub enum Source {
        L4Performance = "l4-performance",
        L4ReDetaching = "l4re-detaching",
        GenodePandaboard = "genode-pandaboard",
        HermitCoreXen = "hermitcore-pvh-hvm",
        L4ReOverview = "l4re-performance-overview",
    }
}

impl Source {
    /// How a table title cites it.
    pub fn short(self) -> &'static str {
        match self {
            Source::L4Performance => "the Trustworthy Systems L4 performance page (Wombat)",
            Source::L4ReDetaching => "the L4Re \"Detaching Linux threads\" slides",
            Source::GenodePandaboard => "Genode's Pandaboard article",
            Source::HermitCoreXen => "the HermitCore PVH/HVM benchmark post",
            Source::L4ReOverview => "the L4Re performance overview",
        }
    }

    /// Who published it, its title, and what it measured.
    pub fn citation(self) -> &'static str {
        match self {
            Source::L4Performance => {
                "Trustworthy Systems (NICTA), \"L4 performance\": NICTA::Pistachio-embedded one-way IPC in cycles by payload \
                 (0..4, 8, 16 message registers), and Wombat, Linux para-virtualised on L4, against native Linux in LMBench \
                 latencies and bandwidths with a \"Rel. Perf\" column, and AIM7 jobs/min/task"
            }
            Source::L4ReDetaching => {
                "L4Re, \"Detaching Linux threads\" (real-time slides): FWQ OS noise and a 1000 us control loop under idle, \
                 build and I/O load, Linux against PREEMPT Linux against a thread detached from L4Linux"
            }
            Source::GenodePandaboard => {
                "Genode Labs, \"How Genode came to the Pandaboard\": UDP/TCP throughput by packet size, block throughput by \
                 block size, allocator and memcpy costs, a shared-memory packet stream against RPC, SMP affinity"
            }
            Source::HermitCoreXen => {
                "HermitCore's HVM and PVH ports on Xen, \"performance comparison\" (blog post): getpid, sched_yield, \
                 malloc(1 MiB), first write access, STREAM and boot time under KVM, QEMU (TCG), Xen HVM and Xen PVH"
            }
            Source::L4ReOverview => {
                "L4Re, \"Performance Overview: IPC, context-switch and syscall\" (ipcbench): intra- and inter-address-space \
                 IPC and syscall cycles per platform, and the same on every core in parallel"
            }
        }
    }

    /// The suites that reproduce its tables.
    pub fn suites(self) -> &'static [&'static str] {
        match self {
            Source::L4Performance => &["l4-ipc", "lmbench"],
            Source::L4ReDetaching => &["fwq", "control-loop"],
            Source::GenodePandaboard => &["net", "blk", "alloc", "memcpy", "packet-stream"],
            Source::HermitCoreXen => &["hermit-basic", "stream", "boot"],
            Source::L4ReOverview => &["l4-ipc", "syscall", "parallel"],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::named::Named;

    #[test]
    fn every_source_names_suites_that_exist() {
        let suites: Vec<&str> = crate::run::registry::SUITES.iter().map(|s| s.name).collect();
        for s in Source::ALL {
            for name in s.suites() {
                assert!(suites.contains(name), "{} names suite {name}, which does not exist", s.name());
            }
        }
    }
}
