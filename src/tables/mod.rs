//! The tables layer: what report tables and plots are made of ([`tabular`]),
//! below the families whose folders hold their own tables. It imports only
//! from its own layer and the layers below it (scripts/import-map.layers,
//! checked by scripts/import-map).

pub mod tabular;
