//! Doubt: intervals of a cell's median over rounds and batches, and verdicts
//! when two cells are compared.
//!
//! A cell (one benchmark at one parameter point) rests on R *rounds*, each a
//! fresh process, and each round yields B *batch samples*. On a shared
//! machine the spread between rounds is often several times the spread
//! between the batches of one round, and the batches of one round are not
//! independent of each other; so every interval here comes from resampling
//! rounds first (a hierarchical bootstrap), and every significance test
//! takes rounds, not batches, as its independent units.
//!
//! Everything here is pure: no I/O, no clock, and every random choice comes
//! from a small seeded generator, so a given seed always gives the same
//! answer.
//!
//! The files divide by concern: [`bootstrap`] (a cell's median and its
//! interval), [`levels`] (two clusters in one cell), [`random`] (the seeded
//! generator), [`ranks`] (the rank tests: Mann-Whitney, Wilcoxon signed
//! rank) and [`verdict`] (a comparison and the thresholds it is judged by).

pub mod bootstrap;
pub mod levels;
pub mod random;
pub mod ranks;
pub mod verdict;

/// What the tests of these files simulate cells with.
#[cfg(test)]
mod sim {
    use super::random::SplitMix64;

    pub(super) fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    /// Standard normal draws by Box-Muller, from the module's generator.
    pub(super) fn normal(rng: &mut SplitMix64) -> f64 {
        let u1 = ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// R rounds x B batches around `center`: each round offset by
    /// N(0, between), each batch by N(0, within).
    pub(super) fn cell(rng: &mut SplitMix64, center: f64, rounds: usize, batches: usize, between: f64, within: f64) -> Vec<Vec<f64>> {
        (0..rounds)
            .map(|_| {
                let offset = between * normal(rng);
                (0..batches).map(|_| center + offset + within * normal(rng)).collect()
            })
            .collect()
    }
}
