//! The proc family's headline in a run's summary (its table is the lmbench
//! table's lat_proc rows, `published/lmbench.rs`).

use crate::data::results::CaseResult;
use crate::families::bench::schema::proc;
use crate::tables::tabular::headline::{Headline, Headlines, Pick, extreme, headline};

/// The summary's headline: the static fork of nothing touched.
pub struct ProcHeadline;

impl Headlines for ProcHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        // Documents from before touched_mib have the static fork without parameters.
        let static_fork = |p: Option<proc::Params>| p == Some(proc::Params::touched(0, false)) || p == Some(proc::Params::NONE);
        let fork = extreme(
            pick.measured().filter(|r| r.benchmark == proc::id(proc::FORK) && static_fork(r.params_as::<proc::Params>())),
            proc::PER_OP,
            false,
        );
        headline(fork_line(fork.map(|f| f.0)), fork).into_iter().collect()
    }
}

/// The summary's fork line names its fork: the static one, and the size of
/// the process that forked where the case recorded it.
fn fork_line(r: Option<&CaseResult>) -> String {
    let size = r.and_then(|r| r.details.get(proc::FORKER)).and_then(|v| serde_json::from_value::<proc::ProcessSize>(v.clone()).ok());
    match size {
        Some(s) => format!("fork + _exit + wait ((static fork): a {:.1} MiB static C process)", s.vm_size_kib as f64 / 1024.0),
        None => "fork + _exit + wait ((static fork), forker's size not recorded)".into(),
    }
}
