//! The tables of published evaluations that draw on several families (a
//! family's own table is in its folder): the LMBench tables of the
//! Trustworthy Systems L4 performance page, the L4Re performance overview,
//! and the basic benchmark of the HermitCore PVH/HVM benchmark post.

pub mod hermit_basic;
pub mod l4re;
pub mod lmbench;
