//! Children of a run: guests and sandboxes, their results and their processes (items 4, 5, 9, 10).

use super::*;

#[test]
fn the_gvisor_reaper_kills_no_process_of_another_user_named_like_runsc() {
    common::needs_root("it runs a process as another user");
    let runsc = std::env::split_paths(&std::env::var_os("PATH").unwrap()).any(|d| d.join("runsc").is_file());
    assert!(runsc, "this test needs runsc on PATH (scripts/setup installs it)");
    let _alone = as_root_alone();
    let user = OtherUser::create();
    let scratch = tempdir("reaper");
    std::fs::set_permissions(&scratch, std::fs::Permissions::from_mode(0o1777)).unwrap();
    // What the old reaper took for an orphaned sandbox: argv[0] runsc-*, a --root in a run directory gone.
    let root_arg = format!("--root={}", scratch.join("oscycles-run-gone/x.state").display());
    let mut theirs = Command::new("runuser")
        .args(["-u", &user.name, "--", "bash", "-c", "exec -a runsc-sandbox bash -c 'read -r -t 600 x' \"$0\""])
        .arg(&root_arg)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let pid = loop {
        let found = processes_mentioning(&root_arg).iter().find(|p| p.contains("runsc-sandbox")).cloned();
        if let Some(line) = found {
            break line.split(':').next().unwrap().parse::<i32>().unwrap();
        }
        assert!(t.elapsed() < Duration::from_secs(10), "the other user's process did not start");
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = tiny(&scratch.join("results"), &["--env", "gvisor", "--gvisor-platform", "ptrace", "--scratch", scratch.to_str().unwrap()]);
    // Alive: there, and no zombie its parent has yet to reap.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let alive = stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z'));
    // The process this test started, ended by its pid.
    // SAFETY: kill takes no pointers.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let _ = theirs.kill();
    let _ = theirs.wait();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(alive, "root's gvisor run killed another user's process named like runsc");
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn results_a_guest_returns_pass_the_document_check_and_stay_within_the_plan() {
    for (mode, status) in [("unplanned", "ok"), ("bad-numbers", "not_applicable")] {
        let d = tempdir(&format!("guest-{mode}"));
        let out = tiny(&d, &["--env", "container", "--guest-mode", mode]);
        let err = String::from_utf8_lossy(&out.stderr);
        let doc = common::only_doc(&d);
        let results = doc["results"].as_array().unwrap();
        assert_eq!(results.len(), 1, "{mode}: one case planned, {} saved: {err}", results.len());
        assert_eq!(results[0]["benchmark"], "syscall.getpid");
        assert_eq!(results[0]["status"], status, "{mode}: {}", results[0]);
        if mode == "bad-numbers" {
            assert!(results[0]["reason"].as_str().unwrap().contains("document check"), "{}", results[0]);
        } else {
            assert!(err.contains("not in its plan"), "{err}");
        }
        // What was saved, the reading commands read.
        let shown = oscycles(&["show", only_json(&d).to_str().unwrap()]);
        assert!(shown.status.success(), "{mode}: {}", String::from_utf8_lossy(&shown.stderr));
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// A directory for a uml run and its scratch directory; the test fails where linux.uml is missing.
fn uml_dirs(name: &str) -> (PathBuf, PathBuf) {
    let uml = std::env::split_paths(&std::env::var_os("PATH").unwrap()).any(|d| d.join("linux.uml").is_file());
    assert!(uml, "this test needs linux.uml on PATH (scripts/setup installs user-mode-linux)");
    let d = tempdir(name);
    let scratch = d.join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    (d, scratch)
}

/// A quiet one-round uml run of the syscall suite with `args`, its scratch and results in `d`.
fn uml_run(d: &Path, scratch: &Path, args: &[&str]) -> std::process::Child {
    Command::new(bin())
        .args(["run", "--suite", "syscall", "--env", "uml", "--rounds", "1", "--quiet"])
        .args(args)
        .args(["--scratch", scratch.to_str().unwrap(), "--results", d.join("results").to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_sigkilled_uml_run_leaves_none_of_its_helpers() {
    let (d, scratch) = uml_dirs("uml-sigkill");
    let mut child = uml_run(&d, &scratch, &["--batch-ms", "50", "--init-timeout", "120"]);
    // UML's kernel forks its helpers while it boots: wait for more than one process of it.
    let needle = format!("uml_dir={}", scratch.display());
    let t = Instant::now();
    while processes_mentioning(&needle).len() < 3 {
        assert!(t.elapsed() < Duration::from_secs(120), "UML did not start: {:?}", processes_mentioning(&needle));
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = processes_mentioning(&needle);
    child.kill().unwrap();
    child.wait().unwrap();
    let t = Instant::now();
    let mut left = processes_mentioning(&needle);
    while !left.is_empty() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(100));
        left = processes_mentioning(&needle);
    }
    // What a failed test leaves is killed by pid, so that it costs no other test.
    for p in &left {
        if let Ok(pid) = p.split(':').next().unwrap().parse::<i32>() {
            // SAFETY: kill takes no pointers.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    assert!(left.is_empty(), "UML processes live on 5 s after SIGKILL of oscycles (of {before:?}): {left:?}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_hanging_uml_guest_ends_at_its_timeout_and_at_sigterm_leaving_nothing() {
    let (d, scratch) = uml_dirs("uml-hang");
    let needle = format!("uml_dir={}", scratch.display());
    let start = |timeout: &str| {
        uml_run(&d, &scratch, &["--bench", "syscall.getpid", "--guest-mode", "hang", "--env-timeout", timeout, "--init-timeout", timeout])
    };
    let ended = |child, within| ended_within(child, within, "oscycles run --env uml");
    // Its timeout ends it: the case n/a, the run failed (it measured nothing).
    let out = ended(start("5"), Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    std::thread::sleep(Duration::from_secs(1));
    assert!(processes_mentioning(&needle).is_empty(), "{:?}", processes_mentioning(&needle));
    // SIGTERM while it waits for the guest ends it at once.
    let child = start("120");
    let t = Instant::now();
    while processes_mentioning(&needle).len() < 2 {
        assert!(t.elapsed() < Duration::from_secs(60), "UML did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: kill takes no pointers; the pid is the child's, not yet reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = ended(child, Duration::from_secs(15));
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    std::thread::sleep(Duration::from_secs(1));
    assert!(processes_mentioning(&needle).is_empty(), "{:?}", processes_mentioning(&needle));
    let _ = std::fs::remove_dir_all(&d);
}
