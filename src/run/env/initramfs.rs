//! A Linux guest's boot files (qemu-*, xen-*, uml, gvisor): its kernel
//! ([`find_kernel`]) and the initramfs oscycles writes (cpio newc) holding
//! this static binary, stripped, as /init and the spec.

use super::cpio::Cpio;
use super::error::{EnvError, OwnError};
use super::guest::{GuestSpec, SPEC_PATH};
use super::options::NoSuchKernel;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A Linux guest's boot file that is not there or cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum InitramfsError {
    #[error("no guest kernel: none in /boot or {KERNEL_CACHE} (scripts/setup unpacks linux-image-amd64 there), and no --kernel")]
    NoKernel,
    #[error("{} is dynamically linked; a guest needs the static build (cargo build --release builds it, see .cargo/config.toml)", .0.display())]
    Dynamic(PathBuf),
}

impl OwnError for InitramfsError {}

/// Where scripts/setup unpacks Debian's kernel package.
pub const KERNEL_CACHE: &str = "/var/cache/oscycles/linux/boot";

/// The guest kernel: the one given, else the newest vmlinuz-* in /boot,
/// else in the cache scripts/setup fills.
pub fn find_kernel(given: Option<&Path>) -> Result<PathBuf, EnvError> {
    if let Some(k) = given {
        return if k.is_file() { Ok(k.to_path_buf()) } else { Err(NoSuchKernel(k.to_path_buf()).into()) };
    }
    for dir in ["/boot", KERNEL_CACHE] {
        let mut ks: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz-")))
                    .collect()
            })
            .unwrap_or_default();
        ks.sort();
        if let Some(k) = ks.pop() {
            return Ok(k);
        }
    }
    Err(InitramfsError::NoKernel.into())
}

/// Whether the ELF file at `p` is statically linked (has no PT_INTERP).
pub fn is_static(p: &Path) -> std::io::Result<bool> {
    let b = std::fs::read(p)?;
    if b.len() < 64 || &b[..4] != b"\x7fELF" || b[4] != 2 {
        return Ok(false);
    }
    let u16at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(b[32..40].try_into().expect("8 bytes")) as usize;
    let (phentsize, phnum) = (u16at(54), u16at(56));
    Ok((0..phnum).all(|i| {
        let o = phoff + i * phentsize;
        o + 4 > b.len() || u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes")) != 3 // PT_INTERP
    }))
}

/// Writes the initramfs: /init (this binary), the spec, the mount points,
/// and `extra` files (name, contents).
pub fn write_initramfs(path: &Path, exe: &Path, spec: &GuestSpec, extra: &[(&str, &[u8])]) -> Result<(), EnvError> {
    if !is_static(exe).map_err(EnvError::io(format!("reading {}", exe.display())))? {
        return Err(InitramfsError::Dynamic(exe.to_path_buf()).into());
    }
    let bin = guest_image(exe, path)?;
    let f = crate::measure::scratch::create_new(path, 0o600).map_err(EnvError::io(format!("creating {}", path.display())))?;
    let mut c = Cpio::new(std::io::BufWriter::new(f));
    let w = (|| -> std::io::Result<()> {
        for d in ["dev", "proc", "sys", "tmp", "run"] {
            c.dir(d)?;
        }
        c.file("init", 0o755, &bin)?;
        c.file(SPEC_PATH.trim_start_matches('/'), 0o644, serde_json::to_string(spec)?.as_bytes())?;
        for (name, bytes) in extra {
            c.file(name, 0o644, bytes)?;
        }
        Ok(())
    })();
    w.and_then(|()| c.finish().and_then(|mut b| std::io::Write::flush(&mut b))).map_err(EnvError::io(format!("writing {}", path.display())))
}

/// The executable as a guest gets it: without its debug sections, through
/// binutils' objcopy where there is one (as it is otherwise). A debug
/// build's are about 100 MB that a guest would copy in and unpack: under
/// TCG, an HVM domU's firmware copies its initramfs for minutes. `beside`
/// is a path in the run's private directory to put the copy next to.
pub fn guest_image(exe: &Path, beside: &Path) -> Result<Vec<u8>, EnvError> {
    let stripped = beside.with_extension("stripped");
    let ok = Command::new("objcopy")
        .arg("--strip-debug")
        .arg(exe)
        .arg(&stripped)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let bytes = std::fs::read(if ok { &stripped } else { exe }).map_err(EnvError::io(format!("reading {}", exe.display())));
    let _ = std::fs::remove_file(&stripped);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_static_from_dynamic_executables() {
        // /bin/sh is dynamically linked on every Debian.
        assert!(!is_static(Path::new("/bin/sh")).unwrap());
        let dir = tempfile::tempdir().unwrap();
        let helper = dir.path().join("static-elf");
        std::fs::write(&helper, crate::families::bench::proc::helper::helper_elf()).unwrap();
        let s = is_static(&helper).unwrap();
        assert!(s, "the 132-byte helper has no interpreter");
    }
}
