//! A variant of the STREAM benchmark (McCalpin): copy, scale, add and triad
//! over three arrays of f64, each at least 4x the last-level cache. Every
//! repetition runs the four kernels in order; the first repetition is
//! discarded, and each kernel reports its best rate and its average, minimum
//! and maximum time, counting bytes as STREAM does (copy and scale 16 bytes
//! per element, add and triad 24). The results are validated as STREAM
//! validates them: the expected values follow from the same recurrences run
//! on scalars.
//!
//! Its measurement (`measure.rs`, which the Hermit program compiles too), its
//! cases (`family.rs`) and its section of the schema (`schema.rs`).

mod measure;
// What measure.rs asks of its parent (the Hermit program gives its own).
use crate::families::bench::toolkit::sizes;
pub mod family;
pub mod schema;
pub mod table;

pub use measure::*;
