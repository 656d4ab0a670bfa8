//! Bandwidths: memory, files, pipes and sockets.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("bw");
pub use crate::measure::placement::Cores;
pub use crate::measure::scratch::FileWrites;

crate::data::schema_core::params! {
    /// A bw case: the streams (pipe, unix) say where the writer runs, the
    /// file kinds how their file was written; the others have none.
    Params {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cores: Option<Cores>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file_writes: Option<FileWrites>,
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
