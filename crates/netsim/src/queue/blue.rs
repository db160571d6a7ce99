//! BLUE (Feng, Shin, Kandlur & Saha, "The BLUE Active Queue Management Algorithms", IEEE/ACM
//! ToN 10(4), 2002): one marking probability `p_m`, driven by packet loss and link idle events
//! rather than by the queue length.
//!
//! ```text
//! Upon packet loss (or Q_len > L) event:        Upon link idle event:
//!   if (now - last_update) > freeze_time:          if (now - last_update) > freeze_time:
//!     p_m := p_m + d1                                p_m := p_m - d2
//!     last_update := now                             last_update := now
//! ```
//!
//! Every arriving packet is dropped (or, with `ecn`, an ECN-capable one marked) with
//! probability `p_m`. A packet loss event is an arrival that finds the buffer full (it is
//! dropped, `queue_full`); with `increase_above` set, an arrival that finds more than that many
//! packets queued is one too (the paper's `L`, which leaves room for bursts). A link idle event
//! is the link finding the queue empty when it could send (a dequeue that returns nothing).
//! The single `last_update` is shared by both rules, as in the paper.
//!
//! Defaults: `d1` = 0.02 and `d2` = 0.002 are paper 003's (Table 2, "increase / decrease drop
//! probability"); `freeze_time` = 100 ms is the hold time of Feng's ns BLUE code. Table 2 also
//! lists RED-style thresholds, queue weight and mean packet size for BLUE; BLUE's rules use
//! none of them.

use super::droptail::OVERFLOW;
use super::fifo::{Fifo, Tally};
use super::red::tally_stats;
use super::{in_range, Dequeued, Dropped, Enqueued, ParamError, QueueContext, QueueDisc, QueueLimit};
use super::{QueueReason, QueueStat};
use crate::rng::SimRng;
use crate::time::{Duration, Instant};
use crate::wire::Packet;

/// A packet dropped with probability `p_m`.
pub const EARLY: QueueReason = QueueReason("blue_early");
/// An ECN-capable packet marked with probability `p_m` instead of dropped.
pub const MARK: QueueReason = QueueReason("blue_mark");

/// BLUE's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct BlueConfig {
    /// Hard limit of the buffer. Default 100 packets.
    pub limit: QueueLimit,
    /// Increment of `p_m` on a loss event. Default 0.02 (paper 003, Table 2).
    pub d1: f64,
    /// Decrement of `p_m` on a link idle event. Default 0.002 (paper 003, Table 2).
    pub d2: f64,
    /// Minimum time between two changes of `p_m`. Default 100 ms.
    pub freeze_time: Duration,
    /// Also raise `p_m` when an arrival finds more than this many packets queued (the paper's
    /// `L`); `None` (default): only when the buffer overflows.
    pub increase_above: Option<usize>,
    /// Mark ECN-capable packets instead of dropping them. Default false.
    pub ecn: bool,
}

impl Default for BlueConfig {
    fn default() -> Self {
        BlueConfig {
            limit: QueueLimit::Packets(100),
            d1: 0.02,
            d2: 0.002,
            freeze_time: Duration::from_millis(100),
            increase_above: None,
            ecn: false,
        }
    }
}

impl BlueConfig {
    /// Check the parameters.
    pub fn check(&self) -> Result<(), ParamError> {
        in_range("d1", self.d1, 0.0..=1.0)?;
        in_range("d2", self.d2, 0.0..=1.0)?;
        if let (Some(l), QueueLimit::Packets(n)) = (self.increase_above, self.limit) {
            if l >= n {
                return Err(ParamError::new(
                    "increase_above",
                    format!("{l} must be below the limit ({n} packets) or it never triggers"),
                ));
            }
        }
        Ok(())
    }
}

/// A BLUE queue.
pub struct Blue {
    cfg: BlueConfig,
    fifo: Fifo,
    rng: SimRng,
    /// The marking probability.
    p_m: f64,
    /// When `p_m` last changed (`None`: never, so the first event changes it).
    last_update: Option<Instant>,
    /// The link is idle (the last dequeue found nothing): one idle event per idle period.
    idle: bool,
    tally: Tally,
    increases: u64,
    decreases: u64,
}

impl Blue {
    /// Name in the registry.
    pub const KIND: &'static str = "blue";

    /// An empty BLUE queue.
    pub fn new(cfg: &BlueConfig, ctx: QueueContext) -> Self {
        Blue {
            cfg: cfg.clone(),
            fifo: Fifo::default(),
            rng: ctx.rng,
            p_m: 0.0,
            last_update: None,
            idle: true,
            tally: Tally::default(),
            increases: 0,
            decreases: 0,
        }
    }

    /// The marking probability `p_m`.
    pub fn p_m(&self) -> f64 {
        self.p_m
    }

    /// True if `p_m` may change at `now` (more than `freeze_time` since the last change).
    fn unfrozen(&self, now: Instant) -> bool {
        self.last_update.is_none_or(|t| now.saturating_since(t) > self.cfg.freeze_time)
    }

    /// A loss event (or the queue above `L`).
    fn on_congestion(&mut self, now: Instant) {
        if self.unfrozen(now) {
            self.p_m = (self.p_m + self.cfg.d1).min(1.0);
            self.last_update = Some(now);
            self.increases += 1;
        }
    }

    /// A link idle event.
    fn on_idle(&mut self, now: Instant) {
        if self.unfrozen(now) {
            self.p_m = (self.p_m - self.cfg.d2).max(0.0);
            self.last_update = Some(now);
            self.decreases += 1;
        }
    }
}

impl QueueDisc for Blue {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn enqueue(&mut self, pkt: Packet, now: Instant, _dropped: &mut Dropped) -> Enqueued {
        self.tally.arrivals += 1;
        self.idle = false;
        if self.fifo.full_for(self.cfg.limit, &pkt) {
            self.on_congestion(now);
            self.tally.overflow_drops += 1;
            return Enqueued::Dropped(pkt, OVERFLOW);
        }
        if self.cfg.increase_above.is_some_and(|l| self.fifo.len() > l) {
            self.on_congestion(now);
        }
        self.fifo.admit(pkt, self.p_m, &mut self.rng, self.cfg.ecn, &mut self.tally, (MARK, EARLY))
    }

    fn dequeue(&mut self, now: Instant, _dropped: &mut Dropped) -> Option<Dequeued> {
        match self.fifo.pop() {
            Some(pkt) => Some(Dequeued::plain(pkt)),
            None => {
                if !self.idle {
                    self.idle = true;
                    self.on_idle(now);
                }
                None
            }
        }
    }

    fifo_occupancy!(fifo);

    fn stats(&self) -> Vec<QueueStat> {
        let mut out = vec![
            QueueStat { name: "blue_p_m", value: self.p_m, unit: "1" },
            QueueStat { name: "blue_increases", value: self.increases as f64, unit: "1" },
            QueueStat { name: "blue_decreases", value: self.decreases as f64, unit: "1" },
        ];
        out.extend(tally_stats("blue", &self.tally));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_support::{context, udp_packet};
    use crate::wire::Ecn;

    fn pkt(ecn: Ecn) -> Packet {
        udp_packet(500, 0, 0, ecn)
    }

    fn blue(cfg: BlueConfig) -> Blue {
        Blue::new(&cfg, context(1_000_000, Duration::ZERO, 5, "blue"))
    }

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn overflow_raises_p_m_by_d1_at_most_once_per_freeze_time() {
        let mut q = blue(BlueConfig { limit: QueueLimit::Packets(2), ..BlueConfig::default() });
        let mut dropped = Dropped::new();
        // Two fit (p_m is 0, nothing early); every later arrival overflows.
        for _ in 0..2 {
            assert!(matches!(q.enqueue(pkt(Ecn::NotEct), at(0), &mut dropped), Enqueued::Queued { .. }));
        }
        let mut p = Vec::new();
        for ms in [0, 50, 100, 101, 150, 202, 203] {
            let out = q.enqueue(pkt(Ecn::NotEct), at(ms), &mut dropped);
            assert!(matches!(out, Enqueued::Dropped(_, OVERFLOW)));
            p.push(q.p_m());
        }
        // +d1 at 0 (first event), frozen at 50 and 100 (not more than 100 ms), +d1 at 101,
        // frozen at 150 and 202 (101 ms later is more: +d1), frozen at 203.
        let d1 = 0.02;
        let expect = [d1, d1, d1, 2.0 * d1, 2.0 * d1, 3.0 * d1, 3.0 * d1];
        for (got, want) in p.iter().zip(expect) {
            assert!((got - want).abs() < 1e-12, "{p:?}");
        }
        assert_eq!(q.increases, 3);
    }

    #[test]
    fn idle_link_lowers_p_m_by_d2_once_per_idle_period_and_freeze_time() {
        let mut q = blue(BlueConfig::default());
        let mut dropped = Dropped::new();
        q.p_m = 0.1;
        q.idle = false;
        // The link goes idle at 0: -d2.
        assert!(q.dequeue(at(0), &mut dropped).is_none());
        assert!((q.p_m() - 0.098).abs() < 1e-12);
        // Still idle: no second event.
        assert!(q.dequeue(at(500), &mut dropped).is_none());
        assert!((q.p_m() - 0.098).abs() < 1e-12);
        // Busy again, idle again within the freeze time: frozen.
        q.fifo.push(pkt(Ecn::NotEct));
        q.idle = false;
        assert!(q.dequeue(at(50), &mut dropped).is_some());
        assert!(q.dequeue(at(60), &mut dropped).is_none());
        assert!((q.p_m() - 0.098).abs() < 1e-12);
        // After the freeze time: -d2. Never below zero.
        q.idle = false;
        assert!(q.dequeue(at(101), &mut dropped).is_none());
        assert!((q.p_m() - 0.096).abs() < 1e-12);
        q.p_m = 0.001;
        q.idle = false;
        q.dequeue(at(300), &mut dropped);
        assert_eq!(q.p_m(), 0.0);
    }

    #[test]
    fn sustained_overload_drives_p_m_up_and_drops_follow_it() {
        // A 10-packet buffer offered 3 packets per millisecond, drained 1 per millisecond.
        let mut q = blue(BlueConfig { limit: QueueLimit::Packets(10), ..BlueConfig::default() });
        let mut dropped = Dropped::new();
        for ms in 0..6000 {
            for _ in 0..3 {
                q.enqueue(pkt(Ecn::NotEct), at(ms), &mut dropped);
            }
            q.dequeue(at(ms), &mut dropped);
        }
        // p_m rose by d1 per freeze time while the buffer kept overflowing, up to where early
        // drops alone hold the arrival rate near the service rate (p_m about 2/3).
        assert!(q.p_m() > 0.55 && q.p_m() < 0.85, "{}", q.p_m());
        assert!(q.tally.early_drops > q.tally.overflow_drops, "{:?}", q.tally);
    }

    #[test]
    fn queue_above_l_is_a_congestion_event_and_ecn_marks() {
        let mut q = blue(BlueConfig { increase_above: Some(3), ecn: true, ..BlueConfig::default() });
        let mut dropped = Dropped::new();
        for _ in 0..4 {
            q.enqueue(pkt(Ecn::Ect0), at(0), &mut dropped);
        }
        assert_eq!(q.p_m(), 0.0, "4 packets queued: not above L yet when each arrived");
        q.enqueue(pkt(Ecn::Ect0), at(0), &mut dropped);
        assert!((q.p_m() - 0.02).abs() < 1e-12);
        q.p_m = 1.0;
        assert!(matches!(q.enqueue(pkt(Ecn::Ect0), at(1), &mut dropped), Enqueued::Queued { marked: Some(MARK) }));
        assert!(matches!(q.enqueue(pkt(Ecn::NotEct), at(1), &mut dropped), Enqueued::Dropped(_, EARLY)));
    }

    #[test]
    fn check_names_the_bad_key() {
        let e = BlueConfig { d1: 2.0, ..BlueConfig::default() }.check().unwrap_err();
        assert_eq!(e.key, "d1");
        let e = BlueConfig { increase_above: Some(100), ..BlueConfig::default() }.check().unwrap_err();
        assert_eq!(e.key, "increase_above");
    }
}
