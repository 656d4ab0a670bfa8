//! The present layer: the report (tables, exporters), doctor, fleet. It imports
//! only from its own layer and the layers below it (scripts/import-map.layers,
//! checked by scripts/import-map).

pub mod report;
