//! A run's own end: exit codes, timeouts, signals, a run that measured nothing, a full disk, interleaved comparisons (items 7, 8, 20).

use super::*;

#[test]
fn inputs_that_cannot_work_are_refused_with_exit_code_2() {
    let d = tempdir("refused-inputs");
    let r = d.to_str().unwrap();
    let mem_kib: u64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap();
    let twice = format!("{}M", mem_kib * 2 / 1024);
    refused(&["run", "--results", r, "--suite", "stream", "--mem-bytes", &twice], "--mem-bytes");
    refused(&["runs", "--since", "notadate"], "'notadate' is not a date");
    refused(&["runs", "--since", "2026-13-01"], "is not a date");
    refused(&["run", "--results", r, "--kernel", "/nonexistent"], "--kernel /nonexistent: no such file");
    // QEMU is installed by scripts/setup (scripts/programs).
    refused(&["run", "--results", r, "--env", "qemu-tcg", "--machine", "nosuch"], "--machine \"nosuch\"");
    refused(&["run", "--results", r, "--cpus", "0,0"], "a CPU is named twice");
    refused(&["run", "--results", r, "--suite", "lmbench", "--where", "procs"], "is not KEY=VALUE");
    refused(&["run", "--results", r, "--suite", "lmbench", "--where", "nosuch=1"], "no case chosen has that parameter");
    refused(
        &["run", "--results", r, "--suite", "lmbench", "--bench", "ctx.ring", "--where", "procs=99"],
        "--where procs=99: no case has that value; the values there are: procs (2, 3, 4, 10)",
    );
    let garbage = d.join("garbage.sqlite");
    std::fs::write(&garbage, vec![b'x'; 4096]).unwrap();
    refused(&["run", "--results", r, "--db", garbage.to_str().unwrap()], "--db");
    refused(&["run", "--results", r, "--db", r], "is a directory");
    refused(&["runs", "--db", garbage.to_str().unwrap()], "--db");
    if Path::new("/dev/shm").is_dir() {
        refused(&["run", "--results", r, "--suite", "blk", "--scratch", "/dev/shm"], "is tmpfs");
    }
    // import is all or nothing.
    let good = doc_with_id(&d, "a-good-run");
    let bad = d.join("bad.json");
    std::fs::write(&bad, "{\"schema\": \"oscycles.run\"").unwrap();
    let db = d.join("store.sqlite");
    refused(&["import", good.to_str().unwrap(), bad.to_str().unwrap(), "--db", db.to_str().unwrap()], "nothing was imported");
    let listed = oscycles(&["runs", "--db", db.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&listed.stdout).contains("a-good-run"), "the good document was stored");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn timeout_stops_cpu_bound_cases() {
    let d = tempdir("timeouts");
    let r = d.to_str().unwrap();
    for extra in [vec!["--iterations", "1000000000000"], vec!["--batches", "100000", "--batch-ms", "59999"]] {
        let t = Instant::now();
        let mut args = vec!["run", "--suite", "syscall", "--bench", "syscall.getpid", "--timeout", "2", "--quiet", "--results", r];
        args.extend(extra.iter());
        let out = oscycles(&args);
        // Its only case failed: the run measured nothing (issue 30, item 9).
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(t.elapsed() < Duration::from_secs(5), "{extra:?}: {:?}", t.elapsed());
        let doc = common::only_doc(&d);
        let res = &doc["results"][0];
        assert_eq!(res["status"], "failed", "{res}");
        assert!(res["reason"].as_str().unwrap().contains("timed out"), "{res}");
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_sigkilled_run_leaves_no_process_and_its_files_go_with_the_next_run() {
    let qemu = Command::new("qemu-system-x86_64").arg("--version").output().is_ok_and(|o| o.status.success());
    let env = if qemu { "qemu-tcg" } else { "container" };
    // Up once the environment is: a process other than oscycles mentions the scratch directory.
    let what = format!("{env} child");
    let how = common::StartStop {
        what: &what,
        up: &|ps, pid| ps.iter().filter(|p| !p.starts_with(&format!("{pid}:"))).count() > 0,
        poll: Duration::from_millis(50),
        settle: Duration::from_millis(500),
        stop: common::Stop::Kill,
        left: &processes_mentioning,
    };
    let args = ["run", "--suite", "syscall", "--env", env, "--quiet", "--init-timeout", "120"];
    let d = common::start_stop_nothing_left(&bin(), &args, "sigkill", &how);
    let (scratch, results) = (d.join("scratch"), d.join("results"));
    assert!(std::fs::read_dir(&scratch).unwrap().count() > 0, "the killed run's private directory is still there");
    // The next command that opens the store marks the run killed.
    let db = results.join("oscycles.sqlite");
    let runs = oscycles(&["runs", "--db", db.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&runs.stdout).contains("killed"), "{}", String::from_utf8_lossy(&runs.stdout));
    // The next run removes what the dead one left.
    let out = oscycles(
        &["run", "--suite", "syscall", "--bench", "syscall.getpid", "--batches", "2", "--batch-ms", "0.05", "--quiet"]
            .iter()
            .copied()
            .chain(["--scratch", scratch.to_str().unwrap(), "--results", results.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("left by a run that ended without cleaning up"));
    let leftovers: Vec<_> = std::fs::read_dir(&scratch).unwrap().flatten().map(|e| e.path()).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_header_counts_every_case_it_will_save() {
    let d = tempdir("header-count");
    let out = Command::new(bin())
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid,syscall.getppid", "--batches", "2", "--batch-ms", "0.05"])
        .args(["--isolation", "none,pinned", "--results", d.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("measuring 4 cases"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("(4 of 4 cases"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_run_that_measured_nothing_fails_and_says_why() {
    let d = tempdir("measured-nothing");
    let out = tiny(&d, &["--iterations", "1000000000000", "--timeout", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no case measured successfully"), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = common::only_doc(&d);
    assert_eq!(doc["status"], "failed");
    let runs = oscycles(&["runs", "--db", d.join("oscycles.sqlite").to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&runs.stdout).contains("failed"), "{}", String::from_utf8_lossy(&runs.stdout));
    // A ring that cannot finish in time says so, not that it waited for a peer.
    std::fs::remove_file(only_json(&d)).unwrap();
    let out = Command::new(bin())
        .args(["run", "--suite", "lmbench", "--bench", "ctx.ring", "--iterations", "1000000000000", "--timeout", "3"])
        .args(["--rounds", "1", "--quiet", "--results", d.to_str().unwrap()])
        .output()
        .unwrap();
    let doc = common::only_doc(&d);
    for r in doc["results"].as_array().unwrap() {
        let why = r["reason"].as_str().unwrap_or_default();
        assert!(!why.contains("waiting for the peer"), "{r}");
        if r["status"] == "failed" {
            assert!(why.contains("timed out"), "{r}");
        }
    }
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn microvm_cases_without_kvm_access_are_not_applicable() {
    common::needs_root("it runs oscycles as a user it creates");
    let _alone = as_root_alone();
    let user = OtherUser::create();
    // The user's own results directory (their store goes beside it: in a
    // directory every user writes it needs the kernel's link protections).
    let d = tempdir("no-kvm");
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(&d, Some(user.uid), Some(user.uid)).unwrap();
    let out = Command::new("runuser")
        .args(["-u", &user.name, "--"])
        .arg(bin())
        .args(["run", "--suite", "microvm", "--bench", "microvm.cpuid", "--rounds", "1", "--quiet", "--results"])
        .arg(&d)
        .output()
        .unwrap();
    let doc = common::only_doc(&d);
    let kvm_open = Command::new("runuser").args(["-u", &user.name, "--", "sh", "-c", "exec 3<>/dev/kvm"]).status().unwrap().success();
    for r in doc["results"].as_array().unwrap() {
        if kvm_open {
            assert_ne!(r["status"], "not_applicable", "{r}");
        } else {
            assert_eq!(r["status"], "not_applicable", "{r}");
            assert!(r["reason"].as_str().unwrap().contains("/dev/kvm"), "{r}");
        }
    }
    if !kvm_open {
        // Every case n/a: the run measured nothing, so it fails (exit 1), the
        // n/a reasons still shown (issue 43, item 8; it used to exit 0).
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("/dev/kvm"), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// The run of issue 43's item 7: the syscall suite, one round, into `results`, its store in `db`.
fn syscall_run(results: &Path, db: &Path) -> Output {
    Command::new(bin())
        .args(["run", "--suite", "syscall", "--batches", "3", "--batch-ms", "0.05", "--rounds", "1", "--quiet", "--results"])
        .arg(results)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap()
}

#[test]
fn a_disk_that_fills_mid_run_ends_it_failed_with_the_reason() {
    common::needs_root("it mounts a small tmpfs to fill");
    // How large the whole document grows, measured on a disk with room.
    let roomy = tempdir("disk-roomy");
    let out = syscall_run(&roomy, &roomy.join("s.sqlite"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let full = std::fs::metadata(only_json(&roomy)).unwrap().len();
    // A disk as large as the finished document: the first saves fit, a
    // later one (the old document and the new side by side) does not.
    let disk = SmallDisk::mount("disk-full", full.div_ceil(4096) * 4096);
    let db = roomy.join("other.sqlite");
    let out = syscall_run(&disk.0, &db);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "stderr says why: {err}");
    let doc = common::only_doc(&disk.0);
    assert_eq!(doc["status"], "failed", "the document is not left running");
    assert!(doc["reason"].as_str().unwrap_or_default().contains("No space left on device"), "{}", doc["reason"]);
    let runs = oscycles(&["runs", "--db", db.to_str().unwrap()]);
    let listed = String::from_utf8_lossy(&runs.stdout);
    assert!(listed.contains("failed") && !listed.contains("running") && !listed.contains("killed"), "{listed}");
    let shown = oscycles(&["show", only_json(&disk.0).to_str().unwrap()]);
    assert!(shown.status.success(), "what was saved reads: {}", String::from_utf8_lossy(&shown.stderr));
    drop(disk);
    let _ = std::fs::remove_dir_all(&roomy);
}

#[test]
fn a_run_where_every_case_is_not_applicable_fails_with_the_reasons() {
    // A guest whose results fail the document check: its one case n/a.
    let d = tempdir("all-na");
    let out = tiny(&d, &["--env", "container", "--guest-mode", "bad-numbers"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no case measured successfully") && err.contains("document check"), "the reasons: {err}");
    let doc = common::only_doc(&d);
    assert_eq!(doc["status"], "failed");
    let why = doc["reason"].as_str().unwrap();
    assert!(why.contains("1 not applicable") && why.contains("document check"), "{why}");
    // Some measured, some n/a: as before, complete and exit 0.
    std::fs::remove_file(only_json(&d)).unwrap();
    let out = tiny(&d, &["--env", "native,container", "--guest-mode", "bad-numbers"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = common::only_doc(&d);
    assert_eq!(doc["status"], "complete");
    assert!(doc.get("reason").is_none(), "{doc}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `compare --interleave 5` of the getpid case, into `results`, with `a` as --a.
fn interleave(results: &Path, a: &str) -> Command {
    let mut c = Command::new(bin());
    c.args(["compare", "--interleave", "5", "--a", a, "--results", results.to_str().unwrap()]);
    c
}

fn interleaved_dirs(results: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(results)
        .map(|r| r.flatten().map(|e| e.path()).filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("interleaved-")).collect())
        .unwrap_or_default()
}

#[test]
fn compare_interleave_refuses_in_one_sentence_exits_130_and_numbers_its_rounds() {
    let d = tempdir("interleave");
    let tiny_a = "--suite syscall --bench syscall.getpid --batches 2 --batch-ms 0.05";
    for a in ["--quiet", "--suite no-such-suite"] {
        let out = interleave(&d, a).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a}: {err}");
        let said: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty() && !l.starts_with("round ")).collect();
        assert_eq!(said.len(), 1, "{a}: one sentence, not a usage: {err}");
        assert!(interleaved_dirs(&d).is_empty(), "{a}: a refused attempt left {:?}", interleaved_dirs(&d));
    }
    // Interrupted: 130, as its help says.
    let mut child = interleave(&d, tiny_a).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: kill takes no pointers; the pid is the child's, not yet reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(130), "{st:?}");
    for p in interleaved_dirs(&d) {
        std::fs::remove_dir_all(p).unwrap();
    }
    // The pooled runs number their rounds 0..5.
    let out = interleave(&d, tiny_a).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dir = interleaved_dirs(&d).pop().unwrap();
    for side in ["A", "B"] {
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{side}.json"))).unwrap()).unwrap();
        let rounds: Vec<u64> = doc["settings"]["round_log"].as_array().unwrap().iter().map(|r| r["round"].as_u64().unwrap()).collect();
        assert_eq!(rounds, vec![0, 1, 2, 3, 4], "{side}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_killed_container_round_leaves_nothing_the_next_run_does_not_remove() {
    // Issue 58, item 8: the container's results directory outlived a killed run.
    common::needs_root("a container of its own namespaces, killed");
    let t = tempdir("container-kill");
    let results = t.join("results");
    let entries = || -> Vec<String> {
        std::fs::read_dir(&t).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n != "results").collect()
    };
    let mut run = Command::new(bin())
        .env("TMPDIR", &t)
        .args(["run", "--suite", "syscall", "--env", "container", "--quiet", "--results"])
        .arg(&results)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    // The run's private directory and the container's.
    while entries().iter().filter(|n| n.starts_with("oscycles-")).count() < 2 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(entries().len() >= 2, "the container never started: {:?}", entries());
    std::thread::sleep(Duration::from_millis(300));
    run.kill().unwrap();
    run.wait().unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let left = entries();
    assert!(left.iter().all(|n| n.starts_with("oscycles-run-")), "only locked run directories, which the reaper knows: {left:?}");
    let out = Command::new(bin())
        .env("TMPDIR", &t)
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--batches", "2", "--batch-ms", "0.05", "--quiet", "--results"])
        .arg(&results)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(entries(), Vec::<String>::new(), "the next run removed what the killed one left");
    let _ = std::fs::remove_dir_all(&t);
}
