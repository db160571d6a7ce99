//! Management frames (IEEE 802.11-2020 §9.3.3): the subtypes an infrastructure BSS uses to
//! announce itself, be found, and admit stations, with the size of each on the air.
//!
//! A management frame is a MAC header (24 bytes: Frame Control, Duration, three addresses,
//! Sequence Control; §9.3.3.1), a body of fixed fields and elements, and the 4-byte FCS. The
//! bodies below are the smallest an ERP AP and station built like this simulator would send:
//!
//! | frame | body (§9.3.3.x) | bytes |
//! |---|---|---|
//! | Beacon (§9.3.3.2) | Timestamp 8, Beacon Interval 2, Capability 2, SSID 2+s, Supported Rates 2+8, DS Parameter Set 3, TIM 6 (minimal: one bitmap octet), ERP 3 | 36 + s |
//! | Probe Request (§9.3.3.9) | SSID 2 (wildcard), Supported Rates 2+8 | 12 |
//! | Probe Response (§9.3.3.10) | the beacon's without the TIM | 30 + s |
//! | Authentication (§9.3.3.11), Open System | Algorithm 2, Transaction Sequence 2, Status 2 | 6 |
//! | Association Request (§9.3.3.5) | Capability 2, Listen Interval 2, SSID 2+s, Supported Rates 2+8 | 16 + s |
//! | Association Response (§9.3.3.6) | Capability 2, Status 2, AID 2, Supported Rates 2+8 | 16 |
//! | Disassociation (§9.3.3.4) | Reason Code 2 | 2 |
//! | Deauthentication (§9.3.3.12) | Reason Code 2 | 2 |
//!
//! `s` is the SSID's length: every AP of a run belongs to one ESS whose SSID is [`SSID`] (7
//! octets), so a station may roam to any AP it finds. The eight ERP-OFDM rates fit in one
//! Supported Rates element. Management frames go at the lowest basic rate (6 Mbit/s;
//! §10.6.6.2 for group-addressed frames, and the usual choice for individually addressed
//! management frames, which must reach a station whatever its link quality).

/// The SSID of every AP (only its length, 7 octets, matters).
pub const SSID: &str = "sctpsim";

/// MAC header and FCS of a management frame (§9.3.3.1).
pub const MGMT_OVERHEAD: usize = 24 + 4;

/// A management frame's subtype (§9.2.4.1.3, Table 9-1) with what the simulator reads of its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MgmtKind {
    /// Beacon: an AP announces its BSS at each TBTT (group-addressed, not acknowledged).
    Beacon,
    /// Probe Request: a scanning station asks every AP on the channel to answer
    /// (group-addressed).
    ProbeRequest,
    /// Probe Response: an AP answers a probe request (individually addressed, acknowledged).
    ProbeResponse,
    /// Authentication, Open System (§12.3.3.2): transaction 1 from the station, 2 (with a
    /// status) from the AP.
    Auth {
        /// Transaction sequence number (1 or 2).
        seq: u8,
    },
    /// Association Request.
    AssocRequest,
    /// Association Response (successful: the AP refuses nobody).
    AssocResponse,
    /// Disassociation (§11.3.5.3-4): a station leaving its AP tells it (individually
    /// addressed, acknowledged; a notification, which cannot be refused).
    Disassoc {
        /// Reason code (§9.4.1.7, Table 9-49).
        reason: u16,
    },
    /// Deauthentication (§11.3.4.3-4): an AP going out of service tells its stations
    /// (group-addressed here, not acknowledged); it ends their authentication and so their
    /// association.
    Deauth {
        /// Reason code (§9.4.1.7, Table 9-49).
        reason: u16,
    },
}

/// Reason code 3 (§9.4.1.7, Table 9-49): "Deauthenticated because sending STA is leaving (or
/// has left) IBSS or ESS" - what an AP going out of service sends.
pub const REASON_LEAVING: u16 = 3;
/// Reason code 8 (§9.4.1.7, Table 9-49): "Disassociated because sending STA is leaving (or has
/// left) BSS" - what a station roaming away sends.
pub const REASON_LEAVING_BSS: u16 = 8;

impl MgmtKind {
    /// MPDU length in bytes (header + body + FCS).
    pub fn bytes(self) -> usize {
        let s = SSID.len();
        let body = match self {
            MgmtKind::Beacon => 36 + s,
            MgmtKind::ProbeRequest => 12,
            MgmtKind::ProbeResponse => 30 + s,
            MgmtKind::Auth { .. } => 6,
            MgmtKind::AssocRequest => 16 + s,
            MgmtKind::AssocResponse => 16,
            MgmtKind::Disassoc { .. } | MgmtKind::Deauth { .. } => 2,
        };
        MGMT_OVERHEAD + body
    }

    /// Name in results (`mgmt_tx_<name>`, `mgmt_rx_<name>` scalars).
    pub fn name(self) -> &'static str {
        match self {
            MgmtKind::Beacon => "beacon",
            MgmtKind::ProbeRequest => "probe_req",
            MgmtKind::ProbeResponse => "probe_resp",
            MgmtKind::Auth { .. } => "auth",
            MgmtKind::AssocRequest => "assoc_req",
            MgmtKind::AssocResponse => "assoc_resp",
            MgmtKind::Disassoc { .. } => "disassoc",
            MgmtKind::Deauth { .. } => "deauth",
        }
    }

    /// Index into per-subtype counters ([`MgmtCounts`]).
    fn index(self) -> usize {
        match self {
            MgmtKind::Beacon => 0,
            MgmtKind::ProbeRequest => 1,
            MgmtKind::ProbeResponse => 2,
            MgmtKind::Auth { .. } => 3,
            MgmtKind::AssocRequest => 4,
            MgmtKind::AssocResponse => 5,
            MgmtKind::Disassoc { .. } => 6,
            MgmtKind::Deauth { .. } => 7,
        }
    }

    /// Every subtype once, in counter order.
    pub const ALL: [MgmtKind; 8] = [
        MgmtKind::Beacon,
        MgmtKind::ProbeRequest,
        MgmtKind::ProbeResponse,
        MgmtKind::Auth { seq: 1 },
        MgmtKind::AssocRequest,
        MgmtKind::AssocResponse,
        MgmtKind::Disassoc { reason: REASON_LEAVING_BSS },
        MgmtKind::Deauth { reason: REASON_LEAVING },
    ];
}

/// Management frames sent and received by a radio, per subtype.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MgmtCounts {
    /// Frames sent (each attempt), by [`MgmtKind::ALL`] order.
    pub tx: [u64; MgmtKind::ALL.len()],
    /// Frames received whole (addressed to the radio or group-addressed), same order.
    pub rx: [u64; MgmtKind::ALL.len()],
}

impl MgmtCounts {
    /// Count a frame sent.
    pub fn sent(&mut self, kind: MgmtKind) {
        self.tx[kind.index()] += 1;
    }

    /// Count a frame received.
    pub fn received(&mut self, kind: MgmtKind) {
        self.rx[kind.index()] += 1;
    }

    /// Frames of `kind` sent.
    pub fn tx_of(&self, kind: MgmtKind) -> u64 {
        self.tx[kind.index()]
    }

    /// Frames of `kind` received.
    pub fn rx_of(&self, kind: MgmtKind) -> u64 {
        self.rx[kind.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_sizes() {
        assert_eq!(MgmtKind::Beacon.bytes(), 28 + 43);
        assert_eq!(MgmtKind::ProbeRequest.bytes(), 40);
        assert_eq!(MgmtKind::Auth { seq: 1 }.bytes(), 34);
        assert_eq!(MgmtKind::AssocRequest.bytes(), 51);
        assert_eq!(MgmtKind::AssocResponse.bytes(), 44);
        assert_eq!(MgmtKind::Disassoc { reason: REASON_LEAVING_BSS }.bytes(), 30);
        assert_eq!(MgmtKind::Deauth { reason: REASON_LEAVING }.bytes(), 30);
        for (i, kind) in MgmtKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.index(), i);
        }
    }
}
