//! Framing for results that travel over a console shared with the kernel.
//!
//! A message (the run document as JSON) is cut into chunks; each chunk is
//! one line of its own, `@@OSCYCLES <kind> <id> <i>/<n> <crc32> <base64>@@`,
//! sent twice. The receiver scans any text (kernel log lines, a line torn
//! by a kernel message printed in its middle) for well-formed chunk lines,
//! keeps those whose CRC matches, and assembles a message once it holds all
//! n chunks of one id. Nothing else on the console can look like a chunk
//! with a matching CRC-32.

use std::collections::BTreeMap;

const START: &str = "@@OSCYCLES ";
const END: &str = "@@";
const CHUNK: usize = 768;

pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            out.push(if i <= c.len() { B64[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

pub fn unbase64(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| B64.iter().position(|&b| b == c).map(|p| p as u32);
    let bytes = s.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for q in bytes.chunks(4) {
        let pad = q.iter().rev().take_while(|&&c| c == b'=').count();
        let mut n = 0u32;
        for &c in &q[..4 - pad] {
            n = (n << 6) | val(c)?;
        }
        n <<= 6 * pad as u32;
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8][..3 - pad]);
    }
    Some(out)
}

/// The lines that carry `payload` as message `kind`/`id`, each chunk twice.
pub fn encode(kind: &str, id: u32, payload: &[u8]) -> String {
    let chunks: Vec<&[u8]> = if payload.is_empty() { vec![&[][..]] } else { payload.chunks(CHUNK).collect() };
    let n = chunks.len();
    let mut out = String::new();
    for (i, c) in chunks.iter().enumerate() {
        let line = format!("\n{START}{kind} {id} {}/{n} {:08x} {}{END}\n", i + 1, crc32(c), base64(c));
        out += &line;
        out += &line;
    }
    out
}

/// The longest line kept while it arrives: a chunk line is about 1.1 KB;
/// of a longer line (a guest writing without newlines) only its end is kept.
const MAX_LINE: usize = 4 * CHUNK;
/// Messages begun and not ended at once, and the bytes their chunks hold:
/// a chunk beyond either is dropped (counted damaged). A run document is at
/// most 64 MiB, so is a message.
const MAX_PARTIAL: usize = 64;
const MAX_HELD: usize = 2 * (64 << 20);
const MAX_CHUNKS: usize = (64 << 20) / CHUNK + 1;

/// Text a guest wrote, made harmless for a terminal and a document: control
/// characters (escape sequences, newlines) shown as `\u{..}` escapes, and
/// at most `max` characters (its end, which says how it ended).
pub fn plain(text: &str, max: usize) -> String {
    let n = text.chars().count();
    let kept = text.chars().skip(n.saturating_sub(max));
    let body: String = kept
        .map(|c| {
            let bad = crate::base::text::bends_line(c);
            if bad { c.escape_unicode().to_string() } else { c.to_string() }
        })
        .collect();
    if n > max { format!("...{body}") } else { body }
}

/// Chunks received so far, by (kind, id), then by position: (count, bytes).
type Partial = BTreeMap<(String, u32), BTreeMap<usize, (usize, Vec<u8>)>>;

/// The end of `s`, at most `max` bytes, cut at a character's start.
fn tail_of(s: &str, max: usize) -> &str {
    let mut cut = s.len().saturating_sub(max);
    while !s.is_char_boundary(cut) {
        cut += 1;
    }
    &s[cut..]
}

/// Collects messages from console text fed in pieces.
#[derive(Default)]
pub struct Decoder {
    pending: String,
    chunks: Partial,
    /// Messages complete (a chunk's second copy after that is ignored).
    finished: std::collections::BTreeSet<(String, u32)>,
    done: Vec<(String, Vec<u8>)>,
    /// Chunk lines whose checksum did not match (torn by other output).
    pub damaged: usize,
    /// Bytes held in `chunks`.
    held: usize,
}

impl Decoder {
    /// Takes console text in: each piece is looked at once (linear in the
    /// text), and a line is kept while it arrives only up to [`MAX_LINE`].
    pub fn feed(&mut self, text: &str) {
        for piece in text.split_inclusive('\n') {
            let whole = piece.ends_with('\n');
            self.pending.push_str(tail_of(piece, MAX_LINE));
            if self.pending.len() > 2 * MAX_LINE {
                let keep = tail_of(&self.pending, MAX_LINE).len();
                self.pending.drain(..self.pending.len() - keep);
            }
            if whole {
                let line = std::mem::take(&mut self.pending);
                self.line(line.trim_end());
            }
        }
    }

    fn line(&mut self, line: &str) {
        let Some(start) = line.rfind(START) else { return };
        let rest = &line[start + START.len()..];
        let Some(body) = rest.strip_suffix(END).or_else(|| rest.split(END).next().filter(|_| rest.contains(END))) else {
            self.damaged += 1;
            return;
        };
        let f: Vec<&str> = body.split(' ').collect();
        let parsed = (|| {
            let [kind, id, pos, crc, data] = f.as_slice() else { return None };
            let (i, n) = pos.split_once('/')?;
            let (i, n): (usize, usize) = (i.parse().ok()?, n.parse().ok()?);
            let bytes = unbase64(data)?;
            (u32::from_str_radix(crc, 16).ok()? == crc32(&bytes) && i >= 1 && i <= n)
                .then(|| (kind.to_string(), id.parse::<u32>().ok(), i, n, bytes))
        })();
        let Some((kind, Some(id), i, n, bytes)) = parsed else {
            self.damaged += 1;
            return;
        };
        let key = (kind.clone(), id);
        if self.finished.contains(&key) {
            return;
        }
        let new_message = !self.chunks.contains_key(&key);
        if n > MAX_CHUNKS || self.held + bytes.len() > MAX_HELD || (new_message && self.chunks.len() >= MAX_PARTIAL) {
            self.damaged += 1;
            return;
        }
        let entry = self.chunks.entry(key.clone()).or_default();
        self.held += bytes.len();
        if let Some((_, old)) = entry.insert(i, (n, bytes)) {
            self.held -= old.len();
        }
        if entry.len() == n && entry.values().all(|(m, _)| *m == n) {
            let msg: Vec<u8> = self.chunks.remove(&key).expect("present").into_values().flat_map(|(_, b)| b).collect();
            self.held -= msg.len();
            self.finished.insert(key);
            if !self.done.iter().any(|(k, m)| *k == kind && *m == msg) {
                self.done.push((kind, msg));
            }
        }
    }

    /// Whether a message has begun and not yet ended (some of its chunks
    /// in, or a line in the middle of arriving).
    pub fn midway(&self) -> bool {
        !self.chunks.is_empty() || self.pending.contains(START)
    }

    /// Complete messages so far, in arrival order (each once).
    pub fn take(&mut self) -> Vec<(String, Vec<u8>)> {
        std::mem::take(&mut self.done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_and_base64_on_known_values() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        for s in [&b""[..], b"f", b"fo", b"foo", b"foob", b"fooba", b"foobar"] {
            assert_eq!(unbase64(&base64(s)).unwrap(), s);
        }
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(b"fo"), "Zm8=");
    }

    #[test]
    fn a_message_cut_short_is_seen_midway() {
        let payload = vec![7u8; 3 * CHUNK];
        let wire = encode("run", 1, &payload);
        let mut d = Decoder::default();
        assert!(!d.midway());
        d.feed(&wire[..wire.len() / 2]);
        assert!(d.midway() && d.take().is_empty(), "half a message");
        d.feed(&wire[wire.len() / 2..]);
        assert!(!d.midway());
        assert_eq!(d.take(), vec![("run".to_string(), payload)]);
    }

    #[test]
    fn messages_survive_kernel_noise_and_torn_lines() {
        let payload: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 256) as u8).collect();
        let wire = encode("run", 3, &payload);
        // Interleave kernel messages: between lines, and in the middle of the
        // first copy of every chunk line (the second copy survives).
        let mut noisy = String::from("[    0.000000] Linux version 6.1.0\n");
        let mut copies = 0;
        for line in wire.lines() {
            let chunk = line.starts_with("@@");
            copies += usize::from(chunk);
            if chunk && copies % 2 == 1 {
                noisy += &line[..30];
                noisy += "\n[    1.234567] random: crng init done\n";
                noisy += &line[30..];
            } else {
                noisy += line;
            }
            noisy += "\n";
            noisy += "[    2.000000] virtio_blk virtio1: [vda] 1 512-byte logical blocks\n";
        }
        let mut d = Decoder::default();
        for piece in noisy.as_bytes().chunks(37) {
            d.feed(&String::from_utf8_lossy(piece));
        }
        let got = d.take();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, "run");
        assert_eq!(got[0].1, payload);
        assert!(d.damaged > 0, "torn lines are noticed, not trusted");
    }

    /// guest/freestanding/frame.h, compiled for the host with its self-test
    /// program, speaks this framing: its messages decode here byte for byte.
    /// It also compiles freestanding for 32-bit x86 with nothing undefined
    /// (no libgcc helper, as a root task has none).
    #[test]
    fn the_freestanding_c_header_speaks_this_framing() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("guest/freestanding");
        let d = tempfile::tempdir().unwrap();
        let exe = d.path().join("selftest");
        let cc = |args: &[&std::ffi::OsStr]| {
            let out = std::process::Command::new("cc").args(args).output().expect("cc (scripts/setup installs gcc)");
            assert!(out.status.success(), "cc {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        let src = root.join("frame-selftest.c");
        cc(&["-O2".as_ref(), "-Wall".as_ref(), "-Werror".as_ref(), "-o".as_ref(), exe.as_os_str(), src.as_os_str()]);
        let out = std::process::Command::new(&exe).output().unwrap();
        assert!(out.status.success(), "the samples fit the buffer");
        let mut dec = Decoder::default();
        dec.feed(&String::from_utf8(out.stdout).unwrap());
        assert_eq!(dec.damaged, 0);
        let got = dec.take();
        let kinds: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kinds, ["hello", "samples", "big", "outgrown"]);
        assert!(got[0].1.is_empty());
        let v: serde_json::Value = serde_json::from_slice(&got[1].1).expect("valid JSON");
        assert_eq!(v["program"], "frame \"selftest\"\\\n");
        assert_eq!(v["cases"][0]["params"], serde_json::json!({"words": 4, "space": "intra"}));
        assert_eq!(v["cases"][0]["batch_cycles"], serde_json::json!([0u64, u64::MAX, 1_234_567_890_123u64]));
        assert_eq!((v["cases"][0]["inner"].as_u64(), v["cases"][1]["status"].as_str()), (Some(1000), Some("n/a")));
        let big: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 256) as u8).collect();
        assert_eq!(got[2].1, big);
        assert_eq!(encode("big", 2, &big).matches("@@OSCYCLES").count(), 8, "four chunks, each twice");
        // Samples that outgrew their buffer: every planned case fails with the reason, none is n/a.
        use crate::run::env::program::document::{document, tests as program};
        let outgrown: serde_json::Value = serde_json::from_slice(&got[3].1).expect("valid JSON");
        let run = program::spec(&["syscall"]);
        let doc = document(
            &program::GUEST,
            &run,
            &program::plan(&run),
            &outgrown,
            crate::measure::harness::HarnessConfig::tiny(),
            crate::measure::clock::known_tsc(1e9),
        );
        assert!(!doc.results.is_empty());
        for r in &doc.results {
            assert_eq!(r.status, crate::data::results::CaseStatus::Failed, "{r:?}");
            assert!(r.reason.as_deref().unwrap().ends_with("the samples outgrew their buffer"), "{:?}", r.reason);
        }

        std::fs::write(d.path().join("unit.c"), "#include \"frame.h\"\nvoid send(const struct frame_out *o, struct frame_buf *b) { fb_u64(b, 12345678901234ull); frame_send(o, \"x\", 1, b->p, b->len); }\n").unwrap();
        let obj = d.path().join("unit.o");
        let inc = format!("-I{}", root.display());
        let c = d.path().join("unit.c");
        cc(&[
            "-m32".as_ref(),
            "-ffreestanding".as_ref(),
            "-nostdlib".as_ref(),
            "-fno-pic".as_ref(),
            "-O2".as_ref(),
            "-Wall".as_ref(),
            "-Werror".as_ref(),
            "-Wno-unused-function".as_ref(),
            inc.as_ref(),
            "-c".as_ref(),
            c.as_os_str(),
            "-o".as_ref(),
            obj.as_os_str(),
        ]);
        let nm = std::process::Command::new("nm").arg("-u").arg(&obj).output().expect("nm (binutils)");
        assert_eq!(String::from_utf8_lossy(&nm.stdout).trim(), "", "nothing undefined in 32-bit freestanding code");
    }

    #[test]
    fn a_corrupted_chunk_is_rejected_and_the_message_waits() {
        let wire = encode("run", 1, b"hello world");
        let line = wire.lines().find(|l| l.starts_with("@@")).unwrap();
        let bad = line.replacen("aGVsbG8", "aGVsbG9", 1);
        let mut d = Decoder::default();
        d.feed(&format!("{bad}\n"));
        assert!(d.take().is_empty());
        d.feed(&format!("{line}\n"));
        assert_eq!(d.take(), vec![("run".to_string(), b"hello world".to_vec())]);
    }

    #[test]
    fn a_line_without_end_costs_linear_time_and_bounded_memory() {
        let mut d = Decoder::default();
        let piece = "x".repeat(8192);
        let t = std::time::Instant::now();
        for _ in 0..(60 << 20) / 8192 {
            d.feed(&piece);
            assert!(d.pending.len() <= 2 * MAX_LINE);
        }
        // The debug build's quadratic decoder took minutes here; linear takes well under one.
        assert!(t.elapsed() < std::time::Duration::from_secs(20), "{:?}", t.elapsed());
        // A message after it still arrives.
        d.feed(&encode("run", 1, b"after"));
        assert_eq!(d.take(), vec![("run".to_string(), b"after".to_vec())]);
    }

    #[test]
    fn partial_messages_are_bounded_in_number_and_bytes() {
        let mut d = Decoder::default();
        for id in 0..200_000u32 {
            // The first of two chunks of message `id`, never its second.
            let c = [7u8; 40];
            d.feed(&format!("{START}run {id} 1/2 {:08x} {}{END}\n", crc32(&c), base64(&c)));
        }
        assert!(d.chunks.len() <= MAX_PARTIAL && d.held <= MAX_HELD, "{} partial messages", d.chunks.len());
        assert!(d.damaged >= 200_000 - MAX_PARTIAL);
    }

    #[test]
    fn guest_text_is_plain_and_bounded() {
        assert_eq!(plain("a\x1b]0;owned\x07\nforged", 100), "a\\u{1b}]0;owned\\u{7}\\u{a}forged");
        let long = "y".repeat(10_000);
        assert_eq!(plain(&long, 50).len(), 53);
    }
}
