//! Safety against other local users and careless input: planted files and
//! symlinks are never followed, truncated, written or executed; documents are
//! bounded and their ids cannot name files outside a directory; deadlines
//! hold for CPU-bound cases; nothing a SIGKILLed run started outlives it.

mod children;
mod documents;
mod foreign;
mod links;
mod runs;
mod store;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::{only_json, processes_mentioning, tempdir};

/// The binary under test: this build's, or the one OSCYCLES_UNDER_TEST
/// names (to show that a test fails against an older oscycles).
fn bin() -> String {
    std::env::var("OSCYCLES_UNDER_TEST").unwrap_or_else(|_| env!("CARGO_BIN_EXE_oscycles").to_string())
}

fn oscycles(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("the binary runs")
}

fn refused(args: &[&str], needle: &str) -> Output {
    let out = oscycles(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?} should exit 2; stderr: {err}");
    assert!(err.contains(needle), "{args:?}: stderr should mention '{needle}': {err}");
    out
}

/// The output of `child` once it has ended, within `within` (else it is killed and the test fails).
fn ended_within(mut child: std::process::Child, within: Duration, what: &str) -> Output {
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() && t.elapsed() < within {
        std::thread::sleep(Duration::from_millis(10));
    }
    if child.try_wait().unwrap().is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{what} still runs after {within:?}");
    }
    child.wait_with_output().unwrap()
}

/// An unprivileged user for the duration of a test, removed on drop.
struct OtherUser {
    name: String,
    uid: u32,
}

/// Tests that create users or lower fs.protected_* take turns (the
/// sysctls are one setting for all of them).
static AS_ROOT: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn as_root_alone() -> std::sync::MutexGuard<'static, ()> {
    AS_ROOT.lock().unwrap_or_else(|p| p.into_inner())
}

impl OtherUser {
    fn create() -> OtherUser {
        static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("oscprobe{}x{n}", std::process::id() % 100_000);
        // One left by a test run that died is removed first.
        let _ = Command::new("userdel").arg(&name).output();
        let st = Command::new("useradd").args(["--no-create-home", "--shell", "/bin/sh", &name]).status().expect("useradd runs");
        assert!(st.success(), "useradd {name}");
        let out = Command::new("id").args(["-u", &name]).output().unwrap();
        let uid = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        OtherUser { name, uid }
    }
}

impl Drop for OtherUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).status();
    }
}

/// fs.protected_symlinks and fs.protected_regular at 0 for the test (as on
/// many hosts and containers), restored on drop.
struct Unprotected(Vec<(PathBuf, String)>);

impl Unprotected {
    fn set() -> Unprotected {
        let mut saved = Vec::new();
        for k in ["protected_symlinks", "protected_regular", "protected_fifos"] {
            let p = PathBuf::from("/proc/sys/fs").join(k);
            if let Ok(v) = std::fs::read_to_string(&p) {
                let _ = std::fs::write(&p, "0");
                saved.push((p, v.trim().to_string()));
            }
        }
        Unprotected(saved)
    }
}

impl Drop for Unprotected {
    fn drop(&mut self) {
        for (p, v) in &self.0 {
            let _ = std::fs::write(p, v);
        }
    }
}

/// A minimal valid run document with this id.
fn doc_with_id(dir: &Path, id: &str) -> PathBuf {
    let fixture = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&fixture).unwrap();
    v["id"] = serde_json::json!(id);
    let p = dir.join(format!("doc-{}.json", id.len()));
    std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
    p
}

/// A tiny root run of one syscall case into `results`, with `extra` arguments.
fn tiny(results: &Path, extra: &[&str]) -> Output {
    tiny_rounds(results, "1", extra)
}

/// [`tiny`] in `rounds` rounds: `common::tiny_run` of syscall.getpid.
fn tiny_rounds(results: &Path, rounds: &str, extra: &[&str]) -> Output {
    let mut args = vec!["--bench", "syscall.getpid", "--rounds", rounds];
    args.extend_from_slice(extra);
    common::tiny_run(results, 100, &args)
}

/// A pid no process has (a journal of it is a dead run's).
fn dead_pid() -> u32 {
    (1000..32000).rev().find(|p| !Path::new(&format!("/proc/{p}")).exists()).unwrap()
}

/// /run/oscycles as it was, put back on drop, with the journals a test planted removed.
struct JournalDir {
    mode: Option<u32>,
    planted: Vec<PathBuf>,
}

impl JournalDir {
    fn take() -> JournalDir {
        let mode = std::fs::metadata("/run/oscycles").ok().map(|m| m.mode() & 0o7777);
        std::fs::create_dir_all("/run/oscycles").unwrap();
        JournalDir { mode, planted: vec![] }
    }

    fn chmod(&self, mode: u32) {
        std::fs::set_permissions("/run/oscycles", std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A journal of a dead run that writes `text` into `target`, owned by `uid`.
    fn plant(&mut self, target: &Path, uid: u32) -> PathBuf {
        let pid = dead_pid();
        let p = PathBuf::from(format!("/run/oscycles/isolation-{pid}.json"));
        let j = serde_json::json!({"pid": pid, "changes": [{"File": {"path": target, "before": "PWNED"}}]});
        std::fs::write(&p, j.to_string()).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::lchown(&p, Some(uid), Some(uid)).unwrap();
        self.planted.push(p.clone());
        p
    }
}

impl Drop for JournalDir {
    fn drop(&mut self) {
        for p in &self.planted {
            let _ = std::fs::remove_file(p);
        }
        match self.mode {
            Some(m) => self.chmod(m),
            None => {
                let _ = std::fs::remove_dir("/run/oscycles");
            }
        }
    }
}

/// The fixture document with `change` made to it, as JSON, in `dir`.
fn changed_doc(dir: &Path, name: &str, change: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let fixture = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&fixture).unwrap();
    v["id"] = serde_json::json!(name);
    change(&mut v);
    let p = dir.join(format!("{name}.json"));
    std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
    p
}

/// A tmpfs of `bytes` mounted on a fresh directory, unmounted and removed on drop.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(name: &str, bytes: u64) -> SmallDisk {
        let d = tempdir(name);
        let st = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={bytes}")]).arg("tmpfs").arg(&d).status().unwrap();
        assert!(st.success(), "mount tmpfs");
        SmallDisk(d)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}
