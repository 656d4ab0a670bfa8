//! The base layer: names and sources every layer uses. It imports only from its
//! own layer and the layers below it (scripts/import-map.layers, checked by
//! scripts/import-map).

pub mod fsafe;
pub mod named;
pub mod sources;
pub mod text;
