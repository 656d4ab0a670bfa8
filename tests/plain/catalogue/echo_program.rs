//! `echo-program`, a guest-program environment defined in a test: this
//! file and one line (`Program(EchoProgram)` in the test's list of
//! environments) are all it takes. Its "kernel" is `sh`, its "image" the
//! framed console its program would print (a hello, then samples for
//! every case its words name), written by the kit in the run's directory;
//! `--guest-mode hang` boots a program that prints a line and never says
//! hello. Everything else (the plan, the image, the boot, the watch, the
//! console kept, the document, the facts) is oscycles' kit.

use oscycles::run::env::error::EnvError;
use oscycles::run::env::frame;
use oscycles::run::env::guest::GuestMode;
use oscycles::run::env::options::{EnvOptions, OwnOptions};
use oscycles::run::env::program::{At, Boot, GuestProgram, Machine, Names};
use oscycles::run::env::vm::{Accel, Finish};
use oscycles::run::plan::PlannedCase;
use serde_json::{Map, Value, json};

/// The fact that names its build.
pub const BUILD_FACT: &str = "echo_build";

pub struct EchoProgram;

impl GuestProgram for EchoProgram {
    type Build = &'static str;

    fn names(&self) -> Names {
        Names {
            env: "echo-program",
            system: "Echo",
            policy: "sh's",
            about: "a test's guest program: sh prints the console its program would",
        }
    }
    fn options(&self) -> Option<OwnOptions> {
        None
    }
    fn accel(&self, _: &EnvOptions) -> Result<Accel, EnvError> {
        Ok(Accel::Tcg)
    }
    fn find(&self) -> Result<&'static str, EnvError> {
        Ok("echo build 1")
    }
    /// The console of a program that answers every case its words list
    /// (`cases.echo.copy=bytes:64:4096`), 100 cycles an operation.
    fn image(&self, _: &&'static str, _: Boot, words: &str, _: GuestMode) -> Result<Vec<u8>, EnvError> {
        let list = words.split(' ').find_map(|w| w.strip_prefix("cases.echo.copy=bytes:")).unwrap_or_default();
        let cases: Vec<Value> = list
            .split(':')
            .filter_map(|b| b.parse::<u64>().ok())
            .map(|bytes| json!({"benchmark": "echo.copy", "params": {"bytes": bytes}, "status": "ok", "inner": 10, "batch_cycles": [1000, 1000, 1000]}))
            .collect();
        let samples = json!({ "cases": cases }).to_string();
        Ok(format!("echo booting\n{}{}", frame::encode("hello", 0, b"echo"), frame::encode("samples", 1, samples.as_bytes())).into_bytes())
    }
    fn machine(&self, _: &&'static str, at: &At) -> Result<Machine, EnvError> {
        let script = match at.o.guest_mode {
            GuestMode::Hang => "echo 'echo booting' > \"$2\"; exec sleep 60",
            _ => "tee -a \"$2\" < \"$1\"",
        };
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", script, "sh"]).arg(at.image).arg(at.console);
        Ok(Machine::Own { cmd, vmm: "sh (a test's VMM)", machine: "none".into() })
    }
    fn facts(&self, build: &&'static str) -> Map<String, Value> {
        [(BUILD_FACT.to_string(), json!(build))].into_iter().collect()
    }
    fn absent(&self, p: &PlannedCase) -> String {
        format!("{} in Echo: not in the echo program", p.benchmark.id)
    }
    fn finish(&self) -> Finish {
        Finish::Zero
    }
}
