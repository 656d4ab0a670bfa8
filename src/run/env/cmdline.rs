//! A Linux guest's kernel command line, where oscycles boots the kernel
//! itself (qemu-*, xen-*, uml): the environment's own parameters, then,
//! with `--isolation isolated` and a second vCPU, the measured vCPU
//! detached as Linux can (the stand-in for the L4Re "Detaching Linux
//! threads" slides' detached thread), then `--guest-append`.

use super::error::EnvError;
use super::guest::GuestSpec;
use super::options::EnvOptions;

/// The id of [`GuestKernelArgs`] among the environments' options: qemu-*,
/// xen-* and uml share `--guest-append`, declared once.
pub const GUEST_KERNEL_OPTIONS: &str = "guest-kernel";

/// The options of a guest kernel oscycles boots.
#[derive(clap::Args, Debug, Clone)]
pub struct GuestKernelArgs {
    /// Added to the guest kernel's command line in qemu-*, xen-* (the
    /// measured guest's: dom0, or the domU) and uml, e.g. preempt=full (a
    /// PREEMPT_DYNAMIC guest kernel's mode, which the guest's run records):
    /// words of printable ASCII, at most 512 bytes.
    #[arg(long, value_name = "ARGS", value_parser = parse_guest_append)]
    pub guest_append: Option<String>,
}

/// A `--guest-append`: printable ASCII words (no quotes, no control
/// characters), 1 to 512 bytes.
fn parse_guest_append(s: &str) -> Result<String, String> {
    let ok = |c: char| c.is_ascii_graphic() && !matches!(c, '"' | '\'');
    if s.is_empty() || s.len() > 512 || !s.split(' ').all(|w| !w.is_empty() && w.chars().all(ok)) {
        return Err(format!("{s:?}: kernel parameters separated by single spaces, printable ASCII without quotes, at most 512 bytes"));
    }
    Ok(s.to_string())
}

/// The guest kernel's command line, `base` (the environment's own
/// parameters) first, and the spec its /init gets: with `isolated` among
/// the run's isolation modes and a second vCPU, the measured vCPU (the
/// first of --cpus; else vCPU 1, as the boot CPU cannot be nohz_full)
/// detached as Linux can: isolcpus, nohz_full, rcu_nocbs, and device
/// interrupts on the other vCPUs; then `append` (`--guest-append`).
pub fn guest_boot(spec: &GuestSpec, base: &str, append: Option<&str>) -> (String, GuestSpec) {
    let mut spec = spec.clone();
    let mut line = base.to_string();
    if spec.run.isolations.contains(&crate::run::isolation::Isolation::Isolated) && spec.vm_cpus >= 2 {
        let cpus = spec.run.cpus.get_or_insert_with(|| vec![1, 0]);
        let m = cpus[0];
        let others: Vec<usize> = (0..spec.vm_cpus as usize).filter(|&c| c != m).collect();
        line += &format!(
            " isolcpus=nohz,domain,{m} nohz_full={m} rcu_nocbs={m} irqaffinity={}",
            crate::measure::placement::format_cpus(&others)
        );
    }
    if let Some(a) = append {
        line += " ";
        line += a;
    }
    (line.trim_start().to_string(), spec)
}

/// [`guest_boot`] with the run's `--guest-append`.
pub fn boot_line(spec: &GuestSpec, base: &str, o: &EnvOptions) -> Result<(String, GuestSpec), EnvError> {
    let args = o.own.get::<GuestKernelArgs>()?;
    Ok(guest_boot(spec, base, args.guest_append.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUEST_CMDLINE: &str = "console=ttyS0 quiet loglevel=3 panic=-1 oops=panic";

    #[test]
    fn an_isolated_run_boots_the_guest_with_its_measured_vcpu_detached() {
        use crate::run::isolation::Isolation;
        let run =
            crate::run::spec::RunSpec { isolations: vec![Isolation::Pinned, Isolation::Isolated], ..crate::run::spec::RunSpec::boot(1) };
        let spec = GuestSpec { run, mode: super::super::guest::GuestMode::Run, vm_cpus: 2, vm_mem_mib: 256 };
        let (line, inside) = guest_boot(&spec, GUEST_CMDLINE, Some("preempt=full"));
        assert_eq!(line, format!("{GUEST_CMDLINE} isolcpus=nohz,domain,1 nohz_full=1 rcu_nocbs=1 irqaffinity=0 preempt=full"));
        assert_eq!(inside.run.cpus, Some(vec![1, 0]), "the guest measures on the detached vCPU");
        let pinned = GuestSpec { run: crate::run::spec::RunSpec::boot(1), ..spec.clone() };
        assert_eq!(guest_boot(&pinned, GUEST_CMDLINE, None), (GUEST_CMDLINE.to_string(), pinned.clone()));
        let one = GuestSpec { vm_cpus: 1, ..spec };
        assert_eq!(guest_boot(&one, GUEST_CMDLINE, None).0, GUEST_CMDLINE, "one vCPU: nothing to detach it from");
        assert_eq!(guest_boot(&one, "", Some("preempt=full")).0, "preempt=full", "an environment without a base line of its own (uml)");
        assert!(parse_guest_append("preempt=full nohz=on").is_ok());
        for bad in ["", "a  b", "x\ny", "init=\"/bin/sh\"", &"a".repeat(513)] {
            assert!(parse_guest_append(bad).is_err(), "{bad:?}");
        }
    }
}
