//! Environments the suites run in: `native` (this process), `container`
//! (namespaces oscycles makes itself), `qemu-tcg` and `qemu-kvm` (a guest
//! kernel booted with an initramfs whose /init is this same static binary).
//!
//! The host starts the environment with a [`guest::GuestSpec`]; the child
//! says hello as its first act, runs `oscycles run` with the host's
//! arguments, and sends the run document back, framed ([`frame`]) so that it
//! survives a console shared with the kernel. The host timestamps every
//! message, which is also how the boot suite measures start-up.

pub mod container;
pub mod cpio;
pub mod driver;
pub mod frame;
pub mod guest;
pub mod qemu;

use crate::results::RunDoc;
use guest::GuestSpec;
use serde_json::{Map, Value};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Env {
    Native,
    Container,
    QemuTcg,
    QemuKvm,
    /// oscycles' own minimal KVM guest: it runs the microvm suite only.
    Microvm,
}

impl Env {
    pub const ALL: [Env; 5] = [Env::Native, Env::Container, Env::QemuTcg, Env::QemuKvm, Env::Microvm];
    pub fn name(self) -> &'static str {
        match self {
            Env::Native => "native",
            Env::Container => "container",
            Env::QemuTcg => "qemu-tcg",
            Env::QemuKvm => "qemu-kvm",
            Env::Microvm => "microvm",
        }
    }
    pub fn parse(s: &str) -> Option<Env> {
        Env::ALL.into_iter().find(|e| e.name() == s)
    }
    pub fn names() -> String {
        Env::ALL.map(|e| e.name()).join(", ")
    }
    pub fn is_qemu(self) -> bool {
        matches!(self, Env::QemuTcg | Env::QemuKvm)
    }
}

/// How guests are built and how long to wait for them.
#[derive(Debug, Clone)]
pub struct EnvOptions {
    pub exe: PathBuf,
    pub work: PathBuf,
    pub kernel: Option<PathBuf>,
    pub vm_mem_mib: u32,
    pub vm_cpus: u32,
    pub machine: String,
    /// Until the guest's /init says hello.
    pub init_timeout: Duration,
    /// For the whole guest run.
    pub run_timeout: Duration,
    /// What the child's init does: "run" (tests: "hang", "panic").
    pub guest_mode: String,
}

/// A framed message from a child, with when it arrived (seconds since the
/// child was started).
#[derive(Debug, Clone)]
pub struct Message {
    pub kind: String,
    pub bytes: Vec<u8>,
    pub at_s: f64,
}

/// What came back from one start of an environment.
#[derive(Debug)]
pub struct Outcome {
    pub messages: Vec<Message>,
    /// The child's exit status, if it exited.
    pub status: Option<std::process::ExitStatus>,
    /// Facts of how it was started (command line, machine, kernel...).
    pub facts: Map<String, Value>,
    /// The end of its console or stderr, for error messages.
    pub log_tail: String,
}

impl Outcome {
    pub fn first(&self, kind: &str) -> Option<&Message> {
        self.messages.iter().find(|m| m.kind == kind)
    }
}

/// Reads framed messages from `r` on a thread, timestamped from `start`.
fn reader(mut r: impl Read + Send + 'static, start: Instant) -> mpsc::Receiver<Message> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut d = frame::Decoder::default();
        let mut buf = [0u8; 8192];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            d.feed(&String::from_utf8_lossy(&buf[..n]));
            for (kind, bytes) in d.take() {
                if tx.send(Message { kind, bytes, at_s: start.elapsed().as_secs_f64() }).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

/// How a supervised child ended.
pub struct Ended {
    pub messages: Vec<Message>,
    pub status: Option<std::process::ExitStatus>,
    /// Why it was killed (a timeout, an interrupt), if it was.
    pub why: Option<String>,
    pub stderr: String,
}

/// Waits for `child` (started at `start`, stdout and stderr piped),
/// collecting the messages on its stdout and its stderr, within the
/// timeouts: no hello within `init_timeout`, or no end within
/// `run_timeout`, kills it. The child is also killed on SIGINT/SIGTERM of
/// oscycles.
pub fn supervise(mut child: Child, start: Instant, init_timeout: Duration, run_timeout: Duration) -> Ended {
    let rx = reader(child.stdout.take().expect("stdout piped"), start);
    let mut stderr = child.stderr.take().expect("stderr piped");
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut messages = Vec::new();
    let mut why = None;
    let status = loop {
        while let Ok(m) = rx.try_recv() {
            messages.push(m);
        }
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) => {}
            Err(e) => {
                why = Some(e.to_string());
                break None;
            }
        }
        let hello = messages.iter().any(|m: &Message| m.kind == "hello");
        let stop = if crate::watchdog::interrupted().is_some() {
            Some("interrupted".to_string())
        } else if !hello && start.elapsed() > init_timeout {
            Some(format!("did not reach its /init within {} s", init_timeout.as_secs()))
        } else if start.elapsed() > run_timeout {
            Some(format!("did not finish within {} s", run_timeout.as_secs()))
        } else {
            None
        };
        if let Some(w) = stop {
            let _ = child.kill();
            let _ = child.wait();
            why = Some(w);
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // Messages still in the pipe when the child ended.
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(500) {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(m) => messages.push(m),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    Ended { messages, status, why, stderr: err_thread.join().unwrap_or_default() }
}

/// Starts `env` with `spec` once and collects what it sends.
pub fn launch(env: Env, spec: &GuestSpec, o: &EnvOptions) -> Result<Outcome, String> {
    match env {
        Env::Native | Env::Container | Env::Microvm => {
            let mut cmd = Command::new(&o.exe);
            cmd.arg("__env-child").arg("--spec").arg(serde_json::to_string(spec).map_err(|e| e.to_string())?);
            if env == Env::Microvm {
                cmd.arg("--microvm");
            }
            if env == Env::Container {
                cmd.arg("--container").arg("--cpus-limit").arg(o.vm_cpus.to_string()).arg("--mem-mib").arg(o.vm_mem_mib.to_string());
            }
            cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
            crate::watchdog::die_with_parent(&mut cmd);
            let start = Instant::now();
            let child = cmd.spawn().map_err(|e| format!("starting {}: {e}", o.exe.display()))?;
            let pid = child.id();
            let end = supervise(child, start, o.init_timeout, o.run_timeout);
            if env == Env::Container {
                container::remove_limits(pid);
            }
            if let Some(w) = end.why {
                return Err(format!("{} {w}", env.name()));
            }
            let mut facts = Map::new();
            facts.insert("start".into(), Value::from(format!("oscycles __env-child ({})", env.name())));
            Ok(Outcome { messages: end.messages, status: end.status, facts, log_tail: tail(&end.stderr) })
        }
        Env::QemuTcg | Env::QemuKvm => qemu::launch(env == Env::QemuKvm, spec, o),
    }
}

/// The last lines of a log for an error message, led by the kernel's panic
/// line if there is one (the lines after it are a register dump).
pub fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty() && !l.contains("@@OSCYCLES")).collect();
    if lines.is_empty() {
        return "(none)".into();
    }
    let last = lines[lines.len().saturating_sub(4)..].join(" | ");
    match lines.iter().rev().find(|l| l.contains("Kernel panic")) {
        Some(p) => format!("{} | ... | {last}", p.trim()),
        None => last,
    }
}

/// Runs `oscycles run ARGS` in `env` and returns its run document.
pub fn run_suites(env: Env, args: &[String], o: &EnvOptions) -> Result<(RunDoc, Map<String, Value>), String> {
    let spec = GuestSpec { args: args.to_vec(), mode: o.guest_mode.clone() };
    let out = launch(env, &spec, o)?;
    if let Some(e) = out.first("error") {
        return Err(format!("{}: {}", env.name(), String::from_utf8_lossy(&e.bytes)));
    }
    let Some(m) = out.first("run") else {
        return Err(format!(
            "{} ended ({}) without sending results; last output: {}",
            env.name(),
            out.status.map_or("killed".into(), |s| s.to_string()),
            out.log_tail
        ));
    };
    let doc: RunDoc = serde_json::from_slice(&m.bytes).map_err(|e| format!("{}: the results do not parse: {e}", env.name()))?;
    let mut facts = out.facts;
    if let Some(env_facts) = out.messages.iter().find(|m| m.kind == "facts")
        && let Ok(Value::Object(f)) = serde_json::from_slice::<Value>(&env_facts.bytes)
    {
        facts.extend(f);
    }
    Ok((doc, facts))
}

/// One boot of `env`: seconds from start to the hello of its /init, and to
/// its first result.
pub fn boot_once(env: Env, o: &EnvOptions) -> Result<(f64, f64), String> {
    let spec = GuestSpec { args: boot_args(), mode: "run".into() };
    let out = launch(env, &spec, o)?;
    let hello = out.first("hello").ok_or_else(|| format!("{} never said hello; last output: {}", env.name(), out.log_tail))?;
    let result = out.first("run").ok_or_else(|| format!("{} sent no result; last output: {}", env.name(), out.log_tail))?;
    Ok((hello.at_s, result.at_s))
}

/// The smallest real run: getpid, three short batches.
pub fn boot_args() -> Vec<String> {
    ["--suite", "syscall", "--bench", "syscall.getpid", "--batches", "3", "--iterations", "1000"].map(String::from).to_vec()
}

/// Whether `p` exists and can be executed.
pub fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
