//! Files another user planted (links, a store row's path, a journal): never followed, written or acted on (issue 43 items 1, 2).

use super::*;

/// How many pids after the last one the planted names cover (oscycles is
/// started right after planting).
const PLANTED_PIDS: u32 = 200;

/// What a directory holds, by name: (file type, mode, uid, content or link target).
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            let what = if m.file_type().is_symlink() {
                format!("link -> {}", std::fs::read_link(e.path()).unwrap().display())
            } else if m.is_file() {
                format!("file {:o} uid {} {:?}", m.mode(), m.uid(), std::fs::read(e.path()).unwrap())
            } else {
                format!("other {:o} uid {}", m.mode(), m.uid())
            };
            (e.file_name().to_string_lossy().into_owned(), what)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn planted_files_and_symlinks_are_never_followed_written_or_executed() {
    common::needs_root("it creates a user and runs oscycles as root against it");
    let _alone = as_root_alone();
    let _unprotected = Unprotected::set();
    let user = OtherUser::create();
    let shared = tempdir("planted");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    // A root file the attacker wants truncated, and a marker the attacker's
    // script would write if root ran it.
    let private = tempdir("planted-root");
    let precious = private.join("precious");
    std::fs::write(&precious, b"root's data").unwrap();
    let marker = shared.join("ran-as-root");
    let s = shared.display();
    // Every name the old scheme used, for the next pids: exec helpers that
    // are world-writable scripts, and symlinks to the root file for probes,
    // scratch files, fifos, initramfs and console logs.
    let next: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid").ok().and_then(|t| t.trim().parse().ok()).unwrap_or(1000);
    // Planted by this process (no child may take the pids) and given to the
    // other user: the same as if that user had made them.
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o755)).unwrap();
    let give = |p: &Path| std::os::unix::fs::lchown(p, Some(user.uid), Some(user.uid)).unwrap();
    let link = |name: String| {
        let p = shared.join(name);
        std::os::unix::fs::symlink(&precious, &p).unwrap();
        give(&p);
    };
    for pid in next..next + PLANTED_PIDS {
        for n in 0..4 {
            let helper = shared.join(format!("oscycles-exit7-{pid}-{n}"));
            std::fs::write(&helper, format!("#!/bin/sh\nid > {}\n", marker.display())).unwrap();
            std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o777)).unwrap();
            give(&helper);
            for name in ["blk", "file-rd", "mmap-rd", "pagefault", "qemu-tcg", "load-io", "load-build", "env-results"] {
                link(format!("oscycles-{name}-{pid}-{n}"));
            }
            link(format!("oscycles-qemu-tcg-{pid}-{n}.cpio"));
            link(format!("oscycles-qemu-tcg-{pid}-{n}.console.log"));
            link(format!("oscycles-fifo-{pid}-{n}"));
        }
        link(format!(".oscycles-probe-{pid}"));
    }
    let planted = snapshot(&shared);
    assert!(planted.len() > 1000, "planted {} names", planted.len());

    // Other tests' processes take pids while the names are planted: start
    // the count again just below them (root may), so that oscycles gets one
    // of the planted pids whatever ran meanwhile.
    let _ = std::fs::write("/proc/sys/kernel/ns_last_pid", format!("{}", next.saturating_sub(1)));
    // The store in root's own directory: in a directory every user writes,
    // with fs.protected_symlinks off, it is refused (SQLite makes its side
    // files there by name; the store tests check that).
    let store_dir = tempdir("planted-store");
    let store = store_dir.join("results.sqlite");
    let run = Command::new(bin())
        .args([
            "run",
            "--suite",
            "syscall,lmbench,l4-ipc,blk",
            "--bench",
            "syscall.getpid,proc.exec,proc.fork,bw.file-rd,bw.mmap-rd,pagefault.file,ipc.fifo,blk.read",
            "--rounds",
            "1",
            "--batches",
            "2",
            "--batch-ms",
            "0.2",
            "--scale",
            "test",
            "--point-ms",
            "20",
            "--quiet",
        ])
        .arg("--scratch")
        .arg(&shared)
        .arg("--results")
        .arg(&shared)
        .arg("--db")
        .arg(&store)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!((next..next + PLANTED_PIDS).contains(&run.id()), "oscycles got pid {}, beyond the planted names", run.id());
    // Meanwhile the attacker watches the shared directory and tries to plant
    // inside anything new oscycles makes there.
    let watcher = {
        use std::os::unix::process::CommandExt;
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "while :; do for d in {s}/oscycles-run-*; do [ -d \"$d\" ] && ln -s {} \"$d/lock\" 2>/dev/null && echo \"$d\" >> {s}/entered; done; sleep 0.01; done",
                precious.display()
            ))
            .uid(user.uid)
            .gid(user.uid)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let out = run.wait_with_output().unwrap();
    let mut watcher = watcher;
    let _ = watcher.kill();
    let _ = watcher.wait();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let now = std::fs::read(&precious).unwrap();
    assert!(now == b"root's data", "the root file was written through a planted symlink: now {} bytes", now.len());
    assert!(!marker.exists(), "root ran the attacker's script");
    assert!(!shared.join("entered").exists(), "the attacker planted inside oscycles' private directory");
    // Every planted name is as it was; what oscycles added is its run
    // document and store, nothing else (its private directory is gone).
    let after = snapshot(&shared);
    let added: Vec<&(String, String)> = after.iter().filter(|e| !planted.contains(e)).collect();
    assert_eq!(planted.iter().filter(|e| !after.contains(e)).count(), 0, "a planted name changed");
    for (name, what) in &added {
        assert!(name.ends_with(".json") || name.starts_with("results.sqlite"), "unexpected {name}: {what}");
        assert!(what.contains("uid 0"), "{name} belongs to root: {what}");
    }
    // The lmbench exec row timed oscycles' own helper.
    let doc = common::only_doc(&shared);
    let exec = doc["results"].as_array().unwrap().iter().find(|r| r["benchmark"] == "proc.exec").unwrap();
    assert_eq!(exec["status"], "ok", "{exec}");
    let _ = std::fs::remove_dir_all(&shared);
    let _ = std::fs::remove_dir_all(&store_dir);
    let _ = std::fs::remove_dir_all(&private);
}

#[test]
fn an_isolation_journal_another_user_could_write_is_never_acted_on() {
    common::needs_root("it plants journals in /run/oscycles as another user");
    let _alone = as_root_alone();
    let user = OtherUser::create();
    let d = tempdir("journal");
    let precious = d.join("precious");
    std::fs::write(&precious, b"root's data").unwrap();
    let mut jd = JournalDir::take();
    let cases: [(u32, u32, &str); 3] = [
        // The directory as an old oscycles made it under umask 000, and the other user's journal in it.
        (0o777, user.uid, "writable by group or others"),
        // A root directory, but a journal the other user owns (planted while it was open).
        (0o700, user.uid, "belongs to uid"),
        // Root's own journal whose entry is no setting oscycles changes.
        (0o700, 0, "holds an entry oscycles never makes"),
    ];
    for (mode, owner, said) in cases {
        jd.chmod(mode);
        let planted = jd.plant(&precious, owner);
        let out = tiny(&d, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            std::fs::read(&precious).unwrap(),
            b"root's data",
            "mode {mode:o}, journal of uid {owner}: the root file was written ({err})"
        );
        assert!(out.status.success(), "{err}");
        assert!(err.contains(said), "mode {mode:o}, journal of uid {owner}: stderr should say '{said}': {err}");
        let _ = std::fs::remove_file(&planted);
    }
    drop(jd);
    let _ = std::fs::remove_dir_all(&d);
}

/// What a test of planted links needs, as root: its turn alone, the
/// sysctls lowered, another user, and a root file ("root's data") in a
/// directory of root's (0755). Dropped in reverse order.
struct Planting {
    private: PathBuf,
    precious: PathBuf,
    user: OtherUser,
    _unprotected: Unprotected,
    _alone: std::sync::MutexGuard<'static, ()>,
}

fn planting(name: &str) -> Planting {
    let _alone = as_root_alone();
    let _unprotected = Unprotected::set();
    let user = OtherUser::create();
    let private = tempdir(name);
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o755)).unwrap();
    let precious = private.join("precious");
    std::fs::write(&precious, b"root's data").unwrap();
    Planting { private, precious, user, _unprotected, _alone }
}

#[test]
fn the_store_is_never_opened_through_a_link_another_user_planted() {
    common::needs_root("it plants links as another user");
    let p = planting("store-link-target");
    let (user, private, precious) = (&p.user, &p.private, &p.precious);
    let anywhere = private.join("anywhere.sqlite");
    // A shared directory every user may write (no sticky bit, the other
    // user's), and a world-writable sticky one (root's, as /tmp).
    for (mode, owner) in [(0o777, user.uid), (0o1777, 0)] {
        let shared = tempdir("store-link");
        std::os::unix::fs::lchown(&shared, Some(owner), Some(owner)).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(mode)).unwrap();
        for target in [&anywhere, precious] {
            let link = shared.join("oscycles.sqlite");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(target, &link).unwrap();
            std::os::unix::fs::lchown(&link, Some(user.uid), Some(user.uid)).unwrap();
            let t = Instant::now();
            let out = tiny(&shared, &[]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!anywhere.exists(), "directory {mode:o}: root made a store at the link's target ({err})");
            assert_eq!(std::fs::read(precious).unwrap(), b"root's data", "directory {mode:o}: the root file was written");
            assert_eq!(out.status.code(), Some(2), "directory {mode:o}, link to {}: {err}", target.display());
            // A directory of the other user's is refused as a whole (issue 58).
            assert!(err.contains("--db") || (owner != 0 && err.contains("belongs to uid")), "{err}");
            assert!(t.elapsed() < Duration::from_secs(5), "refused before measuring, not after: {:?}", t.elapsed());
        }
        let _ = std::fs::remove_dir_all(&shared);
    }
    let _ = std::fs::remove_dir_all(private);
}

/// A document of a run of this host marked running whose process is dead,
/// named `id`, in `dir`.
fn dead_running_doc(dir: &Path, id: &str, pid: u32) -> PathBuf {
    let host = String::from_utf8(Command::new("hostname").output().unwrap().stdout).unwrap().trim().to_string();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap().trim().to_string();
    changed_doc(dir, id, |v| {
        v["status"] = serde_json::json!("running");
        v["host"]["hostname"] = serde_json::json!(host);
        v["owner"] = serde_json::json!({"pid": pid, "boot_id": boot, "start_ticks": 1});
    })
}

/// Sets the `source` of run `id` in the SQLite store `db`, as whoever could write the store could.
fn set_source(db: &Path, id: &str, source: &str) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute("UPDATE runs SET source = ?1 WHERE id = ?2", [source, id]).unwrap();
}

#[test]
fn a_store_row_never_chooses_a_file_root_writes() {
    common::needs_root("it hands a store to another user");
    let _alone = as_root_alone();
    let _unprotected = Unprotected::set();
    let user = OtherUser::create();
    let private = tempdir("row-source");
    let precious = private.join("precious");
    std::fs::write(&precious, b"root's data").unwrap();
    std::fs::set_permissions(&precious, std::fs::Permissions::from_mode(0o600)).unwrap();
    let pid = dead_pid();
    // Another user's project: its store holds a dead run whose source is root's file.
    let project = tempdir("row-source-project");
    let doc = dead_running_doc(&project, "a-dead-users-run", pid);
    let theirs = project.join("oscycles.sqlite");
    assert!(oscycles(&["import", doc.to_str().unwrap(), "--db", theirs.to_str().unwrap()]).status.success());
    set_source(&theirs, "a-dead-users-run", precious.to_str().unwrap());
    for p in [&project, &theirs, &doc] {
        std::os::unix::fs::lchown(p, Some(user.uid), Some(user.uid)).unwrap();
    }
    let runs = Command::new(bin()).current_dir(&project).args(["runs", "--db", "oscycles.sqlite"]).output().unwrap();
    let err = String::from_utf8_lossy(&runs.stderr);
    assert_eq!(runs.status.code(), Some(2), "root opened another user's store: {err}");
    assert!(err.contains("another user"), "{err}");
    let run = tiny(&project, &[]);
    assert_eq!(run.status.code(), Some(2), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(std::fs::read(&precious).unwrap() == b"root's data", "root rewrote the file a row named");

    // Root's own store, with rows someone crafted: a root file that is no document, a
    // document in a directory the other user owns, a relative path, a FIFO. Only the
    // genuine one (root's own document of that run, in root's directory) is rewritten.
    let store = private.join("s.sqlite");
    let fifo = private.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let genuine = dead_running_doc(&private, "genuine", pid);
    let in_theirs = dead_running_doc(&project, "in-their-dir", pid);
    let before_theirs = std::fs::read(&in_theirs).unwrap();
    let rows = [
        ("to-precious", precious.display().to_string()),
        ("in-their-dir", in_theirs.display().to_string()),
        ("relative", "precious".to_string()),
        ("to-fifo", fifo.display().to_string()),
        ("genuine", genuine.display().to_string()),
    ];
    for (id, source) in &rows {
        let d = if *id == "genuine" {
            genuine.clone()
        } else if *id == "in-their-dir" {
            in_theirs.clone()
        } else {
            dead_running_doc(&private, id, pid)
        };
        assert!(oscycles(&["import", d.to_str().unwrap(), "--db", store.to_str().unwrap()]).status.success());
        set_source(&store, id, source);
    }
    let t = Instant::now();
    let runs = Command::new(bin()).current_dir(&private).args(["runs", "--db", store.to_str().unwrap()]).output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(10), "a FIFO as a source blocked: {:?}", t.elapsed());
    assert!(runs.status.success(), "{}", String::from_utf8_lossy(&runs.stderr));
    let listed = String::from_utf8_lossy(&runs.stdout);
    assert_eq!(listed.matches("killed").count(), rows.len(), "every dead run is marked killed in the store: {listed}");
    assert!(std::fs::read(&precious).unwrap() == b"root's data", "a row's source was written");
    assert_eq!(std::fs::read(&in_theirs).unwrap(), before_theirs, "a document in another user's directory was rewritten");
    let g: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&genuine).unwrap()).unwrap();
    assert_eq!(g["status"], "killed", "root's own document of the run says killed");
    let _ = std::fs::remove_dir_all(&project);
    let _ = std::fs::remove_dir_all(&private);
}

#[test]
fn report_outputs_never_follow_a_link_another_user_planted() {
    common::needs_root("it plants links as another user");
    let p = planting("out-link-target");
    let (user, private, precious) = (&p.user, &p.private, &p.precious);
    // A sticky directory every user writes (as /tmp), and one of the other user's.
    let shared = tempdir("out-link-shared");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let theirs = tempdir("out-link-theirs");
    std::os::unix::fs::lchown(&theirs, Some(user.uid), Some(user.uid)).unwrap();
    let plant = |link: &Path, to: &Path| {
        let _ = std::fs::remove_file(link);
        std::os::unix::fs::symlink(to, link).unwrap();
        std::os::unix::fs::lchown(link, Some(user.uid), Some(user.uid)).unwrap();
    };
    let doc = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json");
    let s = |p: PathBuf| p.display().to_string();
    plant(&shared.join("dir-link"), private);
    let cases: Vec<Vec<String>> = vec![
        vec!["--markdown".into(), s(shared.join("report.md"))],
        vec!["--csv".into(), s(shared.join("report.csv"))],
        vec!["--bmf".into(), s(shared.join("bmf.json"))],
        vec!["--github-benchmark".into(), s(shared.join("gh.json"))],
        vec!["--markdown".into(), s(theirs.join("report.md"))],
        vec!["--html".into(), s(shared.join("dir-link"))],
        vec!["--json".into(), s(shared.join("dir-link"))],
        vec!["--html".into(), s(shared.join("dir-link").join("sub"))],
        vec!["--json".into(), s(theirs.clone())],
    ];
    for args in &cases {
        if !args[1].contains("dir-link") && args[1] != s(theirs.clone()) {
            plant(Path::new(&args[1]), precious);
        }
        let mut all = vec!["report", doc];
        all.extend(args.iter().map(String::as_str));
        let out = oscycles(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(std::fs::read(precious).unwrap() == b"root's data", "{args:?}: the root file was written ({err})");
        assert_eq!(std::fs::read_dir(private).unwrap().count(), 1, "{args:?}: something was written in root's directory ({err})");
        let planted_name = !args[1].contains("dir-link") && args[1].starts_with(&s(shared.clone()));
        if planted_name && out.status.success() {
            // Replaced, never followed: the name is now root's own file.
            let m = std::fs::symlink_metadata(&args[1]).unwrap();
            assert!(m.is_file() && m.uid() == 0, "{args:?}: the link was not replaced");
        } else {
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        }
    }
    // Root's own directory takes them.
    let own = tempdir("out-own");
    let out = oscycles(&["report", doc, "--markdown", &s(own.join("r.md")), "--html", &s(own.join("h")), "--json", &s(own.join("j"))]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(own.join("r.md").is_file() && own.join("h/index.html").is_file() && std::fs::read_dir(own.join("j")).unwrap().count() == 1);
    for d in [&own, &shared, &theirs, private] {
        let _ = std::fs::remove_dir_all(d);
    }
}
