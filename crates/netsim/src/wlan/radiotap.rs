//! The air of a channel as a monitor-mode capture sees it: every frame a radio starts to send,
//! as an IEEE 802.11 MAC frame (§9.2-9.3, without FCS) behind a radiotap header
//! (<https://www.radiotap.org>; pcap link type 127), which Wireshark and tshark decode.
//!
//! The simulator does not keep frames as bytes; these are written from what it does keep, and
//! have exactly the lengths the airtime was computed from ([`crate::wlan::mgmt`],
//! [`crate::wlan::phy::DATA_OVERHEAD`]):
//!
//! - Addresses: radio `r` of channel index `m` is `02:00:00:mm:rr:rr` (a locally
//!   administered address); an AP's address is its BSSID.
//! - Data frames (infrastructure, §9.3.2.1): To DS from a station, From DS from its AP; the
//!   third address is the AP's (the AP is the router, so it is the destination or source on
//!   the distribution system); LLC/SNAP with EtherType IPv4, then the IP packet's bytes.
//! - Control frames: ACK and CTS (receiver only), RTS (receiver and transmitter).
//! - Management frames with the bodies `mgmt` sizes: fixed fields and the SSID, Supported
//!   Rates (6, 12 and 24 Mbit/s basic), DS Parameter Set, TIM and ERP elements; the Beacon's
//!   timestamp is the simulated time in microseconds.
//! - Radiotap: Flags (no FCS), Rate, Channel (frequency, 2 GHz OFDM) and, for an individually
//!   addressed frame, the signal strength at its receiver (dBm antenna signal).

use crate::time::{Duration, Instant};
use crate::wlan::medium::BROADCAST;
use crate::wlan::mgmt::{MgmtKind, SSID};
use crate::wlan::phy::Rate;

/// pcap link type: IEEE 802.11 with a radiotap header.
pub const LINKTYPE_IEEE802_11_RADIOTAP: u32 = 127;

/// What a frame on the air is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AirKind {
    /// A data frame carrying an IP packet.
    Data,
    /// ACK.
    Ack,
    /// RTS.
    Rts,
    /// CTS.
    Cts,
    /// A management frame.
    Mgmt(MgmtKind),
}

/// A frame a radio started to send, as a channel with capture on records it.
#[derive(Clone, Debug, PartialEq)]
pub struct AirFrame {
    /// When its transmission started.
    pub at: Instant,
    /// The sending radio.
    pub src: u32,
    /// The receiving radio ([`BROADCAST`] for a group-addressed frame).
    pub dst: u32,
    /// The AP radio of the BSS the frame belongs to, if known.
    pub bss: Option<u32>,
    /// True if the sender is an AP.
    pub from_ap: bool,
    /// What it is.
    pub kind: AirKind,
    /// Its rate.
    pub rate: Rate,
    /// Its Duration field (the NAV it sets).
    pub nav: Duration,
    /// Sequence number.
    pub seq: u16,
    /// Retry flag.
    pub retry: bool,
    /// The signal strength at the receiver, dBm (individually addressed frames).
    pub rss_dbm: Option<f64>,
    /// The IP packet of a data frame.
    pub payload: Vec<u8>,
}

/// The MAC address of radio `radio` on channel index `medium`.
pub fn mac_address(medium: u32, radio: u32) -> [u8; 6] {
    if radio == BROADCAST {
        return [0xff; 6];
    }
    [0x02, 0x00, 0x00, medium as u8, (radio >> 8) as u8, radio as u8]
}

/// Supported Rates element body: the eight ERP-OFDM rates in 500 kbit/s units, the basic set
/// (6, 12, 24) flagged (§9.4.2.3).
const RATES: [u8; 8] = [0x8c, 0x12, 0x98, 0x24, 0xb0, 0x48, 0x60, 0x6c];

/// The radiotap header and 802.11 frame of `f`, sent on channel index `medium`, channel
/// number `channel`.
pub fn encode(f: &AirFrame, medium: u32, channel: u8) -> Vec<u8> {
    let mut b = Vec::with_capacity(64 + f.payload.len());
    radiotap_header(&mut b, f, channel);
    let ra = mac_address(medium, f.dst);
    let ta = mac_address(medium, f.src);
    let duration = (f.nav.0.div_ceil(1000)).min(32_767) as u16;
    let retry = if f.retry { 0x08 } else { 0x00 };
    match f.kind {
        AirKind::Ack | AirKind::Cts => {
            b.extend_from_slice(&[if f.kind == AirKind::Ack { 0xd4 } else { 0xc4 }, 0x00]);
            b.extend_from_slice(&duration.to_le_bytes());
            b.extend_from_slice(&ra);
        }
        AirKind::Rts => {
            b.extend_from_slice(&[0xb4, 0x00]);
            b.extend_from_slice(&duration.to_le_bytes());
            b.extend_from_slice(&ra);
            b.extend_from_slice(&ta);
        }
        AirKind::Data => {
            let ds = if f.from_ap { 0x02 } else { 0x01 };
            b.extend_from_slice(&[0x08, ds | retry]);
            b.extend_from_slice(&duration.to_le_bytes());
            b.extend_from_slice(&ra);
            b.extend_from_slice(&ta);
            b.extend_from_slice(&mac_address(medium, f.bss.unwrap_or(if f.from_ap { f.src } else { f.dst })));
            b.extend_from_slice(&(f.seq << 4).to_le_bytes());
            b.extend_from_slice(&[0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00]);
            b.extend_from_slice(&f.payload);
        }
        AirKind::Mgmt(kind) => {
            b.extend_from_slice(&[subtype(kind) << 4, retry]);
            b.extend_from_slice(&duration.to_le_bytes());
            b.extend_from_slice(&ra);
            b.extend_from_slice(&ta);
            let bssid = match f.bss {
                Some(ap) => mac_address(medium, ap),
                None => [0xff; 6],
            };
            b.extend_from_slice(&bssid);
            b.extend_from_slice(&(f.seq << 4).to_le_bytes());
            mgmt_body(&mut b, kind, f.at, channel);
        }
    }
    b
}

/// The radiotap header: Flags, Rate, Channel and (if known) dBm antenna signal.
fn radiotap_header(b: &mut Vec<u8>, f: &AirFrame, channel: u8) {
    const FLAGS: u32 = 1 << 1;
    const RATE: u32 = 1 << 2;
    const CHANNEL: u32 = 1 << 3;
    const SIGNAL: u32 = 1 << 5;
    let signal = f.rss_dbm.map(|r| r.round().clamp(-128.0, 127.0) as i8);
    let len: u16 = 8 + 1 + 1 + 4 + u16::from(signal.is_some());
    let present = FLAGS | RATE | CHANNEL | if signal.is_some() { SIGNAL } else { 0 };
    b.extend_from_slice(&[0, 0]); // version 0, pad
    b.extend_from_slice(&len.to_le_bytes());
    b.extend_from_slice(&present.to_le_bytes());
    b.push(0x00); // Flags: no FCS at the end
    b.push((f.rate.mbps() * 2) as u8); // 500 kbit/s units
    let mhz = 2407 + 5 * u16::from(channel); // offset 10: 2-byte aligned
    b.extend_from_slice(&mhz.to_le_bytes());
    b.extend_from_slice(&(0x0080u16 | 0x0040).to_le_bytes()); // 2 GHz, OFDM
    if let Some(s) = signal {
        b.push(s as u8);
    }
}

/// Management frame subtype (§9.2.4.1.3, Table 9-1).
fn subtype(kind: MgmtKind) -> u8 {
    match kind {
        MgmtKind::AssocRequest => 0,
        MgmtKind::AssocResponse => 1,
        MgmtKind::ProbeRequest => 4,
        MgmtKind::ProbeResponse => 5,
        MgmtKind::Beacon => 8,
        MgmtKind::Disassoc { .. } => 10,
        MgmtKind::Auth { .. } => 11,
        MgmtKind::Deauth { .. } => 12,
    }
}

/// The body of a management frame, `kind.bytes() - 28` bytes long.
fn mgmt_body(b: &mut Vec<u8>, kind: MgmtKind, at: Instant, channel: u8) {
    // Capability Information (§9.4.1.4): ESS, Short Slot Time.
    const CAPABILITY: u16 = 0x0001 | 0x0400;
    let ssid = |b: &mut Vec<u8>| {
        b.extend_from_slice(&[0, SSID.len() as u8]);
        b.extend_from_slice(SSID.as_bytes());
    };
    let rates = |b: &mut Vec<u8>| {
        b.extend_from_slice(&[1, RATES.len() as u8]);
        b.extend_from_slice(&RATES);
    };
    match kind {
        MgmtKind::Beacon | MgmtKind::ProbeResponse => {
            b.extend_from_slice(&(at.as_nanos() / 1000).to_le_bytes()); // Timestamp (TSF, us)
            b.extend_from_slice(&100u16.to_le_bytes()); // Beacon Interval, TU
            b.extend_from_slice(&CAPABILITY.to_le_bytes());
            ssid(b);
            rates(b);
            b.extend_from_slice(&[3, 1, channel]); // DS Parameter Set
            if kind == MgmtKind::Beacon {
                b.extend_from_slice(&[5, 4, 0, 1, 0, 0]); // TIM: DTIM count 0, period 1, empty
            }
            b.extend_from_slice(&[42, 1, 0]); // ERP: no non-ERP station, no protection
        }
        MgmtKind::ProbeRequest => {
            b.extend_from_slice(&[0, 0]); // wildcard SSID
            rates(b);
        }
        MgmtKind::Auth { seq } => {
            b.extend_from_slice(&0u16.to_le_bytes()); // Open System
            b.extend_from_slice(&u16::from(seq).to_le_bytes());
            b.extend_from_slice(&0u16.to_le_bytes()); // success
        }
        MgmtKind::AssocRequest => {
            b.extend_from_slice(&CAPABILITY.to_le_bytes());
            b.extend_from_slice(&10u16.to_le_bytes()); // Listen Interval
            ssid(b);
            rates(b);
        }
        MgmtKind::AssocResponse => {
            b.extend_from_slice(&CAPABILITY.to_le_bytes());
            b.extend_from_slice(&0u16.to_le_bytes()); // success
            b.extend_from_slice(&0xc001u16.to_le_bytes()); // AID 1
            rates(b);
        }
        MgmtKind::Disassoc { reason } | MgmtKind::Deauth { reason } => {
            b.extend_from_slice(&reason.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wlan::mgmt::MGMT_OVERHEAD;
    use crate::wlan::phy::DATA_OVERHEAD;

    fn frame(kind: AirKind) -> AirFrame {
        AirFrame {
            at: Instant(1_500_000_000),
            src: 3,
            dst: 0,
            bss: Some(0),
            from_ap: false,
            kind,
            rate: Rate::R54,
            nav: Duration::from_micros(44),
            seq: 17,
            retry: true,
            rss_dbm: Some(-61.4),
            payload: vec![0x45; 100],
        }
    }

    /// Each frame is as long as the airtime was computed for (minus the FCS), behind a
    /// 15-byte radiotap header.
    #[test]
    fn frames_have_the_lengths_their_airtime_was_computed_from() {
        let len = |f: &AirFrame| encode(f, 1, 6).len() - 15;
        assert_eq!(len(&frame(AirKind::Data)), 100 + DATA_OVERHEAD - 4);
        assert_eq!(len(&frame(AirKind::Ack)), crate::wlan::phy::ACK_BYTES - 4);
        assert_eq!(len(&frame(AirKind::Cts)), crate::wlan::phy::CTS_BYTES - 4);
        assert_eq!(len(&frame(AirKind::Rts)), crate::wlan::phy::RTS_BYTES - 4);
        for kind in MgmtKind::ALL {
            assert_eq!(len(&frame(AirKind::Mgmt(kind))), kind.bytes() - 4, "{kind:?}");
            assert_eq!(kind.bytes() - MGMT_OVERHEAD + 24, len(&frame(AirKind::Mgmt(kind))));
        }
    }

    #[test]
    fn radiotap_and_header_fields() {
        let b = encode(&frame(AirKind::Data), 1, 6);
        assert_eq!(&b[0..4], &[0, 0, 15, 0]);
        assert_eq!(u32::from_le_bytes(b[4..8].try_into().unwrap()), 0b10_1110);
        assert_eq!(b[9], 108); // 54 Mbit/s
        assert_eq!(u16::from_le_bytes([b[10], b[11]]), 2437);
        assert_eq!(b[14] as i8, -61);
        let h = &b[15..];
        assert_eq!(&h[0..2], &[0x08, 0x09]); // data, To DS, retry
        assert_eq!(u16::from_le_bytes([h[2], h[3]]), 44);
        assert_eq!(&h[4..10], &[2, 0, 0, 1, 0, 0]); // RA: the AP
        assert_eq!(&h[10..16], &[2, 0, 0, 1, 0, 3]);
        assert_eq!(u16::from_le_bytes([h[22], h[23]]), 17 << 4);
        let mut broadcast = frame(AirKind::Mgmt(MgmtKind::Beacon));
        broadcast.dst = BROADCAST;
        broadcast.rss_dbm = None;
        let b = encode(&broadcast, 1, 6);
        assert_eq!(b[2], 14);
        assert_eq!(&b[14 + 4..14 + 10], &[0xff; 6]);
    }
}
