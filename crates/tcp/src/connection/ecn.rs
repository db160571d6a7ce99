//! Explicit Congestion Notification in TCP (RFC 3168 §6.1): the connection's ECN state.
//!
//! * **Negotiation** (§6.1.1): with [`Config::ecn`](super::Config::ecn) on, the SYN is an
//!   "ECN-setup SYN" (ECE and CWR set); a listener with ECN on answers an ECN-setup SYN with an
//!   "ECN-setup SYN-ACK" (ECE set, CWR clear). ECN is used only when both happened; a peer
//!   without ECN sends a plain SYN or SYN-ACK and the connection runs without it. A SYN-ACK
//!   with both ECE and CWR set is not an ECN-setup SYN-ACK (§6.1.1).
//! * **Sender** (§6.1.2, §6.1.4, §6.1.5): new data segments go out ECT(0); pure ACKs, SYNs,
//!   FIN-only segments, window probes and retransmissions go out Not-ECT. An ACK with ECE
//!   reduces the window once per window of data: the congestion controller's
//!   [`on_ecn_echo`](crate::congestion::Controller::on_ecn_echo) (a loss's reduction), with no
//!   retransmission and no loss recovery; later ECEs are ignored until an ACK covers data
//!   sent after the reduction (`SND.UNA > recover`). The first new data segment after any
//!   window reduction (ECN, fast retransmit or timeout) carries CWR.
//! * **Receiver** (§6.1.3): a CE-marked segment makes every later ACK carry ECE until a
//!   segment with CWR arrives; a segment with both CWR and CE starts the echo again.
//! * **With loss recovery**: an ECE during fast recovery, or one acknowledging only data sent
//!   before a loss reduction, is ignored (one reaction per window, §6.1.2); a loss detected
//!   after an ECN reduction in the same window still enters fast recovery and reduces the
//!   window again (RFC 3168 leaves this to the loss response; Linux skips the second
//!   reduction). Not modelled: the ECN nonce (RFC 3540, historic), the retransmission-timer
//!   response to ECE at a one-segment window (§6.1.2 last paragraphs), ECT on the SYN
//!   (RFC 8311).

/// ECN state of one connection.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct EcnState {
    /// Both ends agreed on ECN in the handshake.
    pub(super) ok: bool,
    /// Receiver: a CE mark arrived and no CWR since; every ACK carries ECE.
    pub(super) echo: bool,
    /// Sender: the next new data segment carries CWR.
    pub(super) cwr_pending: bool,
    /// Sender: SND.NXT at the last window reduction; an ECE reduces the window again only
    /// once SND.UNA has passed it.
    pub(super) recover: u64,
}
