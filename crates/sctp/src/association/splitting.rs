//! Buffer splitting for multipath (CMT) associations (T. Dreibholz, M. Becke, E. P. Rathgeb,
//! M. Tüxen, "On the Use of Concurrent Multipath Transfer over Asymmetric Paths", IEEE
//! GLOBECOM 2010; H. Adhari, T. Dreibholz, M. Becke, E. P. Rathgeb, M. Tüxen, "Evaluation of
//! Concurrent Multipath Transfer over Dissimilar Paths", 2011), as INET implements it (`SctpAssociationSendAll.cc`, `cmtBufferSplitVariant`):
//! when new data goes to several destinations, a slow destination can fill the send buffer
//! or the peer's receive window with chunks that wait for it, blocking the fast ones.
//! Splitting gives each destination only its share of each buffer:
//!
//! - sender side (INET `senderOnly`): the bytes on a destination may not exceed its share of
//!   the send buffer ([`crate::Config::send_buffer`]);
//! - receiver side (INET `receiverOnly`): the bytes on a destination may not exceed its share
//!   of the peer's receive window as last advertised (rwnd plus the bytes in flight), plus one
//!   MTU (INET allows that overbooking).
//!
//! Both are enforced by the sender, on new data only (retransmissions are never held back).
//! The destinations that share are those the path scheduler offers new data to in the
//! transmission opportunity, so a single-destination scheduler is never split. A destination
//! holding nothing may always take one chunk, so a share smaller than a chunk cannot stall
//! it.

/// Buffer splitting settings ([`crate::Config::buffer_splitting`]). Default: off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferSplitting {
    /// Split the send buffer among the destinations. Default off.
    pub sender: bool,
    /// Split the peer's receive window among the destinations. Default off.
    pub receiver: bool,
    /// How large each destination's share is. Default equal shares, as INET.
    pub share: SplitShare,
    /// Which bytes count against a destination's share. Default queued, as INET.
    pub counts: SplitCounts,
}

impl BufferSplitting {
    /// True if either side is split.
    pub fn enabled(&self) -> bool {
        self.sender || self.receiver
    }
}

/// How a buffer is shared among the destinations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SplitShare {
    /// 1/n of the buffer for each of n destinations (INET).
    #[default]
    Equal,
    /// In proportion to each destination's cwnd.
    Cwnd,
}

/// Which bytes count against a destination's share.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SplitCounts {
    /// Bytes last sent to the destination and not yet covered by the cumulative TSN ack,
    /// gap-acknowledged or not: what they occupy of the buffers (INET's default).
    #[default]
    Queued,
    /// Bytes outstanding (in flight) to the destination (INET's `cmtBufferSplittingUsesOSB`).
    Outstanding,
}

/// The limits buffer splitting sets in one transmission opportunity.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SplitLimits {
    /// Send buffer, if split.
    send_buffer: Option<f64>,
    /// Peer receive window (rwnd + bytes in flight), if split.
    peer_window: Option<f64>,
    /// Σ cwnd of the sharing destinations, for [`SplitShare::Cwnd`].
    total_cwnd: f64,
    /// How many destinations share.
    sharing: usize,
}

impl SplitLimits {
    /// The limits for `sharing` destinations with Σ cwnd `total_cwnd`, a send buffer of
    /// `send_buffer` bytes and a peer window of `peer_window` bytes.
    pub(crate) fn new(
        config: &BufferSplitting,
        sharing: usize,
        total_cwnd: u64,
        send_buffer: u32,
        peer_window: u64,
    ) -> Self {
        SplitLimits {
            send_buffer: config.sender.then_some(f64::from(send_buffer)),
            peer_window: config.receiver.then_some(peer_window as f64),
            total_cwnd: total_cwnd as f64,
            sharing: sharing.max(1),
        }
    }

    /// True if a chunk of `len` bytes may go to a destination with `cwnd`, `mtu` and `bytes`
    /// already counted against its share.
    pub(crate) fn allows(&self, share: SplitShare, cwnd: u32, mtu: u32, bytes: u32, len: u32) -> bool {
        if bytes == 0 || self.sharing <= 1 {
            return true;
        }
        let fraction = match share {
            SplitShare::Equal => 1.0 / self.sharing as f64,
            SplitShare::Cwnd if self.total_cwnd > 0.0 => f64::from(cwnd) / self.total_cwnd,
            SplitShare::Cwnd => 1.0 / self.sharing as f64,
        };
        let after = f64::from(bytes) + f64::from(len);
        let sender_ok = self.send_buffer.is_none_or(|b| after <= b * fraction);
        let receiver_ok = self.peer_window.is_none_or(|w| after <= w * fraction + f64::from(mtu));
        sender_ok && receiver_ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(share: SplitShare) -> BufferSplitting {
        BufferSplitting { sender: true, receiver: true, share, counts: SplitCounts::Queued }
    }

    #[test]
    fn equal_shares_split_each_buffer_by_the_number_of_destinations() {
        // Send buffer 100,000 over 2: 50,000 each; peer window 40,000: 20,000 + 1 MTU each.
        let sender = BufferSplitting { sender: true, ..BufferSplitting::default() };
        let l = SplitLimits::new(&sender, 2, 0, 100_000, 40_000);
        assert!(l.allows(SplitShare::Equal, 0, 1500, 48_000, 2000));
        assert!(!l.allows(SplitShare::Equal, 0, 1500, 48_001, 2000));
        let receiver = BufferSplitting { receiver: true, ..BufferSplitting::default() };
        let l = SplitLimits::new(&receiver, 2, 0, 100_000, 40_000);
        assert!(l.allows(SplitShare::Equal, 0, 1500, 20_000, 1500));
        assert!(!l.allows(SplitShare::Equal, 0, 1500, 20_001, 1500));
        // Both: the tighter one holds.
        let l = SplitLimits::new(&both(SplitShare::Equal), 2, 0, 100_000, 400_000);
        assert!(!l.allows(SplitShare::Equal, 0, 1500, 49_000, 1500));
    }

    #[test]
    fn cwnd_shares_follow_the_windows() {
        // cwnds 30,000 and 10,000: shares 3/4 and 1/4 of a 100,000-byte send buffer.
        let config = BufferSplitting { sender: true, share: SplitShare::Cwnd, ..BufferSplitting::default() };
        let l = SplitLimits::new(&config, 2, 40_000, 100_000, 0);
        assert!(l.allows(SplitShare::Cwnd, 30_000, 1500, 74_000, 1000));
        assert!(!l.allows(SplitShare::Cwnd, 30_000, 1500, 74_001, 1000));
        assert!(l.allows(SplitShare::Cwnd, 10_000, 1500, 24_000, 1000));
        assert!(!l.allows(SplitShare::Cwnd, 10_000, 1500, 24_001, 1000));
    }

    #[test]
    fn one_destination_or_an_empty_one_is_never_held() {
        let l = SplitLimits::new(&both(SplitShare::Equal), 1, 0, 1000, 1000);
        assert!(l.allows(SplitShare::Equal, 0, 1500, 900_000, 1500));
        let l = SplitLimits::new(&both(SplitShare::Equal), 4, 0, 1000, 1000);
        assert!(l.allows(SplitShare::Equal, 0, 1500, 0, 1500));
        assert!(!l.allows(SplitShare::Equal, 0, 1500, 1, 1500));
    }
}
