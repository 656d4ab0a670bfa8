// Records the git revision the binary was built from.
fn main() {
    let rev = std::process::Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=OSCYCLES_GIT={rev}");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
    compile_forker("forker-dynamic", &[]);
    compile_forker("forker-static", &["-static"]);
    // The x86 guests and the x86 host's QEMU plugin only for an x86-64
    // oscycles: on aarch64 (scripts/build-aarch64, or cargo on an ARM
    // machine) the files are empty, and the environments that boot them
    // (microvm, hermit-microvm, sel4, mach) and --kernel-counters say n/a
    // there (EnvError::x86_only, vmm's aarch64.rs) before using them.
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("x86_64") {
        let dir = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
        for f in ["sel4-roottask.elf", "sel4-check.elf", "mach-task", "mach-check", "kcount.so"] {
            std::fs::write(dir.join(f), b"").unwrap_or_else(|e| panic!("writing {f} in OUT_DIR: {e}"));
        }
    } else {
        assemble_guest("src/families/bench/microvm/guest/microvm16.S", "microvm16.bin", "--32", "elf_i386");
        assemble_guest("src/families/bench/microvm/guest/microvm64.S", "microvm64.bin", "--64", "elf_x86_64");
        compile_sel4_root_task(&["guest/sel4/roottask.c", HARNESS], "sel4-roottask.elf");
        compile_sel4_root_task(&["guest/sel4/check.c"], "sel4-check.elf");
        compile_mach_task(&["guest/mach/task.c", HARNESS], "mach-task");
        compile_mach_task(&["guest/mach/check.c"], "mach-check");
        build_kcount_plugin("kcount.so");
    }
}

/// The C compiler for the target: cc's own variables (CC_<target>, then
/// TARGET_CC when cross-compiling, then CC), else `cc` (Rust's linker on
/// Linux). scripts/build-aarch64 sets CC_aarch64_unknown_linux_gnu.
fn target_cc() -> String {
    let target = std::env::var("TARGET").expect("cargo sets TARGET").replace('-', "_");
    let cross = std::env::var("TARGET").ok() != std::env::var("HOST").ok();
    let mut vars = vec![format!("CC_{target}")];
    if cross {
        vars.push("TARGET_CC".into());
    }
    vars.push("CC".into());
    for v in &vars {
        println!("cargo:rerun-if-env-changed={v}");
    }
    vars.iter().find_map(|v| std::env::var(v).ok()).unwrap_or_else(|| "cc".into())
}

/// The QEMU plugin of `--kernel-counters` (the workspace's `plugin/`
/// crate, a cdylib), built by a cargo of its own and copied to `out` in
/// OUT_DIR, where the binary embeds it (`run::env::kcount`). Its own
/// target directory beside this profile's (the outer build holds the lock
/// of its own), always release, stripped, and without this build's flags:
/// `+crt-static` (.cargo/config.toml) would drop a cdylib, and clippy's
/// wrapper would only check it. Its dependencies are locked in the
/// workspace's Cargo.lock and fetched with the rest (`cargo fetch`).
fn build_kcount_plugin(out: &str) {
    let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("cargo sets {k}"));
    let out_dir = std::path::PathBuf::from(var("OUT_DIR"));
    // OUT_DIR is <profile>/build/oscycles-<hash>/out.
    let profile_dir = out_dir.ancestors().nth(3).expect("OUT_DIR lies three levels below the profile's directory");
    let target_dir = profile_dir.join("kcount");
    let target = var("TARGET");
    let mut cmd = std::process::Command::new(var("CARGO"));
    cmd.args(["build", "--release", "--quiet", "-p", "oscycles-kcount", "--target", &target, "--config", "profile.release.strip=true"])
        .arg("--target-dir")
        .arg(&target_dir)
        .current_dir(var("CARGO_MANIFEST_DIR"))
        .env("CARGO_ENCODED_RUSTFLAGS", "")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CARGO_TARGET_DIR");
    if std::env::var_os("CARGO_NET_OFFLINE").is_some() {
        cmd.arg("--offline");
    }
    let st = cmd.status().unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(st.success(), "building the kernel-counters plugin (plugin/) failed: {cmd:?}");
    let so = target_dir.join(&target).join("release/liboscycles_kcount.so");
    std::fs::copy(&so, out_dir.join(out)).unwrap_or_else(|e| panic!("copying {}: {e}", so.display()));
    for f in ["plugin/Cargo.toml", "plugin/src", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={f}");
    }
}

/// The flags every freestanding 32-bit guest program is compiled with
/// (guest/mach, guest/sel4; both include guest/freestanding): no C
/// library, no position independence, warnings as errors.
const FREESTANDING_32: [&str; 12] = [
    "-m32",
    "-march=i686",
    "-O2",
    "-ffreestanding",
    "-fno-pic",
    "-fno-pie",
    "-fno-stack-protector",
    "-fno-asynchronous-unwind-tables",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-function",
];

/// The freestanding guests' shared library (guest/freestanding/harness.h):
/// the host's words, the harness loop, the samples document; compiled into
/// each guest program (not into the independent checks).
const HARNESS: &str = "guest/freestanding/harness.c";

/// A freestanding 32-bit guest program: each of `sources` compiled with
/// [`FREESTANDING_32`] and `extra`, linked by ld (elf_i386) with `link`
/// into OUT_DIR/`out`; rebuilt when they or `deps` change. gcc's -m32 needs
/// no 32-bit C library for -ffreestanding.
fn compile_guest_32(sources: &[&str], out: &str, extra: &[&str], link: &[&str], deps: &[&str]) {
    let dir = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let run = |cmd: &mut std::process::Command| {
        let st = cmd.status().unwrap_or_else(|e| panic!("running {cmd:?}: {e} (gcc and binutils)"));
        assert!(st.success(), "{cmd:?} failed");
    };
    let objects: Vec<std::path::PathBuf> = (0..sources.len()).map(|i| dir.join(format!("{out}.{i}.o"))).collect();
    for (src, obj) in sources.iter().zip(&objects) {
        run(std::process::Command::new(&cc).args(FREESTANDING_32).args(extra).arg("-c").arg(src).arg("-o").arg(obj));
    }
    run(std::process::Command::new("ld").args(["-m", "elf_i386"]).args(link).arg("-o").arg(dir.join(out)).args(&objects));
    for f in sources.iter().chain(deps).chain(&["guest/freestanding/frame.h", "guest/freestanding/harness.h", "guest/freestanding/marks.h"])
    {
        println!("cargo:rerun-if-changed={f}");
    }
}

/// A GNU Mach bootstrap task (the mach environment's guest) of `sources`:
/// linked static, ET_EXEC non-PIE, each PT_LOAD on its own page (GNU
/// Mach's loader allocates each segment apart and asserts it could).
fn compile_mach_task(sources: &[&str], out: &str) {
    let link = ["-static", "-nostdlib", "-e", "_start", "-z", "noexecstack", "-z", "max-page-size=4096"];
    compile_guest_32(sources, out, &["-fno-builtin", "-fcf-protection=none"], &link, &["guest/mach/mach.h"]);
}

/// A root task of the sel4 environment (guest/sel4): `sources` with its
/// entry (start.S), linked at 4 MiB as one segment (roottask.ld).
fn compile_sel4_root_task(sources: &[&str], out: &str) {
    let link = ["-nostdlib", "-static", "-z", "noexecstack", "--no-warn-rwx-segments", "-T", "guest/sel4/roottask.ld"];
    let deps = ["guest/sel4/roottask.ld", "guest/sel4/sel4.h"];
    let sources: Vec<&str> = std::iter::once("guest/sel4/start.S").chain(sources.iter().copied()).collect();
    compile_guest_32(&sources, out, &["-nostdlib", "-static", "-mgeneral-regs-only"], &link, &deps);
}

/// The process proc.* rows fork from (src/families/bench/proc/forker.c), linked as
/// `link` says: dynamically (cc's default; lmbench's own kind of process)
/// or statically (-static). Stripped: its size is part of what it measures.
fn compile_forker(out: &str, link: &[&str]) {
    let src = "src/families/bench/proc/forker.c";
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join(out);
    let cc = target_cc();
    let st = std::process::Command::new(&cc)
        .args(["-O1", "-s"])
        .args(link)
        .arg("-o")
        .arg(&out)
        .arg(src)
        .status()
        .unwrap_or_else(|e| panic!("running {cc}: {e} (a C compiler: Rust's linker on Linux is cc already)"));
    assert!(st.success(), "{cc} {src} {link:?} failed (-static needs the C library's static archive, libc6-dev)");
    println!("cargo:rerun-if-changed={src}");
}

/// Assembles a microvm guest with GNU as and links it as a flat binary at
/// guest address 0x1000 (binutils come with gcc).
fn assemble_guest(src: &str, out: &str, as_mode: &str, ld_mode: &str) {
    let dir = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let obj = dir.join(format!("{out}.o"));
    let run = |cmd: &mut std::process::Command| {
        let st = cmd.status().unwrap_or_else(|e| panic!("running {cmd:?}: {e} (binutils, which come with gcc)"));
        assert!(st.success(), "{cmd:?} failed");
    };
    run(std::process::Command::new("as").arg(as_mode).arg("-I").arg("src/families/bench/microvm/guest").arg("-o").arg(&obj).arg(src));
    run(std::process::Command::new("ld")
        .args(["-m", ld_mode, "-Ttext=0x1000", "-e", "_start", "--oformat", "binary", "-o"])
        .arg(dir.join(out))
        .arg(&obj));
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-changed=src/families/bench/microvm/guest/common.S");
}
