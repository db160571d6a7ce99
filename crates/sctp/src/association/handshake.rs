//! Set-up (RFC 9260 §5: INIT, INIT ACK, COOKIE ECHO, COOKIE ACK, T1 timers), INITs and
//! COOKIE ECHOs for an association that exists (§5.2: initialization collision, peer
//! restart, duplicates) and graceful shutdown (§9.2: SHUTDOWN, SHUTDOWN ACK, SHUTDOWN
//! COMPLETE, T2 and T5 timers).

use std::net::IpAddr;

use simtime::Instant;

use rand::RngCore;

use crate::auth::AuthParams;
use crate::config::Config;
use crate::random::{Entropy, RandomStream};
use crate::wire::{
    unknown_parameter_action, Chunk, ErrorCause, InitChunk, ParamType, Parameter, SackChunk, UnknownAction,
};

use super::inbound::Inbound;
use super::outbound::Outbound;
use super::{random_tag, Association, CloseReason, CookieState, Event, Path, PathId, State, Timer};

/// The address parameters (§3.3.2.1) listing `addrs`.
pub(crate) fn address_params(addrs: &[IpAddr]) -> Vec<Parameter> {
    addrs
        .iter()
        .map(|a| match a {
            IpAddr::V4(v4) => Parameter::Ipv4Address(*v4),
            IpAddr::V6(v6) => Parameter::Ipv6Address(*v6),
        })
        .collect()
}

/// The tags of an INIT ACK and the Tie-Tags its cookie carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AckTags {
    /// A new random Initiate Tag and initial TSN (§5.1 B, §5.2.2).
    Fresh {
        /// (local, peer) Tie-Tags; zero without an association.
        tie_tags: (u32, u32),
    },
    /// The Initiate Tag and initial TSN of our own INIT (§5.2.1).
    Own {
        /// Our verification tag.
        tag: u32,
        /// Our INIT's initial TSN.
        initial_tsn: u32,
        /// (local, peer) Tie-Tags; zero in COOKIE-WAIT.
        tie_tags: (u32, u32),
    },
}

/// What an INIT ACK offers besides its tags: the window and the stream counts, which the
/// INIT's own then limit (§5.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Offer {
    /// a_rwnd.
    pub(crate) a_rwnd: u32,
    /// Outbound streams wanted (OS).
    pub(crate) outbound_streams: u16,
    /// Inbound streams accepted (MIS).
    pub(crate) max_inbound_streams: u16,
}

impl Offer {
    /// What our INIT offers, and the INIT ACK of a new association.
    pub(crate) fn from_config(config: &Config) -> Self {
        Offer {
            a_rwnd: config.recv_buffer,
            outbound_streams: config.outbound_streams,
            max_inbound_streams: config.max_inbound_streams,
        }
    }
}

/// How the endpoint answers an INIT for an existing association (§5.2.1, §5.2.2, §9.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum InitAnswer {
    /// INIT ACK with these tags and this offer; the association stays as it is.
    InitAck(AckTags, Offer),
    /// ABORT with the "Restart of an Association with New Addresses" cause listing these.
    NewAddresses(Vec<IpAddr>),
    /// Nothing (in SHUTDOWN-ACK-SENT the association retransmits its SHUTDOWN ACK itself).
    Discard,
}

/// What became of a COOKIE ECHO for an existing association (§5.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CookieEchoOutcome {
    /// Accepted (actions A, B, D): the chunks bundled after it are processed.
    Accepted,
    /// Expired, and its tags are not both the association's (§5.2.4 step 3): the endpoint
    /// sends a Stale Cookie error.
    Stale,
    /// Discarded with the rest of the packet.
    Discarded,
}

/// The rows of §5.2.4 Table 2: how a cookie's tags and Tie-Tags compare with the
/// association's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CookieRow {
    /// Both tags new, Tie-Tags ours: the peer restarted.
    A,
    /// Our tag, a new peer tag: initialization collision.
    B,
    /// A new local tag, the peer's tag, no Tie-Tags: a cookie that arrived late.
    C,
    /// Both tags ours: a duplicate (the COOKIE ACK was lost, or the collision's crossing
    /// COOKIE ECHOs).
    D,
    /// None of the above.
    Unmatched,
}

/// What a handshake tells about the peer: its INIT ACK (§5.1 C), or its INIT as carried in
/// our cookie (§5.2.4).
struct PeerInit {
    tag: u32,
    rwnd: u32,
    initial_tsn: u32,
    /// Our outbound and inbound stream counts, negotiated.
    outbound_streams: u16,
    inbound_streams: u16,
    /// Its addresses, the one its chunk came from first.
    addrs: Vec<IpAddr>,
    /// ECN agreed: both sides listed the ECN Capable parameter (RFC 9260 Appendix A).
    ecn: bool,
    /// AUTH (RFC 4895): what we sent (`None` with AUTH off) and what the peer sent.
    local_auth: Option<AuthParams>,
    peer_auth: Option<AuthParams>,
    /// The peer announced ASCONF (RFC 5061 §4.2.7).
    peer_asconf: bool,
}

impl PeerInit {
    fn from_cookie(c: &CookieState, config: &Config) -> Self {
        let (local_auth, peer_auth) = match &c.auth {
            Some((random, peer)) => (Some(config.auth_params(random.clone())), peer.clone()),
            None => (None, None),
        };
        PeerInit {
            local_auth,
            peer_auth,
            peer_asconf: c.peer_asconf,
            tag: c.peer_tag,
            rwnd: c.peer_rwnd,
            initial_tsn: c.peer_initial_tsn,
            outbound_streams: c.outbound_streams,
            inbound_streams: c.inbound_streams,
            addrs: c.peer_addrs.clone(),
            ecn: c.ecn,
        }
    }
}

/// Applies §3.2.1 to the parameters of an INIT or INIT ACK: an unknown parameter's upper two
/// bits say whether processing of the chunk's parameters stops at it (`0x`: the chunk is still
/// processed, the parameters from there on are ignored, so they are dropped from `params`) and
/// whether it is reported (`x1`). Returns the parameters to report (§3.2.2), each a complete
/// TLV.
pub(crate) fn screen_unknown_params(params: &mut Vec<Parameter>) -> Vec<Vec<u8>> {
    let mut unrecognized = Vec::new();
    let mut keep = params.len();
    for (i, p) in params.iter().enumerate() {
        let Parameter::Unknown { param_type, .. } = p else { continue };
        let action = unknown_parameter_action(*param_type);
        if matches!(action, UnknownAction::StopAndReport | UnknownAction::SkipAndReport) {
            unrecognized.push(Parameter::emit_list(std::slice::from_ref(p)));
        }
        if matches!(action, UnknownAction::Stop | UnknownAction::StopAndReport) {
            keep = i;
            break;
        }
    }
    params.truncate(keep);
    unrecognized
}

/// The peer's addresses: the packet's source first, then those listed in INIT / INIT ACK
/// (§5.1.2), without repeats.
pub(crate) fn peer_addresses(source: IpAddr, params: &[Parameter]) -> Vec<IpAddr> {
    let mut addrs = vec![source];
    for p in params {
        let a = match p {
            Parameter::Ipv4Address(v4) => IpAddr::V4(*v4),
            Parameter::Ipv6Address(v6) => IpAddr::V6(*v6),
            _ => continue,
        };
        if !addrs.contains(&a) {
            addrs.push(a);
        }
    }
    addrs
}

impl Association {
    /// Starts an association as the active side (§5.1 A): sends INIT to `remote_addrs[0]`
    /// (the primary) and starts T1-init. `seed` feeds the association's random values (tag,
    /// initial TSN, heartbeat nonces and jitter) reproducibly; an [`Endpoint`](crate::Endpoint)
    /// made [`with_entropy`](crate::Endpoint::with_entropy) gives its associations the source
    /// it was given.
    pub fn connect(
        config: Config,
        local_addrs: Vec<IpAddr>,
        local_port: u16,
        remote_addrs: &[IpAddr],
        peer_port: u16,
        now: Instant,
        seed: u64,
    ) -> Self {
        let rng = RandomStream::new(Entropy::Seeded(seed));
        Self::connect_with(config, local_addrs, local_port, remote_addrs, peer_port, now, rng)
    }

    /// [`Association::connect`] with a stream the endpoint forked from its own.
    pub(crate) fn connect_with(
        config: Config,
        local_addrs: Vec<IpAddr>,
        local_port: u16,
        remote_addrs: &[IpAddr],
        peer_port: u16,
        now: Instant,
        rng: RandomStream,
    ) -> Self {
        let mut a = Self::new_common(config, local_addrs, local_port, peer_port, rng);
        for &r in remote_addrs {
            if a.path_of(r).is_none() {
                let nonce = a.next_nonce();
                a.paths.push(Path::new(r, &a.config, a.config.recv_buffer, nonce));
            }
        }
        a.set_state(State::CookieWait);
        a.send_init(now);
        a
    }

    fn send_init(&mut self, now: Instant) {
        let mut params = if self.local_addrs.len() > 1 { address_params(&self.local_addrs) } else { Vec::new() };
        if self.config.ecn {
            params.push(Parameter::EcnCapable); // RFC 9260 Appendix A
        }
        if self.config.auth {
            // RFC 4895 §3: our RANDOM, drawn once per association (only with AUTH on, so the
            // random values of everything else are unchanged without it).
            let random = match &self.local_auth {
                Some(a) => a.random.clone(),
                None => {
                    let mut r = vec![0u8; crate::auth::RANDOM_LEN];
                    self.rng.fill_bytes(&mut r);
                    r
                }
            };
            self.local_auth = Some(self.config.auth_params(random.clone()));
            params.extend(super::signing::extension_params(&self.config, random));
        }
        let offer = Offer::from_config(&self.config);
        let init = Chunk::Init(InitChunk {
            initiate_tag: self.local_tag,
            a_rwnd: offer.a_rwnd,
            outbound_streams: offer.outbound_streams,
            inbound_streams: offer.max_inbound_streams,
            initial_tsn: self.out.next_tsn,
            params,
        });
        self.init_retransmits = 0;
        self.t1_rto = self.config.rto_initial.min(self.config.rto_max);
        self.timers.set(Timer::T1, now + self.t1_rto);
        self.handshake_chunk = Some((self.primary, init.clone()));
        if !self.paths.is_empty() {
            self.control.push_back((self.primary, init));
        }
    }

    /// §5.2.6: after a Stale Cookie error, start again from INIT, at most Max.Init.Retransmits
    /// times (as Linux counts them); then give up and report it (§5.2.6 option 2).
    ///
    /// Back in COOKIE-WAIT the peer's tag is unknown again (0, as Linux clears it): the new
    /// INIT goes out with tag 0 (§8.5.1 A), and a collision cookie, which has our tag and the
    /// peer's, is action B (§5.2.4), which takes the peer's INIT from the cookie and
    /// establishes the association. Keeping the tag of the stale handshake would make such a
    /// cookie action D, which only acknowledges, and leave COOKIE-WAIT stuck.
    pub(super) fn restart_init(&mut self, now: Instant) {
        self.stale_restarts += 1;
        if self.stale_restarts > self.config.max_init_retransmits {
            self.close(CloseReason::InitFailed);
            return;
        }
        self.set_state(State::CookieWait);
        self.peer_tag = 0;
        self.send_init(now);
    }

    /// Creates the association of the passive side from a verified cookie (§5.1 D): it is
    /// ESTABLISHED at once and answers with COOKIE ACK to `from`.
    pub(crate) fn accept(
        config: Config,
        local_addrs: Vec<IpAddr>,
        cookie: &CookieState,
        from: IpAddr,
        now: Instant,
        rng: RandomStream,
    ) -> Self {
        let mut a = Self::new_common(config, local_addrs, cookie.local_port, cookie.peer_port, rng);
        a.local_tag = cookie.local_tag;
        a.peer_tag = cookie.peer_tag;
        a.out = super::outbound::Outbound::new(cookie.local_initial_tsn, cookie.outbound_streams);
        a.out.peer_rwnd = cookie.peer_rwnd;
        a.inb = Inbound::new(cookie.peer_initial_tsn, cookie.inbound_streams, a.config.recv_buffer);
        for &r in &cookie.peer_addrs {
            let nonce = a.next_nonce();
            a.paths.push(Path::new(r, &a.config, cookie.peer_rwnd, nonce));
        }
        if let Some(p) = a.paths.first() {
            a.paths[p].confirmed = true;
        }
        a.ecn.ok = cookie.ecn;
        let init = PeerInit::from_cookie(cookie, &a.config);
        a.local_auth = init.local_auth.clone();
        a.agree_auth(init.local_auth.as_ref(), init.peer_auth.as_ref(), init.peer_asconf);
        a.asconf.start(cookie.local_initial_tsn, cookie.peer_initial_tsn);
        let ack_to = a.path_of(from).unwrap_or_default();
        a.control.push_back((ack_to, Chunk::CookieAck));
        a.on_established(now);
        a
    }

    /// INIT ACK in COOKIE-WAIT (§5.1 C): learn the peer, answer with COOKIE ECHO.
    pub(super) fn on_init_ack(&mut self, now: Instant, from: IpAddr, mut init: InitChunk) {
        if self.state != State::CookieWait {
            return; // §5.2.3: an unexpected INIT ACK is discarded.
        }
        let unrecognized = screen_unknown_params(&mut init.params);
        if init.initiate_tag == 0 || init.outbound_streams == 0 || init.inbound_streams == 0 {
            self.abort_with(now, CloseReason::Aborted, vec![ErrorCause::InvalidMandatoryParameter]);
            return;
        }
        let Some(cookie) = init.params.iter().find_map(|p| match p {
            Parameter::StateCookie(c) => Some(c.clone()),
            _ => None,
        }) else {
            self.abort_with(
                now,
                CloseReason::Aborted,
                vec![ErrorCause::MissingMandatoryParameter { missing: vec![ParamType::STATE_COOKIE.0] }],
            );
            return;
        };
        // The address the last INIT went to (T1 rotates over the peer's addresses).
        let init_dest = self.handshake_chunk.as_ref().and_then(|(p, _)| self.paths.get(*p)).map_or(from, |p| p.remote);
        let peer = PeerInit {
            tag: init.initiate_tag,
            rwnd: init.a_rwnd,
            initial_tsn: init.initial_tsn,
            outbound_streams: self.config.outbound_streams.min(init.inbound_streams),
            inbound_streams: init.outbound_streams.min(self.config.max_inbound_streams),
            addrs: peer_addresses(from, &init.params),
            ecn: self.config.ecn && init.params.contains(&Parameter::EcnCapable),
            local_auth: self.local_auth.clone(),
            peer_auth: AuthParams::from_params(&init.params),
            peer_asconf: super::signing::peer_supports_asconf(&init.params),
        };
        // §5.4: the address the INIT went to is confirmed by the INIT ACK.
        self.learn_peer(peer, &[init_dest, from]);
        self.set_state(State::CookieEchoed);
        let echo = Chunk::CookieEcho { cookie };
        // The COOKIE ECHO goes where the INIT ACK came from, an address known to work.
        let echo_to = self.path_of(from).unwrap_or(self.primary);
        self.handshake_chunk = Some((echo_to, echo.clone()));
        self.control.push_back((echo_to, echo));
        // §3.2.2: unrecognized parameters to report go in an ERROR bundled after the COOKIE
        // ECHO (which must come first in its packet, §5.1).
        if !unrecognized.is_empty() {
            let cause = ErrorCause::UnrecognizedParameters { params: unrecognized.concat() };
            self.control.push_back((echo_to, Chunk::Error { causes: vec![cause] }));
        }
        self.init_retransmits = 0;
        self.t1_rto = self.paths[self.primary].rto.rto;
        self.timers.set(Timer::T1, now + self.t1_rto);
    }

    /// Takes the peer's tag, window, streams, initial TSN and addresses, with a fresh receiver.
    /// Every path starts afresh (active, initial RTO and congestion state); the addresses in
    /// `confirmed` start confirmed (§5.4). An address the association had keeps its
    /// [`PathId`]; an address the peer no longer lists is removed, its id left unused, so no
    /// other path moves; the peer's new addresses get new ids, in the order it lists them.
    /// The primary, the data path and the SACK path stay on their paths while listed;
    /// otherwise they go to the path of the address the peer's chunk came from. Returns the
    /// old paths, by the ids they had.
    fn learn_peer(&mut self, peer: PeerInit, confirmed: &[IpAddr]) -> Vec<(PathId, Path)> {
        self.peer_tag = peer.tag;
        self.ecn = super::ecn::EcnState { ok: peer.ecn, ..Default::default() };
        self.agree_auth(peer.local_auth.as_ref(), peer.peer_auth.as_ref(), peer.peer_asconf);
        self.asconf.start(self.out.next_tsn, peer.initial_tsn);
        self.out.peer_rwnd = peer.rwnd;
        self.out.set_stream_count(peer.outbound_streams);
        self.inb = Inbound::new(peer.initial_tsn, peer.inbound_streams, self.config.recv_buffer);
        // The receiver and every path start afresh, and so do their timers.
        self.timers.stop(Timer::DelayedSack);
        let mut old = Vec::with_capacity(self.paths.len());
        let ids: Vec<PathId> = self.paths.ids().collect();
        for id in ids {
            self.timers.stop_path(id);
            let remote = self.paths[id].remote;
            let removed = if peer.addrs.contains(&remote) {
                let nonce = self.next_nonce();
                let mut path = Path::new(remote, &self.config, peer.rwnd, nonce);
                path.confirmed = confirmed.contains(&remote);
                self.paths.replace(id, path)
            } else {
                self.paths.remove(id)
            };
            old.extend(removed.map(|p| (id, p)));
        }
        for &r in &peer.addrs {
            if self.path_of(r).is_none() {
                let nonce = self.next_nonce();
                let mut path = Path::new(r, &self.config, peer.rwnd, nonce);
                path.confirmed = confirmed.contains(&r);
                self.paths.push(path);
            }
        }
        let source = peer.addrs.first().and_then(|&r| self.path_of(r));
        let keep = |id: PathId, paths: &super::Paths| Some(id).filter(|&id| paths.contains(id));
        self.primary = keep(self.primary, &self.paths).or(source).unwrap_or_default();
        self.data_path = keep(self.data_path, &self.paths).unwrap_or(self.primary);
        self.sack_path = keep(self.sack_path, &self.paths).unwrap_or(self.primary);
        old
    }

    /// COOKIE ACK in COOKIE-ECHOED (§5.1 E).
    pub(super) fn on_cookie_ack(&mut self, now: Instant) {
        if self.state != State::CookieEchoed {
            return;
        }
        self.timers.stop(Timer::T1);
        self.handshake_chunk = None;
        self.on_established(now);
    }

    fn on_established(&mut self, now: Instant) {
        self.set_state(State::Established);
        self.events.push_back(Event::Connected);
        self.start_heartbeats(now);
    }

    fn start_heartbeats(&mut self, now: Instant) {
        let ids: Vec<PathId> = self.paths.ids().collect();
        for p in ids {
            // §5.4: probe unconfirmed addresses at once; §8.3: heartbeat confirmed ones.
            let due = if self.paths[p].confirmed {
                self.config.hb_interval.map(|i| {
                    let rto = self.paths[p].rto.rto;
                    now + self.jittered(rto + i, rto)
                })
            } else {
                Some(now)
            };
            self.timers.put(Timer::Heartbeat(p), due);
        }
    }

    /// T1-init / T1-cookie expired (§5.1, §6.3.3): retransmit with a doubled RTO, or give up
    /// after Max.Init.Retransmits. The retransmission goes to the peer's next address after the
    /// one the chunk last went to (§6.4 lets a retransmission take another active destination;
    /// Linux and FreeBSD send T1 retransmissions to the peer's addresses in turn), so a primary
    /// that is unreachable from the start does not fail the handshake.
    pub(super) fn on_t1_expiry(&mut self, now: Instant) {
        self.timers.stop(Timer::T1);
        self.init_retransmits += 1;
        if self.init_retransmits > self.config.max_init_retransmits {
            self.close(CloseReason::InitFailed);
            return;
        }
        self.t1_rto = self.t1_rto.saturating_mul(2).min(self.config.rto_max);
        self.timers.set(Timer::T1, now + self.t1_rto);
        if let Some((last, chunk)) = self.handshake_chunk.take() {
            let to = self.paths.after(last).next().unwrap_or(last);
            self.control.push_back((to, chunk.clone()));
            self.handshake_chunk = Some((to, chunk));
        }
    }

    // ----- INIT and COOKIE ECHO for an association that exists (§5.2) -----

    /// An INIT from the peer's address and port (§5.2.1, §5.2.2, §9.2). The endpoint builds
    /// the answer (it owns the cookie secret); the association keeps its state and timers.
    pub(crate) fn on_unexpected_init(&mut self, from: IpAddr, init: &InitChunk) -> InitAnswer {
        let (tags, offer) = match self.state {
            // §5.2.1: an initialization collision. Answer with the parameters of our own INIT,
            // its tag and TSN included (no DATA has a TSN before ESTABLISHED, so the next TSN
            // is still the INIT's). In COOKIE-WAIT the peer's addresses are not known yet, so
            // there is nothing to check them against, and no Tie-Tags (§5.2.2 note).
            State::CookieWait => (
                AckTags::Own { tag: self.local_tag, initial_tsn: self.out.next_tsn, tie_tags: (0, 0) },
                Offer::from_config(&self.config),
            ),
            State::CookieEchoed => (
                AckTags::Own { tag: self.local_tag, initial_tsn: self.out.next_tsn, tie_tags: self.tie_tags() },
                Offer::from_config(&self.config),
            ),
            // §5.2.2: perhaps a restarted peer. A new tag, our Tie-Tags in the cookie, and
            // the association's other parameters (SHOULD): its stream counts and its window,
            // which unread messages may have narrowed (but not below 1500, the least an INIT or
            // INIT ACK may offer, §3.3.2).
            State::Established | State::ShutdownPending | State::ShutdownSent | State::ShutdownReceived => {
                let offer = Offer {
                    a_rwnd: self.inb.a_rwnd().max(1500),
                    outbound_streams: self.out.stream_count(),
                    max_inbound_streams: self.inb.stream_count(),
                };
                (AckTags::Fresh { tie_tags: self.tie_tags() }, offer)
            }
            // §9.2: the peer missed our SHUTDOWN COMPLETE's cue; discard the INIT and repeat
            // the SHUTDOWN ACK.
            State::ShutdownAckSent => {
                self.control.push_back((self.shutdown_path(), Chunk::ShutdownAck));
                self.dirty = true;
                return InitAnswer::Discard;
            }
            State::Closed => return InitAnswer::Discard,
        };
        // §5.2.1, §5.2.2: an INIT that adds addresses is refused, the association untouched.
        let new: Vec<IpAddr> = if self.state == State::CookieWait {
            Vec::new()
        } else {
            peer_addresses(from, &init.params).into_iter().filter(|&a| self.path_of(a).is_none()).collect()
        };
        if new.is_empty() {
            InitAnswer::InitAck(tags, offer)
        } else {
            InitAnswer::NewAddresses(new)
        }
    }

    /// The Tie-Tags, drawn at the first need (§5.2.2: random, so a cookie never reveals the
    /// verification tags).
    fn tie_tags(&mut self) -> (u32, u32) {
        if self.tie_tags == (0, 0) {
            self.tie_tags = (random_tag(&mut self.rng), random_tag(&mut self.rng));
        }
        self.tie_tags
    }

    /// A COOKIE ECHO whose cookie the endpoint has verified (MAC, ports, header tag), from
    /// the peer's address `from`; `expired` says whether it outlived its lifespan (§5.2.4).
    pub(crate) fn on_cookie_echo(
        &mut self,
        now: Instant,
        from: IpAddr,
        cookie: &CookieState,
        expired: bool,
    ) -> CookieEchoOutcome {
        let row = self.cookie_row(cookie);
        // Step 3: an expired cookie is good only if both its tags are the association's.
        if expired && row != CookieRow::D {
            return CookieEchoOutcome::Stale;
        }
        // A cookie we made always lists the address its INIT came from.
        if cookie.peer_addrs.is_empty() {
            return CookieEchoOutcome::Discarded;
        }
        self.dirty = true;
        let accepted = match row {
            CookieRow::A => self.on_peer_restart(now, from, cookie),
            CookieRow::B => {
                self.on_cookie_collision(now, from, cookie);
                true
            }
            CookieRow::D => {
                self.on_duplicate_cookie_echo(now, from);
                true
            }
            // C: a cookie that arrived late; no row: nothing to do with it. Silently discarded.
            CookieRow::C | CookieRow::Unmatched => false,
        };
        if !accepted {
            return CookieEchoOutcome::Discarded;
        }
        self.stats.packets_received += 1;
        CookieEchoOutcome::Accepted
    }

    /// Step 5: Table 2.
    fn cookie_row(&self, c: &CookieState) -> CookieRow {
        let local = c.local_tag == self.local_tag;
        let peer = c.peer_tag == self.peer_tag;
        let tie_tags = (c.local_tie_tag, c.peer_tie_tag);
        match (local, peer) {
            (false, false) if self.tie_tags != (0, 0) && tie_tags == self.tie_tags => CookieRow::A,
            // Includes our peer tag still 0 (COOKIE-WAIT), the table's "M 0 A A" row. The peer
            // tag is 0 whenever the state is COOKIE-WAIT (`connect`, `restart_init`) and no INIT
            // has tag 0 (§3.3.2), so D below needs COOKIE-ECHOED or later.
            (true, false) => CookieRow::B,
            (false, true) if tie_tags == (0, 0) => CookieRow::C,
            (true, true) => CookieRow::D,
            _ => CookieRow::Unmatched,
        }
    }

    /// Action A: the peer restarted. The association starts over from the cookie as if it had
    /// been aborted and created anew (§5.1 D), except that it reports `Restarted` instead of a
    /// lost association and keeps its PathIds, its counters and the received messages ready
    /// for the application and not read yet (see [`Inbound::inherit_unread`]); the DATA it
    /// had not got acknowledged is discarded (the RFC leaves keeping it to implementations).
    /// From SHUTDOWN-PENDING, SHUTDOWN-SENT or SHUTDOWN-RECEIVED it returns to ESTABLISHED,
    /// the shutdown dropped. In SHUTDOWN-ACK-SENT it must not restart: it repeats the SHUTDOWN
    /// ACK with a "Cookie Received While Shutting Down" error instead. Returns whether it
    /// restarted.
    fn on_peer_restart(&mut self, now: Instant, from: IpAddr, cookie: &CookieState) -> bool {
        if self.state == State::ShutdownAckSent {
            let p = self.shutdown_path();
            let error = Chunk::Error { causes: vec![ErrorCause::CookieReceivedWhileShuttingDown] };
            self.control.push_back((p, Chunk::ShutdownAck));
            self.control.push_back((p, error));
            return false;
        }
        let discarded_bytes = self.out.buffered;
        let old_inb = std::mem::replace(&mut self.inb, Inbound::new(0, 0, 0));
        self.local_tag = cookie.local_tag;
        // New tags: the old Tie-Tags must not let an old cookie restart it again.
        self.tie_tags = (0, 0);
        self.out = Outbound::new(cookie.local_initial_tsn, cookie.outbound_streams);
        // As for a new association, the address the INIT came from is confirmed (§5.4);
        // every path, and so its congestion state, starts afresh (§7.2.1), its counters kept.
        let init_source: Vec<IpAddr> = cookie.peer_addrs.first().copied().into_iter().collect();
        let old_paths = self.learn_peer(PeerInit::from_cookie(cookie, &self.config), &init_source);
        self.inb.inherit_unread(old_inb);
        for (id, old) in old_paths {
            if let Some(p) = self.paths.get_mut(id) {
                p.stats = old.stats;
            }
        }
        self.timers.clear();
        self.init_retransmits = 0;
        self.t2_retransmits = 0;
        self.handshake_chunk = None;
        self.error_count = 0;
        // Nothing built for the old association goes out any more.
        self.control.clear();
        self.transmits.clear();
        self.queue_cookie_ack(from);
        self.set_state(State::Established);
        self.events.push_back(Event::Restarted { discarded_bytes });
        self.start_heartbeats(now);
        true
    }

    /// Action B: both sides started at about the same time, and the peer's INIT carried in
    /// our cookie is the one that stands. Before ESTABLISHED, take everything that INIT
    /// announced (we may never have seen its INIT ACK, or seen another one), enter ESTABLISHED
    /// and stop T1; afterwards, as the RFC asks, only its tag. Acknowledge either way.
    fn on_cookie_collision(&mut self, now: Instant, from: IpAddr, cookie: &CookieState) {
        if matches!(self.state, State::CookieWait | State::CookieEchoed) {
            // Addresses confirmed so far stay so (§5.4); our INIT ACK reached the INIT's source.
            let mut confirmed: Vec<IpAddr> = self.paths.values().filter(|p| p.confirmed).map(|p| p.remote).collect();
            confirmed.extend(cookie.peer_addrs.first());
            self.learn_peer(PeerInit::from_cookie(cookie, &self.config), &confirmed);
            self.timers.stop(Timer::T1);
            self.handshake_chunk = None;
            self.on_established(now);
        } else {
            self.peer_tag = cookie.peer_tag;
        }
        self.queue_cookie_ack(from);
    }

    /// Action D: both tags match (a lost COOKIE ACK, or the crossing COOKIE ECHOs of a
    /// collision): ESTABLISHED if not yet, T1 stopped, COOKIE ACK again.
    fn on_duplicate_cookie_echo(&mut self, now: Instant, from: IpAddr) {
        if self.state == State::CookieEchoed {
            self.timers.stop(Timer::T1);
            self.handshake_chunk = None;
            self.on_established(now);
        }
        self.queue_cookie_ack(from);
    }

    /// COOKIE ACK to where the COOKIE ECHO came from.
    fn queue_cookie_ack(&mut self, from: IpAddr) {
        let p = self.path_of(from).unwrap_or(self.primary);
        self.control.push_back((p, Chunk::CookieAck));
    }

    // ----- shutdown (§9.2) -----

    pub(super) fn queue_shutdown(&mut self) {
        let p = self.shutdown_path();
        self.control.push_back((p, Chunk::Shutdown { cumulative_tsn_ack: self.inb.cum_tsn }));
    }

    /// Where SHUTDOWN and SHUTDOWN ACK go. A SHUTDOWN ACK answers the peer's SHUTDOWN and goes
    /// to the address that came from while it is usable (§6.4: "An endpoint SHOULD transmit
    /// reply chunks ... to the same destination transport address from which it received
    /// the control chunk to which it is replying"): after a failover the peer's SHUTDOWN comes
    /// over the path that works, which the primary may not be. Otherwise the primary if
    /// usable, else an alternate.
    fn shutdown_path(&self) -> PathId {
        let usable = |p: PathId| self.paths.get(p).is_some_and(|p| p.is_usable());
        match self.shutdown_from {
            Some(p) if usable(p) => p,
            _ if usable(self.primary) => self.primary,
            _ => self.alternate(self.primary),
        }
    }

    /// Starts T2-shutdown with the RTO of the destination the SHUTDOWN or SHUTDOWN ACK goes
    /// to, and remembers that destination: an expiry counts against it.
    fn start_t2(&mut self, now: Instant) {
        let p = self.shutdown_path();
        self.t2_path = p;
        let rto = self.paths.get(p).map_or(self.config.rto_initial, |p| p.rto.rto);
        self.timers.set(Timer::T2, now + rto);
    }

    /// Moves SHUTDOWN-PENDING / SHUTDOWN-RECEIVED on once everything is acknowledged.
    pub(super) fn maybe_progress_shutdown(&mut self, now: Instant) {
        if !self.out.is_empty() {
            return;
        }
        match self.state {
            State::ShutdownPending => {
                self.set_state(State::ShutdownSent);
                self.queue_shutdown();
                self.t2_retransmits = 0;
                self.start_t2(now);
                self.timers.set(Timer::T5, now + self.config.rto_max.saturating_mul(5));
            }
            State::ShutdownReceived => {
                self.set_state(State::ShutdownAckSent);
                self.control.push_back((self.shutdown_path(), Chunk::ShutdownAck));
                self.t2_retransmits = 0;
                self.start_t2(now);
            }
            _ => {}
        }
    }

    pub(super) fn on_shutdown(&mut self, now: Instant, cum: u32, from: Option<PathId>) {
        self.shutdown_from = from.or(self.shutdown_from);
        match self.state {
            // §9.2: the receiver of a SHUTDOWN enters SHUTDOWN-RECEIVED, then checks with the
            // Cumulative TSN Ack that the sender has all its DATA. In SHUTDOWN-PENDING too: the
            // peer's shutdown now carries ours, so no SHUTDOWN of our own follows (and no
            // T5-shutdown-guard, which guards a SHUTDOWN we sent); once everything is
            // acknowledged the answer is SHUTDOWN ACK. In SHUTDOWN-RECEIVED a later SHUTDOWN's
            // Cumulative TSN Ack is processed likewise.
            State::Established | State::ShutdownPending | State::ShutdownReceived => {
                let sack = SackChunk { cumulative_tsn_ack: cum, ..SackChunk::default() };
                self.set_state(State::ShutdownReceived);
                self.process_sack(now, &sack, false);
                self.maybe_progress_shutdown(now);
            }
            State::ShutdownSent => {
                // Both sides shut down at once: answer with SHUTDOWN ACK.
                self.set_state(State::ShutdownAckSent);
                self.control.push_back((self.shutdown_path(), Chunk::ShutdownAck));
                self.start_t2(now);
            }
            _ => {}
        }
    }

    pub(super) fn on_shutdown_ack(&mut self, from: Option<PathId>) {
        if matches!(self.state, State::ShutdownSent | State::ShutdownAckSent) {
            let p = from.unwrap_or(self.primary);
            self.control.push_back((p, Chunk::ShutdownComplete { t_bit: false }));
            self.close(CloseReason::Shutdown);
        }
    }

    /// T2-shutdown expired (§9.2): as for a T3-rtx expiry, the destination the SHUTDOWN or
    /// SHUTDOWN ACK went to backs off its RTO and counts an error, and so does the
    /// association (§8.1, §8.2): the destination may become PF or inactive, and the next
    /// retransmission then goes to an active one; past Association.Max.Retrans the
    /// association fails. Otherwise retransmit and restart T2.
    pub(super) fn on_t2_expiry(&mut self, now: Instant) {
        self.timers.stop(Timer::T2);
        self.t2_retransmits += 1;
        let p = self.t2_path;
        if let Some(path) = self.paths.get_mut(p) {
            path.rto.back_off(&self.config);
            self.path_error(now, p);
        } else {
            self.error_count += 1;
            if self.error_count > self.config.assoc_max_retrans {
                self.close(CloseReason::AssociationFailure);
            }
        }
        match self.state {
            State::ShutdownSent => self.queue_shutdown(),
            State::ShutdownAckSent => {
                let p = self.shutdown_path();
                self.control.push_back((p, Chunk::ShutdownAck));
            }
            _ => return,
        }
        self.start_t2(now);
    }
}
