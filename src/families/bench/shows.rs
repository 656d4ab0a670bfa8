//! What the report shows of a family, carried by the family itself
//! ([`super::Family::shows`]): its tables, its plots and its summary line.
//! The registry gathers them from its one list of families, in that list's
//! order; a family that shows nothing gets the report's generic table.

use crate::data::results::RunDoc;
use crate::tables::tabular::figures::Plots;
use crate::tables::tabular::headline::Headlines;
use crate::tables::tabular::tables::{Draws, Layout, Table};

/// A family's tables, plots and headline.
#[derive(Clone, Copy)]
pub struct Shows {
    /// Its tables.
    pub tables: &'static [&'static dyn Table],
    /// Plots that compare environments, drawn before every family's own.
    pub comparisons: &'static [&'static dyn Plots],
    /// Its own plots.
    pub plots: &'static [&'static dyn Plots],
    /// The figure that stands for it in a run's summary.
    pub headline: Option<&'static dyn Headlines>,
}

impl Shows {
    /// Nothing of its own.
    pub const NOTHING: Shows = Shows { tables: &[], comparisons: &[], plots: &[], headline: None };
}

/// A table of one family's results laid out by one function: most
/// families' table. It draws on every result of its families, once per
/// condition, unless said otherwise.
pub struct FamilyTable {
    pub families: &'static [&'static str],
    pub render: fn(&RunDoc) -> String,
    pub draws: Draws,
    pub layout: Layout,
}

impl FamilyTable {
    /// The table of `families` that `render` lays out, once per condition.
    pub const fn new(families: &'static [&'static str], render: fn(&RunDoc) -> String) -> FamilyTable {
        FamilyTable { families, render, draws: Draws::All, layout: Layout::Condition }
    }

    /// The same table laid out as `layout` says.
    pub const fn laid_out(self, layout: Layout) -> FamilyTable {
        FamilyTable { layout, ..self }
    }
}

impl Table for FamilyTable {
    fn families(&self) -> &'static [&'static str] {
        self.families
    }
    fn draws(&self) -> Draws {
        self.draws
    }
    fn layout(&self) -> Layout {
        self.layout
    }
    fn render(&self, doc: &RunDoc) -> String {
        (self.render)(doc)
    }
}
