//! Reading the multiboot (version 1) information QEMU hands over: the
//! modules (the Hermit program is the first), the memory map and the
//! command line.

use alloc::vec::Vec;

pub struct Info {
    base: u64,
}

pub struct Module {
    pub start: u64,
    pub end: u64,
}

impl Module {
    pub fn bytes(&self) -> &'static [u8] {
        // SAFETY: QEMU loaded the module there; identity mapped, never moved.
        unsafe { core::slice::from_raw_parts(self.start as *const u8, (self.end - self.start) as usize) }
    }
}

const HAS_CMDLINE: u32 = 1 << 2;
const HAS_MODS: u32 = 1 << 3;
const HAS_MMAP: u32 = 1 << 6;
const AVAILABLE: u32 = 1;

fn read_u32(at: u64) -> u32 {
    // SAFETY: addresses inside the multiboot structures QEMU wrote, in the
    // identity-mapped first GiB; read unaligned as the layout allows.
    unsafe { core::ptr::read_unaligned(at as *const u32) }
}

fn read_u64(at: u64) -> u64 {
    // SAFETY: as read_u32.
    unsafe { core::ptr::read_unaligned(at as *const u64) }
}

impl Info {
    /// # Safety
    /// `base` must be the address of the multiboot information.
    pub unsafe fn at(base: u64) -> Info {
        Info { base }
    }

    fn flags(&self) -> u32 {
        read_u32(self.base)
    }

    fn field(&self, offset: u64) -> u64 {
        u64::from(read_u32(self.base + offset))
    }

    pub fn first_module(&self) -> Option<Module> {
        if self.flags() & HAS_MODS == 0 || self.field(20) == 0 {
            return None;
        }
        let m = self.field(24);
        Some(Module { start: u64::from(read_u32(m)), end: u64::from(read_u32(m + 4)) })
    }

    /// The highest address of the structures QEMU placed (the information,
    /// its module list, the modules' strings): the program goes above.
    pub fn highest_used(&self) -> u64 {
        let mut top = self.base + 52;
        if let Some(c) = self.cmdline_ptr() {
            top = top.max(c + 4096);
        }
        if self.flags() & HAS_MODS != 0 {
            top = top.max(self.field(24) + 16 * self.field(20));
        }
        top
    }

    /// Available RAM: (start, length) of each region of the memory map.
    pub fn memory(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        if self.flags() & HAS_MMAP == 0 {
            return out;
        }
        let (mut at, end) = (self.field(48), self.field(48) + self.field(44));
        while at < end {
            let size = u64::from(read_u32(at));
            if read_u32(at + 20) == AVAILABLE {
                out.push((read_u64(at + 4), read_u64(at + 12)));
            }
            at += size + 4;
        }
        out
    }

    fn cmdline_ptr(&self) -> Option<u64> {
        (self.flags() & HAS_CMDLINE != 0 && self.field(16) != 0).then(|| self.field(16))
    }

    /// The command line (QEMU: the loader's path, then -append's text).
    pub fn command_line(&self) -> Option<&'static str> {
        let p = self.cmdline_ptr()?;
        let mut n = 0;
        // SAFETY: a NUL-terminated string QEMU wrote; read up to the NUL.
        while unsafe { *((p + n) as *const u8) } != 0 {
            n += 1;
        }
        // SAFETY: the n bytes before the NUL.
        core::str::from_utf8(unsafe { core::slice::from_raw_parts(p as *const u8, n as usize) }).ok()
    }
}
