//! What a child writes beside its messages: the end of its stderr, kept
//! bounded; the last lines of a log, for an error message.

use super::frame;
use std::io::Read;
use std::os::fd::AsRawFd;
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

/// The most of a guest's console file on disk: past it, its middle is cut
/// out (a hole punched: the file keeps its length, not its blocks), so a
/// guest that writes without end fills no disk ([`ConsoleCap`]).
pub const CONSOLE_FILE_BYTES: u64 = 16 << 20;
/// The start of a console kept on disk and read (the boot, the first error).
pub const CONSOLE_HEAD: u64 = 1 << 20;
/// The end of a console kept on disk when its middle is cut.
const CONSOLE_TAIL_ON_DISK: u64 = 8 << 20;
/// The end of a console held in memory (by [`ConsoleLog`] and [`read_console`]).
pub const CONSOLE_KEPT: u64 = 1 << 20;

/// The line standing for the bytes of a console left out.
fn left_out(n: u64) -> String {
    format!("\n[oscycles: {n} bytes of the console left out here: it passed {} MiB]\n", CONSOLE_FILE_BYTES >> 20)
}

/// At most `n` bytes of `f` from `at`.
fn read_at(f: &std::fs::File, at: u64, n: u64) -> Vec<u8> {
    use std::io::{Seek, SeekFrom};
    let mut f = f;
    let mut b = Vec::new();
    if f.seek(SeekFrom::Start(at)).is_ok() {
        let _ = f.take(n).read_to_end(&mut b);
    }
    b
}

/// A guest's console log as text, bounded: whole when short, else its
/// first [`CONSOLE_HEAD`] and last [`CONSOLE_KEPT`] bytes with a line
/// saying how much was left out between them. Never through a link.
pub fn read_console(path: &std::path::Path) -> String {
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(f) = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path) else {
        return String::new();
    };
    let len = f.metadata().map_or(0, |m| m.len());
    if len <= CONSOLE_HEAD + CONSOLE_KEPT {
        return String::from_utf8_lossy(&read_at(&f, 0, len)).into_owned();
    }
    let (head, tail) = (read_at(&f, 0, CONSOLE_HEAD), read_at(&f, len - CONSOLE_KEPT, CONSOLE_KEPT));
    format!("{}{}{}", String::from_utf8_lossy(&head), left_out(len - CONSOLE_HEAD - CONSOLE_KEPT), String::from_utf8_lossy(&tail))
}

/// Keeps a console file that another process writes within
/// [`CONSOLE_FILE_BYTES`] on disk: looked at every [`ConsoleLog::EVERY`],
/// past the bound its middle (after [`CONSOLE_HEAD`], before its last
/// 8 MiB) is punched out.
pub struct ConsoleCap {
    path: std::path::PathBuf,
    last: std::time::Instant,
}

impl ConsoleCap {
    pub fn new(path: &std::path::Path) -> ConsoleCap {
        ConsoleCap { path: path.to_path_buf(), last: std::time::Instant::now() }
    }

    /// Cuts the file when it holds more than the bound; a reason to stop
    /// the guest when it cannot be cut.
    pub fn check(&mut self) -> Option<String> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        if self.last.elapsed() < ConsoleLog::EVERY {
            return None;
        }
        self.last = std::time::Instant::now();
        let f = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(&self.path).ok()?;
        let m = f.metadata().ok()?;
        if m.blocks() * 512 <= CONSOLE_FILE_BYTES {
            return None;
        }
        let end = m.len().saturating_sub(CONSOLE_TAIL_ON_DISK) & !0xfff;
        if end <= CONSOLE_HEAD {
            return None;
        }
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        // SAFETY: fallocate on a descriptor this function owns, with a range inside the file.
        let rc = unsafe { libc::fallocate(f.as_raw_fd(), mode, CONSOLE_HEAD as i64, (end - CONSOLE_HEAD) as i64) };
        (rc != 0).then(|| {
            let e = std::io::Error::last_os_error();
            format!("the guest's console passed {} MiB and could not be cut ({e})", CONSOLE_FILE_BYTES >> 20)
        })
    }
}

/// A console log read as it grows, at most every [`ConsoleLog::EVERY`]:
/// for a watcher that looks for a guest's end while it runs (each read
/// takes only the bytes written since the last). It holds the console's
/// last [`CONSOLE_KEPT`] bytes, however much the guest writes.
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

    /// The console so far (its last [`CONSOLE_KEPT`] bytes), when
    /// [`ConsoleLog::EVERY`] has passed since the last look (else, or when
    /// the log cannot be read, nothing).
    pub fn grown(&mut self) -> Option<&str> {
        use std::os::unix::fs::OpenOptionsExt;
        if self.last.elapsed() < Self::EVERY {
            return None;
        }
        self.last = std::time::Instant::now();
        let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(&self.path).ok()?;
        let len = f.metadata().ok()?.len();
        // What is older than the kept end is skipped, never read.
        let from = self.read.max(len.saturating_sub(CONSOLE_KEPT));
        let more = read_at(&f, from, CONSOLE_KEPT);
        if from > self.read {
            self.seen.clear();
        }
        self.read = from + more.len() as u64;
        self.seen += &String::from_utf8_lossy(&more);
        if self.seen.len() as u64 > CONSOLE_KEPT {
            let mut cut = self.seen.len() - CONSOLE_KEPT as usize;
            while !self.seen.is_char_boundary(cut) {
                cut += 1;
            }
            self.seen.drain(..cut);
        }
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

    #[test]
    fn a_guest_that_writes_without_end_fills_neither_memory_nor_disk() {
        // Issue 58, item 7: a guest writing its console as QEMU does (one
        // writer, its own offset), 40 MiB of it, watched as a run watches it.
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console");
        let mut guest = std::fs::File::create(&path).unwrap();
        let (mut cap, mut log) = (ConsoleCap::new(&path), ConsoleLog::new(&path));
        let line = format!("{}\n", "x".repeat(1023));
        guest.write_all(b"boot: first line\n").unwrap();
        for mib in 0..40 {
            for _ in 0..1024 {
                guest.write_all(line.as_bytes()).unwrap();
            }
            if mib % 8 == 7 {
                std::thread::sleep(ConsoleLog::EVERY);
                assert_eq!(cap.check(), None);
                assert!(log.grown().unwrap().len() as u64 <= CONSOLE_KEPT);
            }
        }
        guest.write_all(b"panic: the last line\n").unwrap();
        std::thread::sleep(ConsoleLog::EVERY);
        assert_eq!(cap.check(), None);
        let on_disk = std::fs::metadata(&path).unwrap().blocks() * 512;
        assert!(on_disk <= CONSOLE_FILE_BYTES, "{on_disk} bytes on disk");
        let seen = log.grown().unwrap();
        assert!(seen.len() as u64 <= CONSOLE_KEPT && seen.ends_with("panic: the last line\n"));
        let text = read_console(&path);
        assert!(text.len() as u64 <= CONSOLE_HEAD + CONSOLE_KEPT + 200, "{}", text.len());
        assert!(text.starts_with("boot: first line\n") && text.ends_with("panic: the last line\n"));
        assert!(text.contains("bytes of the console left out here"), "the cut is said");
    }
}
