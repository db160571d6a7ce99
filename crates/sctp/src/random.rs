//! Where an endpoint's randomness comes from: the cookie secret (RFC 9260 §5.1.3), the
//! verification tags and Tie-Tags (§5.3.1, §5.2.2), initial TSNs (§5.3.1), heartbeat nonces
//! (§5.4) and heartbeat jitter (§8.3).
//!
//! The driver chooses: the simulator gives a seed, so the same scenario and seed give the
//! same tags, TSNs and packets; a driver on real sockets takes the operating system's CSPRNG,
//! as RFC 9260 §5.3.1 asks of tags ("strong random", RFC 4086) and §5.1.3 of the secret key.

use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The source of an endpoint's random values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entropy {
    /// A seeded stream (Xoshiro256++): reproducible, for simulation. Each association's
    /// stream is seeded from the endpoint's next value.
    Seeded(u64),
    /// The operating system's CSPRNG (`getrandom`, through `rand`'s `OsRng`) seeds a ChaCha12
    /// generator (`StdRng`) for the endpoint and a fresh one for each association: for real
    /// sockets, where tags and the cookie secret must not be guessable.
    Os,
}

impl From<u64> for Entropy {
    fn from(seed: u64) -> Self {
        Entropy::Seeded(seed)
    }
}

/// One stream of random values, of the kind [`Entropy`] chose.
#[derive(Debug)]
pub(crate) enum RandomStream {
    /// Reproducible.
    Seeded(Xoshiro256PlusPlus),
    /// Cryptographically secure (boxed: its state is ten times the seeded one's, and an
    /// association's size should not pay for it in simulation).
    Secure(Box<StdRng>),
}

impl RandomStream {
    /// The endpoint's stream.
    pub(crate) fn new(entropy: Entropy) -> Self {
        match entropy {
            Entropy::Seeded(seed) => RandomStream::Seeded(Xoshiro256PlusPlus::seed_from_u64(seed)),
            Entropy::Os => RandomStream::Secure(Box::new(StdRng::from_os_rng())),
        }
    }

    /// A stream for a new association: seeded from this one's next value, or, if secure, a
    /// fresh generator from the operating system, so no association's values tell another's.
    pub(crate) fn fork(&mut self) -> Self {
        match self {
            RandomStream::Seeded(rng) => RandomStream::Seeded(Xoshiro256PlusPlus::seed_from_u64(rng.next_u64())),
            RandomStream::Secure(_) => RandomStream::Secure(Box::new(StdRng::from_os_rng())),
        }
    }
}

impl RngCore for RandomStream {
    fn next_u32(&mut self) -> u32 {
        match self {
            RandomStream::Seeded(r) => r.next_u32(),
            RandomStream::Secure(r) => r.next_u32(),
        }
    }

    fn next_u64(&mut self) -> u64 {
        match self {
            RandomStream::Seeded(r) => r.next_u64(),
            RandomStream::Secure(r) => r.next_u64(),
        }
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        match self {
            RandomStream::Seeded(r) => r.fill_bytes(dst),
            RandomStream::Secure(r) => r.fill_bytes(dst),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seeded_stream_and_its_forks_repeat_and_an_os_stream_does_not() {
        let draw = |e: Entropy| {
            let mut s = RandomStream::new(e);
            let mut f = s.fork();
            (s.next_u64(), f.next_u64())
        };
        assert_eq!(draw(Entropy::Seeded(7)), draw(Entropy::Seeded(7)));
        assert_ne!(draw(Entropy::Seeded(7)), draw(Entropy::Seeded(8)));
        // Two 64-bit draws from the OS colliding twice is 2^-128: this cannot fail by chance.
        assert_ne!(draw(Entropy::Os), draw(Entropy::Os));
    }

    #[test]
    fn a_seeded_fork_is_the_xoshiro_stream_of_the_parents_next_value() {
        // The simulator's tags and TSNs depend on this derivation: keep it.
        let mut parent = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut expected = Xoshiro256PlusPlus::seed_from_u64(parent.next_u64());
        let mut s = RandomStream::new(Entropy::Seeded(3));
        assert_eq!(s.fork().next_u64(), expected.next_u64());
    }
}
