//! Scheduled faults and changes: links and interfaces going down and coming back, interface
//! addresses added and removed (a host moving to another subnet), at given times.

use std::net::Ipv4Addr;

use crate::event::{Event, IfaceEvent, NetObserver};
use crate::ids::{IfaceId, LinkId};
use crate::kernel::Scheduler;
use crate::network::{IfaceAddr, Network};
use crate::recorder::Names;
use crate::time::Instant;

/// What a fault does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultAction {
    /// The link fails: queued and in-flight packets in both directions are lost.
    LinkDown(LinkId),
    /// The link is repaired.
    LinkUp(LinkId),
    /// The interface is disabled: its queue is lost, it neither sends nor receives. An AP's
    /// WLAN interface going down first deauthenticates its stations
    /// ([`crate::wlan::sme`]), which then look for another AP.
    IfaceDown(IfaceId),
    /// The interface is enabled again (an AP beacons and admits stations again).
    IfaceUp(IfaceId),
    /// The interface gets an address (routes are recomputed).
    AddressAdd(IfaceId, IfaceAddr),
    /// The interface loses an address (routes are recomputed).
    AddressRemove(IfaceId, Ipv4Addr),
}

impl FaultAction {
    /// Name used in scenarios and events.
    pub fn name(&self) -> &'static str {
        match self {
            FaultAction::LinkDown(_) => "link-down",
            FaultAction::LinkUp(_) => "link-up",
            FaultAction::IfaceDown(_) => "iface-down",
            FaultAction::IfaceUp(_) => "iface-up",
            FaultAction::AddressAdd(..) => "address-add",
            FaultAction::AddressRemove(..) => "address-remove",
        }
    }

    /// Name of the affected entity.
    pub fn target_name<'n>(&self, names: &'n Names) -> &'n str {
        match *self {
            FaultAction::LinkDown(l) | FaultAction::LinkUp(l) => &names.links[l.index()],
            FaultAction::IfaceDown(i)
            | FaultAction::IfaceUp(i)
            | FaultAction::AddressAdd(i, _)
            | FaultAction::AddressRemove(i, _) => &names.ifaces[i.index()],
        }
    }

    /// The link or interface it takes down, if it takes one down.
    pub fn breaks(&self) -> Option<Result<LinkId, IfaceId>> {
        match *self {
            FaultAction::LinkDown(l) => Some(Ok(l)),
            FaultAction::IfaceDown(i) => Some(Err(i)),
            _ => None,
        }
    }

    /// Apply it; packets it discards are reported to `obs`. Returns the interface event the
    /// agents on the interface's node are told, if any.
    pub fn apply<O: NetObserver + ?Sized>(
        &self,
        net: &mut Network,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) -> Option<(IfaceId, IfaceEvent)> {
        match *self {
            FaultAction::LinkDown(l) => net.link_down(l, now, sched, obs),
            FaultAction::LinkUp(l) => net.link_up(l),
            FaultAction::IfaceDown(i) => {
                net.iface_down(i, now, sched, obs);
                return Some((i, IfaceEvent::Down));
            }
            FaultAction::IfaceUp(i) => {
                net.iface_up(i, now, sched);
                return Some((i, IfaceEvent::Up));
            }
            FaultAction::AddressAdd(i, a) => {
                return net.add_address(i, a).then_some((i, IfaceEvent::AddressAdded(a.addr)));
            }
            FaultAction::AddressRemove(i, a) => {
                return net.remove_address(i, a).then_some((i, IfaceEvent::AddressRemoved(a)));
            }
        }
        None
    }
}

/// A fault at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// When it happens.
    pub at: Instant,
    /// What happens.
    pub action: FaultAction,
}
