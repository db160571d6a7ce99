//! Explicit Congestion Notification (RFC 9260 Appendix A, following RFC 3168), with
//! [`Config::ecn`](crate::Config::ecn).
//!
//! * **Negotiation**: each end lists the ECN Capable parameter (type 0x8000) in its INIT; the
//!   passive end echoes it in the INIT ACK when both support ECN (the State Cookie keeps the
//!   answer). ECN is used only when the INIT and the INIT ACK both carried it.
//! * **Sender**: a packet whose DATA chunks are all first transmissions goes out ECT(0), and
//!   so does one that carries a CWR; other control-only packets and packets with
//!   retransmitted chunks go out Not-ECT (as RFC 3168 §6.1.5 for TCP: a retransmission's
//!   mark says nothing about the new window). A CWR travels in the data stream: when a
//!   full-sized DATA chunk leaves it no room, it takes a packet of its own just before the
//!   DATA, and a Not-ECT packet there would be dropped by the very queue that marks (Linux
//!   and FreeBSD set ECT on every packet of an ECN association). A CE mark on a packet
//!   without DATA is not echoed. On an ECNE
//!   the sender finds the destination the reported TSN was sent to and reduces that
//!   destination's cwnd as a fast retransmit does (§7.2.4: ssthresh = max(cwnd/2, 4*MTU),
//!   cwnd = ssthresh, through the controller's
//!   [`on_ecn_echo`](crate::congestion::Controller::on_ecn_echo)), without marking or
//!   retransmitting anything and without entering Fast Recovery. It does so once per window
//!   of that destination: an ECNE for a TSN at or below the highest TSN outstanding at the
//!   destination's last reduction (ECN, fast retransmit or T3-rtx) is not reacted to, nor one
//!   while the destination is in Fast Recovery. Every ECNE is answered with a CWR carrying
//!   its TSN (the highest TSN of the ECNEs since the last CWR), bundled in front of the next
//!   packet of new DATA, as TCP sets CWR on its next new data segment (RFC 3168 §6.1.2).
//!   With no data queued nor outstanding, it goes out alone.
//! * **Receiver**: a packet that arrives CE and carries DATA makes the receiver send an ECNE
//!   with that packet's lowest TSN (the highest such TSN if several marked packets came) in
//!   every packet that carries a SACK, until a CWR with a TSN at or above it arrives.
//! * **CMT**: the reduction is per destination, so under CMT only the path whose data was
//!   marked slows down; with a coupled controller the group view is shown as for a fast
//!   retransmit.
//!
//! Not modelled: ECN on the DATA bundled with a COOKIE ECHO (that packet is taken as
//! Not-ECT), ECT(1) and the ECN nonce.

use crate::wire::Chunk;

use super::tsn::{tsn_gt, tsn_le};
use super::{Association, Event, PathId};

/// ECN state of an association.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EcnState {
    /// Both ends listed the ECN Capable parameter.
    pub(crate) ok: bool,
    /// Receiver: the TSN to report in an ECNE until a CWR covers it.
    pub(crate) echo: Option<u32>,
    /// Sender: the TSN the next CWR answers.
    pub(crate) cwr: Option<u32>,
}

impl Association {
    /// True when ECN was negotiated (RFC 9260 Appendix A).
    pub fn ecn_negotiated(&self) -> bool {
        self.ecn.ok
    }

    /// The packet just processed arrived with the CE codepoint; `lowest_tsn` is the lowest
    /// TSN of its DATA, if it carried any (only then is the mark echoed).
    pub(super) fn on_ce_packet(&mut self, lowest_tsn: Option<u32>) {
        if !self.ecn.ok {
            return;
        }
        self.stats.ce_received += 1;
        let Some(lowest_tsn) = lowest_tsn else { return };
        self.ecn.echo = Some(match self.ecn.echo {
            Some(t) if tsn_gt(t, lowest_tsn) => t,
            _ => lowest_tsn,
        });
    }

    /// The ECNE to bundle with a SACK, if one is due.
    pub(super) fn ecne_due(&mut self) -> Option<Chunk> {
        let lowest_tsn = self.ecn.echo.filter(|_| self.ecn.ok)?;
        self.stats.ecne_sent += 1;
        Some(Chunk::Ecne { lowest_tsn })
    }

    /// A CWR arrived: the echo of every TSN up to `lowest_tsn` is answered.
    pub(super) fn on_cwr(&mut self, lowest_tsn: u32) {
        if self.ecn.echo.is_some_and(|t| tsn_le(t, lowest_tsn)) {
            self.ecn.echo = None;
        }
    }

    /// An ECNE arrived: reduce the window of the destination the marked data went to, once
    /// per window, and answer with a CWR.
    pub(super) fn on_ecne(&mut self, lowest_tsn: u32) {
        if !self.ecn.ok {
            return;
        }
        if let Some(p) = self.out.destination_of(lowest_tsn) {
            self.ecn_reduce(p, lowest_tsn);
        }
        self.queue_cwr(lowest_tsn);
    }

    fn ecn_reduce(&mut self, p: PathId, tsn: u32) {
        let highest_sent = self.out.next_tsn.wrapping_sub(1);
        let reads_group = self.paths.values().any(|q| q.controller.reads_group_view());
        let Some(path) = self.paths.get(p) else { return };
        if path.fast_recovery_exit.is_some() || path.ecn_recover.is_some_and(|r| tsn_le(tsn, r)) {
            return;
        }
        if reads_group {
            self.group_view.refill(self.paths.iter());
            self.group_view.show_to(p);
        }
        let path = &mut self.paths[p];
        path.controller.on_ecn_echo(&mut path.cc, &self.group_view);
        path.ecn_recover = Some(highest_sent);
        path.stats.ecn_reductions += 1;
        let (cwnd, ssthresh) = (path.cc.cwnd, path.cc.ssthresh);
        self.events.push_back(Event::EcnReduction { path: p, cwnd, ssthresh });
    }

    /// One CWR answers every ECNE since the last: a CWR not yet sent takes the higher TSN.
    fn queue_cwr(&mut self, lowest_tsn: u32) {
        self.ecn.cwr = Some(match self.ecn.cwr {
            Some(t) if tsn_gt(t, lowest_tsn) => t,
            _ => lowest_tsn,
        });
    }

    /// The CWR to send now, if one is pending.
    pub(super) fn take_cwr(&mut self) -> Option<Chunk> {
        let lowest_tsn = self.ecn.cwr.take()?;
        self.stats.cwr_sent += 1;
        Some(Chunk::Cwr { lowest_tsn })
    }
}
