//! oscycles: what every layer between a program and the hardware costs, in
//! CPU cycles. The code is a folder per layer, top to bottom: app (the
//! command line), present (reports), run (where and under what), families
//! (what is measured, a folder each, with its table), tables (what tables
//! are made of), data (run documents, the store), measure (the harness, the
//! clock), analysis (statistics), base (names, sources); each imports only
//! from its own layer or below (scripts/import-map).

pub mod analysis;
pub mod app;
pub mod base;
pub mod data;
pub mod families;
pub mod measure;
pub mod present;
pub mod run;
pub mod tables;
