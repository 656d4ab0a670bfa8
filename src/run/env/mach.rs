//! `mach`: GNU Mach, the Mach 3 microkernel the L4 papers measured their IPC
//! against, as a column. QEMU boots Debian's i386 kernel (`gnumach-image-
//! 1.8-486:i386`, unpacked by scripts/setup-mach into [`CACHE`]) with
//! oscycles' own bootstrap task (guest/mach/task.c, built by build.rs and
//! carried in this binary) as its multiboot module, the cases named on the
//! module's boot-script line. The task says hello, measures in Mach's terms
//! (mach_msg round trips between two threads of one task and between two
//! tasks, traps, yields, vm_allocate, first writes), sends the samples
//! framed over the console (the mach_print trap) and ends the VM with
//! host_reboot (QEMU -no-reboot exits); the guest-program kit
//! ([`super::program`]) boots it and makes the run document of them.
//!
//! Units: `--accel icount` (QEMU's instruction counter: the guest's TSC
//! counts its instructions) gives guest instructions, exact and repeatable;
//! `--accel tcg` emulated cycles (the host's TSC); KVM cannot run an
//! ordinary guest here (kvm_pvm) and is refused with the reason. The same
//! invocation boots an independent few-line task (guest/mach/check.c: rdtsc
//! around 10^5 empty mach_msg round trips) and records its figures.

use super::error::{EnvError, OwnError};
use super::guest::GuestMode;
use super::options::EnvOptions;
use super::program::{At, Boot, Check, GuestProgram, Machine, Names};
use super::vm::{Accel, AccelArgs, Finish, QemuMachine, Serial};
use crate::data::results::{CaseStatus, RunDoc};
use crate::families::bench::schema;
use crate::families::bench::schema::ipc::Mechanism;
use crate::run::plan::PlannedCase;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// Where scripts/setup-mach leaves the kernel (`gnumach`) and its version.
pub const CACHE: &str = "/var/cache/oscycles/mach";

/// How many times the run's --init-timeout GNU Mach may take to its hello:
/// emulated, it probes its ISA and SCSI devices for seconds before its task
/// starts (6.5 s under the counter on an idle host, over 30 s on this
/// shared one), as the xen-* environments have under TCG.
const SLOW_BOOT: u32 = 4;

/// What it is, for `--env`'s help.
const ABOUT: &str = "GNU Mach 1.8 (Debian's i386 kernel) under QEMU with oscycles' own bootstrap task: mach_msg, traps, vm_allocate; --accel icount (guest instructions, its default) or tcg (emulated cycles)";

/// The command that installs it.
const INSTALL: &str = "scripts/setup-mach (as root; scripts/setup calls it)";

/// oscycles' bootstrap task and the independent check (guest/mach).
static TASK: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mach-task"));
static CHECK: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mach-check"));

/// The kernel's directory: [`CACHE`], or `OSCYCLES_MACH_CACHE` (as for
/// scripts/setup-mach; the tests point it at a missing one).
fn cache_dir() -> PathBuf {
    std::env::var_os("OSCYCLES_MACH_CACHE").map_or_else(|| PathBuf::from(CACHE), PathBuf::from)
}

/// GNU Mach under QEMU.
pub struct Mach;

impl GuestProgram for Mach {
    type Build = Kernel;

    fn names(&self) -> Names {
        Names { env: "mach", system: "GNU Mach", policy: "GNU Mach's scheduler", about: ABOUT }
    }

    fn accel(&self, o: &EnvOptions) -> Result<Accel, EnvError> {
        match o.own.get::<AccelArgs>()?.accel {
            Accel::Kvm => Err(MachError::Kvm.into()),
            a => Ok(a),
        }
    }

    fn find(&self) -> Result<Kernel, EnvError> {
        EnvError::x86_only("mach", "its bootstrap task is i386 code, which an x86-64 build of oscycles carries")?;
        Ok(Kernel::find(&cache_dir())?)
    }

    fn image(&self, _: &Kernel, boot: Boot, _: &str, mode: GuestMode) -> Result<Vec<u8>, EnvError> {
        Ok(match (boot, mode) {
            (Boot::Check, _) => CHECK.to_vec(),
            // (tests) a module that is no executable: the kernel panics.
            (Boot::Program, GuestMode::Panic) => b"not an ELF image".to_vec(),
            (Boot::Program, _) => TASK.to_vec(),
        })
    }

    /// GNU Mach with the image as its multiboot module, the task's words
    /// on the module's boot-script line.
    fn machine(&self, kernel: &Kernel, at: &At) -> Result<Machine, EnvError> {
        if at.image.to_string_lossy().contains([',', ' ']) {
            return Err(MachError::WorkPath(at.o.work.clone()).into());
        }
        let line = module_line(at.image, at.words);
        Ok(Machine::Qemu(QemuMachine {
            machine: "pc".into(),
            cpu: None,
            mem_mib: at.o.vm_mem_mib.min(1024),
            vcpus: 1,
            kernel: kernel.path.clone(),
            initrd: line.into(),
            append: Some("console=com0".into()),
            serial: Serial::Shared,
            debug_exit: false,
        }))
    }

    fn facts(&self, kernel: &Kernel) -> Map<String, Value> {
        let mut f = Map::new();
        f.insert("kernel".into(), json!(kernel.path.display().to_string()));
        f.insert("kernel_version".into(), json!(format!("GNU Mach {} (Debian gnumach-image-1.8-486)", kernel.version)));
        f.insert("arch".into(), json!("i386"));
        f
    }

    fn absent(&self, p: &PlannedCase) -> String {
        absent_reason(p)
    }

    /// Where the kernel's instructions begin, from its ELF: GNU Mach
    /// i386's text, linked from 0xc1000000.
    fn kernel_base(&self, kernel: &Kernel) -> Result<Option<u64>, EnvError> {
        Ok(Some(super::kcount::kernel_base(&kernel.path)?))
    }

    /// guest/mach/check.c: rdtsc around 10^5 empty mach_msg round trips;
    /// its line `mach-check round_trips=N total=T round_trip_x1000=R`.
    fn check(&self) -> Option<Check> {
        Some(Check { marker: "mach-check ", checks: |p| p.benchmark.id == Mechanism::MachMsg.id(), figures: check_figures })
    }

    /// The task ends the VM with host_reboot; QEMU (-no-reboot) exits 0.
    fn finish(&self) -> Finish {
        Finish::Zero
    }

    fn failed(&self, console: &str, _: Option<std::process::ExitStatus>, _: &str) -> Option<String> {
        panic_line(console).map(|p| format!("the kernel panicked: {p}"))
    }

    fn slow_boot(&self) -> u32 {
        SLOW_BOOT
    }

    fn annotate(&self, doc: &mut RunDoc) {
        for r in doc.results.iter_mut().filter(|r| r.status == CaseStatus::Ok) {
            r.details.insert("mach_operation".into(), json!(operation(&r.benchmark)));
        }
    }
}

/// Why GNU Mach cannot be booted.
#[derive(Debug, thiserror::Error)]
pub enum MachError {
    #[error("mach: GNU Mach is not installed ({} missing; {INSTALL} unpacks Debian's gnumach-image-1.8-486:i386 there)", .0.display())]
    NotInstalled(PathBuf),
    #[error(
        "mach: --accel kvm: not here (this host's /dev/kvm, kvm_pvm, runs no ordinary guest); --accel icount counts guest instructions, tcg emulated cycles"
    )]
    Kvm,
    #[error("mach: the run's directory {0} has a comma or a space, which a multiboot module's line cannot carry")]
    WorkPath(PathBuf),
}

impl OwnError for MachError {}

/// The kernel scripts/setup-mach unpacked.
pub struct Kernel {
    path: PathBuf,
    version: String,
}

impl Kernel {
    fn find(dir: &Path) -> Result<Kernel, MachError> {
        let path = dir.join("gnumach");
        if !path.is_file() {
            return Err(MachError::NotInstalled(path));
        }
        let version = std::fs::read_to_string(dir.join("version")).unwrap_or_default().trim().chars().take(64).collect();
        Ok(Kernel { path, version })
    }
}

/// The task's module on QEMU's `-initrd`: the image and its boot-script
/// line, the program's words ([`super::program::words`], as every guest
/// program has them) among the arguments. QEMU's multiboot reads a comma
/// as the start of another module and `,,` as a comma (benches= lists
/// its ids with commas).
fn module_line(image: &Path, words: &str) -> String {
    let words = words.replace(',', ",,");
    format!("{} ${{host-port}} ${{device-port}} {words} $(task-create) $(task-resume)", image.display())
}

/// What each row is in Mach's terms.
fn operation(id: &str) -> Option<&'static str> {
    Some(match id {
        "syscall.null" => "an invalid trap (kern_invalid, -31): the bare entry and exit of a Mach trap",
        "syscall.getpid" => "mach_task_self (trap -28): the cheapest trap that does something",
        "syscall.sched_yield" => "swtch (trap -60) with no other thread runnable",
        "hermit.sched_yield-busy" => "swtch with a second thread of the task yielding too: each call a switch",
        "hermit.malloc-1m" => "vm_allocate + vm_deallocate of 1 MiB (traps -65/-66), untouched",
        "pagefault.anon" => "the first write to each page of a fresh vm_allocate'd 1 MiB region (a zero-fill fault)",
        _ if id == Mechanism::MachMsg.id() => "mach_msg SEND|RCV each way, inline words, a send-once reply right per request",
        _ => return None,
    })
}

/// The console's panic line, if the kernel panicked (`panic: ...`,
/// `panic ../file.c:N: ...`).
fn panic_line(console: &str) -> Option<String> {
    console.lines().find(|l| l.trim_start().starts_with("panic")).map(|l| l.trim().chars().take(200).collect())
}

/// The one-way figure of the check's round trips (the kernel's `start
/// <task>: ` may precede its line).
fn check_figures(v: &mut Map<String, Value>) {
    if let Some(r) = v.get("round_trip_x1000").and_then(Value::as_u64) {
        v.insert("mach_msg_one_way".into(), json!(r as f64 / 2000.0));
    }
}

/// Why a row is not measured in GNU Mach.
fn absent_reason(p: &PlannedCase) -> String {
    let id = p.benchmark.id.as_str();
    let why = match p.benchmark.family.name() {
        schema::ipc::FAMILY if p.params.get("cores").and_then(Value::as_str) == Some("cross") => {
            "one CPU: Debian's i386 GNU Mach is a uniprocessor kernel"
        }
        schema::ipc::FAMILY => {
            "Mach's IPC is mach_msg (ipc.mach-msg); pipes, sockets and futexes are the Hurd's servers', not the kernel's"
        }
        "pagefault" => "one kind of memory is measured, vm_allocate'd (pagefault.anon's row)",
        _ => "not in oscycles' GNU Mach task (guest/mach/task.c measures mach_msg, traps, yields, vm_allocate and first writes)",
    };
    format!("{id} in GNU Mach: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::env::output::complete_lines;

    /// GNU Mach loads each PT_LOAD apart (vm_allocate of its pages, asserted):
    /// the task must be ET_EXEC, i386, and no two segments may share a page.
    #[test]
    fn the_tasks_are_i386_executables_whose_segments_never_share_a_page() {
        for elf in [TASK, CHECK] {
            let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]);
            let u32_at = |o: usize| u32::from_le_bytes([elf[o], elf[o + 1], elf[o + 2], elf[o + 3]]);
            assert_eq!(&elf[..5], b"\x7fELF\x01", "ELF32");
            assert_eq!((u16_at(16), u16_at(18)), (2, 3), "ET_EXEC, EM_386");
            let (phoff, phentsize, phnum) = (u32_at(28) as usize, u16_at(42) as usize, u16_at(44) as usize);
            let mut pages: Vec<(u32, u32)> = (0..phnum)
                .map(|i| phoff + i * phentsize)
                .filter(|&h| u32_at(h) == 1)
                .map(|h| (u32_at(h + 8) / 4096, (u32_at(h + 8) + u32_at(h + 20) - 1) / 4096))
                .collect();
            pages.sort();
            assert!(pages.len() >= 2, "{pages:?}");
            assert!(pages.windows(2).all(|w| w[0].1 < w[1].0), "segments share a page: {pages:?}");
        }
    }

    fn plan(suites: &[&str]) -> Vec<PlannedCase> {
        let run = crate::run::spec::RunSpec { suites: suites.iter().map(|s| s.to_string()).collect(), ..Default::default() };
        crate::run::prepared::plan_part(&run).unwrap()
    }

    /// The words reach the task as one module: every comma doubled (QEMU's
    /// multiboot reads `,,` as a comma, a lone one as the next module).
    #[test]
    fn the_tasks_line_carries_the_words_as_one_module() {
        let p = plan(&["l4-ipc", "hermit-basic"]);
        let words =
            format!("mode=run benches={}{}", crate::run::plan::benchmark_ids(&p).join(","), super::super::program::words::case_lists(&p));
        let line = module_line(Path::new("/run/task"), &words);
        let modules: Vec<String> = line.replace(",,", "\0").split(',').map(|m| m.replace('\0', ",")).collect();
        assert_eq!(modules.len(), 1, "{line}");
        assert!(modules[0].starts_with("/run/task ${host-port} ${device-port} mode=run benches="), "{line}");
        assert!(modules[0].contains(&words) && modules[0].ends_with(" $(task-create) $(task-resume)"), "{line}");
        assert!(words.contains("cases.ipc.mach-msg=") && words.contains("hermit.malloc-1m"), "{words}");
    }

    #[test]
    fn rows_mach_has_not_say_why() {
        let p = plan(&["l4-ipc"]);
        let why = |id: &str, cores: &str| {
            let c = p.iter().find(|c| c.benchmark.id == id && c.params.get("cores").and_then(Value::as_str) == Some(cores)).unwrap();
            absent_reason(c)
        };
        assert!(why("ipc.mach-msg", "cross").contains("uniprocessor"));
        assert!(why("ipc.pipe", "same").contains("Hurd"));
    }

    #[test]
    fn the_check_and_a_panic_are_read_from_the_console() {
        let line = "start /x/task: mach-check round_trips=100000 total=243910100 round_trip_x1000=2439101\n";
        let Value::Object(mut v) = super::super::program::document::check_line(line, "mach-check ") else { panic!("figures") };
        check_figures(&mut v);
        assert_eq!((v["mach_msg_one_way"].clone(), v["round_trips"].clone()), (json!(1219.5505), json!(100000)));
        let p = panic_line("module 0\npanic ../kern/bootstrap.c:810: user_bootstrap: Cannot load\nmore");
        assert_eq!(p.as_deref(), Some("panic ../kern/bootstrap.c:810: user_bootstrap: Cannot load"));
        assert!(panic_line("no trouble").is_none());
        let writing = "module 0\npanic ../kern/bootstrap.c:810: us";
        assert_eq!(panic_line(complete_lines(writing)), None, "a line still being written is not read");
        assert!(panic_line(complete_lines(&format!("{writing}er_bootstrap: Cannot load\n"))).unwrap().ends_with("Cannot load"));
    }
}
