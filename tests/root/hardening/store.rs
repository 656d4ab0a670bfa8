//! The store of runs: what it refuses, what it waits for, what it never prints (items 12, 16-19).

use super::*;

#[test]
fn a_fifo_or_a_device_as_the_store_is_refused_at_once() {
    let d = tempdir("fifo-db");
    let fifo = d.join("store.sqlite");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let doc = doc_with_id(&d, "a-fifo-test-run");
    let r = d.to_str().unwrap();
    for db in [fifo.to_str().unwrap(), "/dev/null"] {
        for args in [
            vec!["run", "--results", r, "--suite", "syscall", "--bench", "syscall.getpid", "--db", db],
            vec!["runs", "--db", db],
            vec!["import", doc.to_str().unwrap(), "--db", db],
            vec!["report", "--by", "host", "--db", db],
        ] {
            let t = Instant::now();
            let child = Command::new(bin()).args(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
            let out = ended_within(child, Duration::from_secs(5), &format!("{args:?}"));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(t.elapsed() < Duration::from_secs(1), "{args:?} took {:?}", t.elapsed());
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains("not a regular file"), "{args:?}: {err}");
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_store_that_cannot_take_the_run_refuses_it_before_the_first_case() {
    let d = tempdir("store-refuses");
    let results = d.join("results");
    // A server where nothing listens.
    let t = Instant::now();
    let out = tiny(&results, &["--db", "postgres://u@127.0.0.1:1/db"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was measured"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let docs =
        std::fs::read_dir(&results).map(|r| r.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "json")).count()).unwrap_or(0);
    assert_eq!(docs, 0, "a run document was written for a refused run");
    // An SQLite store whose pages after the first are garbage: its header and schema read, its tables do not.
    let db = d.join("corrupt.sqlite");
    let imported = oscycles(&["import", concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json"), "--db", db.to_str().unwrap()]);
    assert!(imported.status.success(), "{}", String::from_utf8_lossy(&imported.stderr));
    let mut bytes = std::fs::read(&db).unwrap();
    let page = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
    assert!(bytes.len() > 2 * page, "the store has pages beyond its schema");
    bytes[page..].iter_mut().enumerate().for_each(|(i, b)| *b = (i * 7 + 13) as u8);
    std::fs::write(&db, bytes).unwrap();
    let out = tiny(&results, &["--db", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn listing_runs_needs_no_write() {
    common::needs_root("it mounts a small tmpfs to fill");
    let d = tempdir("full-disk");
    let st = Command::new("mount").args(["-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs"]).arg(&d).status().unwrap();
    assert!(st.success());
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
            let _ = std::fs::remove_dir(&self.0);
        }
    }
    let _mounted = Unmount(d.clone());
    // A run of this host marked running whose process is gone: opening the store would mark it killed (a write).
    let host = String::from_utf8(Command::new("hostname").output().unwrap().stdout).unwrap().trim().to_string();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap().trim().to_string();
    let doc = changed_doc(Path::new("/tmp"), &format!("oscycles-test-dead-run-{}", std::process::id()), |v| {
        v["status"] = serde_json::json!("running");
        v["host"]["hostname"] = serde_json::json!(host);
        v["owner"] = serde_json::json!({"pid": dead_pid(), "boot_id": boot, "start_ticks": 1});
    });
    let db = d.join("s.sqlite");
    let imported = oscycles(&["import", doc.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    std::fs::remove_file(&doc).unwrap();
    assert!(imported.status.success(), "{}", String::from_utf8_lossy(&imported.stderr));
    // The file system full.
    let _ =
        Command::new("dd").args(["if=/dev/zero", "bs=4k"]).arg(format!("of={}", d.join("fill").display())).stderr(Stdio::null()).status();
    let out = oscycles(&["runs", "--db", db.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("oscycles-test-dead-run"), "{}", String::from_utf8_lossy(&out.stdout));
}

/// A server that accepts connections and never answers, for as long as the test holds it.
fn silent_server() -> (std::net::TcpListener, u16) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

#[test]
fn a_postgres_server_that_never_answers_is_given_up_and_signals_are_honoured() {
    let (_listener, port) = silent_server();
    let url = format!("postgres://u@127.0.0.1:{port}/db");
    let runs = Command::new(bin()).args(["runs", "--db", &url]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let out = ended_within(runs, Duration::from_secs(30), "runs, waiting for the server,");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("did not answer within 10 s"), "{err}");
    // A run waiting for it ends at SIGTERM.
    let d = tempdir("pg-silent");
    let mut run = Command::new(bin())
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--quiet", "--db", &url, "--results", d.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: kill takes no pointers; the pid is the child's, not yet reaped.
    unsafe { libc::kill(run.id() as i32, libc::SIGTERM) };
    let t = Instant::now();
    while run.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let waited = t.elapsed();
    if run.try_wait().unwrap().is_none() {
        let _ = run.kill();
    }
    let out = run.wait_with_output().unwrap();
    assert!(waited < Duration::from_secs(5), "run ignored SIGTERM while waiting for the server: {}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&d);
}

/// A fresh directory with an SQLite store holding the fixture run: (the directory, the store).
fn fixture_store(name: &str) -> (PathBuf, PathBuf) {
    let d = tempdir(name);
    let db = d.join("s.sqlite");
    let doc = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json");
    assert!(oscycles(&["import", doc, "--db", db.to_str().unwrap()]).status.success());
    (d, db)
}

#[test]
fn stored_rows_pass_the_document_check_and_ci_exports_hold_no_null() {
    let (d, db) = fixture_store("rows-checked");
    let bench = {
        let c = rusqlite::Connection::open(&db).unwrap();
        let b: String =
            c.query_row("SELECT benchmark FROM results WHERE status = 'ok' AND metric IS NOT NULL LIMIT 1", [], |r| r.get(0)).unwrap();
        c.execute("UPDATE results SET median = 1e999 WHERE benchmark = ?1", [&b]).unwrap();
        b
    };
    let out = oscycles(&["report", "--history", "--bench", &bench, "--db", db.to_str().unwrap()]);
    let (text, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("inf") && !text.contains("NaN"), "{text}");
    assert_ne!(out.status.code(), Some(0), "{text}");
    assert!(err.contains("median") && err.contains("finite"), "{err}");
    rusqlite::Connection::open(&db).unwrap().execute("UPDATE results SET median = NULL WHERE benchmark = ?1", [&bench]).unwrap();
    let out = oscycles(&["report", "--history", "--bench", &bench, "--db", db.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("NaN"), "{}", String::from_utf8_lossy(&out.stdout));
    assert_ne!(out.status.code(), Some(0));
    // A document the check accepts whose cost's median is 0 (its samples are
    // differences, some below 0): no ratio, interval or value that is not a number.
    let zero = |name: &str, median: f64| {
        changed_doc(&d, name, move |v| {
            let m = &mut v["results"][0]["metrics"][0];
            m["samples"] = serde_json::json!([[-1.0, median, median + 1.0]]);
            for k in ["min", "median", "mean", "p99", "p999", "max"] {
                m["summary"][k] = serde_json::json!(match k {
                    "min" => -1.0,
                    "max" | "p99" | "p999" => median + 1.0,
                    _ => median,
                });
            }
            m["estimate"] = serde_json::json!({"median": median, "interval": {"lo": -1.0, "hi": median + 1.0}, "rounds": 1, "samples": 3,
                "between_round_cv": 0.0, "within_round_cv": 1.0});
        })
    };
    let (a, b) = (zero("zero-a", 2.0), zero("zero-b", 0.0));
    for format in ["--bmf", "--github-benchmark"] {
        for docs in [vec![b.to_str().unwrap()], vec![a.to_str().unwrap(), b.to_str().unwrap()]] {
            let mut args = vec!["report"];
            args.extend(docs.iter());
            args.extend([format, "-"]);
            let out = oscycles(&args);
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
            assert!(!text.contains("null") && !text.contains("NaN") && !text.contains("inf"), "{args:?}: {text}");
            serde_json::from_str::<serde_json::Value>(&text).unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_hostname_forges_no_line_and_a_row_answers_only_for_its_own_run() {
    let d = tempdir("forged-lines");
    let db = d.join("s.sqlite");
    let evil = changed_doc(&d, "evil-host", |v| {
        v["host"]["hostname"] = serde_json::json!("evil\nFORGED 20991231 complete");
        v["label"] = serde_json::json!("lab\r\nFORGED label");
    });
    let other = changed_doc(&d, "other-run", |_| {});
    // A document's one-line field holding lines is refused where it enters (issue 58, item 10)...
    refused(&["import", evil.to_str().unwrap(), "--db", db.to_str().unwrap()], "host.hostname");
    // ...and a store a user crafted is shown on its lines all the same.
    let plain = changed_doc(&d, "evil-host", |_| {});
    assert!(oscycles(&["import", plain.to_str().unwrap(), other.to_str().unwrap(), "--db", db.to_str().unwrap()]).status.success());
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE runs SET hostname = 'evil
FORGED 20991231 complete' WHERE id = 'evil-host'",
        [],
    )
    .unwrap();
    drop(c);
    let runs = oscycles(&["runs", "--db", db.to_str().unwrap()]);
    let listed = String::from_utf8_lossy(&runs.stdout);
    assert!(listed.lines().all(|l| !l.starts_with("FORGED")), "{listed}");
    assert!(listed.contains("evil\\u{a}FORGED"), "{listed}");
    let by = oscycles(&["report", "--by", "host", "--db", db.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&by.stdout);
    assert!(by.status.success(), "{}", String::from_utf8_lossy(&by.stderr));
    assert!(text.lines().all(|l| !l.trim_start().starts_with("FORGED")), "{text}");
    // The row of one run answering with another's document is refused.
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute("UPDATE runs SET document = (SELECT document FROM runs WHERE id = 'evil-host') WHERE id = 'other-run'", []).unwrap();
    drop(c);
    let out = oscycles(&["report", "other-run", "--csv", "-", "--db", db.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("holds the document of run 'evil-host'"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_locked_store_is_waited_for_not_called_no_store() {
    let (d, db) = fixture_store("locked-store");
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let path = db.clone();
    let holder = std::thread::spawn(move || {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("BEGIN EXCLUSIVE").unwrap();
        locked_tx.send(()).unwrap();
        std::thread::sleep(Duration::from_secs(8));
        c.execute_batch("COMMIT").unwrap();
    });
    locked_rx.recv().unwrap();
    let t = Instant::now();
    let out = oscycles(&["runs", "--db", db.to_str().unwrap()]);
    holder.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "after {:?}: {err}", t.elapsed());
    assert!(t.elapsed() >= Duration::from_secs(7), "it waited for the lock: {:?}", t.elapsed());
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 runs in"), "{}", String::from_utf8_lossy(&out.stdout));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_password_in_a_postgres_url_is_never_printed() {
    for url in [
        "postgres://u@127.0.0.1:1/db?password=sekret1",
        "postgresql://u@127.0.0.1:1/db?sslmode=disable&PASSWORD=sekret1&application_name=x",
        "postgres://u:sekret1@127.0.0.1:1/db",
        // Percent-encoded, the key or the password (issue 58, item 11).
        "postgres://u@127.0.0.1:1/db?%70assword=sekret1",
        "postgres://u@127.0.0.1:1/db?pass%77ord=sekret1",
        "postgres://u:sek%72et1@127.0.0.1:1/db",
    ] {
        let out = oscycles(&["runs", "--db", url]);
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(!out.status.success(), "{all}");
        assert!(!all.contains("sekret1") && !all.contains("sek%72"), "{url}: {all}");
        assert!(all.contains("***"), "{url}: {all}");
    }
}
