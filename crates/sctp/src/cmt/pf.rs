//! The potentially-failed (PF) state, in its two forms: RFC 7829's for single-path SCTP and
//! CMT-PF for Concurrent Multipath Transfer (P. Natarajan, N. Ekiz, P. Amer, J. Iyengar,
//! R. Stewart, "Concurrent Multipath Transfer using SCTP Multihoming: Introducing the
//! Potentially-failed Destination State", NETWORKING 2008; paper 003 §5.1 lists its rules).
//!
//! Both share the state ([`crate::PathState::PotentiallyFailed`]), its threshold
//! ([`crate::Config::pf_max_retrans`]: a destination whose error counter exceeds it is PF;
//! CMT-PF's "after a single timeout" is `Some(0)`), the probing (a HEARTBEAT at once, then
//! one per RTO, the RTO doubling after each unanswered one: RFC 7829 §4, CMT-PF rule 3) and
//! the end (Path.Max.Retrans errors in all make it inactive, RFC 9260 §8.2; with a threshold
//! of 0 that is CMT-PF's "an additional PMR consecutive timeouts"). Neither sends new data or
//! retransmissions to a PF destination while another is usable: the scheduler and the
//! retransmission policies ([`super::RetransmitPolicy`]) see it as unusable (CMT-PF rules
//! 1-2; RFC 7829 §4). With every destination PF or inactive, data goes to the PF one with
//! the fewest errors (RFC 7829 §4 "dormant state"; ns-2's CMT-PF `SelectFromPFDests`).
//!
//! They differ in how a destination leaves PF ([`PfVariant`]):
//!
//! | | RFC 7829 ([`PfVariant::Rfc7829`]) | CMT-PF ([`PfVariant::Cmt`]) |
//! |---|---|---|
//! | back to active on | a HEARTBEAT ACK, or an ack of any chunk last sent to it (§5) | a HEARTBEAT ACK, or an ack of a chunk sent to it once (rule 5: "acks for retransmissions do not transition a PF destination to the active state") |
//! | cwnd on return | unchanged, unless [`crate::Config::pf_return_cwnd`] is set | `pf_return_cwnd`, by default 2 MTU (CMT-PF2, as Natarajan et al. recommend; rule 4: 1 MTU is CMT-PF1; paper 003 also studies 3 and 4) |
//! | error counter | cleared by any acked chunk last sent to it | not cleared by an acked retransmission (ns-2: only chunks with one transmission clear it, as the sack may have been for either transmission) |
//!
//! The returning destination restarts in slow start: a T3-rtx expiry left its ssthresh at
//! max(cwnd/2, 4 MTU) (RFC 9260 §7.2.3), at least the 1-4 MTU it returns with.
//!
//! In this engine an acknowledged chunk credits the destination of its latest
//! transmission, and chunks outstanding on a destination when it times out are marked for
//! retransmission (and credit nobody if acknowledged before that), so an ack "via another
//! path" never returns a PF destination under either variant; rule 5 matters when a
//! retransmission went to a PF destination, which happens when every destination is PF.

/// How a destination leaves the potentially-failed state ([`crate::Config::pf_variant`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PfVariant {
    /// RFC 7829 (`"rfc7829"`, the default): any acknowledgment of data sent to it, or a
    /// HEARTBEAT ACK; cwnd as [`crate::Config::pf_return_cwnd`] says (unchanged by default).
    #[default]
    Rfc7829,
    /// CMT-PF (`"cmt"`): a HEARTBEAT ACK or an acknowledgment of a chunk transmitted once;
    /// cwnd set to `pf_return_cwnd`, 2 MTU by default (CMT-PF2). Needs
    /// [`crate::Config::pf_max_retrans`] (CMT-PF uses 0).
    Cmt,
}

impl PfVariant {
    /// Every variant with its name, in documentation order.
    pub const ALL: [(&'static str, PfVariant); 2] = [("rfc7829", PfVariant::Rfc7829), ("cmt", PfVariant::Cmt)];

    /// Looks a variant up by name.
    pub fn from_name(name: &str) -> Option<PfVariant> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            PfVariant::Rfc7829 => "rfc7829",
            PfVariant::Cmt => "cmt",
        }
    }
    /// The cwnd CMT-PF gives a returning destination when none is configured, in MTUs
    /// (CMT-PF2).
    pub const CMT_DEFAULT_MTUS: u32 = 2;
}
