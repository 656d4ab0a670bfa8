//! Files that benchmarks lay out in the scratch directory (`--scratch`),
//! removed when dropped, also when a case fails.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A name no other file of this process uses (threads of one process may
/// lay out files at the same time).
pub fn unique_name(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("oscycles-{prefix}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

pub struct ScratchFile {
    pub path: PathBuf,
    pub bytes: u64,
}

impl ScratchFile {
    /// A file of `bytes` bytes of a known pattern, written and left in the
    /// page cache.
    pub fn create(dir: &Path, name: &str, bytes: u64) -> io::Result<ScratchFile> {
        let path = dir.join(unique_name(name));
        let f = ScratchFile { path, bytes };
        let mut file = std::fs::File::create(&f.path)?;
        let chunk: Vec<u8> = (0..1 << 16).map(|i| (i % 251) as u8).collect();
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            file.write_all(&chunk[..n])?;
            left -= n as u64;
        }
        file.sync_data()?;
        Ok(f)
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
