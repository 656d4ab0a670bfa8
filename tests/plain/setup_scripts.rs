//! The set-up scripts under a package index that fails: a fake `apt-get`
//! and `dpkg-query` first on PATH (they install nothing: what they
//! "install" is a line in a file), a scratch cache root (OSCYCLES_CACHE),
//! and scripts/setup-hermit sourced with its three compile steps replaced by
//! stubs (the real ones take minutes and Debian's compiler), so that what
//! runs is the script's own sequence: install, key, build, record.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::tempdir;

/// apt-get as far as the scripts use it. State in $FAKE_APT: `known` (the
/// lists know the packages; `update` makes it, also when it fails, as apt
/// keeps the lists it got), `installed`, `calls`; `update-fails` and
/// `install-fails` hold how many of the next calls fail (a mirror mid-sync,
/// a network that drops).
const FAKE_APT_GET: &str = r#"#!/bin/bash
s=$FAKE_APT
echo "$*" >>"$s/calls"
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    -o) shift 2 ;;
    -*) shift ;;
    *) args+=("$1"); shift ;;
    esac
done
take() { local n; n=$(cat "$s/$1" 2>/dev/null || echo 0); [ "$n" -gt 0 ] && echo $((n - 1)) >"$s/$1"; }
case "${args[0]}" in
update)
    touch "$s/known"
    if take update-fails; then
        echo "E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-security/main/binary-i386/Packages.xz  File has unexpected size (346968 != 369616). Mirror sync in progress?" >&2
        echo "E: Some index files failed to download. They have been ignored, or old ones used instead." >&2
        exit 100
    fi ;;
install)
    [ -f "$s/known" ] || { echo "E: Unable to locate package ${args[1]}" >&2; exit 100; }
    if take install-fails; then
        echo "E: Failed to fetch http://deb.debian.org/debian/pool/main/r/rustc-web/x.deb  Could not connect to deb.debian.org:80 (203.0.113.80), connection timed out" >&2
        exit 100
    fi
    printf '%s\n' "${args[@]:1}" >>"$s/installed" ;;
*) echo "fake apt-get: ${args[0]} is not faked" >&2; exit 100 ;;
esac
"#;

/// dpkg-query -W -f=FORMAT PACKAGE, of what the fake apt-get installed.
const FAKE_DPKG_QUERY: &str = r#"#!/bin/bash
p=${!#}
grep -qx "$p" "$FAKE_APT/installed" 2>/dev/null || { echo "dpkg-query: no packages found matching $p" >&2; exit 1; }
case "$*" in
*Status*) printf 'install ok installed' ;;
*) printf '1.0-fake' ;;
esac
"#;

/// Hermit's compile steps as stubs: each counts its calls in $FAKE_APT/builds;
/// $FAKE_BUILD_FAILS makes the loader fail with that output.
const STUB_BUILDS: &str = r#"
build_kernel() { echo kernel >>"$FAKE_APT/builds"; mkdir -p "$1" && : >"$1/libhermit.a"; }
build_loader() {
    echo loader >>"$FAKE_APT/builds"
    [ -n "${FAKE_BUILD_FAILS:-}" ] && { echo "$FAKE_BUILD_FAILS" >>"$LOG"; return 1; }
    mkdir -p "$1" && echo loader >"$1/loader"
}
build_programs() { echo programs >>"$FAKE_APT/builds"; mkdir -p "$1" && echo program >"$1/program" && echo check >"$1/check"; }
"#;

struct Fake {
    dir: PathBuf,
}

impl Fake {
    fn new(name: &str) -> Fake {
        let dir = tempdir(name);
        for (file, text) in [("bin/apt-get", FAKE_APT_GET), ("bin/dpkg-query", FAKE_DPKG_QUERY)] {
            let p = dir.join(file);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir_all(dir.join("apt")).unwrap();
        Fake { dir }
    }

    fn set(&self, file: &str, text: &str) {
        std::fs::write(self.dir.join("apt").join(file), text).unwrap();
    }

    fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.dir.join("apt").join(file)).unwrap_or_default()
    }

    fn cache(&self) -> PathBuf {
        self.dir.join("cache/hermit")
    }

    /// scripts/setup-hermit's main, its compile steps stubbed, under the fakes.
    fn setup_hermit(&self, build_fails: Option<&str>) -> Output {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let script = format!(". '{}/scripts/setup-hermit'\n{STUB_BUILDS}\nmain", root.display());
        let path = format!("{}:{}", self.dir.join("bin").display(), std::env::var("PATH").unwrap());
        let mut c = Command::new("bash");
        c.args(["-c", &script])
            .env("PATH", path)
            .env("FAKE_APT", self.dir.join("apt"))
            .env("OSCYCLES_CACHE", self.dir.join("cache"))
            .env_remove("OSCYCLES_HERMIT_CACHE")
            .env("OSCYCLES_SETUP_PAUSE", "0");
        if let Some(out) = build_fails {
            c.env("FAKE_BUILD_FAILS", out);
        }
        c.output().unwrap()
    }
}

fn said(out: &Output) -> String {
    format!("exit {:?}\n{}", out.status.code(), String::from_utf8_lossy(&out.stderr))
}

/// The index refresh fails (the i386 mirror mid-sync of issue 57), yet the
/// lists apt got are enough: setup-hermit installs and builds, records nothing.
#[test]
fn setup_hermit_installs_when_the_package_index_fails_to_refresh_once() {
    let f = Fake::new("setup-index-fails");
    f.set("update-fails", "1");
    let out = f.setup_hermit(None);
    assert!(out.status.success(), "{}", said(&out));
    let calls = f.read("calls");
    assert!(calls.lines().filter(|l| l.contains("update")).count() == 1, "one refresh, failed and not fatal: {calls}");
    assert!(f.read("installed").contains("rustc-web"), "{}\n{calls}", said(&out));
    for file in ["loader", "program", "check", "versions"] {
        assert!(f.cache().join(file).is_file(), "{file}: {}", said(&out));
    }
    assert!(!f.cache().join("failed").exists() && !f.cache().join("failed.key").exists());
    // Installed and built: a second call finds it all and builds nothing.
    let out = f.setup_hermit(None);
    assert!(out.status.success(), "{}", said(&out));
    assert_eq!(f.read("builds").lines().count(), 3, "{}", f.read("builds"));
    let _ = std::fs::remove_dir_all(&f.dir);
}

/// An install the network fails every try: exit 1, the reason and apt's
/// words recorded for the environment's n/a, nothing kept as permanent;
/// the next call tries again and succeeds, and the record goes.
#[test]
fn a_failed_install_is_recorded_with_its_output_and_tried_again_by_the_next_call() {
    let f = Fake::new("setup-install-fails");
    f.set("known", "");
    f.set("install-fails", "3");
    let out = f.setup_hermit(None);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    let failed = std::fs::read_to_string(f.cache().join("failed")).unwrap();
    assert!(failed.starts_with("installing rustc-web") && failed.contains("Could not connect"), "{failed}");
    assert!(!f.cache().join("failed.key").exists(), "a network failure kept as permanent");
    assert_eq!(f.read("calls").lines().filter(|l| l.contains("install")).count(), 3, "three tries: {}", f.read("calls"));
    // What the environment says while the record is there: the reason with apt's words.
    let results = f.dir.join("results");
    let run = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["run", "--env", "hermit", "--suite", "syscall", "--bench", "syscall.getpid", "--batches", "2", "--quiet", "--results"])
        .arg(&results)
        .env("OSCYCLES_HERMIT_CACHE", f.cache())
        .output()
        .unwrap();
    let doc = crate::common::only_doc(&results);
    let why = doc["results"][0]["reason"].as_str().unwrap_or_else(|| panic!("{doc} {run:?}"));
    assert!(why.contains("installing rustc-web") && why.contains("Could not connect"), "{why}");
    // The next call: the install works now.
    let out = f.setup_hermit(None);
    assert!(out.status.success(), "{}", said(&out));
    assert!(f.cache().join("program").is_file() && !f.cache().join("failed").exists(), "{}", said(&out));
    let _ = std::fs::remove_dir_all(&f.dir);
}

/// A build that fails with its inputs at hand is kept under its key (the
/// next call says so and builds nothing); one whose output shows the
/// network is not, and the next call builds again.
#[test]
fn only_a_build_failure_without_the_network_is_kept_for_the_same_inputs() {
    let f = Fake::new("setup-build-fails");
    f.set("known", "");
    let out = f.setup_hermit(Some("error[E0308]: mismatched types"));
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    let failed = std::fs::read_to_string(f.cache().join("failed")).unwrap();
    assert!(failed.starts_with("building the Hermit loader failed") && failed.contains("E0308"), "{failed}");
    assert!(f.cache().join("failed.key").is_file());
    let loader_builds = || f.read("builds").lines().filter(|l| *l == "loader").count();
    let out = f.setup_hermit(None);
    assert_eq!(out.status.code(), Some(1), "the same inputs: {}", said(&out));
    assert!(said(&out).contains("scripts/setup --retry") && loader_builds() == 1, "{}", said(&out));
    // A build that failed on the network: recorded, not kept; the next call builds.
    std::fs::remove_file(f.cache().join("failed.key")).unwrap();
    let out = f.setup_hermit(Some("error: failed to download from `https://index.crates.io/x`: Could not resolve host"));
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(f.cache().join("failed").is_file() && !f.cache().join("failed.key").exists());
    let out = f.setup_hermit(None);
    assert!(out.status.success() && loader_builds() == 3, "{}", said(&out));
    assert!(!f.cache().join("failed").exists());
    let _ = std::fs::remove_dir_all(&f.dir);
}
