//! IPC ping-pong: payload x address space x cores.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("ipc");
pub use crate::measure::placement::{Cores, Space};

crate::data::schema_core::params! {
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

/// The detail a case carries when its `words` count something else than
/// 64-bit words, and the one value it has: seL4 on ARM (`--env sel4-arm`)
/// counts 32-bit message registers, as the L4 performance page's ARM table.
pub const PAYLOAD_UNIT: &str = "payload_unit";
pub const MESSAGE_REGISTERS: &str = "32-bit message registers";

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
    /// seL4's synchronous IPC: only in the sel4 environment's root task.
    Sel4Call,
    /// GNU Mach's mach_msg: measured only inside `--env mach`.
    MachMsg,
}

impl Mechanism {
    pub const ALL: [Mechanism; 14] = [
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
        Mechanism::Sel4Call,
        Mechanism::MachMsg,
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
            Mechanism::Sel4Call => "sel4-call",
            Mechanism::MachMsg => "mach-msg",
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
            Mechanism::Sel4Call => {
                "seL4_Call to a server thread in seL4_ReplyRecv, payload in message registers (2 per 64-bit word on ia32; on ARM, sel4-arm, a word is one 32-bit register), checked both ways (the sel4 and sel4-arm environments; not a Linux mechanism)"
            }
            Mechanism::MachMsg => {
                "GNU Mach's mach_msg, SEND|RCV in one call each way (the server replies and receives in one): inline 32-bit words, a send-once reply right per request; in --env mach only"
            }
        }
    }

    /// The environment whose own kernel the mechanism is, if it is one
    /// (its cases are n/a everywhere else).
    pub fn only_in(self) -> Option<&'static str> {
        match self {
            Mechanism::Sel4Call => Some("sel4"),
            Mechanism::MachMsg => Some("mach"),
            _ => None,
        }
    }

    /// Why another kernel's mechanism is not measured on Linux, if it is one.
    pub fn foreign(self) -> Option<&'static str> {
        match self {
            Mechanism::Sel4Call => {
                Some("seL4's IPC: measured by the sel4 and sel4-arm environments' root tasks (--env sel4, sel4-arm), not on Linux")
            }
            Mechanism::MachMsg => Some("another kernel's mechanism (GNU Mach's mach_msg): measured in --env mach only"),
            _ => None,
        }
    }

    /// Its benchmark id (`ipc.pipe`).
    pub fn id(self) -> String {
        id(self.name())
    }
}
