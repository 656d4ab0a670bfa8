//! The kernel's event counts per operation, checked against what the
//! mechanism of known workloads must do: a same-core pipe round trip
//! switches twice, a cross-core spin round trip never, a first touch of a
//! fresh anonymous page faults once, fork + exit + wait takes the child's
//! faults and a switch or two, sched_yield beside another runnable thread
//! switches once. Counts, never speed. Hardware counters are n/a here (no
//! PMU in this VM): the run says why and the case is measured.

use oscycles::families::bench::ipc::{Mechanism, pingpong};
use oscycles::measure::counters::{Armed, Counted, Event};
use oscycles::measure::harness::{self, HarnessConfig};
use oscycles::measure::placement::{self, Policy, Space};
use oscycles::measure::watchdog::Stop;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common;

/// A case's counts take in every task started in this process while it is
/// armed: the tests here run one at a time, so that another test's threads
/// are not counted as this one's.
fn alone() -> std::sync::MutexGuard<'static, ()> {
    common::one_at_a_time()
}

/// Batches of a fixed size, so that each counting batch has as many
/// operations as asked.
fn cfg(inner: u64) -> HarnessConfig {
    HarnessConfig { target_batch_cycles: 0, batches: 3, fixed_inner: Some(inner), max_inner: inner }
}

/// The counts per operation of `event` in each counting batch of the one
/// measurement `f` makes while armed.
fn counted(event: Event, f: impl FnOnce()) -> Vec<f64> {
    let armed = Armed::arm(3, true);
    f();
    let counted = armed.finish();
    assert_eq!(counted.len(), 1, "one measurement: {counted:?}");
    match &counted[0] {
        Counted::Batches { batches, unavailable } => {
            for h in Event::HARDWARE {
                if oscycles::measure::counters::availability().hardware.is_err() {
                    assert!(unavailable.iter().any(|(e, why)| *e == h && !why.is_empty()), "{h:?} says why it is n/a: {unavailable:?}");
                }
            }
            assert_eq!(batches.len(), 3);
            batches.iter().map(|b| b.iter().find(|(e, _)| *e == event).and_then(|(_, v)| *v).expect("counted")).collect()
        }
        Counted::NotCounted(why) => panic!("not counted: {why}"),
        Counted::Deferred => panic!("armed with batches, the harness counted nothing"),
    }
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

/// Round trips in batches of at least 10 ms, the count doubled to it: on a
/// loaded machine a fixed count after one slow warm-up round trip could be
/// predicted to outlast the deadline. Both sides run SCHED_FIFO, so that
/// what is counted is the mechanism's own switches, not other processes'
/// preemptions: under SCHED_OTHER at load 20 (a test suite beside other
/// builds on 2 CPUs) the cross-core spinners were preempted so often that
/// a batch held a few hundred round trips and 6-7 switches each.
fn pingpong(mechanism: Mechanism, space: Space, cpus: (usize, usize)) -> Vec<f64> {
    let policy = Policy::Fifo { priority: 1 };
    let spec = pingpong::PingPongSpec { mechanism, words: 1, space, cpus, policy, timeout: Duration::from_secs(60) };
    let cfg = HarnessConfig { target_batch_cycles: 20_000_000, batches: 3, fixed_inner: None, max_inner: 1 << 16 };
    counted(Event::ContextSwitches, || {
        pingpong::run(&spec, 0, &cfg).unwrap();
    })
}

#[test]
fn a_same_core_pipe_round_trip_switches_twice() {
    let _alone = alone();
    let cpu = placement::allowed_cpus()[0];
    // The partner is a thread, then a forked process, both started by the case.
    for space in [Space::Intra, Space::Inter] {
        let per_rt = pingpong(Mechanism::Pipe, space, (cpu, cpu));
        assert!(per_rt.iter().all(|&s| (1.8..=2.2).contains(&s)), "{space:?}: switches per round trip by batch {per_rt:?}");
    }
}

#[test]
fn a_cross_core_spin_round_trip_does_not_switch() {
    let _alone = alone();
    let cpus = placement::allowed_cpus();
    common::needs_cpus(2, "a round trip across two cores");
    let per_rt = pingpong(Mechanism::Spin, Space::Intra, (cpus[0], cpus[1]));
    assert!(median(&per_rt) < 0.01, "switches per round trip by batch {per_rt:?}");
}

#[test]
fn a_first_touch_of_a_fresh_anonymous_page_faults_once() {
    let _alone = alone();
    const PAGE: usize = 4096;
    let faults = counted(Event::MinorFaults, || {
        harness::measure_prepared(
            &oscycles::measure::clock::Tsc,
            0,
            &cfg(512),
            |n| -> Result<(*mut u8, usize), Stop> {
                let len = n as usize * PAGE;
                // SAFETY: a fresh private anonymous mapping; checked below.
                let p = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        len,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                        -1,
                        0,
                    )
                };
                assert_ne!(p, libc::MAP_FAILED);
                // SAFETY: advice on the mapping just made: no huge pages, so a
                // touch faults in one 4 KiB page.
                assert_eq!(unsafe { libc::madvise(p, len, libc::MADV_NOHUGEPAGE) }, 0);
                Ok((p.cast(), len))
            },
            |&mut (p, len)| {
                for off in (0..len).step_by(PAGE) {
                    // SAFETY: within the mapping, which is writable.
                    unsafe { p.add(off).write_volatile(1) };
                }
                Ok(())
            },
        )
        .unwrap();
    });
    // The mappings are not unmapped here: the counts are of the touches alone.
    assert!(faults.iter().all(|&f| (0.99..=1.02).contains(&f)), "minor faults per page by batch {faults:?}");
}

fn rusage_minflt(who: libc::c_int) -> i64 {
    // SAFETY: getrusage fills the zeroed struct.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut u);
        u.ru_minflt
    }
}

fn rusage_children_minflt() -> i64 {
    rusage_minflt(libc::RUSAGE_CHILDREN)
}

#[test]
fn fork_exit_wait_takes_the_childs_faults_and_a_switch_or_two() {
    let _alone = alone();
    let cpu = placement::allowed_cpus()[0];
    let _affinity = placement::AffinityGuard::save();
    placement::set_affinity(&[cpu]).unwrap();
    let mut forks = 0u64;
    let armed = Armed::arm(3, false);
    let (before, parent_before) = (rusage_children_minflt(), rusage_minflt(libc::RUSAGE_SELF));
    harness::measure(&oscycles::measure::clock::Tsc, 0, &cfg(50), |n| -> Result<(), Stop> {
        for _ in 0..n {
            let pid = oscycles::families::bench::toolkit::child::fork_child(|| 0).unwrap();
            oscycles::families::bench::toolkit::child::reap(pid).unwrap();
        }
        forks += n;
        Ok(())
    })
    .unwrap();
    // Every child is alike: its faults per fork, over every batch.
    let child_faults = (rusage_children_minflt() - before) as f64 / forks as f64;
    let parent_faults = (rusage_minflt(libc::RUSAGE_SELF) - parent_before) as f64 / forks as f64;
    let counted = armed.finish();
    let Counted::Batches { batches, .. } = &counted[0] else { panic!("not counted: {counted:?}") };
    let get = |e: Event| -> Vec<f64> { batches.iter().map(|b| b.iter().find(|(x, _)| *x == e).unwrap().1.unwrap()).collect() };
    let (faults, switches) = (get(Event::MinorFaults), get(Event::ContextSwitches));
    assert!(child_faults >= 1.0, "a child faults: {child_faults}");
    // The count takes in the child's faults, not only the parent's (the
    // parent's copy-on-write faults after each fork). getrusage counts a few
    // more faults per child than the perf events do (it also counts faults
    // the kernel takes on the task's behalf without user registers), so the
    // check is that the count is above the parent's alone by at least one
    // fault a child, and that every batch counts alike.
    assert!(
        faults.iter().all(|&f| f >= parent_faults + 1.0),
        "faults per fork {faults:?}, parent's alone {parent_faults}, child's {child_faults}"
    );
    assert!(faults.iter().all(|&f| (f - faults[0]).abs() <= 0.1 * faults[0]), "alike forks count alike: {faults:?}");
    assert!((1.0..=2.1).contains(&median(&switches)), "switches per fork {switches:?}");
}

#[test]
fn sched_yield_beside_another_runnable_thread_switches_once() {
    let _alone = alone();
    let cpu = placement::allowed_cpus()[0];
    let _affinity = placement::AffinityGuard::save();
    placement::set_affinity(&[cpu]).unwrap();
    // The partner runs before the case starts, so only the yielding thread
    // is counted (tasks older than the case are not the case's).
    let stop = Arc::new(AtomicBool::new(false));
    let partner = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                // SAFETY: sched_yield has no arguments.
                unsafe { libc::sched_yield() };
            }
        })
    };
    let per_call = counted(Event::ContextSwitches, || {
        harness::measure(&oscycles::measure::clock::Tsc, 0, &cfg(2000), |n| -> Result<(), Stop> {
            for _ in 0..n {
                // SAFETY: sched_yield has no arguments.
                unsafe { libc::sched_yield() };
            }
            Ok(())
        })
        .unwrap();
    });
    stop.store(true, Ordering::Relaxed);
    partner.join().unwrap();
    assert!(per_call.iter().all(|&s| (0.95..=1.05).contains(&s)), "switches per sched_yield by batch {per_call:?}");
}

#[test]
fn without_an_armed_case_the_harness_counts_nothing() {
    let _alone = alone();
    let armed = Armed::arm(3, false);
    drop(armed);
    assert_eq!(oscycles::measure::counters::armed_batches(), None);
    let m = harness::measure(&oscycles::measure::clock::Tsc, 0, &cfg(10), |_| Ok::<(), Stop>(())).unwrap();
    assert_eq!(m.per_op_cycles.len(), 3);
}

/// A run through the binary: the counts are in the document beside the
/// cell, hardware ones n/a with the reason where this machine has no PMU;
/// `--no-counters` leaves them out; `show --counters` prints them.
#[test]
fn a_run_records_counts_and_show_prints_them() {
    // Its oscycles processes are children of this process: started while
    // another test is armed, they were counted as that test's tasks (a fork
    // read 33-46 faults, a first touch 1.28 faults a page).
    let _alone = alone();
    let (doc, _, _, _) =
        common::getpid_in("native", "counters-run", &["--batches", "3", "--iterations", "1000", "--quiet", "--rounds", "2"]);
    assert_eq!(doc["schema_version"], 3);
    let r = &doc["results"][0];
    assert_eq!(r["status"], "ok", "{r}");
    let c = &r["counters"];
    assert!(c["kernel"].as_str().is_some_and(|k| !k.is_empty()), "{c}");
    let cs = &c["events"]["context_switches"];
    // Counted in the first of the two rounds only (the second runs no counting pass).
    assert_eq!(cs["samples"].as_array().map(Vec::len), Some(1), "one list, of round 1: {cs}");
    assert!(cs["summary"]["median"].as_f64().unwrap() < 0.01, "getpid does not switch: {cs}");
    if oscycles::measure::counters::availability().hardware.is_err() {
        assert!(c["unavailable"]["instructions"].as_str().is_some_and(|w| !w.is_empty()), "{c}");
    }
    let (off, _, _, _) =
        common::getpid_in("native", "counters-off", &["--batches", "3", "--iterations", "1000", "--quiet", "--no-counters"]);
    assert!(off["results"][0].get("counters").is_none());

    let d = common::tempdir("counters-show");
    std::fs::create_dir_all(&d).unwrap();
    let file = d.join("run.json");
    std::fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    let out =
        std::process::Command::new(env!("CARGO_BIN_EXE_oscycles")).args(["show", "--counters", "--full"]).arg(&file).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let _ = std::fs::remove_dir_all(&d);
    assert!(text.contains("kernel event counts per operation"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("syscall.getpid") && l.contains("0.00")), "{text}");
    if oscycles::measure::counters::availability().hardware.is_err() {
        assert!(text.contains("n/a (core cyc."), "{text}");
    }
}
