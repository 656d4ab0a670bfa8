//! What a report table is, and the list the report lays out. A table says
//! which families' results it shows, which suites it draws on, and where it
//! goes (once per condition, once per environment over every condition, or
//! once per run); the report core (`render_tables`) splits a run by
//! environment and condition and asks each table of the list in turn. It
//! names no family and no suite itself: a family's table is a [`Table`] in
//! the list, and a family no table names gets the generic one
//! ([`super::generic`]), every metric of every case.

use super::figures::Plots;
use crate::results::RunDoc;

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
}

/// The tables a report lays out, in order, and the plots an exporter that
/// draws lays out after them ([`Plots`]).
#[derive(Clone)]
pub struct Tables {
    tables: Vec<&'static dyn Table>,
    plots: Vec<&'static dyn Plots>,
}

impl Tables {
    /// oscycles' own tables and plots.
    pub fn standard() -> Tables {
        use super::{env, io, ipc, lmbench, memory, microvm, noise, packet_stream, syscall};
        let tables: Vec<&'static dyn Table> = vec![
            &syscall::SyscallTable,
            &ipc::IpcTable,
            &ipc::L4ReOverview,
            &lmbench::LmbenchTables,
            &memory::HermitBasic,
            &memory::Stream,
            &memory::Memcpy,
            &memory::Alloc,
            &packet_stream::PacketStream,
            &packet_stream::Parallel,
            &io::NetTable,
            &io::BlkTable,
            &microvm::Exits,
            &noise::Fwq,
            &noise::Control,
            &env::Boot,
        ];
        let plots: Vec<&'static dyn Plots> =
            vec![&ipc::IpcPlots, &io::IoPlots, &memory::MemoryPlots, &packet_stream::ParallelPlots, &noise::JitterHistograms];
        Tables { tables, plots }
    }

    /// These tables and `more` after them.
    pub fn with(mut self, more: &[&'static dyn Table]) -> Tables {
        self.tables.extend_from_slice(more);
        self
    }

    /// These plots and `more` after them.
    pub fn with_plots(mut self, more: &[&'static dyn Plots]) -> Tables {
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
