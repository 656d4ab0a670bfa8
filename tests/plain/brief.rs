//! `show` leads with what was measured (issue 60), on a stored run of two
//! microkernels (tests/fixtures/microkernels.json: `--env sel4,mach --suite
//! l4-ipc,syscall`, trimmed to the sel4-call, mach-msg, pipe and futex IPC
//! cases and every syscall case): a test per rule; and the guide's
//! statements of figures about seL4 and Mach hold on that run.

use std::process::Command;

use crate::common::{chromium, tempdir};

const MICRO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/microkernels.json");
/// `--env qemu-tcg,sel4,mach --suite l4-ipc,syscall`, trimmed to the pipe, futex,
/// fifo, sel4-call and mach-msg IPC cases at 0, 2 and 64 words and every syscall case.
const THREE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/qemu-sel4-mach.json");
/// A native run of the quick suite.
const QUICK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/quick.json");

fn show(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_oscycles")).env("COLUMNS", "100").arg("show").args(args).output().expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The line number of the first line that starts with `start`.
fn at(text: &str, start: &str) -> usize {
    text.lines().position(|l| l.starts_with(start)).unwrap_or_else(|| panic!("no line starts with '{start}':\n{text}"))
}

#[test]
fn show_prints_the_header_summary_forms_then_tables_and_the_l4_form_early() {
    let text = show(&[MICRO]);
    assert!(text.lines().count() <= 80, "{} lines:\n{text}", text.lines().count());
    let order = [
        at(&text, "oscycles "),
        at(&text, "summary ("),
        at(&text, "as in the L4 performance page"),
        at(&text, "as in the L4Re performance overview"),
        at(&text, "##### environment sel4"),
        at(&text, "##### environment mach"),
        at(&text, "environments side by side"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "out of order: {order:?}\n{text}");
    assert!(order[2] < 40, "the L4 form begins at line {}", order[2] + 1);
    assert!(order[1] < 8, "a header of a few lines");
    // --full keeps every row: the Linux mechanisms' n/a rows and the whole header.
    let full = show(&[MICRO, "--full"]);
    assert!(full.lines().any(|l| l.starts_with("pipe ") && l.contains("n/a")), "--full has the n/a rows");
    assert!(full.contains("CPU vulnerabilities"));
}

#[test]
fn rows_that_are_na_are_left_out_with_one_line_saying_what_and_why() {
    let text = show(&[MICRO]);
    assert!(!text.lines().any(|l| l.starts_with("pipe ") || l.starts_with("futex ")), "no n/a rows:\n{text}");
    assert!(!text.contains("(continued: columns"), "no table split by a column of reasons:\n{text}");
    let sel4 = &text[text.find("##### environment sel4").unwrap()..text.find("##### environment mach").unwrap()];
    let joined = sel4.split_whitespace().collect::<Vec<_>>().join(" ");
    // The syscall table: its n/a calls are one line, grouped by reason (seL4's two).
    let left: Vec<&str> = sel4.lines().filter(|l| l.contains("left out, n/a:")).collect();
    assert_eq!(left.len(), 2, "a line per table (syscall, ipc):\n{sel4}");
    assert!(joined.contains("left out, n/a: getpid, getppid (2 cases): seL4 has no process ids"), "{sel4}");
    assert!(joined.contains("clock_gettime, read, write (3 cases): not in oscycles' seL4"), "{sel4}");
    assert!(!sel4.lines().any(|l| l.starts_with("getpid")), "n/a calls are no rows:\n{sel4}");
    // The IPC table: what the form showed is not shown again, the rest was n/a: one line.
    assert!(joined.contains("ipc: its 12 measured cases are in the form above; left out, n/a: pipe, futex, mach-msg (44 cases)"), "{sel4}");
    assert!(joined.contains("row; 2 more reasons (16 cases): show --full"), "about two lines of reasons, the rest counted: {sel4}");
    let mach = &text[text.find("##### environment mach").unwrap()..];
    let joined = mach.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(joined.contains("mach-msg cores=cross (36 cases)"), "the parameters that set n/a cases apart: {mach}");
}

#[test]
fn a_table_with_nothing_measured_is_one_line() {
    let d = tempdir("brief-na");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(MICRO).unwrap()).unwrap();
    for r in v["results"].as_array_mut().unwrap() {
        if r["family"] == "syscall" && r["environment"] == "mach" {
            r["status"] = "not_applicable".into();
            r["reason"] = "a reason for the test".into();
            r["metrics"] = serde_json::json!([]);
        }
    }
    let p = d.join("na.json");
    std::fs::write(&p, v.to_string()).unwrap();
    let text = show(&[p.to_str().unwrap()]);
    let mach = &text[text.find("##### environment mach").unwrap()..];
    let line: Vec<&str> = mach.lines().filter(|l| l.starts_with("syscall")).collect();
    assert_eq!(line.len(), 1, "{mach}");
    assert!(line[0].starts_with("syscall: nothing measured; left out, n/a: null, getpid, getppid, 4 more (7 cases): a reason"), "{mach}");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn the_side_by_side_table_holds_only_cases_measured_in_two_environments() {
    let text = show(&[MICRO]);
    let side = &text[text.find("environments side by side").unwrap()..];
    let rows: Vec<&str> = side.lines().filter(|l| l.starts_with("syscall.") || l.starts_with("ipc.")).collect();
    assert_eq!(rows.len(), 2, "null and sched_yield:\n{side}");
    assert!(rows[0].starts_with("syscall.null") && rows[1].starts_with("syscall.sched_yield"), "{side}");
    // mach_task_self, measured in Mach only, is in Mach's table.
    let mach = &text[text.find("##### environment mach").unwrap()..text.find("environments side by side").unwrap()];
    assert!(mach.lines().any(|l| l.starts_with("getpid") && l.contains("453")), "{mach}");
    // --full keeps the old table: every case present in two environments.
    assert!(show(&[MICRO, "--full"]).lines().any(|l| l.starts_with("syscall.read")));
}

#[test]
fn the_rounds_line_says_what_a_counted_column_rests_on() {
    for args in [vec![MICRO], vec![MICRO, "--full"]] {
        let text = show(&args);
        let rounds: Vec<&str> = text.lines().filter(|l| l.starts_with("rounds:")).collect();
        assert_eq!(rounds.len(), 1, "{text}");
        assert!(rounds[0].starts_with("rounds: 1 a cell x 3 batches (sel4, mach: QEMU's instruction counter, exact"), "{}", rounds[0]);
        assert!(!text.contains("10 rounds"), "the run's --rounds 10 is no cell's: {text}");
    }
}

#[test]
fn the_l4re_overview_holds_each_kernels_cheapest_entry_named() {
    let text = show(&[MICRO]);
    let form = &text[at(&text, "as in the L4Re")..];
    let row = |env: &str| form.lines().find(|l| l.starts_with(env)).unwrap_or_else(|| panic!("no {env} row:\n{form}")).to_string();
    assert!(row("sel4").ends_with("157 (seL4_Reply)"), "{form}");
    assert!(row("mach").ends_with("61.0 (invalid trap)"), "Mach's invalid trap, not mach_task_self:\n{form}");
    assert!(form.contains("mach: mach_task_self 453"), "the alternative in a note:\n{form}");
}

#[test]
fn the_html_report_leads_with_the_same_and_keeps_every_table_one_click_away() {
    let d = tempdir("brief-html");
    let html = d.join("html");
    let out = Command::new(env!("CARGO_BIN_EXE_oscycles")).args(["report", MICRO, "--html", html.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (dom, console) = chromium(&html.join("index.html"), &d.join("shot.png"), 1000);
    assert!(console.is_empty(), "{console:?}");
    let pos = |s: &str| dom.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(pos("id=\"summary\"") < pos("id=\"brief0\"") && pos("id=\"brief0\"") < pos("id=\"tables0\""));
    let brief = &dom[pos("id=\"brief0\"")..pos("id=\"contents\"")];
    assert!(brief.contains("as in the L4 performance page") && brief.contains("left out, n/a:"), "the forms and collapsing");
    assert!(!brief.contains("<td>pipe</td>"), "no n/a rows in the brief tables");
    let full = &dom[pos("id=\"tables0\"")..];
    assert!(full.contains("<details><summary>every table"), "the full tables in a details element");
    assert!(full.contains("<td>pipe</td>"), "every row there");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_run_of_three_environments_and_a_native_quick_run_fit_their_budgets() {
    let three = show(&[THREE]);
    assert!(three.lines().count() <= 120, "{} lines:\n{three}", three.lines().count());
    assert!(at(&three, "as in the L4 performance page") < 40, "{three}");
    let quick = show(&[QUICK]);
    assert!(quick.lines().count() <= 150, "{} lines:\n{quick}", quick.lines().count());
    for text in [&three, &quick] {
        assert!(text.lines().all(|l| l.chars().count() <= 100), "within the width:\n{text}");
        assert!(!text.contains("(continued: columns"), "no table split into blocks of columns:\n{text}");
    }
}

#[test]
fn the_line_naming_the_full_tables_fits_the_width_wherever_the_run_document_lies() {
    // CI's checkout lies deeper than a developer's: the command with the
    // document's path goes on a line of its own when the two do not fit.
    let d = tempdir("brief-deeper-checkout");
    let doc = d.join("qemu-sel4-mach.json");
    std::fs::copy(THREE, &doc).unwrap();
    let text = show(&[doc.to_str().unwrap()]);
    let last: Vec<&str> = text.lines().rev().take(2).collect();
    assert!(
        last[0].starts_with("  oscycles show /") && last[0].ends_with(" --full") && last[1] == "every table, row and column:",
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "within the width:\n{text}");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_wide_table_wraps_its_headings_and_labels_and_puts_free_text_under_it() {
    // The L4 form of four columns: each heading on two lines, not a second block of columns.
    let three = show(&[THREE]);
    let form = &three[three.find("as in the L4 performance page").unwrap()..];
    let lines: Vec<&str> = form.lines().skip_while(|l| !l.contains("qemu-tcg")).take(3).collect();
    assert!(lines[0].contains("qemu-tcg") && lines[1].starts_with("space  words") && lines[1].contains("pipe (instr)"), "{form}");
    assert!(lines[2].starts_with("----"), "{form}");
    // The quick run's summary: one block; the lmbench table's comments are notes, a line per distinct text.
    let quick = show(&[QUICK]);
    let summary = &quick[quick.find("summary (").unwrap()..quick.find("as in the L4").unwrap()];
    assert!(summary.lines().any(|l| l.starts_with("block I/O peak")) && !summary.contains("continued"), "{summary}");
    let lm = &quick[quick.find("lmbench latencies").unwrap()..quick.find("lmbench bandwidths").unwrap()];
    assert!(!lm.contains("Comment"), "no comment column:\n{lm}");
    assert!(lm.contains("\n  (thread create): not in lmbench\n") && lm.contains("\n  (vfork + exec): not in lmbench; the same\n"), "{lm}");
    // --full keeps the columns.
    assert!(show(&[QUICK, "--full"]).lines().any(|l| l.starts_with("Latencies") && l.contains("Comment")));
}

#[test]
fn a_case_measured_in_two_environments_is_in_the_side_by_side_table_only() {
    let text = show(&[THREE]);
    let qemu = &text[text.find("##### environment qemu-tcg").unwrap()..text.find("##### environment sel4").unwrap()];
    let sel4 = &text[text.find("##### environment sel4").unwrap()..text.find("##### environment mach").unwrap()];
    let side = &text[text.find("environments side by side").unwrap()..];
    for call in ["null ", "getpid ", "sched_yield "] {
        assert!(!qemu.lines().any(|l| l.starts_with(call)), "{call} is side by side only:\n{qemu}");
        assert!(side.lines().any(|l| l.starts_with(&format!("syscall.{call}"))), "{side}");
    }
    assert!(qemu.lines().any(|l| l.starts_with("getppid")), "measured in qemu-tcg only: its table\n{qemu}");
    assert!(qemu.contains("  null, getpid, sched_yield (3 cases) side by side below"), "{qemu}");
    assert!(
        sel4.starts_with("##### environment sel4")
            && sel4
                .lines()
                .nth(1)
                .unwrap()
                .starts_with("syscall: null, sched_yield (2 cases) side by side below; left out, n/a: getpid, getppid"),
        "{sel4}"
    );
    // The side-by-side table's n/a cell: a line, its reason in brief.
    assert!(side.contains("\n  n/a in sel4: syscall.getpid: seL4 has no process ids\n"), "{side}");
}

#[test]
fn a_left_out_line_names_about_two_lines_of_reasons_and_counts_the_rest() {
    let text = show(&[THREE]);
    let qemu = &text[text.find("##### environment qemu-tcg").unwrap()..text.find("##### environment sel4").unwrap()];
    let joined = qemu.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(joined.contains("left out, n/a: pipe, fifo, futex with cores=cross (18 cases): cross-core needs two CPUs; 2 more reasons (24 cases): show --full"), "{qemu}");
}

#[test]
fn exact_counts_are_not_said_to_pair_rounds_and_the_guests_command_line_is_in_full() {
    let text = show(&[THREE]);
    assert!(!text.contains("took turns"), "exact counts are compared as they are:\n{text}");
    assert!(text.contains("  rel. = against qemu-tcg (above 1: faster)"), "{text}");
    assert!(text.contains("note: qemu-tcg ran the guest kernel 6.1.0-56-amd64\n"), "{text}");
    assert!(show(&[THREE, "--full"]).contains("booted with 'console=ttyS0"));
}

#[test]
fn a_run_that_counted_the_kernel_leads_with_its_kernel_form_and_where_the_instructions_go() {
    let text = show(&[concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/kernel-counters.json")]);
    let order = [
        at(&text, "summary ("),
        at(&text, "as in the L4 performance page: one-way IPC"),
        at(&text, "as in the L4 performance page, in the page's own quantity"),
        at(&text, "where the instructions go"),
        at(&text, "as in the L4Re performance overview"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "out of order: {order:?}\n{text}");
    assert!(text.lines().any(|l| l.starts_with("qemu-tcg     pipe       intra  0            6711.1  6456.0  255.1")), "{text}");
    assert!(text.contains("ipc: its 4 measured cases are in the form above\n"), "{text}");
}

/// The stored run's median of `bench` in `env` with parameters `params` (a JSON object's pairs).
fn cell(v: &serde_json::Value, env: &str, bench: &str, params: serde_json::Value) -> f64 {
    let r = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["environment"] == env && r["benchmark"] == bench && (params.is_null() || r["params"] == params) && r["status"] == "ok")
        .unwrap_or_else(|| panic!("no {bench} {params} in {env}"));
    r["metrics"][0]["summary"]["median"].as_f64().unwrap()
}

#[test]
fn the_guides_figures_of_sel4_and_mach_hold_on_the_stored_run() {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(MICRO).unwrap()).unwrap();
    let ipc = |env: &str, bench: &str, space: &str, w: u64| {
        cell(&v, env, bench, serde_json::json!({"cores": "same", "space": space, "words": w}))
    };
    let doc = |page: &str| {
        std::fs::read_to_string(format!("{}/docs/src/{page}", env!("CARGO_MANIFEST_DIR")))
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let near = |got: f64, want: f64, tol: f64| (got - want).abs() <= tol;
    // Each statement, as the page words it, and what it says of the run.
    let l4 = doc("evaluations/l4-performance.md");
    assert!(l4.contains("257.5 guest instructions one way at 0 words (the fastpath), 1,075 at 2 words"), "l4-performance.md changed");
    assert!(l4.contains("36 more for each further word (1,579 at 16)") && l4.contains("936 one way across tasks"));
    let sel4 = |w| ipc("sel4", "ipc.sel4-call", "intra", w);
    assert!(near(sel4(0), 257.5, 0.5) && near(sel4(2), 1075.0, 0.5) && near(sel4(16), 1579.0, 0.5), "seL4's cells");
    for (a, b) in [(2, 4), (4, 8), (8, 16)] {
        assert!(near((sel4(b) - sel4(a)) / (b - a) as f64, 36.0, 0.5), "36 a word from {a} to {b} words");
    }
    assert!(near(ipc("mach", "ipc.mach-msg", "inter", 0), 936.0, 0.5));
    let mach = doc("environments/mach.md");
    assert!(mach.contains("costs about 936 instructions one way, of which the trap entry and exit are about 61"), "mach.md changed");
    assert!(mach.contains("The first inline word adds 49 one way, each further word 28 (up to 64 words)"), "mach.md changed");
    assert!(mach.contains("`mach_task_self` costs 453"));
    assert!(near(cell(&v, "mach", "syscall.null", serde_json::Value::Null), 61.0, 0.5));
    assert!(near(cell(&v, "mach", "syscall.getpid", serde_json::Value::Null), 453.0, 0.5));
    for space in ["intra", "inter"] {
        let m = |w| ipc("mach", "ipc.mach-msg", space, w);
        assert!(near(m(1) - m(0), 49.0, 0.5), "the first word, {space}");
        for (a, b) in [(1, 2), (2, 4), (4, 8), (8, 16), (16, 64)] {
            assert!(near((m(b) - m(a)) / (b - a) as f64, 28.0, 0.5), "28 a word from {a} to {b} words, {space}");
        }
    }
    let s = doc("environments/sel4.md");
    assert!(s.contains("**230.5 one way**, against the cell's 257.5") && s.contains("About 800 instructions from 1 word"));
    assert!(s.contains("36 instructions per word") && s.contains("Inter costs 2-3 instructions more"));
    let check = v["environment"]["settings"]["sel4"]["independent_check"]["one_way"].as_f64().unwrap();
    assert!(near(check, 230.5, 0.1), "the independent check");
    assert!(near(sel4(2) - sel4(1), 800.0, 5.0), "the slowpath's step");
    for w in [0, 1, 2, 4, 8, 16] {
        let d = ipc("sel4", "ipc.sel4-call", "inter", w) - sel4(w);
        assert!((2.0..=3.0).contains(&d), "inter - intra at {w} words: {d}");
    }
}
