//! What the run tells an environment: how guests are built and how long to
//! wait for them ([`EnvOptions`]), and each environment's own command-line
//! options ([`OwnOptions`], read back typed from [`EnvArgs`]).

use super::guest;
use std::path::PathBuf;
use std::time::Duration;

/// An environment's own command-line options: a clap [`Args`](clap::Args)
/// type, added to `oscycles run` once for every environment that names it
/// (qemu-tcg and qemu-kvm share theirs).
pub struct OwnOptions {
    pub id: &'static str,
    pub augment: fn(clap::Command) -> clap::Command,
    /// Options it shares with other environments, each declared once
    /// (qemu-tcg: QEMU's `--machine` and the emulated ones' `--accel`).
    pub also: Vec<OwnOptions>,
}

impl OwnOptions {
    pub fn of<T: clap::Args>(id: &'static str) -> OwnOptions {
        OwnOptions { id, augment: T::augment_args, also: Vec::new() }
    }

    /// These options and those of `T` (declared under `id`) too.
    pub fn and<T: clap::Args>(mut self, id: &'static str) -> OwnOptions {
        self.also.push(OwnOptions::of::<T>(id));
        self
    }
}

/// The environments' own options as `oscycles run` parsed them (flattened
/// into its arguments); each environment reads its own, typed, with [`EnvArgs::get`].
#[derive(Debug, Clone)]
pub struct EnvArgs(clap::ArgMatches);

impl EnvArgs {
    /// The options of environment type `T`, as given or defaulted.
    pub fn get<T: clap::FromArgMatches>(&self) -> Result<T, clap::Error> {
        T::from_arg_matches(&self.0)
    }
}

impl clap::FromArgMatches for EnvArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(EnvArgs(m.clone()))
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0 = m.clone();
        Ok(())
    }
}

/// How guests are built and how long to wait for them.
#[derive(Debug, Clone)]
pub struct EnvOptions {
    pub exe: PathBuf,
    pub work: PathBuf,
    /// A guest's Linux kernel (qemu-*, xen-*).
    pub kernel: Option<PathBuf>,
    pub vm_mem_mib: u32,
    pub vm_cpus: u32,
    /// The run's CPUs, the measured one first (`--cpus`, else the first
    /// two allowed): where uml and gvisor place their helpers.
    pub cpus: Vec<usize>,
    /// Until the guest's /init says hello.
    pub init_timeout: Duration,
    /// For the whole guest run.
    pub run_timeout: Duration,
    /// What the child's init does ([`GuestMode::Run`] but in tests).
    pub guest_mode: guest::GuestMode,
    /// The environments' own options.
    pub own: EnvArgs,
    /// Where a guest that sent no results leaves its console log: a path
    /// prefix (the run's JSON without `.json`) the log's name is added to.
    /// None: the log goes with the run's private directory.
    pub keep_console: Option<PathBuf>,
}

/// A `--kernel` that is no file.
#[derive(Debug, thiserror::Error)]
#[error("--kernel {}: no such file", .0.display())]
pub struct NoSuchKernel(pub PathBuf);

impl EnvOptions {
    /// Refuses what no environment could work with: a `--kernel` that is no file.
    pub fn check(&self) -> Result<(), NoSuchKernel> {
        match &self.kernel {
            Some(k) if !k.is_file() => Err(NoSuchKernel(k.clone())),
            _ => Ok(()),
        }
    }
}
