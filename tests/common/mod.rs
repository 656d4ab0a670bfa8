//! Helpers shared by the integration tests (each test binary uses some).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A fresh, empty directory for one test, named after it and this process.
pub fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("oscycles-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The one run document a run wrote into `dir`.
pub fn only_json(dir: &Path) -> PathBuf {
    let docs: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    assert_eq!(docs.len(), 1, "{docs:?}");
    docs.into_iter().next().unwrap()
}

/// That document, parsed.
pub fn only_doc(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(only_json(dir)).unwrap()).unwrap()
}
