//! Randomness: one master seed per run, one independent stream per component.
//!
//! A component's stream is derived from the master seed and the component's stable name
//! (for example `"link/A-R1/A.eth0/loss"`), never from creation order, so adding a component
//! to a scenario does not change the random numbers any other component sees. The derivation
//! uses FNV-1a and SplitMix64, both fixed algorithms, so seeds mean the same thing in every
//! version of this crate and on every platform.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator every component uses.
pub type SimRng = Xoshiro256PlusPlus;

/// Derives per-component random streams from a master seed.
#[derive(Clone, Copy, Debug)]
pub struct RngTree {
    seed: u64,
}

impl RngTree {
    /// A tree for the given master seed.
    pub fn new(seed: u64) -> Self {
        RngTree { seed }
    }

    /// The master seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The stream for the component called `name`.
    pub fn stream(&self, name: &str) -> SimRng {
        let mut state = self.seed ^ fnv1a64(name.as_bytes()).rotate_left(17);
        let mut key = [0u8; 32];
        for chunk in key.chunks_exact_mut(8) {
            chunk.copy_from_slice(&splitmix64(&mut state).to_le_bytes());
        }
        SimRng::from_seed(key)
    }
}

/// FNV-1a, 64-bit: a stable hash of a component name.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// SplitMix64 step: expands one 64-bit state into a well-mixed sequence.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    const PINNED_FIRST_DRAW: u64 = 1_975_512_653_084_783_737;

    #[test]
    fn same_seed_and_name_give_same_stream() {
        let a: Vec<u64> = RngTree::new(7).stream("x").random_iter().take(4).collect();
        let b: Vec<u64> = RngTree::new(7).stream("x").random_iter().take(4).collect();
        assert_eq!(a, b);
    }

    #[test]
    fn names_and_seeds_separate_streams() {
        let first = |seed, name| RngTree::new(seed).stream(name).random::<u64>();
        assert_ne!(first(7, "x"), first(7, "y"));
        assert_ne!(first(7, "x"), first(8, "x"));
    }

    #[test]
    fn derivation_is_stable_across_versions() {
        // Published FNV-1a test vector, and a pinned stream: changing either silently changes
        // every published result.
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"link/A-R1/loss"), 0x0ff4_5145_f1a0_c88d);
        let first: u64 = RngTree::new(1).stream("x").random();
        assert_eq!(first, PINNED_FIRST_DRAW);
    }
}
