//! ERP-OFDM PHY timing (IEEE 802.11-2020 Clause 17, OFDM, as used by Clause 18, ERP): the
//! eight rates, frame durations, and the MAC's interframe spaces that follow from the PHY's
//! characteristics (Clause 10.3.2.3).
//!
//! A frame of `L` MAC bytes (the MPDU, FCS included) at a rate carrying `N_DBPS` data bits per
//! 4 us OFDM symbol lasts (§17.4.3, TXTIME; §18.5.2.4, the ERP-OFDM signal extension):
//!
//! ```text
//! TXTIME = 16 us preamble + 4 us SIGNAL + 4 us * ceil((16 service + 8 L + 6 tail) / N_DBPS)
//!          + 6 us signal extension
//! ```
//!
//! Control responses (ACK, CTS) go at the highest rate of the basic rate set that does not
//! exceed the rate of the frame they answer (§10.6.6.5.2); RTS goes at the same rate as the
//! CTS it asks for.

use crate::time::Duration;

/// An ERP-OFDM data rate (§17.3.2.3, Table 17-4: modulation and coding rate per rate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rate {
    /// 6 Mbit/s: BPSK, coding rate 1/2.
    R6,
    /// 9 Mbit/s: BPSK, 3/4.
    R9,
    /// 12 Mbit/s: QPSK, 1/2.
    R12,
    /// 18 Mbit/s: QPSK, 3/4.
    R18,
    /// 24 Mbit/s: 16-QAM, 1/2.
    R24,
    /// 36 Mbit/s: 16-QAM, 3/4.
    R36,
    /// 48 Mbit/s: 64-QAM, 2/3.
    R48,
    /// 54 Mbit/s: 64-QAM, 3/4.
    R54,
}

/// Modulation of an OFDM subcarrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modulation {
    /// Binary phase-shift keying.
    Bpsk,
    /// Quadrature phase-shift keying.
    Qpsk,
    /// 16-point quadrature amplitude modulation.
    Qam16,
    /// 64-point quadrature amplitude modulation.
    Qam64,
}

/// Convolutional coding rate (§17.3.5.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeRate {
    /// 1/2.
    Half,
    /// 2/3.
    TwoThirds,
    /// 3/4.
    ThreeQuarters,
}

impl Rate {
    /// Every rate, slowest first.
    pub const ALL: [Rate; 8] = [Rate::R6, Rate::R9, Rate::R12, Rate::R18, Rate::R24, Rate::R36, Rate::R48, Rate::R54];

    /// The rate of `mbps` Mbit/s, if it is one of the eight.
    pub fn from_mbps(mbps: u32) -> Option<Rate> {
        Rate::ALL.into_iter().find(|r| r.mbps() == mbps)
    }

    /// The rate in Mbit/s.
    pub fn mbps(self) -> u32 {
        match self {
            Rate::R6 => 6,
            Rate::R9 => 9,
            Rate::R12 => 12,
            Rate::R18 => 18,
            Rate::R24 => 24,
            Rate::R36 => 36,
            Rate::R48 => 48,
            Rate::R54 => 54,
        }
    }

    /// Data bits per OFDM symbol, N_DBPS (Table 17-4).
    pub fn bits_per_symbol(self) -> u32 {
        self.mbps() * 4
    }

    /// Subcarrier modulation (Table 17-4).
    pub fn modulation(self) -> Modulation {
        match self {
            Rate::R6 | Rate::R9 => Modulation::Bpsk,
            Rate::R12 | Rate::R18 => Modulation::Qpsk,
            Rate::R24 | Rate::R36 => Modulation::Qam16,
            Rate::R48 | Rate::R54 => Modulation::Qam64,
        }
    }

    /// Coding rate (Table 17-4).
    pub fn code_rate(self) -> CodeRate {
        match self {
            Rate::R6 | Rate::R12 | Rate::R24 => CodeRate::Half,
            Rate::R48 => CodeRate::TwoThirds,
            Rate::R9 | Rate::R18 | Rate::R36 | Rate::R54 => CodeRate::ThreeQuarters,
        }
    }

    /// Minimum input sensitivity in dBm (§17.3.10.2, Table 17-18, 20 MHz channels): a frame
    /// received below it is lost.
    pub fn sensitivity_dbm(self) -> f64 {
        match self {
            Rate::R6 => -82.0,
            Rate::R9 => -81.0,
            Rate::R12 => -79.0,
            Rate::R18 => -77.0,
            Rate::R24 => -74.0,
            Rate::R36 => -70.0,
            Rate::R48 => -66.0,
            Rate::R54 => -65.0,
        }
    }

    /// The next faster rate, if any (rate control).
    pub fn faster(self) -> Option<Rate> {
        Rate::ALL.get(self as usize + 1).copied()
    }

    /// The next slower rate, if any (rate control).
    pub fn slower(self) -> Option<Rate> {
        (self as usize).checked_sub(1).map(|i| Rate::ALL[i])
    }
}

/// PLCP preamble (§17.3.3): 16 us.
pub const PREAMBLE: Duration = Duration(16_000);
/// SIGNAL field (§17.3.4): one 4 us symbol.
pub const SIGNAL: Duration = Duration(4_000);
/// One OFDM symbol (§17.3.2.4): 4 us.
pub const SYMBOL: Duration = Duration(4_000);
/// SERVICE field bits before the PSDU (§17.3.5.2).
pub const SERVICE_BITS: u32 = 16;
/// Tail bits after the PSDU (§17.3.5.3).
pub const TAIL_BITS: u32 = 6;
/// ERP-OFDM signal extension (§18.3.2.4): 6 us of no transmission after each frame.
pub const SIGNAL_EXTENSION: Duration = Duration(6_000);
/// SIFS of an ERP PHY (§18.4.4, Table 18-5): 10 us.
pub const SIFS: Duration = Duration(10_000);
/// aRxPHYStartDelay of the OFDM PHY (§17.4.4, Table 17-21): 25 us, part of the ACK and CTS
/// timeouts.
pub const RX_PHY_START_DELAY: Duration = Duration(25_000);
/// DSSS ACK at 1 Mbit/s with the long PLCP preamble and header (192 us + 14 * 8 us), the
/// `AckTxTime` of EIFS for an ERP PHY whose lowest mandatory rate is 1 Mbit/s
/// (§10.3.2.3.7).
pub const DSSS_ACK_TIME: Duration = Duration(304_000);

/// MAC header of a data frame (§9.3.2.1: frame control, duration, three addresses, sequence
/// control): 24 bytes.
pub const DATA_HEADER: usize = 24;
/// LLC/SNAP encapsulation of an IP datagram (IEEE 802.2 + RFC 1042): 8 bytes.
pub const LLC_SNAP: usize = 8;
/// Frame check sequence: 4 bytes.
pub const FCS: usize = 4;
/// Bytes a data frame adds to the IP datagram it carries: header, LLC/SNAP and FCS.
pub const DATA_OVERHEAD: usize = DATA_HEADER + LLC_SNAP + FCS;
/// ACK frame (§9.3.1.3): 14 bytes.
pub const ACK_BYTES: usize = 14;
/// CTS frame (§9.3.1.2): 14 bytes.
pub const CTS_BYTES: usize = 14;
/// RTS frame (§9.3.1.1): 20 bytes.
pub const RTS_BYTES: usize = 20;

/// Duration on air of a frame of `bytes` MAC bytes (FCS included) at `rate`: preamble,
/// SIGNAL, the data symbols and the signal extension (§17.4.3; §18.3.2.4).
pub fn frame_duration(bytes: usize, rate: Rate) -> Duration {
    let bits = SERVICE_BITS as u64 + 8 * bytes as u64 + TAIL_BITS as u64;
    let symbols = bits.div_ceil(rate.bits_per_symbol() as u64);
    Duration(PREAMBLE.0 + SIGNAL.0 + symbols * SYMBOL.0 + SIGNAL_EXTENSION.0)
}

/// Duration of a data frame carrying an IP datagram of `ip_bytes` at `rate`.
pub fn data_duration(ip_bytes: usize, rate: Rate) -> Duration {
    frame_duration(ip_bytes + DATA_OVERHEAD, rate)
}

/// Slot time (§18.4.4, Table 18-5): 9 us when every station of the BSS supports the short
/// slot, 20 us when 802.11b stations are present.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SlotTime {
    /// 9 us (an ERP-only BSS).
    #[default]
    Short,
    /// 20 us (802.11b stations present).
    Long,
}

impl SlotTime {
    /// The slot's length.
    pub fn duration(self) -> Duration {
        match self {
            SlotTime::Short => Duration(9_000),
            SlotTime::Long => Duration(20_000),
        }
    }
}

/// The basic rate set (§10.6.6.5.2: control responses go at its highest rate not above the
/// eliciting frame's rate), as a bit set over [`Rate::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BasicRates(u8);

impl Default for BasicRates {
    /// The ERP-OFDM mandatory rates: 6, 12 and 24 Mbit/s (§17.3.2.3).
    fn default() -> Self {
        BasicRates::of(&[Rate::R6, Rate::R12, Rate::R24])
    }
}

impl BasicRates {
    /// A set of the given rates (6 Mbit/s is always included: the response rate must exist).
    pub fn of(rates: &[Rate]) -> BasicRates {
        BasicRates(rates.iter().fold(1, |set, r| set | 1 << (*r as u8)))
    }

    /// The rate of a control response to a frame sent at `rate` (§10.6.6.5.2).
    pub fn response_rate(self, rate: Rate) -> Rate {
        Rate::ALL.into_iter().rev().find(|r| *r <= rate && self.0 & (1 << (*r as u8)) != 0).unwrap_or(Rate::R6)
    }
}

/// The timing a station's MAC derives from the PHY (§10.3.2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// aSlotTime.
    pub slot: Duration,
    /// aSIFSTime.
    pub sifs: Duration,
    /// DIFS = SIFS + 2 slots (§10.3.2.3.5).
    pub difs: Duration,
    /// EIFS = SIFS + AckTxTime + DIFS (§10.3.2.3.7), AckTxTime at the PHY's lowest mandatory
    /// rate.
    pub eifs: Duration,
    /// ACKTimeout (and CTSTimeout) = SIFS + slot + aRxPHYStartDelay (§10.3.2.11): waited for
    /// the start of the response after the end of the frame.
    pub ack_timeout: Duration,
}

/// What `AckTxTime` in EIFS is computed at (§10.3.2.3.7: the lowest mandatory rate of the PHY).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EifsAck {
    /// 1 Mbit/s DSSS with long preamble, 304 us: the lowest mandatory rate of an ERP (802.11g)
    /// PHY, as the standard says.
    #[default]
    Dsss1,
    /// 6 Mbit/s ERP-OFDM, 50 us: an OFDM-only PHY (802.11a timing).
    Ofdm6,
}

impl Timing {
    /// The timing of an ERP PHY with the given slot and EIFS rule.
    pub fn erp(slot: SlotTime, eifs_ack: EifsAck) -> Timing {
        let slot = slot.duration();
        let difs = SIFS + slot + slot;
        let ack = match eifs_ack {
            EifsAck::Dsss1 => DSSS_ACK_TIME,
            EifsAck::Ofdm6 => frame_duration(ACK_BYTES, Rate::R6),
        };
        Timing { slot, sifs: SIFS, difs, eifs: SIFS + ack + difs, ack_timeout: SIFS + slot + RX_PHY_START_DELAY }
    }
}

impl Default for Timing {
    fn default() -> Self {
        Timing::erp(SlotTime::Short, EifsAck::Dsss1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(d: Duration) -> f64 {
        d.0 as f64 / 1000.0
    }

    #[test]
    fn ack_durations_at_each_rate() {
        // 16 + 112 + 6 = 134 bits: 6 symbols at 24 bits/symbol, 2 at 96, 1 at 216.
        assert_eq!(us(frame_duration(ACK_BYTES, Rate::R6)), 16.0 + 4.0 + 24.0 + 6.0);
        assert_eq!(us(frame_duration(ACK_BYTES, Rate::R12)), 16.0 + 4.0 + 12.0 + 6.0);
        assert_eq!(us(frame_duration(ACK_BYTES, Rate::R24)), 16.0 + 4.0 + 8.0 + 6.0);
        assert_eq!(us(frame_duration(ACK_BYTES, Rate::R54)), 16.0 + 4.0 + 4.0 + 6.0);
        // RTS: 16 + 160 + 6 = 182 bits: 2 symbols at 24 Mbit/s.
        assert_eq!(us(frame_duration(RTS_BYTES, Rate::R24)), 34.0);
    }

    #[test]
    fn data_frame_of_1500_byte_datagram() {
        // 1536-byte MPDU: 16 + 12288 + 6 = 12310 bits.
        assert_eq!(us(data_duration(1500, Rate::R54)), 20.0 + 4.0 * 57.0 + 6.0); // ceil(12310/216) = 57
        assert_eq!(us(data_duration(1500, Rate::R36)), 20.0 + 4.0 * 86.0 + 6.0); // ceil(12310/144) = 86
        assert_eq!(us(data_duration(1500, Rate::R24)), 20.0 + 4.0 * 129.0 + 6.0); // ceil(12310/96) = 129
        assert_eq!(us(data_duration(1500, Rate::R6)), 20.0 + 4.0 * 513.0 + 6.0);
        // ceil(12310/24) = 513
    }

    #[test]
    fn frame_durations_beyond_32_bit_bit_counts() {
        // 2^29 bytes: more than 2^32 bits, the 64-bit path; its neighbour below, the 32-bit one.
        for rate in Rate::ALL {
            for bytes in [(1usize << 29) - 8, 1 << 29] {
                let bits = 16 + 8 * bytes as u64 + 6;
                let symbols = bits.div_ceil(u64::from(rate.bits_per_symbol()));
                assert_eq!(frame_duration(bytes, rate), Duration(20_000 + 4_000 * symbols + 6_000), "{rate:?}");
            }
        }
    }

    #[test]
    fn interframe_spaces() {
        let short = Timing::erp(SlotTime::Short, EifsAck::Dsss1);
        assert_eq!((us(short.slot), us(short.sifs), us(short.difs)), (9.0, 10.0, 28.0));
        assert_eq!(us(short.eifs), 10.0 + 304.0 + 28.0);
        assert_eq!(us(short.ack_timeout), 44.0);
        let long = Timing::erp(SlotTime::Long, EifsAck::Ofdm6);
        assert_eq!((us(long.slot), us(long.difs)), (20.0, 50.0));
        assert_eq!(us(long.eifs), 10.0 + 50.0 + 50.0);
        assert_eq!(us(long.ack_timeout), 55.0);
    }

    #[test]
    fn responses_at_the_basic_rates() {
        let basic = BasicRates::default();
        assert_eq!(basic.response_rate(Rate::R54), Rate::R24);
        assert_eq!(basic.response_rate(Rate::R36), Rate::R24);
        assert_eq!(basic.response_rate(Rate::R18), Rate::R12);
        assert_eq!(basic.response_rate(Rate::R9), Rate::R6);
        assert_eq!(BasicRates::of(&[]).response_rate(Rate::R54), Rate::R6);
    }

    #[test]
    fn rate_table() {
        assert_eq!(Rate::from_mbps(36), Some(Rate::R36));
        assert_eq!(Rate::from_mbps(11), None);
        assert_eq!(Rate::R54.faster(), None);
        assert_eq!(Rate::R6.slower(), None);
        assert_eq!(Rate::R24.faster(), Some(Rate::R36));
    }
}
