//! What a congestion controller sees of the other destinations of its association: a copy
//! of every path's congestion variables, taken once per SACK, with the aggregates coupled
//! multipath controllers use (LIA, RFC 6356 §3; OLIA; resource pooling).

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
    /// Congestion window, bytes.
    pub cwnd: u32,
    /// Slow-start threshold, bytes.
    pub ssthresh: u32,
    /// Smoothed RTT, once measured (§6.3.1).
    pub srtt: Option<Duration>,
    /// Bytes outstanding to it.
    pub flight_size: u32,
}

impl PathSnapshot {
    /// cwnd / SRTT in bytes per second, if the RTT is known and positive.
    pub fn rate(&self) -> Option<f64> {
        let srtt = self.srtt?.as_nanos();
        (srtt > 0).then(|| f64::from(self.cwnd) * 1e9 / srtt as f64)
    }
}

/// Every destination of an association, as it stands after a SACK's acknowledgments and
/// before any controller reacts to it: taken once per SACK and handed to each controller's
/// [`super::Controller::on_ack`]. Sums run over every destination whatever its state (each
/// snapshot carries the state, for controllers that count only some); the RTT-based
/// aggregates skip destinations without an RTT measurement. The aggregates are computed at
/// most once per SACK, when a controller first asks for one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupView {
    paths: Vec<PathSnapshot>,
    aggregates: OnceCell<Aggregates>,
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

    fn aggregates(&self) -> &Aggregates {
        self.aggregates.get_or_init(|| {
            let mut a = Aggregates::default();
            for s in &self.paths {
                a.total_cwnd += u64::from(s.cwnd);
                if let (Some(rate), Some(srtt)) = (s.rate(), s.srtt) {
                    a.total_rate += rate;
                    let per_srtt2 = rate * 1e9 / srtt.as_nanos() as f64;
                    a.max_cwnd_per_srtt_squared = a.max_cwnd_per_srtt_squared.max(per_srtt2);
                }
            }
            a
        })
    }

    /// Takes the snapshot of `paths`, reusing the storage.
    pub(crate) fn refill<'a>(&mut self, paths: impl Iterator<Item = (PathId, &'a Path)>) {
        self.paths.clear();
        self.aggregates = OnceCell::new();
        self.paths.extend(paths.map(|(id, p)| PathSnapshot {
            id,
            state: p.state,
            cwnd: p.cc.cwnd,
            ssthresh: p.cc.ssthresh,
            srtt: p.rto.srtt,
            flight_size: p.flight_size,
        }));
    }
}
