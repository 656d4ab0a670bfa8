//! Documents read and written: ids, bounds, numbers, FIFOs, exports that neutralise what a document carries (items 11, 15).

use super::*;

#[test]
fn hostile_ids_name_no_file_and_reach_no_terminal() {
    let d = tempdir("hostile-ids");
    let out_dir = d.join("out");
    let db = d.join("store.sqlite");
    for id in ["../../../escaped", "/tmp/absolute-escape", "a/b", "..", ""] {
        let doc = doc_with_id(&d, id);
        refused(&["report", doc.to_str().unwrap(), "--json", out_dir.to_str().unwrap()], "is not a valid run id");
        refused(&["import", doc.to_str().unwrap(), "--db", db.to_str().unwrap()], "is not a valid run id");
    }
    assert!(!d.join("escaped.json").exists() && !Path::new("/tmp/absolute-escape.json").exists());
    // A control-character id is refused, and its text never reaches the
    // terminal raw.
    let doc = doc_with_id(&d, "x\u{1b}]0;pwned\u{7}\u{1b}[2J");
    let out = refused(&["show", doc.to_str().unwrap()], "is not a valid run id");
    assert!(!out.stderr.contains(&0x1b) && !out.stdout.contains(&0x1b), "an escape sequence reached the terminal");
    // A store written by an older oscycles may hold any id: report refuses it too.
    {
        let mut bad: oscycles::data::results::RunDoc =
            serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json")).unwrap())
                .unwrap();
        bad.id = "../../stored-escape".into();
        oscycles::data::db::Db::open_path(&db).unwrap().insert(&bad, "test").unwrap();
    }
    refused(&["report", "../../stored-escape", "--db", db.to_str().unwrap(), "--json", out_dir.to_str().unwrap()], "is not a valid run id");
    assert!(!d.join("stored-escape.json").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn documents_are_read_with_a_bound() {
    let d = tempdir("bounded");
    for args in [vec!["show", "/dev/zero"], vec!["compare", "/dev/zero", "/dev/zero"], vec!["import", "/dev/zero"]] {
        let t = Instant::now();
        let mut args = args;
        let db = d.join("s.sqlite");
        if args[0] == "import" {
            args.extend(["--db", db.to_str().unwrap()]);
        }
        refused(&args, "larger than 64 MiB");
        assert!(t.elapsed() < Duration::from_secs(2), "{args:?} took {:?}", t.elapsed());
    }
    let big = d.join("big.json");
    std::fs::File::create(&big).unwrap().set_len(65 << 20).unwrap();
    refused(&["show", big.to_str().unwrap()], "larger than 64 MiB");
    refused(&["report", big.to_str().unwrap(), "--csv", "-"], "larger than 64 MiB");
    refused(&["show", d.to_str().unwrap()], "is a directory");
    let _ = std::fs::remove_dir_all(&d);
}

/// Every metric summary (and its ns twin) of a document.
fn summaries(v: &mut serde_json::Value) -> Vec<&mut serde_json::Value> {
    let mut out = Vec::new();
    for r in v["results"].as_array_mut().unwrap() {
        for m in r["metrics"].as_array_mut().unwrap() {
            let m = m.as_object_mut().unwrap();
            for (k, s) in m.iter_mut() {
                if k == "summary" || k == "ns" {
                    out.push(s);
                }
            }
        }
    }
    out
}

#[test]
fn absurd_numbers_in_documents_are_refused_naming_the_field() {
    let d = tempdir("absurd-numbers");
    let good = changed_doc(&d, "a-good-run", |_| {});
    fn set(keys: &'static [(&'static str, f64)]) -> impl Fn(&mut serde_json::Value) {
        move |v: &mut serde_json::Value| {
            for s in summaries(v) {
                for (k, x) in keys {
                    s[*k] = serde_json::json!(x);
                }
            }
        }
    }
    let cases: Vec<(PathBuf, &str)> = vec![
        (changed_doc(&d, "tsc-zero", |v| v["host"]["clock"]["tsc_hz"] = serde_json::json!(0.0)), "host.clock.tsc_hz"),
        (changed_doc(&d, "tsc-negative", |v| v["host"]["clock"]["tsc_hz"] = serde_json::json!(-1.0)), "host.clock.tsc_hz"),
        (changed_doc(&d, "rounds-huge", |v| v["settings"]["rounds"] = serde_json::json!(4294967295u64)), "settings.rounds"),
        (
            changed_doc(
                &d,
                "negative",
                set(&[("min", -2e12), ("median", -1325640869141.0), ("mean", -1e12), ("p99", -1.0), ("p999", -1.0), ("max", -1.0)]),
            ),
            ".median",
        ),
        (
            changed_doc(
                &d,
                "zero",
                set(&[
                    ("min", 0.0),
                    ("median", 0.0),
                    ("mean", 0.0),
                    ("p99", 0.0),
                    ("p999", 0.0),
                    ("max", 0.0),
                    ("stddev", 0.0),
                    ("cv", 0.0),
                ]),
            ),
            ".median",
        ),
    ];
    let db = d.join("s.sqlite");
    let r = d.to_str().unwrap();
    for (doc, field) in &cases {
        let p = doc.to_str().unwrap();
        refused(&["show", p], field);
        refused(&["compare", good.to_str().unwrap(), p], field);
        refused(&["compare", p, good.to_str().unwrap(), "--fail-above", "5%"], field);
        refused(&["report", p, "--csv", "-"], field);
        refused(&["import", p, "--db", db.to_str().unwrap()], field);
        refused(&["baseline", "save", "b", p, "--results", r], field);
        assert!(!d.join("baselines").join("b.json").exists(), "{p}: a baseline was saved");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_baseline_whose_statistics_overflow_is_refused_not_written_as_null() {
    let d = tempdir("overflow");
    let out = tiny_rounds(&d, "2", &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = common::only_doc(&d);
    let docs: Vec<PathBuf> = ["big-a", "big-b"]
        .iter()
        .map(|id| {
            let mut v = run.clone();
            v["id"] = serde_json::json!(id);
            for s in summaries(&mut v) {
                for k in ["min", "median", "mean", "p99", "p999", "max"] {
                    s[k] = serde_json::json!(1.7e308);
                }
                for k in ["stddev", "cv"] {
                    s[k] = serde_json::json!(0.0);
                }
            }
            for r in v["results"].as_array_mut().unwrap() {
                for m in r["metrics"].as_array_mut().unwrap() {
                    m.as_object_mut().unwrap().remove("estimate");
                    for round in m["samples"].as_array_mut().into_iter().flatten() {
                        round.as_array_mut().unwrap().iter_mut().for_each(|x| *x = serde_json::json!(1.7e308));
                    }
                }
            }
            let p = d.join(format!("{id}.doc"));
            std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
            p
        })
        .collect();
    // Each document on its own is finite, and shown.
    let shown = oscycles(&["show", docs[0].to_str().unwrap()]);
    assert!(shown.status.success(), "{}", String::from_utf8_lossy(&shown.stderr));
    let out = refused(
        &["baseline", "save", "big", docs[0].to_str().unwrap(), docs[1].to_str().unwrap(), "--results", d.to_str().unwrap()],
        "nothing was saved",
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("which no measurement gives"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!d.join("baselines").join("big.json").exists(), "the baseline was written");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_documents_one_command_reads_are_bounded_in_total() {
    let d = tempdir("total-bound");
    // 50,000 results a document (n/a, no metrics: small on disk), five of them.
    let docs: Vec<PathBuf> = (0..5)
        .map(|k| {
            changed_doc(&d, &format!("many-{k}"), |v| {
                let mut one = v["results"][0].clone();
                one["status"] = serde_json::json!("not_applicable");
                one["reason"] = serde_json::json!("test");
                one["metrics"] = serde_json::json!([]);
                one["details"] = serde_json::json!({});
                one["placement"] = serde_json::Value::Null;
                v["results"] = serde_json::Value::Array(vec![one; 50_000]);
            })
        })
        .collect();
    let one = oscycles(&["report", docs[0].to_str().unwrap(), "--csv", "-"]);
    assert!(one.status.success(), "one such document is read: {}", String::from_utf8_lossy(&one.stderr));
    let mut args = vec!["report"];
    args.extend(docs.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--csv", "-"]);
    refused(&args, "the most one command reads");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_fifo_given_as_a_document_is_refused_at_once() {
    let d = tempdir("fifo-doc");
    let fifo = d.join("run.json");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let good = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json");
    let f = fifo.to_str().unwrap();
    let db = d.join("s.sqlite");
    for args in
        [vec!["show", f], vec!["import", f, "--db", db.to_str().unwrap()], vec!["compare", good, f], vec!["report", f, "--csv", "-"]]
    {
        let child = Command::new(bin()).args(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let out = ended_within(child, Duration::from_secs(10), &format!("{args:?}"));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn markdown_and_csv_exports_neutralise_html_and_formulas() {
    let d = tempdir("export-inject");
    let doc = changed_doc(&d, "inject", |v| {
        v["host"]["hostname"] = serde_json::json!("<img src=x onerror=alert(1)>");
        let rs = v["results"].as_array_mut().unwrap();
        for (r, why) in rs.iter_mut().zip([
            "<script>alert(1)</script>",
            "<svg onload=alert(1)>",
            "=HYPERLINK(\"http://x\")",
            "+1+cmd",
            "@SUM(A1)",
            "-2+3",
            "\t=1",
        ]) {
            r["status"] = serde_json::json!("failed");
            r["reason"] = serde_json::json!(why);
        }
    });
    let md = oscycles(&["report", doc.to_str().unwrap(), "--markdown", "-"]);
    assert!(md.status.success(), "{}", String::from_utf8_lossy(&md.stderr));
    let text = String::from_utf8_lossy(&md.stdout);
    for raw in ["<script", "<svg", "<img"] {
        assert!(!text.contains(raw), "{raw} passed through Markdown: {text}");
    }
    assert!(text.contains("&lt;script&gt;"), "{text}");
    let csv = oscycles(&["report", doc.to_str().unwrap(), "--csv", "-"]);
    assert!(csv.status.success(), "{}", String::from_utf8_lossy(&csv.stderr));
    let text = String::from_utf8_lossy(&csv.stdout);
    for formula in ["=HYPERLINK", "+1+cmd", "@SUM", "-2+3", "\t=1"] {
        assert!(text.contains(&format!(",\"'{formula}")), "{formula} not neutralised: {text}");
        assert!(!text.contains(&format!(",{formula}")) && !text.contains(&format!(",\"{formula}")), "{formula}: {text}");
    }
    // Numbers stay numbers, negative ones too.
    let neg = changed_doc(&d, "negative", |v| {
        let s = &mut v["results"][0]["metrics"][0];
        s["samples"] = serde_json::json!([[-3.0, -2.0, -1.0]]);
        s["summary"]["min"] = serde_json::json!(-3.0);
        s["summary"]["median"] = serde_json::json!(-2.0);
        s["summary"]["mean"] = serde_json::json!(-2.0);
        s["summary"]["p99"] = serde_json::json!(-1.0);
        s["summary"]["p999"] = serde_json::json!(-1.0);
        s["summary"]["max"] = serde_json::json!(-1.0);
        s.as_object_mut().unwrap().remove("estimate");
    });
    let csv = oscycles(&["report", neg.to_str().unwrap(), "--csv", "-"]);
    let text = String::from_utf8_lossy(&csv.stdout);
    assert!(text.contains(",min,-3\n") && !text.contains("'-"), "{}{text}", String::from_utf8_lossy(&csv.stderr));
    let _ = std::fs::remove_dir_all(&d);
}
