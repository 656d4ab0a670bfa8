//! One way to write files (issue 58): outside `base::fsafe`, src/ calls none
//! of `std::fs::write`, `fs::copy`, `File::create` and `create_dir_all`
//! (each follows a link at its name, or accepts a directory someone else
//! made), but for the few places below, each said why.

use std::path::{Path, PathBuf};

/// The writes allowed outside fsafe: (file, call, why).
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "src/run/env/xen/dom0.rs",
        "File::create",
        "runs as /init of the Xen dom0 guest, in the guest's own initramfs: no other user exists there",
    ),
    ("src/run/env/xen/dom0.rs", "create_dir_all", "the toolstack's directories in the dom0 guest's own initramfs (as above)"),
    ("src/run/env/xen/dom0.rs", "fs::write", "the domU's configuration in the dom0 guest's own initramfs (as above)"),
    ("src/run/env/guest.rs", "create_dir_all", "mount points a guest's /init makes in its own root filesystem"),
];

const CALLS: &[&str] = &["fs::write", "fs::copy", "File::create", "create_dir_all"];

/// Whether `call` is at `at` in `line` as a name of its own (not the end of
/// a longer one: `ScratchFile::create`).
fn called(line: &str, call: &str) -> bool {
    line.match_indices(call).any(|(at, _)| line[..at].chars().last().is_none_or(|c| !(c.is_alphanumeric() || c == '_')))
}

/// The calls of `text` (the file `path`) that break the rule: code before
/// its tests module, comments left out.
fn breaches(path: &str, text: &str) -> Vec<String> {
    if path == "src/base/fsafe.rs" {
        return vec![];
    }
    let mut out = vec![];
    for (n, line) in text.lines().enumerate().take_while(|(_, l)| l.trim() != "#[cfg(test)]") {
        let code = line.split("//").next().unwrap_or("");
        for call in CALLS.iter().filter(|c| called(code, c)) {
            if !ALLOWED.iter().any(|(f, c, _)| *f == path && c == call) {
                out.push(format!("{path}:{}: {call}: {}", n + 1, line.trim()));
            }
        }
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every breach in src/, with `extra` (path, text) files added.
fn check_tree(extra: &[(&str, &str)]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    sources(&root.join("src"), &mut files);
    let mut found: Vec<String> = files
        .iter()
        .flat_map(|f| breaches(&f.strip_prefix(root).unwrap().display().to_string(), &std::fs::read_to_string(f).unwrap()))
        .collect();
    found.extend(extra.iter().flat_map(|(p, t)| breaches(p, t)));
    found
}

#[test]
fn files_are_written_only_through_fsafe() {
    let found = check_tree(&[]);
    assert!(found.is_empty(), "write files through oscycles::base::fsafe (or justify an entry of ALLOWED):\n{}", found.join("\n"));
    for (f, _, why) in ALLOWED {
        assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join(f).exists(), "ALLOWED names {f}, which is gone");
        assert!(why.len() > 20, "{f}: say why");
    }
}

#[test]
fn a_write_added_outside_fsafe_is_found() {
    let planted = "fn keep(p: &std::path::Path) {\n    std::fs::write(p.join(\"x\"), \"y\").unwrap();\n}\n\
                   fn copy(a: &Path, b: &Path) { let _ = fs::copy(a, b); let _ = File::create(b); }\n\
                   fn ok() { let _ = ScratchFile::create(d, \"x\", 1); } // std::fs::write in a comment\n\
                   #[cfg(test)]\nmod tests { fn t() { std::fs::create_dir_all(\"x\").unwrap(); } }\n";
    let found = check_tree(&[("src/run/planted.rs", planted)]);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found[0].starts_with("src/run/planted.rs:2: fs::write"), "{found:#?}");
    // Allowed in one file, not in another.
    assert_eq!(check_tree(&[("src/run/env/guest.rs", "fn m() { std::fs::create_dir_all(\"/m\"); }")]).len(), 0);
    assert_eq!(check_tree(&[("src/run/env/qemu.rs", "fn m() { std::fs::create_dir_all(\"/m\"); }")]).len(), 1);
}
