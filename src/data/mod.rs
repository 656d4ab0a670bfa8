//! The data layer: what is kept, run documents (results), the core of their schema, the
//! store, the database, comparisons. It imports only from its own layer and the
//! layers below it (scripts/import-map.layers, checked by scripts/import-map).

pub mod compare;
pub mod db;
pub mod documents;
pub mod results;
pub mod schema_core;
