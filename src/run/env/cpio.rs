//! A cpio archive in the "newc" format the Linux kernel unpacks as an
//! initramfs: directories, regular files (with their mode) and the trailer.

use std::io::{self, Write};

pub struct Cpio<W: Write> {
    out: W,
    ino: u32,
    written: u64,
}

impl<W: Write> Cpio<W> {
    pub fn new(out: W) -> Self {
        Cpio { out, ino: 1, written: 0 }
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    fn pad4(&mut self) -> io::Result<()> {
        let pad = (4 - (self.written % 4) as usize) % 4;
        self.put(&[0u8; 3][..pad])
    }

    fn entry(&mut self, name: &str, mode: u32, data: &[u8]) -> io::Result<()> {
        let ino = self.ino;
        self.ino += 1;
        let nlink = if mode & 0o170000 == 0o040000 { 2 } else { 1 };
        let header = format!(
            "070701{ino:08x}{mode:08x}{:08x}{:08x}{nlink:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}",
            0,
            0,
            0,
            data.len(),
            0,
            0,
            0,
            0,
            name.len() + 1,
            0
        );
        self.put(header.as_bytes())?;
        self.put(name.as_bytes())?;
        self.put(&[0])?;
        self.pad4()?;
        self.put(data)?;
        self.pad4()
    }

    pub fn dir(&mut self, name: &str) -> io::Result<()> {
        self.entry(name, 0o040755, &[])
    }

    pub fn file(&mut self, name: &str, mode: u32, data: &[u8]) -> io::Result<()> {
        self.entry(name, 0o100000 | (mode & 0o7777), data)
    }

    /// Adds the tree under `root` (directories and regular files, links
    /// followed), its paths relative to `root`.
    pub fn tree(&mut self, root: &std::path::Path) -> io::Result<()> {
        let mut dirs = vec![root.to_path_buf()];
        while let Some(d) = dirs.pop() {
            let mut entries: Vec<_> = std::fs::read_dir(&d)?.flatten().map(|e| e.path()).collect();
            entries.sort();
            for p in entries {
                let name = p.strip_prefix(root).expect("under root").to_string_lossy().to_string();
                let m = std::fs::metadata(&p)?;
                if m.is_dir() {
                    self.dir(&name)?;
                    dirs.push(p);
                } else if m.is_file() {
                    self.file(&name, std::os::unix::fs::PermissionsExt::mode(&m.permissions()), &std::fs::read(&p)?)?;
                }
            }
        }
        Ok(())
    }

    /// Writes the trailer and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.entry("TRAILER!!!", 0, &[])?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpio_lists_what_was_written() {
        let mut c = Cpio::new(Vec::new());
        c.dir("dev").unwrap();
        c.file("init", 0o755, b"#!/bin/true\n").unwrap();
        c.file("args.json", 0o644, b"[]").unwrap();
        let bytes = c.finish().unwrap();
        assert_eq!(bytes.len() % 4, 0);
        // The archive as GNU cpio reads it (scripts/setup installs cpio).
        let mut ch = std::process::Command::new("cpio")
            .arg("-t")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("cpio is installed (scripts/setup)");
        ch.stdin.take().unwrap().write_all(&bytes).unwrap();
        let out = ch.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "dev\ninit\nargs.json\n");
    }
}
