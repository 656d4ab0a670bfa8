//! The families' toolkit: measuring code that more than one family uses,
//! kept below them (a family imports it; it imports no family). A family's
//! own code stays in its folder.
//!
//! - [`sampling`]: a case's parameter points and grids, placing it on its CPU,
//!   timing it with the harness, and turning what it measured into metrics;
//! - [`child`]: forked children that measure beside the parent;
//! - [`fds`]: pipes, eventfds, socketpairs, whole reads and writes, and their error;
//! - [`shm`]: shared anonymous memory that stays shared across fork();
//! - [`sizes`]: the last-level cache, RAM, and the size of buffers that must not fit in the cache;
//! - [`guest`]: a case a guest program of oscycles' own measured, as the host reads it;
//! - [`window`]: fixed-time measured windows (net, blk) and thread CPU time;
//! - [`attribution`]: what happened on a CPU during a measurement;
//! - [`residue`]: what a case may leave behind in the process that runs the next.

pub mod attribution;
pub mod child;
pub mod fds;
pub mod guest;
pub mod residue;
pub mod sampling;
pub mod shm;
pub mod sizes;
pub mod window;
