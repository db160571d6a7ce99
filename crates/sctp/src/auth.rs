//! Authenticated chunks (RFC 4895): the RANDOM, CHUNKS and HMAC-ALGO parameters each side
//! sends in INIT / INIT ACK, the association shared key derived from them (§6.1), and the
//! HMACs of the AUTH chunk (§6.2 sending, §6.3 receiving) with HMAC-SHA-1 (mandatory, §3.3)
//! and HMAC-SHA-256.
//!
//! Only the null endpoint pair shared key (Shared Key Identifier 0, §6.1: "if no endpoint
//! pair shared key is configured, the empty key is used") is supported: the keys that matter
//! here are the per-association ones built from both RANDOMs.

use hmac::{Hmac, Mac};
use sha1::Sha1;
use sha2::Sha256;

use crate::wire::{ChunkType, Parameter};

/// HMAC Identifier of HMAC-SHA-1 (RFC 4895 §3.3; every endpoint must support it).
pub const HMAC_SHA1: u16 = 1;
/// HMAC Identifier of HMAC-SHA-256 (RFC 4895 §3.3).
pub const HMAC_SHA256: u16 = 3;
/// Length of the RANDOM this engine sends (RFC 4895 §3.1: 32 bytes).
pub const RANDOM_LEN: usize = 32;

/// Bytes of the HMAC that `hmac_id` produces, or `None` for an identifier this engine does
/// not support.
pub fn hmac_len(hmac_id: u16) -> Option<usize> {
    match hmac_id {
        HMAC_SHA1 => Some(20),
        HMAC_SHA256 => Some(32),
        _ => None,
    }
}

/// The HMAC of `data` under `key` with the algorithm `hmac_id` (RFC 2104 with SHA-1 or
/// SHA-256), or `None` for an unsupported identifier.
pub fn compute(hmac_id: u16, key: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    // HMAC takes keys of any length: `new_from_slice` cannot fail for these algorithms.
    match hmac_id {
        HMAC_SHA1 => {
            let mut m = <Hmac<Sha1> as Mac>::new_from_slice(key).ok()?;
            m.update(data);
            Some(m.finalize().into_bytes().to_vec())
        }
        HMAC_SHA256 => {
            let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).ok()?;
            m.update(data);
            Some(m.finalize().into_bytes().to_vec())
        }
        _ => None,
    }
}

/// Whether `mac` is the HMAC of `data` under `key` with `hmac_id` (constant-time compare).
pub fn verify(hmac_id: u16, key: &[u8], data: &[u8], mac: &[u8]) -> bool {
    match hmac_id {
        HMAC_SHA1 => <Hmac<Sha1> as Mac>::new_from_slice(key).is_ok_and(|mut m| {
            m.update(data);
            m.verify_slice(mac).is_ok()
        }),
        HMAC_SHA256 => <Hmac<Sha256> as Mac>::new_from_slice(key).is_ok_and(|mut m| {
            m.update(data);
            m.verify_slice(mac).is_ok()
        }),
        _ => false,
    }
}

/// What one side announced in its INIT or INIT ACK (RFC 4895 §3).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthParams {
    /// The RANDOM parameter's value.
    pub random: Vec<u8>,
    /// The chunk types it requires to receive authenticated (CHUNKS).
    pub chunks: Vec<u8>,
    /// Its HMAC identifiers, in its order of preference (HMAC-ALGO).
    pub hmacs: Vec<u16>,
}

impl AuthParams {
    /// The three parameters, in the order they are sent (and concatenated, §6.1).
    pub fn to_params(&self) -> Vec<Parameter> {
        vec![
            Parameter::Random(self.random.clone()),
            Parameter::ChunkList(self.chunks.clone()),
            Parameter::HmacAlgo(self.hmacs.clone()),
        ]
    }

    /// The RANDOM, CHUNKS and HMAC-ALGO of an INIT or INIT ACK, if it carried a RANDOM and an
    /// HMAC-ALGO (RFC 4895 §6.1: without them the peer does not support AUTH). A missing
    /// CHUNKS is an empty list.
    pub fn from_params(params: &[Parameter]) -> Option<Self> {
        let mut out = AuthParams::default();
        let (mut random, mut hmacs) = (false, false);
        for p in params {
            match p {
                Parameter::Random(r) if !random => {
                    out.random = r.clone();
                    random = true;
                }
                Parameter::ChunkList(c) => out.chunks = c.clone(),
                Parameter::HmacAlgo(h) if !hmacs => {
                    out.hmacs = h.clone();
                    hmacs = true;
                }
                _ => {}
            }
        }
        (random && hmacs).then_some(out)
    }

    /// The key vector (§6.1): the RANDOM, CHUNKS and HMAC-ALGO parameters as sent, each
    /// with its header and without padding, concatenated.
    pub fn key_vector(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(12 + self.random.len() + self.chunks.len() + 2 * self.hmacs.len());
        let mut tlv = |t: u16, value: &[u8]| {
            v.extend_from_slice(&t.to_be_bytes());
            v.extend_from_slice(&((4 + value.len()).min(usize::from(u16::MAX)) as u16).to_be_bytes());
            v.extend_from_slice(value);
        };
        tlv(0x8002, &self.random);
        tlv(0x8003, &self.chunks);
        let hmacs: Vec<u8> = self.hmacs.iter().flat_map(|h| h.to_be_bytes()).collect();
        tlv(0x8004, &hmacs);
        v
    }
}

/// Compares two key vectors as big-endian numbers (§6.1); of two numerically equal vectors
/// the shorter counts as smaller.
fn vector_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    // Leading zeros do not change a number: compare the significant bytes.
    let strip = |v: &[u8]| v.iter().position(|&x| x != 0).map_or(0, |i| v.len() - i);
    let (sa, sb) = (strip(a), strip(b));
    sa.cmp(&sb).then_with(|| a[a.len() - sa..].cmp(&b[b.len() - sb..])).then_with(|| a.len().cmp(&b.len()))
}

/// The association shared key (§6.1): the endpoint pair shared key, then the numerically
/// smaller key vector, then the larger (the shorter first if they are equal as numbers).
pub fn association_key(shared: &[u8], local: &AuthParams, peer: &AuthParams) -> Vec<u8> {
    let (a, b) = (local.key_vector(), peer.key_vector());
    let (first, second) = if vector_order(&a, &b).is_lt() { (a, b) } else { (b, a) };
    [shared, &first, &second].concat()
}

/// Chunk types that must never be listed in CHUNKS (§3.2: INIT, INIT ACK, SHUTDOWN COMPLETE
/// and AUTH itself).
pub fn may_be_authenticated(chunk_type: u8) -> bool {
    !matches!(
        ChunkType(chunk_type),
        ChunkType::INIT | ChunkType::INIT_ACK | ChunkType::SHUTDOWN_COMPLETE | ChunkType::AUTH
    )
}

/// AUTH in force on an association: both sides sent their parameters.
#[derive(Clone, Debug)]
pub(crate) struct AuthState {
    /// The association shared key (§6.1).
    pub(crate) key: Vec<u8>,
    /// The HMAC this side sends: the first of the peer's list it supports (§6.1).
    pub(crate) send_hmac: u16,
    /// Chunk types the peer requires authenticated: we precede them with AUTH.
    peer_requires: [bool; 256],
    /// Chunk types we require authenticated: received without a valid AUTH they are dropped.
    we_require: [bool; 256],
}

impl AuthState {
    /// AUTH between `local` and `peer`, or `None` if the peer lists no HMAC this engine
    /// supports (it must list SHA-1, §6.1, so that is a broken peer).
    pub(crate) fn new(local: &AuthParams, peer: &AuthParams) -> Option<Self> {
        let send_hmac = peer.hmacs.iter().copied().find(|&h| hmac_len(h).is_some())?;
        let mut peer_requires = [false; 256];
        for &c in &peer.chunks {
            peer_requires[usize::from(c)] = may_be_authenticated(c);
        }
        let mut we_require = [false; 256];
        for &c in &local.chunks {
            we_require[usize::from(c)] = may_be_authenticated(c);
        }
        Some(AuthState { key: association_key(&[], local, peer), send_hmac, peer_requires, we_require })
    }

    /// Whether a chunk of this type goes out behind an AUTH chunk.
    pub(crate) fn must_sign(&self, chunk_type: u8) -> bool {
        self.peer_requires[usize::from(chunk_type)]
    }

    /// Whether a chunk of this type is dropped unless a valid AUTH precedes it.
    pub(crate) fn must_verify(&self, chunk_type: u8) -> bool {
        self.we_require[usize::from(chunk_type)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha1_and_sha256_match_rfc_2202_and_4231_vectors() {
        // RFC 2202 test case 2 and RFC 4231 test case 2: key "Jefe".
        let data = b"what do ya want for nothing?";
        let sha1 = compute(HMAC_SHA1, b"Jefe", data).unwrap();
        assert_eq!(hex(&sha1), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
        let sha256 = compute(HMAC_SHA256, b"Jefe", data).unwrap();
        assert_eq!(hex(&sha256), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        assert!(verify(HMAC_SHA1, b"Jefe", data, &sha1));
        assert!(!verify(HMAC_SHA1, b"Jeff", data, &sha1));
        assert!(compute(2, b"Jefe", data).is_none());
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn key_vectors_are_ordered_numerically_and_the_key_is_the_same_at_both_ends() {
        let a = AuthParams { random: vec![1; 32], chunks: vec![0xC1, 0x80], hmacs: vec![1] };
        let b = AuthParams { random: vec![2; 32], chunks: vec![0xC1, 0x80], hmacs: vec![1] };
        let k1 = association_key(&[], &a, &b);
        let k2 = association_key(&[], &b, &a);
        assert_eq!(k1, k2, "both ends derive the same key");
        assert_eq!(&k1[..a.key_vector().len()], &a.key_vector()[..], "the smaller vector first");
        // The vector: RANDOM (4 + 32), CHUNKS (4 + 2), HMAC-ALGO (4 + 2), no padding.
        assert_eq!(a.key_vector().len(), 36 + 6 + 6);
        assert_eq!(&a.key_vector()[..4], &[0x80, 0x02, 0, 36]);
        // Equal as numbers, different lengths: the shorter first.
        assert!(vector_order(&[0, 0, 5], &[0, 5]).is_gt());
        assert!(vector_order(&[0, 5], &[0, 0, 5]).is_lt());
        assert!(vector_order(&[1, 0], &[0, 0, 0xff]).is_gt());
    }

    #[test]
    fn the_sender_picks_the_first_supported_hmac_of_the_peers_list() {
        let local = AuthParams { random: vec![1; 32], chunks: vec![0xC1, 1, 14, 15], hmacs: vec![1] };
        let peer = AuthParams { random: vec![2; 32], chunks: vec![0], hmacs: vec![7, 3, 1] };
        let s = AuthState::new(&local, &peer).unwrap();
        assert_eq!(s.send_hmac, HMAC_SHA256);
        assert!(s.must_sign(0) && !s.must_sign(0xC1));
        assert!(s.must_verify(0xC1));
        // §3.2: INIT, SHUTDOWN COMPLETE and AUTH are never authenticated.
        assert!(!s.must_verify(1) && !s.must_verify(14) && !s.must_verify(15));
        assert!(AuthState::new(&local, &AuthParams { hmacs: vec![9], ..peer }).is_none());
    }
}
