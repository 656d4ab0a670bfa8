//! What a child writes beside its messages: the end of its stderr, kept
//! bounded; the last lines of a log, for an error message.

use super::frame;
use std::io::Read;
use std::time::Duration;

/// The most of a child's stderr kept: its end (for error messages).
pub const STDERR_KEPT: usize = 64 << 10;

/// The bytes kept so far, and whether the pipe closed.
type Kept = std::sync::Mutex<(Vec<u8>, bool)>;

/// The end of a child's stderr, read on a thread.
pub struct StderrTail(std::sync::Arc<(Kept, std::sync::Condvar)>);

pub fn stderr_tail(mut r: impl Read + Send + 'static) -> StderrTail {
    let kept = std::sync::Arc::new((std::sync::Mutex::new((Vec::new(), false)), std::sync::Condvar::new()));
    let k = kept.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = r.read(&mut buf) {
            let mut g = k.0.lock().unwrap_or_else(|p| p.into_inner());
            g.0.extend_from_slice(&buf[..n]);
            if g.0.len() > 2 * STDERR_KEPT {
                let cut = g.0.len() - STDERR_KEPT;
                g.0.drain(..cut);
            }
        }
        k.0.lock().unwrap_or_else(|p| p.into_inner()).1 = true;
        k.1.notify_all();
    });
    StderrTail(kept)
}

impl StderrTail {
    /// What was read, once the pipe closed or `wait` passed (a process
    /// the child left behind may hold it open for good).
    pub fn taken(self, wait: Duration) -> String {
        let (m, cv) = &*self.0;
        let g = m.lock().unwrap_or_else(|p| p.into_inner());
        let (g, _) = cv.wait_timeout_while(g, wait, |(_, done)| !*done).unwrap_or_else(|p| p.into_inner());
        let b = &g.0[g.0.len().saturating_sub(STDERR_KEPT)..];
        String::from_utf8_lossy(b).into_owned()
    }
}

/// A console up to its last line end: the lines that are whole. A serial
/// port sends a character at a time, so the last line of a console read
/// while the guest runs may still be on its way.
pub fn complete_lines(console: &str) -> &str {
    console.rfind('\n').map_or("", |i| &console[..=i])
}

/// A console log read as it grows, at most every [`ConsoleLog::EVERY`]:
/// for a watcher that looks for a guest's end while it runs (each read
/// takes only the bytes written since the last).
pub struct ConsoleLog {
    path: std::path::PathBuf,
    seen: String,
    read: u64,
    last: std::time::Instant,
}

impl ConsoleLog {
    pub const EVERY: Duration = Duration::from_millis(250);

    pub fn new(path: &std::path::Path) -> ConsoleLog {
        ConsoleLog { path: path.to_path_buf(), seen: String::new(), read: 0, last: std::time::Instant::now() }
    }

    /// The console so far, when [`ConsoleLog::EVERY`] has passed since the
    /// last look (else, or when the log cannot be read, nothing).
    pub fn grown(&mut self) -> Option<&str> {
        use std::io::Seek;
        if self.last.elapsed() < Self::EVERY {
            return None;
        }
        self.last = std::time::Instant::now();
        let mut f = std::fs::File::open(&self.path).ok()?;
        f.seek(std::io::SeekFrom::Start(self.read)).ok()?;
        let mut more = Vec::new();
        f.read_to_end(&mut more).ok()?;
        self.read += more.len() as u64;
        self.seen += &String::from_utf8_lossy(&more);
        Some(&self.seen)
    }
}

/// The last lines of a log for an error message, led by the kernel's panic
/// line if there is one (the lines after it are a register dump).
pub fn tail(log: &str) -> String {
    let lines: Vec<String> =
        log.lines().filter(|l| !l.trim().is_empty() && !l.contains("@@OSCYCLES")).map(|l| frame::plain(l, 300)).collect();
    if lines.is_empty() {
        return "(none)".into();
    }
    let last = lines[lines.len().saturating_sub(4)..].join(" | ");
    match lines.iter().rev().find(|l| l.contains("Kernel panic")) {
        Some(p) => format!("{} | ... | {last}", p.trim()),
        None => last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_console_log_is_read_as_it_grows_at_most_every_quarter_second_and_by_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console");
        std::fs::write(&path, "boot\npanic: half").unwrap();
        let mut log = ConsoleLog::new(&path);
        assert_eq!(log.grown(), None, "not before a quarter second");
        std::thread::sleep(ConsoleLog::EVERY);
        assert_eq!(log.grown().map(complete_lines), Some("boot\n"));
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b" of it\nmore").unwrap();
        assert_eq!(log.grown(), None, "not again at once");
        std::thread::sleep(ConsoleLog::EVERY);
        assert_eq!(log.grown(), Some("boot\npanic: half of it\nmore"));
        assert_eq!(complete_lines("no end"), "");
    }
}
