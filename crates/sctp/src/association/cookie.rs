//! The State Cookie (RFC 9260 §5.1.3): everything the passive side needs to build the
//! association from a COOKIE ECHO, so it keeps no state between INIT and COOKIE ECHO.
//! Signed with HMAC-SHA-256 under the endpoint's secret key (§5.1.3 recommends a MAC).
//! Cookies answering an INIT for an existing association also carry that association's
//! Tie-Tags (§5.2.2), which link a COOKIE ECHO to it (§5.2.4).

use std::net::IpAddr;

use hmac::{Hmac, Mac};

use crate::auth::AuthParams;
use sha2::Sha256;
use simtime::{Duration, Instant};

/// Layout version; 2 added the Tie-Tags.
const VERSION: u8 = 2;
const MAC_LEN: usize = 32;
/// Bit of the optional flags byte after the addresses: ECN agreed.
const FLAG_ECN: u8 = 0x01;
/// Bit of the flags byte: AUTH offered (RFC 4895), its section follows the flags byte.
const FLAG_AUTH: u8 = 0x02;
/// Bit of the flags byte: the peer announced ASCONF and ASCONF-ACK (RFC 5061 §4.2.7).
const FLAG_PEER_ASCONF: u8 = 0x04;

/// The Transmission Control Block fields carried in a cookie.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CookieState {
    pub(crate) created: Instant,
    pub(crate) lifespan: Duration,
    pub(crate) local_tag: u32,
    pub(crate) peer_tag: u32,
    pub(crate) local_initial_tsn: u32,
    pub(crate) peer_initial_tsn: u32,
    pub(crate) peer_rwnd: u32,
    /// The Tie-Tags of the association that answered the INIT (§5.2.2); zero when the
    /// INIT ACK came from no association or one in COOKIE-WAIT (§5.2.1).
    pub(crate) local_tie_tag: u32,
    pub(crate) peer_tie_tag: u32,
    pub(crate) outbound_streams: u16,
    pub(crate) inbound_streams: u16,
    pub(crate) local_port: u16,
    pub(crate) peer_port: u16,
    /// The peer's addresses; the first is the one the INIT came from (the primary).
    pub(crate) peer_addrs: Vec<IpAddr>,
    /// ECN agreed (RFC 9260 Appendix A): the INIT listed ECN Capable and so did our INIT ACK.
    /// Written as one flags byte after the addresses, only when set, so cookies without it
    /// keep their length.
    pub(crate) ecn: bool,
    /// AUTH (RFC 4895): the RANDOM our INIT ACK sent and the peer's parameters from its INIT
    /// (`None` if it sent none). Absent when AUTH is off, so such cookies keep their length.
    pub(crate) auth: Option<(Vec<u8>, Option<AuthParams>)>,
    /// The peer's INIT listed ASCONF and ASCONF-ACK in its Supported Extensions (RFC 5061).
    pub(crate) peer_asconf: bool,
}

/// The AUTH section of a cookie (see [`CookieState::seal`]), advancing `r` past it.
fn decode_auth(r: &mut &[u8]) -> Option<(Vec<u8>, Option<AuthParams>)> {
    fn take<'a>(r: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        let (head, rest) = r.split_at_checked(n)?;
        *r = rest;
        Some(head)
    }
    fn take16(r: &mut &[u8]) -> Option<Vec<u8>> {
        let n = take(r, 2)?;
        let n = usize::from(u16::from_be_bytes([n[0], n[1]]));
        Some(take(r, n)?.to_vec())
    }
    let random = take16(r)?;
    let peer = match take(r, 1)?[0] {
        0 => None,
        1 => {
            let random = take16(r)?;
            let chunks = take16(r)?;
            let hmacs = take16(r)?.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
            Some(AuthParams { random, chunks, hmacs })
        }
        _ => return None,
    };
    Some((random, peer))
}

/// Appends `v` with a 16-bit length (saturated: a longer value is cut).
fn put16(b: &mut Vec<u8>, v: &[u8]) {
    let n = v.len().min(usize::from(u16::MAX));
    b.extend_from_slice(&(n as u16).to_be_bytes());
    b.extend_from_slice(&v[..n]);
}

fn mac(secret: &[u8; 32], body: &[u8]) -> [u8; MAC_LEN] {
    // HMAC accepts keys of any length; a 32-byte key never fails.
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(secret).unwrap_or_else(|_| unreachable!());
    m.update(body);
    m.finalize().into_bytes().into()
}

impl CookieState {
    /// Serialises and signs.
    pub(crate) fn seal(&self, secret: &[u8; 32]) -> Vec<u8> {
        let mut b = Vec::with_capacity(64 + 17 * self.peer_addrs.len());
        b.push(VERSION);
        b.extend_from_slice(&self.created.as_nanos().to_be_bytes());
        b.extend_from_slice(&self.lifespan.as_nanos().to_be_bytes());
        for v in [
            self.local_tag,
            self.peer_tag,
            self.local_initial_tsn,
            self.peer_initial_tsn,
            self.peer_rwnd,
            self.local_tie_tag,
            self.peer_tie_tag,
        ] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        for v in [self.outbound_streams, self.inbound_streams, self.local_port, self.peer_port] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b.push(self.peer_addrs.len().min(255) as u8);
        for a in self.peer_addrs.iter().take(255) {
            match a {
                IpAddr::V4(v4) => {
                    b.push(4);
                    b.extend_from_slice(&v4.octets());
                }
                IpAddr::V6(v6) => {
                    b.push(6);
                    b.extend_from_slice(&v6.octets());
                }
            }
        }
        let flags = (if self.ecn { FLAG_ECN } else { 0 })
            | (if self.auth.is_some() { FLAG_AUTH } else { 0 })
            | (if self.peer_asconf { FLAG_PEER_ASCONF } else { 0 });
        if flags != 0 {
            b.push(flags);
        }
        if let Some((random, peer)) = &self.auth {
            put16(&mut b, random);
            b.push(u8::from(peer.is_some()));
            if let Some(p) = peer {
                put16(&mut b, &p.random);
                put16(&mut b, &p.chunks);
                let hmacs: Vec<u8> = p.hmacs.iter().flat_map(|h| h.to_be_bytes()).collect();
                put16(&mut b, &hmacs);
            }
        }
        let tag = mac(secret, &b);
        b.extend_from_slice(&tag);
        b
    }

    /// Verifies the MAC and decodes (§5.1.5 steps 1 and 2); `None` if the cookie is
    /// malformed or not ours. The lifespan is checked apart ([`staleness`](Self::staleness)):
    /// §5.2.4 step 3 accepts an expired cookie whose tags match the association.
    pub(crate) fn open(cookie: &[u8], secret: &[u8; 32]) -> Option<Self> {
        let split = cookie.len().checked_sub(MAC_LEN)?;
        let (body, tag) = cookie.split_at(split);
        // Constant-time comparison through the hmac crate.
        let mut m = <Hmac<Sha256> as Mac>::new_from_slice(secret).ok()?;
        m.update(body);
        m.verify_slice(tag).ok()?;
        Self::decode(body)
    }

    /// How long past its lifespan the cookie is at `now` (§5.1.5 step 3), if it has expired.
    pub(crate) fn staleness(&self, now: Instant) -> Option<Duration> {
        let age = now.saturating_since(self.created);
        (age > self.lifespan).then(|| age - self.lifespan)
    }

    fn decode(body: &[u8]) -> Option<Self> {
        let mut r = body;
        let mut take = |n: usize| -> Option<&[u8]> {
            let (head, rest) = r.split_at_checked(n)?;
            r = rest;
            Some(head)
        };
        let u64_ = |b: &[u8]| b.try_into().ok().map(u64::from_be_bytes);
        let u32_ = |b: &[u8]| b.try_into().ok().map(u32::from_be_bytes);
        let u16_ = |b: &[u8]| b.try_into().ok().map(u16::from_be_bytes);
        if take(1)? != [VERSION] {
            return None;
        }
        let created = Instant::from_nanos(u64_(take(8)?)?);
        let lifespan = Duration::from_nanos(u64_(take(8)?)?);
        let local_tag = u32_(take(4)?)?;
        let peer_tag = u32_(take(4)?)?;
        let local_initial_tsn = u32_(take(4)?)?;
        let peer_initial_tsn = u32_(take(4)?)?;
        let peer_rwnd = u32_(take(4)?)?;
        let local_tie_tag = u32_(take(4)?)?;
        let peer_tie_tag = u32_(take(4)?)?;
        let outbound_streams = u16_(take(2)?)?;
        let inbound_streams = u16_(take(2)?)?;
        let local_port = u16_(take(2)?)?;
        let peer_port = u16_(take(2)?)?;
        let n = take(1)?[0];
        let mut peer_addrs = Vec::with_capacity(usize::from(n));
        for _ in 0..n {
            let addr = match take(1)?[0] {
                4 => IpAddr::from(<[u8; 4]>::try_from(take(4)?).ok()?),
                6 => IpAddr::from(<[u8; 16]>::try_from(take(16)?).ok()?),
                _ => return None,
            };
            peer_addrs.push(addr);
        }
        let flags = take(1).map_or(0, |f| f[0]);
        let auth = if flags & FLAG_AUTH != 0 { Some(decode_auth(&mut r)?) } else { None };
        if !r.is_empty() {
            return None;
        }
        Some(CookieState {
            created,
            lifespan,
            local_tag,
            peer_tag,
            local_initial_tsn,
            peer_initial_tsn,
            peer_rwnd,
            local_tie_tag,
            peer_tie_tag,
            outbound_streams,
            inbound_streams,
            local_port,
            peer_port,
            peer_addrs,
            ecn: flags & FLAG_ECN != 0,
            auth,
            peer_asconf: flags & FLAG_PEER_ASCONF != 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CookieState {
        CookieState {
            created: Instant::from_nanos(5_000_000_000),
            lifespan: Duration::from_secs(60),
            local_tag: 0xdead_beef,
            peer_tag: 7,
            local_initial_tsn: 100,
            peer_initial_tsn: 200,
            peer_rwnd: 65536,
            local_tie_tag: 0x1111_2222,
            peer_tie_tag: 0x3333_4444,
            outbound_streams: 10,
            inbound_streams: 5,
            local_port: 5000,
            peer_port: 6000,
            peer_addrs: vec!["10.0.0.1".parse().unwrap(), "::1".parse().unwrap()],
            ecn: false,
            auth: None,
            peer_asconf: false,
        }
    }

    #[test]
    fn the_ecn_flag_adds_one_byte_only_when_set() {
        let key = [7u8; 32];
        let with = CookieState { ecn: true, ..sample() };
        let (plain, flagged) = (sample().seal(&key), with.seal(&key));
        assert_eq!(flagged.len(), plain.len() + 1);
        assert_eq!(CookieState::open(&flagged, &key), Some(with));
        assert_eq!(CookieState::open(&plain, &key), Some(sample()));
    }

    #[test]
    fn seal_open_round_trip_and_rejections() {
        let key = [7u8; 32];
        let sealed = sample().seal(&key);
        let now = Instant::from_nanos(6_000_000_000);
        assert_eq!(CookieState::open(&sealed, &key), Some(sample()));
        assert_eq!(CookieState::open(&sealed, &[8u8; 32]), None);
        let mut tampered = sealed.clone();
        tampered[10] ^= 1;
        assert_eq!(CookieState::open(&tampered, &key), None);
        assert_eq!(CookieState::open(&sealed[..20], &key), None);
        assert_eq!(sample().staleness(now), None);
        let late = Instant::from_nanos(66_000_000_000);
        assert_eq!(sample().staleness(late), Some(Duration::from_secs(1)));
    }

    #[test]
    fn the_auth_section_round_trips_and_a_truncated_one_is_refused() {
        let secret = [7u8; 32];
        let peer = AuthParams { random: vec![9; 32], chunks: vec![0xC1, 0x80], hmacs: vec![3, 1] };
        for auth in [Some((vec![1u8; 32], None)), Some((vec![1u8; 32], Some(peer.clone())))] {
            let c = CookieState { auth, peer_asconf: true, ..sample() };
            assert_eq!(CookieState::open(&c.seal(&secret), &secret), Some(c.clone()));
            let body_len = c.seal(&secret).len() - MAC_LEN;
            let mut body = c.seal(&secret)[..body_len - 1].to_vec();
            let tag = mac(&secret, &body);
            body.extend_from_slice(&tag);
            assert_eq!(CookieState::open(&body, &secret), None);
        }
        let plain = sample();
        assert_eq!(
            plain.seal(&secret).len(),
            CookieState { peer_asconf: false, auth: None, ..plain.clone() }.seal(&secret).len()
        );
    }
}
