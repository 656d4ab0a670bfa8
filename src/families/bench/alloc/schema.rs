//! Allocators by live set and block size.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("alloc");

crate::named_enum! {
    /// How full the arena is: twice the live set, or 1% spare.
    #[derive(Hash)]
    pub enum Fill { Half = "half", NearlyFull = "nearly-full" }
}

crate::data::schema_core::params! {
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
