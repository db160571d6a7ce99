//! Results of a real run, in the simulator's shape: scalars, time series and events under
//! the same kinds, entities and metrics (`sctp/<app>/...`, `sctp_path/<app>/path<i>/...`),
//! so the same summaries, files and analyses serve both.
//!
//! Associations are named as the simulator names them: the first under the application's
//! name, the next ones `<name>/assoc<k>`. A sink serving many associations keeps detailed
//! records of the first [`MAX_RECORDS`] and counts the rest only in its totals, so a
//! long-running server's results stay bounded.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::PathBuf;

use netsim::recorder::{EventTable, Scalars, TimeSeries};
use netsim::transport::sctp_report::{
    association_sample, association_scalars, failover_scalars, path_entity, AssocFacts, FailoverTimes,
};
use sctp::{AssocId, Association, Event, PathState};
use simtime::Instant;

use crate::driver::UdpDriver;

/// Associations recorded in detail by one application.
pub(crate) const MAX_RECORDS: usize = 64;

/// What a real run produced.
#[derive(Clone, Debug, Default)]
pub struct RealResult {
    /// Run name (`real-send`, `real-sink`).
    pub name: String,
    /// A description of the run as TOML (addresses, ports, options), for `scenario.toml`.
    pub description: String,
    /// End-of-run scalars.
    pub scalars: Scalars,
    /// Sampled time series.
    pub timeseries: TimeSeries,
    /// Events (`sctp` engine events, `fault` injections).
    pub events: EventTable,
    /// Capture files written.
    pub captures: Vec<PathBuf>,
    /// The run was ended by a stop request (Ctrl-C) rather than by completing.
    pub interrupted: bool,
}

/// What is kept about one association.
#[derive(Debug)]
pub(crate) struct AssocRecord {
    /// Name in results.
    pub entity: String,
    /// When it reached ESTABLISHED.
    pub connected_at: Option<Instant>,
    /// When it closed, and why.
    pub closed_at: Option<Instant>,
    pub close_reason: Option<String>,
    path_changes: u64,
    /// The failover bookkeeping of an association this side opened, as the simulator keeps
    /// it: times after the primary path broke (the start of a total fault on the local
    /// address the primary path leaves from).
    failover: FailoverTimes,
    /// Its final state once it has left the endpoint.
    pub finished: Option<Box<Association>>,
    /// Sink side: user bytes and messages read, first and last read.
    pub delivered_bytes: u64,
    pub delivered_messages: u64,
    pub first_delivery: Option<Instant>,
    pub last_delivery: Option<Instant>,
}

/// Results being gathered during a run.
#[derive(Debug, Default)]
pub(crate) struct Book {
    pub name: String,
    pub records: Vec<AssocRecord>,
    index: BTreeMap<AssocId, usize>,
    pub events: EventTable,
    pub series: TimeSeries,
    /// Associations met beyond the detailed ones.
    pub unrecorded: u64,
}

impl Book {
    pub(crate) fn new(name: &str) -> Self {
        Book { name: name.to_string(), ..Book::default() }
    }

    /// The record of `id`, created when met (None beyond [`MAX_RECORDS`]).
    pub(crate) fn record(&mut self, id: AssocId) -> Option<&mut AssocRecord> {
        if let Some(&i) = self.index.get(&id) {
            return self.records.get_mut(i);
        }
        if self.records.len() >= MAX_RECORDS {
            self.unrecorded += 1;
            self.index.insert(id, usize::MAX);
            return None;
        }
        let k = self.records.len();
        let entity = if k == 0 { self.name.clone() } else { format!("{}/assoc{k}", self.name) };
        self.records.push(AssocRecord {
            entity,
            connected_at: None,
            closed_at: None,
            close_reason: None,
            path_changes: 0,
            failover: FailoverTimes::default(),
            finished: None,
            delivered_bytes: 0,
            delivered_messages: 0,
            first_delivery: None,
            last_delivery: None,
        });
        self.index.insert(id, k);
        self.records.get_mut(k)
    }

    /// Forgets the index entry of an association that left, unless it is recorded.
    pub(crate) fn left(&mut self, id: AssocId, a: Association) {
        match self.index.get(&id) {
            Some(&i) if i != usize::MAX => {
                if let Some(r) = self.records.get_mut(i) {
                    r.finished = Some(Box::new(a));
                }
            }
            _ => {
                self.index.remove(&id);
            }
        }
    }

    /// An event an application's driver logs (kind, detail) under the run's name.
    pub(crate) fn log(&mut self, now: Instant, kind: &str, detail: String) {
        self.events.time_ns.push(now.as_nanos());
        self.events.kind.push(kind.to_string());
        self.events.entity.push(self.name.clone());
        self.events.detail.push(detail);
    }

    /// An engine event of association `id`: logged, and the failover bookkeeping kept.
    pub(crate) fn on_event(&mut self, now: Instant, id: AssocId, e: &Event, drv: &UdpDriver) {
        let primary = drv.endpoint().association(id).map(|a| a.primary());
        let primary_local = drv.endpoint().association(id).and_then(|a| {
            let p = a.paths().get(a.primary())?;
            drv.local_for(id, p.remote)
        });
        let faults = drv.fault_schedule();
        let Some(rec) = self.record(id) else { return };
        let after_break = rec.failover.break_at.is_some_and(|b| now >= b);
        match e {
            Event::Connected => {
                rec.connected_at.get_or_insert(now);
                rec.failover.break_at = break_time(&faults, primary_local);
            }
            Event::PathStateChanged { path, to, .. } => {
                rec.path_changes += 1;
                if Some(*path) == primary && after_break {
                    match to {
                        PathState::PotentiallyFailed => {
                            rec.failover.pf_at.get_or_insert(now);
                        }
                        PathState::Inactive => {
                            rec.failover.inactive_at.get_or_insert(now);
                        }
                        PathState::Active => {}
                    }
                }
            }
            Event::RetransmitOnAlternate { .. } if after_break => {
                rec.failover.alt_rtx_at.get_or_insert(now);
            }
            Event::DataPathChanged { to, .. } if after_break => {
                if Some(*to) == primary && rec.failover.moved_at.is_some() {
                    rec.failover.back_at.get_or_insert(now);
                } else {
                    rec.failover.moved_at.get_or_insert(now);
                }
            }
            Event::Closed { reason } => {
                rec.closed_at.get_or_insert(now);
                rec.close_reason = Some(format!("{reason:?}"));
            }
            _ => {}
        }
        let entity = rec.entity.clone();
        self.events.time_ns.push(now.as_nanos());
        self.events.kind.push("sctp".into());
        self.events.entity.push(entity);
        self.events.detail.push(format!("{e:?}"));
    }

    /// Samples every recorded live association: per path cwnd, ssthresh, flight size, RTO,
    /// SRTT and state, then the association's windows and the bytes delivered so far.
    pub(crate) fn sample(&mut self, now: Instant, drv: &UdpDriver) {
        let ids: Vec<(AssocId, usize)> =
            self.index.iter().filter(|(_, &i)| i != usize::MAX).map(|(a, i)| (*a, *i)).collect();
        for (id, i) in ids {
            let Some(a) = drv.endpoint().association(id) else { continue };
            let Some(rec) = self.records.get(i) else { continue };
            let name = rec.entity.clone();
            let delivered = rec.delivered_bytes;
            association_sample(now, a, &name, |i| Cow::Owned(path_entity(&name, i)), &mut self.series);
            if delivered > 0 {
                self.series.push(now, "sctp", &name, "delivered_bytes", "bytes", delivered as f64);
            }
        }
    }

    /// The transport scalars of every recorded association (as the simulator's socket
    /// reports them, plus each path's final SRTT and RTO); `sender`: the side that sends
    /// data, which also reports its retransmission counters and failover times.
    pub(crate) fn transport_scalars(&self, now: Instant, drv: &UdpDriver, sender: bool, out: &mut Scalars) {
        for (&id, &i) in &self.index {
            let Some(rec) = self.records.get(i) else { continue };
            let Some(a) = drv.endpoint().association(id).or(rec.finished.as_deref()) else { continue };
            report_association(now, rec, a, sender, out);
        }
    }
}

/// When the primary path of an association breaks: the start of a total fault on the local
/// address its primary path leaves from.
fn break_time(faults: &[(crate::Fault, Instant)], primary_local: Option<Ipv4Addr>) -> Option<Instant> {
    let local = primary_local?;
    faults.iter().filter(|(f, _)| f.addr == local && f.drop >= 1.0).map(|&(_, at)| at).min()
}

fn report_association(now: Instant, rec: &AssocRecord, a: &Association, sender: bool, out: &mut Scalars) {
    let name = &rec.entity;
    let facts = AssocFacts { name, sender, path_changes: rec.path_changes, closed: rec.closed_at.is_some() };
    association_scalars(now, a, &facts, out, |i, entity, out| {
        // Real runs also keep each path's final SRTT and RTO (the simulator has them as
        // time series).
        if let Some(p) = a.paths().get(i) {
            if let Some(srtt) = p.rto.srtt {
                out.push("sctp_path", entity, "srtt", srtt.as_secs_f64(), "s");
            }
            out.push("sctp_path", entity, "rto", p.rto.rto.as_secs_f64(), "s");
        }
    });
    if sender {
        failover_scalars(now, name, &rec.failover, out);
    }
}
