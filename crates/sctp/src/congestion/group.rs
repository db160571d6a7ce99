//! What a congestion controller sees of the other destinations of its association: a copy
//! of every path's congestion variables, taken once per SACK (and at a T3-rtx expiry), with
//! the aggregates coupled multipath controllers use (LIA, RFC 6356 §3 and §4; OLIA; the
//! resource-pooling variants CMT/RPv1 and CMT/RPv2).

use std::cell::OnceCell;

use simtime::Duration;

use crate::association::{Path, PathId, PathState};

/// One destination as [`GroupView`] shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathSnapshot {
    /// Which destination.
    pub id: PathId,
    /// Its reachability state.
    pub state: PathState,
    /// Confirmed (§5.4), so data may go to it.
    pub confirmed: bool,
    /// Congestion window, bytes.
    pub cwnd: u32,
    /// Slow-start threshold, bytes.
    pub ssthresh: u32,
    /// Smoothed RTT, once measured (§6.3.1).
    pub srtt: Option<Duration>,
    /// Bytes outstanding to it.
    pub flight_size: u32,
    /// Bytes acknowledged on it since its last loss (a fast retransmit or a T3-rtx expiry).
    pub acked_since_loss: u64,
    /// Bytes acknowledged on it between its last two losses (0 before the second loss).
    pub acked_between_losses: u64,
}

impl PathSnapshot {
    /// cwnd / SRTT in bytes per second, if the RTT is known and positive.
    pub fn rate(&self) -> Option<f64> {
        let srtt = self.srtt?.as_nanos();
        (srtt > 0).then(|| f64::from(self.cwnd) * 1e9 / srtt as f64)
    }

    /// True if the destination takes part in coupled congestion control: it is active and
    /// confirmed (data may go to it) and has an RTT measurement (the coupled formulas divide
    /// by its RTT).
    pub fn is_coupled(&self) -> bool {
        self.state == PathState::Active && self.confirmed && self.rate().is_some()
    }

    /// OLIA's l_r: the bytes successfully carried between the last two losses or since the
    /// last loss, whichever is larger (Khalili et al.; draft-khalili-mptcp-congestion-control
    /// §3, as the Linux MPTCP implementation reads it).
    pub fn loss_interval(&self) -> u64 {
        self.acked_since_loss.max(self.acked_between_losses)
    }
}

/// Sums over the coupled destinations ([`PathSnapshot::is_coupled`]), computed at most once
/// per view.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Coupling {
    /// How many destinations are coupled (OLIA's |R|).
    pub count: usize,
    /// Σ cwnd, bytes (RFC 6356's cwnd_total).
    pub total_cwnd: u64,
    /// Σ ssthresh, bytes (CMT/RPv1's total ssthresh).
    pub total_ssthresh: u64,
    /// Σ cwnd / SRTT, bytes per second (RFC 6356 §4's denominator, squared there; CMT/RPv2's
    /// total bandwidth).
    pub total_rate: f64,
    /// max cwnd / SRTT², bytes per second squared (RFC 6356 §4's numerator).
    pub max_cwnd_per_srtt_squared: f64,
}

/// Every destination of an association, as it stands after a SACK's acknowledgments and
/// before any controller reacts to it: taken once per SACK and handed to each controller's
/// [`super::Controller::on_ack`] and [`super::Controller::on_fast_retransmit`] (and taken
/// afresh for [`super::Controller::on_timeout`]). The plain sums run over every destination
/// whatever its state (each snapshot carries the state, for controllers that count only
/// some); the RTT-based ones skip destinations without an RTT measurement; [`Coupling`] sums
/// over the coupled destinations only. The aggregates are computed at most once per view,
/// when a controller first asks for one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupView {
    paths: Vec<PathSnapshot>,
    own: Option<usize>,
    aggregates: OnceCell<Aggregates>,
    coupling: OnceCell<Coupling>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Aggregates {
    total_cwnd: u64,
    total_rate: f64,
    max_cwnd_per_srtt_squared: f64,
}

impl GroupView {
    /// Every destination, in id order.
    pub fn paths(&self) -> &[PathSnapshot] {
        &self.paths
    }
    /// Destination `id`.
    pub fn path(&self, id: PathId) -> Option<&PathSnapshot> {
        self.paths.iter().find(|p| p.id == id)
    }
    /// The destination whose controller is being called (`None` in an empty view).
    pub fn own(&self) -> Option<&PathSnapshot> {
        self.paths.get(self.own?)
    }
    /// Σ cwnd over the destinations, bytes.
    pub fn total_cwnd(&self) -> u64 {
        self.aggregates().total_cwnd
    }
    /// Σ cwnd / SRTT, bytes per second (the denominator of RFC 6356's alpha, squared there).
    pub fn total_rate(&self) -> f64 {
        self.aggregates().total_rate
    }
    /// max cwnd / SRTT², bytes per second squared (the numerator of RFC 6356's alpha).
    pub fn max_cwnd_per_srtt_squared(&self) -> f64 {
        self.aggregates().max_cwnd_per_srtt_squared
    }
    /// Sums over the coupled destinations.
    pub fn coupling(&self) -> &Coupling {
        self.coupling.get_or_init(|| {
            let mut c = Coupling::default();
            for s in self.paths.iter().filter(|s| s.is_coupled()) {
                c.count += 1;
                c.total_cwnd += u64::from(s.cwnd);
                c.total_ssthresh += u64::from(s.ssthresh);
                if let (Some(rate), Some(per_srtt2)) = (s.rate(), per_srtt_squared(s)) {
                    c.total_rate += rate;
                    c.max_cwnd_per_srtt_squared = c.max_cwnd_per_srtt_squared.max(per_srtt2);
                }
            }
            c
        })
    }

    fn aggregates(&self) -> &Aggregates {
        self.aggregates.get_or_init(|| {
            let mut a = Aggregates::default();
            for s in &self.paths {
                a.total_cwnd += u64::from(s.cwnd);
                if let (Some(rate), Some(per_srtt2)) = (s.rate(), per_srtt_squared(s)) {
                    a.total_rate += rate;
                    a.max_cwnd_per_srtt_squared = a.max_cwnd_per_srtt_squared.max(per_srtt2);
                }
            }
            a
        })
    }

    /// A view of `paths` as given (for tests of controllers and for embedding code), shown
    /// to the controller of `own`.
    pub fn from_snapshots(paths: Vec<PathSnapshot>, own: PathId) -> Self {
        let own = paths.iter().position(|p| p.id == own);
        GroupView { paths, own, aggregates: OnceCell::new(), coupling: OnceCell::new() }
    }

    /// Takes the snapshot of `paths`, reusing the storage.
    pub(crate) fn refill<'a>(&mut self, paths: impl Iterator<Item = (PathId, &'a Path)>) {
        self.paths.clear();
        self.own = None;
        self.aggregates = OnceCell::new();
        self.coupling = OnceCell::new();
        self.paths.extend(paths.map(|(id, p)| PathSnapshot {
            id,
            state: p.state,
            confirmed: p.confirmed,
            cwnd: p.cc.cwnd,
            ssthresh: p.cc.ssthresh,
            srtt: p.rto.srtt,
            flight_size: p.flight_size,
            acked_since_loss: p.acked_since_loss,
            acked_between_losses: p.acked_between_losses,
        }));
    }

    /// Shows the view to the controller of `id` next ([`GroupView::own`]).
    pub(crate) fn show_to(&mut self, id: PathId) {
        // Snapshots are in id order: a binary search finds the destination.
        self.own = self.paths.binary_search_by_key(&id, |p| p.id).ok();
    }
}

/// cwnd / SRTT², bytes per second squared, if the RTT is known and positive.
fn per_srtt_squared(s: &PathSnapshot) -> Option<f64> {
    let srtt = s.srtt?.as_nanos();
    (srtt > 0).then(|| s.rate().unwrap_or(0.0) * 1e9 / srtt as f64)
}
