//! The list of tables and plots a report lays out: the registry's
//! ([`crate::run::registry::tables`], [`crate::run::registry::plots`]), and any a caller
//! adds. The report names no family and no suite itself: a family no table
//! of the list shows gets the generic table ([`super::generic`]), every
//! metric of every case.

use crate::data::results::RunDoc;
use crate::families::bench::Family;
use crate::tables::tabular::figures::Plots;
use crate::tables::tabular::tables::{Draws, Layout, Table};

/// The line-up of a report: the tables it lays out, in order, and the plots an exporter that
/// draws lays out after them ([`Plots`]).
#[derive(Clone)]
pub struct Lineup {
    tables: Vec<&'static dyn Table>,
    plots: Vec<&'static dyn Plots>,
}

impl Lineup {
    /// oscycles' own tables and plots: the registry's.
    pub fn standard() -> Lineup {
        Lineup { tables: crate::run::registry::tables(), plots: crate::run::registry::plots() }
    }

    /// These tables and `more` after them.
    pub fn with(mut self, more: &[&'static dyn Table]) -> Lineup {
        self.tables.extend_from_slice(more);
        self
    }

    /// These tables and plots and, after them, those `family` shows (a
    /// family outside the registry).
    pub fn with_family(self, family: &dyn Family) -> Lineup {
        let shows = family.shows();
        self.with(shows.tables).with_plots(shows.comparisons).with_plots(shows.plots)
    }

    /// These plots and `more` after them.
    pub fn with_plots(mut self, more: &[&'static dyn Plots]) -> Lineup {
        self.plots.extend_from_slice(more);
        self
    }

    pub fn tables(&self) -> &[&'static dyn Table] {
        &self.tables
    }

    pub fn plots(&self) -> &[&'static dyn Plots] {
        &self.plots
    }

    /// Whether a table of the list shows `family`.
    pub fn shows(&self, family: &str) -> bool {
        self.tables.iter().any(|t| t.families().contains(&family))
    }

    /// The families of the tables laid out as `layout`.
    pub(crate) fn families_laid_out(&self, layout: Layout) -> Vec<&'static str> {
        self.tables.iter().filter(|t| t.layout() == layout).flat_map(|t| t.families().iter().copied()).collect()
    }

    /// `doc` restricted to what `table` draws on.
    pub(crate) fn drawn(&self, table: &dyn Table, doc: &RunDoc) -> RunDoc {
        let mut d = doc.clone();
        match table.draws() {
            Draws::All => {}
            Draws::Suites { own, also } => d.results.retain(|r| own.contains(&r.suite.as_str()) || also.contains(&r.suite.as_str())),
            Draws::NotOwned => {
                let owned: Vec<&str> = self
                    .tables
                    .iter()
                    .filter_map(|t| match t.draws() {
                        Draws::Suites { own, .. } => Some(own.iter().copied()),
                        _ => None,
                    })
                    .flatten()
                    .collect();
                d.results.retain(|r| !owned.contains(&r.suite.as_str()));
            }
        }
        d
    }
}
