//! The families layer: what is measured, the benchmark families (bench) and the
//! microvm guest. It imports only from its own layer and the layers below it
//! (scripts/import-map.layers, checked by scripts/import-map).

pub mod bench;
pub mod microvm;
