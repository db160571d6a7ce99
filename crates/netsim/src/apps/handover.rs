//! Handover of an SCTP application's associations driven by its node's interface events
//! (RFC 5061 dynamic address reconfiguration; paper 001's mobile client):
//!
//! * `none`: nothing (plain multihoming: failover only), the default.
//! * `make-before-break`: when an interface gets an address, ADD-IP and SET-PRIMARY it while
//!   the old one still works; when an address goes, DELETE-IP it.
//! * `break-before-make`: a new address waits until an old one goes; then ADD-IP and
//!   SET-PRIMARY the new one and DELETE-IP the old.
//!
//! Per handover it records, as DESIGN.md defines the handover delay, the time from the
//! set-primary request to the first DATA sent on the new primary: here, the first packet of
//! the association carrying DATA that leaves from the new address (after the peer
//! acknowledged the SET-PRIMARY, the association's packets name that address as source).
//! The ASCONF round trip of the SET-PRIMARY goes alongside, and the layer-2 handover time
//! when a link layer reports one ([`Handover::set_l2_time`]).

use std::net::{IpAddr, Ipv4Addr};

use sctp::{AddressRequest, AssocId, Event};

use crate::agent::Ctx;
use crate::event::IfaceEvent;
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
    /// Layer-2 handover time (scan and association), filled by a link layer that knows it.
    pub l2_time: Option<Duration>,
}

impl HandoverRecord {
    /// The handover delay (DESIGN.md): set-primary request to the first DATA on the new
    /// primary.
    pub fn delay(&self) -> Option<Duration> {
        self.data_at.map(|t| t.saturating_since(self.requested_at))
    }
}

/// The policy's state in one application.
#[derive(Debug, Default)]
pub struct Handover {
    policy: HandoverPolicy,
    /// Break-before-make: addresses gained and not yet used.
    standby: Vec<Ipv4Addr>,
    /// Break-before-make: addresses lost with no replacement yet.
    lost: Vec<Ipv4Addr>,
    records: Vec<HandoverRecord>,
}

impl Handover {
    /// State for `policy`.
    pub fn new(policy: HandoverPolicy) -> Self {
        Handover { policy, ..Default::default() }
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
    /// reports scan and association times).
    pub fn set_l2_time(&mut self, addr: Ipv4Addr, l2: Duration) {
        if let Some(r) = self.records.iter_mut().rev().find(|r| r.new_addr == addr) {
            r.l2_time = Some(l2);
        }
    }

    /// An interface event of the node: the requests the policy makes.
    pub fn on_iface_event(&mut self, ctx: &mut Ctx<'_>, socket: &mut SctpSocket, event: IfaceEvent) {
        match (self.policy, event) {
            (HandoverPolicy::None, _) | (_, IfaceEvent::Up | IfaceEvent::Down) => {}
            (HandoverPolicy::MakeBeforeBreak, IfaceEvent::AddressAdded(a)) => self.hand_over(ctx, socket, a, None),
            (HandoverPolicy::MakeBeforeBreak, IfaceEvent::AddressRemoved(old)) => {
                for id in socket.associations().to_vec() {
                    request(ctx, socket, id, AddressRequest::Delete(IpAddr::V4(old)));
                }
                if let Some(r) = self.records.iter_mut().rev().find(|r| r.old_addr.is_none() && r.new_addr != old) {
                    r.old_addr = Some(old);
                }
            }
            (HandoverPolicy::BreakBeforeMake, IfaceEvent::AddressAdded(a)) => match self.lost.pop() {
                Some(old) => self.hand_over(ctx, socket, a, Some(old)),
                None => self.standby.push(a),
            },
            (HandoverPolicy::BreakBeforeMake, IfaceEvent::AddressRemoved(old)) => {
                if let Some(i) = self.standby.iter().position(|&s| s == old) {
                    self.standby.remove(i);
                } else if self.standby.is_empty() {
                    self.lost.push(old);
                } else {
                    let a = self.standby.remove(0);
                    self.hand_over(ctx, socket, a, Some(old));
                }
            }
        }
    }

    /// ADD-IP and SET-PRIMARY `new` on every association (and DELETE-IP `old` if given).
    fn hand_over(&mut self, ctx: &mut Ctx<'_>, socket: &mut SctpSocket, new: Ipv4Addr, old: Option<Ipv4Addr>) {
        let now = ctx.now();
        for id in socket.associations().to_vec() {
            if !socket.association(id).is_some_and(|a| a.asconf_enabled()) {
                continue;
            }
            request(ctx, socket, id, AddressRequest::Add(IpAddr::V4(new)));
            if !request(ctx, socket, id, AddressRequest::SetPrimary(IpAddr::V4(new))) {
                continue;
            }
            if let Some(old) = old {
                request(ctx, socket, id, AddressRequest::Delete(IpAddr::V4(old)));
            }
            socket.watch_first_data(id, new);
            socket.trace(ctx, id, &format!("HandoverRequested {{ new: {new}, old: {old:?} }}"));
            self.records.push(HandoverRecord {
                assoc: id,
                new_addr: new,
                old_addr: old,
                requested_at: now,
                asconf_rtt: None,
                data_at: None,
                l2_time: None,
            });
        }
    }

    /// An engine event of association `id`: the SET-PRIMARY's round trip.
    pub fn on_event(&mut self, id: AssocId, e: &Event) {
        if let Event::AsconfAcked { request: AddressRequest::SetPrimary(IpAddr::V4(a)), round_trip } = e {
            if let Some(r) = self.records.iter_mut().rev().find(|r| r.assoc == id && r.new_addr == *a) {
                r.asconf_rtt.get_or_insert(*round_trip);
            }
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
        }
    }
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
