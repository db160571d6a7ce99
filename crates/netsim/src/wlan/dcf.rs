//! The per-radio state of the DCF (IEEE 802.11-2020 §10.3): carrier sense as the radio sees
//! it, its backoff counter kept without per-slot events, and the frame its MAC is delivering.
//! The channel ([`crate::wlan::medium`]) drives it; see there for the procedures.

use std::net::Ipv4Addr;

use rand::Rng;

use crate::event::DropCounts;
use crate::ids::IfaceId;
use crate::queue::{Dropped, Queue};
use crate::rng::SimRng;
use crate::stats::DelayStats;
use crate::time::{Duration, Instant};
use crate::wire::Packet;
use crate::wlan::medium::Kind;
use crate::wlan::mgmt::{MgmtCounts, MgmtKind};
use crate::wlan::phy::{Rate, Timing};
use crate::wlan::rate::RateState;

/// A frame a radio's MAC is trying to deliver.
#[derive(Debug)]
pub(crate) struct Outgoing {
    /// The packet, until the receiver has it.
    pub(crate) pkt: Option<Packet>,
    /// A management frame instead of a data frame (no packet then).
    pub(crate) mgmt: Option<MgmtKind>,
    /// MPDU length in bytes.
    pub(crate) mpdu: usize,
    pub(crate) dst: u32,
    pub(crate) seq: u16,
    /// When it reached the head of the queue (MAC delay starts).
    pub(crate) since: Instant,
    /// It has been sent before (the Retry bit).
    pub(crate) retry: bool,
    /// The current attempt uses RTS/CTS.
    pub(crate) rts: bool,
    /// In the current attempt, the data frame itself went out (after CTS).
    pub(crate) data_sent: bool,
    /// The current attempt's frame overlapped another transmission.
    pub(crate) overlapped: bool,
}

/// What a radio sends SIFS after a frame.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Response {
    Ack {
        to: u32,
        rate: Rate,
    },
    Cts {
        to: u32,
        rate: Rate,
        nav: Duration,
    },
    /// Its own data frame, after the CTS.
    Data,
}

/// Where a radio's MAC is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mac {
    /// No frame to send (post-backoff may be counting).
    Idle,
    /// A frame waits for the backoff to end.
    Contend,
    /// In a frame exchange: sending, waiting SIFS for its own next frame, or for a response.
    Exchange,
}

/// Counters of one radio, reported per interface.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct RadioStats {
    /// Frames locked onto and received whole (any destination). First: counted at every
    /// radio for every frame, beside the radio's per-frame state.
    pub rx_ok: u64,
    /// Data frames sent (every attempt).
    pub tx_data: u64,
    /// Data frames acknowledged.
    pub tx_acked: u64,
    /// Retransmissions (attempts after the first, data or RTS).
    pub retries: u64,
    /// Attempts that failed (no CTS or ACK).
    pub tx_failed: u64,
    /// Failed attempts whose frame overlapped another transmission on the channel.
    pub tx_collisions: u64,
    /// RTS frames sent.
    pub tx_rts: u64,
    /// CTS frames sent.
    pub tx_cts: u64,
    /// ACK frames sent.
    pub tx_ack: u64,
    /// Frames of any kind sent.
    pub tx_frames: u64,
    /// Data frames received whole and new (delivered).
    pub rx_data: u64,
    /// Data frames received whole that were retransmissions of one already delivered.
    pub rx_duplicates: u64,
    /// Frames locked onto that collided with another transmission.
    pub rx_collisions: u64,
    /// Frames locked onto and lost to noise or weak signal.
    pub rx_errors: u64,
    /// Frames dropped at the retry limit (whether or not their packet had been delivered).
    pub retry_limit_drops: u64,
    /// From head of the queue to the ACK, per acknowledged frame.
    pub mac_delay: DelayStats,
    /// Packets dropped at the interface (queue, retry limit, no station for the destination).
    pub drops: DropCounts,
}

/// One radio: PHY and MAC state of a WLAN interface.
///
/// Laid out in the order written (`repr(C)`): what the channel reads and writes for every
/// radio at every frame's start and end comes first, with the reception counter, so that it
/// takes two cache lines rather than the three or four the compiler's order spread it over.
#[repr(C)]
pub(crate) struct Radio {
    // --- the per-frame part: PHY and channel access (largest fields first, no padding) ---
    /// Total power of every transmission on the air here, mW.
    pub(crate) signal_mw: f64,
    pub(crate) rx_signal_mw: f64,
    pub(crate) rx_interference_mw: f64,
    /// When the physical medium last went idle here.
    pub(crate) idle_since: Instant,
    /// NAV: the medium is virtually busy until then.
    pub(crate) nav_end: Instant,
    /// The MAC does not count before then (`Instant::MAX` while in an exchange).
    pub(crate) defer_until: Instant,
    /// While idle: when the current counter value started counting.
    pub(crate) count_from: Instant,
    /// Transmissions at or above the CCA threshold on the air here (not its own).
    pub(crate) cs: u32,
    /// The transmission it is locked onto, or `NONE`.
    pub(crate) rx: u32,
    /// Backoff counter.
    pub(crate) backoff: u32,
    pub(crate) transmitting: bool,
    pub(crate) rx_collided: bool,
    /// The last frame received was errored: the next idle period starts with EIFS.
    pub(crate) eifs: bool,
    /// Tuned to this channel: it receives and contends only then (a station that scans or
    /// roams has a radio on each channel it visits, one tuned at a time).
    pub(crate) enabled: bool,
    pub(crate) mac: Mac,
    /// Counters, the reception count first (per frame, with the above).
    pub(crate) stats: RadioStats,
    // --- the rest ---
    pub(crate) iface: IfaceId,
    /// An access point's radio.
    pub(crate) is_ap: bool,
    /// The AP's radio for an associated station; `NONE` for an AP or a station associated
    /// with no AP on this channel.
    pub(crate) ap: u32,
    /// Management frames waiting to be sent (before any data frame), with their receiver.
    pub(crate) mgmt_queue: std::collections::VecDeque<(MgmtKind, u32)>,
    /// Management frames sent and received.
    pub(crate) mgmt: MgmtCounts,
    pub(crate) tx_power_dbm: f64,
    pub(crate) rts_threshold: Option<usize>,
    pub(crate) short_limit: u32,
    pub(crate) long_limit: u32,
    pub(crate) cw_min: u32,
    pub(crate) cw_max: u32,
    pub(crate) rate: RateState,
    pub(crate) queue: Queue,
    pub(crate) queue_dropped: Dropped,
    /// Its interface's addresses (an AP finds the station owning a destination here).
    pub(crate) addrs: Vec<Ipv4Addr>,
    pub(crate) rng: SimRng,
    pub(crate) cw: u32,
    // --- MAC ---
    pub(crate) current: Option<Outgoing>,
    /// Waiting for a response of this kind to its own frame.
    pub(crate) awaiting: Option<Kind>,
    pub(crate) short_retries: u32,
    pub(crate) long_retries: u32,
    pub(crate) next_seq: u16,
    /// Last sequence number received from each radio (`u16::MAX`: none).
    pub(crate) last_seq: Vec<u16>,
    pub(crate) response: Option<Response>,
    pub(crate) respond_gen: u32,
    pub(crate) timeout_gen: u32,
}

impl Radio {
    #[inline]
    pub(crate) fn phys_busy(&self) -> bool {
        self.cs > 0 || self.transmitting
    }

    /// Counting its backoff at `t`: physically idle, NAV idle, not deferring.
    #[inline]
    pub(crate) fn idle_at(&self, t: Instant) -> bool {
        self.enabled && !self.phys_busy() && self.nav_end <= t && self.defer_until <= t
    }

    /// Subtract the idle slots elapsed by `t` from the counter.
    #[inline]
    pub(crate) fn settle(&mut self, t: Instant, slot: Duration) {
        if self.backoff > 0 && t > self.count_from {
            let elapsed = (t - self.count_from).0;
            // The two slot times spelt out: dividing by a constant is a multiplication.
            let slots = match slot.0 {
                9_000 => elapsed / 9_000,
                20_000 => elapsed / 20_000,
                other => elapsed / other,
            };
            let k = (slots as u32).min(self.backoff);
            self.backoff -= k;
            self.count_from += Duration(slot.0 * k as u64);
        }
    }

    /// Before a change at `t`: settle the counter if it was counting. Returns whether it was.
    #[inline]
    pub(crate) fn before(&mut self, t: Instant, slot: Duration) -> bool {
        let idle = self.idle_at(t);
        if idle {
            self.settle(t, slot);
        }
        idle
    }

    /// After a change: where counting (re)starts, if the medium is physically idle.
    #[inline]
    pub(crate) fn after(&mut self, was_idle: bool, timing: &Timing) {
        if self.phys_busy() {
            return;
        }
        let ifs = if self.eifs { timing.eifs } else { timing.difs };
        let base = self.idle_since.max(self.nav_end).max(self.defer_until).saturating_add(ifs);
        self.count_from = if was_idle { self.count_from.max(base) } else { base };
    }

    /// When its counter reaches zero with a frame to send (`u64::MAX`: it is not counting),
    /// in nanoseconds; it sends then, or at once if that is already past.
    #[inline]
    pub(crate) fn access_key(&self, slot: Duration) -> u64 {
        if self.mac != Mac::Contend || self.phys_busy() || !self.enabled {
            return u64::MAX;
        }
        self.count_from.saturating_add(Duration(slot.0 * self.backoff as u64)).0
    }

    pub(crate) fn draw_backoff(&mut self) {
        self.backoff = self.rng.random_range(0..=self.cw);
    }
}
