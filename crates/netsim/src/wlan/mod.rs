//! IEEE 802.11g wireless LANs: a shared medium per channel, the ERP-OFDM PHY and the DCF MAC
//! (IEEE 802.11-2020 Clause 10.3, Clauses 17 and 18).
//!
//! - [`phy`]: rates, frame durations, interframe spaces.
//! - [`propagation`]: path loss, shadowing, dBm/mW; [`position`]: where radios are.
//! - [`error`]: frame success from SINR (NIST OFDM error model); [`reception`]: the draw
//!   against it, decided from bounds kept per SINR cell.
//! - [`rate`]: fixed rate, ARF, AARF.
//! - `dcf`: a radio's DCF state (carrier sense, backoff counter, the frame in delivery).
//! - [`medium`]: one channel: every radio on it, what each hears, carrier sense, receptions,
//!   collisions, and the DCF of each radio (backoff, NAV, ACK, RTS/CTS, retries, duplicates),
//!   management frames among them (ahead of data; group-addressed ones unacknowledged).
//! - [`mgmt`]: management frame subtypes and their sizes (§9.3.3).
//! - [`sme`]: beacons at TBTTs, scanning, authentication and association, roaming on signal
//!   strength, the leases APs give stations.
//!
//! A WLAN interface is attached to a channel ([`crate::network::Attachment::Wlan`]); packets
//! it sends pass its queue discipline (drop-tail 50 by default) into its MAC. Infrastructure
//! mode: an access point is a radio on a router node, which bridges its BSS to its wired
//! links by routing (one subnet per AP), and sends to the associated station owning a
//! packet's destination address. A station is associated in one of two ways ([`Role`]):
//! statically, with an AP from the start ([`Role::Station`]: no management frame is
//! exchanged, so timing and throughput tests see data frames only), or by itself
//! ([`Role::Roaming`], [`sme`]): it scans, authenticates and associates with frames on the
//! medium, gets an address from its AP, and roams; its interface goes up and down and gains
//! and loses addresses as it does, and the node's agents are told
//! ([`crate::event::IfaceEvent`]). An AP sends beacons if it has a beacon interval.
//!
//! Time: propagation delay over the air is taken as zero (a few hundred metres are about
//! 1 us, far below a 9 us slot, whose budget includes aAirPropagationTime, §10.3.2.3.1), so a
//! transmission starts and ends at the same instant at every radio. No event is scheduled per
//! backoff slot: a radio's backoff end is computed from when the medium went idle, and the
//! channel keeps one access event at the earliest backoff end, rescheduled only when the
//! medium changes.

mod dcf;
pub mod error;
pub mod medium;
pub mod mgmt;
pub mod phy;
pub mod position;
pub mod propagation;
pub mod radiotap;
pub mod rate;
pub mod reception;
pub mod sme;

pub use dcf::RadioStats;
pub use medium::{ChannelStats, Medium};
pub use phy::{BasicRates, EifsAck, Rate, SlotTime, Timing};
pub use position::Position;
pub use propagation::{PathLoss, Propagation};
pub use rate::RateControl;

use crate::queue::{QueueConfig, QueueLimit};

/// Parameters of a channel (a shared medium).
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelConfig {
    /// Channel number, 1..=13 (sets the centre frequency).
    pub channel: u8,
    /// Slot time.
    pub slot: SlotTime,
    /// The rate `AckTxTime` of EIFS is computed at.
    pub eifs_ack: EifsAck,
    /// The basic rate set (rates of control responses).
    pub basic_rates: BasicRates,
    /// Propagation model.
    pub propagation: Propagation,
    /// Background noise in dBm over the 20 MHz channel (default -93.97: thermal noise
    /// -174 dBm/Hz + 10 log10(20 MHz) + a 7 dB noise figure, as ns-3's default).
    pub noise_floor_dbm: f64,
    /// Clear channel assessment threshold in dBm: a transmission received at or above it makes
    /// the medium busy and is a frame the radio can lock onto (§17.3.10.6: the start of a valid
    /// OFDM transmission at the 6 Mbit/s sensitivity, -82 dBm). Below it, a signal is only
    /// interference.
    pub cca_threshold_dbm: f64,
    /// Capture: a frame survives an overlapping transmission whose power at the receiver is at
    /// least this many dB lower. `None` (the default): any overlap above the CCA threshold
    /// destroys both.
    pub capture_threshold_db: Option<f64>,
    /// Reception threshold in dBm for every rate: a frame received below it is lost. `None`
    /// (the default): each rate's minimum input sensitivity of §17.3.10.2, Table 17-18 (-82
    /// dBm at 6 Mbit/s to -65 dBm at 54 Mbit/s). A single threshold is what simulators such
    /// as INET configure (`receiver.sensitivity`); frames above it still pass the error model.
    pub sensitivity_dbm: Option<f64>,
}

impl Default for ChannelConfig {
    fn default() -> Self {
        ChannelConfig {
            channel: 1,
            slot: SlotTime::Short,
            eifs_ack: EifsAck::Dsss1,
            basic_rates: BasicRates::default(),
            propagation: Propagation::default(),
            noise_floor_dbm: -174.0 + 10.0 * 20e6f64.log10() + 7.0,
            cca_threshold_dbm: -82.0,
            capture_threshold_db: None,
            sensitivity_dbm: None,
        }
    }
}

/// What a radio is in its BSS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// An access point: sends to the associated station owning a packet's destination.
    AccessPoint,
    /// A station associated with the AP whose radio is on this interface.
    Station {
        /// The AP's interface (on the same channel).
        ap: crate::ids::IfaceId,
    },
    /// A station that scans, authenticates and associates by itself and roams on signal
    /// strength ([`sme`]); it starts unassociated.
    Roaming,
}

/// Parameters of one radio (a WLAN interface).
#[derive(Clone, Debug, PartialEq)]
pub struct RadioConfig {
    /// AP or station.
    pub role: Role,
    /// Where it stands.
    pub position: Position,
    /// Transmit power in dBm (default 16.02, 40 mW, as ns-3's default).
    pub tx_power_dbm: f64,
    /// Rate control of data frames.
    pub rate: RateControl,
    /// Data frames whose MPDU is longer than this many bytes are preceded by RTS/CTS
    /// (`dot11RTSThreshold`; `None`: never).
    pub rts_threshold: Option<usize>,
    /// dot11ShortRetryLimit (§10.3.4.4): attempts of a frame not preceded by RTS, and of an RTS.
    pub short_retry_limit: u32,
    /// dot11LongRetryLimit: attempts of a data frame sent after RTS/CTS.
    pub long_retry_limit: u32,
    /// aCWmin (§18.4.4: 15 for an ERP BSS without 802.11b stations).
    pub cw_min: u32,
    /// aCWmax (1023).
    pub cw_max: u32,
    /// The interface queue.
    pub queue: QueueConfig,
    /// An AP's beacon interval (§11.1.3; the standard's usual 100 TU = 102.4 ms). `None`: no
    /// beacons (the default here, so that a BSS built in code carries only its data frames;
    /// scenarios default to 100 TU).
    pub beacon_interval: Option<crate::time::Duration>,
}

impl RadioConfig {
    /// A radio with the defaults: 16.02 dBm, 54 Mbit/s fixed, no RTS/CTS, retry limits 7 and
    /// 4, CW 15..1023, drop-tail 50.
    pub fn new(role: Role, position: Position) -> Self {
        RadioConfig {
            role,
            position,
            tx_power_dbm: 10.0 * 40f64.log10(),
            rate: RateControl::default(),
            rts_threshold: None,
            short_retry_limit: 7,
            long_retry_limit: 4,
            cw_min: 15,
            cw_max: 1023,
            queue: QueueConfig::DropTail { limit: QueueLimit::Packets(50) },
            beacon_interval: None,
        }
    }
}
