//! The seeded generator every random choice of the analysis comes from, so
//! that a given seed always gives the same answer.

/// splitmix64 (Steele, Lea and Flood 2014): a tiny generator that passes
/// BigCrush; all the bootstrap needs is uniform indices from a seed.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n >= 1), by Lemire's multiply-shift; its bias is
    /// below n / 2^64, far beneath anything a bootstrap could notice.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Two indices uniform in 0..n (1 <= n < 2^32) from one word, each
    /// from 32 of its bits (bias below n / 2^32: for a round of 1000
    /// batches, 2e-7).
    pub(super) fn two_below(&mut self, n: usize) -> (usize, usize) {
        let x = self.next_u64();
        let n = n as u64;
        ((((x >> 32) * n) >> 32) as usize, (((x & 0xFFFF_FFFF) * n) >> 32) as usize)
    }
}
