//! The store's backends through the binary: import rules on SQLite and on a
//! throwaway PostgreSQL (root: it runs initdb as the postgres user), and
//! many importers at once.

use crate::common;
use crate::common::pg;

use std::path::Path;
use std::process::{Command, Output};

fn oscycles(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oscycles")).args(args).output().expect("the binary runs")
}

fn fixture() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json")).unwrap()).unwrap()
}

fn write(dir: &Path, name: &str, doc: &serde_json::Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(doc).unwrap()).unwrap();
    p.display().to_string()
}

/// Import rules seen from the command line, on the store at `db`.
fn import_rules(db: &str, dir: &Path) {
    let doc = fixture();
    let a = write(dir, "a.json", &doc);
    let first = oscycles(&["import", "--db", db, &a]);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let again = oscycles(&["import", "--db", db, &a]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing added"), "{}", String::from_utf8_lossy(&again.stdout));
    let mut changed = doc.clone();
    changed["started_at"] = "2000-01-01T00:00:00Z".into();
    let b = write(dir, "b.json", &changed);
    let refused = oscycles(&["import", "--db", db, &b]);
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("different contents"));
    let runs = oscycles(&["runs", "--db", db]);
    assert!(String::from_utf8_lossy(&runs.stdout).contains("1 runs in"), "{}", String::from_utf8_lossy(&runs.stdout));
    // Many importers of new runs at once, four per run: every one stored
    // once, none lost, no importer failing on another's half-written run.
    // The race is narrow: several rounds make a regression show.
    for round in 0..4 {
        let files: Vec<String> = (0..16)
            .map(|i| {
                let mut d = doc.clone();
                d["id"] = format!("concurrent-{round}-{}", i % 4).into();
                write(dir, &format!("c{round}-{i}.json"), &d)
            })
            .collect();
        let children: Vec<std::process::Child> =
            files.iter().map(|f| Command::new(env!("CARGO_BIN_EXE_oscycles")).args(["import", "--db", db, f]).spawn().unwrap()).collect();
        for mut c in children {
            assert!(c.wait().unwrap().success(), "every importer succeeds: the same document twice adds nothing");
        }
    }
    let runs = oscycles(&["runs", "--db", db]);
    assert!(String::from_utf8_lossy(&runs.stdout).contains("17 runs in"), "{}", String::from_utf8_lossy(&runs.stdout));
}

#[test]
fn sqlite_import_rules() {
    let dir = common::tempdir("store-sqlite");
    import_rules(dir.join("s.sqlite").to_str().unwrap(), &dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn postgres_import_rules() {
    let server = pg::Postgres::start();
    let dir = common::tempdir("store-pg");
    import_rules(&server.url, &dir);
    let bad = oscycles(&["runs", "--db", "postgresql://postgres@/postgres?host=/nonexistent"]);
    assert_eq!(bad.status.code(), Some(2), "an unreachable server is a sentence: {}", String::from_utf8_lossy(&bad.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}
