//! Set-up (RFC 9260 §5: INIT, INIT ACK, COOKIE ECHO, COOKIE ACK, T1 timers) and graceful
//! shutdown (§9.2: SHUTDOWN, SHUTDOWN ACK, SHUTDOWN COMPLETE, T2 and T5 timers).

use std::net::IpAddr;

use simtime::Instant;

use crate::config::Config;
use crate::wire::{Chunk, ErrorCause, InitChunk, Parameter, SackChunk};

use super::inbound::Inbound;
use super::{Association, CloseReason, CookieState, Event, Path, PathId, State};

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
    /// (the primary) and starts T1-init. `seed` feeds the association's RNG (tags, initial
    /// TSN, heartbeat jitter).
    pub fn connect(
        config: Config,
        local_addrs: Vec<IpAddr>,
        local_port: u16,
        remote_addrs: &[IpAddr],
        peer_port: u16,
        now: Instant,
        seed: u64,
    ) -> Self {
        let mut a = Self::new_common(config, local_addrs, local_port, peer_port, seed);
        for &r in remote_addrs {
            if a.path_of(r).is_none() {
                let nonce = a.next_nonce();
                a.paths.push(Path::new(r, &a.config, a.config.recv_buffer, nonce));
            }
        }
        a.state = State::CookieWait;
        a.send_init(now);
        a
    }

    fn send_init(&mut self, now: Instant) {
        let params = if self.local_addrs.len() > 1 {
            address_params(&self.local_addrs)
        } else {
            Vec::new()
        };
        let init = Chunk::Init(InitChunk {
            initiate_tag: self.local_tag,
            a_rwnd: self.config.recv_buffer,
            outbound_streams: self.config.outbound_streams,
            inbound_streams: self.config.max_inbound_streams,
            initial_tsn: self.out.next_tsn,
            params,
        });
        self.init_retransmits = 0;
        self.t1_rto = self.config.rto_initial.min(self.config.rto_max);
        self.timers.t1 = Some(now + self.t1_rto);
        self.handshake_chunk = Some(init.clone());
        if !self.paths.is_empty() {
            self.control.push_back((self.primary, init));
        }
    }

    /// §5.2.6: after a Stale Cookie error, start again from INIT.
    pub(super) fn restart_init(&mut self, now: Instant) {
        self.state = State::CookieWait;
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
        seed: u64,
    ) -> Self {
        let mut a = Self::new_common(config, local_addrs, cookie.local_port, cookie.peer_port, seed);
        a.local_tag = cookie.local_tag;
        a.peer_tag = cookie.peer_tag;
        a.out = super::outbound::Outbound::new(cookie.local_initial_tsn, cookie.outbound_streams);
        a.out.peer_rwnd = cookie.peer_rwnd;
        a.inb = Inbound::new(cookie.peer_initial_tsn, cookie.inbound_streams, a.config.recv_buffer);
        for &r in &cookie.peer_addrs {
            let nonce = a.next_nonce();
            a.paths.push(Path::new(r, &a.config, cookie.peer_rwnd, nonce));
        }
        if let Some(p) = a.paths.first_mut() {
            p.confirmed = true;
        }
        let ack_to = a.path_of(from).unwrap_or(0);
        a.control.push_back((ack_to, Chunk::CookieAck));
        a.on_established(now);
        a
    }

    /// INIT ACK in COOKIE-WAIT (§5.1 C): learn the peer, answer with COOKIE ECHO.
    pub(super) fn on_init_ack(&mut self, now: Instant, from: IpAddr, init: InitChunk) {
        if self.state != State::CookieWait {
            return; // §5.2.3: an unexpected INIT ACK is discarded.
        }
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
                vec![ErrorCause::MissingMandatoryParameter { missing: vec![7] }],
            );
            return;
        };
        self.peer_tag = init.initiate_tag;
        self.out.peer_rwnd = init.a_rwnd;
        self.out
            .set_stream_count(self.config.outbound_streams.min(init.inbound_streams));
        let inbound = init.outbound_streams.min(self.config.max_inbound_streams);
        self.inb = Inbound::new(init.initial_tsn, inbound, self.config.recv_buffer);
        // Rebuild the paths from the peer's own list; keep the requested primary if listed.
        let wanted_primary = self.paths.get(self.primary).map(|p| p.remote).unwrap_or(from);
        let init_dest = wanted_primary;
        self.paths.clear();
        for r in peer_addresses(from, &init.params) {
            let nonce = self.next_nonce();
            let mut path = Path::new(r, &self.config, init.a_rwnd, nonce);
            // §5.4: the address the INIT went to is confirmed by the INIT ACK.
            path.confirmed = r == init_dest || r == from;
            self.paths.push(path);
        }
        self.primary = self.path_of(wanted_primary).unwrap_or(0);
        self.data_path = self.primary;
        self.sack_path = self.primary;
        self.state = State::CookieEchoed;
        let echo = Chunk::CookieEcho { cookie };
        self.handshake_chunk = Some(echo.clone());
        self.control.push_back((self.primary, echo));
        self.init_retransmits = 0;
        self.t1_rto = self.paths[self.primary].rto.rto;
        self.timers.t1 = Some(now + self.t1_rto);
    }

    /// COOKIE ACK in COOKIE-ECHOED (§5.1 E).
    pub(super) fn on_cookie_ack(&mut self, now: Instant) {
        if self.state != State::CookieEchoed {
            return;
        }
        self.timers.t1 = None;
        self.handshake_chunk = None;
        self.on_established(now);
    }

    /// A COOKIE ECHO for an association that exists with matching tags (§5.2.4 case D,
    /// a lost COOKIE ACK): acknowledge again.
    pub(super) fn on_duplicate_cookie_echo(&mut self, from: Option<PathId>) {
        if matches!(self.state, State::Established | State::ShutdownPending) {
            self.control.push_back((from.unwrap_or(self.primary), Chunk::CookieAck));
        }
    }

    fn on_established(&mut self, now: Instant) {
        self.state = State::Established;
        self.events.push_back(Event::Connected);
        for p in 0..self.paths.len() {
            // §5.4: probe unconfirmed addresses at once; §8.3: heartbeat confirmed ones.
            let due = if self.paths[p].confirmed {
                self.config.hb_interval.map(|i| {
                    let rto = self.paths[p].rto.rto;
                    now + self.jittered(rto + i, rto)
                })
            } else {
                Some(now)
            };
            self.paths[p].hb_due = due;
        }
    }

    /// T1-init / T1-cookie expired (§5.1, §6.3.3): retransmit with a doubled RTO, or give up
    /// after Max.Init.Retransmits.
    pub(super) fn on_t1_expiry(&mut self, now: Instant) {
        self.timers.t1 = None;
        self.init_retransmits += 1;
        if self.init_retransmits > self.config.max_init_retransmits {
            self.close(CloseReason::InitFailed);
            return;
        }
        self.t1_rto = self.t1_rto.saturating_mul(2).min(self.config.rto_max);
        self.timers.t1 = Some(now + self.t1_rto);
        if let Some(chunk) = self.handshake_chunk.clone() {
            self.control.push_back((self.primary, chunk));
        }
    }

    // ----- shutdown (§9.2) -----

    pub(super) fn queue_shutdown(&mut self) {
        let p = self.shutdown_path();
        self.control.push_back((
            p,
            Chunk::Shutdown {
                cumulative_tsn_ack: self.inb.cum_tsn,
            },
        ));
    }

    fn shutdown_path(&self) -> PathId {
        if self.paths.get(self.primary).is_some_and(|p| p.is_usable()) {
            self.primary
        } else {
            self.alternate(self.primary)
        }
    }

    fn start_t2(&mut self, now: Instant) {
        let rto = self.paths.get(self.shutdown_path()).map_or(self.config.rto_initial, |p| p.rto.rto);
        self.timers.t2 = Some(now + rto);
    }

    /// Moves SHUTDOWN-PENDING / SHUTDOWN-RECEIVED on once everything is acknowledged.
    pub(super) fn maybe_progress_shutdown(&mut self, now: Instant) {
        if !self.out.is_empty() {
            return;
        }
        match self.state {
            State::ShutdownPending => {
                self.state = State::ShutdownSent;
                self.queue_shutdown();
                self.t2_retransmits = 0;
                self.start_t2(now);
                self.timers.t5 = Some(now + self.config.rto_max.saturating_mul(5));
            }
            State::ShutdownReceived => {
                self.state = State::ShutdownAckSent;
                self.control.push_back((self.shutdown_path(), Chunk::ShutdownAck));
                self.t2_retransmits = 0;
                self.start_t2(now);
            }
            _ => {}
        }
    }

    pub(super) fn on_shutdown(&mut self, now: Instant, cum: u32) {
        match self.state {
            State::Established | State::ShutdownPending | State::ShutdownReceived => {
                let sack = SackChunk {
                    cumulative_tsn_ack: cum,
                    a_rwnd: 0,
                    gap_ack_blocks: Vec::new(),
                    duplicate_tsns: Vec::new(),
                };
                self.process_sack(now, &sack, false);
                self.state = State::ShutdownReceived;
                self.maybe_progress_shutdown(now);
            }
            State::ShutdownSent => {
                // Both sides shut down at once: answer with SHUTDOWN ACK.
                self.state = State::ShutdownAckSent;
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

    /// T2-shutdown expired: count the error and retransmit SHUTDOWN or SHUTDOWN ACK.
    pub(super) fn on_t2_expiry(&mut self, now: Instant) {
        self.timers.t2 = None;
        self.t2_retransmits += 1;
        self.error_count += 1;
        if self.error_count > self.config.assoc_max_retrans {
            self.close(CloseReason::AssociationFailure);
            return;
        }
        match self.state {
            State::ShutdownSent => self.queue_shutdown(),
            State::ShutdownAckSent => {
                let p = self.shutdown_path();
                self.control.push_back((p, Chunk::ShutdownAck));
            }
            _ => return,
        }
        let p = self.shutdown_path();
        self.paths[p].rto.back_off(&self.config);
        self.start_t2(now);
    }
}
