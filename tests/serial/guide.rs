//! The user guide's commands run: every line of a `sh` block in docs/src
//! that starts with `oscycles` is run with the binary just built, with small
//! settings, so that the guide cannot drift from the program (a renamed
//! option, suite or benchmark fails here). docs/src/building.md says the
//! rules; commands that boot guests run with OSCYCLES_GUIDE_GUESTS=1.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use common::{only_json, tempdir};

const DOCS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src");

/// Environments that boot a guest (minutes each under TCG).
const GUESTS: &[&str] = &["qemu", "xen", "uml", "gvisor", "hermit", "microvm", "sel4", "mach"];

/// Every `oscycles ...` line of the guide's `sh` blocks: (page, line).
fn commands() -> Vec<(String, String)> {
    let mut pages: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![PathBuf::from(DOCS)];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                pages.push(p);
            }
        }
    }
    pages.sort();
    let mut out: Vec<(String, String)> = Vec::new();
    for p in pages {
        let text = std::fs::read_to_string(&p).unwrap();
        let mut in_sh = false;
        for line in text.lines() {
            if line.starts_with("```") {
                in_sh = !in_sh && line.trim() == "```sh";
                continue;
            }
            // A line may hold several commands (`a; b`).
            for part in line.split("; ") {
                if in_sh && part.trim_start().starts_with("oscycles ") && !out.iter().any(|(_, c)| c == part.trim()) {
                    out.push((p.strip_prefix(DOCS).unwrap().display().to_string(), part.trim().to_string()));
                }
            }
        }
    }
    out
}

/// The command's words, its comment cut and a pipe or redirection after it dropped.
fn words(line: &str) -> (Vec<String>, String) {
    let (cmd, comment) = line.split_once(" #").unwrap_or((line, ""));
    let cmd = cmd.split(['|', '>']).next().unwrap();
    (cmd.split_whitespace().skip(1).map(String::from).collect(), comment.to_string())
}

/// Why a command is not run here, if it is not.
fn skipped(args: &[String], comment: &str) -> Option<String> {
    if let Some((_, why)) = comment.split_once("[not run: ") {
        return Some(why.trim_end_matches(']').to_string());
    }
    let envs = args.iter().position(|a| a == "--env").and_then(|i| args.get(i + 1));
    let guest = envs.is_some_and(|e| e.split(',').any(|e| GUESTS.iter().any(|g| e.starts_with(g))));
    (guest && std::env::var_os("OSCYCLES_GUIDE_GUESTS").is_none())
        .then(|| format!("boots a guest ({}): set OSCYCLES_GUIDE_GUESTS=1", envs.unwrap()))
}

/// Placeholders of the guide, and what stands for them here.
struct Stand {
    a: String,
    b: String,
    dir: PathBuf,
}

impl Stand {
    fn arg(&self, a: &str) -> String {
        match a {
            "A.json" | "RUN.json" | "oscycles-results/RUN.json" | "RUN" | "oscycles-results/RUN" => self.a.clone(),
            "B.json" | "A2.json" | "other-machine/*.json" => self.b.clone(),
            "report/" | "hist/" => self.dir.join(a).display().to_string(),
            "a.csv" => self.dir.join(a).display().to_string(),
            _ => a.to_string(),
        }
    }
}

/// The small settings a `run` gets, and `--bench` with one benchmark of
/// each suite it names (or of quick) unless it names benchmarks: one the
/// placeholders' runs measured where the suite has it, else its first.
fn small_run(args: &mut Vec<String>) {
    let has = |args: &[String], o: &str| args.iter().any(|a| a == o);
    if !has(args, "--bench") {
        let suites = args.iter().position(|a| a == "--suite").map_or("quick".to_string(), |i| args[i + 1].clone());
        let mut wheres: Vec<String> = Vec::new();
        let one_suite = !suites.contains(',');
        let first: Vec<String> = suites
            .split(',')
            .filter_map(|s| {
                let suite = oscycles::run::registry::find_suite(s).unwrap_or_else(|| panic!("the guide names suite {s}, which is none"));
                // A command's own --where keys: the benchmark chosen has them.
                let keys: Vec<&str> =
                    args.windows(2).filter(|w| w[0] == "--where").filter_map(|w| w[1].split_once('=')).map(|(k, _)| k).collect();
                // At the test scale every run of the guide gets (--scale test).
                let at_test = suite.cases_at(oscycles::families::bench::Scale::Test);
                let cases: Vec<_> = at_test.into_iter().filter(|(_, p)| keys.iter().all(|k| p.contains_key(*k))).collect();
                // The placeholders' runs measured these: a run compared with them (--until-verdict) shares them.
                let known = cases.iter().find(|(b, _)| ["syscall.getpid", "ipc.pipe"].contains(&b.id.as_str()));
                let (b, params) = known.or_else(|| cases.iter().find(|(b, _)| b.supported().is_ok()))?;
                // One suite: its one case, by its parameters (a sweep of sizes would take long).
                if one_suite {
                    for (k, v) in params {
                        wheres.push(format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), String::from)));
                    }
                }
                Some(b.id.to_string())
            })
            .collect();
        args.extend(["--bench".into(), first.join(",")]);
        if !has(args, "--where") {
            args.extend(wheres.into_iter().flat_map(|w| ["--where".to_string(), w]));
        }
    }
    // Rounds the command steers itself (auto, until a verdict) stay its own, within a small budget.
    let steered = args.iter().any(|a| a == "auto" || a == "--until-verdict");
    for (o, v) in [
        ("--rounds", "1"),
        ("--batches", "1"),
        ("--point-ms", "10"),
        ("--mem-bytes", "1M"),
        ("--budget", "0.05"),
        ("--cpus", "0,1"),
        ("--scale", "test"),
    ] {
        match args.iter().position(|a| a == o) {
            Some(_) if o == "--rounds" && steered => {}
            Some(i) => args[i + 1] = v.into(),
            None if o == "--rounds" && steered => {}
            None if o == "--budget" && steered => args.extend([o.into(), v.into()]),
            None if o == "--budget" || o == "--cpus" => {}
            None => args.extend([o.into(), v.into()]),
        }
    }
    if !has(args, "--iterations") && !has(args, "--batch-ms") {
        args.extend(["--iterations".into(), "1".into()]);
    }
    args.extend(["--no-counters".into(), "--quiet".into()]);
}

fn oscycles(args: &[String], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_oscycles")).args(args).current_dir(dir).env("XDG_CACHE_HOME", dir.join("cache")).output().unwrap()
}

/// Two small runs for the placeholders, saved in the store every command
/// of the guide uses by default (oscycles-results/oscycles.sqlite in `dir`,
/// their working directory).
fn two_runs(dir: &Path) -> (String, String) {
    std::fs::create_dir_all(dir.join("oscycles-results")).unwrap();
    let mut paths = Vec::new();
    for (i, env) in ["native", "native,container"].iter().enumerate() {
        let out_dir = dir.join(format!("run{i}"));
        let args: Vec<String> = [
            "run",
            "--suite",
            "syscall,l4-ipc",
            "--bench",
            "syscall.getpid,ipc.pipe",
            "--env",
            env,
            "--rounds",
            "2",
            "--batches",
            "2",
            "--iterations",
            "1",
            "--quiet",
            "--results",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([out_dir.display().to_string(), "--db".into(), "oscycles-results/oscycles.sqlite".into()])
        .collect();
        let out = oscycles(&args, dir);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        paths.push(only_json(&out_dir).display().to_string());
    }
    (paths[0].clone(), paths[1].clone())
}

#[test]
fn every_command_of_the_guide_runs() {
    let dir = tempdir("guide");
    let (a, b) = two_runs(&dir);
    let stand = Stand { a, b, dir: dir.clone() };
    let cmds = commands();
    assert!(cmds.len() >= 30, "the guide shows its commands: found {}", cmds.len());
    let (mut ran, mut failed, mut skips, mut times) = (0, Vec::new(), Vec::new(), Vec::new());
    for (page, line) in &cmds {
        let (args, comment) = words(line);
        if let Some(why) = skipped(&args, &comment) {
            skips.push(format!("{page}: {line}\n    not run: {why}"));
            continue;
        }
        let mut args: Vec<String> = args.iter().map(|a| stand.arg(a)).collect();
        if args.first().is_some_and(|c| c == "run") {
            small_run(&mut args);
        }
        if let Some(i) = args.iter().position(|a| a == "--seconds") {
            args[i + 1] = "1".into();
        }
        let t = std::time::Instant::now();
        let out = oscycles(&args, &dir);
        times.push((t.elapsed().as_secs_f64(), line.clone()));
        ran += 1;
        if !out.status.success() {
            failed.push(format!(
                "{page}: {line}\n    ran: oscycles {}\n    exit {:?}: {}",
                args.join(" "),
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
            ));
        }
    }
    times.sort_by(|a: &(f64, String), b| b.0.total_cmp(&a.0));
    let slowest: Vec<String> = times.iter().take(5).map(|(s, l)| format!("{s:.1} s: {l}")).collect();
    eprintln!("{ran} of the guide's {} commands ran; the slowest:\n{}\nskipped:\n{}", cmds.len(), slowest.join("\n"), skips.join("\n"));
    assert!(failed.is_empty(), "{} of the guide's commands failed:\n{}", failed.len(), failed.join("\n"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_command_that_is_wrong_fails_the_guide() {
    // The check can fail: a removed option is caught as the test catches it.
    let dir = tempdir("guide-bad");
    let out = oscycles(&words("oscycles run --no-such-option # made up").0, &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(skipped(&words("oscycles run --env native,qemu-tcg").0, "").is_some() || std::env::var_os("OSCYCLES_GUIDE_GUESTS").is_some());
    assert_eq!(skipped(&words("oscycles fleet run").0, " x [not run: no hosts]"), Some("no hosts".into()));
    let _ = std::fs::remove_dir_all(dir);
}
