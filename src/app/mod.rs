//! The app layer: the command line (cli) and the catalogue `list` shows; the
//! subcommands in `commands/` belong to the binary (main.rs). It imports only
//! from its own layer and the layers below it (scripts/import-map.layers,
//! checked by scripts/import-map).

pub mod catalogue;
pub mod cli;
