//! Every scripts/validate* still runs end to end: each in its --tiny mode
//! (one short round: its numbers mean nothing) must exit 0 and print its
//! table, so a renamed benchmark, metric or tool option breaks this test
//! instead of the next person who validates. The scripts install the tools
//! they compare with through `scripts/setup validate`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

#[test]
fn every_validate_script_runs_in_its_tiny_mode() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut scripts: Vec<_> = std::fs::read_dir(root.join("scripts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("validate"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 4, "{scripts:?}");
    for s in &scripts {
        let out = Command::new("python3").arg(s).arg("--tiny").current_dir(root).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{} --tiny failed ({}):\n{stdout}\n{}",
            s.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        // A table: some line holding a number after a label.
        assert!(
            stdout.lines().filter(|l| l.split_whitespace().any(|w| w.parse::<f64>().is_ok())).count() >= 1,
            "{}: no table in:\n{stdout}",
            s.display()
        );
    }
}

/// scripts/programs: every external program the project runs, with its Debian package.
fn declared(root: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root.join("scripts/programs")).expect("scripts/programs is readable");
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() >= 3).then(|| (w[0].to_string(), w[1].to_string()))
        })
        .collect()
}

/// The programs Rust code starts by name (a `Command::new` of a string literal) in `dir`, recursively.
fn rust_programs(dir: &Path, found: &mut BTreeSet<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_programs(&p, found);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            let pieces: Vec<&str> = text.split("Command::new(\"").collect();
            for (before, piece) in pieces.iter().zip(&pieces[1..]) {
                let name = piece.split('"').next().unwrap_or("");
                // clap::Command names a command line, not a program.
                if !name.contains('/') && !before.ends_with("clap::") {
                    found.insert((name.to_string(), p.display().to_string()));
                }
            }
        }
    }
}

/// The install step for every program is scripts/setup's, checked here so that the next
/// program used but never installed fails this test, not a new user's first `scripts/test`.
#[test]
fn every_program_the_project_runs_is_declared_and_installed_by_setup() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let programs = declared(root);
    assert!(programs.contains_key("mbw"), "scripts/programs lost mbw, which scripts/validate runs");
    // The validate scripts: their own audit reads their source (every call through scripts/tools.py).
    let audit = Command::new("python3").arg(root.join("scripts/tools.py")).arg("audit").output().unwrap();
    assert!(
        audit.status.success(),
        "a validate script runs a program scripts/programs does not declare:\n{}{}",
        String::from_utf8_lossy(&audit.stdout),
        String::from_utf8_lossy(&audit.stderr)
    );
    // The Rust code: the programs it starts by name.
    let mut used = BTreeSet::new();
    for dir in ["src", "tests"] {
        rust_programs(&root.join(dir), &mut used);
    }
    let build = std::fs::read_to_string(root.join("build.rs")).unwrap();
    for piece in build.split("Command::new(\"").skip(1) {
        used.insert((piece.split('"').next().unwrap().to_string(), "build.rs".into()));
    }
    let undeclared: Vec<_> = used.iter().filter(|(p, _)| !programs.contains_key(p)).collect();
    assert!(undeclared.is_empty(), "started by name but not in scripts/programs (program, file): {undeclared:?}");
    // scripts/setup installs the package of every declared program (`-`: not a Debian package).
    let list = Command::new(root.join("scripts/setup")).args(["validate", "--list"]).output().unwrap();
    assert!(list.status.success(), "scripts/setup validate --list: {}", String::from_utf8_lossy(&list.stderr));
    let installs: BTreeSet<String> = String::from_utf8_lossy(&list.stdout).lines().map(str::to_string).collect();
    let missing: Vec<_> = programs.iter().filter(|(_, pkg)| *pkg != "-" && !installs.contains(*pkg)).collect();
    assert!(missing.is_empty(), "scripts/setup does not install the package of (program, package): {missing:?}");
}

/// A validate script that meets a program it has not declared, or one that is not installed,
/// stops with one sentence (naming scripts/programs or scripts/setup), not a traceback.
#[test]
fn a_missing_or_undeclared_program_stops_a_script_with_one_sentence() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let probe = |program: &str, path: &str| {
        let code = format!("import sys; sys.argv[0] = 'validate-probe'; import tools; tools.run([{program:?}, '--version'])");
        Command::new("/usr/bin/python3").arg("-c").arg(code).env("PYTHONPATH", root.join("scripts")).env("PATH", path).output().unwrap()
    };
    let out = probe("no-such-tool", "/usr/bin:/bin");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("scripts/programs") && !err.contains("Traceback"), "{err}");
    // mbw is declared; with an empty PATH it is not found.
    let out = probe("mbw", "/nonexistent");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("scripts/setup validate") && err.contains("mbw") && !err.contains("Traceback"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
