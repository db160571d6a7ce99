//! Retransmission-destination policies: where a chunk marked for retransmission goes.
//!
//! The default, [`Alternate`], is single-path SCTP (RFC 9260 §6.4). The others are the five
//! policies Iyengar et al. designed for Concurrent Multipath Transfer (J. Iyengar, P. Amer,
//! R. Stewart, "Retransmission policies for concurrent multipath transfer using SCTP
//! multihoming", ICON 2004; paper 004 §2.2 restates them), in [`super::policies`]:
//! `same` (RTX-SAME), `asap` (RTX-ASAP), `cwnd` (RTX-CWND), `ssthresh` (RTX-SSTHRESH) and
//! `lossrate` (RTX-LOSSRATE). As in the University of Delaware ns-2 module
//! (`SctpCMTAgent::SelectRtxDest`, sctp/sctp-cmt.cc), a policy chooses the destination of
//! fast retransmissions and of timed-out chunks alike, and never a potentially-failed or
//! inactive one while another destination is usable (CMT-PF, Natarajan et al. 2008, rule 2).

use std::fmt;

use rand::RngCore;

use crate::association::{PathId, PathState};
use crate::plugin::Plugin;

use super::policies::{Asap, BestBy, Same};
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
///
/// The association asks once per marked chunk and transmission opportunity (and once at a
/// T3-rtx expiry, to know which destination gets the one packet §6.3.3 E3 sends at once), so
/// a policy that picks at random among equals may send two chunks to two destinations.
pub trait RetransmitPolicy: Send + fmt::Debug {
    /// The registry name.
    fn name(&self) -> &'static str;
    /// The destination for a chunk last sent to `last`, marked for `kind`. `ties` draws from
    /// the association's random stream (seeded in simulation), for choosing among equals.
    fn destination(&mut self, paths: &PathsView<'_>, last: PathId, kind: RtxKind, ties: &mut TieBreaker<'_>) -> PathId;
}

/// Picks among equally good destinations with the association's random stream (the
/// [`crate::Entropy`] its endpoint was given), so a seeded run picks the same ones every
/// time. Nothing is drawn when there is only one candidate.
pub struct TieBreaker<'a> {
    rng: &'a mut dyn RngCore,
}

impl<'a> TieBreaker<'a> {
    /// A tie-breaker drawing from `rng`.
    pub fn new(rng: &'a mut dyn RngCore) -> Self {
        TieBreaker { rng }
    }
    /// A uniformly chosen index below `n` (0 for `n` <= 1, without drawing).
    pub fn pick(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        // Lemire's multiply-shift: unbiased enough for a handful of destinations (the bias
        // is below n / 2^32) and one draw per choice.
        ((u64::from(self.rng.next_u32()) * n as u64) >> 32) as usize
    }
}

impl fmt::Debug for TieBreaker<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TieBreaker")
    }
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
    fn destination(&mut self, paths: &PathsView<'_>, last: PathId, kind: RtxKind, _: &mut TieBreaker<'_>) -> PathId {
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
    /// [`Alternate`] (`"alternate"`, the default): RFC 9260 §6.4.
    #[default]
    Alternate,
    /// RTX-SAME (`"same"`): every retransmission to the destination the chunk was first sent
    /// to, while it is usable.
    Same,
    /// RTX-ASAP (`"asap"`): to any usable destination with cwnd room now, chosen at random.
    Asap,
    /// RTX-CWND (`"cwnd"`): to the usable destination with the largest cwnd.
    Cwnd,
    /// RTX-SSTHRESH (`"ssthresh"`): to the usable destination with the largest ssthresh.
    Ssthresh,
    /// RTX-LOSSRATE (`"lossrate"`): to the usable destination whose path has the lowest
    /// loss rate, as the driver declares it ([`crate::Association::set_loss_rate_hint`]).
    /// An ideal policy: the rate is known, not measured.
    LossRate,
    /// A policy supplied by the embedding code.
    Custom(Plugin<dyn RetransmitPolicy>),
}

impl RetransmitConfig {
    /// Registry names of the built-in policies, in documentation order.
    pub const NAMES: [&'static str; 6] = ["alternate", "same", "asap", "cwnd", "ssthresh", "lossrate"];

    /// Looks a built-in policy up by name.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "alternate" => RetransmitConfig::Alternate,
            "same" => RetransmitConfig::Same,
            "asap" => RetransmitConfig::Asap,
            "cwnd" => RetransmitConfig::Cwnd,
            "ssthresh" => RetransmitConfig::Ssthresh,
            "lossrate" => RetransmitConfig::LossRate,
            _ => return None,
        })
    }
    /// The registry name (a plugin's own name for [`RetransmitConfig::Custom`]).
    pub fn name(&self) -> &'static str {
        match self {
            RetransmitConfig::Alternate => "alternate",
            RetransmitConfig::Same => "same",
            RetransmitConfig::Asap => "asap",
            RetransmitConfig::Cwnd => "cwnd",
            RetransmitConfig::Ssthresh => "ssthresh",
            RetransmitConfig::LossRate => "lossrate",
            RetransmitConfig::Custom(p) => p.name(),
        }
    }
    /// A fresh policy for one association.
    pub fn build(&self) -> Box<dyn RetransmitPolicy> {
        match self {
            RetransmitConfig::Alternate => Box::new(Alternate),
            RetransmitConfig::Same => Box::new(Same),
            RetransmitConfig::Asap => Box::new(Asap),
            RetransmitConfig::Cwnd => Box::new(BestBy::cwnd()),
            RetransmitConfig::Ssthresh => Box::new(BestBy::ssthresh()),
            RetransmitConfig::LossRate => Box::new(BestBy::loss_rate()),
            RetransmitConfig::Custom(p) => p.build(),
        }
    }
}
