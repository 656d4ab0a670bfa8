//! oscycles' benchmark modules that compile for Hermit as they are.

#[path = "../../../src/bench/stream.rs"]
#[allow(dead_code)]
pub mod stream;

/// What stream.rs asks of oscycles' bw module: the array size rule, used
/// only when the host names no size (it always does).
pub mod bw {
    pub fn mem_buffer_bytes(_llc: Option<u64>, _ram_bytes: u64) -> u64 {
        64 << 20
    }
}
