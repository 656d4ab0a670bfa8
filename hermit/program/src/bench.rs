//! oscycles' benchmark modules that compile for Hermit as they are.

#[path = "../../../src/families/bench/stream/measure.rs"]
#[allow(dead_code)]
pub mod stream;

#[path = "../../../src/families/bench/memcpy/measure.rs"]
#[allow(dead_code)]
pub mod memcpy;

#[path = "../../../src/families/bench/alloc/measure.rs"]
#[allow(dead_code)]
pub mod alloc;

/// What stream.rs asks of oscycles' toolkit::sizes module: the array size
/// rule, used only when the host names no size (it always does).
pub mod sizes {
    pub fn mem_buffer_bytes(_llc: Option<u64>, _ram_bytes: u64) -> u64 {
        64 << 20
    }
}

/// What memcpy.rs asks of oscycles' child module: private memory of
/// 64-bit words (on Linux an anonymous mapping; here the kernel's heap, the
/// one kind of memory a Hermit program has).
pub mod child {
    pub struct Private(Vec<u64>);

    impl Private {
        pub fn new(bytes: usize) -> std::io::Result<Private> {
            Ok(Private(vec![0; bytes.div_ceil(8)]))
        }
        pub fn words(&self) -> &[u64] {
            &self.0
        }
        pub fn words_mut(&mut self) -> &mut [u64] {
            &mut self.0
        }
    }
}
