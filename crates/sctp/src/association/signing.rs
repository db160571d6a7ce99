//! AUTH on an association (RFC 4895): the parameters of INIT / INIT ACK, checking received
//! AUTH chunks (§6.3) and signing packets built with one (§6.2).

use crate::auth::{self, AuthParams, AuthState};
use crate::config::Config;
use crate::wire::{Chunk, ChunkType, ChunkView, ErrorCause, Parameter};

use super::Association;

/// Error cause "Unsupported HMAC Identifier" (RFC 4895 §4.1, cause code 261).
pub const CAUSE_UNSUPPORTED_HMAC: u16 = 261;

/// The parameters an INIT or INIT ACK carries for the extensions `config` turns on: RANDOM
/// (`random`), CHUNKS and HMAC-ALGO (RFC 4895 §3), and Supported Extensions (RFC 5061
/// §4.2.7) listing AUTH and, with ASCONF, ASCONF and ASCONF-ACK.
pub(crate) fn extension_params(config: &Config, random: Vec<u8>) -> Vec<Parameter> {
    let mut params = config.auth_params(random).to_params();
    let mut ext = vec![ChunkType::AUTH.0];
    if config.asconf {
        ext.extend([ChunkType::ASCONF.0, ChunkType::ASCONF_ACK.0]);
    }
    params.push(Parameter::SupportedExtensions(ext));
    params
}

/// Whether an INIT or INIT ACK announces ASCONF and ASCONF-ACK (RFC 5061 §4.2.7).
pub(crate) fn peer_supports_asconf(params: &[Parameter]) -> bool {
    params.iter().any(|p| {
        matches!(p, Parameter::SupportedExtensions(e)
            if e.contains(&ChunkType::ASCONF.0) && e.contains(&ChunkType::ASCONF_ACK.0))
    })
}

/// What an AUTH chunk of a received packet proved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AuthCheck {
    /// Valid: the chunks after it are authenticated.
    Valid,
    /// Wrong HMAC or key: the rest of the packet is discarded silently (§6.3).
    Invalid,
    /// An HMAC identifier we do not support: discarded, reported (§6.3).
    UnsupportedHmac(u16),
}

/// Where `inner` starts inside `outer`, if it is a sub-slice of it.
fn offset_in(outer: &[u8], inner: &[u8]) -> Option<usize> {
    let off = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    (off + inner.len() <= outer.len()).then_some(off)
}

impl Association {
    /// AUTH from the INIT or INIT ACK the peer sent (`peer`, `None` if it sent none), given
    /// what we sent (`local`); `peer_asconf` when it announced ASCONF. ASCONF is used only with
    /// AUTH in force and announced by both (RFC 5061 §4.1).
    pub(super) fn agree_auth(&mut self, local: Option<&AuthParams>, peer: Option<&AuthParams>, peer_asconf: bool) {
        self.auth = match (local, peer) {
            (Some(l), Some(p)) => AuthState::new(l, p),
            _ => None,
        };
        self.asconf.enabled = self.config.asconf && self.auth.is_some() && peer_asconf;
    }

    /// Checks the AUTH chunk `view` of a packet whose chunks are `chunks` (§6.3): the HMAC
    /// over the AUTH chunk, its HMAC field zeroed, and everything after it.
    pub(super) fn check_auth(&self, chunks: &[u8], view: &ChunkView<'_>) -> AuthCheck {
        let Some(state) = self.auth.as_ref() else { return AuthCheck::Invalid };
        let [k0, k1, h0, h1, mac @ ..] = view.value else { return AuthCheck::Invalid };
        let (key_id, hmac_id) = (u16::from_be_bytes([*k0, *k1]), u16::from_be_bytes([*h0, *h1]));
        let Some(len) = auth::hmac_len(hmac_id) else { return AuthCheck::UnsupportedHmac(hmac_id) };
        // Only the null endpoint pair shared key (identifier 0) exists here.
        if key_id != 0 || mac.len() != len {
            return AuthCheck::Invalid;
        }
        let Some(at) = offset_in(chunks, view.value).and_then(|v| v.checked_sub(4)) else {
            return AuthCheck::Invalid;
        };
        let mut covered = chunks[at..].to_vec();
        covered[8..8 + len].fill(0);
        if auth::verify(hmac_id, &state.key, &covered, mac) {
            AuthCheck::Valid
        } else {
            AuthCheck::Invalid
        }
    }

    /// Answers an AUTH chunk with an HMAC identifier we do not support (§6.3): an ERROR with
    /// the Unsupported HMAC Identifier cause.
    pub(super) fn report_unsupported_hmac(&mut self, from: Option<super::PathId>, hmac_id: u16) {
        let p = from.unwrap_or(self.primary);
        let cause = ErrorCause::Unknown { code: CAUSE_UNSUPPORTED_HMAC, value: hmac_id.to_be_bytes().to_vec() };
        self.control.push_back((p, Chunk::Error { causes: vec![cause] }));
    }

    /// The AUTH chunk to place before chunks the peer requires authenticated, its HMAC field
    /// zero until [`sign`] fills it; `None` while AUTH is not in force.
    pub(super) fn auth_placeholder(&self) -> Option<Chunk> {
        let s = self.auth.as_ref()?;
        let len = auth::hmac_len(s.send_hmac)?;
        Some(Chunk::Auth { key_id: 0, hmac_id: s.send_hmac, hmac: vec![0; len] })
    }
}

/// Fills in the HMAC of the AUTH chunk at `at` in `packet` (§6.2): computed over that chunk,
/// its HMAC field zero, and everything after it.
pub(super) fn sign(state: &AuthState, packet: &mut [u8], at: usize) {
    let Some(len) = auth::hmac_len(state.send_hmac) else { return };
    let Some(covered) = packet.get(at..) else { return };
    let Some(mac) = auth::compute(state.send_hmac, &state.key, covered) else { return };
    if let Some(field) = packet.get_mut(at + 8..at + 8 + len) {
        field.copy_from_slice(&mac);
    }
}
