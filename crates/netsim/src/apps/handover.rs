//! Handover of an SCTP application's associations driven by its node's interface events
//! (RFC 5061 dynamic address reconfiguration; paper 001's mobile client):
//!
//! * `none`: nothing (plain multihoming: failover only), the default.
//! * `make-before-break`: when an interface gets an address, ADD-IP and SET-PRIMARY it while
//!   the old one still works; when an address goes, DELETE-IP it.
//! * `break-before-make`: a new address waits until an old one goes; then ADD-IP and
//!   SET-PRIMARY the new one and DELETE-IP the old.
//!
//! Under `make-before-break` the SET-PRIMARY waits for a [`HandoverTrigger`]:
//!
//! * `new-address` (the standard reading of make-before-break, the default): as soon as the
//!   new interface has its address (a WLAN interface: on association with its AP), ADD-IP
//!   and SET-PRIMARY go together while the old link still works.
//! * `old-address-lost` (paper 001, section 3.3.4 step 6, eq. 3.1): ADD-IP when the new
//!   interface gets its address, SET-PRIMARY (with the DELETE-IP of the old address) when
//!   the old interface loses its AP. A roaming WLAN interface leaves its AP when the AP's
//!   signal falls below its `handover_threshold` (-90 dBm by default), so with that
//!   threshold this is the paper's "SET-PRIMARY when the old AP's RSS falls below -90 dBm".
//!
//! Under either trigger, an address that goes while the associations still use it (the
//! node had both addresses before the association started, so no handover moved it) hands
//! over to the newest address left: SET-PRIMARY that one, DELETE-IP the old.
//!
//! The policy also moves the association's own primary destination (RFC 9260 §6.4) to a
//! peer address that the new address's interface reaches, once the peer has acknowledged the
//! SET-PRIMARY (or at once when the old address is gone and the new one is already part of
//! the association): a multihomed peer reached through separate networks (paper 001's server
//! behind two routers) is reachable at only one of its addresses from each interface.
//! The SCTP endpoint's local addresses follow the node's (a roaming interface has none until
//! it associates), so an association opened later lists only the addresses held then.
//!
//! Per handover it records, as README.md's metric definitions define the handover delay, the time from the
//! set-primary request to the first DATA sent on the new primary: here, the first packet of
//! the association carrying DATA that leaves from the new address (after the peer
//! acknowledged the SET-PRIMARY, the association's packets name that address as source).
//! The ASCONF round trip of the SET-PRIMARY goes alongside, and the layer-2 handover time
//! of the new address's interface when a link layer reports one ([`Handover::set_l2_time`];
//! a roaming WLAN interface does, [`crate::network::L2Timing`]: from the start of the scan
//! that found its AP, or from the loss of its previous AP if later, to its association).

use std::net::{IpAddr, Ipv4Addr};

use sctp::{AddressRequest, AssocId, Event};

use crate::agent::Ctx;
use crate::event::IfaceEvent;
use crate::ids::IfaceId;
use crate::recorder::Scalars;
use crate::time::{Duration, Instant};
use crate::transport::sctp::{SctpSocket, SctpSocketApi};

/// How an SCTP application reacts to its node's address changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HandoverPolicy {
    /// No reaction: the associations keep the addresses they started with.
    #[default]
    None,
    /// Add the new address and make it the peer's primary at once; delete the old one when
    /// it goes.
    MakeBeforeBreak,
    /// Wait for the old address to go; then add the new one, make it primary and delete the
    /// old one.
    BreakBeforeMake,
}

impl HandoverPolicy {
    /// Every policy with its scenario name.
    pub const ALL: [(&'static str, HandoverPolicy); 3] = [
        ("none", HandoverPolicy::None),
        ("make-before-break", HandoverPolicy::MakeBeforeBreak),
        ("break-before-make", HandoverPolicy::BreakBeforeMake),
    ];

    /// The policy called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|&(_, p)| p)
    }

    /// Its scenario name.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, p)| *p == self).map_or("none", |(n, _)| n)
    }
}

/// When a `make-before-break` handover moves the primary to the new address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HandoverTrigger {
    /// As soon as the new address comes (ADD-IP and SET-PRIMARY together).
    #[default]
    NewAddress,
    /// ADD-IP when the new address comes, SET-PRIMARY when the old address goes (paper 001:
    /// the old AP's signal below the old interface's handover threshold).
    OldAddressLost,
}

impl HandoverTrigger {
    /// Every trigger with its scenario name.
    pub const ALL: [(&'static str, HandoverTrigger); 2] =
        [("new-address", HandoverTrigger::NewAddress), ("old-address-lost", HandoverTrigger::OldAddressLost)];

    /// The trigger called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|&(_, t)| t)
    }

    /// Its scenario name.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, t)| *t == self).map_or("new-address", |(n, _)| n)
    }
}

/// One handover of one association.
#[derive(Clone, Debug, PartialEq)]
pub struct HandoverRecord {
    /// The association.
    pub assoc: AssocId,
    /// The address handed over to.
    pub new_addr: Ipv4Addr,
    /// The address given up, once known.
    pub old_addr: Option<Ipv4Addr>,
    /// When SET-PRIMARY was requested (the handover decision).
    pub requested_at: Instant,
    /// Round trip of the ASCONF carrying the SET-PRIMARY, once acknowledged.
    pub asconf_rtt: Option<Duration>,
    /// The first DATA sent from the new address.
    pub data_at: Option<Instant>,
    /// Layer-2 handover time of the new address's interface (scan, authentication and
    /// association), filled by a link layer that knows it.
    pub l2_time: Option<Duration>,
    /// When the new address's interface completed its layer-2 handover (associated).
    pub l2_done_at: Option<Instant>,
}

impl HandoverRecord {
    /// The handover delay (README.md's metric definitions): set-primary request to the first DATA on the new
    /// primary.
    pub fn delay(&self) -> Option<Duration> {
        self.data_at.map(|t| t.saturating_since(self.requested_at))
    }
}

/// The policy's state in one application.
#[derive(Debug, Default)]
pub struct Handover {
    policy: HandoverPolicy,
    trigger: HandoverTrigger,
    /// Break-before-make: addresses gained and not yet used.
    standby: Vec<Ipv4Addr>,
    /// Break-before-make: addresses lost with no replacement yet.
    lost: Vec<Ipv4Addr>,
    /// The node's addresses with their interfaces, in the order they came (newest last).
    live: Vec<(Ipv4Addr, IfaceId)>,
    /// Per association, the local address its traffic uses: where it started, then the
    /// address of its last SET-PRIMARY.
    current: Vec<(AssocId, Ipv4Addr)>,
    /// Layer-2 handover of each address's interface when it came: (time, completed at).
    l2: Vec<(Ipv4Addr, Duration, Instant)>,
    records: Vec<HandoverRecord>,
}

impl Handover {
    /// State for `policy` (make-before-break moving the primary at once).
    pub fn new(policy: HandoverPolicy) -> Self {
        Handover { policy, ..Default::default() }
    }

    /// State for `policy` with make-before-break's `trigger`.
    pub fn with_trigger(policy: HandoverPolicy, trigger: HandoverTrigger) -> Self {
        Handover { policy, trigger, ..Default::default() }
    }

    /// At the application's start: the node's addresses now, which the socket's new
    /// associations start with (a roaming WLAN interface has none until it associates).
    pub fn start(&mut self, ctx: &Ctx<'_>, socket: &mut SctpSocket) {
        if !self.active() {
            return;
        }
        self.live = ctx.ifaces().iter().flat_map(|&i| ctx.iface_addrs(i).iter().map(move |a| (a.addr, i))).collect();
        self.sync_local(socket);
    }

    fn sync_local(&self, socket: &mut SctpSocket) {
        let addrs: Vec<Ipv4Addr> = self.live.iter().map(|&(a, _)| a).collect();
        socket.set_local_addrs(&addrs);
    }

    fn current_of(&self, id: AssocId) -> Option<Ipv4Addr> {
        self.current.iter().find(|c| c.0 == id).map(|c| c.1)
    }

    fn set_current(&mut self, id: AssocId, addr: Ipv4Addr) {
        match self.current.iter_mut().find(|c| c.0 == id) {
            Some(c) => c.1 = addr,
            None => self.current.push((id, addr)),
        }
    }

    /// Whether the policy does anything.
    pub fn active(&self) -> bool {
        self.policy != HandoverPolicy::None
    }

    /// The handovers so far.
    pub fn records(&self) -> &[HandoverRecord] {
        &self.records
    }

    /// Sets the layer-2 handover time of the last handover to `addr` (for a link layer that
    /// reports scan and association times), which completed at `done_at`.
    pub fn set_l2_time(&mut self, addr: Ipv4Addr, l2: Duration, done_at: Instant) {
        if let Some(r) = self.records.iter_mut().rev().find(|r| r.new_addr == addr) {
            r.l2_time = Some(l2);
            r.l2_done_at = Some(done_at);
        }
    }

    /// An interface event of the node (on interface `iface`): the requests the policy makes.
    pub fn on_iface_event(&mut self, ctx: &mut Ctx<'_>, socket: &mut SctpSocket, iface: IfaceId, event: IfaceEvent) {
        match event {
            IfaceEvent::AddressAdded(a) => {
                self.live.retain(|&(x, _)| x != a);
                self.live.push((a, iface));
                self.sync_local(socket);
                // The interface's layer-2 handover, if it just completed one.
                let now = ctx.now();
                if let Some((from, at)) = ctx.l2_timing(iface).and_then(|t| t.joined).filter(|&(_, at)| at == now) {
                    self.l2.retain(|x| x.0 != a);
                    self.l2.push((a, at.saturating_since(from), at));
                }
            }
            IfaceEvent::AddressRemoved(old) => {
                self.live.retain(|&(x, _)| x != old);
                self.sync_local(socket);
            }
            IfaceEvent::Up | IfaceEvent::Down => {}
        }
        match (self.policy, event) {
            (HandoverPolicy::None, _) | (_, IfaceEvent::Up | IfaceEvent::Down) => {}
            (HandoverPolicy::MakeBeforeBreak, IfaceEvent::AddressAdded(a)) => {
                if let Some(old) = self.lost.pop() {
                    // The address in use went with no other to hand over to: this one takes
                    // over at once, whatever the trigger.
                    for id in socket.associations().to_vec() {
                        self.hand_over(ctx, socket, id, a, Some(old));
                    }
                    return;
                }
                for id in socket.associations().to_vec() {
                    if !socket.association(id).is_some_and(|x| x.asconf_enabled()) {
                        continue;
                    }
                    match self.trigger {
                        HandoverTrigger::NewAddress => self.hand_over(ctx, socket, id, a, None),
                        HandoverTrigger::OldAddressLost => {
                            if !uses(socket, id, a) {
                                request(ctx, socket, id, AddressRequest::Add(IpAddr::V4(a)));
                            }
                        }
                    }
                }
            }
            (HandoverPolicy::MakeBeforeBreak, IfaceEvent::AddressRemoved(old)) => {
                for id in socket.associations().to_vec() {
                    if !socket.association(id).is_some_and(|x| x.asconf_enabled()) {
                        continue;
                    }
                    // The address the association's traffic uses goes: hand over to the
                    // newest address left (the old link is gone, so the association's own
                    // primary moves at once if the peer knows the new address already).
                    let newest = self.live.last().map(|&(a, _)| a);
                    match newest {
                        Some(new) if self.current_of(id) == Some(old) => {
                            self.hand_over(ctx, socket, id, new, Some(old))
                        }
                        // Nothing to hand over to yet: the address stays in the association (the
                        // peer would refuse to delete its last one, RFC 5061 §5.2) until the next
                        // address comes.
                        None if self.current_of(id) == Some(old) => {
                            if !self.lost.contains(&old) {
                                self.lost.push(old);
                            }
                        }
                        _ => {
                            request(ctx, socket, id, AddressRequest::Delete(IpAddr::V4(old)));
                        }
                    }
                }
                if let Some(r) = self.records.iter_mut().rev().find(|r| r.old_addr.is_none() && r.new_addr != old) {
                    r.old_addr = Some(old);
                }
            }
            (HandoverPolicy::BreakBeforeMake, IfaceEvent::AddressAdded(a)) => match self.lost.pop() {
                Some(old) => {
                    for id in socket.associations().to_vec() {
                        self.hand_over(ctx, socket, id, a, Some(old));
                    }
                }
                None => self.standby.push(a),
            },
            (HandoverPolicy::BreakBeforeMake, IfaceEvent::AddressRemoved(old)) => {
                if let Some(i) = self.standby.iter().position(|&s| s == old) {
                    self.standby.remove(i);
                } else if self.standby.is_empty() {
                    self.lost.push(old);
                } else {
                    let a = self.standby.remove(0);
                    for id in socket.associations().to_vec() {
                        self.hand_over(ctx, socket, id, a, Some(old));
                    }
                }
            }
        }
    }

    /// ADD-IP (unless the association uses it already) and SET-PRIMARY `new` on association
    /// `id`, and DELETE-IP `old` if given; one handover record.
    fn hand_over(
        &mut self,
        ctx: &mut Ctx<'_>,
        socket: &mut SctpSocket,
        id: AssocId,
        new: Ipv4Addr,
        old: Option<Ipv4Addr>,
    ) {
        let now = ctx.now();
        if !socket.association(id).is_some_and(|a| a.asconf_enabled()) {
            return;
        }
        if !uses(socket, id, new) {
            request(ctx, socket, id, AddressRequest::Add(IpAddr::V4(new)));
        }
        if !request(ctx, socket, id, AddressRequest::SetPrimary(IpAddr::V4(new))) {
            return;
        }
        if let Some(old) = old {
            request(ctx, socket, id, AddressRequest::Delete(IpAddr::V4(old)));
        }
        // The address in use is gone: the association's own primary moves to the new side now
        // (its ASCONF can leave from the new address; the rest waits for the acknowledgement).
        if self.current_of(id).is_none_or(|c| !self.live.iter().any(|x| x.0 == c)) {
            self.move_primary_destination(ctx, socket, id, new);
        }
        self.set_current(id, new);
        socket.watch_first_data(id, new);
        socket.trace(ctx, id, &format!("HandoverRequested {{ new: {new}, old: {old:?} }}"));
        let l2 = self.l2.iter().find(|x| x.0 == new).map(|x| (x.1, x.2));
        self.records.push(HandoverRecord {
            assoc: id,
            new_addr: new,
            old_addr: old,
            requested_at: now,
            asconf_rtt: None,
            data_at: None,
            l2_time: None,
            l2_done_at: None,
        });
        if let Some((t, at)) = l2 {
            self.set_l2_time(new, t, at);
        }
    }

    /// Makes association `id`'s primary destination a peer address that the interface of
    /// local address `local` reaches (the first such, by path id); nothing if none does.
    /// Returns whether it moved it.
    fn move_primary_destination(
        &self,
        ctx: &mut Ctx<'_>,
        socket: &mut SctpSocket,
        id: AssocId,
        local: Ipv4Addr,
    ) -> bool {
        let Some(&(_, iface)) = self.live.iter().find(|x| x.0 == local) else { return false };
        let Some(a) = socket.association(id) else { return false };
        let primary = a.paths().get(a.primary()).map(|p| p.remote);
        let remotes: Vec<Ipv4Addr> = a
            .paths()
            .values()
            .filter_map(|p| match p.remote {
                IpAddr::V4(r) => Some(r),
                IpAddr::V6(_) => None,
            })
            .collect();
        let reached = |r: &Ipv4Addr| ctx.route(Some(local), *r).is_some_and(|route| route.iface == iface);
        if primary.is_some_and(|p| matches!(p, IpAddr::V4(r) if reached(&r))) {
            return false;
        }
        let Some(&to) = remotes.iter().find(|r| reached(r)) else { return false };
        if !socket.set_primary_destination(id, to) {
            return false;
        }
        socket.trace(ctx, id, &format!("PrimaryDestinationMoved {{ to: {to}, local: {local} }}"));
        // A destination that was out of reach until now is likely marked inactive after its
        // unanswered heartbeats, so new data would keep going elsewhere until its next
        // heartbeat (its RTO backed off to up to RTO.Max): probe it now (RFC 9260 §10.1 O).
        let inactive = socket
            .association(id)
            .and_then(|a| a.paths().find(IpAddr::V4(to)).and_then(|p| a.paths().get(p)))
            .is_some_and(|p| p.state != sctp::PathState::Active);
        if inactive {
            socket.request_heartbeat(ctx.now(), id, to);
        }
        true
    }

    /// An engine event of association `id`: where an association starts, the SET-PRIMARY's
    /// round trip, and then the association's own primary destination moves to the new
    /// address's side.
    /// Returns whether it changed the association (its packets are then due).
    pub fn on_event(&mut self, ctx: &mut Ctx<'_>, socket: &mut SctpSocket, id: AssocId, e: &Event) -> bool {
        match e {
            Event::Connected if self.current_of(id).is_none() => {
                let Some(a) = socket.association(id) else { return false };
                let Some(IpAddr::V4(dst)) = a.paths().get(a.primary()).map(|p| p.remote) else { return false };
                if let Some(route) = ctx.route(None, dst) {
                    self.set_current(id, route.src);
                }
                false
            }
            Event::AsconfAcked { request: AddressRequest::SetPrimary(IpAddr::V4(a)), round_trip } => {
                if let Some(r) = self.records.iter_mut().rev().find(|r| r.assoc == id && r.new_addr == *a) {
                    r.asconf_rtt.get_or_insert(*round_trip);
                }
                self.current_of(id) == Some(*a) && self.move_primary_destination(ctx, socket, id, *a)
            }
            _ => false,
        }
    }

    /// Fills in the first DATA of each handover from what the socket saw.
    pub fn update(&mut self, socket: &SctpSocket) {
        for r in self.records.iter_mut().filter(|r| r.data_at.is_none()) {
            r.data_at = socket.first_data_from(r.assoc, r.new_addr);
        }
    }

    /// Results under `name` (kind `sctp`): the number of handovers and their mean delay; per
    /// handover `k` under `<name>/handover<k>` (kind `sctp_handover`): when it was requested,
    /// its delay, the ASCONF round trip and the layer-2 time, each when known.
    pub fn report(&self, socket: &SctpSocket, name: &str, out: &mut Scalars) {
        if !self.active() {
            return;
        }
        out.push("sctp", name, "handovers", self.records.len() as f64, "handovers");
        let delays: Vec<f64> = self
            .records
            .iter()
            .filter_map(|r| {
                r.data_at
                    .or_else(|| socket.first_data_from(r.assoc, r.new_addr))
                    .map(|t| t.saturating_since(r.requested_at).as_secs_f64())
            })
            .collect();
        if !delays.is_empty() {
            out.push("sctp", name, "handover_delay_mean", delays.iter().sum::<f64>() / delays.len() as f64, "s");
        }
        let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        if let Some(m) = mean(self.records.iter().filter_map(|r| r.asconf_rtt.map(|d| d.as_secs_f64())).collect()) {
            out.push("sctp", name, "asconf_rtt_mean", m, "s");
        }
        if let Some(m) = mean(self.records.iter().filter_map(|r| r.l2_time.map(|d| d.as_secs_f64())).collect()) {
            out.push("sctp", name, "l2_handover_time_mean", m, "s");
        }
        for (k, r) in self.records.iter().enumerate() {
            let entity = format!("{name}/handover{k}");
            out.push("sctp_handover", &entity, "requested_at", r.requested_at.as_secs_f64(), "s");
            let data_at = r.data_at.or_else(|| socket.first_data_from(r.assoc, r.new_addr));
            if let Some(t) = data_at {
                out.push(
                    "sctp_handover",
                    &entity,
                    "handover_delay",
                    t.saturating_since(r.requested_at).as_secs_f64(),
                    "s",
                );
            }
            if let Some(rtt) = r.asconf_rtt {
                out.push("sctp_handover", &entity, "asconf_rtt", rtt.as_secs_f64(), "s");
            }
            if let Some(l2) = r.l2_time {
                out.push("sctp_handover", &entity, "l2_handover_time", l2.as_secs_f64(), "s");
            }
            if let Some(t) = r.l2_done_at {
                out.push("sctp_handover", &entity, "l2_associated_at", t.as_secs_f64(), "s");
            }
        }
    }
}

/// Whether association `id` uses local address `a` (listed at its start or added by an
/// acknowledged ADD-IP).
fn uses(socket: &SctpSocket, id: AssocId, a: Ipv4Addr) -> bool {
    socket.association(id).is_some_and(|x| x.local_addrs().contains(&IpAddr::V4(a)))
}

/// One request to `id`'s peer; a refusal (ASCONF not in use) is traced. Returns whether it
/// was queued.
fn request(ctx: &mut Ctx<'_>, socket: &mut SctpSocket, id: AssocId, req: AddressRequest) -> bool {
    match socket.request_address_change(ctx.now(), id, req) {
        Ok(()) => true,
        Err(e) => {
            socket.trace(ctx, id, &format!("AddressChangeRefused {{ request: {req:?}, why: \"{e}\" }}"));
            false
        }
    }
}
