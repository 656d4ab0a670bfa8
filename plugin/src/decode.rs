//! Instructions recognised by their bytes (plugin API 1 shows a plugin an
//! instruction's bytes and address, never the registers).

/// The marks oscycles' harness puts around a timed batch: `nopl
/// MAGIC(%rax)` (`0f 1f 80` and a 32-bit displacement; the same bytes
/// mean `nopl MAGIC(%eax)` in 32-bit code): no effect, one instruction.
/// The displacements are oscycles' own (`measure::marks` in the guest).
pub const BEGIN: u32 = 0x4b4f_5301;
pub const END: u32 = 0x4b4f_5302;

/// A mark: where a window of counting begins or ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Begin,
    End,
}

/// The mark these bytes are, if they are one.
pub fn mark(bytes: &[u8]) -> Option<Mark> {
    let [0x0f, 0x1f, 0x80, d0, d1, d2, d3] = *bytes else { return None };
    match u32::from_le_bytes([d0, d1, d2, d3]) {
        BEGIN => Some(Mark::Begin),
        END => Some(Mark::End),
        _ => None,
    }
}

/// Whether the instruction writes CR3 (`mov reg, %cr3`: `0f 22 /r` with
/// the ModRM reg field 3), after any legacy or REX prefixes.
pub fn writes_cr3(bytes: &[u8]) -> bool {
    let rest =
        match bytes.iter().position(|b| !matches!(b, 0x66 | 0x67 | 0xf2 | 0xf3 | 0x2e | 0x3e | 0x26 | 0x36 | 0x64 | 0x65 | 0x40..=0x4f)) {
            Some(i) => &bytes[i..],
            None => return false,
        };
    matches!(rest, [0x0f, 0x22, modrm, ..] if (modrm >> 3) & 7 == 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_the_nops_with_their_displacement() {
        let b = |d: u32| [[0x0f, 0x1f, 0x80].as_slice(), &d.to_le_bytes()].concat();
        assert_eq!(mark(&b(BEGIN)), Some(Mark::Begin));
        assert_eq!(mark(&b(END)), Some(Mark::End));
        assert_eq!(mark(&b(0)), None);
        assert_eq!(mark(&[0x0f, 0x1f, 0x00]), None);
    }

    #[test]
    fn cr3_writes_are_told_from_other_control_registers() {
        assert!(writes_cr3(&[0x0f, 0x22, 0xd8])); // mov %rax,%cr3
        assert!(writes_cr3(&[0x41, 0x0f, 0x22, 0xdf])); // mov %r15,%cr3
        assert!(!writes_cr3(&[0x0f, 0x22, 0xe0])); // mov %rax,%cr4
        assert!(!writes_cr3(&[0x0f, 0x20, 0xd8])); // mov %cr3,%rax (a read)
        assert!(!writes_cr3(&[0x66, 0x66]));
    }
}
