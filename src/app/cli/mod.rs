//! The command line, as ripgrep's `flags/` divides it: the grammar of the
//! commands ([`grammar`], `run`'s own in [`run`]), the value parsers and
//! their errors ([`values`]), and names resolved against the registry
//! ([`resolve`], which leaves the resolving to the run layer). Bad input
//! becomes a `UsageError` (exit code 2) with a sentence naming the input and
//! what would be valid.

pub mod grammar;
pub mod resolve;
pub mod run;
pub mod values;

use crate::run::registry;
use clap::{CommandFactory, FromArgMatches};
use grammar::Cli;
use thiserror::Error;

#[derive(Debug, Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The help of `run`, from the registry: every suite with its description,
/// and every benchmark id by family.
pub fn run_after_help() -> String {
    let mut s = String::from("Suites:\n");
    for su in registry::SUITES {
        s += &format!("  {:<14} {}\n", su.name, su.description);
    }
    s += "\nBenchmarks (for --bench), by family; `oscycles list` says which run here:\n";
    for f in registry::FAMILIES {
        let ids: Vec<&str> = registry::benchmarks().iter().filter(|b| b.is_of(*f)).map(|b| b.id.as_str()).collect();
        s += &format!("  {:<14} {}\n", f.name(), ids.join(", "));
    }
    s
}

/// Parses the command line with the registry's suites and benchmarks in
/// `run --help`.
impl Cli {
    /// The command line's definition with the registry's help (suites and
    /// benchmarks after `run --help`): what parsing, completions and the man
    /// page are made from.
    pub fn command_with_registry_help() -> clap::Command {
        Cli::command().mut_subcommand("run", |c| c.after_help(run_after_help()))
    }
}

pub fn parse_with_registry_help() -> Cli {
    let matches = Cli::command_with_registry_help().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}
