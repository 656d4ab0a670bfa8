//! The present layer: [`report`], what turns run documents into text (the
//! tables, `show`'s, `compare`'s and `history`'s layouts, the doctor's
//! findings, the exporters). It imports only from its own layer and the layers
//! below it (scripts/import-map.layers, checked by scripts/import-map).

pub mod report;
