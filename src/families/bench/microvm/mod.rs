//! The microvm family: its cases (`family.rs`) and its section of the schema
//! (`schema.rs`).

pub mod family;
pub mod schema;
pub mod table;
