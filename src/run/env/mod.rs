//! Environments the suites run in, each one module behind [`Environment`]:
//! `native` (this process), `container` (namespaces oscycles makes itself),
//! `qemu-tcg` and `qemu-kvm` (a guest kernel booted with an initramfs whose
//! /init is this same static binary), `microvm` (oscycles' own KVM guest),
//! `xen-*` (Xen under QEMU: the suites in dom0 or in a domU, [`xen`]), `uml`
//! and `gvisor` (a kernel in user space, a sandbox), and guest programs of
//! other systems: `hermit` and `hermit-microvm` (a unikernel), `sel4`,
//! `sel4-arm` and `mach` (microkernels) ([`program`]); `qemu-arm64` (an
//! arm64 Linux guest, the aarch64 build of this binary as its /init).
//! [`Env::ALL`](Named::ALL) lists them; another environment is its file and
//! its `pub mod` line and its value in `ALL` below: the file says what it is (`--env`'s
//! help), wraps its own errors ([`error::OwnError`]), adds
//! its own options to `oscycles run` ([`Environment::options`], read back
//! typed with [`EnvArgs::get`]), may take over a guest's first process
//! ([`Environment::init`]), and names its facts, which the report reads
//! through [`crate::data::schema_core::environment`].
//!
//! The host starts an environment with a [`guest::GuestSpec`] (the run's
//! [`RunSpec`](crate::run::spec::RunSpec) and how to behave); the child says
//! hello as its first act, runs the spec, and sends the run document back,
//! framed ([`frame`]) so that it survives a console shared with the kernel.
//! The host timestamps every message, which is also how the boot suite
//! measures start-up. The runner ([`crate::run::runner::run`]) goes over the
//! environments of a run; this module knows how to start ([`launch`]) and
//! watch ([`supervise`]) one.

// Environments and what they share, each module below the registration,
// none below another that imports it.
pub mod cmdline;
pub mod cpio;
pub mod environment;
pub mod error;
pub mod frame;
pub mod guest;
pub mod helpers;
pub mod initramfs;
pub mod kcount;
pub mod launch;
pub mod options;
pub mod output;
pub mod program;
pub mod supervise;
pub mod vm;

use crate::base::named::Named;
use environment::{Env, Environment};
use options::EnvArgs;

// The environments, one module each, in the order `--env`'s help lists them.
pub mod container;
pub mod gvisor;
pub mod hermit;
pub mod mach;
pub mod microvm;
pub mod native;
pub mod qemu;
pub mod qemu_arm64;
pub mod sel4;
pub mod sel4_arm;
pub mod uml;
pub mod xen;

/// Every environment, in the order `--env`'s help lists them: another
/// environment is its file, its `pub mod` line above and its value here.
const ALL: &[Env] = &[
    &native::Native,
    &container::Container,
    &qemu::Qemu::TCG,
    &qemu::Qemu::KVM,
    &microvm::Microvm,
    &xen::Xen::PV,
    &xen::Xen::PVH,
    &xen::Xen::HVM,
    &xen::Xen::PVH_DOMU,
    &uml::Uml,
    &gvisor::Gvisor,
    &program::Program(hermit::Hermit::QEMU),
    &program::Program(hermit::Hermit::MICROVM),
    &program::Program(sel4::Sel4),
    &program::Program(mach::Mach),
    &program::Program(sel4_arm::Sel4Arm),
    &qemu_arm64::QemuArm64,
];

impl Named for Env {
    const ALL: &'static [Env] = ALL;

    fn name(&self) -> &'static str {
        Environment::name(*self)
    }
}

/// Calls every environment's init hook ([`Environment::init`]): returns
/// only if this process is none of their guests' first process.
pub fn init_hooks() {
    for e in Env::ALL {
        e.init();
    }
}

/// The columns of a run over `envs` with options `o`: each environment,
/// or the columns it makes of itself ([`Environment::columns`]).
pub fn columns(envs: &[Env], o: &options::EnvOptions) -> Result<Vec<Env>, error::EnvError> {
    let mut out = Vec::new();
    for &e in envs {
        out.extend(e.columns(o)?.unwrap_or_else(|| vec![e]));
    }
    Ok(out)
}

/// `cmd` with the own options of `envs` (each set once, however many
/// environments share it): what `oscycles run` gets from [`Env::ALL`], and
/// a test from the environments it defines.
pub fn with_options(mut cmd: clap::Command, envs: &[Env]) -> clap::Command {
    let mut added: Vec<&str> = Vec::new();
    for o in envs.iter().filter_map(|e| e.options()) {
        for part in std::iter::once(&o).chain(&o.also) {
            if !added.contains(&part.id) {
                added.push(part.id);
                cmd = (part.augment)(cmd);
            }
        }
    }
    cmd
}

impl clap::Args for EnvArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        with_options(cmd, Env::ALL)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl EnvArgs {
    /// Every environment's options at their defaults.
    pub fn defaults() -> Result<EnvArgs, clap::Error> {
        let cmd = <EnvArgs as clap::Args>::augment_args(clap::Command::new("oscycles"));
        <EnvArgs as clap::FromArgMatches>::from_arg_matches(&cmd.try_get_matches_from(["oscycles"])?)
    }
}

/// `--env`'s help: every environment with what it is.
pub fn help() -> String {
    let each: Vec<String> = Env::ALL.iter().map(|e| format!("{} ({})", e.name(), e.about())).collect();
    format!("Environments to run the suites in, each in turn (comma-separated): {}", each.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::bench::Venue;
    use environment::Fit;

    #[test]
    fn environments_are_named_and_parsed_as_before() {
        // Those of before, in their order (a new one comes after them).
        assert!(
            Env::names().starts_with(
            "native, container, qemu-tcg, qemu-kvm, microvm, xen-pv, xen-pvh, xen-hvm, xen-pvh-domu, uml, gvisor, hermit, hermit-microvm, sel4, mach"
            ),
            "{}",
            Env::names()
        );
        assert_eq!(Env::parse("qemu-kvm").map(|e| e.name()), Some("qemu-kvm"));
        assert!(Env::parse("xen").is_none());
    }

    #[test]
    fn a_benchmark_of_one_environment_runs_there_when_the_run_has_it() {
        let (native, micro) = (Env::parse("native").unwrap(), Env::parse("microvm").unwrap());
        let own = Venue::OnlyIn("microvm");
        assert_eq!(native.fit(own, &[native]), Fit::Inside, "no microvm in the run: it runs where the run is");
        assert_eq!(native.fit(own, &[native, micro]), Fit::Elsewhere);
        assert_eq!(micro.fit(own, &[native, micro]), Fit::Inside);
        assert!(matches!(micro.fit(Venue::Anywhere, &[micro]), Fit::Not(why) if why.contains("only the microvm suite")));
        for e in Env::ALL {
            assert_eq!(e.fit(Venue::FromHost, Env::ALL), Fit::FromHost, "{}", e.name());
        }
    }
}
