//! The syscall table (the L4Re performance overview's syscall column, one row per call).

use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::families::bench::schema::syscall::{self, PER_CALL};
use crate::tables::tabular::headline::{Headline, Headlines, Pick, headline};
use crate::tables::tabular::noise_note;
use crate::tables::tabular::table::{TextTable, cycles, interval, interval_note, percent};
use crate::tables::tabular::tables::{Draws, Table};

pub fn render(results: &[&CaseResult], rounds: usize) -> String {
    // Where the hardware counted, the L4Re page's form: core cycles and
    // instructions beside the TSC cycles.
    let hw = crate::tables::tabular::any_hardware(results);
    let unit = crate::tables::tabular::cost_unit(results.iter().copied());
    let (median, min, p99, max) =
        (format!("median {}", unit.short), format!("min {}", unit.short), format!("p99 {}", unit.short), format!("max {}", unit.short));
    let mut headers = vec!["call", median.as_str()];
    if hw {
        headers.extend(["core cyc", "instr"]);
    }
    headers.extend(["95% CI", min.as_str(), p99.as_str(), max.as_str(), "CV", "median ns", "cpu"]);
    let mut t = TextTable::new(&headers, 1);
    let mut unmeasured: Vec<String> = Vec::new();
    for r in results {
        let name = syscall::name_of(&r.benchmark).to_string();
        match (r.status, r.metric(PER_CALL)) {
            (CaseStatus::Ok, Some(m)) => {
                let s = &m.summary;
                let cpu =
                    r.placement.as_ref().and_then(|p| p.observed_cpus.first().copied().flatten()).map_or("?".into(), |c| c.to_string());
                let mut cells = vec![name, cycles(s.median)];
                if hw {
                    let (core, instr) = crate::tables::tabular::core_and_instructions(r, 1.0)
                        .map_or(("n/a".into(), "n/a".into()), |(c, i)| (cycles(c), cycles(i)));
                    cells.extend([core, instr]);
                }
                cells.extend([
                    interval(m),
                    cycles(s.min),
                    cycles(s.p99),
                    cycles(s.max),
                    percent(s.cv),
                    // No ns twin under the instruction counter: an instruction is no time.
                    m.ns.map_or("-".into(), |n| format!("{:.1}", n.median)),
                    cpu,
                ]);
                t.row(cells);
            }
            _ => {
                // The reason goes under the table, once per distinct one: a column of it would be as wide as the text.
                let mark = crate::tables::tabular::rows::unmeasured_mark(r.status);
                let line = format!("  {mark}: {}", r.reason.as_deref().unwrap_or("failed"));
                if !unmeasured.contains(&line) {
                    unmeasured.push(line);
                }
                t.row(vec![name, mark.into()]);
            }
        }
    }
    let mut s = format!(
        "syscall: cost per call in {} (getpid, getppid, sched_yield, read, write through the syscall instruction; clock_gettime through the vDSO)\n",
        unit.long
    );
    s += &t.render();
    unmeasured.iter().for_each(|l| s += &format!("{l}\n"));
    if unit.short != "instr" {
        s += &interval_note(rounds);
    }
    s += &noise_note(results, PER_CALL);
    s
}

/// The syscall table, of the cases no published evaluation's table owns.
pub struct SyscallTable;

impl Table for SyscallTable {
    fn families(&self) -> &'static [&'static str] {
        &[syscall::FAMILY]
    }
    fn draws(&self) -> Draws {
        Draws::NotOwned
    }
    fn render(&self, doc: &RunDoc) -> String {
        let sys: Vec<&CaseResult> = doc.results.iter().filter(|r| r.family == syscall::FAMILY).collect();
        if sys.is_empty() { String::new() } else { render(&sys, doc.settings.rounds) }
    }
}

/// The summary's headline: the null system call.
pub struct SyscallHeadline;

impl Headlines for SyscallHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        headline("null system call (getpid)", pick.one(syscall::id(syscall::GETPID), syscall::PER_CALL)).into_iter().collect()
    }
}
