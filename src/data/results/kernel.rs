//! What a cell says of its kernel when a QEMU plugin counted its timed
//! batches (`--kernel-counters`): metrics of the cell beside its
//! instruction count, per operation as the cell counts its operations,
//! each in a unit of its own, exact like guest instructions.

use super::{CaseResult, Metric, UNIT_INSTRUCTIONS};

/// Memory accesses (a load or a store of any size, counted once).
pub const UNIT_ACCESSES: &str = "guest_memory_accesses";
/// Entries into the kernel (a user instruction followed by a kernel one).
pub const UNIT_ENTRIES: &str = "guest_kernel_entries";
/// Writes to CR3: address-space switches.
pub const UNIT_CR3_WRITES: &str = "guest_cr3_writes";
/// Writes to TTBR0, 32-bit ARM's page-table base (CR3's counterpart).
pub const UNIT_TTBR0_WRITES: &str = "guest_ttbr0_writes";
/// Writes to CONTEXTIDR, 32-bit ARM's address-space identifier.
pub const UNIT_CONTEXTIDR_WRITES: &str = "guest_contextidr_writes";
/// Cache lines, by the plugin's cache model.
pub const UNIT_LINES: &str = "guest_cache_lines";
/// Misses in the plugin's cache model.
pub const UNIT_MISSES: &str = "guest_cache_misses";

/// One of the plugin's metrics: its name in a result, its unit, a table's
/// heading and what it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelMetric {
    pub name: &'static str,
    pub unit: &'static str,
    pub heading: &'static str,
    pub about: &'static str,
}

const fn m(name: &'static str, unit: &'static str, heading: &'static str, about: &'static str) -> KernelMetric {
    KernelMetric { name, unit, heading, about }
}

pub const KERNEL_INSTRUCTIONS: KernelMetric =
    m("kernel_instructions", UNIT_INSTRUCTIONS, "kernel", "instructions at kernel addresses, entry and exit included");
pub const USER_INSTRUCTIONS: KernelMetric = m(
    "user_instructions",
    UNIT_INSTRUCTIONS,
    "user",
    "the cell's instructions less the kernel's (and the hypervisor's): oscycles' loop and the library's path",
);
pub const HYPERVISOR_INSTRUCTIONS: KernelMetric =
    m("hypervisor_instructions", UNIT_INSTRUCTIONS, "hypervisor", "instructions at the hypervisor's addresses (Xen under a PV guest)");
pub const KERNEL_LOADS: KernelMetric =
    m("kernel_loads", UNIT_ACCESSES, "loads", "memory reads by kernel instructions (and the hypervisor's, where it is counted)");
pub const KERNEL_STORES: KernelMetric =
    m("kernel_stores", UNIT_ACCESSES, "stores", "memory writes by kernel instructions (and the hypervisor's, where it is counted)");
pub const KERNEL_ENTRIES: KernelMetric =
    m("kernel_entries", UNIT_ENTRIES, "entries", "entries into the kernel (system calls, faults, interrupts)");
pub const CR3_WRITES: KernelMetric = m("cr3_writes", UNIT_CR3_WRITES, "switches", "CR3 writes: address-space switches");
pub const TTBR0_WRITES: KernelMetric =
    m("ttbr0_writes", UNIT_TTBR0_WRITES, "TTBR0", "TTBR0 writes: 32-bit ARM's page-table base (seL4 on ARMv7: two a thread switch)");
pub const CONTEXTIDR_WRITES: KernelMetric =
    m("contextidr_writes", UNIT_CONTEXTIDR_WRITES, "ASID", "CONTEXTIDR writes (32-bit ARM's address-space identifier)");
pub const LINES_COLD: KernelMetric =
    m("kernel_lines_cold", UNIT_LINES, "lines (cold)", "distinct cache lines the kernel touched, its cache model emptied at every entry");
pub const MISSES_WARM: KernelMetric =
    m("kernel_misses_warm", UNIT_MISSES, "misses (warm)", "the kernel's misses in a cache model that is never emptied");

/// Every one, in the order a table lists them.
pub const ALL: [KernelMetric; 11] = [
    KERNEL_INSTRUCTIONS,
    USER_INSTRUCTIONS,
    HYPERVISOR_INSTRUCTIONS,
    KERNEL_LOADS,
    KERNEL_STORES,
    KERNEL_ENTRIES,
    CR3_WRITES,
    TTBR0_WRITES,
    CONTEXTIDR_WRITES,
    LINES_COLD,
    MISSES_WARM,
];

/// The detail that says why a counted run's cell has no such metrics.
pub const MISSING: &str = "kernel_counts_missing";

/// Whether `unit` is one of the plugin's counts (beside guest instructions).
pub fn is_count(unit: &str) -> bool {
    [UNIT_ACCESSES, UNIT_ENTRIES, UNIT_CR3_WRITES, UNIT_TTBR0_WRITES, UNIT_CONTEXTIDR_WRITES, UNIT_LINES, UNIT_MISSES].contains(&unit)
}

/// A unit as a table names it.
pub fn unit_word(unit: &str) -> Option<&'static str> {
    Some(match unit {
        UNIT_ACCESSES => "accesses",
        UNIT_ENTRIES => "entries",
        UNIT_CR3_WRITES => "CR3 writes",
        UNIT_TTBR0_WRITES => "TTBR0 writes",
        UNIT_CONTEXTIDR_WRITES => "CONTEXTIDR writes",
        UNIT_LINES => "lines",
        UNIT_MISSES => "misses",
        _ => return None,
    })
}

impl KernelMetric {
    /// Its metric in `r`, if counted.
    pub fn of<'a>(&self, r: &'a CaseResult) -> Option<&'a Metric> {
        r.metric(self.name)
    }

    /// Its median per operation in `r`, if counted.
    pub fn median(&self, r: &CaseResult) -> Option<f64> {
        self.of(r).map(|m| m.summary.median)
    }

    /// Per-batch samples made a metric of this kind.
    pub fn metric(&self, samples: &[f64]) -> Option<Metric> {
        let summary = crate::analysis::stats::Summary::of(samples)?;
        Some(Metric::cost(self.name, self.unit, summary).with_samples(samples))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_is_exact_and_has_a_word() {
        for k in ALL {
            assert!(super::super::is_exact(k.unit), "{}", k.name);
            assert!(k.unit == UNIT_INSTRUCTIONS || unit_word(k.unit).is_some(), "{}", k.name);
        }
        let names: std::collections::BTreeSet<_> = ALL.iter().map(|k| k.name).collect();
        assert_eq!(names.len(), ALL.len());
    }
}
