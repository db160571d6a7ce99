//! Dynamic address reconfiguration (RFC 5061): the application's requests (add, delete a
//! local address, ask the peer to make one of ours its primary) sent in ASCONF chunks, one
//! outstanding at a time and retransmitted on T4-RTO (§5.1); the peer's ASCONFs processed
//! parameter by parameter and answered in an ASCONF-ACK (§5.2); the answers applied (§5.3).

use std::collections::VecDeque;
use std::net::IpAddr;

use simtime::Instant;

use crate::wire::{Chunk, ErrorCause, Parameter};

use super::{Association, Event, Path, PathId, PathState, State, Timer};

/// Error cause: Request to Delete Last Remaining IP Address (RFC 5061 §4.3, 0x00A0).
pub const CAUSE_DELETE_LAST_ADDRESS: u16 = 0x00A0;
/// Error cause: Operation Refused Due to Resource Shortage (RFC 5061 §4.3, 0x00A1).
pub const CAUSE_RESOURCE_SHORTAGE: u16 = 0x00A1;
/// Error cause: Request to Delete Source IP Address (RFC 5061 §4.3, 0x00A2).
pub const CAUSE_DELETE_SOURCE_ADDRESS: u16 = 0x00A2;
/// Error cause: Unresolvable Address (RFC 9260 §3.3.10.5, code 5), for a Delete or Set
/// Primary naming an address that is not part of the association (RFC 5061 §5.2).
pub const CAUSE_UNRESOLVABLE_ADDRESS: u16 = 5;

/// An address change the application asked for (RFC 5061 §4.2.1, §4.2.2, §4.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AddressRequest {
    /// Add a local address to the association (ADD-IP).
    Add(IpAddr),
    /// Remove a local address (DELETE-IP).
    Delete(IpAddr),
    /// Ask the peer to send to this local address as its primary (SET-PRIMARY).
    SetPrimary(IpAddr),
}

impl AddressRequest {
    fn to_param(self, correlation: u32) -> Parameter {
        match self {
            AddressRequest::Add(address) => Parameter::AddIp { correlation, address },
            AddressRequest::Delete(address) => Parameter::DeleteIp { correlation, address },
            AddressRequest::SetPrimary(address) => Parameter::SetPrimary { correlation, address },
        }
    }
}

/// Why [`Association::request_address_change`] refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AsconfError {
    /// ASCONF is not in use on this association (off, or the peer lacks AUTH or ASCONF).
    #[error("ASCONF is not in use on this association")]
    NotEnabled,
    /// The association is not established.
    #[error("association is {0:?}")]
    NotOpen(State),
}

/// The ASCONF in flight (§5.1 A1-A5).
#[derive(Debug)]
struct Outstanding {
    serial: u32,
    /// The requests with their correlation IDs, in the order sent.
    requests: Vec<(u32, AddressRequest)>,
    chunk: Chunk,
    path: PathId,
    first_sent: Instant,
}

/// ASCONF state of an association.
#[derive(Debug, Default)]
pub(super) struct AsconfState {
    /// ASCONF in use: configured, AUTH in force and announced by the peer (RFC 5061 §4.1).
    pub(super) enabled: bool,
    /// Serial number of our next ASCONF (§5.1 A1: starts at our initial TSN).
    next_serial: u32,
    /// Serial of the last ASCONF processed from the peer (§5.2 C1: its initial TSN - 1).
    peer_serial: u32,
    /// The ASCONF-ACK answering it, sent again if that ASCONF comes again (§5.2 C2).
    last_ack: Option<Chunk>,
    next_correlation: u32,
    /// Requests waiting for the next ASCONF, and when the first of them was made.
    pending: VecDeque<AddressRequest>,
    requested_at: Option<Instant>,
    outstanding: Option<Outstanding>,
}

impl AsconfState {
    /// Serial numbers start from the initial TSNs (§5.1 A1, §5.2 C1).
    pub(super) fn start(&mut self, local_initial_tsn: u32, peer_initial_tsn: u32) {
        self.next_serial = local_initial_tsn;
        self.peer_serial = peer_initial_tsn.wrapping_sub(1);
    }
}

impl Association {
    /// Whether ASCONF is in use: configured ([`crate::Config::asconf`]), AUTH in force and the
    /// peer announced it (RFC 5061 §4.1).
    pub fn asconf_enabled(&self) -> bool {
        self.asconf.enabled
    }

    /// Queues an address change for the peer (RFC 5061): requests queued before the next
    /// [`poll_transmit`](Association::poll_transmit) go in one ASCONF, in order, once no
    /// earlier ASCONF is outstanding (§5.1 A2). A local address
    /// added is used (listed in [`Association::local_addrs`]) only once the peer has
    /// acknowledged it (§4.1); a deleted one stops being listed when asked. The outcome
    /// comes as [`Event::AsconfAcked`] per request, or [`Event::AsconfFailed`].
    pub fn request_address_change(&mut self, now: Instant, req: AddressRequest) -> Result<(), AsconfError> {
        if !self.asconf.enabled {
            return Err(AsconfError::NotEnabled);
        }
        if self.state != State::Established {
            return Err(AsconfError::NotOpen(self.state));
        }
        if let AddressRequest::Delete(a) = req {
            self.local_addrs.retain(|&x| x != a);
            if self.local_source == Some(a) {
                self.local_source = None;
            }
        }
        self.asconf.pending.push_back(req);
        self.asconf.requested_at.get_or_insert(now);
        self.dirty = true;
        Ok(())
    }

    /// The local addresses in use: those the association started with, plus those whose
    /// ADD-IP the peer acknowledged, less those deleted.
    pub fn local_addrs(&self) -> &[IpAddr] {
        &self.local_addrs
    }

    /// The source address its packets name, once a SET-PRIMARY for one of our addresses
    /// was acknowledged ([`Transmit::local`](super::Transmit::local)); `None` before.
    pub fn local_source(&self) -> Option<IpAddr> {
        self.local_source
    }

    /// Sends the pending requests in a new ASCONF if none is outstanding (§5.1 A2); called
    /// when packets are built, so requests made together travel together.
    pub(super) fn send_asconf(&mut self, now: Instant) {
        if self.asconf.outstanding.is_some() || self.asconf.pending.is_empty() {
            return;
        }
        let requests: Vec<(u32, AddressRequest)> = self
            .asconf
            .pending
            .drain(..)
            .map(|r| {
                self.asconf.next_correlation = self.asconf.next_correlation.wrapping_add(1);
                (self.asconf.next_correlation, r)
            })
            .collect();
        let serial = self.asconf.next_serial;
        self.asconf.next_serial = serial.wrapping_add(1);
        // §5.1: the Address Parameter names an address of ours that stays (not one being
        // added, which the peer cannot know yet, nor one being deleted).
        let address = self
            .local_addrs
            .first()
            .copied()
            .or_else(|| {
                requests.iter().find_map(|(_, r)| matches!(r, AddressRequest::Add(_)).then_some(r)).map(addr_of)
            })
            .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
        let params = requests.iter().map(|&(c, r)| r.to_param(c)).collect();
        let chunk = Chunk::Asconf { serial, address, params };
        // §5.3 / A2: to a destination the peer can be reached at: the primary if active.
        let path = if self.paths.get(self.primary).is_some_and(|p| p.state != PathState::Inactive) {
            self.primary
        } else {
            self.alternate(self.primary)
        };
        self.control.push_back((path, chunk.clone()));
        let rto = self.paths.get(path).map_or(self.config.rto_initial, |p| p.rto.rto);
        self.timers.set(Timer::T4, now + rto);
        // The round trip counts from the request (the ASCONF leaves at the next packet).
        let first_sent = self.asconf.requested_at.take().unwrap_or(now);
        self.asconf.outstanding = Some(Outstanding { serial, requests, chunk, path, first_sent });
        self.dirty = true;
    }

    /// The ASCONF outstanding on destination `from` goes again to `to` at once (`from` is
    /// unreachable); its T4-RTO timer runs on.
    pub(super) fn move_asconf(&mut self, from: PathId, to: PathId) {
        let Some(o) = self.asconf.outstanding.as_mut().filter(|o| o.path == from && from != to) else { return };
        o.path = to;
        self.control.push_back((to, o.chunk.clone()));
        self.dirty = true;
    }

    /// T4-RTO expired (§5.1 B, C: handled as a T3-rtx expiry): the path's RTO backs off, the error
    /// counters of the path and the association grow (which may fail the association), and
    /// the ASCONF goes again, to an alternate destination if there is one.
    pub(super) fn on_t4_expiry(&mut self, now: Instant) {
        self.timers.stop(Timer::T4);
        let Some(path) = self.asconf.outstanding.as_ref().map(|o| o.path) else { return };
        if let Some(p) = self.paths.get_mut(path) {
            p.rto.back_off(&self.config);
            self.path_error(now, path);
        }
        if self.state == State::Closed {
            return;
        }
        let to = if self.paths.contains(path) { self.alternate(path) } else { self.primary };
        let rto = self.paths.get(to).map_or(self.config.rto_max, |p| p.rto.rto);
        if let Some(o) = self.asconf.outstanding.as_mut() {
            o.path = to;
            self.control.push_back((to, o.chunk.clone()));
            self.events.push_back(Event::AsconfRetransmitted { serial: o.serial, path: to, rto });
        }
        self.timers.set(Timer::T4, now + rto);
    }

    /// An ASCONF-ACK (§5.3): for the outstanding ASCONF, each request with an Error Cause
    /// Indication failed; one without an answer succeeded if it came before the first
    /// failure and failed after it, unless a Success Indication names it (§5.3 rule).
    pub(super) fn on_asconf_ack(&mut self, now: Instant, serial: u32, params: Vec<Parameter>) {
        if !self.asconf.enabled || self.asconf.outstanding.as_ref().is_none_or(|o| o.serial != serial) {
            return;
        }
        let Some(o) = self.asconf.outstanding.take() else { return };
        self.timers.stop(Timer::T4);
        // §5.3: the acknowledgement shows the peer is reachable there: errors clear as for a
        // SACK.
        self.error_count = 0;
        if let Some(p) = self.paths.get_mut(o.path) {
            p.error_count = 0;
        }
        let round_trip = now.saturating_since(o.first_sent);
        let mut failed_before = false;
        for (correlation, req) in o.requests {
            let error = params.iter().find_map(|p| match p {
                Parameter::ErrorCauseIndication { correlation: c, causes } if *c == correlation => {
                    Some(causes.first().map_or(0, ErrorCause::code))
                }
                _ => None,
            });
            let success = params
                .iter()
                .any(|p| matches!(p, Parameter::SuccessIndication { correlation: c } if *c == correlation));
            match error {
                Some(cause) => {
                    failed_before = true;
                    if let AddressRequest::Delete(a) = req {
                        // Refused: the address stays in use.
                        if !self.local_addrs.contains(&a) {
                            self.local_addrs.push(a);
                        }
                    }
                    self.events.push_back(Event::AsconfFailed { request: req, cause });
                }
                None if failed_before && !success => {
                    self.events.push_back(Event::AsconfFailed { request: req, cause: CAUSE_RESOURCE_SHORTAGE });
                }
                None => {
                    match req {
                        // §4.1: a new address is used once its ADD-IP is acknowledged.
                        AddressRequest::Add(a) if !self.local_addrs.contains(&a) => self.local_addrs.push(a),
                        // The peer now sends to this address: ours leave from it too.
                        AddressRequest::SetPrimary(a) if self.local_addrs.contains(&a) => {
                            self.local_source = Some(a);
                        }
                        _ => {}
                    }
                    self.events.push_back(Event::AsconfAcked { request: req, round_trip });
                }
            }
        }
        self.dirty = true;
    }

    /// An authenticated ASCONF from `from` (§5.2).
    pub(super) fn on_asconf(
        &mut self,
        now: Instant,
        from: IpAddr,
        from_path: Option<PathId>,
        serial: u32,
        _address: IpAddr,
        params: Vec<Parameter>,
    ) {
        if !self.asconf.enabled || !matches!(self.state, State::Established | State::ShutdownPending) {
            return;
        }
        if serial == self.asconf.peer_serial {
            // §5.2 C2: a retransmission of the last one processed: the same answer again.
            if let Some(ack) = self.asconf.last_ack.clone() {
                let to = self.path_of(from).or(from_path).unwrap_or(self.primary);
                self.control.push_back((to, ack));
            }
            return;
        }
        if serial != self.asconf.peer_serial.wrapping_add(1) {
            return; // §5.2 C3: neither the next nor the last: discarded.
        }
        self.asconf.peer_serial = serial;
        let mut answers = Vec::new();
        let mut failed = false;
        for p in params {
            let (correlation, outcome) = match &p {
                Parameter::AddIp { correlation, address } => (*correlation, self.peer_add(now, from, *address)),
                Parameter::DeleteIp { correlation, address } => (*correlation, self.peer_delete(now, from, *address)),
                Parameter::SetPrimary { correlation, address } => (*correlation, self.peer_set_primary(from, *address)),
                // Adaptation Layer Indication and others carry nothing to do here.
                _ => continue,
            };
            match outcome {
                Ok(()) if failed => answers.push(Parameter::SuccessIndication { correlation }),
                Ok(()) => {}
                Err(code) => {
                    failed = true;
                    let value = Parameter::emit_list(std::slice::from_ref(&p));
                    answers.push(Parameter::ErrorCauseIndication {
                        correlation,
                        causes: vec![ErrorCause::Unknown { code, value }],
                    });
                }
            }
        }
        let ack = Chunk::AsconfAck { serial, params: answers };
        // §5.2: the ASCONF-ACK goes to the source address of the ASCONF.
        let to = self.path_of(from).or(from_path).unwrap_or(self.primary);
        self.asconf.last_ack = Some(ack.clone());
        self.control.push_back((to, ack));
    }

    /// ADD-IP from the peer (§5.2, §4.2.1): a new destination, or nothing for a known one.
    fn peer_add(&mut self, now: Instant, from: IpAddr, address: IpAddr) -> Result<(), u16> {
        let address = if address.is_unspecified() { from } else { address };
        if self.path_of(address).is_some() {
            return Ok(());
        }
        let nonce = self.next_nonce();
        let mut path = Path::new(address, &self.config, self.out.peer_rwnd, nonce);
        // The request came authenticated (RFC 4895) from the peer: the address is taken as
        // confirmed, so a SET-PRIMARY that follows can use it at once; a heartbeat probes it
        // now all the same.
        path.confirmed = true;
        let id = self.paths.push(path);
        self.timers.set(Timer::Heartbeat(id), now);
        self.events.push_back(Event::PeerAddressAdded { path: id, address });
        Ok(())
    }

    /// DELETE-IP from the peer (§4.2.2): refused for its last remaining address (§5.3 F7)
    /// and for the packet's source address (§5.3 F8), checked in that order, and for an
    /// address not in the association (Unresolvable Address, as Linux answers it); data
    /// outstanding there is moved to another destination.
    fn peer_delete(&mut self, now: Instant, from: IpAddr, address: IpAddr) -> Result<(), u16> {
        let Some(id) = self.path_of(address) else { return Err(CAUSE_UNRESOLVABLE_ADDRESS) };
        if self.paths.len() <= 1 {
            return Err(CAUSE_DELETE_LAST_ADDRESS);
        }
        if address == from {
            return Err(CAUSE_DELETE_SOURCE_ADDRESS);
        }
        self.remove_path(now, id, self.path_of(from));
        self.events.push_back(Event::PeerAddressRemoved { path: id, address });
        Ok(())
    }

    /// SET-PRIMARY from the peer (§5.2, §4.2.4).
    fn peer_set_primary(&mut self, from: IpAddr, address: IpAddr) -> Result<(), u16> {
        let address = if address.is_unspecified() { from } else { address };
        let Some(id) = self.path_of(address) else { return Err(CAUSE_UNRESOLVABLE_ADDRESS) };
        self.set_primary(id);
        self.events.push_back(Event::PeerPrimaryRequested { path: id, address });
        Ok(())
    }

    /// Removes destination `id` (its id is never reused): its timers stop, its outstanding
    /// DATA is marked for retransmission on another destination, and the primary, data and
    /// SACK paths move off it (to `prefer`, the source of the request, if given).
    fn remove_path(&mut self, _now: Instant, id: PathId, prefer: Option<PathId>) {
        let to = prefer.filter(|&p| p != id).unwrap_or_else(|| self.alternate(id));
        self.evacuate_path(id, to);
        self.timers.stop_path(id);
        self.paths.remove(id);
        if self.primary == id {
            self.primary = to;
        }
        if self.data_path == id {
            self.data_path = to;
        }
        if self.sack_path == id {
            self.sack_path = to;
        }
        for (p, _) in self.control.iter_mut() {
            if *p == id {
                *p = to;
            }
        }
        self.dirty = true;
    }
}

fn addr_of(r: &AddressRequest) -> IpAddr {
    match *r {
        AddressRequest::Add(a) | AddressRequest::Delete(a) | AddressRequest::SetPrimary(a) => a,
    }
}
