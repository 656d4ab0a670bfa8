//! Message contents: every word is derived from the message's sequence number
//! and direction, so the receiver can check that the payload arrived intact.

use crate::families::bench::toolkit::fds::IpcError;

/// The largest payload, in 64-bit words, any case uses.
pub const MAX_WORDS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Request,
    Reply,
}

#[inline(always)]
fn word(seq: u64, i: usize, dir: Direction) -> u64 {
    let w = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    match dir {
        Direction::Request => w,
        Direction::Reply => !w,
    }
}

#[inline(always)]
pub fn fill(msg: &mut [u64], seq: u64, dir: Direction) {
    for (i, w) in msg.iter_mut().enumerate() {
        *w = word(seq, i, dir);
    }
}

#[inline(always)]
pub fn check(msg: &[u64], seq: u64, dir: Direction) -> Result<(), IpcError> {
    for (i, &w) in msg.iter().enumerate() {
        if w != word(seq, i, dir) {
            return Err(IpcError::Payload { seq, word: i });
        }
    }
    Ok(())
}

/// The bytes of a message.
pub fn as_bytes(msg: &[u64]) -> &[u8] {
    // SAFETY: u64 has no padding and any byte pattern is a valid u8; the
    // slice covers exactly the message's memory.
    unsafe { std::slice::from_raw_parts(msg.as_ptr().cast::<u8>(), std::mem::size_of_val(msg)) }
}

/// The bytes of a message, writable.
pub fn as_bytes_mut(msg: &mut [u64]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; any byte pattern written is a valid u64.
    unsafe { std::slice::from_raw_parts_mut(msg.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(msg)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_accepts_fill_and_catches_any_flipped_bit() {
        let mut m = [0u64; 16];
        fill(&mut m, 42, Direction::Request);
        assert!(check(&m, 42, Direction::Request).is_ok());
        assert!(check(&m, 43, Direction::Request).is_err());
        assert!(check(&m, 42, Direction::Reply).is_err());
        m[7] ^= 1 << 33;
        assert_eq!(check(&m, 42, Direction::Request), Err(IpcError::Payload { seq: 42, word: 7 }));
    }
}
