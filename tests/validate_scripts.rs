//! Every scripts/validate* still runs end to end: each in its --tiny mode
//! (one short round: its numbers mean nothing) must exit 0 and print its
//! table, so a renamed benchmark, metric or tool option breaks this test
//! instead of the next person who validates. The scripts install the tools
//! they compare with through `scripts/setup validate`.

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
        assert!(stdout.lines().filter(|l| l.split_whitespace().any(|w| w.parse::<f64>().is_ok())).count() >= 1, "{}: no table in:\n{stdout}", s.display());
    }
}
