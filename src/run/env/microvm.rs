//! `microvm`: oscycles' own minimal KVM guest ([`crate::families::vmm`]). Its
//! cases (the exit table) start their own VMs from this process, and it
//! runs nothing else; a boot measurement starts `oscycles __env-child --env
//! microvm`, whose hello is the guest's first instruction.

use super::environment::{Environment, Fit, Outcome};
use super::error::EnvError;
use super::guest::{self, GuestSpec};
use super::launch::launch_child;
use super::options::EnvOptions;
use crate::families::bench::Venue;
use serde_json::{Map, Value, json};
use std::time::Duration;

pub struct Microvm;

impl Environment for Microvm {
    fn name(&self) -> &'static str {
        "microvm"
    }

    fn about(&self) -> &'static str {
        "oscycles' own minimal KVM guest: the microvm suite only"
    }

    fn fit(&self, runs: Venue, _envs: &[super::environment::Env]) -> Fit {
        match runs {
            Venue::OnlyIn(own) if own == self.name() => Fit::Inside,
            Venue::FromHost => Fit::FromHost,
            _ => Fit::Not(
                "the microvm guest runs only the microvm suite (its exit table); use native, container or qemu-* for the others".into(),
            ),
        }
    }

    fn in_process(&self) -> bool {
        true
    }

    fn facts(&self) -> Map<String, Value> {
        let mut f = Map::new();
        f.insert("layer".into(), json!(crate::families::vmm::kvm_backend::detect().describe()));
        f.insert("vmm".into(), json!("oscycles (kvm-ioctls)"));
        f
    }

    fn launch(&self, spec: &GuestSpec, _plan: &[crate::run::plan::PlannedCase], o: &EnvOptions) -> Result<Outcome, EnvError> {
        launch_child(self, spec, o, |_| {})
    }

    /// One boot of the guest: hello at its first instruction, then the
    /// cycles from creating the VM to that instruction as the result.
    fn serve(&self, _spec: &GuestSpec) -> u8 {
        let mut hello = || guest::send(&mut std::io::stdout(), "hello", 0, b"first instruction");
        let r = crate::families::vmm::run_with(crate::families::vmm::GuestCase::Cpuid, 1000, Duration::from_secs(10), &mut hello);
        let mut out = std::io::stdout();
        match r {
            Ok(o) => guest::send(&mut out, "run", 1, format!("{{\"create_to_marker_cycles\": {}}}", o.create_to_marker).as_bytes()),
            Err(e) => guest::send(&mut out, "error", 1, format!("microvm: {e}").as_bytes()),
        }
        0
    }
}
