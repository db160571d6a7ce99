//! Concurrent Multipath Transfer switches: CMT on or off for an association, and its three
//! algorithms of J. Iyengar, P. Amer, R. Stewart, "Concurrent Multipath Transfer Using SCTP
//! Multihoming Over Independent End-to-End Paths", IEEE/ACM Transactions on Networking
//! 14(5), 2006 (called "the CMT paper" in this crate). The paper names three side-effects of
//! the reordering that sending over paths of different delay causes, and an algorithm
//! against each: unnecessary fast retransmissions (split fast retransmit, SFR), overly
//! conservative cwnd growth (cwnd update for CMT, CUC) and increased ack traffic from fewer
//! delayed acks (delayed ack for CMT, DAC). Where the paper leaves details open, the
//! University of Delaware ns-2 module that its authors evaluated it with (`sctp-cmt.cc`)
//! and FreeBSD (`netinet/sctp_indata.c`, `sctp_output.c`) decide; each place says which.
//!
//! Which destinations new data goes to is the path scheduler's business
//! ([`crate::Config::scheduler`]); [`crate::Config::with_cmt`] switches both on at once.

/// Concurrent Multipath Transfer settings of one association (the CMT paper). With
/// `enabled` false (the default) the association is a single-path RFC 9260 sender and
/// receiver and the other fields have no effect; each algorithm can be switched off alone
/// to study what it contributes, as the paper does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmtConfig {
    /// CMT on. Default false.
    pub enabled: bool,
    /// Split Fast Retransmit (the CMT paper, side-effect 1): a TSN gets a miss indication from a
    /// SACK only if the SACK newly acknowledges a later TSN sent to the *same* destination,
    /// so reordering between paths of different delay does not trigger fast
    /// retransmissions. Without it, RFC 9260 §7.2.4's rule (any later TSN newly
    /// acknowledged, HTNA) applies across destinations. Default true.
    pub sfr: bool,
    /// Cwnd Update for CMT (the CMT paper, side-effect 2): each destination keeps a pseudo-cumack
    /// (its earliest outstanding TSN sent once) and an rtx-pseudo-cumack (its earliest
    /// outstanding retransmitted TSN); a SACK that advances either lets that destination's
    /// cwnd grow in slow start (RFC 9260 §7.2.1's "cumulative TSN ack advanced" condition
    /// is read per destination), even when the association's cumulative ack stands still
    /// behind a slower path. Default true.
    pub cuc: bool,
    /// Delayed Ack for CMT (the CMT paper, side-effect 3). Receiver: SACKs stay delayed when DATA
    /// arrives out of order (RFC 9260 §6.7 would acknowledge at once), and each SACK
    /// reports in its chunk flags how many DATA packets (0..2) arrived since the previous
    /// one. Sender: a SACK that newly acknowledges TSNs sent to a single destination, all
    /// above a missing TSN, counts that many miss indications for it instead of one.
    /// Default true.
    pub dac: bool,
}

impl Default for CmtConfig {
    fn default() -> Self {
        CmtConfig { enabled: false, sfr: true, cuc: true, dac: true }
    }
}

impl CmtConfig {
    /// CMT on with SFR, CUC and DAC (the CMT paper's full sender and receiver).
    pub fn on() -> Self {
        CmtConfig { enabled: true, ..CmtConfig::default() }
    }
    /// SFR is in effect (CMT on and SFR on).
    pub fn sfr_active(&self) -> bool {
        self.enabled && self.sfr
    }
    /// CUC is in effect (CMT on and CUC on).
    pub fn cuc_active(&self) -> bool {
        self.enabled && self.cuc
    }
    /// DAC is in effect (CMT on and DAC on).
    pub fn dac_active(&self) -> bool {
        self.enabled && self.dac
    }
}

/// The SACK chunk flags that carry DAC's packet count: bits 6 and 7
/// (`count << 6`), as FreeBSD writes them (netinet/sctp_output.c, `cmt_dac_pkts_rcvd << 6`;
/// it reads the high bit, `SCTP_SACK_CMT_DAC` 0x80, as "two packets"). RFC 9260 §3.3.4
/// reserves the flags (sent as zero), so a SACK from a peer without DAC carries 0. The
/// University of Delaware ns-2 module writes the count in the low bits instead; a reader
/// takes either.
pub(crate) fn dac_flags(packets: u32) -> u8 {
    (packets.min(2) as u8) << 6
}

/// The DAC packet count a SACK's chunk flags carry: bits 6-7 (FreeBSD), else bits 0-1
/// (ns-2); 0 if neither is set.
pub(crate) fn dac_packets(flags: u8) -> u32 {
    match flags >> 6 {
        0 => u32::from(flags & 3),
        n => u32::from(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dac_counts_round_trip_through_the_flags() {
        for n in 0..=2 {
            assert_eq!(dac_packets(dac_flags(n)), n);
        }
        assert_eq!(dac_flags(5), 0x80, "more than two packets report two");
        assert_eq!(dac_packets(0x01), 1, "ns-2's encoding");
        assert_eq!(dac_packets(0x80), 2, "FreeBSD's SCTP_SACK_CMT_DAC bit");
    }

    #[test]
    fn nothing_is_in_effect_while_cmt_is_off() {
        let off = CmtConfig::default();
        assert!(!off.sfr_active() && !off.cuc_active() && !off.dac_active());
        let on = CmtConfig::on();
        assert!(on.sfr_active() && on.cuc_active() && on.dac_active());
        assert!(!CmtConfig { sfr: false, ..on }.sfr_active());
    }
}
