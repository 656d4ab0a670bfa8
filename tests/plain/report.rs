//! Reports: exports of a fixed fixture match their snapshots; import refuses
//! duplicates and future schema versions with exit code 2; the database and
//! the JSON agree; and an HTML report over a native run and a
//! multi-environment run opens in headless Chromium with every plot present
//! and no console message.

use std::path::Path;

use crate::common;
use common::{chromium, ok, only_json, oscycles, tempdir};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json");

#[test]
fn csv_and_markdown_exports_of_the_fixture_match_their_snapshots() {
    for (flag, snapshot) in [("--csv", "run.csv"), ("--markdown", "run.md")] {
        let got = ok(&oscycles(&["report", FIXTURE, flag, "-"]));
        let want = std::fs::read_to_string(Path::new(FIXTURE).with_file_name(snapshot)).unwrap();
        assert_eq!(got, want, "{flag} differs from tests/fixtures/{snapshot}");
    }
}

#[test]
fn an_aarch64_run_names_its_clock_by_the_counter_and_rate_its_document_records() {
    // The fixture as the aarch64 build under qemu-aarch64's user mode records it: the generic
    // timer's counter, its rate; /proc/cpuinfo's flags are the x86-64 host's, no property of it.
    let d = tempdir("aarch64-clock");
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    doc["host"]["clock"]["source"] = "cntvct_el0 (isb; mrs), 62.5 MHz: one tick is 16.0 ns, not a CPU cycle".into();
    doc["host"]["clock"]["tsc_hz"] = 62_499_870.0.into();
    doc["host"]["clock"]["cpuid_tsc_hz"] = 62.5e6.into();
    let path = d.join("aarch64.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let path = path.to_str().unwrap();
    // Long lines wrap at the terminal's width with an indent: joined again.
    let full = ok(&oscycles(&["show", path, "--full"])).replace("\n  ", " ");
    let clock = full.lines().find(|l| l.contains("CLOCK_MONOTONIC_RAW")).unwrap_or_else(|| panic!("no clock line: {full}"));
    assert!(
        clock.starts_with("CNTVCT_EL0 62.4999 MHz (cntvct_el0 (isb; mrs), 62.5 MHz") && clock.contains("CNTFRQ_EL0 says 62.5000 MHz"),
        "{clock}"
    );
    // The header (the tables' headings still say "TSC cycles" of every cycles cell).
    let header = |text: &str| text.split("\n\n").next().unwrap_or_default().to_string();
    assert!(!header(&full).contains("TSC") && !full.contains("constant_tsc"), "{full}");
    let brief = ok(&oscycles(&["show", path])).replace("\n  ", " ");
    assert!(brief.contains("CNTVCT_EL0 62.4999 MHz") && !header(&brief).contains("TSC"), "{brief}");
    let markdown = ok(&oscycles(&["report", path, "--markdown", "-"]));
    assert!(markdown.contains("CNTVCT_EL0 62.4999 MHz"), "{markdown}");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn import_refuses_a_conflicting_duplicate_and_a_future_schema_with_exit_code_2() {
    let d = tempdir("import");
    let db = d.join("store.sqlite");
    let db = db.to_str().unwrap();
    let first = oscycles(&["import", "--db", db, FIXTURE]);
    assert!(ok(&first).contains("imported"));
    // The same document again adds nothing, and says so.
    let again = oscycles(&["import", "--db", db, FIXTURE]);
    assert!(ok(&again).contains("nothing added"));
    // Another document under the same id is refused.
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    let other = d.join("other.json");
    let mut changed = doc.clone();
    changed["started_at"] = "2000-01-01T00:00:00Z".into();
    std::fs::write(&other, changed.to_string()).unwrap();
    let refused = oscycles(&["import", "--db", db, other.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is already in the store with different contents"));
    let future = d.join("future.json");
    doc["schema_version"] = 999.into();
    doc["id"] = "from-the-future".into();
    std::fs::write(&future, doc.to_string()).unwrap();
    let refused = oscycles(&["import", "--db", db, future.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("schema version 999"));
    let listed = ok(&oscycles(&["runs", "--db", db]));
    assert!(listed.contains("1 runs in"), "{listed}");
    // A run id from the store serves a report like the file does.
    let id =
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap()["id"].as_str().unwrap().to_string();
    let csv = ok(&oscycles(&["report", "--db", db, &id, "--csv", "-"]));
    assert_eq!(csv, std::fs::read_to_string(Path::new(FIXTURE).with_file_name("run.csv")).unwrap());
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn the_html_report_opens_in_headless_chromium_with_every_plot() {
    let d = tempdir("html");
    let res = d.join("results");
    let r = res.to_str().unwrap();
    // One native run with plots of several kinds, one multi-environment run.
    ok(&oscycles(&[
        "run",
        "--suite",
        "syscall,l4-ipc,fwq,net",
        "--bench",
        "syscall.getpid,ipc.pipe,ipc.futex,noise.fwq,net.udp",
        "--rounds",
        "2",
        "--batches",
        "3",
        "--batch-ms",
        "0.05",
        "--point-ms",
        "20",
        "--scale",
        "test",
        "--quiet",
        "--results",
        r,
    ]));
    let native = only_json(&res);
    let multi_dir = d.join("multi");
    ok(&oscycles(&[
        "run",
        "--suite",
        "syscall",
        "--bench",
        "syscall.getpid",
        "--batches",
        "3",
        "--env",
        "native,container",
        "--quiet",
        "--results",
        multi_dir.to_str().unwrap(),
    ]));
    let multi = only_json(&multi_dir);
    let html = d.join("html");
    ok(&oscycles(&["report", native.to_str().unwrap(), multi.to_str().unwrap(), "--html", html.to_str().unwrap()]));
    let index = html.join("index.html");
    let text = std::fs::read_to_string(&index).unwrap();
    for fetch in [" src=", "<link", "<script", "href=\"http", "url("] {
        assert!(!text.contains(fetch), "the page must work from disk alone: found {fetch}");
    }
    let shot = d.join("report.png");
    let (dom, console) = chromium(&index, &shot, 2400);
    assert!(console.is_empty(), "console messages: {console:?}");
    let figures = dom.matches("<figure").count();
    let svgs: Vec<&str> = dom.split("<svg").skip(1).collect();
    assert!(figures >= 4, "IPC, network and FWQ plots: {figures} figures");
    assert_eq!(svgs.len(), figures, "every figure holds its SVG");
    for s in &svgs {
        let body = &s[..s.find("</svg>").expect("closed")];
        assert!(body.contains("<path") || body.contains("<polyline") || body.contains("<rect"), "an empty plot");
    }
    assert!(dom.contains("environments side by side"), "the multi-environment table is there");
    // What was run and where, then the comparison, the figures, the tables.
    let at = |id: &str| dom.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no section {id}"));
    let order = [at("summary"), at("contents"), at("compare"), at("plots0"), at("tables0"), at("tables1")];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "sections out of order: {order:?}");
    assert!(dom.contains("<table class=\"t\"><thead><tr><th>call</th>"), "the tables are HTML tables with the terminal's headers");
    assert!(dom.contains("class=\"cmp\""), "the comparison is an HTML table");
    assert!(std::fs::metadata(&shot).map(|m| m.len() > 10_000).unwrap_or(false), "a screenshot was taken");
    // The console check can fail: a page that logs is caught.
    let bad = d.join("bad.html");
    std::fs::write(&bad, "<html><body><script>console.error('boom')</script></body></html>").unwrap();
    assert!(!chromium(&bad, &d.join("bad.png"), 2400).1.is_empty());
    let _ = std::fs::remove_dir_all(d);
}

const MULTI: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/multi-env.json");

/// The figure whose title begins with `title`, its SVG, if the page has it.
fn figure<'a>(dom: &'a str, title: &str) -> Option<&'a str> {
    dom.split("<figure").skip(1).find(|f| f.contains(&format!("<figcaption>{title}")))
}

#[test]
fn a_run_of_several_environments_gets_the_published_comparisons_as_figures() {
    // A real run (tests/fixtures/multi-env.json): native, container, uml
    // and qemu-tcg, suites l4-ipc, hermit-basic, stream, lmbench, boot, 2 rounds.
    let d = tempdir("html-multi");
    let html = d.join("html");
    ok(&oscycles(&["report", MULTI, "--html", html.to_str().unwrap()]));
    let index = html.join("index.html");
    let (dom, console) = chromium(&index, &d.join("multi.png"), 3000);
    assert!(console.is_empty(), "console messages: {console:?}");
    for title in [
        "One-way IPC by payload per environment (intra, same core; CPU cycles)",
        "One-way IPC by payload per environment (inter, same core; CPU cycles)",
        "The Trustworthy Systems L4 performance page (Wombat): LMBench latencies, Rel. Perf (CPU cycles)",
        "The Trustworthy Systems L4 performance page (Wombat): LMBench bandwidths, Rel. Perf (CPU cycles)",
        "The HermitCore PVH/HVM benchmark post: basic benchmark (CPU cycles)",
        "STREAM by environment, single thread (real time)",
        "The HermitCore PVH/HVM benchmark post: boot time by environment",
    ] {
        let f = figure(&dom, title).unwrap_or_else(|| panic!("no figure '{title}'"));
        let svg = &f[f.find("<svg").expect("an SVG")..f.find("</svg>").expect("closed")];
        assert!(svg.contains("<rect") || svg.contains("<polyline"), "'{title}' draws nothing");
        for env in ["native", "container", "uml"] {
            assert!(svg.contains(env), "'{title}' has no {env}");
        }
    }
    // Units are never mixed: a CPU-cycles panel holds no emulated environment.
    let ipc = figure(&dom, "One-way IPC by payload per environment (intra, same core; CPU cycles)").unwrap();
    assert!(!ipc.contains("qemu-tcg"), "an emulated environment on a CPU-cycles axis");
    // The order: what was run and where, the figures, then the tables (HTML tables).
    let at = |id: &str| dom.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no section {id}"));
    assert!(at("summary") < at("plots0") && at("plots0") < at("tables0"));
    assert!(dom[at("tables0")..].contains("<th>System activity</th><th>native</th><th>container</th><th>uml</th>"), "the HermitCore table");
    assert!(dom[at("tables0")..].contains("<td>lat_ctx -s 0 2</td>"), "the Wombat table's labels");
    assert!(!dom[at("tables0")..].contains('\u{1e}'), "every table is laid out");
    // report --by environment draws them too, a column each.
    let by = d.join("by");
    ok(&oscycles(&["report", MULTI, "--by", "environment", "--html", by.to_str().unwrap()]));
    let page = std::fs::read_to_string(by.join("index.html")).unwrap();
    assert!(page.contains("One-way IPC by payload per environment"), "report --by draws the comparisons");
    let _ = std::fs::remove_dir_all(d);
}
