//! Files that benchmarks lay out in the scratch directory (`--scratch`),
//! removed when dropped, also when a case fails.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub struct ScratchFile {
    pub path: PathBuf,
    pub bytes: u64,
}

impl ScratchFile {
    /// A file of `bytes` bytes of a known pattern, written and left in the
    /// page cache.
    pub fn create(dir: &Path, name: &str, bytes: u64) -> io::Result<ScratchFile> {
        let path = dir.join(format!("oscycles-{name}-{}", std::process::id()));
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
