//! Flow Random Early Drop (Lin & Morris, "Dynamics of Random Early Detection", SIGCOMM 1997, and
//! its pseudocode there): RED with accounting for each flow that has packets in the buffer.
//!
//! Per active flow `i` FRED keeps `qlen_i`, the packets it has queued, and `strike_i`, how often
//! it went over its allowance; globally the number of active flows `Nactive` and the average
//! per-flow queue `avgcq = max(1, avg / Nactive)`. For each arrival of flow `i`:
//!
//! ```text
//! maxq := min_th, or 2 when avg >= max_th
//! if qlen_i >= maxq  or  (avg >= max_th and qlen_i > 2 avgcq)  or  (qlen_i >= avgcq and strike_i > 1):
//!     strike_i += 1; drop                                   (non-adaptive flow: `fred_flow`)
//! if min_th <= avg < max_th:                                 (random drop mode)
//!     count += 1
//!     if qlen_i >= max(min_q, avgcq):                        (only robust flows lose packets)
//!         drop with p_a = p_b / (1 - count p_b), p_b = max_p (avg - min_th) / (max_th - min_th)
//! else if avg < min_th: count := -1                          (no drop)
//! else: count := 0; drop                                     (drop-tail mode: `fred_forced`)
//! ```
//!
//! The average is updated at every departure and at every accepted arrival (`(1 - w_q) avg +
//! w_q q`); an arrival to an empty queue first decays it for the time the queue was empty, as
//! RED does. A flow's state is deleted when its last packet leaves (so its strikes are
//! forgotten). Flows are the packets' [`crate::wire::PacketMeta::flow`]; a packet of no
//! registered flow (a TCP sink's ACKs, say) is classified by its source, destination and
//! protocol. FRED counts packets; the hard limit may still be in bytes.
//!
//! With `ecn`, a random (early) drop of an ECN-capable packet becomes a CE mark; the per-flow
//! and drop-tail-mode drops stay drops (RFC 3168 §7).
//!
//! Defaults: `min_th` 10, `max_th` 30, `w_q` 0.002 and `mean_pktsize` 500 are paper 003's
//! (Table 2); `max_p` = 0.02 is read from the same table's "increase drop probability" row (it
//! is also Floyd & Jacobson's and Lin & Morris's `max_p` of 1/50); `min_q` = 2 is Lin & Morris's.

use std::net::Ipv4Addr;

use rustc_hash::FxHashMap;

use super::droptail::OVERFLOW;
use super::fifo::{happens, mark_or_drop, Fifo, Tally};
use super::red::tally_stats;
use super::{in_range, positive, Dequeued, Dropped, Enqueued, ParamError, QueueContext, QueueDisc, QueueLimit};
use super::{QueueReason, QueueStat};
use crate::rng::SimRng;
use crate::time::Instant;
use crate::wire::{Packet, NO_FLOW};

/// A random drop while the average is between the thresholds.
pub const EARLY: QueueReason = QueueReason("fred_early");
/// A drop because the average is at or above `max_th` (drop-tail mode).
pub const FORCED: QueueReason = QueueReason("fred_forced");
/// A drop because the packet's flow is over its allowance (`maxq`, `2 avgcq` or struck).
pub const FLOW: QueueReason = QueueReason("fred_flow");
/// An ECN-capable packet marked instead of a random drop.
pub const MARK: QueueReason = QueueReason("fred_mark");

/// FRED's parameters (thresholds and queues in packets).
#[derive(Clone, Debug, PartialEq)]
pub struct FredConfig {
    /// Hard limit of the buffer. Default 100 packets.
    pub limit: QueueLimit,
    /// Minimum threshold, packets. Default 10 (paper 003, Table 2).
    pub min_th: f64,
    /// Maximum threshold, packets. Default 30 (paper 003, Table 2).
    pub max_th: f64,
    /// Queue weight of the average. Default 0.002 (paper 003, Table 2).
    pub w_q: f64,
    /// Drop probability at `max_th`. Default 0.02.
    pub max_p: f64,
    /// Packets a flow may always queue without random drops. Default 2 (Lin & Morris).
    pub min_q: f64,
    /// Mean packet size in bytes, for the decay of the average over idle time. Default 500
    /// (paper 003, Table 2).
    pub mean_pktsize: u32,
    /// Mark ECN-capable packets instead of random drops. Default false.
    pub ecn: bool,
}

impl Default for FredConfig {
    fn default() -> Self {
        FredConfig {
            limit: QueueLimit::Packets(100),
            min_th: 10.0,
            max_th: 30.0,
            w_q: 0.002,
            max_p: 0.02,
            min_q: 2.0,
            mean_pktsize: 500,
            ecn: false,
        }
    }
}

impl FredConfig {
    /// Check the parameters.
    pub fn check(&self) -> Result<(), ParamError> {
        positive("min_th", self.min_th)?;
        if self.max_th.is_nan() || self.max_th <= self.min_th {
            return Err(ParamError::new(
                "max_th",
                format!("max_th ({}) must be more than min_th ({}) (packets)", self.max_th, self.min_th),
            ));
        }
        in_range("w_q", self.w_q, 0.0..=1.0)?;
        positive("w_q", self.w_q)?;
        in_range("max_p", self.max_p, 0.0..=1.0)?;
        in_range("min_q", self.min_q, 0.0..=f64::MAX)?;
        if self.mean_pktsize == 0 {
            return Err(ParamError::new("mean_pktsize", "0 must be more than zero"));
        }
        Ok(())
    }
}

/// What FRED keeps about a flow with packets in the buffer.
#[derive(Clone, Copy, Debug, Default)]
struct FlowState {
    qlen: u32,
    strike: u32,
}

/// A FRED queue.
pub struct Fred {
    cfg: FredConfig,
    fifo: Fifo,
    rng: SimRng,
    /// Mean-size packets the link sends per second (idle-time decay).
    ptc: f64,
    avg: f64,
    /// Packets since the last random drop; -1 below `min_th` (Lin & Morris).
    count: i64,
    /// Since when the queue has been empty, if it is.
    empty_since: Option<Instant>,
    /// Active flows (with packets queued), by flow key.
    flows: FxHashMap<u64, FlowState>,
    tally: Tally,
    flow_drops: u64,
    avg_sum: f64,
    max_active: usize,
}

impl Fred {
    /// Name in the registry.
    pub const KIND: &'static str = "fred";

    /// An empty FRED queue. The configuration must pass [`FredConfig::check`].
    pub fn new(cfg: &FredConfig, ctx: QueueContext) -> Self {
        Fred {
            ptc: ctx.rate_bps as f64 / (8.0 * f64::from(cfg.mean_pktsize.max(1))),
            cfg: cfg.clone(),
            fifo: Fifo::default(),
            rng: ctx.rng,
            avg: 0.0,
            count: -1,
            empty_since: Some(Instant::ZERO),
            flows: FxHashMap::default(),
            tally: Tally::default(),
            flow_drops: 0,
            avg_sum: 0.0,
            max_active: 0,
        }
    }

    /// The average queue, packets.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Flows with packets queued.
    pub fn active_flows(&self) -> usize {
        self.flows.len()
    }

    /// The flow a packet is accounted to: its registered flow, or else (source, destination,
    /// protocol) from its header, in a separate part of the key space.
    fn flow_key(pkt: &Packet) -> u64 {
        if pkt.meta.flow != NO_FLOW {
            return u64::from(pkt.meta.flow);
        }
        let (src, dst, proto) = match pkt.ip() {
            Some(ip) => (ip.src(), ip.dst(), ip.protocol()),
            None => (Ipv4Addr::UNSPECIFIED, Ipv4Addr::UNSPECIFIED, 0),
        };
        let mut bytes = [0u8; 9];
        bytes[..4].copy_from_slice(&src.octets());
        bytes[4..8].copy_from_slice(&dst.octets());
        bytes[8] = proto;
        (1 << 63) | crate::rng::fnv1a64(&bytes) >> 1
    }

    /// The EWMA step with the current queue.
    #[inline]
    fn average(&mut self) {
        self.avg = (1.0 - self.cfg.w_q) * self.avg + self.cfg.w_q * self.fifo.len() as f64;
    }

    fn avgcq(&self) -> f64 {
        let n = self.flows.len();
        let per_flow = if n > 0 { self.avg / n as f64 } else { self.avg };
        per_flow.max(1.0)
    }

    /// `p_a` for the current average and count (Floyd & Jacobson 1993).
    fn drop_probability(&self) -> f64 {
        let (min_th, max_th) = (self.cfg.min_th, self.cfg.max_th);
        let p_b = self.cfg.max_p * (self.avg - min_th) / (max_th - min_th);
        let c = self.count as f64 * p_b;
        if c >= 1.0 {
            1.0
        } else {
            (p_b / (1.0 - c)).min(1.0)
        }
    }
}

/// What FRED decided for an arrival.
enum Verdict {
    Admit,
    Flow,
    Early,
    Forced,
}

impl QueueDisc for Fred {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn enqueue(&mut self, mut pkt: Packet, now: Instant, _dropped: &mut Dropped) -> Enqueued {
        self.tally.arrivals += 1;
        if let Some(since) = self.empty_since {
            // The queue was empty: decay the average for the idle time (as RED), once; if this
            // arrival is dropped, the next one decays it from now.
            let m = (self.ptc * now.saturating_since(since).as_secs_f64()).floor();
            self.avg *= (1.0 - self.cfg.w_q).powf(m);
            self.empty_since = Some(now);
        }
        self.avg_sum += self.avg;
        let key = Self::flow_key(&pkt);
        let flow = self.flows.get(&key).copied().unwrap_or_default();
        let (min_th, max_th) = (self.cfg.min_th, self.cfg.max_th);
        let maxq = if self.avg >= max_th { 2.0 } else { min_th };
        let avgcq = self.avgcq();
        let qlen = f64::from(flow.qlen);
        let verdict =
            if qlen >= maxq || (self.avg >= max_th && qlen > 2.0 * avgcq) || (qlen >= avgcq && flow.strike > 1) {
                // Identify and manage non-adaptive flows.
                if flow.qlen > 0 {
                    if let Some(f) = self.flows.get_mut(&key) {
                        f.strike += 1;
                    }
                }
                Verdict::Flow
            } else if self.avg >= min_th && self.avg < max_th {
                self.count += 1;
                let p_a = self.drop_probability();
                if qlen >= self.cfg.min_q.max(avgcq) && happens(&mut self.rng, p_a) {
                    self.count = 0;
                    Verdict::Early
                } else {
                    Verdict::Admit
                }
            } else if self.avg < min_th {
                self.count = -1;
                Verdict::Admit
            } else {
                self.count = 0;
                Verdict::Forced
            };
        if matches!(verdict, Verdict::Admit | Verdict::Early) && self.fifo.full_for(self.cfg.limit, &pkt) {
            self.tally.overflow_drops += 1;
            return Enqueued::Dropped(pkt, OVERFLOW);
        }
        let marked = match verdict {
            Verdict::Admit => None,
            Verdict::Early => match mark_or_drop(&mut pkt, self.cfg.ecn, MARK) {
                Some(mark) => {
                    self.tally.marks += 1;
                    Some(mark)
                }
                None => {
                    self.tally.early_drops += 1;
                    return Enqueued::Dropped(pkt, EARLY);
                }
            },
            Verdict::Flow => {
                self.flow_drops += 1;
                self.tally.forced_drops += 1;
                return Enqueued::Dropped(pkt, FLOW);
            }
            Verdict::Forced => {
                self.tally.forced_drops += 1;
                return Enqueued::Dropped(pkt, FORCED);
            }
        };
        self.average();
        self.flows.entry(key).or_default().qlen += 1;
        self.max_active = self.max_active.max(self.flows.len());
        self.empty_since = None;
        self.fifo.push(pkt);
        Enqueued::Queued { marked }
    }

    fn dequeue(&mut self, now: Instant, _dropped: &mut Dropped) -> Option<Dequeued> {
        let pkt = self.fifo.pop()?;
        self.average();
        let key = Self::flow_key(&pkt);
        if let Some(f) = self.flows.get_mut(&key) {
            f.qlen = f.qlen.saturating_sub(1);
            if f.qlen == 0 {
                self.flows.remove(&key);
            }
        }
        if self.fifo.is_empty() {
            self.empty_since = Some(now);
        }
        Some(Dequeued::plain(pkt))
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> usize {
        self.fifo.bytes()
    }

    fn flush(&mut self) -> Vec<Packet> {
        self.flows.clear();
        self.fifo.flush()
    }

    fn stats(&self) -> Vec<QueueStat> {
        let mean = if self.tally.arrivals > 0 { self.avg_sum / self.tally.arrivals as f64 } else { 0.0 };
        let mut out = vec![
            QueueStat { name: "fred_avg_queue", value: self.avg, unit: "packets" },
            QueueStat { name: "fred_avg_queue_mean", value: mean, unit: "packets" },
            QueueStat { name: "fred_flow_drops", value: self.flow_drops as f64, unit: "packets" },
            QueueStat { name: "fred_max_active_flows", value: self.max_active as f64, unit: "1" },
        ];
        out.extend(tally_stats("fred", &self.tally));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_support::{context, udp_packet};
    use crate::time::Duration;
    use crate::wire::Ecn;

    fn pkt(flow: u32) -> Packet {
        udp_packet(500, flow, 0, Ecn::NotEct)
    }

    fn fred(cfg: FredConfig) -> Fred {
        Fred::new(&cfg, context(10_000_000, Duration::ZERO, 4, "fred"))
    }

    #[test]
    fn a_flow_is_held_to_maxq_while_others_get_in() {
        let mut q = fred(FredConfig::default());
        let mut dropped = Dropped::new();
        // Average below min_th: maxq = min_th = 10 packets per flow.
        let mut admitted = [0; 2];
        for _ in 0..30 {
            for (i, flow) in [1u32, 2].iter().enumerate() {
                if let Enqueued::Queued { .. } = q.enqueue(pkt(*flow), Instant::ZERO, &mut dropped) {
                    admitted[i] += 1;
                }
            }
        }
        assert_eq!(admitted, [10, 10]);
        assert_eq!(q.active_flows(), 2);
        assert_eq!(q.flows[&1].strike, 20);
        // Strikes are forgotten when the flow's last packet leaves.
        while q.dequeue(Instant::ZERO, &mut dropped).is_some() {}
        assert_eq!(q.active_flows(), 0);
    }

    #[test]
    fn struck_flow_is_limited_to_the_average_per_flow_queue() {
        let mut q = fred(FredConfig::default());
        let mut dropped = Dropped::new();
        q.avg = 20.0; // random-drop mode
        for flow in 1..=4 {
            for _ in 0..3 {
                q.fifo.push(pkt(flow));
                q.flows.entry(u64::from(flow)).or_default().qlen += 1;
            }
        }
        q.flows.get_mut(&1).unwrap().strike = 2;
        q.cfg.w_q = 1e-12; // hold the average
                           // avgcq = 20 / 4 = 5: the struck flow 1 (3 queued, below avgcq) still gets in...
        assert!(matches!(q.enqueue(pkt(1), Instant::ZERO, &mut dropped), Enqueued::Queued { .. }));
        assert!(matches!(q.enqueue(pkt(1), Instant::ZERO, &mut dropped), Enqueued::Queued { .. }));
        // ...until it reaches avgcq.
        assert!(matches!(q.enqueue(pkt(1), Instant::ZERO, &mut dropped), Enqueued::Dropped(_, FLOW)));
        // Above max_th: maxq = 2.
        q.avg = 35.0;
        assert!(matches!(q.enqueue(pkt(2), Instant::ZERO, &mut dropped), Enqueued::Dropped(_, FLOW)));
    }

    #[test]
    fn only_robust_flows_are_randomly_dropped() {
        let mut q = fred(FredConfig { max_p: 1.0, ..FredConfig::default() });
        let mut dropped = Dropped::new();
        // avg near max_th, p_b close to 1; 10 flows with 2 packets each (avgcq = 2.9).
        for flow in 1..=10 {
            for _ in 0..2 {
                q.fifo.push(pkt(flow));
                q.flows.entry(u64::from(flow)).or_default().qlen += 1;
            }
        }
        q.cfg.w_q = 1e-12;
        q.count = 0;
        let (mut fragile_drops, mut robust_drops) = (0, 0);
        for _ in 0..200 {
            q.avg = 29.0;
            // A new flow (0 queued) is fragile: never randomly dropped.
            match q.enqueue(pkt(100), Instant::ZERO, &mut dropped) {
                Enqueued::Dropped(..) => fragile_drops += 1,
                _ => {
                    q.flows.remove(&100);
                    q.fifo.pop_back();
                }
            }
            // Flow 1 with 2 queued stays below max(min_q, avgcq) = 2.9: not dropped either.
            q.avg = 29.0;
            match q.enqueue(pkt(1), Instant::ZERO, &mut dropped) {
                Enqueued::Dropped(_, EARLY) => robust_drops += 1,
                Enqueued::Dropped(..) => {}
                _ => {
                    q.flows.get_mut(&1).unwrap().qlen -= 1;
                    q.fifo.pop_back();
                }
            }
        }
        assert_eq!((fragile_drops, robust_drops), (0, 0));
        // A flow with 5 queued is robust: dropped at random.
        for _ in 0..3 {
            q.fifo.push(pkt(1));
            q.flows.get_mut(&1).unwrap().qlen += 1;
        }
        let mut early = 0;
        for _ in 0..100 {
            q.avg = 29.0;
            if let Enqueued::Dropped(_, EARLY) = q.enqueue(pkt(1), Instant::ZERO, &mut dropped) {
                early += 1;
            } else {
                q.flows.get_mut(&1).unwrap().qlen -= 1;
                q.fifo.pop_back();
            }
        }
        assert!(early > 50, "{early}");
    }

    #[test]
    fn an_empty_period_decays_the_average_once() {
        // 10 Mbit/s and 500-byte packets: 2500 packet times per second.
        let mut q = fred(FredConfig::default());
        let mut dropped = Dropped::new();
        q.avg = 80.0; // still above max_th after the decay: the arrival is dropped (drop-tail mode)
        q.empty_since = Some(Instant::ZERO);
        let at = |ms| Instant::ZERO + Duration::from_millis(ms);
        assert!(matches!(q.enqueue(pkt(1), at(100), &mut dropped), Enqueued::Dropped(..)));
        let after_first = 80.0 * 0.998f64.powf(250.0);
        assert!((q.avg() - after_first).abs() < 1e-9);
        // The second arrival decays only the 100 ms since the first.
        q.enqueue(pkt(1), at(200), &mut dropped);
        assert!((q.avg() - after_first * 0.998f64.powf(250.0) * 0.998).abs() < 1e-9, "{}", q.avg());
    }

    #[test]
    fn packets_of_no_flow_are_told_apart_by_their_header() {
        let a = pkt(NO_FLOW);
        let mut b = pkt(NO_FLOW);
        b.bytes[19] = 3; // another destination
        assert_ne!(Fred::flow_key(&a), Fred::flow_key(&b));
        assert_eq!(Fred::flow_key(&a), Fred::flow_key(&pkt(NO_FLOW)));
        assert!(Fred::flow_key(&a) > u64::from(u32::MAX));
        let mut e = pkt(7);
        e.set_ecn(Ecn::Ect0).unwrap();
        assert_eq!(Fred::flow_key(&e), 7);
    }

    #[test]
    fn check_names_the_bad_key() {
        let e = FredConfig { min_th: 30.0, max_th: 10.0, ..FredConfig::default() }.check().unwrap_err();
        assert_eq!(e.key, "max_th");
        assert!(e.message.contains("10") && e.message.contains("30"));
    }
}
