//! One WLAN channel: the radios on it, what each hears, and the DCF of each
//! (IEEE 802.11-2020 §10.3).
//!
//! # Physical layer
//!
//! A transmission from radio `i` reaches radio `j` at `P_ij` mW (transmit power less path loss
//! and shadowing, [`crate::wlan::propagation`]), at the same instant (zero propagation delay).
//! At or above the CCA threshold it makes the medium busy at `j` (physical carrier sense,
//! §10.3.2.1) and, if `j` is neither sending nor already receiving, `j` locks onto it. A second
//! transmission at or above the threshold while `j` is locked collides with the frame unless
//! capture is on and the locked frame is stronger by the capture threshold; weaker signals
//! only add interference. At the end of the frame, `j` has received it if it did not collide,
//! `P_ij` reaches the rate's sensitivity, and a draw against the NIST frame success
//! probability at SINR `P_ij / (noise + I)` succeeds, `I` the largest interference seen while
//! locked ([`crate::wlan::error`]; no draw when the probability is 1). Otherwise it is an
//! errored frame: the next idle period at `j` starts with EIFS instead of DIFS (§10.3.2.3.7).
//!
//! # DCF
//!
//! A radio with a frame contends: after the medium (physical carrier sense and NAV,
//! §10.3.2.4) has been idle for DIFS (or EIFS), its backoff counter counts down one per idle
//! slot, frozen while the medium is busy (§10.3.4.3); at zero it sends. The counter is never
//! ticked: a radio keeps `count_from`, the instant its current counter value started counting,
//! and when the medium goes busy the slots elapsed since are subtracted at once. The channel
//! keeps one access event, at the earliest instant some radio's counter reaches zero, and moves
//! it only when the medium changes, so a contention round costs the same whatever the number
//! of idle slots.
//!
//! After each attempt the counter is drawn again, uniformly in `0..=CW` (post-backoff,
//! §10.3.4.3), CW doubling on each failure up to CWmax and back to CWmin on success or drop
//! (§10.3.3). A frame arriving at an idle MAC whose counter is zero is sent as soon as the
//! medium has been idle for DIFS; if the medium is busy a counter is drawn.
//!
//! Exchanges: DATA - SIFS - ACK (§10.3.2.11), or with a frame longer than the RTS threshold
//! RTS - SIFS - CTS - SIFS - DATA - SIFS - ACK (§10.3.2.9), each frame's Duration field setting
//! the NAV of the radios that receive it and are not its destination. A CTS is sent only if the
//! NAV is idle. When the receiver decoded the frame the response goes out SIFS after it; the
//! sender learns the outcome when the response ends (a response it fails to receive is a
//! failure then). When nothing answers, the failure is declared ACKTimeout (SIFS + slot +
//! aRxPHYStartDelay) after the frame, and the next count starts DIFS after that. Retry limits
//! (§10.3.4.4): the short limit counts attempts of frames sent without RTS and of RTSs, the
//! long limit attempts of data frames after CTS; a frame reaching its limit is dropped
//! (`retry_limit`). Duplicates (§10.3.2.14): a receiver keeps the last sequence number from each
//! sender and acknowledges but does not deliver a retransmission of it.
//!
//! A data frame's packet is moved to the receiver when it is first received whole, not
//! copied: a retransmission of a frame already delivered is a duplicate, whose contents
//! nobody reads.
//!
//! Not modelled: NAV reset after an RTS with no data (§10.3.2.4), fragmentation, power save,
//! QoS (EDCA), and the switch to a stronger frame in the middle of a reception.

use std::net::Ipv4Addr;

use rand::Rng;

use crate::event::{DropCounts, DropReason, Event, WlanTimer};
use crate::ids::IfaceId;
use crate::kernel::{Scheduler, Ticket};
use crate::queue::{Dropped, Passed, QueueContext, QueueDisc};
use crate::rng::SimRng;
use crate::time::{Duration, Instant};
use crate::wire::Packet;
use crate::wlan::dcf::{Mac, Outgoing, Radio, RadioStats, Response};
use crate::wlan::mgmt::{MgmtCounts, MgmtKind};
use crate::wlan::phy::{self, Rate, Timing};
use crate::wlan::position::{Position, Positions};
use crate::wlan::propagation::{channel_frequency_hz, dbm_to_mw, PathLoss};
use crate::wlan::radiotap::{AirFrame, AirKind};
use crate::wlan::rate::RateState;
use crate::wlan::reception::Reception;
use crate::wlan::{ChannelConfig, RadioConfig, Role};

/// No radio / no transmission.
const NONE: u32 = u32::MAX;
/// The receiver of a group-addressed frame (every radio on the channel; not acknowledged,
/// §10.3.6).
pub const BROADCAST: u32 = u32::MAX - 1;
/// Sequence numbers are 12 bits (§9.2.4.4.2).
const SEQ_MASK: u16 = 0x0fff;

/// What a channel hands back to the network after an event.
#[derive(Debug)]
pub enum Output {
    /// A data frame's packet reached the radio's interface.
    Deliver(u32, Packet),
    /// A packet the radio's MAC dropped.
    Drop(u32, Packet, DropReason),
    /// A management frame reached a radio (addressed to it, or group-addressed).
    Mgmt {
        /// The receiving radio.
        radio: u32,
        /// The sender's radio.
        from: u32,
        /// What it is.
        kind: MgmtKind,
        /// Its received signal strength, dBm.
        rss_dbm: f64,
    },
    /// A radio's management frame left its MAC: acknowledged (or group-addressed and sent
    /// once), or discarded at the short retry limit. The sender's management entity may be
    /// waiting for it (a station leaving its AP waits for its Disassociation).
    MgmtDone {
        /// The sending radio.
        radio: u32,
        /// What it was.
        kind: MgmtKind,
        /// True unless the retry limit discarded it.
        delivered: bool,
    },
}

/// Kinds of frames on the air.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Data,
    Ack,
    Rts,
    Cts,
    Mgmt(MgmtKind),
}

/// A transmission on the air.
#[derive(Debug)]
struct Tx {
    src: u32,
    dst: u32,
    kind: Kind,
    rate: Rate,
    /// PSDU bits.
    bits: u64,
    /// Duration field (§9.2.4.2): the NAV it sets.
    nav: Duration,
    seq: u16,
    retry: bool,
    /// Another transmission was on the air at some point during this one.
    overlapped: bool,
}

/// Counters of a channel.
#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    /// Transmissions of every kind.
    pub frames: u64,
    /// Transmissions that overlapped another one.
    pub collisions: u64,
    /// Time at least one transmission was on the air.
    pub busy: Duration,
}

/// One channel and its radios.
pub struct Medium {
    id: u32,
    config: ChannelConfig,
    timing: Timing,
    freq_hz: f64,
    /// The channel's path loss at its frequency ([`PathLoss::at_frequency`]).
    path_loss: PathLoss,
    cca_mw: f64,
    noise_mw: f64,
    capture_ratio: Option<f64>,
    radios: Vec<Radio>,
    positions: Positions,
    /// Each radio's [`Radio::access_key`], kept up to date by every change to the radio (a
    /// dense array, so the earliest is found with one pass over a few cache lines).
    access: Vec<u64>,
    /// The smallest entry of `access`, unless `earliest_stale`.
    earliest: u64,
    /// A radio holding the smallest entry has moved later: `earliest` must be looked for.
    earliest_stale: bool,
    /// Received power in mW: `gain[i][j]` from radio `i` at radio `j`.
    gain: Vec<Vec<f64>>,
    /// Receiver sensitivity per rate, mW.
    sensitivity_mw: [f64; 8],
    /// Decides whether a frame arrives from its SINR.
    reception: Reception,
    shadowing: Vec<Vec<f64>>,
    shadow_rng: SimRng,
    txs: Vec<Option<Tx>>,
    free: Vec<u32>,
    on_air: u32,
    busy_since: Instant,
    access_gen: u32,
    /// When the access event is due (`None`: no radio is counting down to a frame).
    access_at: Option<Instant>,
    /// The access event's place among simultaneous events while it is only decided, not yet
    /// in the event list (see [`Medium::schedule_access`]).
    access_ticket: Option<Ticket>,
    /// The latest instant a response or an ACK timeout of this channel is due; each of those
    /// events re-examines the access event when it is handled.
    wake: Instant,
    /// The radios whose counter reaches zero at an access event (kept to reuse its memory).
    ready: Vec<u32>,
    /// Its counters.
    pub stats: ChannelStats,
    out: Vec<Output>,
    /// Frames started since the last [`Medium::take_air`], when the air is captured.
    air: Option<Vec<AirFrame>>,
    /// Per radio, when the air is captured: the sequence number and bytes of its last data
    /// frame, for a retransmission after the receiver already took the packet (its ACK lost).
    air_last_data: Vec<(u16, Vec<u8>)>,
}

impl Medium {
    /// An empty channel with index `id` in the network; `shadow_rng` draws its shadowing.
    pub fn new(id: u32, config: ChannelConfig, shadow_rng: SimRng) -> Self {
        Medium {
            id,
            timing: Timing::erp(config.slot, config.eifs_ack),
            freq_hz: channel_frequency_hz(config.channel),
            path_loss: config.propagation.path_loss.at_frequency(channel_frequency_hz(config.channel)),
            // Positive, so that a radio's zero power at itself is below it (see `start_tx`).
            cca_mw: dbm_to_mw(config.cca_threshold_dbm).max(f64::MIN_POSITIVE),
            noise_mw: dbm_to_mw(config.noise_floor_dbm),
            capture_ratio: config.capture_threshold_db.map(|db| 10f64.powf(db / 10.0)),
            sensitivity_mw: Rate::ALL.map(|r| dbm_to_mw(config.sensitivity_dbm.unwrap_or(r.sensitivity_dbm()))),
            reception: Reception::new(),
            config,
            radios: Vec::new(),
            positions: Positions::default(),
            access: Vec::new(),
            earliest: u64::MAX,
            earliest_stale: false,
            gain: Vec::new(),
            shadowing: Vec::new(),
            shadow_rng,
            txs: Vec::new(),
            free: Vec::new(),
            on_air: 0,
            busy_since: Instant::ZERO,
            access_gen: 0,
            access_at: None,
            access_ticket: None,
            wake: Instant::ZERO,
            ready: Vec::new(),
            stats: ChannelStats::default(),
            out: Vec::new(),
            air: None,
            air_last_data: Vec::new(),
        }
    }

    /// Record every frame sent on this channel from now on, for [`Medium::take_air`] (a
    /// monitor-mode capture, [`crate::wlan::radiotap`]).
    pub fn capture_air(&mut self) {
        self.air.get_or_insert_with(Vec::new);
    }

    /// True if it records its air.
    pub fn captures_air(&self) -> bool {
        self.air.is_some()
    }

    /// The frames started since the last call (none unless [`Medium::capture_air`]).
    pub fn take_air(&mut self, into: &mut Vec<AirFrame>) {
        if let Some(air) = self.air.as_mut() {
            into.append(air);
        }
    }

    /// Its parameters.
    pub fn config(&self) -> &ChannelConfig {
        &self.config
    }

    /// Its MAC timing.
    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// Number of radios.
    pub fn radios(&self) -> usize {
        self.radios.len()
    }

    /// The interface of a radio.
    pub fn iface(&self, radio: u32) -> IfaceId {
        self.radios[radio as usize].iface
    }

    /// A radio's counters.
    pub fn radio_stats(&self, radio: u32) -> &RadioStats {
        &self.radios[radio as usize].stats
    }

    /// A radio's drop counters.
    pub fn radio_drops_mut(&mut self, radio: u32) -> &mut DropCounts {
        &mut self.radios[radio as usize].stats.drops
    }

    /// A radio's current data rate.
    pub fn radio_rate(&self, radio: u32) -> Rate {
        self.radios[radio as usize].rate.rate()
    }

    /// Packets waiting in a radio's queue.
    pub fn backlog(&self, radio: u32) -> usize {
        self.radios[radio as usize].queue.len_packets()
    }

    /// The associated AP's radio of a station (`None` for an AP, and for a station not
    /// associated on this channel).
    pub fn ap_of(&self, radio: u32) -> Option<u32> {
        Some(self.radios[radio as usize].ap).filter(|&a| a != NONE)
    }

    /// True if the radio is an access point's.
    pub fn is_ap(&self, radio: u32) -> bool {
        self.radios[radio as usize].is_ap
    }

    /// A radio's management frame counters.
    pub fn mgmt_counts(&self, radio: u32) -> &MgmtCounts {
        &self.radios[radio as usize].mgmt
    }

    /// The signal strength in dBm at radio `rx` of a transmission by radio `tx` at `t`, from
    /// the propagation model and the positions then (what a frame sent at `t` arrives with).
    pub fn rss_dbm_at(&self, tx: u32, rx: u32, t: Instant) -> f64 {
        crate::wlan::propagation::mw_to_dbm(self.gain_at(tx as usize, rx as usize, t))
    }

    /// The first instant after `after` at which the signal strength at `rx` of radio `tx`
    /// crosses `rss_dbm` (either way), computed from the two radios' motion
    /// ([`crate::mobility::Mobility::next_crossing`]): under the channel's path-loss model
    /// (with the pair's fixed shadowing) a signal-strength threshold is a distance threshold.
    pub fn rss_crossing(&self, tx: u32, rx: u32, after: Instant, rss_dbm: f64) -> crate::mobility::Crossing {
        let (i, j) = (tx as usize, rx as usize);
        let loss = self.radios[i].tx_power_dbm - self.shadowing[i][j] - rss_dbm;
        let d = self.path_loss.distance_for_loss(loss, self.freq_hz);
        self.positions.next_crossing(i, j, after, d)
    }

    /// True if the signal strength at `rx` of radio `tx` is below `rss_dbm` at `t`, judged
    /// as [`Medium::rss_crossing`] judges it (by distance), so the two always agree.
    pub fn rss_below(&self, tx: u32, rx: u32, t: Instant, rss_dbm: f64) -> bool {
        let (i, j) = (tx as usize, rx as usize);
        let loss = self.radios[i].tx_power_dbm - self.shadowing[i][j] - rss_dbm;
        let d = self.path_loss.distance_for_loss(loss, self.freq_hz);
        self.positions.at(i, t).distance(&self.positions.at(j, t)) > d
    }

    /// A station's radio is associated with `ap` (a radio on this channel) or with none.
    pub fn set_ap(&mut self, radio: u32, ap: Option<u32>) {
        self.radios[radio as usize].ap = ap.unwrap_or(NONE);
    }

    /// Tune a radio to this channel (`on`) or away from it. Away, it neither receives (a
    /// reception in progress is lost) nor contends; its queued frames stay queued, and the
    /// frame in delivery waits (an ACK it misses meanwhile is a failed attempt, retried).
    /// Back, it senses the medium for DIFS before counting down again.
    pub fn set_enabled(&mut self, radio: u32, on: bool, now: Instant, sched: &mut Scheduler<Event>) {
        let (slot, timing) = (self.timing.slot, self.timing);
        let r = &mut self.radios[radio as usize];
        if r.enabled == on {
            return;
        }
        let was = r.before(now, slot);
        r.enabled = on;
        if on {
            if !r.phys_busy() {
                r.idle_since = r.idle_since.max(now);
            }
            r.eifs = false;
            r.after(false, &timing);
        } else {
            r.rx = NONE;
            r.after(was, &timing);
        }
        self.sync(radio);
        self.schedule_access(now, sched);
    }

    /// Discard every packet a radio holds (queue and frame in delivery) with `reason`;
    /// management frames stay.
    pub fn flush(&mut self, radio: u32, reason: DropReason, now: Instant) {
        let r = &mut self.radios[radio as usize];
        if let Some(cur) = r.current.as_mut() {
            if let Some(p) = cur.pkt.take() {
                self.out.push(Output::Drop(radio, p, reason));
            }
        }
        let r = &mut self.radios[radio as usize];
        while let Some(d) = r.queue.dequeue(now, &mut r.queue_dropped) {
            self.out.push(Output::Drop(radio, d.pkt, reason));
        }
        self.flush_queue_drops(radio);
    }

    /// Send a management frame from `radio` to radio `dst` ([`BROADCAST`]: every radio), ahead
    /// of any queued data frame.
    pub fn send_mgmt(&mut self, radio: u32, dst: u32, kind: MgmtKind, now: Instant, sched: &mut Scheduler<Event>) {
        let r = &mut self.radios[radio as usize];
        if r.current.is_none() && r.mac == Mac::Idle {
            self.start_mgmt(radio, dst, kind, now);
            self.schedule_access(now, sched);
        } else {
            r.mgmt_queue.push_back((kind, dst));
        }
    }

    /// Received power in dBm at radio `rx` of a transmission by radio `tx`.
    pub fn rx_power_dbm(&self, tx: u32, rx: u32) -> f64 {
        crate::wlan::propagation::mw_to_dbm(self.gain[tx as usize][rx as usize])
    }

    /// Add a radio for `iface`; `ap` is the AP's radio for a station ([`Role::Station`]), and
    /// `rng` the radio's stream (backoff and reception draws), `queue_rng` its queue's.
    pub fn add_radio(
        &mut self,
        iface: IfaceId,
        config: &RadioConfig,
        ap: Option<u32>,
        rng: SimRng,
        queue_rng: SimRng,
    ) -> u32 {
        let id = self.radios.len() as u32;
        let top_rate = crate::wlan::rate::RateState::new(config.rate).rate();
        // Propagation over the air is microseconds and depends on distance: none for the queue.
        let ctx = QueueContext {
            rate_bps: top_rate.mbps() as u64 * 1_000_000,
            delay: Duration::ZERO,
            mtu: 2304,
            rng: queue_rng,
        };
        self.radios.push(Radio {
            iface,
            is_ap: matches!(config.role, Role::AccessPoint),
            ap: ap.unwrap_or(NONE),
            enabled: true,
            mgmt_queue: std::collections::VecDeque::new(),
            mgmt: MgmtCounts::default(),
            tx_power_dbm: config.tx_power_dbm,
            rts_threshold: config.rts_threshold,
            short_limit: config.short_retry_limit.max(1),
            long_limit: config.long_retry_limit.max(1),
            cw_min: config.cw_min,
            cw_max: config.cw_max.max(config.cw_min),
            rate: RateState::new(config.rate),
            queue: config.queue.build(ctx),
            queue_dropped: Dropped::new(),
            addrs: Vec::new(),
            rng,
            cs: 0,
            transmitting: false,
            signal_mw: 0.0,
            rx: NONE,
            rx_signal_mw: 0.0,
            rx_interference_mw: 0.0,
            rx_collided: false,
            idle_since: Instant::ZERO,
            nav_end: Instant::ZERO,
            defer_until: Instant::ZERO,
            eifs: false,
            backoff: 0,
            count_from: Instant::ZERO + self.timing.difs,
            cw: config.cw_min,
            mac: Mac::Idle,
            current: None,
            awaiting: None,
            short_retries: 0,
            long_retries: 0,
            next_seq: 0,
            last_seq: Vec::new(),
            response: None,
            respond_gen: 0,
            timeout_gen: 0,
            stats: RadioStats::default(),
        });
        self.positions.push(config.position);
        self.access.push(u64::MAX);
        // Shadowing is drawn once per pair of radios (the same both ways), in the order the
        // radios were added, so it depends only on the channel's stream and the radio order.
        let row: Vec<f64> = (0..id).map(|_| self.config.propagation.shadowing_db(&mut self.shadow_rng)).collect();
        for (i, s) in row.iter().enumerate() {
            self.shadowing[i].push(*s);
        }
        let mut own = row;
        own.push(0.0);
        self.shadowing.push(own);
        self.add_gains(Instant::ZERO);
        for r in &mut self.radios {
            r.last_seq.resize(id as usize + 1, u16::MAX);
        }
        id
    }

    /// Received power in mW at radio `j` of a transmission by radio `i`, from the positions at
    /// `t`.
    fn gain_at(&self, i: usize, j: usize, t: Instant) -> f64 {
        self.gain_from(i, self.positions.at(i, t), j, t)
    }

    /// [`Medium::gain_at`] with radio `i` at `a` (known to the caller).
    fn gain_from(&self, i: usize, a: Position, j: usize, t: Instant) -> f64 {
        if i == j {
            return 0.0;
        }
        self.gain_to_other(i, a, j, t)
    }

    /// [`Medium::gain_from`] for two different radios.
    #[inline]
    fn gain_to_other(&self, i: usize, a: Position, j: usize, t: Instant) -> f64 {
        let b = self.positions.at(j, t);
        let loss = self.path_loss.loss_db(a.distance(&b), self.freq_hz);
        dbm_to_mw(self.radios[i].tx_power_dbm - loss - self.shadowing[i][j])
    }

    /// Extend the table of received powers with the last radio added (radios stand still, so
    /// the table holds for the whole run).
    fn add_gains(&mut self, t: Instant) {
        let n = self.radios.len();
        let last = n - 1;
        for i in 0..last {
            let g = self.gain_at(i, last, t);
            self.gain[i].push(g);
        }
        let row = (0..n).map(|j| self.gain_at(last, j, t)).collect();
        self.gain.push(row);
    }

    /// Radio `radio` moves (or stands) as `mobility` says, from the start of the run.
    pub fn set_mobility(&mut self, radio: u32, mobility: crate::mobility::Mobility) {
        let r = radio as usize;
        self.positions.set_mobility(r, mobility);
        for i in 0..self.radios.len() {
            self.gain[i][r] = self.gain_at(i, r, Instant::ZERO);
            self.gain[r][i] = self.gain_at(r, i, Instant::ZERO);
        }
    }

    /// Set the addresses of a radio's interface (an AP delivers to the station owning a
    /// destination).
    pub fn set_addrs(&mut self, radio: u32, addrs: Vec<Ipv4Addr>) {
        self.radios[radio as usize].addrs = addrs;
    }

    /// The interface of every station associated with `ap` (for routing).
    pub fn stations_of(&self, ap: u32) -> impl Iterator<Item = IfaceId> + '_ {
        self.radios.iter().filter(move |r| r.ap == ap).map(|r| r.iface)
    }

    /// Whether the last call produced anything to take.
    #[inline]
    pub fn has_outputs(&self) -> bool {
        !self.out.is_empty()
    }

    /// Take what the last call produced.
    pub fn take_outputs(&mut self, into: &mut Vec<Output>) {
        into.append(&mut self.out);
    }

    // ------------------------------------------------------------------------------------
    // Inputs
    // ------------------------------------------------------------------------------------

    /// A packet leaves by `radio`: through its queue into its MAC.
    pub fn send(&mut self, radio: u32, pkt: Packet, now: Instant, sched: &mut Scheduler<Event>) {
        let r = &mut self.radios[radio as usize];
        if r.current.is_none() && r.mac == Mac::Idle {
            let next = match r.queue.enqueue_dequeue(pkt, now, &mut r.queue_dropped) {
                Passed::Through(p) => Some(p),
                Passed::Otherwise(arrival, next) => {
                    if let crate::queue::Enqueued::Dropped(p, reason) = arrival {
                        self.out.push(Output::Drop(radio, p, DropReason::Queue(reason)));
                    }
                    next.map(|d| d.pkt)
                }
            };
            self.flush_queue_drops(radio);
            if let Some(p) = next {
                self.start_frame(radio, p, now);
                self.schedule_access(now, sched);
            }
        } else {
            if let crate::queue::Enqueued::Dropped(p, reason) = r.queue.enqueue(pkt, now, &mut r.queue_dropped) {
                self.out.push(Output::Drop(radio, p, DropReason::Queue(reason)));
            }
            self.flush_queue_drops(radio);
        }
    }

    /// A channel event.
    pub fn on_event(&mut self, timer: WlanTimer, arg: u32, gen: u32, now: Instant, sched: &mut Scheduler<Event>) {
        match timer {
            WlanTimer::Access => {
                if gen != self.access_gen {
                    return;
                }
                self.access_at = None;
                self.on_access(now, sched);
            }
            WlanTimer::TxEnd => self.on_tx_end(arg, now, sched),
            WlanTimer::Respond => {
                if self.radios[arg as usize].respond_gen == gen {
                    self.on_respond(arg, now, sched);
                }
            }
            WlanTimer::Timeout => {
                let r = &self.radios[arg as usize];
                if r.timeout_gen == gen && r.awaiting.is_some() {
                    self.finish(arg, false, now);
                }
            }
        }
        self.schedule_access(now, sched);
    }

    // ------------------------------------------------------------------------------------
    // Channel access
    // ------------------------------------------------------------------------------------

    /// Refresh a radio's entry in the access array after a change to it.
    #[inline]
    fn sync(&mut self, radio: u32) {
        let key = self.radios[radio as usize].access_key(self.timing.slot);
        let old = std::mem::replace(&mut self.access[radio as usize], key);
        if key < self.earliest {
            self.earliest = key;
        } else if old == self.earliest && key != old {
            self.earliest_stale = true;
        }
    }

    /// Keep the access event at the earliest backoff end.
    ///
    /// When a response or an ACK timeout of this channel is due before it, that event will
    /// look again, and the earliest backoff end usually moves then (a response makes the
    /// medium busy; a timeout restarts its sender's count): the access event is only decided,
    /// holding its place among simultaneous events with a [`Ticket`], and goes into the event
    /// list when no such event comes first. Events run in the order they would if it had
    /// been scheduled at once; only the ones that would have gone stale are saved.
    fn schedule_access(&mut self, now: Instant, sched: &mut Scheduler<Event>) {
        if self.earliest_stale {
            self.earliest = self.access.iter().fold(u64::MAX, |a, &b| a.min(b));
            self.earliest_stale = false;
        }
        let earliest = self.earliest;
        let next = (earliest != u64::MAX).then(|| Instant(earliest).max(now));
        if next == self.access_at {
            let Some(ticket) = self.access_ticket else { return };
            let at = next.unwrap_or(Instant::MAX);
            if now < self.wake && self.wake < at {
                return;
            }
            self.access_ticket = None;
            let event = Event::Wlan { medium: self.id, timer: WlanTimer::Access, arg: 0, gen: self.access_gen };
            // The ticket was taken before now and `at` is after the wake-up that deferred it.
            let placed = sched.schedule_ticket(at, ticket, event);
            debug_assert!(placed.is_ok(), "a deferred access event's place has passed");
            return;
        }
        self.access_gen = self.access_gen.wrapping_add(1);
        self.access_at = next;
        self.access_ticket = None;
        if let Some(at) = next {
            if now < self.wake && self.wake < at {
                self.access_ticket = Some(sched.ticket());
                return;
            }
            let event = Event::Wlan { medium: self.id, timer: WlanTimer::Access, arg: 0, gen: self.access_gen };
            sched.schedule_in(at - now, event);
        }
    }

    /// Every radio whose counter reaches zero now sends.
    fn on_access(&mut self, now: Instant, sched: &mut Scheduler<Event>) {
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        ready.extend(
            self.access.iter().enumerate().filter(|&(_, &at)| at != u64::MAX && at <= now.0).map(|(i, _)| i as u32),
        );
        for &i in &ready {
            self.begin_attempt(i, now, sched);
        }
        self.ready = ready;
    }

    /// A frame reached the head of the queue at `now`: contend for the medium.
    fn start_frame(&mut self, radio: u32, pkt: Packet, now: Instant) {
        let dst = match self.next_hop(radio, &pkt) {
            Some(d) => d,
            None => {
                self.out.push(Output::Drop(radio, pkt, DropReason::NoRoute));
                return;
            }
        };
        self.contend(radio, dst, pkt.len() + phy::DATA_OVERHEAD, None, Some(pkt), now);
    }

    /// A management frame reached the head of the MAC at `now`: contend for the medium.
    fn start_mgmt(&mut self, radio: u32, dst: u32, kind: MgmtKind, now: Instant) {
        self.contend(radio, dst, kind.bytes(), Some(kind), None, now);
    }

    /// `radio` has a frame of `mpdu` bytes for `dst` (a data frame carrying `pkt`, or a
    /// management frame of `mgmt`'s kind): it takes the next sequence number and contends for
    /// the medium from `now`.
    fn contend(
        &mut self,
        radio: u32,
        dst: u32,
        mpdu: usize,
        mgmt: Option<MgmtKind>,
        pkt: Option<Packet>,
        now: Instant,
    ) {
        let slot = self.timing.slot;
        let r = &mut self.radios[radio as usize];
        let seq = r.next_seq;
        r.next_seq = (r.next_seq + 1) & SEQ_MASK;
        r.current = Some(Outgoing {
            mpdu,
            mgmt,
            pkt,
            dst,
            seq,
            since: now,
            retry: false,
            rts: false,
            data_sent: false,
            overlapped: false,
        });
        r.mac = Mac::Contend;
        if r.idle_at(now) {
            r.settle(now, slot);
        } else if r.backoff == 0 {
            // §10.3.4.3: a frame finding the medium busy waits a random backoff.
            r.draw_backoff();
        }
        self.sync(radio);
    }

    /// Keep a frame `src` starts for the capture.
    #[allow(clippy::too_many_arguments)]
    #[cold]
    fn record_air(
        &mut self,
        src: u32,
        dst: u32,
        kind: Kind,
        rate: Rate,
        nav: Duration,
        seq: u16,
        retry: bool,
        now: Instant,
    ) {
        let r = &self.radios[src as usize];
        let is_ap = |i: u32| i != BROADCAST && self.radios[i as usize].is_ap;
        let bss = if r.is_ap {
            Some(src)
        } else if r.ap != NONE {
            Some(r.ap)
        } else {
            is_ap(dst).then_some(dst)
        };
        let payload = match (kind, r.current.as_ref().and_then(|c| c.pkt.as_ref())) {
            (Kind::Data, Some(p)) => p.bytes.to_vec(),
            _ => Vec::new(),
        };
        let payload = if kind == Kind::Data {
            if self.air_last_data.len() <= src as usize {
                self.air_last_data.resize(src as usize + 1, (0, Vec::new()));
            }
            let last = &mut self.air_last_data[src as usize];
            if payload.is_empty() && last.0 == seq {
                last.1.clone()
            } else {
                *last = (seq, payload.clone());
                payload
            }
        } else {
            payload
        };
        let kind = match kind {
            Kind::Data => AirKind::Data,
            Kind::Ack => AirKind::Ack,
            Kind::Rts => AirKind::Rts,
            Kind::Cts => AirKind::Cts,
            Kind::Mgmt(m) => AirKind::Mgmt(m),
        };
        let rss_dbm = (dst != BROADCAST).then(|| self.rss_dbm_at(src, dst, now));
        let frame =
            AirFrame { at: now, src, dst, bss, from_ap: r.is_ap, kind, rate, nav, seq, retry, rss_dbm, payload };
        if let Some(air) = self.air.as_mut() {
            air.push(frame);
        }
    }

    /// The receiver of a packet leaving by `radio`: its AP, or for an AP the associated
    /// station owning the destination address.
    fn next_hop(&self, radio: u32, pkt: &Packet) -> Option<u32> {
        let r = &self.radios[radio as usize];
        if r.ap != NONE {
            return Some(r.ap);
        }
        if !r.is_ap {
            return None;
        }
        let dst = pkt.ip()?.dst();
        self.radios.iter().position(|s| s.ap == radio && s.addrs.contains(&dst)).map(|i| i as u32)
    }

    /// Take the next packet from the queue, if any, as the current frame.
    fn next_frame(&mut self, radio: u32, now: Instant) {
        if let Some((kind, dst)) = self.radios[radio as usize].mgmt_queue.pop_front() {
            self.start_mgmt(radio, dst, kind, now);
            return;
        }
        loop {
            let r = &mut self.radios[radio as usize];
            let next = r.queue.dequeue(now, &mut r.queue_dropped);
            self.flush_queue_drops(radio);
            let Some(d) = next else {
                self.radios[radio as usize].mac = Mac::Idle;
                self.sync(radio);
                return;
            };
            self.start_frame(radio, d.pkt, now);
            if self.radios[radio as usize].current.is_some() {
                return;
            }
        }
    }

    fn flush_queue_drops(&mut self, radio: u32) {
        let r = &mut self.radios[radio as usize];
        for (p, reason) in r.queue_dropped.drain(..) {
            self.out.push(Output::Drop(radio, p, DropReason::Queue(reason)));
        }
    }

    /// Its counter reached zero: send RTS or DATA.
    fn begin_attempt(&mut self, radio: u32, now: Instant, sched: &mut Scheduler<Event>) {
        let basic = self.config.basic_rates;
        let sifs = self.timing.sifs;
        let r = &mut self.radios[radio as usize];
        let Some(cur) = r.current.as_mut() else { return };
        let mpdu = cur.mpdu;
        cur.data_sent = false;
        cur.overlapped = false;
        r.mac = Mac::Exchange;
        if let Some(kind) = cur.mgmt {
            // Management frames go at the lowest basic rate, without RTS/CTS (see `mgmt`);
            // a group-addressed one is not acknowledged and sets no NAV (§10.3.6).
            let (dst, seq, retry) = (cur.dst, cur.seq, cur.retry);
            cur.rts = false;
            cur.data_sent = true;
            r.mgmt.sent(kind);
            let rate = Rate::R6;
            let nav = if dst == BROADCAST {
                r.awaiting = None;
                Duration::ZERO
            } else {
                r.awaiting = Some(Kind::Ack);
                sifs + phy::frame_duration(phy::ACK_BYTES, basic.response_rate(rate))
            };
            self.start_tx(radio, Kind::Mgmt(kind), dst, rate, mpdu, nav, seq, retry, now, sched);
            return;
        }
        let rate = r.rate.rate();
        cur.rts = r.rts_threshold.is_some_and(|th| mpdu > th);
        if cur.retry {
            r.stats.retries += 1;
        }
        let control = basic.response_rate(rate);
        let ack = phy::frame_duration(phy::ACK_BYTES, control);
        let (dst, seq, retry) = (cur.dst, cur.seq, cur.retry);
        if cur.rts {
            // §10.3.2.9 / §9.2.5.2: RTS Duration covers CTS, DATA, ACK and three SIFS.
            let cts = phy::frame_duration(phy::CTS_BYTES, control);
            let nav = sifs + cts + sifs + phy::frame_duration(mpdu, rate) + sifs + ack;
            r.stats.tx_rts += 1;
            r.awaiting = Some(Kind::Cts);
            self.start_tx(radio, Kind::Rts, dst, control, phy::RTS_BYTES, nav, seq, retry, now, sched);
        } else {
            r.stats.tx_data += 1;
            cur.data_sent = true;
            r.awaiting = Some(Kind::Ack);
            self.start_tx(radio, Kind::Data, dst, rate, mpdu, sifs + ack, seq, retry, now, sched);
        }
    }

    // ------------------------------------------------------------------------------------
    // Physical layer
    // ------------------------------------------------------------------------------------

    #[allow(clippy::too_many_arguments)]
    fn start_tx(
        &mut self,
        src: u32,
        kind: Kind,
        dst: u32,
        rate: Rate,
        bytes: usize,
        nav: Duration,
        seq: u16,
        retry: bool,
        now: Instant,
        sched: &mut Scheduler<Event>,
    ) {
        let (slot, timing) = (self.timing.slot, self.timing);
        let end = phy::frame_duration(bytes, rate);
        let overlapped = self.on_air > 0;
        if overlapped {
            for tx in self.txs.iter_mut().flatten() {
                tx.overlapped = true;
            }
        } else {
            self.busy_since = now;
        }
        self.on_air += 1;
        self.stats.frames += 1;
        if self.air.is_some() {
            self.record_air(src, dst, kind, rate, nav, seq, retry, now);
        }
        let tx = Tx { src, dst, kind, rate, bits: 8 * bytes as u64, nav, seq, retry, overlapped };
        let id = match self.free.pop() {
            Some(i) => {
                self.txs[i as usize] = Some(tx);
                i
            }
            None => {
                self.txs.push(Some(tx));
                self.txs.len() as u32 - 1
            }
        };
        {
            let r = &mut self.radios[src as usize];
            let was = r.before(now, slot);
            r.transmitting = true;
            r.rx = NONE; // half duplex: a reception in progress is lost
            r.stats.tx_frames += 1;
            r.after(was, &timing);
        }
        self.sync(src);
        if self.positions.any_moving() {
            // Received powers from the positions now; the row stays for the frame's end (a
            // radio has one transmission on the air at a time). Only pairs with a moving radio
            // change: between two radios that stand still the power is the one computed when
            // they were added.
            let s = src as usize;
            if self.positions.is_moving(s) {
                let at = self.positions.at(s, now);
                let mut row = std::mem::take(&mut self.gain[s]);
                // Every entry, then its own (zero) apart: no test for it on the way.
                for (j, g) in row.iter_mut().enumerate() {
                    *g = self.gain_to_other(s, at, j, now);
                }
                row[s] = 0.0;
                self.gain[s] = row;
            } else {
                let at = self.positions.at(s, now);
                for k in 0..self.positions.movers().len() {
                    // A mover, so not the (stationary) sender.
                    let j = self.positions.movers()[k];
                    self.gain[s][j] = self.gain_to_other(s, at, j, now);
                }
            }
        }
        let (capture, cca_mw) = (self.capture_ratio, self.cca_mw);
        let n = self.radios.len();
        let (radios, access) = (&mut self.radios[..], &mut self.access[..n]);
        let gains = &self.gain[src as usize][..n];
        // Every entry of `access` passes here, so the earliest is found on the way. The sender
        // goes through the loop like the others: its own power at itself is zero, below the
        // CCA threshold, and its reception was dropped above, so only its entry counts (no
        // test for it in the loop: the sender's place changes from frame to frame, and a
        // branch on it is mispredicted every time).
        debug_assert!(gains[src as usize] == 0.0 && cca_mw > 0.0 && radios[src as usize].rx == NONE);
        let mut earliest = u64::MAX;
        for j in 0..n {
            let (r, p) = (&mut radios[j], gains[j]);
            r.signal_mw += p;
            if p >= cca_mw {
                r.before(now, slot);
                r.cs += 1;
                // A radio tuned away ([`Medium::set_enabled`]) senses but does not receive.
                if !r.transmitting && r.enabled {
                    if r.rx == NONE {
                        r.rx = id;
                        r.rx_signal_mw = p;
                        r.rx_interference_mw = r.signal_mw - p;
                        r.rx_collided = false;
                    } else if capture.is_some_and(|c| r.rx_signal_mw >= c * p) {
                        r.rx_interference_mw = r.rx_interference_mw.max(r.signal_mw - r.rx_signal_mw);
                    } else {
                        r.rx_collided = true;
                    }
                }
                // Physically busy now: no count restarts (`Radio::after`), no access.
                access[j] = u64::MAX;
            } else {
                if r.rx != NONE {
                    r.rx_interference_mw = r.rx_interference_mw.max(r.signal_mw - r.rx_signal_mw);
                }
                earliest = earliest.min(access[j]);
            }
        }
        self.earliest = earliest;
        self.earliest_stale = false;
        let event = Event::Wlan { medium: self.id, timer: WlanTimer::TxEnd, arg: id, gen: 0 };
        sched.schedule_in(end, event);
    }

    fn on_tx_end(&mut self, id: u32, now: Instant, sched: &mut Scheduler<Event>) {
        let Some(tx) = self.txs.get_mut(id as usize).and_then(Option::take) else { return };
        self.free.push(id);
        self.on_air -= 1;
        if self.on_air == 0 {
            self.stats.busy = self.stats.busy + (now - self.busy_since);
        }
        if tx.overlapped {
            self.stats.collisions += 1;
        }
        let (slot, timing) = (self.timing.slot, self.timing);
        {
            let r = &mut self.radios[tx.src as usize];
            let was = r.before(now, slot);
            r.transmitting = false;
            if r.cs == 0 {
                r.idle_since = now;
            }
            if matches!(tx.kind, Kind::Ack | Kind::Cts) {
                // The response is out: back to counting unless in an exchange of its own.
                r.defer_until = if r.mac == Mac::Exchange { Instant::MAX } else { Instant::ZERO };
            } else if let Some(cur) = r.current.as_mut() {
                cur.overlapped |= tx.overlapped;
            }
            r.after(was, &timing);
        }
        self.sync(tx.src);
        let mut addressed = None;
        let (noise, on_air, cca_mw) = (self.noise_mw, self.on_air, self.cca_mw);
        let sensitivity = self.sensitivity_mw[tx.rate as usize];
        let src = tx.src as usize;
        let n = self.radios.len();
        let (radios, access) = (&mut self.radios[..], &mut self.access[..n]);
        let (gains, reception) = (&self.gain[src][..n], &mut self.reception);
        // The sender goes through the loop like the others (as in `start_tx`), but for its
        // total power, which it keeps as it was.
        let src_signal_mw = radios[src].signal_mw;
        let (has_nav, nav_until) = (tx.nav > Duration::ZERO, now.saturating_add(tx.nav));
        let mut earliest = u64::MAX;
        for j in 0..n {
            let (r, p) = (&mut radios[j], gains[j]);
            r.signal_mw = if on_air == 0 { 0.0 } else { (r.signal_mw - p).max(0.0) };
            let mut received = false;
            if p >= cca_mw {
                // It counted this frame since its start, so it was busy until now: not
                // counting, nothing to settle (`Radio::before` would say false).
                debug_assert!(r.cs > 0 && !r.idle_at(now));
                r.cs -= 1;
                if r.rx == id {
                    r.rx = NONE;
                    received = if r.rx_collided {
                        r.stats.rx_collisions += 1;
                        false
                    } else if p < sensitivity {
                        r.stats.rx_errors += 1;
                        false
                    } else {
                        let noise_mw = noise + r.rx_interference_mw;
                        let ok = reception.arrives_at(tx.rate, p, noise_mw, tx.bits, || r.rng.random::<f64>());
                        if !ok {
                            r.stats.rx_errors += 1;
                        }
                        ok
                    };
                    r.eifs = !received;
                    if received {
                        r.stats.rx_ok += 1;
                        if let (Kind::Mgmt(kind), BROADCAST) = (tx.kind, tx.dst) {
                            r.mgmt.received(kind);
                            let rss_dbm = crate::wlan::propagation::mw_to_dbm(p);
                            self.out.push(Output::Mgmt { radio: j as u32, from: tx.src, kind, rss_dbm });
                        }
                        // §10.3.2.4: a frame for another station sets the NAV. A select
                        // rather than a branch: which radio is the receiver changes from
                        // frame to frame.
                        let sets_nav = (tx.dst != j as u32) & has_nav;
                        r.nav_end = if sets_nav { r.nav_end.max(nav_until) } else { r.nav_end };
                    }
                }
                if r.cs == 0 && !r.transmitting {
                    r.idle_since = now;
                }
                r.after(false, &timing);
                access[j] = r.access_key(slot);
            }
            earliest = earliest.min(access[j]);
            if tx.dst == j as u32 {
                addressed = Some(received);
            }
        }
        radios[src].signal_mw = src_signal_mw;
        self.earliest = earliest;
        self.earliest_stale = false;
        let mut answered = false;
        if let Some(ok) = addressed {
            answered = self.on_addressed(&tx, ok, now, sched);
        }
        if let (Kind::Mgmt(_), BROADCAST) = (tx.kind, tx.dst) {
            // Group-addressed: done when it is out (§10.3.6).
            self.finish(tx.src, true, now);
            return;
        }
        if matches!(tx.kind, Kind::Data | Kind::Rts | Kind::Mgmt(_)) && !answered {
            // Nothing will answer: the attempt fails at ACKTimeout / CTSTimeout (§10.3.2.11).
            let r = &mut self.radios[tx.src as usize];
            r.timeout_gen = r.timeout_gen.wrapping_add(1);
            let event = Event::Wlan { medium: self.id, timer: WlanTimer::Timeout, arg: tx.src, gen: r.timeout_gen };
            sched.schedule_in(self.timing.ack_timeout, event);
            self.wake = self.wake.max(now + self.timing.ack_timeout);
        }
    }

    /// The destination of `tx` received it (`ok`) or not. Returns whether a response to a DATA
    /// or RTS frame will be sent.
    fn on_addressed(&mut self, tx: &Tx, ok: bool, now: Instant, sched: &mut Scheduler<Event>) -> bool {
        let j = tx.dst;
        let basic = self.config.basic_rates;
        match tx.kind {
            Kind::Mgmt(kind) => {
                if !ok {
                    return false;
                }
                let r = &mut self.radios[j as usize];
                if !(tx.retry && r.last_seq[tx.src as usize] == tx.seq) {
                    r.last_seq[tx.src as usize] = tx.seq;
                    r.mgmt.received(kind);
                    let rss_dbm = crate::wlan::propagation::mw_to_dbm(self.gain[tx.src as usize][j as usize]);
                    self.out.push(Output::Mgmt { radio: j, from: tx.src, kind, rss_dbm });
                }
                self.respond(j, Response::Ack { to: tx.src, rate: basic.response_rate(tx.rate) }, now, sched);
                true
            }
            Kind::Data => {
                if !ok {
                    return false;
                }
                let last = self.radios[j as usize].last_seq[tx.src as usize];
                if tx.retry && last == tx.seq {
                    self.radios[j as usize].stats.rx_duplicates += 1;
                } else {
                    self.radios[j as usize].last_seq[tx.src as usize] = tx.seq;
                    let pkt = self.radios[tx.src as usize].current.as_mut().and_then(|c| c.pkt.take());
                    if let Some(pkt) = pkt {
                        self.radios[j as usize].stats.rx_data += 1;
                        self.out.push(Output::Deliver(j, pkt));
                    }
                }
                self.respond(j, Response::Ack { to: tx.src, rate: basic.response_rate(tx.rate) }, now, sched);
                true
            }
            Kind::Rts => {
                let r = &self.radios[j as usize];
                // §10.3.2.9: CTS only if the NAV is idle (and the radio is not busy with an
                // exchange of its own).
                if !ok || r.nav_end > now || r.mac == Mac::Exchange || r.response.is_some() {
                    return false;
                }
                let rate = basic.response_rate(tx.rate);
                let cts = phy::frame_duration(phy::CTS_BYTES, rate);
                let nav = Duration(tx.nav.0.saturating_sub((self.timing.sifs + cts).0));
                self.respond(j, Response::Cts { to: tx.src, rate, nav }, now, sched);
                true
            }
            Kind::Cts => {
                let r = &self.radios[j as usize];
                if r.awaiting != Some(Kind::Cts) || r.current.as_ref().is_none_or(|c| c.dst != tx.src) {
                    return false;
                }
                if ok {
                    self.radios[j as usize].awaiting = None;
                    self.respond(j, Response::Data, now, sched);
                } else {
                    self.finish(j, false, now);
                }
                false
            }
            Kind::Ack => {
                let r = &self.radios[j as usize];
                if r.awaiting != Some(Kind::Ack) || r.current.as_ref().is_none_or(|c| c.dst != tx.src) {
                    return false;
                }
                self.finish(j, ok, now);
                false
            }
        }
    }

    /// Send `what` SIFS from now; the radio does not contend meanwhile.
    fn respond(&mut self, radio: u32, what: Response, now: Instant, sched: &mut Scheduler<Event>) {
        let (slot, timing) = (self.timing.slot, self.timing);
        let r = &mut self.radios[radio as usize];
        let was = r.before(now, slot);
        r.defer_until = Instant::MAX;
        r.after(was, &timing);
        r.response = Some(what);
        r.respond_gen = r.respond_gen.wrapping_add(1);
        let event = Event::Wlan { medium: self.id, timer: WlanTimer::Respond, arg: radio, gen: r.respond_gen };
        self.sync(radio);
        sched.schedule_in(self.timing.sifs, event);
        self.wake = self.wake.max(now + self.timing.sifs);
    }

    fn on_respond(&mut self, radio: u32, now: Instant, sched: &mut Scheduler<Event>) {
        let basic = self.config.basic_rates;
        let sifs = self.timing.sifs;
        let r = &mut self.radios[radio as usize];
        let Some(what) = r.response.take() else { return };
        if !r.enabled {
            // Tuned away meanwhile: the response is not sent. The frame it answered fails at
            // its sender's ACK/CTS timeout; its own data frame after a CTS fails at once.
            let slot = self.timing.slot;
            let timing = self.timing;
            let was = r.before(now, slot);
            r.defer_until = if r.mac == Mac::Exchange { Instant::MAX } else { Instant::ZERO };
            r.after(was, &timing);
            self.sync(radio);
            match what {
                Response::Ack { to, .. } | Response::Cts { to, .. } => {
                    let s = &mut self.radios[to as usize];
                    s.timeout_gen = s.timeout_gen.wrapping_add(1);
                    let event = Event::Wlan { medium: self.id, timer: WlanTimer::Timeout, arg: to, gen: s.timeout_gen };
                    let after = Duration(timing.ack_timeout.0.saturating_sub(sifs.0));
                    self.wake = self.wake.max(now + after);
                    sched.schedule_in(after, event);
                }
                Response::Data => self.finish(radio, false, now),
            }
            return;
        }
        match what {
            Response::Ack { to, rate } => {
                r.stats.tx_ack += 1;
                self.start_tx(radio, Kind::Ack, to, rate, phy::ACK_BYTES, Duration::ZERO, 0, false, now, sched);
            }
            Response::Cts { to, rate, nav } => {
                r.stats.tx_cts += 1;
                self.start_tx(radio, Kind::Cts, to, rate, phy::CTS_BYTES, nav, 0, false, now, sched);
            }
            Response::Data => {
                let rate = r.rate.rate();
                let Some(cur) = r.current.as_mut() else { return };
                cur.data_sent = true;
                let mpdu = cur.mpdu;
                let ack = phy::frame_duration(phy::ACK_BYTES, basic.response_rate(rate));
                let (dst, seq, retry) = (cur.dst, cur.seq, cur.retry);
                r.stats.tx_data += 1;
                r.awaiting = Some(Kind::Ack);
                self.start_tx(radio, Kind::Data, dst, rate, mpdu, sifs + ack, seq, retry, now, sched);
            }
        }
    }

    /// The current attempt of `radio` ended: acknowledged (`ok`) or failed.
    fn finish(&mut self, radio: u32, ok: bool, now: Instant) {
        let (slot, timing) = (self.timing.slot, self.timing);
        let r = &mut self.radios[radio as usize];
        r.awaiting = None;
        r.timeout_gen = r.timeout_gen.wrapping_add(1);
        let Some(mut cur) = r.current.take() else { return };
        if let Some(kind) = cur.mgmt {
            // A management frame: acknowledged (or group-addressed and out), or retried up to
            // the short retry limit, without touching the data frames' counters and rate.
            if ok || r.short_retries + 1 >= r.short_limit {
                r.cw = r.cw_min;
                r.short_retries = 0;
                self.out.push(Output::MgmtDone { radio, kind, delivered: ok });
            } else {
                r.short_retries += 1;
                r.cw = (2 * r.cw + 1).min(r.cw_max);
                cur.retry = true;
                r.current = Some(cur);
            }
        } else if ok {
            r.stats.tx_acked += 1;
            r.stats.mac_delay.record(now - cur.since);
            r.rate.on_success();
            r.cw = r.cw_min;
            r.short_retries = 0;
            r.long_retries = 0;
        } else {
            r.stats.tx_failed += 1;
            if cur.overlapped {
                r.stats.tx_collisions += 1;
            }
            r.rate.on_failure();
            if cur.rts && cur.data_sent {
                r.long_retries += 1;
            } else {
                r.short_retries += 1;
            }
            r.cw = (2 * r.cw + 1).min(r.cw_max);
            if r.short_retries >= r.short_limit || r.long_retries >= r.long_limit {
                // §10.3.4.4: the retry limit is reached; the frame is discarded.
                r.stats.retry_limit_drops += 1;
                r.cw = r.cw_min;
                r.short_retries = 0;
                r.long_retries = 0;
                if let Some(pkt) = cur.pkt.take() {
                    self.out.push(Output::Drop(radio, pkt, DropReason::RetryLimit));
                }
            } else {
                cur.retry = true;
                r.current = Some(cur);
            }
        }
        let r = &mut self.radios[radio as usize];
        let was = r.before(now, slot);
        // The count restarts DIFS after the end of the exchange at the earliest (after an
        // ACKTimeout: DIFS after the timeout).
        r.defer_until = now;
        r.after(was, &timing);
        r.draw_backoff();
        if r.current.is_some() {
            r.mac = Mac::Contend;
        } else {
            r.mac = Mac::Idle;
            self.next_frame(radio, now);
        }
        self.sync(radio);
    }
}
