//! The tiny static ELF the exec kinds run, and the dynamically linked
//! program exec-dynamic runs.

use super::*;

/// The tiny helper: ELF64 header, one PT_LOAD program header, 12 bytes of
/// this architecture's code that exit with status 7 (`arch::EXIT_7`).
pub fn helper_elf() -> Vec<u8> {
    const BASE: u64 = 0x40_0000;
    const CODE: [u8; 12] = crate::measure::arch::EXIT_7;
    let total = (64 + 56 + CODE.len()) as u64;
    let mut e = Vec::with_capacity(total as usize);
    e.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    e.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    e.extend_from_slice(&crate::measure::arch::ELF_MACHINE.to_le_bytes()); // this architecture
    e.extend_from_slice(&1u32.to_le_bytes()); // EV_CURRENT
    e.extend_from_slice(&(BASE + 120).to_le_bytes()); // entry: the code after the headers
    e.extend_from_slice(&64u64.to_le_bytes()); // program headers right after this header
    e.extend_from_slice(&0u64.to_le_bytes()); // no section headers
    e.extend_from_slice(&0u32.to_le_bytes()); // flags
    for v in [64u16, 56, 1, 0, 0, 0] {
        // header size, phdr size, 1 phdr, no shdrs
        e.extend_from_slice(&v.to_le_bytes());
    }
    e.extend_from_slice(&1u32.to_le_bytes()); // PT_LOAD
    e.extend_from_slice(&5u32.to_le_bytes()); // R+X
    e.extend_from_slice(&0u64.to_le_bytes()); // offset 0: the whole file
    e.extend_from_slice(&BASE.to_le_bytes());
    e.extend_from_slice(&BASE.to_le_bytes());
    e.extend_from_slice(&total.to_le_bytes());
    e.extend_from_slice(&total.to_le_bytes());
    e.extend_from_slice(&0x1000u64.to_le_bytes());
    e.extend_from_slice(&CODE);
    e
}

/// The helper written to a file in a private directory (0700, made with
/// mkdtemp) of its own, created exclusively and never reopened for
/// writing: no other user can replace what root executes. Removed on drop.
///
/// A forked child writes it, so this process never holds a writable
/// descriptor to it: a child another thread forks meanwhile (a test's, a
/// ring's) would inherit that descriptor and keep the file busy (exec
/// fails with ETXTBSY) for as long as that child lives.
pub struct Helper {
    _dir: tempfile::TempDir,
    pub(super) c_path: CString,
}

impl Helper {
    pub fn create(dir: &Path) -> io::Result<Helper> {
        Helper::write(dir, "exit7", &helper_elf())
    }

    /// `bytes` as the executable `name` in a private directory under `dir`.
    pub(super) fn write(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<Helper> {
        let private = tempfile::Builder::new()
            .prefix("oscycles-exec-")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(dir)?;
        let c_path = Helper::write_at(private.path(), name, bytes)?;
        Ok(Helper { _dir: private, c_path })
    }

    /// `bytes` as the new executable `dir/name`, written by a child.
    pub(super) fn write_at(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<CString> {
        let path = dir.join(name);
        let c_path = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| io::Error::other("path with a NUL byte"))?;
        let status = child::reap(child::fork_child(|| write_in_child(&c_path, bytes))?)?;
        if !child::exited_with(status, 0) {
            let errno = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { libc::EIO };
            return Err(io::Error::from_raw_os_error(errno));
        }
        Ok(c_path)
    }
}

/// Creates `path` exclusively (0700, never through a symlink) and writes
/// `bytes` to it; returns 0 or the errno. Allocation-free: it runs in a
/// forked child.
fn write_in_child(path: &CString, bytes: &[u8]) -> i32 {
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: path is NUL-terminated; the mode is passed as open's third argument.
    let fd = unsafe { libc::open(path.as_ptr(), flags, 0o700 as libc::c_uint) };
    // SAFETY: errno of this thread.
    let errno = || unsafe { *libc::__errno_location() };
    if fd < 0 {
        return errno();
    }
    let wrote = crate::families::bench::toolkit::fds::write_all(fd, bytes);
    // SAFETY: fd is this function's own.
    let closed = unsafe { libc::close(fd) } == 0;
    match wrote {
        Err(crate::families::bench::toolkit::fds::IpcError::Sys { errno, .. }) => errno,
        Err(_) => libc::EIO,
        Ok(()) if closed => 0,
        Ok(()) => errno(),
    }
}

/// The dynamically linked program exec-dynamic runs.
pub const DYNAMIC_PROGRAM: &str = "/bin/true";

/// Whether an ELF file asks for a program interpreter (PT_INTERP): it is
/// dynamically linked.
pub fn is_dynamic_elf(bytes: &[u8]) -> bool {
    let u16_at = |o: usize| bytes.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let u64_at = |o: usize| bytes.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize);
    if bytes.get(..5) != Some(&[0x7f, b'E', b'L', b'F', 2][..]) {
        return false;
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(32), u16_at(54), u16_at(56)) else {
        return false;
    };
    (0..phnum).any(|i| bytes.get(phoff + i * phentsize..phoff + i * phentsize + 4) == Some(&3u32.to_le_bytes()[..]))
}
