//! The sel4-arm environment: seL4 5.0.0 on an emulated ARM board with
//! oscycles' loader and root task returns IPC by 32-bit message registers
//! and system calls in guest instructions; the independent check agrees
//! with the cell within the harness's stated work; the A9 board, counted
//! through its timer, agrees with the A7's cycle counter within 1%; under
//! --kernel-counters (oscycles' plugin in qemu-system-arm) each cell
//! carries its kernel's instructions, entries and address-space register
//! writes; a build that is missing or failed makes the cases n/a with the
//! command that builds it; a root task that never says hello is given up
//! at the init timeout; SIGKILL leaves no QEMU behind.
//!
//! The booting tests need what scripts/setup-sel4-arm builds
//! (/var/cache/oscycles/sel4-arm, or OSCYCLES_SEL4_ARM_CACHE): they are
//! ignored unless asked for (`--include-ignored`, after that script), and
//! fail, saying why, where the build is missing.

use std::path::PathBuf;
use std::time::Duration;

use crate::common;

const CACHE: &str = "/var/cache/oscycles/sel4-arm";

/// The build scripts/setup-sel4-arm made here: the test fails, saying why, without it.
fn needs_build() {
    let c = std::env::var_os("OSCYCLES_SEL4_ARM_CACHE").map_or_else(|| PathBuf::from(CACHE), PathBuf::from);
    if let Ok(why) = std::fs::read_to_string(c.join("failed")) {
        panic!("the seL4-on-ARM build failed here: {why}; see {}/build.log", c.display());
    }
    assert!(c.join("versions").is_file(), "no seL4-on-ARM build here ({}/versions missing; scripts/setup-sel4-arm builds it)", c.display());
}

/// `oscycles run --env sel4-arm` with `args` into a fresh directory (the
/// cache taken from `cache` when given); the document and how long it took.
fn run_arm(name: &str, cache: Option<&std::path::Path>, args: &[&str]) -> (serde_json::Value, Duration) {
    common::run_guest("sel4-arm", "OSCYCLES_SEL4_ARM_CACHE", name, cache, &[], args)
}

fn results<'a>(doc: &'a serde_json::Value, bench: &str) -> Vec<&'a serde_json::Value> {
    common::results_of(doc, bench)
}

fn median(r: &serde_json::Value) -> f64 {
    r["metrics"][0]["summary"]["median"].as_f64().unwrap_or_else(|| panic!("{r}"))
}

const YIELD: [&str; 6] = ["--suite", "syscall", "--bench", "syscall.sched_yield", "--batches", "3"];

/// IPC by message registers, intra and inter, on `board`: the run's document.
fn ipc_on(board: &str, name: &str) -> serde_json::Value {
    let args = [
        "--arm-board",
        board,
        "--suite",
        "l4-ipc,syscall",
        "--bench",
        "ipc.sel4-call,ipc.pipe,syscall.sched_yield,syscall.null,syscall.getpid",
        "--where",
        "words=0",
        "--where",
        "words=4",
        "--where",
        "words=8",
        "--batches",
        "3",
        "--batch-ms",
        "1",
        "--init-timeout",
        "120",
    ];
    run_arm(name, None, &args).0
}

/// The intra-address-space one-way figure at `words` registers.
fn intra(doc: &serde_json::Value, words: u64) -> f64 {
    let r = results(doc, "ipc.sel4-call")
        .into_iter()
        .find(|r| r["params"]["words"] == words && r["params"]["space"] == "intra" && r["params"]["cores"] == "same");
    median(r.unwrap_or_else(|| panic!("no intra {words}-register case")))
}

#[test]
fn a_missing_or_failed_build_makes_the_cases_not_applicable_with_the_command_that_builds_it() {
    common::missing_or_failed_build_is_not_applicable(
        "sel4-arm",
        "OSCYCLES_SEL4_ARM_CACHE",
        "scripts/setup-sel4-arm",
        "syscall.sched_yield",
        &YIELD,
    );
}

/// On the A7 (PMCCNTR): IPC by message registers (the fastpath through 4,
/// the slowpath at 8), in and between address spaces, each register checked
/// both ways; the system calls; the board and kernel in the facts; the
/// independent check within the harness's stated work of the cell.
#[test]
#[ignore = "needs scripts/setup-sel4-arm"]
fn the_root_task_measures_ipc_by_message_registers_in_guest_instructions() {
    needs_build();
    let doc = ipc_on("imx7", "sel4-arm-imx7");
    let calls = results(&doc, "ipc.sel4-call");
    assert_eq!(calls.len(), 3 * 2 * 2, "words 0,4,8 x space x cores");
    for r in &calls {
        assert_eq!(r["environment"], "sel4-arm", "{r}");
        if r["params"]["cores"] == "cross" {
            assert_eq!(r["status"], "not_applicable", "{r}");
            continue;
        }
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["metrics"][0]["unit"], "guest_instructions", "{r}");
        let d = &r["details"];
        assert!(d["round_trips"].as_u64().unwrap() > 0 && d["round_trips"] == d["requests_verified_by_server"], "{r}");
        assert_eq!((&d["message_registers"], d["payload_unit"].as_str()), (&r["params"]["words"], Some("32-bit message registers")), "{r}");
        let fast = r["params"]["words"].as_u64().unwrap() <= 4;
        assert!(d["path"].as_str().unwrap().starts_with(if fast { "fastpath" } else { "slowpath" }), "{r}");
    }
    assert!(intra(&doc, 8) > 2.0 * intra(&doc, 4), "the slowpath at 8 registers costs more than the fastpath at 4");
    for bench in ["syscall.sched_yield", "syscall.null"] {
        let r = results(&doc, bench)[0];
        assert_eq!((r["status"].as_str(), r["metrics"][0]["unit"].as_str()), (Some("ok"), Some("guest_instructions")), "{r}");
    }
    for bench in ["syscall.getpid", "ipc.pipe"] {
        let r = results(&doc, bench)[0];
        assert_eq!(r["status"], "not_applicable", "{r}");
        assert!(r["reason"].as_str().unwrap().contains("in seL4 on ARM: "), "{r}");
    }
    let facts = &doc["environment"]["settings"]["sel4-arm"];
    assert_eq!(
        (facts["kernel"].as_str(), facts["machine"].as_str(), facts["vmm"].as_str()),
        (Some("seL4 5.0.0"), Some("mcimx7d-sabre"), Some("qemu-system-arm")),
        "{facts}"
    );
    assert_eq!(facts["clean_exit"], true, "{facts}");
    // The check's loop sends and checks nothing: the cell is above it by the
    // harness's work the root task states (its dry run), within a few
    // instructions either way.
    let check = facts["independent_check"]["one_way"].as_f64().unwrap_or_else(|| panic!("{facts}"));
    let r0 = results(&doc, "ipc.sel4-call").into_iter().find(|r| r["params"]["words"] == 0 && r["params"]["space"] == "intra").unwrap();
    let harness = r0["details"]["harness_batch_cycles"].as_f64().unwrap() / r0["details"]["inner"].as_f64().unwrap() / 2.0;
    let diff = intra(&doc, 0) - check;
    assert!(check > 100.0 && diff >= -2.0 && diff <= harness + 8.0, "check {check}, cell {}, harness {harness}", intra(&doc, 0));
}

/// The A9, whose cycle counter QEMU leaves at 0, counted through the i.MX
/// GPT (15.15 guest instructions a tick): the same kernel path, so within
/// 1% of the A7's figures.
#[test]
#[ignore = "needs scripts/setup-sel4-arm"]
fn the_a9_through_its_timer_agrees_with_the_a7_through_its_cycle_counter() {
    needs_build();
    let (a7, a9) = (ipc_on("imx7", "sel4-arm-a7"), ipc_on("imx6", "sel4-arm-a9"));
    assert_eq!(a9["environment"]["settings"]["sel4-arm"]["machine"], "sabrelite");
    for words in [0, 4, 8] {
        let (x, y) = (intra(&a7, words), intra(&a9, words));
        assert!((x - y).abs() <= 0.01 * x, "{words} registers: A7 {x}, A9 {y}");
    }
}

/// The median of metric `name` of cell `r`, which it must have.
fn metric(r: &serde_json::Value, name: &str) -> f64 {
    let m = r["metrics"].as_array().and_then(|ms| ms.iter().find(|m| m["name"] == name));
    m.and_then(|m| m["summary"]["median"].as_f64()).unwrap_or_else(|| panic!("no {name}: {r}"))
}

/// Under --kernel-counters, oscycles' plugin loaded by qemu-system-arm:
/// every measured cell's instructions split into the kernel's (at
/// 0xe0000000 and up, from the kernel's ELF) and the user's; one kernel
/// entry a one-way IPC (a call or a reply-receive) and a system call;
/// seL4's thread switch writes TTBR0 and CONTEXTIDR (within one address
/// space too); no CR3 on ARM; the slowpath's kernel costs more than the
/// fastpath's.
#[test]
#[ignore = "needs scripts/setup-sel4-arm"]
fn a_counted_run_splits_each_cell_into_the_kernels_and_the_users_instructions() {
    needs_build();
    let args = common::counted_args("ipc.sel4-call,syscall.null", "on", &["--where", "words=8", "--init-timeout", "120"]);
    let (doc, _) = run_arm("sel4-arm-counted", None, &args);
    let facts = &doc["environment"]["settings"]["sel4-arm"]["kernel_counters"];
    assert_eq!((facts["instruction_set"].as_str(), facts["kernel_base"].as_str()), (Some("arm"), Some("0xe0000000")), "{facts}");
    let cells: Vec<&serde_json::Value> = results(&doc, "ipc.sel4-call").into_iter().chain(results(&doc, "syscall.null")).collect();
    assert_eq!(cells.len(), 2 * 2 + 1, "words 0, 8 x space, and syscall.null");
    for r in &cells {
        assert_eq!(r["status"], "ok", "{r}");
        let (k, u) = (metric(r, "kernel_instructions"), metric(r, "user_instructions"));
        assert!(k > 50.0 && u > 0.0 && (k + u - median(r)).abs() < 1e-6, "kernel {k} + user {u} = the cell's {}: {r}", median(r));
        // The timer's tick adds an entry now and then: a few in 10^4 operations.
        assert!((metric(r, "kernel_entries") - 1.0).abs() < 0.01, "{r}");
        assert!(r["metrics"].as_array().unwrap().iter().all(|m| m["name"] != "cr3_writes"), "{r}");
        if r["benchmark"] == "ipc.sel4-call" {
            assert!(metric(r, "ttbr0_writes") >= 1.0 && metric(r, "contextidr_writes") >= 1.0, "a thread switch a one-way IPC: {r}");
        }
    }
    let kernel_intra = |w: u64| {
        let r = cells.iter().find(|r| r["benchmark"] == "ipc.sel4-call" && r["params"]["words"] == w && r["params"]["space"] == "intra");
        metric(r.unwrap_or_else(|| panic!("no intra {w}-register case")), "kernel_instructions")
    };
    assert!(kernel_intra(8) > 2.0 * kernel_intra(0), "the slowpath at 8 registers, the fastpath at 0");
    // The bare check, booted under the plugin too: its loop's kernel is the cell's, to the instruction.
    let check = &doc["environment"]["settings"]["sel4-arm"]["independent_check"];
    let bare = check["kernel_instructions_one_way"].as_f64().unwrap_or_else(|| panic!("{check}"));
    assert!((bare - kernel_intra(0)).abs() <= 1.0, "bare {bare}, cell {}", kernel_intra(0));
}

#[test]
#[ignore = "needs scripts/setup-sel4-arm"]
fn a_root_task_that_never_says_hello_is_given_up_at_the_init_timeout() {
    needs_build();
    let (doc, took) = run_arm("sel4-arm-silent", None, &[&YIELD[..], &["--guest-mode", "no-init", "--init-timeout", "4"]].concat());
    let r = results(&doc, "syscall.sched_yield")[0];
    assert_eq!(r["status"], "not_applicable", "{r}");
    let why = r["reason"].as_str().unwrap();
    // Under the instruction counter 3 x --init-timeout, as every guest.
    assert!(why.contains("within 12 s") && why.contains("last output"), "{r}");
    assert!(took < Duration::from_secs(40), "{took:?}");
}

#[test]
#[ignore = "needs scripts/setup-sel4-arm"]
fn a_sigkilled_run_leaves_no_sel4_arm_qemu() {
    needs_build();
    common::sigkill_leaves_no_qemu("sel4-arm", "sel4-arm-sigkill", &YIELD);
}
