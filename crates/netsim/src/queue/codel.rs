//! CoDel, Controlled Delay (RFC 8289): drops (or marks) at the head of the queue when the
//! sojourn time of the packets leaving it has stayed above a target for at least an interval,
//! then at intervals that shrink as `interval / sqrt(count)` until the sojourn time falls below
//! the target again.
//!
//! The control loop (`Controller`) is written once and serves both this single-queue
//! discipline and each flow queue of FQ-CoDel ([`super::fq_codel`]). It follows the pseudocode of
//! RFC 8289 §5 (the `dodequeue` helper and `dequeue`), including the reuse of the previous drop
//! count when the queue re-enters the dropping state soon after leaving it (the pseudocode's
//! "Linux version"), and the MTU exemption (§4.2, non-starvation; the second term of
//! `dodequeue`'s test): no packet is dropped while at most one MTU of bytes
//! is left behind it, so a slow link is never starved. With [`CodelParams::ecn`] an ECN-capable
//! packet (RFC 3168) is marked Congestion Experienced instead of dropped, as Linux's `sch_codel`
//! does (the packet is sent, and the next drop is scheduled by the control law as if it had been
//! dropped).
//!
//! Timestamps: each packet's arrival time is kept beside it in the queue (the `tstamp` of
//! RFC 8289 §5's pseudocode), so nothing is added to [`crate::wire::PacketMeta`].

use std::collections::VecDeque;

use super::{Dequeued, Dropped, Enqueued, Passed, QueueDisc, QueueLimit, QueueReason, QueueStat};
use crate::time::{Duration, Instant};
use crate::wire::Packet;

/// A packet dropped at the head by CoDel's control law.
pub const DROP: QueueReason = QueueReason("codel_drop");
/// An ECN-capable packet marked Congestion Experienced by CoDel's control law instead of a drop.
pub const MARK: QueueReason = QueueReason("codel_mark");

/// CoDel's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelParams {
    /// Acceptable standing queue delay (RFC 8289 §4.4: 5 ms).
    pub target: Duration,
    /// Sliding window over which the minimum sojourn time must stay above `target` before
    /// dropping starts, and the base of the control law (RFC 8289 §4.3: 100 ms).
    pub interval: Duration,
    /// Mark ECN-capable packets instead of dropping them (default off, as Linux's `sch_codel`;
    /// RFC 8289 §5 leaves it to the implementation).
    pub ecn: bool,
}

impl CodelParams {
    /// Check that target and interval are more than zero.
    pub fn check(&self) -> Result<(), super::ParamError> {
        super::positive("target", self.target.as_secs_f64())?;
        super::positive("interval", self.interval.as_secs_f64())
    }
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams { target: Duration::from_millis(5), interval: Duration::from_millis(100), ecn: false }
    }
}

/// Default capacity of a CoDel queue: 1,000 packets (Linux's `sch_codel`; RFC 8289 sets none,
/// CoDel needs only a limit that is rarely reached).
pub const DEFAULT_LIMIT: QueueLimit = QueueLimit::Packets(1000);

/// How to build a [`CoDel`] queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelConfig {
    /// Hard capacity; arrivals beyond it are dropped as [`super::droptail::OVERFLOW`] (default
    /// [`DEFAULT_LIMIT`]).
    pub limit: QueueLimit,
    /// Target, interval, ECN.
    pub params: CodelParams,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig { limit: DEFAULT_LIMIT, params: CodelParams::default() }
    }
}

// ---------------------------------------------------------------------------------------------
// The queue CoDel controls
// ---------------------------------------------------------------------------------------------

/// A FIFO of packets with their arrival times, and its byte count.
#[derive(Debug, Default)]
pub(crate) struct TimedFifo {
    packets: VecDeque<(Packet, Instant)>,
    bytes: usize,
}

impl TimedFifo {
    /// Append `pkt`, arrived at `now`.
    #[inline]
    pub(crate) fn push(&mut self, pkt: Packet, now: Instant) {
        self.bytes += pkt.len();
        self.packets.push_back((pkt, now));
    }

    /// Remove the head packet with its arrival time.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(Packet, Instant)> {
        let (pkt, at) = self.packets.pop_front()?;
        self.bytes -= pkt.len();
        Some((pkt, at))
    }

    /// Packets waiting.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.packets.len()
    }

    /// True when nothing waits.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Bytes waiting.
    #[inline]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Remove every packet.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = Packet> + '_ {
        self.bytes = 0;
        self.packets.drain(..).map(|(p, _)| p)
    }
}

// ---------------------------------------------------------------------------------------------
// The control loop
// ---------------------------------------------------------------------------------------------

/// What CoDel's control loop has done, for statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct CodelCounters {
    /// Packets dropped by the control law.
    pub(crate) drops: u64,
    /// Packets marked by the control law instead of dropped.
    pub(crate) marks: u64,
    /// Packets released for transmission.
    pub(crate) released: u64,
    /// Sum of their sojourn times, in nanoseconds.
    pub(crate) sojourn_ns: u128,
    /// Times the dropping state was entered.
    pub(crate) episodes: u64,
}

impl CodelCounters {
    /// Mean sojourn time of the packets released, in seconds (0 before the first).
    pub(crate) fn sojourn_mean_s(&self) -> f64 {
        if self.released == 0 {
            return 0.0;
        }
        self.sojourn_ns as f64 / self.released as f64 / 1e9
    }

    #[inline]
    fn release(&mut self, sojourn: Duration) {
        self.released += 1;
        self.sojourn_ns += sojourn.as_nanos() as u128;
    }
}

/// The state of CoDel's control loop for one queue (the per-queue state of RFC 8289 §5).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Controller {
    /// When the sojourn time, above target since then, will have been so for an interval
    /// (`first_above_time`, `None` for RFC 8289's 0: below target).
    first_above_time: Option<Instant>,
    /// When the next drop is due while dropping.
    drop_next: Instant,
    /// Drops since the dropping state was entered (the control law's `count`).
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    /// In the dropping state.
    dropping: bool,
}

/// A packet taken from the queue by [`Controller::dodequeue`], with its sojourn time.
struct Head {
    pkt: Option<(Packet, Duration)>,
    ok_to_drop: bool,
}

impl Controller {
    /// The control law (RFC 8289 §5, `control_law`): the next drop `interval / sqrt(count)` after `t`.
    #[inline]
    pub(crate) fn control_law(t: Instant, interval: Duration, count: u32) -> Instant {
        let gap = interval.as_nanos() as f64 / f64::from(count.max(1)).sqrt();
        t.saturating_add(Duration::from_nanos(gap as u64))
    }

    /// True while in the dropping state.
    #[cfg(test)]
    pub(crate) fn dropping(&self) -> bool {
        self.dropping
    }

    /// The drop count of the control law.
    #[cfg(test)]
    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    /// The state after a packet arriving to an empty queue at `now` left at once (sojourn
    /// zero): below target, so not dropping. Exactly what [`Controller::dequeue`] does then.
    #[inline]
    pub(crate) fn pass_idle(&mut self, counters: &mut CodelCounters) {
        self.first_above_time = None;
        self.dropping = false;
        counters.release(Duration::ZERO);
    }

    /// RFC 8289 §5 `dodequeue`: take the head packet and say whether the sojourn time has
    /// been above target for at least an interval. `mtu` is the largest packet: while at most
    /// that many bytes remain queued the queue counts as below target (§4.2).
    #[inline]
    fn dodequeue(&mut self, q: &mut TimedFifo, p: &CodelParams, mtu: usize, now: Instant) -> Head {
        let Some((pkt, at)) = q.pop() else {
            // An empty queue cannot be above target.
            self.first_above_time = None;
            return Head { pkt: None, ok_to_drop: false };
        };
        let sojourn = now.saturating_since(at);
        let mut ok_to_drop = false;
        if sojourn < p.target || q.bytes() <= mtu {
            // Went below: stay below for at least an interval.
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                // Just went above; if still above an interval from now, drop.
                None => self.first_above_time = Some(now.saturating_add(p.interval)),
                Some(t) => ok_to_drop = now >= t,
            }
        }
        Head { pkt: Some((pkt, sojourn)), ok_to_drop }
    }

    /// RFC 8289 §5 `dequeue`: the next packet to send from `q` at `now`, dropping (onto
    /// `dropped`) or marking as the control loop says.
    pub(crate) fn dequeue(
        &mut self,
        q: &mut TimedFifo,
        p: &CodelParams,
        mtu: usize,
        now: Instant,
        dropped: &mut Dropped,
        counters: &mut CodelCounters,
    ) -> Option<Dequeued> {
        let mut r = self.dodequeue(q, p, mtu, now);
        let mut marked = None;
        if self.dropping {
            if !r.ok_to_drop {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
            }
            // Time for the next drop(s): a large backlog may call for several now.
            while self.dropping && now >= self.drop_next {
                let Some((mut pkt, sojourn)) = r.pkt.take() else { break };
                self.count = self.count.saturating_add(1);
                if p.ecn && pkt.mark_ce() {
                    // Marked instead: it goes, and the next signal follows the control law.
                    counters.marks += 1;
                    self.drop_next = Self::control_law(self.drop_next, p.interval, self.count);
                    r.pkt = Some((pkt, sojourn));
                    marked = Some(MARK);
                    break;
                }
                counters.drops += 1;
                dropped.push((pkt, DROP));
                r = self.dodequeue(q, p, mtu, now);
                if r.ok_to_drop {
                    self.drop_next = Self::control_law(self.drop_next, p.interval, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if r.ok_to_drop {
            // Above target for an interval: drop (or mark) and enter the dropping state.
            if let Some((mut pkt, sojourn)) = r.pkt.take() {
                if p.ecn && pkt.mark_ce() {
                    counters.marks += 1;
                    r.pkt = Some((pkt, sojourn));
                    marked = Some(MARK);
                } else {
                    counters.drops += 1;
                    dropped.push((pkt, DROP));
                    r = self.dodequeue(q, p, mtu, now);
                }
            }
            self.dropping = true;
            counters.episodes += 1;
            // Re-entering soon after the last episode: resume near the drop rate that
            // controlled the queue then (RFC 8289 §5, the Linux variant).
            let delta = self.count.wrapping_sub(self.lastcount);
            let since_next = now.as_nanos() as i128 - self.drop_next.as_nanos() as i128;
            self.count = if delta > 1 && since_next < 16 * p.interval.as_nanos() as i128 { delta } else { 1 };
            self.drop_next = Self::control_law(now, p.interval, self.count);
            self.lastcount = self.count;
        }
        let (pkt, sojourn) = r.pkt?;
        counters.release(sojourn);
        Some(Dequeued { pkt, marked })
    }
}

// ---------------------------------------------------------------------------------------------
// The discipline
// ---------------------------------------------------------------------------------------------

/// CoDel on one FIFO, with a hard limit in packets or bytes (arrivals beyond it are dropped as
/// [`super::droptail::OVERFLOW`]).
#[derive(Debug)]
pub struct CoDel {
    params: CodelParams,
    limit: QueueLimit,
    mtu: usize,
    fifo: TimedFifo,
    control: Controller,
    counters: CodelCounters,
}

impl CoDel {
    /// Name in the registry.
    pub const KIND: &'static str = "codel";

    /// An empty queue for a link direction whose largest packet is `mtu` bytes.
    pub fn new(params: CodelParams, limit: QueueLimit, mtu: usize) -> Self {
        CoDel {
            params,
            limit,
            mtu,
            fifo: TimedFifo::default(),
            control: Controller::default(),
            counters: CodelCounters::default(),
        }
    }

    #[inline]
    fn full_for(&self, pkt: &Packet) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => self.fifo.len() >= n,
            QueueLimit::Bytes(n) => self.fifo.bytes() + pkt.len() > n,
        }
    }
}

impl QueueDisc for CoDel {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn enqueue(&mut self, pkt: Packet, now: Instant, _dropped: &mut Dropped) -> Enqueued {
        if self.full_for(&pkt) {
            return Enqueued::Dropped(pkt, super::droptail::OVERFLOW);
        }
        self.fifo.push(pkt, now);
        Enqueued::Queued { marked: None }
    }

    fn dequeue(&mut self, now: Instant, dropped: &mut Dropped) -> Option<Dequeued> {
        self.control.dequeue(&mut self.fifo, &self.params, self.mtu, now, dropped, &mut self.counters)
    }

    /// An arrival to an empty queue leaves at once with a sojourn time of zero: below target,
    /// so the control loop only leaves any dropping state (as `dequeue` would).
    fn enqueue_dequeue(&mut self, pkt: Packet, now: Instant, dropped: &mut Dropped) -> Passed {
        if !self.fifo.is_empty() || self.full_for(&pkt) {
            let arrival = self.enqueue(pkt, now, dropped);
            return Passed::Otherwise(arrival, self.dequeue(now, dropped));
        }
        self.control.pass_idle(&mut self.counters);
        Passed::Through(pkt)
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> usize {
        self.fifo.bytes()
    }

    fn flush(&mut self) -> Vec<Packet> {
        self.fifo.drain().collect()
    }

    fn stats(&self) -> Vec<QueueStat> {
        let c = &self.counters;
        vec![
            QueueStat { name: "codel_drops", value: c.drops as f64, unit: "packets" },
            QueueStat { name: "codel_marks", value: c.marks as f64, unit: "packets" },
            QueueStat { name: "codel_episodes", value: c.episodes as f64, unit: "1" },
            QueueStat { name: "codel_sojourn_mean", value: c.sojourn_mean_s(), unit: "s" },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_support::udp_packet;
    use crate::wire::Ecn;

    fn pkt(len: usize, uid: u64, ecn: Ecn) -> Packet {
        udp_packet(len, 0, uid, ecn)
    }

    fn ms(v: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(v)
    }

    /// A queue kept full by arrivals: every millisecond one 1000-byte packet arrives and one is
    /// taken out, so the sojourn time stays at the backlog's `depth` ms, far above target.
    /// Returns the instants (ms) of the drops.
    fn standing_queue(params: CodelParams, depth: u64, until_ms: u64) -> (Vec<u64>, CoDel) {
        let mut q = CoDel::new(params, QueueLimit::Packets(10_000), 1500);
        let mut dropped = Dropped::new();
        let mut uid = 0;
        for t in 0..depth {
            q.enqueue(pkt(1000, uid, Ecn::NotEct), ms(t), &mut dropped);
            uid += 1;
        }
        let mut drops = Vec::new();
        for t in depth..until_ms {
            q.enqueue(pkt(1000, uid, Ecn::NotEct), ms(t), &mut dropped);
            uid += 1;
            // Refill what the control law removed, so the backlog (and sojourn) stays put.
            let out = q.dequeue(ms(t), &mut dropped);
            assert!(out.is_some());
            for _ in dropped.drain(..) {
                drops.push(t);
                q.enqueue(pkt(1000, uid, Ecn::NotEct), ms(t), &mut Dropped::new());
                uid += 1;
            }
        }
        (drops, q)
    }

    #[test]
    fn drops_start_an_interval_after_the_target_is_exceeded_and_follow_the_control_law() {
        let (drops, q) = standing_queue(CodelParams::default(), 100, 1500);
        // The first packet out (t = 100 ms) is 100 ms old: above 5 ms, so first_above_time is
        // 200 ms, and the packet leaving then is the first dropped.
        assert_eq!(drops[0], 200, "{drops:?}");
        // Then the drop after the k-th comes interval / sqrt(k) after the k-th was due, exactly
        // (each drop happens at the first dequeue at or after its time: dequeues come every
        // millisecond).
        let mut next = ms(200);
        for (k, &t) in drops.iter().enumerate().skip(1) {
            next = Controller::control_law(next, Duration::from_millis(100), k as u32);
            assert_eq!(t, next.as_nanos().div_ceil(1_000_000), "drop {}: {drops:?}", k + 1);
        }
        // Gaps shrink as 1/sqrt(count): 100, 70.7, 57.7, 50 ms...
        assert_eq!(&drops[..5], &[200, 300, 371, 429, 479]);
        assert!(drops.len() > 20, "{drops:?}");
        assert!(q.control.dropping());
        assert_eq!(q.control.count() as usize, drops.len());
        assert_eq!(q.counters.drops as usize, drops.len());
        assert_eq!(q.counters.episodes, 1);
    }

    #[test]
    fn a_short_queue_is_never_dropped_from() {
        // Sojourn 3 ms < 5 ms target: no drops however long.
        let (drops, q) = standing_queue(CodelParams::default(), 3, 2000);
        assert!(drops.is_empty());
        assert_eq!(q.counters.episodes, 0);
        // A smaller target makes the same queue too long.
        let tight = CodelParams { target: Duration::from_millis(1), ..CodelParams::default() };
        let (drops, _) = standing_queue(tight, 3, 2000);
        assert_eq!(drops.first(), Some(&103));
    }

    #[test]
    fn at_most_one_mtu_left_behind_is_never_dropped() {
        // One 1500-byte packet behind each departure: the MTU exemption holds however old.
        let mut q = CoDel::new(CodelParams::default(), DEFAULT_LIMIT, 1500);
        let mut dropped = Dropped::new();
        q.enqueue(pkt(1500, 0, Ecn::NotEct), ms(0), &mut dropped);
        for t in 1..3000 {
            q.enqueue(pkt(1500, t, Ecn::NotEct), ms(t), &mut dropped);
            // The link drains one packet every 50 ms after a 1 s stall: sojourn far above 5 ms.
            if t >= 1000 && t % 2 == 0 {
                q.dequeue(ms(t), &mut dropped);
            }
        }
        assert!(!dropped.is_empty(), "a deep queue is controlled");
        // Now the same with exactly two packets queued at each dequeue.
        let mut q = CoDel::new(CodelParams::default(), DEFAULT_LIMIT, 1500);
        let mut dropped = Dropped::new();
        q.enqueue(pkt(1500, 0, Ecn::NotEct), ms(0), &mut dropped);
        for t in 1..3000u64 {
            q.enqueue(pkt(1500, t, Ecn::NotEct), ms(t * 50), &mut dropped);
            // Sojourn 50 ms each, but only one packet (one MTU) stays behind.
            let out = q.dequeue(ms(t * 50), &mut dropped).unwrap();
            assert_eq!(out.pkt.meta.uid, t - 1);
        }
        assert!(dropped.is_empty());
    }

    #[test]
    fn count_is_reused_when_the_dropping_state_is_reentered_soon() {
        let mut q = CoDel::new(CodelParams::default(), QueueLimit::Packets(10_000), 1500);
        let mut dropped = Dropped::new();
        let mut uid = 0;
        let mut fill = |q: &mut CoDel, n: u64, t: u64| {
            for _ in 0..n {
                q.enqueue(pkt(1000, uid, Ecn::NotEct), ms(t), &mut Dropped::new());
                uid += 1;
            }
        };
        // A standing queue of 30 packets, one in and one out per ms, until t = 600 ms.
        fill(&mut q, 30, 0);
        for t in 30..600 {
            fill(&mut q, 1, t);
            q.dequeue(ms(t), &mut dropped);
            let lost = dropped.len() as u64;
            dropped.clear();
            fill(&mut q, lost, t);
        }
        assert!(q.control.dropping() && q.control.count() >= 4, "count {}", q.control.count());
        // Drain to below target: leaves the dropping state.
        while q.len_packets() > 0 {
            q.dequeue(ms(600), &mut dropped);
        }
        dropped.clear();
        q.dequeue(ms(600), &mut dropped);
        assert!(!q.control.dropping());
        let count = q.control.count();
        // Back above target 50 ms later for another interval: re-entry resumes from the drop
        // rate of the last episode (count - lastcount), not from 1.
        fill(&mut q, 30, 650);
        let mut t = 651;
        while !q.control.dropping() {
            fill(&mut q, 1, t);
            q.dequeue(ms(t), &mut dropped);
            t += 1;
        }
        assert_eq!(q.control.count(), count - 1, "delta = count - lastcount with lastcount 1");
        // After a long quiet period the count starts again at 1.
        while q.len_packets() > 0 {
            q.dequeue(ms(t), &mut dropped);
        }
        q.dequeue(ms(t), &mut dropped);
        let later = t + 10_000;
        fill(&mut q, 30, later);
        let mut t = later + 1;
        while !q.control.dropping() {
            fill(&mut q, 1, t);
            q.dequeue(ms(t), &mut dropped);
            t += 1;
        }
        assert_eq!(q.control.count(), 1);
    }

    #[test]
    fn with_ecn_capable_packets_marked_instead_of_dropped() {
        let params = CodelParams { ecn: true, ..CodelParams::default() };
        let mut q = CoDel::new(params, QueueLimit::Packets(10_000), 1500);
        let mut dropped = Dropped::new();
        let mut marks = Vec::new();
        let mut drops = 0;
        for t in 0..20 {
            q.enqueue(pkt(1000, t, if t % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct }), ms(t), &mut dropped);
        }
        for t in 20..1500u64 {
            q.enqueue(pkt(1000, t, if t % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct }), ms(t), &mut dropped);
            let out = q.dequeue(ms(t), &mut dropped).unwrap();
            if let Some(reason) = out.marked {
                assert_eq!(reason, MARK);
                assert_eq!(out.pkt.ecn(), Some(Ecn::Ce));
                marks.push(t);
            }
            for (p, why) in dropped.drain(..) {
                assert_eq!(why, DROP);
                assert_eq!(p.ecn(), Some(Ecn::NotEct), "only packets that cannot be marked are dropped");
                drops += 1;
            }
        }
        assert_eq!(marks.first(), Some(&120), "the first signal, as a drop would be");
        assert!(marks.len() > 5 && drops > 0, "{marks:?} {drops}");
        assert_eq!(q.counters.marks as usize, marks.len());
        let stats = q.stats();
        assert_eq!(stats[1], QueueStat { name: "codel_marks", value: marks.len() as f64, unit: "packets" });
    }

    #[test]
    fn hard_limit_drops_arrivals_and_the_idle_shortcut_matches_the_general_path() {
        let mut q = CoDel::new(CodelParams::default(), QueueLimit::Bytes(2500), 1500);
        let mut dropped = Dropped::new();
        assert!(matches!(q.enqueue(pkt(1000, 0, Ecn::NotEct), ms(0), &mut dropped), Enqueued::Queued { .. }));
        assert!(matches!(q.enqueue(pkt(1000, 1, Ecn::NotEct), ms(0), &mut dropped), Enqueued::Queued { .. }));
        let Enqueued::Dropped(_, why) = q.enqueue(pkt(1000, 2, Ecn::NotEct), ms(0), &mut dropped) else {
            panic!("3000 bytes exceed 2500")
        };
        assert_eq!(why, super::super::droptail::OVERFLOW);
        // Idle: the arrival passes straight through, and a dropping state is left.
        let mut a = CoDel::new(CodelParams::default(), DEFAULT_LIMIT, 1500);
        a.control.dropping = true;
        a.control.first_above_time = Some(ms(1));
        let mut b = CoDel::new(CodelParams::default(), DEFAULT_LIMIT, 1500);
        b.control = a.control.clone();
        assert!(matches!(a.enqueue_dequeue(pkt(500, 9, Ecn::NotEct), ms(5), &mut dropped), Passed::Through(_)));
        b.enqueue(pkt(500, 9, Ecn::NotEct), ms(5), &mut dropped);
        assert_eq!(b.dequeue(ms(5), &mut dropped).map(|d| d.pkt.meta.uid), Some(9));
        assert_eq!(a.control, b.control);
        assert_eq!(a.counters, b.counters);
        assert!(dropped.is_empty());
    }
}
