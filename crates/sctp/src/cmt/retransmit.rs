//! Retransmission-destination policies: where a chunk marked for retransmission goes.

use std::fmt;

use crate::association::{PathId, PathState};
use crate::plugin::Plugin;

use super::PathsView;

/// Why a chunk is marked for retransmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RtxKind {
    /// Three miss indications (RFC 9260 §7.2.4).
    Fast,
    /// T3-rtx expired (§6.3.3).
    Timeout,
}

/// Chooses the destination of each retransmitted chunk (§6.4: "retransmit to an active
/// destination transport address that is distinct from the last destination address to
/// which the DATA chunk was sent", when the sender is multihomed).
///
/// While a usable destination (active and confirmed) exists, a policy must return a usable
/// one, as the default does: the association stops looking for retransmissions to send once
/// every usable destination's cwnd is full.
pub trait RetransmitPolicy: Send + fmt::Debug {
    /// The registry name.
    fn name(&self) -> &'static str;
    /// The destination for a chunk last sent to `last`, marked for `kind`.
    fn destination(&mut self, paths: &PathsView<'_>, last: PathId, kind: RtxKind) -> PathId;
}

/// RFC 9260 §6.4: a chunk that timed out goes to the next usable destination after the one
/// it was sent to (the same one if no other is usable); a fast retransmission goes to the
/// destination it was sent to while that is active, else to an alternate.
#[derive(Clone, Copy, Debug, Default)]
pub struct Alternate;

impl RetransmitPolicy for Alternate {
    fn name(&self) -> &'static str {
        "alternate"
    }
    fn destination(&mut self, paths: &PathsView<'_>, last: PathId, kind: RtxKind) -> PathId {
        match kind {
            RtxKind::Timeout => paths.alternate(last),
            RtxKind::Fast if paths.is_in(last, PathState::Active) => last,
            RtxKind::Fast => paths.alternate(last),
        }
    }
}

/// Which [`RetransmitPolicy`] an association uses.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum RetransmitConfig {
    /// [`Alternate`] (`"alternate"`, the default).
    #[default]
    Alternate,
    /// A policy supplied by the embedding code.
    Custom(Plugin<dyn RetransmitPolicy>),
}

impl RetransmitConfig {
    /// Registry names of the built-in policies, in documentation order.
    pub const NAMES: [&'static str; 1] = ["alternate"];

    /// Looks a built-in policy up by name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "alternate" => Some(RetransmitConfig::Alternate),
            _ => None,
        }
    }
    /// The registry name (a plugin's own name for [`RetransmitConfig::Custom`]).
    pub fn name(&self) -> &'static str {
        match self {
            RetransmitConfig::Alternate => "alternate",
            RetransmitConfig::Custom(p) => p.name(),
        }
    }
    /// A fresh policy for one association.
    pub fn build(&self) -> Box<dyn RetransmitPolicy> {
        match self {
            RetransmitConfig::Alternate => Box::new(Alternate),
            RetransmitConfig::Custom(p) => p.build(),
        }
    }
}
