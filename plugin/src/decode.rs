//! Instructions recognised by their bytes (plugin API 1 shows a plugin an
//! instruction's bytes and address, never the registers), per guest
//! instruction set: the marks around oscycles' timed batches and the writes
//! of the registers that switch address spaces.

/// The x86 marks oscycles' harness puts around a timed batch: `nopl
/// MAGIC(%rax)` (`0f 1f 80` and a 32-bit displacement; the same bytes
/// mean `nopl MAGIC(%eax)` in 32-bit code): no effect, one instruction.
/// The displacements are oscycles' own (`measure::marks` in the guest).
pub const BEGIN: u32 = 0x4b4f_5301;
pub const END: u32 = 0x4b4f_5302;

/// The 32-bit ARM marks (A32, the guests' and seL4's instruction set):
/// `hint #0xb1` and `hint #0xb2` (cond AL), the MSR-immediate hint space
/// with hint numbers no architecture allocates. ARMv7-A executes an
/// unallocated hint as a NOP (ARM ARM, "MSR (immediate), and hints":
/// "other op2 values: unallocated hints, executes as NOP"), as do ARMv8's
/// A32 and QEMU (`NOP` is the whole hint space in target/arm/a32.decode);
/// the allocated ones are 0x00..0x05 (NOP, YIELD, WFE, WFI, SEV, SEVL),
/// 0x10, 0x12, 0x14, 0x16 (ESB, TSB, CSDB, CLRBHB) and 0xf0..0xff (DBG).
/// A compiler emits hints only by their names, so nothing but oscycles'
/// marks (guest/freestanding/marks.h, `.inst`) write these words.
pub const ARM_BEGIN: u32 = 0xe320_f0b1;
pub const ARM_END: u32 = 0xe320_f0b2;

/// A mark: where a window of counting begins or ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Begin,
    End,
}

/// A write of a register that switches address spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// The page-table base: x86's CR3, ARM's TTBR0.
    Table,
    /// The address-space identifier: ARM's CONTEXTIDR (x86 has none apart
    /// from CR3).
    Asid,
}

/// The guest's instruction set, as QEMU's target names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// x86-64 and ia32 (qemu-system-x86_64, qemu-system-i386).
    X86,
    /// 32-bit ARM in A32 state (qemu-system-arm).
    Arm,
}

impl Arch {
    /// The instruction set of QEMU's target `name` (`qemu_info_t`'s
    /// `target_name`), if the plugin knows it.
    pub fn of_target(name: &str) -> Option<Arch> {
        match name {
            "x86_64" | "i386" => Some(Arch::X86),
            "arm" => Some(Arch::Arm),
            _ => None,
        }
    }

    /// Its word in the windows' header.
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86 => "x86",
            Arch::Arm => "arm",
        }
    }

    /// The mark these bytes are, if they are one.
    pub fn mark(self, bytes: &[u8]) -> Option<Mark> {
        match self {
            Arch::X86 => x86_mark(bytes),
            Arch::Arm => match arm_word(bytes)? {
                ARM_BEGIN => Some(Mark::Begin),
                ARM_END => Some(Mark::End),
                _ => None,
            },
        }
    }

    /// The address-space register the instruction writes, if any.
    pub fn switch(self, bytes: &[u8]) -> Option<Switch> {
        match self {
            Arch::X86 => writes_cr3(bytes).then_some(Switch::Table),
            Arch::Arm => arm_switch(arm_word(bytes)?),
        }
    }
}

fn x86_mark(bytes: &[u8]) -> Option<Mark> {
    let [0x0f, 0x1f, 0x80, d0, d1, d2, d3] = *bytes else { return None };
    match u32::from_le_bytes([d0, d1, d2, d3]) {
        BEGIN => Some(Mark::Begin),
        END => Some(Mark::End),
        _ => None,
    }
}

/// Whether the instruction writes CR3 (`mov reg, %cr3`: `0f 22 /r` with
/// the ModRM reg field 3), after any legacy or REX prefixes.
fn writes_cr3(bytes: &[u8]) -> bool {
    let rest =
        match bytes.iter().position(|b| !matches!(b, 0x66 | 0x67 | 0xf2 | 0xf3 | 0x2e | 0x3e | 0x26 | 0x36 | 0x64 | 0x65 | 0x40..=0x4f)) {
            Some(i) => &bytes[i..],
            None => return false,
        };
    matches!(rest, [0x0f, 0x22, modrm, ..] if (modrm >> 3) & 7 == 3)
}

/// A 4-byte A32 instruction as its word (little-endian, as QEMU hands a
/// little-endian guest's bytes over); none for a 2-byte Thumb one.
fn arm_word(bytes: &[u8]) -> Option<u32> {
    let [b0, b1, b2, b3] = *bytes else { return None };
    Some(u32::from_le_bytes([b0, b1, b2, b3]))
}

/// `mcr p15, 0, Rt, c2, c0, 0` (TTBR0) and `mcr p15, 0, Rt, c13, c0, 1`
/// (CONTEXTIDR), under any condition but 0b1111 (MCR2's space): the
/// condition and Rt (bits 31:28, 15:12) are free, the rest fixed.
fn arm_switch(w: u32) -> Option<Switch> {
    const TTBR0: u32 = 0x0e02_0f10;
    const CONTEXTIDR: u32 = 0x0e0d_0f30;
    if w >> 28 == 0xf {
        return None;
    }
    match w & 0x0fff_0fff {
        TTBR0 => Some(Switch::Table),
        CONTEXTIDR => Some(Switch::Asid),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_the_nops_with_their_displacement() {
        let b = |d: u32| [[0x0f, 0x1f, 0x80].as_slice(), &d.to_le_bytes()].concat();
        assert_eq!(Arch::X86.mark(&b(BEGIN)), Some(Mark::Begin));
        assert_eq!(Arch::X86.mark(&b(END)), Some(Mark::End));
        assert_eq!(Arch::X86.mark(&b(0)), None);
        assert_eq!(Arch::X86.mark(&[0x0f, 0x1f, 0x00]), None);
        assert_eq!(Arch::Arm.mark(&b(BEGIN)), None, "not ARM's");
    }

    #[test]
    fn cr3_writes_are_told_from_other_control_registers() {
        let x = |b: &[u8]| Arch::X86.switch(b) == Some(Switch::Table);
        assert!(x(&[0x0f, 0x22, 0xd8])); // mov %rax,%cr3
        assert!(x(&[0x41, 0x0f, 0x22, 0xdf])); // mov %r15,%cr3
        assert!(!x(&[0x0f, 0x22, 0xe0])); // mov %rax,%cr4
        assert!(!x(&[0x0f, 0x20, 0xd8])); // mov %cr3,%rax (a read)
        assert!(!x(&[0x66, 0x66]));
    }

    #[test]
    fn arm_marks_are_the_two_hints_and_nothing_near_them() {
        let w = |v: u32| v.to_le_bytes();
        assert_eq!(Arch::Arm.mark(&w(ARM_BEGIN)), Some(Mark::Begin));
        assert_eq!(Arch::Arm.mark(&w(ARM_END)), Some(Mark::End));
        for other in [0xe320_f000, 0xe320_f001, 0xe320_f0b0, 0xe320_f0b3, 0x0320_f0b1, 0xe1a0_0000] {
            assert_eq!(Arch::Arm.mark(&w(other)), None, "{other:#x}"); // nop, yield, neighbours, another cond, mov r0,r0
        }
        assert_eq!(Arch::Arm.mark(&[0xb1, 0xf0]), None, "a Thumb halfword");
        assert_eq!(Arch::X86.mark(&w(ARM_BEGIN)), None);
    }

    /// What seL4 5.0.0's writeTTBR0 and writeContextID assemble to, with
    /// the registers gcc picks, against their neighbours in CP15.
    #[test]
    fn arm_ttbr0_and_contextidr_writes_are_told_from_other_cp15_accesses() {
        let s = |v: u32| Arch::Arm.switch(&v.to_le_bytes());
        assert_eq!(s(0xee02_3f10), Some(Switch::Table)); // mcr p15, 0, r3, c2, c0, 0
        assert_eq!(s(0x1e02_0f10), Some(Switch::Table)); // mcrne p15, 0, r0, c2, c0, 0
        assert_eq!(s(0xee0d_0f30), Some(Switch::Asid)); // mcr p15, 0, r0, c13, c0, 1
        assert_eq!(s(0xee0d_cf30), Some(Switch::Asid)); // mcr p15, 0, ip, c13, c0, 1
        for other in [
            0xee12_3f10, // mrc p15, 0, r3, c2, c0, 0 (a read)
            0xee02_3f30, // mcr p15, 0, r3, c2, c0, 1 (TTBR1)
            0xee02_3f50, // mcr p15, 0, r3, c2, c0, 2 (TTBCR)
            0xee0d_0f50, // mcr p15, 0, r0, c13, c0, 2 (TPIDRURW)
            0xee0d_0f90, // mcr p15, 0, r0, c13, c0, 4 (TPIDRPRW)
            0xee02_3e10, // mcr p14, ... (another coprocessor)
            0xfe02_3f10, // mcr2
        ] {
            assert_eq!(s(other), None, "{other:#x}");
        }
        assert_eq!(Arch::X86.switch(&0xee02_3f10u32.to_le_bytes()), None);
    }

    #[test]
    fn targets_are_qemus_names() {
        assert_eq!(Arch::of_target("x86_64"), Some(Arch::X86));
        assert_eq!(Arch::of_target("i386"), Some(Arch::X86));
        assert_eq!(Arch::of_target("arm"), Some(Arch::Arm));
        assert_eq!(Arch::of_target("aarch64"), None);
    }

    /// The marks guest/freestanding/marks.h assembles for a 32-bit ARM
    /// guest are these words.
    #[test]
    fn marks_hs_arm_marks_are_these() {
        let h = include_str!("../../guest/freestanding/marks.h");
        for (name, word) in [("MARK_ARM_BEGIN", ARM_BEGIN), ("MARK_ARM_END", ARM_END)] {
            let line = h.lines().find(|l| l.starts_with(&format!("#define {name} "))).unwrap_or_else(|| panic!("{name} in marks.h"));
            assert!(line.ends_with(&format!("\"{word:#010x}\"")), "{line}");
        }
    }
}
