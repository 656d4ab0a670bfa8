//! The core of the typed contract between measuring and reporting: what a
//! case's parameters are ([`CaseParams`], the JSON map [`Params`]), how a
//! benchmark id is formed ([`id`], [`member`], and the `family!` and
//! `params!` macros each family's section is written with), and the sections
//! that belong to no family: an environment's facts, a condition's, the
//! attribution of noise. Each family's own section (its parameters, metric
//! and detail names, the name lists that order its table's rows) is in its
//! folder (`bench/<family>/schema.rs`); [`crate::families::bench::schema`] gathers them.
//!
//! serde_json's `Map` is a `BTreeMap` here (no `preserve_order`): a case's
//! parameters serialise in key order whatever the field order, so a struct's
//! JSON is byte for byte what the cases wrote as maps.

/// A case's parameters as the JSON map a result stores (`results::Params`).
pub type Params = serde_json::Map<String, serde_json::Value>;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Parameters of a case as a typed struct: written to and read from the
/// JSON map a result carries (`CaseResult::params`).
pub trait CaseParams: Serialize + DeserializeOwned + Sized {
    /// The JSON map of these parameters, as a result stores it.
    fn to_params(&self) -> Params {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            // Every Params struct serialises as an object; anything else
            // would be a programming error in this module's types.
            _ => Params::new(),
        }
    }

    /// The parameters of a result, or None where a key is missing, renamed,
    /// unknown or of another type (a result of another family, a damaged document).
    fn from_params(p: &Params) -> Option<Self> {
        serde_json::from_value(Value::Object(p.clone())).ok()
    }
}

impl<T: Serialize + DeserializeOwned> CaseParams for T {}

/// The parameters of a benchmark that sweeps none: `{}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// A benchmark id: `FAMILY.NAME` (`ipc.pipe`).
pub fn id(family: &str, name: &str) -> String {
    format!("{family}.{name}")
}

/// NAME of a benchmark id `FAMILY.NAME`; the id itself when it is of another family.
pub fn member<'a>(family: &str, id: &'a str) -> &'a str {
    id.strip_prefix(family).and_then(|rest| rest.strip_prefix('.')).unwrap_or(id)
}

/// A family's name, and its benchmark ids: `FAMILY`, `id(NAME)`, `name_of(ID)`.
macro_rules! family {
    ($name:literal) => {
        /// The family's name, as results and the registry give it.
        pub const FAMILY: &str = $name;

        /// The id of this family's benchmark `name`.
        pub fn id(name: &str) -> String {
            $crate::data::schema_core::id(FAMILY, name)
        }

        /// The benchmark's name within this family (`pipe` of `ipc.pipe`).
        pub fn name_of(id: &str) -> &str {
            $crate::data::schema_core::member(FAMILY, id)
        }
    };
}
pub(crate) use family;

/// A family's case parameters: a struct whose fields are exactly the JSON
/// keys its cases write (any other key makes a result not read as it), with
/// the same derives for every family.
macro_rules! params {
    ($(#[$doc:meta])* Params { $($(#[$attr:meta])* $field:ident: $ty:ty),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct Params {
            $($(#[$attr])* pub $field: $ty),+
        }
    };
}
pub(crate) use params;

/// What the file cases (bw's file kinds, pagefault.file) record of the
/// file they read: bytes per write(2) that wrote it, and the write calls
/// the kernel counted writing it (their parameter `file_writes` names the
/// layout).
pub mod file_layout {
    pub const WRITE_BYTES: &str = "file_write_bytes";
    pub const WRITE_CALLS: &str = "file_write_calls";
}

/// What the noise and control families record of the CPU during a case.
pub mod attribution {
    /// The detail holding it.
    pub const ATTRIBUTION: &str = "attribution";
    /// Interrupts on the CPU by source.
    pub const INTERRUPTS: &str = "interrupts";
    /// Softirqs on the CPU by kind.
    pub const SOFTIRQS: &str = "softirqs";
    /// Involuntary context switches of the measuring thread.
    pub const INVOLUNTARY_CONTEXT_SWITCHES: &str = "involuntary_context_switches";
}

/// What an environment says of itself (`environment.settings.<name>` of a
/// run document), as far as the report reads it: each environment writes
/// these keys through the constants and may add facts of its own.
pub mod environment {
    use serde::Deserialize;
    use serde_json::Value;

    /// How QEMU ran it: "tcg" (emulated cycles), "icount" (under the
    /// instruction counter: guest instructions) or "kvm".
    pub const ACCEL: &str = "accel";
    /// Its TSC moved in steps of this many cycles (a hypervisor emulates it).
    pub const TSC_STEP_CYCLES: &str = "tsc_step_cycles";
    /// The kernel release its cases saw (uname inside it).
    pub const KERNEL_INSIDE: &str = "kernel_inside";
    /// The command line a guest kernel was booted with.
    pub const GUEST_CMDLINE: &str = "guest_cmdline";
    /// An independent few-line program's figures, booted the same way.
    pub const INDEPENDENT_CHECK: &str = "independent_check";
    /// Where uml's and gvisor's intercepting process ran against the
    /// program's (`--helper-placement`).
    pub const HELPER_PLACEMENT: &str = "helper_placement";

    /// What [`HELPER_PLACEMENT`] says, as far as the report reads it.
    #[derive(Debug, Default, Clone, Deserialize, PartialEq)]
    pub struct HelperPlacement {
        #[serde(default)]
        pub placement: String,
        #[serde(default)]
        pub default: String,
        #[serde(default)]
        pub intercepting: String,
        #[serde(default)]
        pub intercepting_cpu: Option<u64>,
        #[serde(default)]
        pub program: String,
        #[serde(default)]
        pub program_cpu: Option<u64>,
    }

    /// What an independent few-line program measured in the environment
    /// (hermit: rdtsc around 10^5 getpid and yield_now calls and 2000 futex
    /// round trips between two threads), or why not.
    #[derive(Debug, Default, Clone, Deserialize, PartialEq)]
    pub struct IndependentCheck {
        #[serde(default)]
        pub getpid_cycles: Option<f64>,
        #[serde(default)]
        pub yield_cycles: Option<f64>,
        #[serde(default)]
        pub futex_one_way_cycles: Option<f64>,
        /// seL4 and GNU Mach under `--kernel-counters`: the kernel's
        /// instructions one way in its IPC loop (`run::env::kcount`).
        #[serde(default)]
        pub kernel_instructions_one_way: Option<f64>,
        #[serde(default)]
        pub failed: Option<String>,
    }

    /// The facts the report reads, typed.
    #[derive(Debug, Default, Clone, Deserialize, PartialEq)]
    pub struct Facts {
        #[serde(default)]
        pub accel: Option<String>,
        #[serde(default)]
        pub tsc_step_cycles: Option<u64>,
        #[serde(default)]
        pub independent_check: Option<IndependentCheck>,
        #[serde(default)]
        pub kernel_inside: Option<String>,
        /// The command line a guest kernel was booted with.
        #[serde(default)]
        pub guest_cmdline: Option<String>,
        #[serde(default)]
        pub helper_placement: Option<HelperPlacement>,
    }

    impl Facts {
        /// Reads them from an environment's settings (none: all unknown).
        pub fn read(settings: Option<&Value>) -> Facts {
            settings.and_then(|v| Facts::deserialize(v).ok()).unwrap_or_default()
        }

        /// Whether its cycles are emulated (QEMU's TCG; `name`: the
        /// environment, for runs stored before the fact was written).
        pub fn emulated(&self, name: &str) -> bool {
            self.accel.as_deref() == Some("tcg") || (self.accel.is_none() && name == "qemu-tcg")
        }

        /// Whether it ran under QEMU's instruction counter: its cells are
        /// guest instructions.
        pub fn counted(&self) -> bool {
            self.accel.as_deref() == Some("icount")
        }
    }
}

/// What a result's condition records (`Condition::facts`).
pub mod condition {
    /// The load's name.
    pub const LOAD: &str = "load";
    /// Build units per second (load `build`).
    pub const BUILD_UNITS_PER_S: &str = "build_units_per_s";
    /// Disk MB/s written, read, and TCP MB/s (load `io`).
    pub const DISK_WRITE_MB_PER_S: &str = "disk_write_mb_per_s";
    pub const DISK_READ_MB_PER_S: &str = "disk_read_mb_per_s";
    pub const TCP_MB_PER_S: &str = "tcp_mb_per_s";
    /// Isolation facts: the cpuset partition, interrupts moved away and
    /// those that would not move, the CPU latency request held.
    pub const CPUSET: &str = "cpuset";
    pub const IRQS_MOVED_AWAY: &str = "irqs_moved_away";
    pub const IRQS_UNMOVABLE: &str = "irqs_unmovable";
    pub const CPU_DMA_LATENCY: &str = "cpu_dma_latency";
    /// The RT throttling setting (`-1`: off).
    pub const SCHED_RT_RUNTIME_US: &str = "sched_rt_runtime_us";
    /// The preemption mode a condition ran under (`--preempt`): which, and
    /// whether it was switched from another.
    pub const PREEMPT: &str = "preempt";
    /// Isolation facts the noise tables note, in their order.
    pub const ISOLATION_NOTES: [&str; 6] = [CPUSET, IRQS_MOVED_AWAY, IRQS_UNMOVABLE, CPU_DMA_LATENCY, SCHED_RT_RUNTIME_US, PREEMPT];
}
