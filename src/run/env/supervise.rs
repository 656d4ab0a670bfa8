//! Watching a child an environment started: its framed messages read from
//! its stdout as they come, timestamped; its stderr kept; the timeouts, an
//! interrupt of oscycles, and a fatal sign on its console end it.

use super::environment::Message;
use super::frame;
use super::output::stderr_tail;
use std::io::Read;
use std::process::Child;
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
pub struct Supervised {
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
pub fn supervise(child: Child, start: Instant, init_timeout: Duration, run_timeout: Duration) -> Supervised {
    supervise_watching(child, start, init_timeout, run_timeout, &mut |_| None)
}

/// [`supervise`], also asking `watch` now and then, told whether the child
/// has said hello (a placement that applies from then on; a console that
/// shows a hypervisor's panic, after which the VM would idle on): a reason
/// it gives ends the child with that reason.
pub fn supervise_watching(
    mut child: Child,
    start: Instant,
    init_timeout: Duration,
    run_timeout: Duration,
    watch: &mut dyn FnMut(bool) -> Option<String>,
) -> Supervised {
    let rx = reader(child.stdout.take().expect("stdout piped"), start);
    let err_tail = stderr_tail(child.stderr.take().expect("stderr piped"));
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
        let stop = if crate::measure::watchdog::interrupted().is_some() {
            Some("interrupted".to_string())
        } else if !hello && start.elapsed() > init_timeout {
            Some(format!("did not reach its /init within {} s", init_timeout.as_secs()))
        } else if start.elapsed() > run_timeout {
            Some(format!("did not finish within {} s", run_timeout.as_secs()))
        } else {
            watch(hello)
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
    Supervised { messages, status, why, stderr: err_tail.taken(Duration::from_secs(2)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::env::output::{STDERR_KEPT, tail};
    use std::process::{Command, Stdio};

    #[test]
    fn a_childs_stderr_is_kept_bounded_and_not_waited_for_when_a_leftover_holds_it() {
        // 5 MB of stderr without a newline, then a process left behind holding the pipe for 20 s.
        let child = Command::new("sh")
            .args(["-c", "head -c 5000000 /dev/zero | tr '\\0' x >&2; (sleep 20 &); exit 0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t = Instant::now();
        let end = supervise(child, t, Duration::from_secs(30), Duration::from_secs(30));
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(end.stderr.len() <= STDERR_KEPT && end.stderr.len() > 1000, "{}", end.stderr.len());
        assert!(tail(&end.stderr).len() < 400);
    }
}
