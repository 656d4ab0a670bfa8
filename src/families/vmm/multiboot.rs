//! oscycles' own KVM VMM as a multiboot boot loader: it loads a multiboot
//! kernel image (the a.out-kludge kind, a flat binary: oscycles' Hermit
//! loader) with one module and a command line, enters it in 32-bit
//! protected mode as a multiboot loader does, and gives it the two devices
//! it uses: the first serial port (bytes out; a transmitter always empty)
//! and QEMU's isa-debug-exit port (0xf4: the VMM ends with status
//! `(value << 1) | 1`, as QEMU does). The interrupt controllers and the PIT
//! are KVM's own (in the kernel); PCI configuration reads find no device.
//! A guest KVM cannot run (an instruction its emulator lacks, a failed
//! entry, a triple fault) ends the VMM with the reason.

/// What failed, in words a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum BootError {
    #[error("{0}")]
    Image(String),
    #[error("{what}: {source}")]
    Kvm { what: &'static str, source: kvm_ioctls::Error },
    #[error("guest memory: {0}")]
    Memory(String),
    #[error(transparent)]
    Vm(#[from] super::VmError),
    #[error("KVM could not run the guest: {0}")]
    Guest(String),
}

const MAGIC: u32 = 0x1BAD_B002;
/// Header flag: the load addresses are in the header (a.out kludge).
const AOUT_KLUDGE: u32 = 1 << 16;
/// Where the multiboot information, its module list, memory map and the
/// command line go: below the first MiB, where no kernel loads.
const INFO: u64 = 0x9000;
const MODS: u64 = 0x9100;
const MMAP: u64 = 0x9200;
const CMDLINE: u64 = 0x10000;
const LOW_RAM_END: u64 = 0x9fc00;

/// The load addresses of a multiboot image's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Offset in the file of the byte loaded at `load_addr`.
    pub file_offset: u64,
    pub load_addr: u64,
    pub load_end_addr: u64,
    pub bss_end_addr: u64,
    pub entry_addr: u64,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The multiboot header in the first 8 KiB of `image` (a.out kludge only:
/// oscycles loads flat images, not ELF ones).
pub fn header(image: &[u8]) -> Result<Header, BootError> {
    let at = (0..image.len().min(8192).saturating_sub(32))
        .step_by(4)
        .find(|&i| {
            let (m, f, c) = (u32_at(image, i), u32_at(image, i + 4), u32_at(image, i + 8));
            m == MAGIC && m.wrapping_add(f).wrapping_add(c) == 0
        })
        .ok_or_else(|| BootError::Image("no multiboot header in the first 8 KiB".into()))?;
    if u32_at(image, at + 4) & AOUT_KLUDGE == 0 {
        return Err(BootError::Image("the multiboot header has no load addresses (an ELF kernel; oscycles loads flat ones)".into()));
    }
    let field = |k: usize| u64::from(u32_at(image, at + 12 + 4 * k));
    let (header_addr, load_addr) = (field(0), field(1));
    let file_offset = (at as u64)
        .checked_sub(header_addr.wrapping_sub(load_addr))
        .ok_or_else(|| BootError::Image("the header's addresses do not fit the file".into()))?;
    let load_end_addr = if field(2) == 0 { load_addr + image.len() as u64 - file_offset } else { field(2) };
    let h = Header { file_offset, load_addr, load_end_addr, bss_end_addr: field(3).max(load_end_addr), entry_addr: field(4) };
    if h.load_end_addr < h.load_addr || h.file_offset + (h.load_end_addr - h.load_addr) > image.len() as u64 {
        return Err(BootError::Image("the header's load range runs past the file".into()));
    }
    Ok(h)
}

/// Bytes to write into guest memory, each at its address.
type Writes = Vec<(u64, Vec<u8>)>;

/// The multiboot information for `mem` bytes of RAM, the module at
/// [start, end) and the command line at CMDLINE: (address, bytes) pairs.
fn info(mem: u64, module: (u64, u64)) -> Writes {
    let mut info = vec![0u8; 52];
    let put = |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    put(&mut info, 0, 1 | (1 << 2) | (1 << 3) | (1 << 6)); // memory, command line, modules, memory map
    put(&mut info, 4, (LOW_RAM_END >> 10) as u32);
    put(&mut info, 8, ((mem - (1 << 20)) >> 10) as u32);
    put(&mut info, 16, CMDLINE as u32);
    put(&mut info, 20, 1);
    put(&mut info, 24, MODS as u32);
    let mut mmap = Vec::new();
    for (base, len) in [(0u64, LOW_RAM_END), (1 << 20, mem - (1 << 20))] {
        mmap.extend_from_slice(&20u32.to_le_bytes());
        mmap.extend_from_slice(&base.to_le_bytes());
        mmap.extend_from_slice(&len.to_le_bytes());
        mmap.extend_from_slice(&1u32.to_le_bytes());
    }
    put(&mut info, 44, mmap.len() as u32);
    put(&mut info, 48, MMAP as u32);
    let mut mods = vec![0u8; 16];
    put(&mut mods, 0, module.0 as u32);
    put(&mut mods, 4, module.1 as u32);
    vec![(INFO, info), (MODS, mods), (MMAP, mmap)]
}

/// Where the image, the module, the command line and the multiboot
/// information go in `mem_mib` MiB: the image's header, the RAM's size in
/// bytes and the (address, bytes) writes; an error where they do not fit.
fn layout(image: &[u8], module: &[u8], cmdline: &str, mem_mib: u32) -> Result<(Header, u64, Writes), BootError> {
    let h = header(image)?;
    let mem = u64::from(mem_mib) << 20;
    let module_at = h.bss_end_addr.max(1 << 20).next_multiple_of(4096);
    let module_end = module_at + module.len() as u64;
    if module_end + 4096 > mem || cmdline.len() as u64 + CMDLINE >= LOW_RAM_END {
        return Err(BootError::Image(format!("{mem_mib} MiB hold no room for the module and command line")));
    }
    let load = (h.file_offset as usize)..(h.file_offset + h.load_end_addr - h.load_addr) as usize;
    let mut writes = vec![(h.load_addr, image[load].to_vec()), (module_at, module.to_vec())];
    writes.push((CMDLINE, [cmdline.as_bytes(), &[0]].concat()));
    writes.extend(info(mem, (module_at, module_end)));
    Ok((h, mem, writes))
}

// Entering the image is x86 (protected mode, port I/O): one file per architecture.
#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
pub use x86_64::boot;

/// On aarch64 the image is checked and laid out, then refused: the
/// multiboot protocol and the images it boots are x86.
#[cfg(not(target_arch = "x86_64"))]
pub fn boot(image: &[u8], module: &[u8], cmdline: &str, mem_mib: u32, _out: &mut dyn std::io::Write) -> Result<i32, BootError> {
    layout(image, module, cmdline, mem_mib)?;
    Err(BootError::Vm(super::VmError::NotX86(std::env::consts::ARCH)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flat image: 16 bytes of padding, the header, then code.
    fn image(flags: u32, load_end: u32) -> Vec<u8> {
        let mut b = vec![0u8; 16];
        let (header_addr, load_addr) = (0x10_0010u32, 0x10_0000u32);
        for w in [MAGIC, flags, 0u32.wrapping_sub(MAGIC.wrapping_add(flags)), header_addr, load_addr, load_end, 0x10_2000, 0x10_0040] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b.resize(0x100, 0x90);
        b
    }

    #[test]
    fn the_header_gives_where_the_image_loads_and_enters() {
        let h = header(&image(AOUT_KLUDGE | 3, 0x10_0100)).unwrap();
        assert_eq!(
            h,
            Header { file_offset: 0, load_addr: 0x10_0000, load_end_addr: 0x10_0100, bss_end_addr: 0x10_2000, entry_addr: 0x10_0040 }
        );
        let whole = header(&image(AOUT_KLUDGE, 0)).unwrap();
        assert_eq!(whole.load_end_addr, 0x10_0100, "0: up to the end of the file");
        assert!(header(&image(3, 0x10_0100)).unwrap_err().to_string().contains("ELF"));
        assert!(header(&image(AOUT_KLUDGE, 0x10_0400)).unwrap_err().to_string().contains("past the file"));
        assert!(header(&[0u8; 64]).unwrap_err().to_string().contains("no multiboot header"));
    }

    #[test]
    fn the_information_names_the_module_the_command_line_and_the_memory() {
        let parts = info(64 << 20, (0x20_0000, 0x20_1000));
        let (at, bytes) = &parts[0];
        assert_eq!(*at, INFO);
        assert_eq!(u32_at(bytes, 0) & 0b100_1101, 0b100_1101);
        assert_eq!((u32_at(bytes, 16), u32_at(bytes, 20), u32_at(bytes, 24)), (CMDLINE as u32, 1, MODS as u32));
        assert_eq!((u32_at(&parts[1].1, 0), u32_at(&parts[1].1, 4)), (0x20_0000, 0x20_1000));
        let mmap = &parts[2].1;
        assert_eq!(mmap.len(), 48, "two entries of 24 bytes");
        assert_eq!(u64::from_le_bytes(mmap[28..36].try_into().unwrap()), 1 << 20);
        assert_eq!(u64::from_le_bytes(mmap[36..44].try_into().unwrap()), (64 << 20) - (1 << 20));
    }
}
