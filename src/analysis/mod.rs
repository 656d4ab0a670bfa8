//! The analysis layer: statistics and uncertainty. It imports only from its own
//! layer and the layers below it (scripts/import-map.layers, checked by
//! scripts/import-map).

pub mod sequential;
pub mod stats;
pub mod uncertainty;
