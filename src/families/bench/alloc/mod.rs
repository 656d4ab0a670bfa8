//! Allocators of fixed-size blocks, as Genode's Pandaboard article compared them: the system
//! allocator, a slab, a bitmap of fixed slots (Genode's packet allocator) and
//! best-fit over an ordered tree of free ranges (Genode's AVL allocator). The
//! workload keeps a live set of blocks and replaces a pseudo-random one per
//! operation: one free and one allocation.
//!
//! Its measurement (`measure.rs`, which the Hermit program compiles too), its
//! cases (`family.rs`) and its section of the schema (`schema.rs`).

pub mod family;
mod measure;
pub mod schema;
pub mod table;

pub use measure::*;
