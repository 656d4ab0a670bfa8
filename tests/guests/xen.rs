//! The Xen environments (scripts/setup unpacks Xen and its toolstack): PV
//! and PVH dom0s and a domU return parseable results; a Xen panic and a
//! dom0 that finds no /init end their cases with the reason, long before
//! the timeouts; a missing Xen is n/a; no QEMU outlives a run, also on
//! SIGTERM. Tiny iterations: under TCG a Xen boot takes 15-30 s, a domU's
//! about two minutes. One Xen machine at a time.

use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::common;
use common::{only_doc, tempdir};

/// Xen machines under TCG on a small host slow each other past their
/// timeouts (an HVM domU's, whose firmware copies its initramfs in through
/// an emulated device, most): the tests that boot one take turns.
static ONE_XEN_AT_A_TIME: Mutex<()> = Mutex::new(());

fn turn() -> MutexGuard<'static, ()> {
    ONE_XEN_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A tiny getpid run in `envs` with extra arguments (one Xen at a time).
fn run(envs: &str, name: &str, extra: &[&str]) -> common::GetpidRun {
    let _turn = turn();
    let mut args = vec!["--batches", "2", "--batch-ms", "0.05", "--rounds", "1"];
    args.extend(extra);
    // Emulated cycles, whose mechanics these tests check (tests/icount.rs checks the counter's).
    if !extra.contains(&"--accel") {
        args.extend(["--accel", "tcg"]);
    }
    common::getpid_in(envs, name, &args)
}

fn result<'a>(doc: &'a serde_json::Value, env: &str) -> &'a serde_json::Value {
    doc["results"].as_array().unwrap().iter().find(|r| r["environment"] == env).unwrap_or_else(|| panic!("no {env} result: {doc}"))
}

/// QEMU processes whose command line mentions `needle`.
fn qemus_mentioning(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.starts_with("qemu-system") && cmd.contains(needle) {
                out.push(cmd);
            }
        }
    }
    out
}

#[test]
fn pv_and_pvh_dom0s_return_results_and_say_what_they_are() {
    // 150 s (Xen under TCG waits 4 times that): a dom0 boots in 15-30 s
    // here, but a CI machine once took over 240 s for one (its domUs, with
    // 12 x 60 s, still booted); this test checks results, not boot speed.
    let (doc, _, stdout, _) = run("xen-pv,xen-pvh", "xen-dom0", &["--init-timeout", "150", "--full"]);
    for (env, guest_type) in [("xen-pv", "PV"), ("xen-pvh", "PVH")] {
        let r = result(&doc, env);
        assert_eq!(r["status"], "ok", "{r}");
        assert!(r["metrics"][0]["summary"]["median"].as_f64().unwrap() > 0.0);
        let facts = &doc["environment"]["settings"][env];
        assert_eq!(facts["hypervisor_inside"]["kind"], "xen", "{facts}");
        assert_eq!(facts["hypervisor_inside"]["guest_type"], guest_type, "{facts}");
        assert_eq!(facts["accel"], "tcg");
        assert_eq!(facts["clean_exit"], true, "dom0 ends through isa-debug-exit: {facts}");
    }
    assert!(stdout.contains("xen-pv, xen-pvh ran under QEMU's TCG emulator"), "{stdout}");
}

#[test]
fn a_pv_dom0_boots_with_the_appended_parameters_commas_included() {
    let (doc, _, _, _) = run("xen-pv", "xen-append", &["--init-timeout", "150", "--guest-append", "preempt=full oscycles.probe=a,b"]);
    assert_eq!(result(&doc, "xen-pv")["status"], "ok");
    let facts = &doc["environment"]["settings"]["xen-pv"];
    assert!(facts["guest_cmdline"].as_str().unwrap().ends_with(" preempt=full oscycles.probe=a,b"), "{facts}");
    // dom0's /proc/cmdline: the comma passed QEMU's multiboot module list.
    let inside = facts["host_inside"]["cmdline"].as_str().unwrap();
    assert!(inside.contains("preempt=full oscycles.probe=a,b"), "{inside}");
}

/// The toolstack path: dom0's /init loads the Xen modules, starts xenstored
/// and xenconsoled, `xl create`s the domU (for HVM with the device model)
/// and relays its console.
///
/// One emulated CPU (`--vm-cpus 1`): dom0 and the domU then take turns on
/// one QEMU thread. On two, every device request of the domU is a wake-up
/// of QEMU's other thread, which on a loaded host waits behind the load:
/// beside `stress-ng --cpu 2` an HVM domU printed nothing in 11 minutes on
/// two and returned its results in 76 s on one. The test checks that a
/// domU returns results, which a getpid case on one CPU shows.
fn domu_returns_results(env: &str, guest_type: &str, mode: &str) {
    let (doc, _, _, consoles) = run(env, env, &["--init-timeout", "60", "--vm-mem", "512", "--vm-cpus", "1"]);
    let r = &doc["results"][0];
    let texts: Vec<&str> = consoles.iter().map(|(_, text)| text.as_str()).collect();
    assert_eq!(r["status"], "ok", "{r}\nconsole kept:\n{}", texts.join("\n"));
    assert!(r["metrics"][0]["summary"]["median"].as_f64().unwrap() > 0.0);
    let facts = &doc["environment"]["settings"][env];
    assert_eq!(facts["hypervisor_inside"]["guest_type"], guest_type, "{facts}");
    assert_eq!(facts["xen_mode"], mode);
    assert_eq!(facts["memory_inside_kib"].as_u64().map(|k| k < 512 * 1024), Some(true), "the domU's memory, not dom0's: {facts}");
}

#[test]
fn a_pvh_domu_started_from_dom0_returns_results() {
    domu_returns_results("xen-pvh-domu", "PVH", "PVH domU of a PV dom0");
}

#[test]
fn an_hvm_domu_started_from_dom0_returns_results() {
    domu_returns_results("xen-hvm", "HVM", "HVM domU of a PV dom0");
}

/// A Xen run of `env` in a broken `--guest-mode`: the case is n/a, and
/// ended by what broke, long before the init timeout (4 x 60 s); its
/// reason, which names the console log kept beside the results (its text).
fn ends_early(env: &str, mode: &str, by: &str) -> (String, String) {
    let (doc, took, _, consoles) = run(env, &format!("xen-{mode}"), &["--guest-mode", mode, "--init-timeout", "60"]);
    let r = result(&doc, env);
    assert_eq!(r["status"], "not_applicable", "{r}");
    assert!(took < Duration::from_secs(240), "ended by {by}, not the init timeout (4 x 60 s): {took:?}");
    let why = r["reason"].as_str().unwrap().to_string();
    let named = why.split("(console: ").nth(1).and_then(|t| t.split(')').next()).unwrap_or_else(|| panic!("no console named: {why}"));
    let (_, console) =
        consoles.into_iter().find(|(name, _)| named.ends_with(&format!("/{name}"))).unwrap_or_else(|| panic!("{named} not kept"));
    assert!(console.contains("Xen version"), "{console}");
    (why, console)
}

#[test]
fn a_xen_panic_ends_the_case_with_xens_line() {
    // A PVH dom0 without an IOMMU: Xen panics while building dom0.
    let (why, console) = ends_early("xen-pvh", "xen-panic", "the panic");
    assert!(why.contains("Panic on CPU") && why.contains("iommu"), "{why}");
    assert!(console.contains("Panic on CPU"), "{console}");
}

#[test]
fn a_dom0_without_init_ends_the_case_with_the_crash() {
    let (why, _) = ends_early("xen-pv", "no-init", "the crash");
    assert!(why.contains("Dom0 crashed"), "{why}");
}

#[test]
fn a_missing_xen_is_not_applicable() {
    let empty = tempdir("no-xen");
    let d = tempdir("no-xen-results");
    let out = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .env("OSCYCLES_XEN_DIR", &empty)
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--batches", "2", "--batch-ms", "0.05", "--quiet"])
        .args(["--env", "native,xen-pv", "--results"])
        .arg(&d)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = only_doc(&d);
    assert_eq!(result(&doc, "native")["status"], "ok");
    let r = result(&doc, "xen-pv");
    assert_eq!(r["status"], "not_applicable");
    assert!(r["reason"].as_str().unwrap().contains("Xen hypervisor not found (scripts/setup installs it)"), "{r}");
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn sigterm_stops_a_xen_run_and_its_qemu() {
    let _turn = turn();
    let how = common::StartStop {
        what: "QEMU",
        up: &|ps, _| ps.iter().any(|p| p.split_once(": ").is_some_and(|(_, cmd)| cmd.starts_with("qemu-system"))),
        poll: Duration::from_millis(100),
        settle: Duration::from_secs(2),
        stop: common::Stop::Term,
        left: &qemus_mentioning,
    };
    let args = ["run", "--suite", "syscall", "--env", "xen-pv", "--quiet", "--init-timeout", "60"];
    let d = common::start_stop_nothing_left(env!("CARGO_BIN_EXE_oscycles"), &args, "xen-sigterm", &how);
    let _ = std::fs::remove_dir_all(&d);
}
