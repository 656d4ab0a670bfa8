//! `native`: this machine as it is. The run's cases run in this process
//! (in rounds, each a fresh process); a boot measurement starts `oscycles
//! __env-child --env native`, which serves the smallest run like a guest.

use super::guest::{self, GuestSpec};
use super::{EnvError, EnvOptions, Environment, Outcome, launch_child};
use serde_json::{Map, Value};

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

    fn launch(&self, spec: &GuestSpec, o: &EnvOptions) -> Result<Outcome, EnvError> {
        launch_child(self, spec, o, |_| {})
    }
}

/// After the hello, in an environment's child: serves `spec` on stdout with
/// `facts`, the results in a private directory removed afterwards.
pub fn serve_here(spec: &GuestSpec, facts: Map<String, Value>) -> u8 {
    let mut out = std::io::stdout();
    let dir = tempfile::Builder::new().prefix("oscycles-env-").permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700)).tempdir();
    match dir {
        Ok(dir) => {
            guest::serve(&mut out, spec, facts, &dir.path().join("results"));
            0
        }
        Err(e) => {
            guest::send(&mut out, "error", 1, format!("a private directory for the results: {e}").as_bytes());
            1
        }
    }
}
