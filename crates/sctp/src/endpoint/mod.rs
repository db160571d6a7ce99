//! An SCTP endpoint (RFC 9260 §2.1): one port on a set of local addresses, owning its
//! associations. It checks the CRC32c, demultiplexes packets to associations, answers
//! INIT statelessly with a signed cookie (§5.1.3), creates associations from valid
//! COOKIE ECHOs (§5.1.5) and handles out-of-the-blue packets (§8.4). An INIT or COOKIE ECHO
//! for an association that exists (collision, peer restart, duplicates: §5.2) is answered
//! here too, as the association decides: the cookie secret stays with the endpoint. A packet
//! belongs to the association that has its source address and port; an INIT or COOKIE ECHO
//! from an address none has belongs to the one that has an address the INIT lists or the
//! cookie names.
//!
//! Driving contract: like [`Association`] — `handle` / `handle_timeout` in,
//! [`poll_transmit`](Endpoint::poll_transmit) until `None`, then events from each
//! association, then [`poll_closed`](Endpoint::poll_closed) until `None`, then
//! [`poll_timeout`](Endpoint::poll_timeout).
//!
//! # Association lifetime
//!
//! Each association has an [`AssocId`] that is never reused. An association that has closed
//! is *finished* once the driver has taken everything it had for it: its packets
//! (`poll_transmit`), its events ([`Association::poll_event`], the last being
//! [`Event::Closed`]) and its received messages
//! ([`Association::read`]). A finished association leaves the endpoint, so a long-running
//! server does not grow: [`poll_closed`](Endpoint::poll_closed) hands it to the driver
//! (which may keep it, for its final counters); one the driver has not taken by its next
//! input (`handle`, `handle_timeout`, `connect`) is dropped then.
//!
//! Demultiplexing is by hash lookup: a packet goes to the live association that has its
//! source address among its paths and its source port as peer port.

use std::collections::VecDeque;
use std::fmt;
use std::net::IpAddr;

use rustc_hash::FxHashMap;

use rand::RngCore;
use simtime::{Duration, Instant};

use crate::association::{
    address_params, peer_addresses, random_tag, screen_unknown_params, AckTags, Association, CookieEchoOutcome,
    CookieState, InitAnswer, Offer,
};
use crate::config::Config;
use crate::random::{Entropy, RandomStream};
use crate::wire::{
    self, Checksum, Chunk, ChunkType, ChunkView, CommonHeader, ErrorCause, HeaderView, InitChunk, PacketBuilder,
    Parameter,
};
use crate::{Event, Message, SendError, State};

mod table;
use table::{AssocTable, ALL, MAY_HAVE_EVENT, MAY_READ, MAY_TRANSMIT, TIMER_STALE};

/// An association of an endpoint, numbered from 0 in order of creation and never reused,
/// even after the association has closed and left the endpoint.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct AssocId(u32);

impl AssocId {
    /// The id with number `n`.
    pub const fn new(n: u32) -> Self {
        AssocId(n)
    }
    /// Its number.
    pub const fn get(self) -> u32 {
        self.0
    }
}

/// Written as its bare number.
impl fmt::Debug for AssocId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for AssocId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// A packet the endpoint wants sent. Laid out as [`Transmit`](crate::Transmit) is, for the
/// same reason.
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Datagram {
    /// The SCTP packet, after `headroom` bytes.
    pub payload: Vec<u8>,
    /// Bytes in front of the packet in `payload`, for the driver's lower-layer headers
    /// ([`Endpoint::set_headroom`]).
    pub headroom: usize,
    /// Destination address.
    pub remote: IpAddr,
    /// Source address to use, when it matters (replies go out from the address the request
    /// came to); `None` lets routing choose.
    pub local: Option<IpAddr>,
    /// ECN codepoint for the IP header (RFC 3168): 0 Not-ECT.
    pub ecn: u8,
    /// Association that sent it, if any.
    pub assoc: Option<AssocId>,
}

impl Datagram {
    /// The SCTP packet (the payload after the headroom).
    pub fn packet(&self) -> &[u8] {
        self.payload.get(self.headroom..).unwrap_or_default()
    }
}

/// Endpoint-level counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Packets too short for a common header or with malformed chunks.
    pub malformed: u64,
    /// Packets with a wrong CRC32c (§6.8: discarded).
    pub bad_checksum: u64,
    /// Out-of-the-blue packets (§8.4).
    pub out_of_the_blue: u64,
    /// COOKIE ECHOs whose cookie failed the MAC check.
    pub invalid_cookies: u64,
    /// COOKIE ECHOs with an expired cookie.
    pub stale_cookies: u64,
}

/// One SCTP endpoint.
#[derive(Debug)]
pub struct Endpoint {
    config: Config,
    /// The ECN codepoint of the packet being handled ([`Endpoint::handle_in_place_ecn`]).
    rx_ecn: u8,
    /// The packet being handled came in a datagram handed over ([`Endpoint::handle_datagram`]).
    lending: bool,
    local_addrs: Vec<IpAddr>,
    port: u16,
    /// Accepts new associations from INIT / COOKIE ECHO.
    listening: bool,
    secret: [u8; 32],
    rng: RandomStream,
    /// Associations by id, in creation order.
    associations: AssocTable,
    /// The next id to hand out.
    next_id: u32,
    /// Demultiplexing: (peer address, peer port) of every path of every live association.
    by_peer: FxHashMap<(IpAddr, u16), AssocId>,
    /// Our verification tag of every live association (§8.5).
    by_tag: FxHashMap<u32, AssocId>,
    /// The last source address and port `by_peer` was asked about and the association it
    /// held: consecutive packets mostly come from one peer, so most skip the hash lookup.
    /// Cleared whenever `by_peer` changes.
    last_peer: Option<((IpAddr, u16), AssocId)>,
    /// Some association may be closed and still here: set by every input and mutable access
    /// that can close one, cleared when none is; [`Endpoint::poll_closed`] looks only then,
    /// so a driver polling it after every packet pays nothing.
    may_close: bool,
    replies: VecDeque<Datagram>,
    /// Headroom of the associations' packets ([`Endpoint::set_headroom`]).
    headroom: usize,
    /// Whether packets carry and are checked against their CRC32c ([`Endpoint::set_checksum`]).
    checksum: Checksum,
    stats: EndpointStats,
}

/// The keys an association is indexed under, to compare after it has handled a packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct IndexKeys {
    peers: Vec<IpAddr>,
    port: u16,
    tag: u32,
    /// [`Paths::generation`](crate::Paths::generation) when `peers` was taken.
    paths_generation: u64,
}

impl IndexKeys {
    fn of(a: &Association) -> Self {
        IndexKeys {
            peers: a.paths().values().map(|p| p.remote).collect(),
            port: a.peer_port(),
            tag: a.local_tag(),
            paths_generation: a.paths().generation(),
        }
    }

    /// True if these are `a`'s keys.
    fn describe(&self, a: &Association) -> bool {
        // Same generation, same paths: the addresses need no comparing (every packet).
        self.port == a.peer_port() && self.tag == a.local_tag() && self.paths_generation == a.paths().generation()
    }
}

impl Endpoint {
    /// An endpoint on `local_addrs`:`port`. `listening` accepts incoming associations.
    /// `seed` feeds the cookie secret and each association's random values, reproducibly
    /// (simulation); [`Endpoint::with_entropy`] chooses the source.
    pub fn new(config: Config, local_addrs: Vec<IpAddr>, port: u16, listening: bool, seed: u64) -> Self {
        Self::with_entropy(config, local_addrs, port, listening, Entropy::Seeded(seed))
    }

    /// An endpoint whose cookie secret and associations' random values come from `entropy`:
    /// [`Entropy::Os`] on real sockets.
    pub fn with_entropy(
        config: Config,
        local_addrs: Vec<IpAddr>,
        port: u16,
        listening: bool,
        entropy: Entropy,
    ) -> Self {
        let mut rng = RandomStream::new(entropy);
        let mut secret = [0u8; 32];
        rng.fill_bytes(&mut secret);
        Endpoint {
            config,
            rx_ecn: 0,
            lending: false,
            local_addrs,
            port,
            listening,
            secret,
            rng,
            associations: AssocTable::default(),
            may_close: false,
            next_id: 0,
            by_peer: FxHashMap::default(),
            by_tag: FxHashMap::default(),
            last_peer: None,
            replies: VecDeque::new(),
            headroom: 0,
            checksum: Checksum::Compute,
            stats: EndpointStats::default(),
        }
    }

    /// The local addresses new associations start with (listed in their INIT or INIT ACK,
    /// RFC 9260 §3.3.2): on a host whose addresses come and go (a roaming WLAN interface),
    /// the ones it holds now. Existing associations keep theirs; they change them by ASCONF
    /// ([`Endpoint::request_address_change`]).
    pub fn set_local_addrs(&mut self, addrs: Vec<IpAddr>) {
        self.local_addrs = addrs;
    }

    /// The local addresses new associations start with.
    pub fn local_addrs(&self) -> &[IpAddr] {
        &self.local_addrs
    }

    /// Opens an association to `remote_addrs` (the first is the primary) on `peer_port`.
    pub fn connect(&mut self, now: Instant, remote_addrs: &[IpAddr], peer_port: u16) -> AssocId {
        self.drop_finished();
        let rng = self.rng.fork();
        let a = Association::connect_with(
            self.config.clone(),
            self.local_addrs.clone(),
            self.port,
            remote_addrs,
            peer_port,
            now,
            rng,
        );
        self.insert(a)
    }

    /// Associations build their packets after `bytes` of headroom, for the driver's
    /// lower-layer headers ([`Association::set_headroom`], [`Datagram::headroom`]); stateless
    /// replies have none.
    pub fn set_headroom(&mut self, bytes: usize) {
        self.headroom = bytes;
        for (_, a) in self.associations.iter_mut() {
            a.set_headroom(bytes);
        }
    }

    /// Whether the packets of this endpoint and its associations carry their CRC32c and
    /// received packets are verified: [`Checksum::Compute`], the default, as RFC 9260 §6.8
    /// requires on the wire; or [`Checksum::Skip`], for a simulator whose packets can be
    /// neither altered nor seen outside it: zero is sent in the checksum field and received
    /// packets are accepted whatever theirs holds (see [`Checksum`]; after RFC 9653's zero
    /// checksum, without its negotiation). Never `Skip` on a real network.
    pub fn set_checksum(&mut self, checksum: Checksum) {
        self.checksum = checksum;
        for (_, a) in self.associations.iter_mut() {
            a.set_checksum(checksum);
        }
    }

    /// Whether packets carry and are checked against their CRC32c ([`Endpoint::set_checksum`]).
    pub fn checksum(&self) -> Checksum {
        self.checksum
    }

    /// The associations in the endpoint, by id (creation order).
    pub fn associations(&self) -> impl Iterator<Item = (AssocId, &Association)> + '_ {
        self.associations.iter()
    }

    /// The associations in the endpoint, mutably, by id.
    pub fn associations_mut(&mut self) -> impl Iterator<Item = (AssocId, &mut Association)> + '_ {
        self.may_close = true;
        self.associations.iter_mut()
    }

    /// The ids of the associations in the endpoint, in order.
    pub fn ids(&self) -> impl Iterator<Item = AssocId> + '_ {
        self.associations.iter().map(|(id, _)| id)
    }

    /// Number of associations in the endpoint (closed ones not yet finished included).
    pub fn len(&self) -> usize {
        self.associations.len()
    }

    /// True if the endpoint has no association.
    pub fn is_empty(&self) -> bool {
        self.associations.is_empty()
    }

    /// One association, if it is still in the endpoint.
    #[inline]
    pub fn association(&self, id: AssocId) -> Option<&Association> {
        self.associations.get(id)
    }

    /// One association, mutably (application commands, events).
    pub fn association_mut(&mut self, id: AssocId) -> Option<&mut Association> {
        // An application command (abort, shutdown) may close it.
        self.may_close = true;
        self.associations.get_mut(id)
    }

    /// The next event of association `id` ([`Association::poll_event`]).
    #[inline]
    pub fn poll_event(&mut self, id: AssocId) -> Option<Event> {
        self.associations.get_mut_unmarked(id)?.poll_event()
    }

    /// The next event of any association, lowest id first ([`Association::poll_event`]): a
    /// driver drains every association's events after an input without looking each up.
    pub fn poll_any_event(&mut self) -> Option<(AssocId, Event)> {
        // Only an association changed since it last had none can have one.
        self.associations.poll_marked(MAY_HAVE_EVENT, 0, 0, Association::poll_event)
    }

    /// Queues a message on association `id` ([`Association::send`]).
    #[inline]
    pub fn send(&mut self, id: AssocId, stream: u16, ppid: u32, unordered: bool, data: &[u8]) -> Result<(), SendError> {
        match self.associations.get_mut(id) {
            Some(a) => a.send(stream, ppid, unordered, data),
            None => Err(SendError::NotOpen(State::Closed)),
        }
    }

    /// Queues a message of `len` bytes made as it is sent on association `id`
    /// ([`Association::send_generated`]).
    #[inline]
    #[allow(clippy::too_many_arguments)] // `Association::send_generated`'s, and the id
    pub fn send_generated(
        &mut self,
        id: AssocId,
        stream: u16,
        ppid: u32,
        unordered: bool,
        len: usize,
        tag: [u64; 2],
        generator: crate::Generator,
    ) -> Result<(), SendError> {
        match self.associations.get_mut(id) {
            Some(a) => a.send_generated(stream, ppid, unordered, len, tag, generator),
            None => Err(SendError::NotOpen(State::Closed)),
        }
    }

    /// Asks the peer of association `id` to add or delete one of our addresses or to make one
    /// its primary (RFC 5061; [`Association::request_address_change`]). The outcome comes as
    /// an [`Event::AsconfAcked`] or
    /// [`Event::AsconfFailed`] of that association.
    pub fn request_address_change(
        &mut self,
        now: Instant,
        id: AssocId,
        req: crate::AddressRequest,
    ) -> Result<(), crate::AsconfError> {
        let a = self.association_mut(id).ok_or(crate::AsconfError::NotEnabled)?;
        a.request_address_change(now, req)
    }

    /// The next message association `id` delivers ([`Association::read`]).
    #[inline]
    pub fn read(&mut self, id: AssocId) -> Option<Message> {
        // Not marked for the polls unless it delivered: an application may try every
        // association after every input.
        // It may then announce its window (a SACK).
        self.associations.get_mut_marking_found(id, Association::read)
    }

    /// The next message of any association, lowest id first ([`Association::read`]): an
    /// application that reads everything looks only at the associations changed since they
    /// last had nothing to read, not at each.
    pub fn read_any(&mut self) -> Option<(AssocId, Message)> {
        // One that delivers may then announce its window (a SACK).
        self.associations.poll_marked(MAY_READ, 0, ALL, Association::read)
    }

    /// As [`Endpoint::read_any`], with the message's data where it is, `data[start..]`
    /// ([`Association::read_in_place`]): a driver that hands datagrams over
    /// ([`Endpoint::handle_datagram`]) reads their messages without a copy.
    pub fn read_any_in_place(&mut self) -> Option<(AssocId, Message, usize)> {
        let (id, (msg, start)) = self.associations.poll_marked(MAY_READ, 0, ALL, Association::read_in_place)?;
        Some((id, msg, start))
    }

    /// Offers a finished-with buffer to association `id` ([`Association::recycle`]).
    #[inline]
    pub fn recycle(&mut self, id: AssocId, buf: Vec<u8>) {
        if let Some(a) = self.associations.get_mut_unmarked(id) {
            a.recycle(buf);
        }
    }

    /// The live association whose verification tag (the one the peer writes in its packets)
    /// is `tag`.
    pub fn association_by_tag(&self, tag: u32) -> Option<AssocId> {
        self.by_tag.get(&tag).copied().filter(|id| self.is_live(*id))
    }

    /// The next finished association (closed, its packets, events and messages all taken;
    /// see the module documentation), removed from the endpoint, lowest id first.
    ///
    /// Inlined so that the common call, with nothing that could have closed, is a flag test.
    #[inline]
    pub fn poll_closed(&mut self) -> Option<(AssocId, Association)> {
        if !self.may_close {
            return None;
        }
        self.take_finished()
    }

    /// [`Endpoint::poll_closed`] once something may have closed: looks for a finished
    /// association, and clears `may_close` if none is closed.
    fn take_finished(&mut self) -> Option<(AssocId, Association)> {
        let Some(id) = self.associations.iter().find(|(_, a)| a.is_finished()).map(|(id, _)| id) else {
            self.may_close = self.associations.iter().any(|(_, a)| a.state() == State::Closed);
            return None;
        };
        self.unindex(id);
        self.associations.remove(id).map(|a| (id, a))
    }

    /// Drops the finished associations the driver has not taken.
    fn drop_finished(&mut self) {
        while self.poll_closed().is_some() {}
    }

    /// Adds an association under a new id and indexes it.
    fn insert(&mut self, mut a: Association) -> AssocId {
        a.set_headroom(self.headroom);
        a.set_checksum(self.checksum);
        let id = AssocId(self.next_id);
        self.next_id += 1;
        self.associations.push(id, a);
        self.reindex(id);
        id
    }

    fn is_live(&self, id: AssocId) -> bool {
        self.associations.get(id).is_some_and(|a| a.state() != State::Closed)
    }

    /// Brings the demultiplexing maps up to date for association `id` after it may have
    /// changed its peer addresses or tag (handshake, restart) or closed.
    ///
    /// Called for every packet: the common case, nothing changed, is an inlined comparison
    /// in place; [`Endpoint::reindex_changed`] does the rest.
    #[inline]
    fn reindex(&mut self, id: AssocId) {
        let unchanged = self
            .associations
            .entry(id)
            .is_some_and(|e| e.assoc.state() != State::Closed && e.keys.as_ref().is_some_and(|k| k.describe(&e.assoc)));
        if !unchanged {
            self.reindex_changed(id);
        }
    }

    /// [`Endpoint::reindex`] for an association whose keys changed, or that closed or left.
    #[inline(never)]
    fn reindex_changed(&mut self, id: AssocId) {
        let keys = match self.associations.entry(id) {
            Some(e) if e.assoc.state() != State::Closed => IndexKeys::of(&e.assoc),
            _ => {
                self.may_close = true;
                self.unindex(id);
                return;
            }
        };
        self.unindex(id);
        for &r in &keys.peers {
            self.index_peer((r, keys.port), id);
        }
        self.index_tag(keys.tag, id);
        self.associations.set_keys(id, keys);
    }

    /// Claims `key` for `id` unless a live association with a lower id holds it (the
    /// association found first, as by a scan in creation order).
    fn index_peer(&mut self, key: (IpAddr, u16), id: AssocId) {
        let holder = self.by_peer.get(&key).copied();
        if holder.is_none_or(|h| h > id || !self.is_live(h)) {
            self.by_peer.insert(key, id);
            self.last_peer = None;
        }
    }

    fn index_tag(&mut self, tag: u32, id: AssocId) {
        let holder = self.by_tag.get(&tag).copied();
        if holder.is_none_or(|h| h > id || !self.is_live(h)) {
            self.by_tag.insert(tag, id);
        }
    }

    /// Removes association `id` from the demultiplexing maps; another live association that
    /// shares one of its keys takes the key over.
    fn unindex(&mut self, id: AssocId) {
        let Some(keys) = self.associations.take_keys(id) else { return };
        let mut freed = false;
        for &r in &keys.peers {
            if self.by_peer.get(&(r, keys.port)) == Some(&id) {
                self.by_peer.remove(&(r, keys.port));
                self.last_peer = None;
                freed = true;
            }
        }
        if self.by_tag.get(&keys.tag) == Some(&id) {
            self.by_tag.remove(&keys.tag);
            freed = true;
        }
        if !freed {
            return;
        }
        // Rare (two live associations with one key): let the others claim what was freed.
        let others: Vec<(AssocId, IndexKeys)> =
            self.associations.indexed().map(|(other, k)| (other, k.clone())).collect();
        for (other, k) in others {
            for &r in &k.peers {
                if !self.by_peer.contains_key(&(r, k.port)) {
                    self.index_peer((r, k.port), other);
                }
            }
            if !self.by_tag.contains_key(&k.tag) {
                self.index_tag(k.tag, other);
            }
        }
    }

    /// Counters.
    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// The local port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A packet from `from` to our address `to`. Returns the association it went to.
    pub fn handle(&mut self, now: Instant, from: IpAddr, to: IpAddr, packet: &[u8]) -> Option<AssocId> {
        let verified = (self.checksum == Checksum::Skip).then_some(true);
        self.handle_verified(now, from, to, packet, verified)
    }

    /// As [`Endpoint::handle`], for a packet in a buffer the driver owns: the CRC32c is
    /// verified in one pass with the checksum field zeroed in place (and restored), instead
    /// of over a copy of the header and the rest. The packet is unchanged afterwards.
    pub fn handle_in_place(&mut self, now: Instant, from: IpAddr, to: IpAddr, packet: &mut [u8]) -> Option<AssocId> {
        // With `Skip` every checksum passes, unread (see [`Endpoint::set_checksum`]).
        let ok = self.checksum == Checksum::Skip || wire::checksum_ok_in_place(packet);
        self.handle_verified(now, from, to, packet, Some(ok))
    }

    /// As [`Endpoint::handle_in_place`], for a packet whose IP header carried the ECN
    /// codepoint `ecn` (RFC 3168 §5: 3 is CE): the association it goes to echoes a CE mark
    /// when ECN was negotiated (RFC 9260 Appendix A).
    pub fn handle_in_place_ecn(
        &mut self,
        now: Instant,
        from: IpAddr,
        to: IpAddr,
        packet: &mut [u8],
        ecn: u8,
    ) -> Option<AssocId> {
        self.rx_ecn = ecn;
        let id = self.handle_in_place(now, from, to, packet);
        self.rx_ecn = 0;
        id
    }

    /// As [`Endpoint::handle_in_place_ecn`] for the packet at `start` in `datagram`, which is
    /// handed over: a whole message in it that the application can read at once stays in it
    /// ([`Endpoint::read_any_in_place`]); otherwise the association it went to builds later
    /// packets in it ([`Endpoint::recycle`]).
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        from: IpAddr,
        to: IpAddr,
        mut datagram: Vec<u8>,
        start: usize,
        ecn: u8,
    ) -> Option<AssocId> {
        let packet = datagram.get_mut(start..)?;
        let ok = self.checksum == Checksum::Skip || wire::checksum_ok_in_place(packet);
        (self.rx_ecn, self.lending) = (ecn, true);
        let id = self.handle_verified(now, from, to, packet, Some(ok));
        (self.rx_ecn, self.lending) = (0, false);
        let id = id?;
        if let Some(a) = self.associations.get_mut_unmarked(id) {
            if let Some(back) = a.keep_datagram(datagram, start) {
                a.recycle(back);
            }
        }
        Some(id)
    }

    /// [`Endpoint::handle`] with the checksum already checked (`Some(ok)`), or not (`None`).
    fn handle_verified(
        &mut self,
        now: Instant,
        from: IpAddr,
        to: IpAddr,
        packet: &[u8],
        checksum_ok: Option<bool>,
    ) -> Option<AssocId> {
        self.drop_finished();
        let id = self.demux(now, from, to, packet, checksum_ok);
        if let Some(id) = id {
            self.reindex(id);
        }
        id
    }

    fn demux(
        &mut self,
        now: Instant,
        from: IpAddr,
        to: IpAddr,
        packet: &[u8],
        checksum_ok: Option<bool>,
    ) -> Option<AssocId> {
        let Ok(header) = HeaderView::new_checked(packet) else {
            self.stats.malformed += 1;
            return None;
        };
        if !checksum_ok.unwrap_or_else(|| header.checksum_ok()) {
            self.stats.bad_checksum += 1;
            return None;
        }
        if header.dst_port() != self.port {
            return None;
        }
        let Some(Ok(first)) = header.chunks().next() else {
            self.stats.malformed += 1;
            return None;
        };
        let peer_port = header.src_port();
        let mut found = self.association_from(peer_port, from);
        if found.is_none() && first.chunk_type == ChunkType::INIT {
            // An INIT from an address the association does not have may list addresses it
            // has: it is that association's, which refuses the new address (§5.2.2), not the
            // start of a second association overlapping it.
            if let Ok(Chunk::Init(init)) = Chunk::parse(&first) {
                found = self.association_with(peer_port, &peer_addresses(from, &init.params));
            }
        }
        if found.is_none() {
            found = self.asconf_owner(peer_port, header);
        }
        let Some(id) = found else {
            if first.chunk_type == ChunkType::COOKIE_ECHO {
                return self.cookie_echo_from_new_source(now, from, to, &header, &first);
            }
            return self.out_of_the_blue(now, from, to, &header, &first);
        };
        match first.chunk_type {
            // §5.2: INIT and COOKIE ECHO for an existing association. The endpoint answers
            // an INIT and opens a cookie (both need its secret), before the association's
            // tag check: a restarted peer's COOKIE ECHO carries the new tag (§5.2.4 A).
            ChunkType::INIT => self.unexpected_init(now, id, from, to, &header, &first),
            ChunkType::COOKIE_ECHO => {
                if let Some(state) = self.cookie_in(&header, &first) {
                    self.existing_cookie_echo(now, id, from, to, &header, &state);
                }
            }
            // §8.5.1 E: a SHUTDOWN ACK before the association is up is out of the blue.
            ChunkType::SHUTDOWN_ACK
                if self
                    .association(id)
                    .is_some_and(|a| matches!(a.state(), State::CookieWait | State::CookieEchoed)) =>
            {
                return self.out_of_the_blue(now, from, to, &header, &first);
            }
            _ => {
                // Not `association_mut`: a packet that closes the association is noticed by
                // `reindex` after it, so the common packet does not make `poll_closed` look.
                if let Some(a) = self.associations.get_mut(id) {
                    if self.lending {
                        a.lend(packet);
                    }
                    a.handle_packet_ecn(now, from, packet, self.rx_ecn);
                }
            }
        }
        Some(id)
    }

    /// The association, not closed, with the peer port `peer_port` and the address `from`:
    /// [`Endpoint::association_with`], remembering the answer for the next packet.
    fn association_from(&mut self, peer_port: u16, from: IpAddr) -> Option<AssocId> {
        if let Some((key, id)) = self.last_peer {
            if key == (from, peer_port) && self.is_live(id) {
                return Some(id);
            }
        }
        let found = self.association_with(peer_port, &[from]);
        if let Some(id) = found {
            self.last_peer = Some(((from, peer_port), id));
        }
        found
    }

    /// The association an ASCONF from a source address it does not know belongs to (RFC 5061
    /// §5.2: found by the ASCONF's Address Parameter), if the packet carries our tag for it.
    /// Nothing to look for unless ASCONF is on.
    fn asconf_owner(&self, peer_port: u16, header: HeaderView<'_>) -> Option<AssocId> {
        if !self.config.asconf {
            return None;
        }
        let view = header.chunks().take(4).flatten().find(|c| c.chunk_type == ChunkType::ASCONF)?;
        let Ok(Chunk::Asconf { address, .. }) = Chunk::parse(&view) else { return None };
        let id = self.association_with(peer_port, &[address])?;
        (self.association(id)?.local_tag() == header.verification_tag()).then_some(id)
    }

    /// The association, not closed, with the peer port `peer_port` and one of `addrs`.
    fn association_with(&self, peer_port: u16, addrs: &[IpAddr]) -> Option<AssocId> {
        // The first address that some association has decides, as a scan over associations
        // would for addresses that only one association has (two live associations never
        // share a peer address and port: §5.2 finds the existing one first).
        addrs.iter().filter_map(|&r| self.by_peer.get(&(r, peer_port)).copied()).filter(|&id| self.is_live(id)).min()
    }

    /// A COOKIE ECHO from an address no association has. If its cookie names addresses an
    /// association has (a peer that restarted, or one whose collision cookie comes back from
    /// another of its addresses), that association takes it (§5.2.4), as it would an INIT
    /// listing them; otherwise it is out of the blue, and a listening endpoint creates the
    /// association the cookie describes (§5.1.5).
    fn cookie_echo_from_new_source(
        &mut self,
        now: Instant,
        from: IpAddr,
        to: IpAddr,
        header: &HeaderView<'_>,
        first: &ChunkView<'_>,
    ) -> Option<AssocId> {
        let state = self.cookie_in(header, first);
        if let Some(state) = state.as_ref() {
            if let Some(id) = self.association_with(header.src_port(), &state.peer_addrs) {
                self.existing_cookie_echo(now, id, from, to, header, state);
                return Some(id);
            }
        }
        if !self.listening {
            return self.out_of_the_blue(now, from, to, header, first);
        }
        self.stats.out_of_the_blue += 1;
        let state = state?;
        if let Some(by) = state.staleness(now) {
            self.report_stale(header, from, to, &state, by);
            return None;
        }
        let rng = self.rng.fork();
        let a = Association::accept(self.config.clone(), self.local_addrs.clone(), &state, from, now, rng);
        let id = self.insert(a);
        // Chunks bundled after the COOKIE ECHO (§5.1 D) are processed now.
        if let Some(a) = self.association_mut(id) {
            a.handle_bundled_after_cookie(now, from, header);
        }
        Some(id)
    }

    /// §8.4 and the passive side of §5.1.
    fn out_of_the_blue(
        &mut self,
        now: Instant,
        from: IpAddr,
        to: IpAddr,
        header: &HeaderView<'_>,
        first: &ChunkView<'_>,
    ) -> Option<AssocId> {
        self.stats.out_of_the_blue += 1;
        let vtag = header.verification_tag();
        match first.chunk_type {
            // INIT: must be alone with tag 0 (§8.5.1 A, §6.10).
            ChunkType::INIT if vtag == 0 => {
                let Ok(Chunk::Init(mut init)) = Chunk::parse(first) else { return None };
                if header.chunks().count() != 1 {
                    return None;
                }
                let chunk = match check_init(&mut init) {
                    Err(None) => return None,
                    Err(Some(abort)) => abort,
                    // §8.4 3: an INIT that cannot be processed gets ABORT under its Initiate
                    // Tag, T bit clear.
                    Ok(_) if !self.listening => Chunk::Abort { t_bit: false, causes: Vec::new() },
                    Ok(unrecognized) => {
                        let fresh = AckTags::Fresh { tie_tags: (0, 0) };
                        let offer = Offer::from_config(&self.config);
                        self.answer_init(now, from, header, &init, fresh, offer, unrecognized)
                    }
                };
                self.reply(header, from, to, init.initiate_tag, &[chunk]);
                None
            }
            // §8.4 2, 6, 7: ABORT, SHUTDOWN COMPLETE, COOKIE ACK and ERROR are discarded.
            ChunkType::ABORT | ChunkType::ERROR | ChunkType::COOKIE_ACK | ChunkType::SHUTDOWN_COMPLETE => None,
            // §8.4 5: SHUTDOWN ACK gets SHUTDOWN COMPLETE with the T bit, tag reflected.
            ChunkType::SHUTDOWN_ACK => {
                self.reply(header, from, to, vtag, &[Chunk::ShutdownComplete { t_bit: true }]);
                None
            }
            // §8.4 8: anything else gets ABORT with the T bit, tag reflected.
            _ => {
                self.reply(header, from, to, vtag, &[Chunk::Abort { t_bit: true, causes: Vec::new() }]);
                None
            }
        }
    }

    /// An INIT for association `id` (§5.2.1, §5.2.2, §9.2): the association decides, the
    /// endpoint answers, with the INIT's Initiate Tag in the header.
    fn unexpected_init(
        &mut self,
        now: Instant,
        id: AssocId,
        from: IpAddr,
        to: IpAddr,
        header: &HeaderView<'_>,
        first: &ChunkView<'_>,
    ) {
        // §8.5.1 A, §6.10: an INIT carries tag 0 and is alone; otherwise it is discarded.
        if header.verification_tag() != 0 || header.chunks().count() != 1 {
            return;
        }
        let Ok(Chunk::Init(mut init)) = Chunk::parse(first) else { return };
        // §3.3.2: an invalid INIT must not change the association's state, so it is checked
        // before the association sees it.
        let unrecognized = match check_init(&mut init) {
            Ok(unrecognized) => unrecognized,
            Err(None) => return,
            Err(Some(abort)) => {
                self.reply(header, from, to, init.initiate_tag, &[abort]);
                return;
            }
        };
        let Some(a) = self.association_mut(id) else { return };
        let chunk = match a.on_unexpected_init(from, &init) {
            InitAnswer::InitAck(tags, offer) => self.answer_init(now, from, header, &init, tags, offer, unrecognized),
            InitAnswer::NewAddresses(addrs) => Chunk::Abort {
                t_bit: false,
                causes: vec![ErrorCause::RestartWithNewAddresses {
                    addresses: Parameter::emit_list(&address_params(&addrs)),
                }],
            },
            InitAnswer::Discard => return,
        };
        self.reply(header, from, to, init.initiate_tag, &[chunk]);
    }

    /// A COOKIE ECHO for association `id` (§5.2.4), its cookie opened: the association
    /// compares its tags with the cookie's.
    fn existing_cookie_echo(
        &mut self,
        now: Instant,
        id: AssocId,
        from: IpAddr,
        to: IpAddr,
        header: &HeaderView<'_>,
        state: &CookieState,
    ) {
        let staleness = state.staleness(now);
        let Some(a) = self.association_mut(id) else { return };
        match a.on_cookie_echo(now, from, state, staleness.is_some()) {
            CookieEchoOutcome::Accepted => a.handle_bundled_after_cookie(now, from, header),
            CookieEchoOutcome::Stale => self.report_stale(header, from, to, state, staleness.unwrap_or_default()),
            CookieEchoOutcome::Discarded => {}
        }
    }

    /// The state in the cookie of the COOKIE ECHO `first`, if the MAC is ours and the
    /// packet's ports and tag are those the cookie was made for (§5.1.5); failures are
    /// discarded silently.
    fn cookie_in(&mut self, header: &HeaderView<'_>, first: &ChunkView<'_>) -> Option<CookieState> {
        let Ok(Chunk::CookieEcho { cookie }) = Chunk::parse(first) else { return None };
        let Some(state) = CookieState::open(&cookie, &self.secret) else {
            self.stats.invalid_cookies += 1;
            return None;
        };
        let matches = state.local_tag == header.verification_tag()
            && state.local_port == header.dst_port()
            && state.peer_port == header.src_port();
        matches.then_some(state)
    }

    /// §5.1.5, §5.2.6: tell the peer how stale its cookie was, in microseconds, under the tag
    /// the cookie gives it.
    fn report_stale(&mut self, header: &HeaderView<'_>, from: IpAddr, to: IpAddr, state: &CookieState, by: Duration) {
        self.stats.stale_cookies += 1;
        let measure = u32::try_from(by.as_nanos() / 1000).unwrap_or(u32::MAX);
        let chunk = Chunk::Error { causes: vec![ErrorCause::StaleCookie { staleness_us: measure }] };
        self.reply(header, from, to, state.peer_tag, &[chunk]);
    }

    /// Queues a packet answering `header` (ports swapped) from our address `to` back to `from`.
    fn reply(&mut self, header: &HeaderView<'_>, from: IpAddr, to: IpAddr, tag: u32, chunks: &[Chunk]) {
        let h = CommonHeader { src_port: header.dst_port(), dst_port: header.src_port(), verification_tag: tag };
        let mut b = PacketBuilder::new(h, 64 + chunks.iter().map(Chunk::buffer_len).sum::<usize>());
        for c in chunks {
            b.chunk(c);
        }
        let payload = b.finish_with(self.checksum);
        self.replies.push_back(Datagram { remote: from, local: Some(to), assoc: None, ecn: 0, headroom: 0, payload });
    }

    /// Builds an INIT ACK with a signed cookie, keeping no state (§5.1 B): for an INIT out of
    /// the blue, or for one an association answers (§5.2.1, §5.2.2), with the tags and the
    /// offer it chose. `init` has passed [`check_init`], which found the `unrecognized`
    /// parameters.
    #[allow(clippy::too_many_arguments)]
    fn answer_init(
        &mut self,
        now: Instant,
        from: IpAddr,
        header: &HeaderView<'_>,
        init: &InitChunk,
        tags: AckTags,
        offer: Offer,
        unrecognized: Vec<Vec<u8>>,
    ) -> Chunk {
        let (local_tag, local_initial_tsn, (local_tie_tag, peer_tie_tag)) = match tags {
            AckTags::Fresh { tie_tags } => {
                let tag = random_tag(&mut self.rng);
                let tsn = self.config.initial_tsn.unwrap_or_else(|| self.rng.next_u32());
                (tag, tsn, tie_tags)
            }
            AckTags::Own { tag, initial_tsn, tie_tags } => (tag, initial_tsn, tie_tags),
        };
        let outbound = offer.outbound_streams.min(init.inbound_streams);
        let inbound = offer.max_inbound_streams.min(init.outbound_streams);
        let state = CookieState {
            created: now,
            lifespan: self.config.valid_cookie_life,
            local_tag,
            peer_tag: init.initiate_tag,
            local_initial_tsn,
            peer_initial_tsn: init.initial_tsn,
            peer_rwnd: init.a_rwnd,
            local_tie_tag,
            peer_tie_tag,
            outbound_streams: outbound,
            inbound_streams: inbound,
            local_port: header.dst_port(),
            peer_port: header.src_port(),
            peer_addrs: peer_addresses(from, &init.params),
            // RFC 9260 Appendix A: ECN when the INIT offers it and we support it.
            ecn: self.config.ecn && init.params.contains(&Parameter::EcnCapable),
            // RFC 4895 §3: our RANDOM, drawn only when AUTH is on, and the peer's parameters.
            auth: self.config.auth.then(|| {
                let mut random = vec![0u8; crate::auth::RANDOM_LEN];
                self.rng.fill_bytes(&mut random);
                (random, crate::auth::AuthParams::from_params(&init.params))
            }),
            peer_asconf: crate::association::peer_supports_asconf(&init.params),
        };
        let mut params = if self.local_addrs.len() > 1 { address_params(&self.local_addrs) } else { Vec::new() };
        if state.ecn {
            params.push(Parameter::EcnCapable);
        }
        if let Some((random, _)) = &state.auth {
            params.extend(crate::association::extension_params(&self.config, random.clone()));
        }
        params.push(Parameter::StateCookie(state.seal(&self.secret)));
        // §3.3.3.1: one Unrecognized Parameter per parameter reported.
        params.extend(unrecognized.into_iter().map(Parameter::UnrecognizedParameter));
        Chunk::InitAck(InitChunk {
            initiate_tag: local_tag,
            a_rwnd: offer.a_rwnd,
            outbound_streams: outbound,
            inbound_streams: inbound,
            initial_tsn: local_initial_tsn,
            params,
        })
    }

    /// The next packet: stateless replies first, then each association's.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Datagram> {
        if let Some(d) = self.replies.pop_front() {
            return Some(d);
        }
        // Only an association changed since it last had nothing can have a packet; building
        // one may change its events and timers.
        let (id, t) =
            self.associations.poll_marked(MAY_TRANSMIT, MAY_HAVE_EVENT | TIMER_STALE, 0, |a| a.poll_transmit(now))?;
        Some(Datagram {
            remote: t.remote,
            local: t.local,
            assoc: Some(id),
            ecn: t.ecn,
            headroom: t.headroom,
            payload: t.payload,
        })
    }

    /// The earliest timer of any association.
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        self.associations.earliest_timer()
    }

    /// Fires every association timer due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.drop_finished();
        let mut closed = false;
        self.associations.fire_due(now, |a| {
            a.handle_timeout(now);
            closed |= a.state() == State::Closed;
        });
        if closed {
            self.may_close = true;
            let ids: Vec<AssocId> =
                self.associations.indexed().map(|(id, _)| id).filter(|&id| !self.is_live(id)).collect();
            for id in ids {
                self.unindex(id);
            }
        }
    }
}

/// Checks an INIT's mandatory fields and parameters (§3.3.2, §3.2.1), and drops from `init`
/// the parameters that must not be processed. `Ok` holds the unrecognized parameters to
/// report in the INIT ACK (§3.2.2), each a complete TLV; `Err(None)` means discard the packet
/// silently, `Err(Some(abort))` answer with that ABORT under the INIT's Initiate Tag.
fn check_init(init: &mut InitChunk) -> Result<Vec<Vec<u8>>, Option<Chunk>> {
    // §3.3.2: an Initiate Tag of 0 is silently discarded (RFC 4960 sent ABORT); no outbound or
    // no inbound streams is discarded with an ABORT.
    if init.initiate_tag == 0 {
        return Err(None);
    }
    if init.outbound_streams == 0 || init.inbound_streams == 0 {
        return Err(Some(Chunk::Abort { t_bit: false, causes: vec![ErrorCause::InvalidMandatoryParameter] }));
    }
    // §3.2.1: parameters after an unknown `0x` one are not processed.
    Ok(screen_unknown_params(&mut init.params))
}
