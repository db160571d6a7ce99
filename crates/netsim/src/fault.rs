//! Scheduled faults: links and interfaces going down and coming back at given times.

use crate::event::NetObserver;
use crate::ids::{IfaceId, LinkId};
use crate::network::Network;
use crate::recorder::Names;
use crate::time::Instant;

/// What a fault does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultAction {
    /// The link fails: queued and in-flight packets in both directions are lost.
    LinkDown(LinkId),
    /// The link is repaired.
    LinkUp(LinkId),
    /// The interface is disabled: its queue is lost, it neither sends nor receives.
    IfaceDown(IfaceId),
    /// The interface is enabled again.
    IfaceUp(IfaceId),
}

impl FaultAction {
    /// Name used in scenarios and events.
    pub fn name(&self) -> &'static str {
        match self {
            FaultAction::LinkDown(_) => "link-down",
            FaultAction::LinkUp(_) => "link-up",
            FaultAction::IfaceDown(_) => "iface-down",
            FaultAction::IfaceUp(_) => "iface-up",
        }
    }

    /// Name of the affected entity.
    pub fn target_name<'n>(&self, names: &'n Names) -> &'n str {
        match *self {
            FaultAction::LinkDown(l) | FaultAction::LinkUp(l) => &names.links[l.index()],
            FaultAction::IfaceDown(i) | FaultAction::IfaceUp(i) => &names.ifaces[i.index()],
        }
    }

    /// The link or interface it takes down, if it takes one down.
    pub fn breaks(&self) -> Option<Result<LinkId, IfaceId>> {
        match *self {
            FaultAction::LinkDown(l) => Some(Ok(l)),
            FaultAction::IfaceDown(i) => Some(Err(i)),
            FaultAction::LinkUp(_) | FaultAction::IfaceUp(_) => None,
        }
    }

    /// Apply it; packets it discards are reported to `obs`.
    pub fn apply<O: NetObserver + ?Sized>(&self, net: &mut Network, now: Instant, obs: &mut O) {
        match *self {
            FaultAction::LinkDown(l) => net.link_down(l, now, obs),
            FaultAction::LinkUp(l) => net.link_up(l),
            FaultAction::IfaceDown(i) => net.iface_down(i, now, obs),
            FaultAction::IfaceUp(i) => net.iface_up(i),
        }
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
