//! The families layer: what is measured. Each benchmark family is one folder
//! of `bench/` (its measurement, its cases, its section of the schema), and
//! `bench/schema.rs` gathers the sections; vmm is oscycles' own KVM virtual machine
//! monitor, which the microvm family and environment drive. It imports only
//! from its own layer and the layers below it (scripts/import-map.layers,
//! checked by scripts/import-map).

pub mod bench;
pub mod published;
pub mod vmm;
