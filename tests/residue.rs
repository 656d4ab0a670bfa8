//! A case's result must not depend on the cases run before it. The
//! mechanism such a dependence needs is state a case leaves in the process
//! that runs the next: threads, descriptors, children, mappings, memory,
//! affinity, policy. Every case of the lmbench suite runs here, in this
//! process, one after another (the bandwidth cases among them, with their
//! large buffers), and none may leave any of that behind.

use oscycles::bench::residue::Residue;
use oscycles::bench::{CaseCtx, CaseError};
use oscycles::harness::HarnessConfig;
use oscycles::placement::{Policy, allowed_cpus};

#[test]
fn no_lmbench_case_leaves_state_behind_for_the_next() {
    let suite = oscycles::registry::find_suite("lmbench").unwrap();
    let clock = oscycles::clock::known_tsc(2.5e9);
    let scratch = tempfile::tempdir().unwrap();
    let cpus = allowed_cpus();
    let cpus = [cpus[0], *cpus.get(1).unwrap_or(&cpus[0])];
    let mut leaks = Vec::new();
    let mut ran = 0;
    for (b, params) in suite.cases() {
        if b.supported().is_err() {
            continue;
        }
        let ctx = CaseCtx {
            params: &params,
            cpus: &cpus,
            pin: true,
            policy: Policy::Other,
            memory_locked: false,
            harness: HarnessConfig::tiny(),
            scale: suite.scale,
            point_ms: Some(20),
            clock: &clock,
            timeout: std::time::Duration::from_secs(30),
            scratch: scratch.path(),
            mem_bytes: Some(32 << 20),
        };
        let before = Residue::now();
        match b.run(&ctx) {
            Ok(_) | Err(CaseError::NotApplicable(_)) => ran += 1,
            Err(e) => panic!("{} {params:?}: {e:?}", b.id),
        }
        // 4 MiB of slack: the allocator keeps some freed memory for reuse.
        let leaked = Residue::now().leaked(&before, 4096);
        if !leaked.is_empty() {
            leaks.push(format!("{} {params:?}: {}", b.id, leaked.join("; ")));
        }
    }
    assert!(ran > 20, "only {ran} cases ran");
    assert!(leaks.is_empty(), "cases left state behind:\n{}", leaks.join("\n"));
}
