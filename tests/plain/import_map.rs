//! scripts/import-map: the map of imports between src/'s top-level modules
//! finds a circle, names it, and fails on one that is not recorded as known,
//! and on an import up the declared layers; the real tree passes.

use std::path::Path;
use std::process::Command;

use crate::common;

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/import-map")
}

/// Runs the script over a tree of `files` (path, text) with `known` circles
/// (and no layers).
fn map_of(files: &[(&str, &str)], known: &str) -> (bool, String) {
    map_with_layers(files, known, None)
}

fn map_with_layers(files: &[(&str, &str)], known: &str, layers: Option<&str>) -> (bool, String) {
    let d = common::tempdir("import-map");
    for (p, text) in files {
        let f = d.join("src").join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    }
    std::fs::write(d.join("known"), known).unwrap();
    if let Some(l) = layers {
        std::fs::write(d.join("layers"), l).unwrap();
    }
    let out = Command::new(script())
        .env("OSCYCLES_IMPORT_MAP_SRC", d.join("src"))
        .env("OSCYCLES_IMPORT_MAP_KNOWN", d.join("known"))
        .env("OSCYCLES_IMPORT_MAP_LAYERS", d.join("layers"))
        .output()
        .expect("the script runs");
    let _ = std::fs::remove_dir_all(&d);
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn a_new_circle_of_imports_fails_and_a_known_one_or_none_passes() {
    let circle = [
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("a.rs", "use crate::b::Thing;\n"),
        // A grouped import and a super:: that reaches the crate root.
        ("b/mod.rs", "use crate::{c, a::Other};\n"),
        ("b/inner.rs", "use super::super::c::More;\n"),
        ("c.rs", "// crate::a in a comment is not an import\n"),
    ];
    let (ok, out) = map_of(&circle, "");
    assert!(!ok, "{out}");
    assert!(out.contains("circle: a b") && out.contains("a -> b") && out.contains("b -> a"), "{out}");
    assert!(!out.contains("c -> a"), "a comment is not an import: {out}");
    let (ok, out) = map_of(&circle, "# known\na b\n");
    assert!(ok, "a known circle passes: {out}");
    let (ok, out) = map_of(&[("lib.rs", ""), ("a.rs", "use crate::b::X;\n"), ("b.rs", "")], "");
    assert!(ok && out.contains("0 circles"), "{out}");
}

#[test]
fn an_import_up_the_layers_or_a_module_in_no_layer_fails() {
    let tree = [("lib.rs", ""), ("top.rs", "use crate::low::X;\n"), ("low.rs", "use crate::top::Y;\n")];
    let layers = "# top to bottom\nupper: top\nlower: low\n";
    let (ok, out) = map_with_layers(&tree, "top low\n", Some(layers));
    assert!(!ok && out.contains("low (lower) imports top (upper), a layer above it"), "{out}");
    let downward = [tree[0], tree[1], ("low.rs", "")];
    let (ok, out) = map_with_layers(&downward, "", Some(layers));
    assert!(ok && out.contains("every import goes to its own layer or one below"), "{out}");
    let (ok, out) = map_with_layers(&downward, "", Some("upper: top\n"));
    assert!(!ok && out.contains("low is in no layer"), "{out}");
}

#[test]
fn modules_in_layer_folders_are_mapped_by_their_own_names_and_must_be_in_their_layers_folder() {
    let layers = "upper: top\nlower: low side\n";
    // top imports low through the root's re-export and through the layer's
    // path; side reaches low as a sibling (super:: up to the layer's folder).
    let tree = [
        ("lib.rs", "pub mod upper;\npub mod lower;\npub use upper::top;\npub use lower::{low, side};\n"),
        ("upper/mod.rs", "pub mod top;\n"),
        ("upper/top.rs", "use crate::low::X;\nuse crate::lower::side::Z;\n"),
        ("lower/mod.rs", "pub mod low;\npub mod side;\n"),
        ("lower/low.rs", ""),
        ("lower/side/mod.rs", "use super::low::X;\n"),
    ];
    let (ok, out) = map_with_layers(&tree, "", Some(layers));
    assert!(ok && out.contains("3 modules, 3 imports"), "{out}");
    let upward = [tree[0], tree[1], tree[2], tree[3], ("lower/low.rs", "use crate::top::Y;\n"), tree[5]];
    let (ok, out) = map_with_layers(&upward, "low top\n", Some(layers));
    assert!(!ok && out.contains("low (lower) imports top (upper), a layer above it"), "{out}");
    let misplaced = [tree[0], tree[1], tree[2], tree[3], ("upper/low.rs", ""), tree[5]];
    let (ok, out) = map_with_layers(&misplaced, "", Some(layers));
    assert!(!ok && out.contains("low (layer lower) is kept in src/upper/"), "{out}");
}

#[test]
fn a_circle_among_environment_files_or_family_folders_fails_as_among_modules() {
    // Environment files: a -> b through the folder's path, b -> a as a
    // sibling (super::), c -> a alone; a family folder's file reaches
    // another family through the schema's re-export, which reaches back.
    let tree = [
        ("lib.rs", "pub mod run;\npub mod families;\n"),
        ("run/mod.rs", "pub mod env;\n"),
        ("run/env/mod.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("run/env/a.rs", "use crate::run::env::b::start;\n"),
        ("run/env/b.rs", "use super::{a::Guest, c};\n"),
        ("run/env/c.rs", "use super::a::Guest;\n"),
        ("families/mod.rs", "pub mod bench;\n"),
        ("families/bench/mod.rs", "pub mod schema;\npub mod x;\npub mod y;\n"),
        ("families/bench/schema.rs", "pub use crate::families::bench::x::schema as x;\n"),
        ("families/bench/x/mod.rs", "pub mod schema;\n"),
        ("families/bench/x/schema.rs", "use super::super::y::shared;\n"),
        ("families/bench/y/mod.rs", "use crate::families::bench::schema::x::Params;\n"),
    ];
    let (ok, out) = map_of(&tree, "");
    assert!(!ok, "{out}");
    assert!(out.contains("circle of files: env/a env/b env/c"), "{out}");
    assert!(out.contains("env/a -> env/b") && out.contains("env/b -> env/a") && out.contains("env/c -> env/a"), "{out}");
    assert!(out.contains("circle of files: bench/x bench/y") && out.contains("bench/y -> bench/x"), "{out}");
    let (ok, out) = map_of(&tree, "env/a env/b env/c\nbench/x bench/y\n");
    assert!(ok, "known circles of files pass: {out}");
    // Cut: no circle left among the files.
    let cut = [
        tree[0],
        tree[1],
        tree[2],
        tree[3],
        ("run/env/b.rs", "use super::c;\n"),
        ("run/env/c.rs", ""),
        tree[6],
        tree[7],
        tree[8],
        tree[9],
        ("families/bench/x/schema.rs", ""),
        tree[11],
    ];
    let (ok, out) = map_of(&cut, "");
    assert!(ok && out.contains("3 imports between them, 0 circles"), "{out}");
}

#[test]
fn the_source_tree_has_no_circle_beyond_the_known_ones() {
    let out = Command::new(script()).output().expect("the script runs");
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}
