//! `native`: this machine as it is. The run's cases run in this process
//! (in rounds, each a fresh process); a boot measurement starts `oscycles
//! __env-child --env native`, which serves the smallest run like a guest.

use super::environment::{Environment, Outcome};
use super::error::EnvError;
use super::guest::GuestSpec;
use super::launch::launch_child;
use super::options::EnvOptions;

pub struct Native;

impl Environment for Native {
    fn name(&self) -> &'static str {
        "native"
    }

    fn about(&self) -> &'static str {
        "this machine as it is"
    }

    fn in_process(&self) -> bool {
        true
    }

    fn launch(&self, spec: &GuestSpec, _plan: &[crate::run::plan::PlannedCase], o: &EnvOptions) -> Result<Outcome, EnvError> {
        launch_child(self, spec, o, |_| {})
    }
}
