//! The typed contract between measuring and reporting: per family, the
//! parameters a case writes (one struct, its fields exactly the JSON keys),
//! the names of its metrics and of the details the report reads, how its
//! benchmark ids are formed, and the name lists that order a table's rows.
//! The cases write through these types and the report reads through them;
//! neither spells a key, a metric name or an id by hand.
//!
//! serde_json's `Map` is a `BTreeMap` here (no `preserve_order`): a case's
//! parameters serialise in key order whatever the field order, so a struct's
//! JSON is byte for byte what the cases wrote as maps.

pub use crate::named::Named;
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

/// Every family's name, in the registry's order: the tests' check that
/// each family of the registry (the one list, `registry::FAMILIES`) has its
/// section here.
#[cfg(test)]
const FAMILIES: [&str; 19] = [
    syscall::FAMILY,
    ipc::FAMILY,
    ctx::FAMILY,
    proc::FAMILY,
    bw::FAMILY,
    pagefault::FAMILY,
    aim::FAMILY,
    hermit::FAMILY,
    stream::FAMILY,
    memcpy::FAMILY,
    alloc::FAMILY,
    packet_stream::FAMILY,
    parallel::FAMILY,
    noise::FAMILY,
    control::FAMILY,
    net::FAMILY,
    blk::FAMILY,
    boot::FAMILY,
    microvm::FAMILY,
];

/// A family's name, and its benchmark ids: `FAMILY`, `id(NAME)`, `name_of(ID)`.
macro_rules! family {
    ($name:literal) => {
        /// The family's name, as results and the registry give it.
        pub const FAMILY: &str = $name;

        /// The id of this family's benchmark `name`.
        pub fn id(name: &str) -> String {
            super::id(FAMILY, name)
        }

        /// The benchmark's name within this family (`pipe` of `ipc.pipe`).
        pub fn name_of(id: &str) -> &str {
            super::member(FAMILY, id)
        }
    };
}

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

/// System calls, one pinned thread, one case per call.
pub mod syscall {
    family!("syscall");
    /// No parameters.
    pub type Params = super::NoParams;
    /// Cycles per call.
    pub const PER_CALL: &str = "per_call";
    pub const GETPID: &str = "getpid";
    pub const GETPPID: &str = "getppid";
    /// lat_syscall null: getppid() through the C library.
    pub const NULL: &str = "null";
    pub const SCHED_YIELD: &str = "sched_yield";
}

/// IPC ping-pong: payload x address space x cores.
pub mod ipc {
    family!("ipc");
    pub use crate::placement::{Cores, Space};

    params! {
        /// An ipc case: payload in 64-bit words, threads or processes, one core or two.
        Params {
            words: u64,
            space: Space,
            cores: Cores,
        }
    }

    /// Cycles one way: half the round trip, as the L4 tables count.
    pub const ONE_WAY: &str = "one_way";
    /// Cycles of a whole round trip.
    pub const ROUND_TRIP: &str = "round_trip";

    /// Address spaces in table order.
    pub const SPACES: [Space; 2] = [Space::Intra, Space::Inter];
    /// Core placements in table order.
    pub const CORES: [Cores; 2] = [Cores::Same, Cores::Cross];

    /// "intra" or "inter", as the JSON writes it.
    pub fn space_name(s: Space) -> &'static str {
        match s {
            Space::Intra => "intra",
            Space::Inter => "inter",
        }
    }

    /// "same" or "cross", as the JSON writes it.
    pub fn cores_name(c: Cores) -> &'static str {
        match c {
            Cores::Same => "same",
            Cores::Cross => "cross",
        }
    }

    /// The IPC mechanisms of the l4-ipc suite, in table order.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum Mechanism {
        Pipe,
        Fifo,
        UnixStream,
        UnixDgram,
        Eventfd,
        Futex,
        Spin,
        Cacheline,
        PosixMq,
        SysvMq,
        Tcp,
        Udp,
    }

    impl Mechanism {
        pub const ALL: [Mechanism; 12] = [
            Mechanism::Pipe,
            Mechanism::Fifo,
            Mechanism::UnixStream,
            Mechanism::UnixDgram,
            Mechanism::Eventfd,
            Mechanism::Futex,
            Mechanism::Spin,
            Mechanism::Cacheline,
            Mechanism::PosixMq,
            Mechanism::SysvMq,
            Mechanism::Tcp,
            Mechanism::Udp,
        ];

        /// The name in benchmark ids and tables.
        pub fn name(self) -> &'static str {
            match self {
                Mechanism::Pipe => "pipe",
                Mechanism::Fifo => "fifo",
                Mechanism::UnixStream => "unix-stream",
                Mechanism::UnixDgram => "unix-dgram",
                Mechanism::Eventfd => "eventfd",
                Mechanism::Futex => "futex",
                Mechanism::Spin => "spin",
                Mechanism::Cacheline => "cacheline",
                Mechanism::PosixMq => "posix-mq",
                Mechanism::SysvMq => "sysv-mq",
                Mechanism::Tcp => "tcp",
                Mechanism::Udp => "udp",
            }
        }

        pub fn description(self) -> &'static str {
            match self {
                Mechanism::Pipe => "two pipes, one per direction; payload through the pipe",
                Mechanism::Fifo => "two named FIFOs (mkfifo in the temporary directory, unlinked once open)",
                Mechanism::UnixStream => "UNIX stream socketpair",
                Mechanism::UnixDgram => "UNIX datagram socketpair, one datagram per message",
                Mechanism::Eventfd => "payload in shared memory, an eventfd per direction wakes the peer",
                Mechanism::Futex => "payload in shared memory, FUTEX_WAIT/FUTEX_WAKE on a shared word",
                Mechanism::Spin => "payload in shared memory, receiver busy-polls a shared word (the floor)",
                Mechanism::Cacheline => {
                    "both directions on one cache line (sequence word and up to 7 words), busy-polled: the hardware floor of a shared-memory message"
                }
                Mechanism::PosixMq => "POSIX message queue per direction",
                Mechanism::SysvMq => "one System V message queue, message type per direction",
                Mechanism::Tcp => "TCP over loopback, TCP_NODELAY",
                Mechanism::Udp => "UDP over loopback, connected sockets",
            }
        }

        /// Its benchmark id (`ipc.pipe`).
        pub fn id(self) -> String {
            id(self.name())
        }
    }
}

/// lat_ctx: a token passed round a ring of processes.
pub mod ctx {
    family!("ctx");

    params! {
        /// A ctx case: processes in the ring, working set each sums in KiB.
        Params {
            procs: u64,
            ws_kib: u64,
        }
    }

    /// Cycles of a context switch: a hop less the ring overhead.
    pub const SWITCH: &str = "switch";
    /// Cycles of one hop round the ring.
    pub const HOP: &str = "hop";
    /// Cycles of the ring's own work per hop, measured in one process.
    pub const OVERHEAD: &str = "overhead";
    /// The one benchmark's name (`ctx.ring`).
    pub const RING: &str = "ring";
}

/// lat_proc: process and thread creation.
pub mod proc {
    family!("proc");

    params! {
        /// A proc case: the static fork has the size of the process it forks
        /// (`touched_mib` of anonymous memory written, in 4 KiB pages or, with
        /// `thp`, transparent huge pages); the other benchmarks have none.
        Params {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            touched_mib: Option<u64>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            thp: Option<bool>,
        }
    }

    impl Params {
        /// No parameters: every benchmark but the static fork.
        pub const NONE: Params = Params { touched_mib: None, thp: None };

        /// The static fork of a process with `mib` MiB touched (`thp`:
        /// in transparent huge pages; only said where `mib` is above 0).
        pub fn touched(mib: u64, thp: bool) -> Params {
            Params { touched_mib: Some(mib), thp: (mib > 0).then_some(thp) }
        }
    }

    /// Details key: the process that forked ([`ProcessSize`]).
    pub const FORKER: &str = "forker";

    /// The size of the process a row's operations were created from, read
    /// from /proc after the measurement.
    #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub struct ProcessSize {
        /// What it is: "static C helper", "dynamic C helper (worker)"...
        pub program: String,
        /// VmSize of /proc/PID/status.
        pub vm_size_kib: u64,
        /// VmRSS.
        pub rss_kib: u64,
        /// Lines of /proc/PID/maps.
        pub mappings: u64,
        pub threads: u64,
        /// AnonHugePages of /proc/PID/smaps_rollup (0 where the kernel has none).
        pub anon_huge_kib: u64,
    }
    /// Cycles per operation.
    pub const PER_OP: &str = "per_op";
    pub const PROCEDURE: &str = "procedure";
    /// lat_proc fork: fork in a small dynamically linked C process.
    pub const FORK_DYNAMIC: &str = "fork-dynamic";
    /// fork of a small static C process (touched_mib: with that much memory written).
    pub const FORK: &str = "fork";
    pub const EXEC: &str = "exec";
    /// lat_proc exec: fork + execve of a dynamically linked program.
    pub const EXEC_DYNAMIC: &str = "exec-dynamic";
    pub const SPAWN: &str = "spawn";
    pub const VFORK_EXEC: &str = "vfork-exec";
    pub const THREAD: &str = "thread";
}

/// Bandwidths: memory, files, pipes and sockets.
pub mod bw {
    family!("bw");
    pub use crate::placement::Cores;

    params! {
        /// A bw case: the streams (pipe, unix) say where the writer runs; the others have none.
        Params {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            cores: Option<Cores>,
        }
    }

    /// MB/s (1e6 bytes per second).
    pub const BANDWIDTH: &str = "bandwidth";
    /// Cycles per operation (a chunk, a pass over the buffer).
    pub const PER_OP: &str = "per_op";
    pub const FILE_RD: &str = "file-rd";
    pub const MMAP_RD: &str = "mmap-rd";
    pub const MMAP_RD_OPEN: &str = "mmap-rd-open2close";
    pub const MEM_CP_LIBC: &str = "mem-cp-libc";
    pub const MEM_RD: &str = "mem-rd";
    pub const MEM_WR: &str = "mem-wr";
    pub const MEM_CP: &str = "mem-cp";
    pub const PIPE: &str = "pipe";
    pub const UNIX: &str = "unix";
}

/// First touch of a page.
pub mod pagefault {
    family!("pagefault");
    /// No parameters.
    pub type Params = super::NoParams;
    /// Cycles per 4 KiB page.
    pub const PER_PAGE: &str = "per_page";
    pub const ANON: &str = "anon";
    pub const FILE: &str = "file";
    pub const ANON_THP: &str = "anon-thp";
    pub const ANON_HUGETLB: &str = "anon-hugetlb";
}

/// The AIM7-style job mix.
pub mod aim {
    family!("aim");

    params! {
        /// An aim case: concurrent tasks.
        Params {
            tasks: u64,
        }
    }

    /// Jobs per minute per task.
    pub const JOBS_PER_MIN_PER_TASK: &str = "jobs_per_min_per_task";
    /// The one benchmark's name (`aim.mix`).
    pub const MIX: &str = "mix";
    /// The most tasks a case may run.
    pub const MAX_TASKS: usize = 64;
}

/// HermitCore's basic-benchmark extras.
pub mod hermit {
    family!("hermit");
    /// No parameters.
    pub type Params = super::NoParams;
    /// Cycles per operation.
    pub const PER_OP: &str = "per_op";
    pub const SCHED_YIELD_BUSY: &str = "sched_yield-busy";
    pub const MALLOC_1M: &str = "malloc-1m";
}

/// STREAM: copy, scale, add, triad.
pub mod stream {
    family!("stream");

    crate::named_enum! {
        /// One thread, or one pinned per CPU given.
        #[derive(Hash)]
        pub enum Threads { Single = "single", PerCpu = "per-cpu" }
    }

    params! {
        /// A stream case: threads, and the array size where the suite fixes it (quick).
        Params {
            threads: Threads,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            array_bytes: Option<u64>,
        }
    }

    /// The kernels in STREAM's order, as metric names begin.
    pub const KERNELS: [&str; 4] = ["copy", "scale", "add", "triad"];
    pub const TRIAD: &str = "triad";

    /// A kernel's rate in MB/s (`triad_rate`).
    pub fn rate(kernel: &str) -> String {
        format!("{kernel}_rate")
    }

    /// A kernel's time per repetition in seconds (`triad_time`).
    pub fn time(kernel: &str) -> String {
        format!("{kernel}_time")
    }

    /// The one benchmark's name (`stream.kernels`).
    pub const KERNELS_BENCH: &str = "kernels";

    /// Details the report reads.
    pub mod details {
        /// Bytes of each array.
        pub const ARRAY_BYTES: &str = "array_bytes";
        /// Whether the arrays are at least 4x the LLC (STREAM's rule).
        pub const MEETS_4X_LLC: &str = "meets_4x_llc";
        /// Repetitions the statistics are over (the first is not counted).
        pub const REPETITIONS_COUNTED: &str = "repetitions_counted";
    }
}

/// memcpy by size and alignment.
pub mod memcpy {
    family!("memcpy");

    params! {
        /// A memcpy case: bytes copied, source and destination offset from a page boundary.
        Params {
            bytes: u64,
            src_off: u64,
            dst_off: u64,
        }
    }

    /// MB/s.
    pub const BANDWIDTH: &str = "bandwidth";
    /// Cycles per copy.
    pub const PER_COPY: &str = "per_copy";
    /// The implementations in table order (bench::memcpy::Impl's names).
    pub const IMPLS: [&str; 3] = ["libc", "bytes", "words"];
    pub const LIBC: &str = "libc";
}

/// Allocators by live set and block size.
pub mod alloc {
    family!("alloc");

    crate::named_enum! {
        /// How full the arena is: twice the live set, or 1% spare.
        #[derive(Hash)]
        pub enum Fill { Half = "half", NearlyFull = "nearly-full" }
    }

    params! {
        /// An alloc case: live blocks, block size, and how full the arena is.
        Params {
            live: u64,
            bytes: u64,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            fill: Option<Fill>,
        }
    }

    /// Cycles per free + allocate pair.
    pub const PER_PAIR: &str = "per_pair";
    /// The allocators in table order (bench::alloc::Kind's names).
    pub const KINDS: [&str; 4] = ["system", "slab", "bitmap", "best-fit"];
    pub const SYSTEM: &str = "system";
}

/// The shared-memory packet stream against synchronous RPC.
pub mod packet_stream {
    family!("packet-stream");

    crate::named_enum! {
        /// Batched stream, RPC over shared memory, RPC over a UNIX socket.
        #[derive(Hash)]
        pub enum Mode { Stream = "stream", RpcShm = "rpc-shm", RpcUnix = "rpc-unix" }
    }

    crate::named_enum! {
        /// How a sleeping side is woken ("-": by the kernel, a socket).
        #[derive(Hash)]
        pub enum Notify { Futex = "futex", Eventfd = "eventfd", Kernel = "-" }
    }

    params! {
        /// A packet-stream case: mode, packets per batch, queue depth, packet size, wake-up.
        Params {
            mode: Mode,
            batch: u64,
            depth: u64,
            bytes: u64,
            notify: Notify,
        }
    }

    /// Packets per second.
    pub const PACKETS_PER_S: &str = "packets_per_s";
    /// MiB/s of payload.
    pub const MIB_PER_S: &str = "mib_per_s";
    /// Notifications per packet (none for a UNIX socket).
    pub const NOTIFICATIONS_PER_PACKET: &str = "notifications_per_packet";
    /// Submit-to-acknowledge cycles.
    pub const LATENCY: &str = "latency";
    /// Source CPU ns per packet.
    pub const SOURCE_CPU_PER_PACKET: &str = "source_cpu_per_packet";
    /// Sink CPU ns per packet.
    pub const SINK_CPU_PER_PACKET: &str = "sink_cpu_per_packet";
    /// The one benchmark's name (`packet-stream.sweep`).
    pub const SWEEP: &str = "sweep";
}

/// Every CPU busy at once.
pub mod parallel {
    family!("parallel");

    params! {
        /// A parallel case: instances, one pinned per CPU.
        Params {
            instances: u64,
        }
    }

    /// Cycles per operation, every batch of every instance.
    pub const PER_OP: &str = "per_op";
    /// The operations in table order (bench::parallel::ParOp's names).
    pub const OPS: [&str; 4] = ["getppid", "pipe", "futex", "eventfd"];
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

/// OS noise: FWQ.
pub mod noise {
    family!("noise");

    params! {
        /// A noise case: samples (quanta timed).
        Params {
            samples: u64,
        }
    }

    /// Cycles of one quantum.
    pub const SAMPLE: &str = "sample";
    /// The one benchmark's name (`noise.fwq`).
    pub const FWQ: &str = "fwq";

    /// Details the report reads.
    pub mod details {
        pub use super::super::attribution::ATTRIBUTION;
        /// The fastest quantum, cycles.
        pub const MIN_CYCLES: &str = "min_cycles";
        /// The largest delta to the minimum, cycles.
        pub const MAX_DELTA_CYCLES: &str = "max_delta_cycles";
        pub const P99_DELTA_CYCLES: &str = "p99_delta_cycles";
        pub const P999_DELTA_CYCLES: &str = "p999_delta_cycles";
        /// The fraction of time lost to noise.
        pub const LOST_FRACTION: &str = "lost_fraction";
        /// Deltas to the minimum in log2 buckets.
        pub const DELTA_HISTOGRAM_LOG2: &str = "delta_histogram_log2";
    }
}

/// The 1000 us control loop.
pub mod control {
    family!("control");

    params! {
        /// A control case: wake-ups timed.
        Params {
            samples: u64,
        }
    }

    /// Cycles from a deadline to the wake-up.
    pub const DEVIATION: &str = "deviation";
    pub const NANOSLEEP: &str = "nanosleep";

    /// Details the report reads.
    pub mod details {
        pub use super::super::attribution::ATTRIBUTION;
        /// The period in cycles.
        pub const PERIOD_CYCLES: &str = "period_cycles";
        /// Deadlines passed unmet.
        pub const OVERRUNS: &str = "overruns";
        /// Largest interval between wake-ups above the period, cycles.
        pub const PERIOD_DEV_MAX_CYCLES: &str = "period_dev_max_cycles";
        /// Largest interval between wake-ups below the period (negative), cycles.
        pub const PERIOD_DEV_MIN_CYCLES: &str = "period_dev_min_cycles";
        /// |period deviation| in log2 buckets.
        pub const PERIOD_DEV_ABS_HISTOGRAM_LOG2: &str = "period_dev_abs_histogram_log2";
        /// The latest wake-up after its deadline, cycles.
        pub const LATE_MAX_CYCLES: &str = "late_max_cycles";
    }
}

/// Network throughput and request/response.
pub mod net {
    family!("net");

    crate::named_enum! {
        /// Loopback, or a veth pair between two namespaces.
        #[derive(Hash)]
        pub enum Path { Loopback = "loopback", Veth = "veth" }
    }

    params! {
        /// A net case: the path and the payload per message in bytes.
        Params {
            path: Path,
            bytes: u64,
        }
    }

    /// MiB/s at the receiver, over the window's slices.
    pub const THROUGHPUT: &str = "throughput";
    /// Cycles of a request/response round trip.
    pub const RTT: &str = "rtt";
    pub const UDP: &str = "udp";
    pub const TCP: &str = "tcp";
    pub const TCP_RR: &str = "tcp-rr";
    /// UDP's largest payload, which shares TCP's 64 KiB row.
    pub const UDP_MAX_BYTES: u64 = 65507;
    pub const TCP_MAX_BYTES: u64 = 65536;

    /// Details the report reads.
    pub mod details {
        /// Payload MiB/s over the whole window.
        pub const MIB_PER_S: &str = "mib_per_s";
        /// Messages per second at the receiver.
        pub const MSGS_PER_S: &str = "msgs_per_s";
        /// UDP datagrams lost, as a fraction of those sent.
        pub const UDP_LOSS: &str = "udp_loss";
        pub const SENDER_CPU_MS_PER_MIB: &str = "sender_cpu_ms_per_mib";
        pub const RECEIVER_CPU_MS_PER_MIB: &str = "receiver_cpu_ms_per_mib";
        /// Request/response transactions in the window.
        pub const TRANSACTIONS: &str = "transactions";
    }
}

/// Sequential block I/O.
pub mod blk {
    family!("blk");

    crate::named_enum! {
        /// O_DIRECT, or through the page cache.
        #[derive(Hash)]
        pub enum Mode { Direct = "direct", Cached = "cached" }
    }

    params! {
        /// A blk case: cache mode and block size in bytes.
        Params {
            mode: Mode,
            block: u64,
        }
    }

    /// MiB/s over the window's slices.
    pub const THROUGHPUT: &str = "throughput";
    pub const READ: &str = "read";
    pub const WRITE: &str = "write";
    /// The operations in table order.
    pub const OPS: [&str; 2] = [READ, WRITE];

    /// Details the report reads.
    pub mod details {
        pub const MIB_PER_S: &str = "mib_per_s";
        pub const IOPS: &str = "iops";
        pub const CPU_MS_PER_MIB: &str = "cpu_ms_per_mib";
        pub const CPU_UTIL: &str = "cpu_util";
        /// Writes: the fdatasync after the window, seconds.
        pub const FDATASYNC_AFTER_S: &str = "fdatasync_after_s";
    }
}

/// Boot time, measured by the host per environment.
pub mod boot {
    family!("boot");
    /// No parameters.
    pub type Params = super::NoParams;
    /// Seconds from the start to the first act of the environment's init.
    pub const TO_INIT: &str = "to_init";
    /// Seconds from the start to its first result.
    pub const TO_FIRST_RESULT: &str = "to_first_result";
    /// The one benchmark's name (`boot.start`).
    pub const START_BENCH: &str = "start";
    /// The detail listing the starts that failed after one came up.
    pub const FAILED_STARTS: &str = "failed_starts";
    /// The detail with every start's two times, in seconds.
    pub const BOOTS: &str = "boots";
    /// The detail listing the starts an environment repeated, each with
    /// the faults it gave (`RESTARTED_AFTER`).
    pub const RESTARTED_STARTS: &str = "restarted_starts";
    /// The fact in which an environment lists the faults of the starts it
    /// repeated (Xen under TCG, after a triple fault).
    pub const RESTARTED_AFTER: &str = "restarted_after";
}

/// What an environment says of itself (`environment.settings.<name>` of a
/// run document), as far as the report reads it: each environment writes
/// these keys through the constants and may add facts of its own.
pub mod environment {
    use serde::Deserialize;
    use serde_json::Value;

    /// How QEMU ran it: "tcg" (emulated cycles) or "kvm".
    pub const ACCEL: &str = "accel";
    /// Its TSC moved in steps of this many cycles (a hypervisor emulates it).
    pub const TSC_STEP_CYCLES: &str = "tsc_step_cycles";
    /// The kernel release its cases saw (uname inside it).
    pub const KERNEL_INSIDE: &str = "kernel_inside";
    /// An independent few-line program's figures, booted the same way.
    pub const INDEPENDENT_CHECK: &str = "independent_check";

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
    }
}

/// VM exits in oscycles' own KVM guest.
pub mod microvm {
    family!("microvm");

    params! {
        /// A microvm case: the guest's privilege level (0 kernel, 3 user).
        Params {
            cpl: u64,
        }
    }

    /// The guest's own cycles per operation.
    pub const GUEST: &str = "guest";
    /// Cycles of a VM start (the `start` benchmark).
    pub const START: &str = "start";
    /// Cycles of an exit's round trip through the VMM.
    pub const VMM_ROUND_TRIP: &str = "vmm_round_trip";
    pub const PIO: &str = "pio";

    /// Details the report reads.
    pub mod details {
        /// The virtualisation layer under /dev/kvm.
        pub const LAYER: &str = "layer";
        /// The guest's mode ("64-bit long mode at CPL 0"...).
        pub const GUEST_MODE: &str = "guest_mode";
        /// Iterations per run.
        pub const ITERATIONS: &str = "iterations";
        /// What native operation the exit is compared with.
        pub const NATIVE_EQUIVALENT: &str = "native_equivalent";
        /// That operation's cycles natively.
        pub const NATIVE_CYCLES: &str = "native_cycles";
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
    /// Isolation facts the noise tables note, in their order.
    pub const ISOLATION_NOTES: [&str; 5] = [CPUSET, IRQS_MOVED_AWAY, IRQS_UNMOVABLE, CPU_DMA_LATENCY, SCHED_RT_RUNTIME_US];
}

/// A case's parameters checked against its family's struct: the map it
/// reads as and writes back, or None where the family is unknown or the map
/// does not fit (the tests' check that every case fits its struct).
#[cfg(test)]
fn round_trip(family: &str, p: &Params) -> Option<Params> {
    fn via<T: CaseParams>(p: &Params) -> Option<Params> {
        T::from_params(p).map(|t| t.to_params())
    }
    match family {
        syscall::FAMILY => via::<syscall::Params>(p),
        ipc::FAMILY => via::<ipc::Params>(p),
        ctx::FAMILY => via::<ctx::Params>(p),
        proc::FAMILY => via::<proc::Params>(p),
        bw::FAMILY => via::<bw::Params>(p),
        pagefault::FAMILY => via::<pagefault::Params>(p),
        aim::FAMILY => via::<aim::Params>(p),
        hermit::FAMILY => via::<hermit::Params>(p),
        stream::FAMILY => via::<stream::Params>(p),
        memcpy::FAMILY => via::<memcpy::Params>(p),
        alloc::FAMILY => via::<alloc::Params>(p),
        packet_stream::FAMILY => via::<packet_stream::Params>(p),
        parallel::FAMILY => via::<parallel::Params>(p),
        noise::FAMILY => via::<noise::Params>(p),
        control::FAMILY => via::<control::Params>(p),
        net::FAMILY => via::<net::Params>(p),
        blk::FAMILY => via::<blk::Params>(p),
        boot::FAMILY => via::<boot::Params>(p),
        microvm::FAMILY => via::<microvm::Params>(p),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON a struct writes, and that the JSON reads back as the struct.
    fn writes<T: CaseParams + PartialEq + std::fmt::Debug>(t: T, json: &str) {
        let p = t.to_params();
        assert_eq!(serde_json::to_string(&p).unwrap(), json);
        let back: Params = serde_json::from_str(json).unwrap();
        assert_eq!(T::from_params(&back), Some(t));
    }

    #[test]
    fn each_family_writes_the_keys_the_cases_write() {
        use crate::placement::{Cores, Space};
        writes(syscall::Params {}, "{}");
        writes(ipc::Params { words: 8, space: Space::Inter, cores: Cores::Cross }, r#"{"cores":"cross","space":"inter","words":8}"#);
        writes(ctx::Params { procs: 2, ws_kib: 16 }, r#"{"procs":2,"ws_kib":16}"#);
        writes(proc::Params::NONE, "{}");
        writes(proc::Params::touched(0, true), r#"{"touched_mib":0}"#);
        writes(proc::Params::touched(64, true), r#"{"thp":true,"touched_mib":64}"#);
        writes(bw::Params { cores: Some(Cores::Same) }, r#"{"cores":"same"}"#);
        writes(bw::Params { cores: None }, "{}");
        writes(pagefault::Params {}, "{}");
        writes(aim::Params { tasks: 4 }, r#"{"tasks":4}"#);
        writes(hermit::Params {}, "{}");
        writes(
            stream::Params { threads: stream::Threads::PerCpu, array_bytes: Some(64 << 20) },
            r#"{"array_bytes":67108864,"threads":"per-cpu"}"#,
        );
        writes(stream::Params { threads: stream::Threads::Single, array_bytes: None }, r#"{"threads":"single"}"#);
        writes(memcpy::Params { bytes: 4096, src_off: 1, dst_off: 0 }, r#"{"bytes":4096,"dst_off":0,"src_off":1}"#);
        writes(
            alloc::Params { live: 100, bytes: 64, fill: Some(alloc::Fill::NearlyFull) },
            r#"{"bytes":64,"fill":"nearly-full","live":100}"#,
        );
        writes(alloc::Params { live: 25, bytes: 1500, fill: None }, r#"{"bytes":1500,"live":25}"#);
        let ps = packet_stream::Params {
            mode: packet_stream::Mode::RpcUnix,
            batch: 1,
            depth: 1,
            bytes: 64,
            notify: packet_stream::Notify::Kernel,
        };
        writes(ps, r#"{"batch":1,"bytes":64,"depth":1,"mode":"rpc-unix","notify":"-"}"#);
        writes(parallel::Params { instances: 2 }, r#"{"instances":2}"#);
        writes(noise::Params { samples: 10_000 }, r#"{"samples":10000}"#);
        writes(control::Params { samples: 300 }, r#"{"samples":300}"#);
        writes(net::Params { path: net::Path::Veth, bytes: 1450 }, r#"{"bytes":1450,"path":"veth"}"#);
        writes(blk::Params { mode: blk::Mode::Direct, block: 4096 }, r#"{"block":4096,"mode":"direct"}"#);
        writes(boot::Params {}, "{}");
        writes(microvm::Params { cpl: 3 }, r#"{"cpl":3}"#);
    }

    #[test]
    fn a_missing_renamed_or_foreign_key_reads_as_none() {
        let map = |json: &str| serde_json::from_str::<Params>(json).unwrap();
        assert_eq!(ipc::Params::from_params(&map(r#"{"words":1,"space":"inter"}"#)), None, "missing");
        assert_eq!(ipc::Params::from_params(&map(r#"{"word":1,"space":"inter","cores":"same"}"#)), None, "renamed");
        assert_eq!(ipc::Params::from_params(&map(r#"{"words":1,"space":"outer","cores":"same"}"#)), None, "unknown value");
        assert_eq!(ipc::Params::from_params(&map(r#"{"words":"1","space":"inter","cores":"same"}"#)), None, "wrong type");
        assert_eq!(bw::Params::from_params(&map(r#"{"core":"same"}"#)), None, "an optional key renamed");
        assert_eq!(syscall::Params::from_params(&map(r#"{"words":1}"#)), None, "a key where there are none");
        assert_eq!(round_trip("nosuch", &Params::new()), None);
    }

    #[test]
    fn every_case_of_every_benchmark_fits_its_family_struct() {
        use crate::registry::{Scale, benchmarks};
        for b in benchmarks() {
            assert!(FAMILIES.contains(&b.family.name()), "{} is a family here", b.family.name());
            assert_eq!(member(b.family.name(), &b.id), b.id.trim_start_matches(&format!("{}.", b.family.name())));
            for p in b.cases(Scale::Quick).into_iter().chain(b.cases(Scale::Full)) {
                assert_eq!(round_trip(b.family.name(), &p).as_ref(), Some(&p), "{} {p:?}", b.id);
            }
        }
    }

    #[test]
    fn name_lists_match_the_benchmarks() {
        let names = |family: &str| -> Vec<String> {
            crate::registry::benchmarks().iter().filter(|b| b.family.name() == family).map(|b| b.id.clone()).collect()
        };
        assert_eq!(names(memcpy::FAMILY), memcpy::IMPLS.map(memcpy::id));
        assert_eq!(names(alloc::FAMILY), alloc::KINDS.map(alloc::id));
        assert_eq!(names(parallel::FAMILY), parallel::OPS.map(parallel::id));
        assert_eq!(names(blk::FAMILY), blk::OPS.map(blk::id));
        assert_eq!(names(ipc::FAMILY), ipc::Mechanism::ALL.map(ipc::Mechanism::id));
        assert_eq!(crate::bench::aim::MAX_TASKS, aim::MAX_TASKS);
        assert_eq!(ipc::name_of("ipc.unix-stream"), "unix-stream");
        assert_eq!(ipc::name_of("syscall.getpid"), "syscall.getpid");
        assert_eq!(packet_stream::id(packet_stream::SWEEP), "packet-stream.sweep");
        // The families the report has tables for are the registry's, in its order.
        assert_eq!(crate::registry::FAMILIES.iter().map(|f| f.name()).collect::<Vec<_>>(), FAMILIES);
    }
}
