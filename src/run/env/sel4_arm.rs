//! `sel4-arm`: seL4 on ARM as a column, the L4 performance page's own ISA.
//! QEMU emulates one of two i.MX boards (`--arm-board`): imx7, the
//! mcimx7d-sabre (Cortex-A7), the default, whose PMU cycle counter counts
//! every guest instruction under `-icount shift=0`; or imx6, the sabrelite
//! (Cortex-A9, the Pandaboard's core), whose cycle counter QEMU 7.2 leaves
//! at 0 and whose i.MX GPT counts instead (66 MHz: 15.15 guest
//! instructions a tick). scripts/setup-sel4-arm builds into [`CACHE`]
//! seL4 5.0.0 for each board (the source crates.io ships in sel4-sys
//! 0.0.28, aarch32, release, fastpath), oscycles' loader for each board and
//! one root task and one check for both (guest/sel4-arm). QEMU loads the
//! loader as the board's kernel and the kernel's and root task's ELF files
//! unchanged at fixed addresses (its generic loader device); the loader
//! places them, turns on the MMU and enters seL4. The host writes the plan
//! into the root task's image (the marker of the ia32 root task); the task
//! finds its board, says hello, measures, sends its samples framed over the
//! board's UART in guest instructions, and ends QEMU through the watchdog
//! (`-no-reboot`: QEMU exits with status 0). The guest-program kit
//! ([`super::program`]) does the rest.
//!
//! Its `words` count 32-bit message registers, as the page's ARM table
//! does (MR0..3 travel in machine registers: 0..4 take the fastpath); each
//! case states the harness's own work (`harness_batch_cycles`: the same
//! loop with the server's work done in place of the call) for
//! scripts/validate-sel4-arm, which boots the bare check beside it.
//!
//! `--kernel-counters` loads oscycles' QEMU plugin into qemu-system-arm
//! (the same plugin, API 1; it takes the guest's instruction set from
//! QEMU's target): the root task marks its timed batches with ARM's marks
//! (guest/freestanding/marks.h), and each cell carries its kernel's
//! instructions (at the kernel window's addresses), entries, and TTBR0 and
//! CONTEXTIDR writes.

use super::error::{EnvError, OwnError};
use super::guest::GuestMode;
use super::kcount::{KERNEL_COUNTERS_OPTIONS, KernelCountersArgs};
use super::options::{EnvOptions, OwnOptions};
use super::program::{At, Boot, Check, GuestProgram, Machine, Names};
use super::vm::{Accel, Finish};
use crate::run::plan::PlannedCase;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where scripts/setup-sel4-arm leaves its build: `<board>/kernel.elf`,
/// `<board>/loader.elf`, `programs/roottask.elf`, `programs/check.elf`,
/// `versions`; or `failed` (the reason and the log's last lines).
pub const CACHE: &str = "/var/cache/oscycles/sel4-arm";

/// The command that builds it, as reasons name it.
const BUILDS: &str = "scripts/setup-sel4-arm (run by scripts/setup)";

/// The VMM.
const QEMU_ARM: &str = "qemu-system-arm";

/// What it is, for `--env`'s help.
const ABOUT: &str = "the seL4 microkernel on ARM (5.0.0 from crates.io sel4-sys, aarch32 release with the fastpath) and oscycles' loader and root task, booted by qemu-system-arm on an i.MX board (--arm-board imx7, the default, or imx6) under the instruction counter: guest instructions, payloads in 32-bit message registers";

/// How the root task's threads are scheduled.
const POLICY: &str = "seL4's scheduler (fixed priority 255, round robin)";

/// The RAM QEMU gives a board, from its base (guest/sel4-arm/board.h).
const MEM_MIB: u32 = 1024;
/// Where QEMU's generic loader puts the kernel's and the root task's ELF
/// files, above the board's RAM base (board.h's KERNEL_BLOB, TASK_BLOB).
const KERNEL_BLOB: u64 = 0x3000_0000;
const TASK_BLOB: u64 = 0x3400_0000;
/// The largest image the loader reads at a blob address (board.h's BLOB_MAX).
const BLOB_MAX: u64 = 0x0400_0000;

/// The build's directory: [`CACHE`], or `OSCYCLES_SEL4_ARM_CACHE` (as for
/// scripts/setup-sel4-arm; the tests point it at a missing or failed build).
fn cache_dir() -> PathBuf {
    std::env::var_os("OSCYCLES_SEL4_ARM_CACHE").map_or_else(|| PathBuf::from(CACHE), PathBuf::from)
}

/// The boards QEMU 7.2 emulates that seL4 5.0.0 has a platform for.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArmBoard {
    Imx7,
    Imx6,
}

impl ArmBoard {
    /// Its directory in the cache, as scripts/setup-sel4-arm names it.
    fn dir(self) -> &'static str {
        match self {
            ArmBoard::Imx7 => "imx7",
            ArmBoard::Imx6 => "imx6",
        }
    }

    /// QEMU's machine type.
    fn machine(self) -> &'static str {
        match self {
            ArmBoard::Imx7 => "mcimx7d-sabre",
            ArmBoard::Imx6 => "sabrelite",
        }
    }

    /// Its RAM's physical base (board.h's PHYS_BASE).
    fn phys_base(self) -> u64 {
        match self {
            ArmBoard::Imx7 => 0x8000_0000,
            ArmBoard::Imx6 => 0x1000_0000,
        }
    }

    /// Its CPU and the clock the root task reads there.
    fn about(self) -> &'static str {
        match self {
            ArmBoard::Imx7 => "i.MX7 Dual, Cortex-A7; PMCCNTR, one count a guest instruction",
            ArmBoard::Imx6 => "i.MX6 Quad, Cortex-A9; the i.MX GPT at 66 MHz, 15.15 guest instructions a tick",
        }
    }
}

/// sel4-arm's own option.
#[derive(clap::Args, Debug, Clone)]
pub struct BoardArgs {
    /// The board sel4-arm boots seL4 on: imx7 (QEMU's mcimx7d-sabre,
    /// Cortex-A7; the default: its PMU cycle counter counts each guest
    /// instruction) or imx6 (sabrelite, Cortex-A9, the Pandaboard's core:
    /// QEMU 7.2 gives it no cycle counter, the i.MX GPT counts 15.15 guest
    /// instructions a tick, which the root task's batches of at least
    /// 2000 ticks resolve to better than 0.05%).
    #[arg(long, default_value = "imx7", value_enum)]
    pub arm_board: ArmBoard,
}

/// seL4 on ARM under QEMU with oscycles' loader and root task.
pub struct Sel4Arm;

/// Why seL4 on ARM cannot be booted.
#[derive(Debug, thiserror::Error)]
pub enum Sel4ArmError {
    /// The reason and the log's last lines, as scripts/setup-sel4-arm left them.
    #[error("sel4-arm: the build failed: {0} ({BUILDS} builds it again)")]
    BuildFailed(String),
    #[error("sel4-arm: not built ({} missing; {BUILDS} builds seL4 for ARM into {})", missing.display(), dir.display())]
    NotBuilt { missing: PathBuf, dir: PathBuf },
    #[error("sel4-arm: reading {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("sel4-arm: {} is no root task of scripts/setup-sel4-arm's ({why}; {BUILDS} builds it again)", path.display())]
    BadImage { path: PathBuf, why: String },
    #[error(
        "sel4-arm: the boards' kernels begin at different addresses (imx7 {imx7:#x}, imx6 {imx6:#x}): --kernel-counters cannot tell one kernel from user code ({BUILDS} builds them again)"
    )]
    KernelWindows { imx7: u64, imx6: u64 },
}

impl OwnError for Sel4ArmError {}

/// What scripts/setup-sel4-arm built: its directory and versions line.
pub struct Build {
    dir: PathBuf,
    versions: String,
}

impl Build {
    /// The file `rel` of the build, or that it is missing.
    fn file(&self, rel: &str) -> Result<PathBuf, Sel4ArmError> {
        let path = self.dir.join(rel);
        if path.is_file() { Ok(path) } else { Err(Sel4ArmError::NotBuilt { missing: path, dir: self.dir.clone() }) }
    }
}

/// The build in `dir`, or why there is none.
fn find_build(dir: &Path) -> Result<Build, Sel4ArmError> {
    if let Ok(why) = std::fs::read_to_string(dir.join("failed")) {
        return Err(Sel4ArmError::BuildFailed(why.lines().collect::<Vec<_>>().join(" | ")));
    }
    let versions = dir.join("versions");
    if !versions.is_file() {
        return Err(Sel4ArmError::NotBuilt { missing: versions, dir: dir.to_path_buf() });
    }
    Ok(Build { dir: dir.to_path_buf(), versions: std::fs::read_to_string(versions).unwrap_or_default().trim().to_string() })
}

/// An image of the build, read whole but no larger than the loader takes.
fn read_image(path: &Path) -> Result<Vec<u8>, Sel4ArmError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(BLOB_MAX + 1).read_to_end(&mut bytes));
    read.map_err(|source| Sel4ArmError::Read { path: path.to_path_buf(), source })?;
    if bytes.len() as u64 > BLOB_MAX {
        return Err(Sel4ArmError::BadImage { path: path.to_path_buf(), why: format!("larger than the loader's {BLOB_MAX} bytes") });
    }
    Ok(bytes)
}

/// A path as one value of a QEMU option list (its commas doubled).
fn qemu_value(p: &Path) -> String {
    p.display().to_string().replace(',', ",,")
}

impl GuestProgram for Sel4Arm {
    type Build = Build;

    fn names(&self) -> Names {
        Names { env: "sel4-arm", system: "seL4 on ARM", policy: POLICY, about: ABOUT }
    }

    /// `--arm-board`, and `--kernel-counters` (oscycles' plugin in
    /// qemu-system-arm); no `--accel`: always the instruction counter.
    fn options(&self) -> Option<OwnOptions> {
        Some(OwnOptions::of::<BoardArgs>("sel4-arm-board").and::<KernelCountersArgs>(KERNEL_COUNTERS_OPTIONS))
    }

    /// Only under the instruction counter: the boards' clocks count guest
    /// instructions there, and nothing else QEMU's ARM emulation has does.
    fn accel(&self, _: &EnvOptions) -> Result<Accel, EnvError> {
        Ok(Accel::Icount)
    }

    fn find(&self) -> Result<Build, EnvError> {
        Ok(find_build(&cache_dir())?)
    }

    fn image(&self, build: &Build, boot: Boot, words: &str, _: GuestMode) -> Result<Vec<u8>, EnvError> {
        let path = build.file(match boot {
            Boot::Program => "programs/roottask.elf",
            Boot::Check => "programs/check.elf",
        })?;
        let image = read_image(&path)?;
        if boot == Boot::Check {
            return Ok(image);
        }
        super::sel4::with_args(&image, words).map_err(|e| Sel4ArmError::BadImage { path, why: e.to_string() }.into())
    }

    /// One CPU (a one-node kernel), 1 GiB from the board's RAM base; the
    /// board's serial0 to nowhere, serial1 (the root task's console) on
    /// QEMU's stdout and logged.
    fn machine(&self, build: &Build, at: &At) -> Result<Machine, EnvError> {
        let board = at.o.own.get::<BoardArgs>()?.arm_board;
        let (kernel, loader) = (build.file(&format!("{}/kernel.elf", board.dir()))?, build.file(&format!("{}/loader.elf", board.dir()))?);
        let mut cmd = Command::new(QEMU_ARM);
        cmd.args(["-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none", "-no-reboot"]);
        cmd.args(["-m", &MEM_MIB.to_string(), "-smp", "1", "-machine", board.machine()]).args(at.accel.qemu_args());
        cmd.arg("-kernel").arg(&loader);
        for (file, at_offset) in [(kernel.as_path(), KERNEL_BLOB), (at.image, TASK_BLOB)] {
            cmd.arg("-device").arg(format!("loader,file={},addr={:#x},force-raw=on", qemu_value(file), board.phys_base() + at_offset));
        }
        cmd.args(["-serial", "null"]);
        cmd.arg("-chardev").arg(format!("stdio,id=con,signal=off,logfile={}", at.console.display()));
        cmd.args(["-serial", "chardev:con"]);
        Ok(Machine::Own { cmd, vmm: QEMU_ARM, machine: board.machine().into() })
    }

    /// Where the kernel's instructions begin, from its ELF: seL4 5.0.0's
    /// aarch32 kernel window, from 0xe0000000 (its PPTR_BASE; its vectors
    /// and device mappings lie above, the root task and the loader below).
    /// Both boards' kernels are read and must agree (the hook does not
    /// know the board; seL4 places the window the same on both).
    fn kernel_base(&self, build: &Build) -> Result<Option<u64>, EnvError> {
        let base =
            |b: ArmBoard| -> Result<u64, EnvError> { Ok(super::kcount::kernel_base(&build.file(&format!("{}/kernel.elf", b.dir()))?)?) };
        let (imx7, imx6) = (base(ArmBoard::Imx7)?, base(ArmBoard::Imx6)?);
        if imx7 != imx6 {
            return Err(Sel4ArmError::KernelWindows { imx7, imx6 }.into());
        }
        Ok(Some(imx7))
    }

    fn facts(&self, build: &Build) -> Map<String, Value> {
        let mut f = Map::new();
        f.insert("kernel".into(), json!("seL4 5.0.0"));
        f.insert("kernel_arch".into(), json!("aarch32 (ARMv7-A)"));
        f.insert("kernel_config".into(), json!("release (no debug build, no printing), fastpath, one node, PMU readable in user mode"));
        let boards: Vec<String> =
            [ArmBoard::Imx7, ArmBoard::Imx6].iter().map(|b| format!("{} = {} ({})", b.dir(), b.machine(), b.about())).collect();
        f.insert("boards".into(), json!(boards.join("; ")));
        f.insert("payload_unit".into(), json!(crate::families::bench::schema::ipc::MESSAGE_REGISTERS));
        f.insert("kernel_build".into(), json!(build.dir.display().to_string()));
        f.insert("versions".into(), json!(build.versions));
        f
    }

    fn absent(&self, p: &PlannedCase) -> String {
        super::sel4::absent_reason(p, "seL4 on ARM", "guest/sel4-arm/roottask.c")
    }

    /// guest/sel4-arm/check.c: its first line, 10^5 round trips of no
    /// payload in one pair of clock reads, and the one-way figure in guest
    /// instructions beside the l4-ipc cell.
    fn check(&self) -> Option<Check> {
        Some(Check { marker: "sel4-check ", checks: |p| p.benchmark.id == "ipc.sel4-call", figures: check_figures })
    }

    /// The root task resets the board through the watchdog; -no-reboot.
    fn finish(&self) -> Finish {
        Finish::Zero
    }

    fn failed(&self, console: &str, _: Option<std::process::ExitStatus>, _: &str) -> Option<String> {
        console
            .lines()
            .find(|l| l.contains("oscycles-sel4-arm") && l.contains("FAILED"))
            .map(|l| format!("the root task or loader failed: {}", super::frame::plain(l.trim(), 300)))
    }

    fn hang_hint(&self) -> &'static str {
        " (a release seL4 kernel that faults prints nothing)"
    }
}

/// The one-way figure of the check's round trips, in guest instructions
/// (its clock's counts x 10^9 / clock_hz: the GPT's ticks are 15.15).
fn check_figures(v: &mut Map<String, Value>) {
    let num = |k: &str| v.get(k).and_then(Value::as_f64);
    if let (Some(n), Some(t), Some(hz)) = (num("round_trips"), num("total"), num("clock_hz"))
        && n > 0.0
        && hz > 0.0
    {
        v.insert("one_way".into(), json!(t * 1e9 / hz / n / 2.0));
        v.insert(
            "what".into(),
            json!(
                "10^5 seL4_Call round trips of no payload to a server in the same address space, one pair of clock reads around the loop"
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_failed_build_says_why_and_what_builds_it() {
        let d = tempfile::tempdir().unwrap();
        let e = find_build(d.path()).err().unwrap().to_string();
        assert!(e.contains("not built") && e.contains("scripts/setup-sel4-arm"), "{e}");
        std::fs::write(d.path().join("versions"), "seL4 5.0.0\n").unwrap();
        let b = find_build(d.path()).unwrap();
        let e = b.file("imx7/kernel.elf").err().unwrap().to_string();
        assert!(e.contains("imx7/kernel.elf") && e.contains("scripts/setup-sel4-arm"), "{e}");
        std::fs::write(d.path().join("failed"), "building the seL4 kernel for imx7 failed\nmake: *** [kernel.elf] Error 1\n").unwrap();
        let e = find_build(d.path()).err().unwrap().to_string();
        assert!(e.contains("build failed") && e.contains("Error 1") && e.contains("again"), "{e}");
    }

    /// The addresses QEMU loads the files at are the loader's.
    #[test]
    fn the_blob_addresses_are_board_hs() {
        let h = include_str!("../../../guest/sel4-arm/board.h");
        let define = |name: &str| h.lines().find_map(|l| l.strip_prefix(&format!("#define {name} "))).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(define("KERNEL_BLOB"), format!("(PHYS_BASE + {KERNEL_BLOB:#x})"));
        assert_eq!(define("TASK_BLOB"), format!("(PHYS_BASE + {TASK_BLOB:#x})"));
        assert_eq!(define("BLOB_MAX"), format!("{BLOB_MAX:#010x}"));
        assert_eq!(define("RAM_END"), format!("(PHYS_BASE + {:#x})", u64::from(MEM_MIB) << 20));
        assert_eq!(define("IMX7_PHYS_BASE"), format!("{:#x}", ArmBoard::Imx7.phys_base()));
        assert_eq!(define("IMX6_PHYS_BASE"), format!("{:#010x}", ArmBoard::Imx6.phys_base()));
    }

    #[test]
    fn the_check_line_is_read_in_guest_instructions() {
        let line = "\nsel4-check ipc=intra mrs=0 round_trips=100000 total=1966885 clock_hz=66000000\n";
        let Value::Object(mut v) = super::super::program::document::check_line(line, "sel4-check ") else { panic!("figures") };
        check_figures(&mut v);
        let one_way = v["one_way"].as_f64().unwrap();
        assert!((one_way - 149.0064).abs() < 1e-3, "{one_way}");
    }

    #[test]
    fn a_path_with_a_comma_stays_one_qemu_value() {
        assert_eq!(qemu_value(Path::new("/tmp/a,b/task.elf")), "/tmp/a,,b/task.elf");
    }
}
