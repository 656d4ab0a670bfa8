//! What a report table is. A table says which families' results it shows,
//! which suites it draws on, and where it goes (once per condition, once per
//! environment over every condition, or once per run); the report core
//! (`report::render_tables`) splits a run by environment and condition and
//! asks each table of its list (`report::Tables`) in turn. A family's table
//! lives in its folder (`bench/<family>/table.rs`), a published evaluation's
//! that spans families in `published/`.

use crate::data::results::RunDoc;

/// Which of a run's results a table draws on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draws {
    /// Every result of the condition.
    All,
    /// Only those of the suites `own` and `also`. The `own` suites are the
    /// table's: the tables that draw on [`Draws::NotOwned`] leave them out
    /// (the lmbench table owns the lmbench suite and also shows the quick
    /// suite's cases, which the generic tables show too).
    Suites { own: &'static [&'static str], also: &'static [&'static str] },
    /// Every result but those of suites another table owns.
    NotOwned,
}

/// Where a table goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Once per condition (load, isolation) of each environment.
    Condition,
    /// Once per environment, laying every condition out in one grid (OS
    /// noise, control loops).
    Environment,
    /// Once per run, every environment in it (start-up: the host measures
    /// each environment from outside).
    Run,
}

/// One table of the report.
pub trait Table: Sync {
    /// The families whose results it shows.
    fn families(&self) -> &'static [&'static str];
    fn draws(&self) -> Draws {
        Draws::All
    }
    fn layout(&self) -> Layout {
        Layout::Condition
    }
    /// The table of `doc` (one environment's results, of one condition for
    /// [`Layout::Condition`], restricted as [`Table::draws`] says); empty
    /// when it has nothing to show.
    fn render(&self, doc: &RunDoc) -> String;
    /// The table with a column per environment (each named, its results
    /// restricted as [`Table::draws`] says), for a run of several; empty
    /// where the table has no such form.
    fn render_across(&self, _envs: &[(&str, &RunDoc)]) -> String {
        String::new()
    }
    /// The published evaluation's form the table fills, over the run's
    /// environments (one or more, each named, its results restricted as
    /// [`Table::draws`] says), for the report that leads with them (`show`
    /// without `--full`); empty where it fills none here.
    fn render_form(&self, _envs: &[(&str, &RunDoc)]) -> String {
        String::new()
    }
    /// Whether the table is nothing but that form (a published evaluation's
    /// table that spans families): the report that led with the forms does
    /// not lay it out again with each environment's tables.
    fn is_form(&self) -> bool {
        false
    }
    /// Whether the form ([`Table::render_form`]) shows case `r` as this
    /// table would: the report that led with the form leaves it out here.
    fn in_form(&self, _r: &crate::data::results::CaseResult) -> bool {
        false
    }
}
