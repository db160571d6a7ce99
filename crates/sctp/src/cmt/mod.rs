//! The multipath seams of the sending half: which destinations new data goes to (a
//! [`PathScheduler`]) and where a chunk marked for retransmission goes (a
//! [`RetransmitPolicy`]). Each is a trait chosen through a registry in [`crate::Config`]
//! (`scheduler`, `retransmit`); the defaults are single-path SCTP as RFC 9260 §6.4 describes
//! it: new data to the primary (or, after failover, the first usable alternate), timed-out
//! chunks to an alternate destination, fast retransmissions to the destination they were
//! sent to. Concurrent Multipath Transfer (CMT: a scheduler filling every destination, the
//! RTX-* policies of [`RetransmitConfig`]) plugs in here; its loss-detection and window algorithms (SFR, CUC, DAC,
//! switched by [`CmtConfig`]) live in the association's outbound and inbound halves, since
//! they change how SACKs are made and read.
//!
//! Both see the association's destinations through a [`PathsView`]. How a destination
//! leaves the potentially-failed state, RFC 7829's way or CMT-PF's, is a [`PfVariant`]
//! (see the `pf` module's documentation for how the two relate).

mod config;
mod pf;
mod policies;
mod retransmit;
mod scheduler;

pub use config::CmtConfig;
pub(crate) use config::{dac_flags, dac_packets};
pub use pf::PfVariant;
pub use policies::{Asap, BestBy, Same};
pub use retransmit::{Alternate, RetransmitConfig, RetransmitPolicy, RtxKind, TieBreaker};
pub use scheduler::{LargestCwnd, PathScheduler, Primary, RoundRobin, SchedulerConfig};

use crate::association::{Path, PathId, PathState, Paths};

/// A read-only view of an association's destinations and its primary, for the multipath
/// algorithms.
#[derive(Clone, Copy, Debug)]
pub struct PathsView<'a> {
    paths: &'a Paths,
    primary: PathId,
    data_path: PathId,
}

impl<'a> PathsView<'a> {
    /// A view of `paths` with the association's primary and data path.
    pub(crate) fn new(paths: &'a Paths, primary: PathId, data_path: PathId) -> Self {
        PathsView { paths, primary, data_path }
    }
    /// Number of destinations.
    pub fn len(&self) -> usize {
        self.paths.len()
    }
    /// True if there is no destination.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }
    /// Destination `id`, if it exists.
    pub fn get(&self, id: PathId) -> Option<&'a Path> {
        self.paths.get(id)
    }
    /// Every destination with its id, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (PathId, &'a Path)> + 'a {
        self.paths.iter()
    }
    /// The primary destination (§6.4).
    pub fn primary(&self) -> PathId {
        self.primary
    }
    /// The destination the latest new DATA chunk went to.
    pub fn data_path(&self) -> PathId {
        self.data_path
    }
    /// The other destinations in the order §6.4 alternates are tried: from the one after
    /// `id`, wrapping around; `id` itself is not included.
    pub fn after(&self, id: PathId) -> impl Iterator<Item = PathId> + 'a {
        self.paths.after(id)
    }
    /// True if destination `id` exists and is usable: active and confirmed (§5.4, §6.4).
    pub fn is_usable(&self, id: PathId) -> bool {
        self.get(id).is_some_and(Path::is_usable)
    }
    /// The first usable destination after `id` (§6.4 alternate), or `id` itself if none is.
    pub fn alternate(&self, id: PathId) -> PathId {
        self.after(id).find(|&q| self.is_usable(q)).unwrap_or(id)
    }
    /// True if destination `id` exists and is in `state`.
    pub fn is_in(&self, id: PathId, state: PathState) -> bool {
        self.get(id).is_some_and(|p| p.state == state)
    }
}
