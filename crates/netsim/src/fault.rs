//! Scheduled faults: links and interfaces going down and coming back at given times.

use crate::network::{IfaceId, LinkId, Network};
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
    pub fn target_name(&self, net: &Network) -> String {
        match *self {
            FaultAction::LinkDown(l) | FaultAction::LinkUp(l) => net.names.links[l.index()].clone(),
            FaultAction::IfaceDown(i) | FaultAction::IfaceUp(i) => net.names.ifaces[i.index()].clone(),
        }
    }

    /// Apply it.
    pub fn apply(&self, net: &mut Network, now: Instant) {
        match *self {
            FaultAction::LinkDown(l) => net.link_down(l, now),
            FaultAction::LinkUp(l) => net.link_up(l),
            FaultAction::IfaceDown(i) => net.iface_down(i, now),
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
