//! memcpy by size and alignment: the C library's memcpy against a byte loop
//! and a word loop that aligns the destination first, at source and
//! destination offsets from a page boundary, so that the effect of
//! alignment Genode's Pandaboard article describes is visible.
//!
//! Its measurement (`measure.rs`, which the Hermit program compiles too), its
//! cases (`family.rs`) and its section of the schema (`schema.rs`).

mod measure;
// What measure.rs asks of its parent (the Hermit program gives its own).
use crate::families::bench::toolkit::child;
pub mod family;
pub mod schema;
pub mod table;

pub use measure::*;
