//! The sending half: the send queue, outstanding chunks tracked per destination, SACK
//! processing with miss indications (RFC 9260 §6.2.1, §7.2.4), T3-rtx (§6.3.2, §6.3.3),
//! retransmission to an alternate destination (§6.4), and packet building with bundling,
//! cwnd/rwnd limits and Max.Burst (§6.1, §6.10).

use std::collections::VecDeque;

use simtime::{Duration, Instant};

use crate::cmt::{dac_packets, PathScheduler, PathsView, PfVariant, Primary, RtxKind, TieBreaker};
use crate::congestion::AckInfo;
use crate::wire::{Chunk, ChunkType, CommonHeader, DataRef, PacketBuilder, SackChunk};

use super::buffers::BufferPool;
use super::splitting::{SplitCounts, SplitLimits};
use super::tsn::{tsn_gt, tsn_le, tsn_lt};
use super::{Association, Event, PathId, State, Timer, Transmit};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SentState {
    InFlight,
    /// Reported in a gap ack block.
    Acked,
    Marked(RtxKind),
}

/// A fragment of a user message: one DATA chunk's worth (queued or outstanding here,
/// awaiting reassembly in the inbound half).
#[derive(Debug)]
pub(crate) struct Fragment {
    pub(crate) stream: u16,
    pub(crate) ssn: u16,
    pub(crate) ppid: u32,
    pub(crate) unordered: bool,
    pub(crate) beginning: bool,
    pub(crate) ending: bool,
    /// The data held (empty for data made as it is sent).
    pub(crate) data: Vec<u8>,
    /// The data, when it is made as it is sent instead of held.
    pub(crate) generated: Option<Generated>,
}

/// Makes the bytes of a message that are not held: `generator(tag, at, out)` writes the
/// message's bytes from offset `at` on into `out` (zeros on the way in). A plain function
/// of the tag it was sent with and the position, so a fragment makes the same bytes every
/// time it is sent.
pub type Generator = fn(tag: [u64; 2], at: usize, out: &mut [u8]);

/// A fragment's data made as it is sent: `len` bytes from offset `at` of the message.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Generated {
    tag: [u64; 2],
    at: u32,
    len: u32,
    generator: Generator,
}

impl Fragment {
    /// An owned copy of a received DATA chunk, in a buffer from `buffers`.
    pub(crate) fn from_data(d: &DataRef<'_>, buffers: &mut BufferPool) -> Self {
        Fragment {
            stream: d.stream_id,
            ssn: d.ssn,
            ppid: d.ppid,
            unordered: d.unordered,
            beginning: d.beginning,
            ending: d.ending,
            data: buffers.copy_of(d.user_data),
            generated: None,
        }
    }

    /// Puts this fragment in the packet `builder` builds as a DATA chunk with `tsn`: its data
    /// copied, or made.
    fn write_into(&self, builder: &mut PacketBuilder, tsn: u32) {
        match self.generated {
            Some(g) => builder.data_generated(&self.data_ref(tsn), g.len as usize, |out| {
                (g.generator)(g.tag, g.at as usize, out);
            }),
            None => builder.data(&self.data_ref(tsn)),
        }
    }

    fn data_ref(&self, tsn: u32) -> DataRef<'_> {
        DataRef {
            immediate: false,
            unordered: self.unordered,
            beginning: self.beginning,
            ending: self.ending,
            tsn,
            stream_id: self.stream,
            ssn: self.ssn,
            ppid: self.ppid,
            user_data: &self.data,
        }
    }
    fn len(&self) -> u32 {
        self.generated.map_or(self.data.len() as u32, |g| g.len)
    }
}

/// A chunk with a TSN, not yet covered by the cumulative TSN ack.
#[derive(Debug)]
pub(crate) struct Sent {
    tsn: u32,
    frag: Fragment,
    /// Destination it was last sent to.
    path: PathId,
    sent_at: Instant,
    transmissions: u32,
    state: SentState,
    misses: u32,
    fast_retransmitted: bool,
    /// Gap-acknowledged once, then missing from a later SACK (§6.2.1 D iii): in flight
    /// again, and its bytes, already credited to cwnd, are not credited twice.
    revoked: bool,
}

impl Sent {
    fn acked(&self) -> AckedChunk {
        AckedChunk {
            path: self.path,
            tsn: self.tsn,
            len: self.frag.len(),
            state: self.state,
            transmissions: self.transmissions,
            sent_at: self.sent_at,
            revoked: self.revoked,
        }
    }
}

/// What the acknowledgement of a chunk needs to know of it.
#[derive(Clone, Copy, Debug)]
struct AckedChunk {
    path: PathId,
    tsn: u32,
    len: u32,
    state: SentState,
    transmissions: u32,
    sent_at: Instant,
    revoked: bool,
}

/// Sender state.
#[derive(Debug)]
pub(crate) struct Outbound {
    /// Fragments not yet given a TSN.
    queue: VecDeque<Fragment>,
    /// Chunks with TSNs above the cumulative TSN ack: `sent[i].tsn == cum_ack + 1 + i`.
    sent: VecDeque<Sent>,
    /// Highest cumulative TSN ack received.
    pub(crate) cum_ack: u32,
    /// Next TSN to assign.
    pub(crate) next_tsn: u32,
    /// The peer's receiver window as we track it (§6.2.1).
    pub(crate) peer_rwnd: u32,
    /// Next SSN per outbound stream.
    ssn: Vec<u16>,
    /// Chunks marked for retransmission.
    marked: usize,
    /// User bytes queued or outstanding (the send buffer's occupancy).
    pub(crate) buffered: u32,
    /// The TSN ranges (first, last) the latest SACK's gap ack blocks covered, in order:
    /// exactly the chunks above the cumulative ack in state `Acked` (a chunk a later SACK
    /// does not report is revoked, see [`Association::revoke_unreported`]), so the next
    /// SACK's blocks need not visit them again (with several paths a SACK carries many
    /// blocks, most of them already known).
    gap_acked: Vec<(u32, u32)>,
    /// Spare room for the next `gap_acked`.
    gap_scratch: Vec<(u32, u32)>,
    /// Since when new data has waited for the peer's rwnd alone (some destination had cwnd
    /// room for it), if it does now.
    rwnd_blocked_since: Option<Instant>,
    /// Time new data waited for the peer's rwnd alone, closed intervals.
    rwnd_blocked: Duration,
    /// Go-back-N (`Config::go_back_n`): SACKs in a row that did not advance the cumulative
    /// TSN ack while DATA was in flight.
    dup_sacks: u32,
    /// Go-back-N: the cumulative TSN ack when the last round marked the flight, and how
    /// many more duplicates at that point the originals then in flight may still cause.
    go_back_from: Option<(u32, u32)>,
}

impl Outbound {
    /// The destination the outstanding chunk with `tsn` was last sent to, if it is still
    /// above the cumulative TSN ack.
    pub(crate) fn destination_of(&self, tsn: u32) -> Option<PathId> {
        let i = tsn.wrapping_sub(self.cum_ack).wrapping_sub(1) as usize;
        self.sent.get(i).filter(|s| s.tsn == tsn).map(|s| s.path)
    }

    pub(crate) fn new(initial_tsn: u32, streams: u16) -> Self {
        Outbound {
            queue: VecDeque::new(),
            sent: VecDeque::new(),
            cum_ack: initial_tsn.wrapping_sub(1),
            next_tsn: initial_tsn,
            peer_rwnd: 0,
            ssn: vec![0; usize::from(streams)],
            marked: 0,
            buffered: 0,
            gap_acked: Vec::new(),
            gap_scratch: Vec::new(),
            rwnd_blocked_since: None,
            rwnd_blocked: Duration::ZERO,
            dup_sacks: 0,
            go_back_from: None,
        }
    }

    /// At a transmission opportunity at `now`, new data did (`blocked`) or did not wait for
    /// the peer's rwnd alone.
    fn note_rwnd_blocked(&mut self, now: Instant, blocked: bool) {
        match (self.rwnd_blocked_since, blocked) {
            (None, true) => self.rwnd_blocked_since = Some(now),
            (Some(since), false) => {
                self.rwnd_blocked = self.rwnd_blocked.saturating_add(now.saturating_since(since));
                self.rwnd_blocked_since = None;
            }
            _ => {}
        }
    }

    /// Time new data waited for the peer's rwnd alone up to `now`.
    pub(crate) fn rwnd_blocked_time(&self, now: Instant) -> Duration {
        let open = self.rwnd_blocked_since.map_or(Duration::ZERO, |since| now.saturating_since(since));
        self.rwnd_blocked.saturating_add(open)
    }

    pub(crate) fn stream_count(&self) -> u16 {
        self.ssn.len() as u16
    }

    pub(crate) fn set_stream_count(&mut self, n: u16) {
        self.ssn.resize(usize::from(n), 0);
    }

    /// Nothing queued and nothing outstanding.
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty() && self.sent.is_empty()
    }

    /// Frees the room the queues grew to (call when they are empty).
    pub(crate) fn shrink(&mut self) {
        self.queue.shrink_to_fit();
        self.sent.shrink_to_fit();
    }

    /// Splits a message into fragments of at most `max` bytes (§6.9) with one SSN.
    pub(crate) fn enqueue(
        &mut self,
        stream: u16,
        ppid: u32,
        unordered: bool,
        data: &[u8],
        max: usize,
        buffers: &mut BufferPool,
    ) {
        let ssn = self.next_ssn(stream, unordered);
        let n = data.len().div_ceil(max);
        for (i, part) in data.chunks(max).enumerate() {
            let data = buffers.copy_of(part);
            let (beginning, ending) = (i == 0, i + 1 == n);
            self.push(Fragment { stream, ssn, ppid, unordered, beginning, ending, data, generated: None });
        }
    }

    /// Queues a message of `len` bytes that `generator` makes with `tag` as it is sent, in
    /// fragments of at most `max` bytes (§6.9) with one SSN.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn enqueue_generated(
        &mut self,
        stream: u16,
        ppid: u32,
        unordered: bool,
        len: usize,
        max: usize,
        tag: [u64; 2],
        generator: Generator,
    ) {
        let ssn = self.next_ssn(stream, unordered);
        let n = len.div_ceil(max);
        for i in 0..n {
            let at = i * max;
            let part = max.min(len - at) as u32;
            let generated = Some(Generated { tag, at: at as u32, len: part, generator });
            let (beginning, ending) = (i == 0, i + 1 == n);
            self.push(Fragment { stream, ssn, ppid, unordered, beginning, ending, data: Vec::new(), generated });
        }
    }

    /// The SSN of a new message on `stream`: the stream's next, or 0 if unordered (§6.6).
    fn next_ssn(&mut self, stream: u16, unordered: bool) -> u16 {
        if unordered {
            return 0;
        }
        let s = &mut self.ssn[usize::from(stream)];
        let v = *s;
        *s = s.wrapping_add(1);
        v
    }

    fn push(&mut self, frag: Fragment) {
        self.buffered += frag.len();
        self.queue.push_back(frag);
    }
}

/// What one SACK did for one destination.
#[derive(Clone, Copy, Debug, Default)]
struct PathTally {
    /// Flight size before the SACK (§7.2.1 and §7.2.2 compare cwnd with it).
    flight_before: u32,
    /// Bytes newly acknowledged.
    acked: u32,
    /// Chunks newly marked for fast retransmission (§7.2.4).
    fast: u32,
    /// The cumulative ack covered a chunk in flight there (§6.3.2 R3).
    cum_acked: bool,
    /// Highest TSN newly acknowledged among the chunks last sent there (the
    /// per-destination miss-indication bookkeeping split fast retransmit counts against).
    highest_newly_acked: Option<u32>,
    /// Lowest TSN newly acknowledged among the chunks last sent there (CMT's DAC).
    lowest_newly_acked: Option<u32>,
    /// CMT: a gap ack block newly acknowledged this destination's pseudo-cumack or
    /// rtx-pseudo-cumack (CUC; see [`Association::note_pseudo_cumack`]).
    pseudo_cum_advanced: bool,
    /// CMT: whether a newly gap-acked chunk sent here once, and one retransmitted here,
    /// was already checked against the pseudo-cumacks in this SACK (only the lowest of
    /// each can be one).
    pseudo_cum_checked: [bool; 2],
}

impl PathTally {
    /// CUC: the destination's pseudo-cumack moved: the cumulative ack covered a chunk in
    /// flight there, or a gap ack block its earliest outstanding one.
    fn pseudo_cum_moved(&self) -> bool {
        self.cum_acked || self.pseudo_cum_advanced
    }
}

/// What one SACK did, per destination (indexed by [`PathId::index`]) and overall: scratch
/// space kept between SACKs.
#[derive(Debug, Default)]
pub(crate) struct SackTallies {
    per_path: Vec<PathTally>,
    /// Highest TSN newly acknowledged, whatever its destination (§7.2.4 HTNA).
    highest_newly_acked: Option<u32>,
    /// Highest TSN the SACK reports received (the cumulative ack or a gap block's end).
    highest_reported: u32,
    /// The SACK advanced the cumulative TSN ack point.
    cum_advanced: bool,
}

impl SackTallies {
    fn reset(&mut self, paths: &super::Paths, cum_advanced: bool, cum: u32) {
        self.per_path.clear();
        self.per_path.resize(paths.id_bound(), PathTally::default());
        for (id, p) in paths {
            self.per_path[id.index()].flight_before = p.flight_size;
        }
        self.highest_newly_acked = None;
        self.highest_reported = cum;
        self.cum_advanced = cum_advanced;
    }

    /// `tsn`, last sent to `path`, is newly acknowledged.
    fn note_newly_acked(&mut self, path: PathId, tsn: u32) {
        if self.highest_newly_acked.is_none_or(|h| tsn_gt(tsn, h)) {
            self.highest_newly_acked = Some(tsn);
        }
        if let Some(t) = self.per_path.get_mut(path.index()) {
            if t.highest_newly_acked.is_none_or(|h| tsn_gt(tsn, h)) {
                t.highest_newly_acked = Some(tsn);
            }
            // Chunks are acknowledged in TSN order (cumulative ack, then gap blocks).
            t.lowest_newly_acked.get_or_insert(tsn);
        }
    }

    /// Number of destinations with chunks newly acknowledged.
    fn destinations_newly_acked(&self) -> usize {
        self.per_path.iter().filter(|t| t.highest_newly_acked.is_some()).count()
    }
}

/// How CMT counts miss indications (the CMT paper's SFR and DAC), for one SACK.
#[derive(Clone, Copy, Debug)]
struct CmtMisses {
    /// Split Fast Retransmit: only later TSNs newly acknowledged on the same destination
    /// count.
    sfr: bool,
    /// DAC: the indications a TSN gets from a SACK that newly acknowledges chunks of one
    /// destination only, all above that TSN: the SACK's packet count (at least 1). `None`
    /// with DAC off or when the SACK newly acknowledges chunks of several destinations.
    dac: Option<u32>,
}

impl CmtMisses {
    /// Miss indications for `tsn`, in flight on `path` and missing below the SACK's
    /// limit (RFC 9260 §7.2.4's highest TSN newly acknowledged, or in Fast Recovery the
    /// highest reported), from the SACK `t` describes.
    fn indications(&self, tsn: u32, path: PathId, t: &SackTallies) -> u32 {
        let pt = t.per_path.get(path.index());
        if self.sfr {
            // SFR: a SACK that newly acknowledges nothing sent to this destination says
            // nothing about its TSNs; otherwise HTNA per destination: only a later TSN
            // sent to the same destination and newly acknowledged counts. §7.2.4's Fast
            // Recovery rule (a SACK advancing the cumulative ack counts every TSN reported
            // missing) is not widened to the association's highest reported TSN here: that
            // TSN is usually another destination's, and counting against it strikes chunks
            // still in flight on a slower path, the reordering SFR exists to ignore (ns-2's
            // sctp-cmt.cc limits every count to the destination's own highest TSN in the
            // SACK; with the widening, validation/ns2 case C gave spurious retransmissions).
            let Some(h) = pt.and_then(|p| p.highest_newly_acked) else { return 0 };
            if !tsn_lt(tsn, h) {
                return 0;
            }
        }
        // DAC: the packet count says how many packets arrived after the missing TSN only
        // if every newly acknowledged TSN lies above it; a TSN between newly acknowledged
        // ones gets one indication (ns-2 sctp-cmt.cc, uiLowestTsnInSackForDest).
        match self.dac {
            Some(n) if pt.and_then(|p| p.lowest_newly_acked).is_some_and(|l| tsn_gt(l, tsn)) => n,
            _ => 1,
        }
    }
}

/// A packet being filled.
/// The ECT(0) codepoint of the IP header's ECN field (RFC 3168 §5).
const ECT0: u8 = 0b10;

struct Open {
    path: PathId,
    builder: PacketBuilder,
    limit: usize,
    /// ECN: the packet carries DATA sent for the first time, a CWR, a retransmission.
    new_data: bool,
    cwr: bool,
    retransmission: bool,
    /// Where the packet's AUTH chunk starts (RFC 4895 §6.2), signed when the packet closes.
    auth_at: Option<usize>,
}

impl Association {
    // ----- SACK (§6.2.1, §7.2) -----

    /// A SACK chunk from the peer.
    pub(super) fn on_sack(&mut self, now: Instant, sack: &SackChunk) {
        self.process_sack(now, sack, true);
    }

    /// Processes a SACK (or the cumulative TSN ack of a SHUTDOWN, with `update_rwnd` false),
    /// in phases: validity, the cumulative ack, the gap ack blocks, miss indications,
    /// congestion control, the peer's rwnd, the T3-rtx timers.
    pub(super) fn process_sack(&mut self, now: Instant, sack: &SackChunk, update_rwnd: bool) {
        let cum = sack.cumulative_tsn_ack;
        if !self.sack_is_current(cum) {
            return;
        }
        // Per-path tallies live in buffers kept in the association: a SACK arrives for every
        // second packet, and allocating them each time was a measurable share of the cost.
        let mut t = std::mem::take(&mut self.sack_tallies);
        t.reset(&self.paths, tsn_gt(cum, self.out.cum_ack), cum);
        self.ack_cumulative(now, cum, &mut t);
        // §9.2: a SHUTDOWN carries no gap ack blocks, and their absence is no renege.
        if update_rwnd {
            self.ack_gap_blocks(now, sack, &mut t);
        }
        self.count_miss_indications(sack, &mut t);
        if self.config.go_back_n && update_rwnd {
            self.go_back_on_duplicates(&mut t);
        }
        self.update_congestion(cum, &t);
        if update_rwnd {
            self.update_peer_rwnd(sack.a_rwnd);
        }
        self.update_t3_timers(now, &t);
        self.sack_tallies = t;
        self.maybe_progress_shutdown(now);
    }

    /// §6.2.1 D i: a SACK older than the cumulative TSN ack point is ignored; one
    /// acknowledging TSNs never sent is a protocol violation, also ignored here.
    fn sack_is_current(&self, cum: u32) -> bool {
        !tsn_lt(cum, self.out.cum_ack) && tsn_lt(cum, self.out.next_tsn)
    }

    /// The chunks up to the cumulative TSN ack leave the queue.
    fn ack_cumulative(&mut self, now: Instant, cum: u32, t: &mut SackTallies) {
        while self.out.sent.front().is_some_and(|s| tsn_le(s.tsn, cum)) {
            let Some(s) = self.out.sent.pop_front() else { break };
            self.out.buffered = self.out.buffered.saturating_sub(s.frag.len());
            if let Some(path) = self.paths.get_mut(s.path) {
                path.queued_bytes = path.queued_bytes.saturating_sub(s.frag.len());
            }
            if s.state != SentState::Acked {
                // §6.3.2 R3 concerns data outstanding on the path, not chunks marked for
                // retransmission.
                if let Some(pt) = t.per_path.get_mut(s.path.index()) {
                    pt.cum_acked |= s.state == SentState::InFlight;
                }
                self.newly_acked(now, &s, &mut t.per_path);
                t.note_newly_acked(s.path, s.tsn);
            }
            self.buffers.give(s.frag.data);
        }
        self.out.cum_ack = cum;
    }

    /// Gap ack blocks: TSN cum + k is sent[k - 1]. The ranges the previous SACK's blocks
    /// covered are acknowledged already and skipped.
    fn ack_gap_blocks(&mut self, now: Instant, sack: &SackChunk, t: &mut SackTallies) {
        let cum = self.out.cum_ack;
        let len = self.out.sent.len();
        let known = std::mem::take(&mut self.out.gap_acked);
        let mut covered = std::mem::take(&mut self.out.gap_scratch);
        covered.clear();
        let mut j = 0;
        for block in &sack.gap_ack_blocks {
            if block.start == 0 || block.end < block.start {
                continue;
            }
            let (first, last) = (usize::from(block.start), usize::from(block.end).min(len));
            if first > last {
                break;
            }
            let (first_tsn, last_tsn) = (cum.wrapping_add(first as u32), cum.wrapping_add(last as u32));
            if covered.last().is_some_and(|&(_, b)| !tsn_lt(b, first_tsn)) {
                j = 0; // blocks out of order: look through the known ranges again
            }
            t.highest_reported = last_tsn;
            covered.push((first_tsn, last_tsn));
            // The same block as the previous SACK's: nothing new in it.
            while known.get(j).is_some_and(|&(_, b)| tsn_lt(b, first_tsn)) {
                j += 1;
            }
            if known.get(j) == Some(&(first_tsn, last_tsn)) {
                continue;
            }
            let mut k = first;
            while k <= last {
                let tsn = cum.wrapping_add(k as u32);
                while known.get(j).is_some_and(|&(_, b)| tsn_lt(b, tsn)) {
                    j += 1;
                }
                if let Some(&(_, b)) = known.get(j).filter(|&&(a, _)| tsn_le(a, tsn)) {
                    k += b.wrapping_sub(tsn) as usize + 1;
                    continue;
                }
                self.ack_gap_acked_chunk(now, k, t);
                k += 1;
            }
        }
        self.revoke_unreported(now, &known, &covered);
        self.out.gap_acked = covered;
        self.out.gap_scratch = known;
    }

    /// §6.2.1 D iii: a chunk the previous SACK gap-acknowledged (in `known`) that this
    /// SACK does not report (its blocks are `covered`) may be missing at the peer: it is
    /// outstanding again on the destination it was last sent to, so D ii's rwnd (a_rwnd
    /// less the bytes outstanding) counts it, and T3-rtx runs there (§6.3.2 R4). A
    /// receiver that reneges does this; so does every SACK overtaken by a later one,
    /// the normal course under CMT, where SACKs return over paths of different delay:
    /// the older SACK's a_rwnd does not count chunks that arrived after it was sent, so
    /// with the later SACK's gap acks kept the sender overestimates the peer's window and
    /// overruns its buffer. The University of Delaware ns-2 module does the same (sctp.cc
    /// and sctp-cmt.cc `ProcessGapAckBlocks`: "we only trust gap ack info from the last
    /// SACK"), as does FreeBSD (sctp_indata.c, `sctp_check_for_revoked`). D iii also
    /// counts a miss indication for such a chunk; neither of those does, and here none is
    /// counted either: an overtaken SACK says nothing about loss, and a chunk the peer
    /// really dropped lies in a hole of the later SACKs, which count misses as usual.
    fn revoke_unreported(&mut self, now: Instant, known: &[(u32, u32)], covered: &[(u32, u32)]) {
        let cum = self.out.cum_ack;
        // Blocks arrive in TSN order, so one pass over `covered` serves every known range;
        // out of order (a malformed SACK), each TSN is looked up in all of them.
        let ordered = covered.windows(2).all(|w| tsn_lt(w[0].1, w[1].0));
        let mut c = 0;
        for &(a, b) in known {
            if !tsn_gt(b, cum) {
                continue;
            }
            let mut tsn = if tsn_gt(a, cum) { a } else { cum.wrapping_add(1) };
            while tsn_le(tsn, b) {
                // The block of this SACK holding `tsn`, if any: skip past it.
                let block = if ordered {
                    while covered.get(c).is_some_and(|&(_, y)| tsn_lt(y, tsn)) {
                        c += 1;
                    }
                    covered.get(c).filter(|&&(x, _)| tsn_le(x, tsn))
                } else {
                    covered.iter().find(|&&(x, y)| tsn_le(x, tsn) && tsn_le(tsn, y))
                };
                if let Some(&(_, end)) = block {
                    tsn = end.wrapping_add(1);
                    continue;
                }
                let k = tsn.wrapping_sub(cum) as usize;
                let Some(s) = self.out.sent.get_mut(k - 1) else { break };
                tsn = tsn.wrapping_add(1);
                if s.state != SentState::Acked {
                    continue;
                }
                s.state = SentState::InFlight;
                s.revoked = true;
                let (p, len, once, t) = (s.path, s.frag.len(), s.transmissions == 1, s.tsn);
                let Some(path) = self.paths.get_mut(p) else { continue };
                path.flight_size += len;
                // The searches for missing chunks and for the pseudo-cumack resume at it.
                if path.miss_floor.is_some_and(|f| tsn_lt(t, f)) {
                    path.miss_floor = Some(t);
                }
                if once && path.pseudo_cumack_scan.is_some_and(|f| tsn_lt(t, f)) {
                    path.pseudo_cumack_scan = Some(t);
                }
                if !self.timers.is_armed(Timer::T3Rtx(p)) {
                    self.timers.set(Timer::T3Rtx(p), now + path.rto.rto);
                }
            }
        }
    }

    /// The chunk at offset `k` (TSN cum + k) lies in a gap ack block.
    fn ack_gap_acked_chunk(&mut self, now: Instant, k: usize, t: &mut SackTallies) {
        let s = &self.out.sent[k - 1];
        if s.state == SentState::Acked {
            return;
        }
        let c = s.acked();
        let (tsn, path, state, tx) = (c.tsn, c.path, c.state, c.transmissions);
        self.account_ack(now, c, &mut t.per_path);
        self.out.sent[k - 1].state = SentState::Acked;
        t.note_newly_acked(path, tsn);
        if self.config.cmt.enabled && state == SentState::InFlight {
            self.note_pseudo_cumack(k - 1, path, tx > 1, &mut t.per_path);
        }
    }

    /// CUC (the CMT paper, side-effect 2): `sent[k]`, in flight to `d` (sent once, or
    /// `retransmitted`), was just acknowledged by a gap ack block. If no earlier chunk of the
    /// same kind (sent to `d` once, or retransmitted to `d`) is still unacknowledged, it was
    /// `d`'s pseudo-cumack (or rtx-pseudo-cumack), which this SACK advanced. Only the lowest
    /// such chunk of a SACK can be, so each kind is checked once per destination and SACK;
    /// a chunk the cumulative ack covers always counts (`cum_acked`), as in the
    /// University of Delaware ns-2 module (sctp-cmt.cc) and FreeBSD (sctp_indata.c, "CUCv2").
    fn note_pseudo_cumack(&mut self, k: usize, d: PathId, retransmitted: bool, tallies: &mut [PathTally]) {
        let Some(pt) = tallies.get_mut(d.index()) else { return };
        let kind = usize::from(retransmitted);
        if pt.pseudo_cum_checked[kind] || pt.pseudo_cum_moved() {
            return;
        }
        pt.pseudo_cum_checked[kind] = true;
        let earlier_unacked =
            |s: &Sent| s.path == d && (s.transmissions > 1) == retransmitted && s.state != SentState::Acked;
        let lowest = if retransmitted {
            // Retransmissions to `d` may carry any TSN, so the search starts at the
            // cumulative ack; they are few.
            !self.out.sent.range(..k).any(earlier_unacked)
        } else {
            // Chunks sent once to `d` below the scan point are all acknowledged (new
            // TSNs only ever go above it), so the search resumes there.
            let cum = self.out.cum_ack;
            let Some(path) = self.paths.get_mut(d) else { return };
            let start = path
                .pseudo_cumack_scan
                .filter(|&tsn| tsn_gt(tsn, cum))
                .map_or(0, |tsn| tsn.wrapping_sub(cum) as usize - 1)
                .min(k);
            match self.out.sent.range(start..k).find(|s| earlier_unacked(s)) {
                Some(s) => {
                    path.pseudo_cumack_scan = Some(s.tsn);
                    false
                }
                None => {
                    path.pseudo_cumack_scan = Some(cum.wrapping_add(k as u32 + 2));
                    true
                }
            }
        };
        pt.pseudo_cum_advanced = lowest;
    }

    /// §7.2.4 miss indications (HTNA): TSNs missing below the highest TSN newly
    /// acknowledged. In Fast Recovery, a SACK advancing the cumulative ack counts every
    /// TSN reported missing. With CMT, SFR and DAC change the count per TSN (see
    /// [`CmtMisses`]).
    fn count_miss_indications(&mut self, sack: &SackChunk, t: &mut SackTallies) {
        // Without gap blocks nothing above the cumulative ack was reported: the highest TSN
        // newly acknowledged is at most the cumulative ack, so no chunk lies below it
        // missing (the common SACK of a transfer without loss).
        if sack.gap_ack_blocks.is_empty() {
            return;
        }
        let cum = self.out.cum_ack;
        let any_fr = self.paths.values().any(|p| p.fast_recovery_exit.is_some());
        let limit = match t.highest_newly_acked {
            Some(h) if any_fr && t.cum_advanced => {
                Some(if tsn_gt(t.highest_reported, h) { t.highest_reported } else { h })
            }
            other => other,
        };
        let Some(limit) = limit else { return };
        let cmt = self.config.cmt;
        let rule = cmt.enabled.then(|| CmtMisses {
            sfr: cmt.sfr,
            dac: (cmt.dac && t.destinations_newly_acked() == 1).then(|| dac_packets(sack.flags).max(1)),
        });
        // Chunks the SACK covers are marked acknowledged by now, so the missing ones lie
        // in its holes: walk those (TSN cum + k is sent[k - 1]), not the whole queue.
        // Offsets 1..end lie below `limit`, which may be at or below `cum` (the highest
        // chunk newly acked can sit under chunks gap-acked before).
        let end = if tsn_gt(limit, cum) { limit.wrapping_sub(cum) as usize } else { 0 };
        let (from, end) = match rule {
            Some(r) if r.sfr => match self.sfr_range(t) {
                Some((from, to)) => (from, to.min(end)),
                None => return,
            },
            _ => (1, end),
        };
        let mut next = from;
        for block in &sack.gap_ack_blocks {
            if block.start == 0 || block.end < block.start {
                continue;
            }
            let start = usize::from(block.start).min(end);
            self.count_misses(next, start, t, rule);
            next = next.max(usize::from(block.end) + 1);
        }
        self.count_misses(next, end, t, rule);
    }

    /// Go-back-N's sender rule (`Config::go_back_n`, paper 002 Section VI.B): a receiver
    /// that discards out-of-order DATA reports no gap blocks, so §7.2.4 never counts a miss;
    /// instead, as TCP's duplicate ACKs (RFC 5681 §2, §3.2: the third one), the third SACK
    /// in a row that does not advance the cumulative TSN ack while DATA is in flight marks
    /// every chunk in flight, on every destination, for retransmission: the first is
    /// missing and the receiver has dropped everything after it. The marks count as fast
    /// retransmissions, so `update_congestion` reduces each destination's cwnd once and
    /// enters Fast Recovery (§7.2.4 steps 2-5). In Fast Recovery, duplicates at the
    /// cumulative ack of the round are the discarded originals still arriving (at most one
    /// per chunk then in flight, a SACK per discarded packet) and start no new round; three
    /// more at that point, or three at a point the retransmissions reached, mean a
    /// retransmission was lost, and everything in flight after it goes again (as NewReno's
    /// partial acknowledgements, RFC 6582 §3.2, without a second cwnd reduction). T3-rtx
    /// marks everything outstanding on its destination (§6.3.3 E3).
    fn go_back_on_duplicates(&mut self, t: &mut SackTallies) {
        const DUPLICATE_THRESHOLD: u32 = 3;
        let in_flight = self.paths.values().any(|p| p.flight_size > 0);
        if t.cum_advanced || !in_flight {
            self.out.dup_sacks = 0;
            return;
        }
        let recovering = self.paths.values().any(|p| p.fast_recovery_exit.is_some());
        if let Some((from, stale)) = self.out.go_back_from.as_mut() {
            if recovering && *from == self.out.cum_ack && *stale > 0 {
                *stale -= 1;
                return;
            }
        }
        self.out.dup_sacks += 1;
        if self.out.dup_sacks < DUPLICATE_THRESHOLD {
            return;
        }
        self.out.dup_sacks = 0;
        self.stats.go_back_n_rounds += 1;
        let mut marked = 0u32;
        for i in 0..self.out.sent.len() {
            if self.out.sent[i].state == SentState::InFlight {
                marked += 1;
                let p = self.mark_for_retransmission(i, RtxKind::Fast);
                if let Some(pt) = t.per_path.get_mut(p.index()) {
                    pt.fast += 1;
                }
            }
        }
        self.out.go_back_from = Some((self.out.cum_ack, marked));
    }

    /// With SFR, the offsets (TSN cum + k for k in the range) where a chunk may take a miss
    /// indication: for each destination with chunks newly acknowledged, from its lowest
    /// unacknowledged chunk to its limit, its highest TSN newly acknowledged (see
    /// [`CmtMisses::indications`]). `None` if no
    /// chunk can. Without loss every destination's chunks below its limit are
    /// acknowledged, so nothing is walked, however many holes the other paths leave.
    fn sfr_range(&mut self, t: &SackTallies) -> Option<(usize, usize)> {
        let cum = self.out.cum_ack;
        let mut range: Option<(usize, usize)> = None;
        for (i, pt) in t.per_path.iter().enumerate() {
            let Some(h) = pt.highest_newly_acked else { continue };
            let d = PathId::new(i as u32);
            let end = if tsn_gt(h, cum) { h.wrapping_sub(cum) as usize } else { 0 };
            let floor = self.miss_floor(d, end);
            if floor < end {
                range = Some(range.map_or((floor, end), |(a, b)| (a.min(floor), b.max(end))));
            }
        }
        range
    }

    /// The offset of the lowest chunk last sent to `d` that is not acknowledged, or `upto`
    /// if there is none below it; moves `d`'s floor up to it (the search resumes there).
    fn miss_floor(&mut self, d: PathId, upto: usize) -> usize {
        let cum = self.out.cum_ack;
        let Some(path) = self.paths.get_mut(d) else { return upto };
        let mut k = path.miss_floor.filter(|&f| tsn_gt(f, cum)).map_or(1, |f| f.wrapping_sub(cum) as usize);
        while k < upto {
            match self.out.sent.get(k - 1) {
                Some(s) if s.path != d || s.state == SentState::Acked => k += 1,
                _ => break,
            }
        }
        path.miss_floor = Some(cum.wrapping_add(k as u32));
        k
    }

    /// §7.2.1 / §7.2.2 window growth first, then §7.2.4 reductions. The controllers see
    /// their path's SRTT and every path of the association, as this SACK left them.
    fn update_congestion(&mut self, cum: u32, t: &SackTallies) {
        let wanted = || self.paths.values().any(|p| p.controller.reads_group_view());
        let refilled = t.per_path.iter().any(|pt| pt.acked > 0 || pt.fast > 0) && wanted();
        if refilled {
            self.group_view.refill(self.paths.iter());
        }
        let group = &mut self.group_view;
        let cuc = self.config.cmt.cuc_active();
        for (p, path) in self.paths.iter_mut() {
            let Some(pt) = t.per_path.get(p.index()) else { continue };
            if pt.acked > 0 {
                path.stats.bytes_acked += u64::from(pt.acked);
                path.acked_since_loss += u64::from(pt.acked);
                if refilled {
                    group.show_to(p);
                }
                let info = AckInfo {
                    bytes_acked: pt.acked,
                    flight_before: pt.flight_before,
                    // CUC: the destination's own pseudo-cumack stands for the cumulative ack.
                    cum_advanced: if cuc { pt.pseudo_cum_moved() } else { t.cum_advanced },
                    in_fast_recovery: path.fast_recovery_exit.is_some(),
                    all_acked: path.flight_size == 0,
                    srtt: path.rto.srtt,
                };
                path.controller.on_ack(&mut path.cc, &info, group);
            }
            if path.fast_recovery_exit.is_some_and(|exit| tsn_le(exit, cum)) {
                path.fast_recovery_exit = None;
            }
        }
        let highest_outstanding = self.out.next_tsn.wrapping_sub(1);
        for (i, pt) in t.per_path.iter().enumerate() {
            if pt.fast == 0 {
                continue;
            }
            let p = PathId::new(i as u32);
            let Some(path) = self.paths.get_mut(p) else { continue };
            if path.fast_recovery_exit.is_none() {
                if refilled {
                    self.group_view.show_to(p);
                }
                path.controller.on_fast_retransmit(&mut path.cc, &self.group_view);
                path.note_loss();
                path.fast_recovery_exit = Some(highest_outstanding);
                path.ecn_recover = Some(highest_outstanding);
            }
            path.rtt_probe = None;
            path.force_packet = Some(RtxKind::Fast);
            self.any_forced_packet = true;
            self.events.push_back(Event::FastRetransmit { path: p, chunks: pt.fast });
        }
    }

    /// §6.2.1 D iv: rwnd = a_rwnd less the bytes still in flight.
    fn update_peer_rwnd(&mut self, a_rwnd: u32) {
        // The per-path flight sizes add up to the bytes in flight (no scan of the queue).
        let in_flight: u32 = self.paths.values().map(|p| p.flight_size).sum();
        self.out.peer_rwnd = a_rwnd.saturating_sub(in_flight);
    }

    /// §6.3.2 R2/R3: stop T3 where nothing is outstanding; restart it where the earliest
    /// outstanding TSN was acknowledged. Without CMT that is read as "the cumulative ack
    /// covered a chunk in flight there"; with CMT, whose paths' data is acknowledged out
    /// of order, a gap ack of the destination's earliest outstanding TSN (its
    /// pseudo-cumack) counts too, as FreeBSD does (sctp_indata.c, new_pseudo_cumack).
    fn update_t3_timers(&mut self, now: Instant, t: &SackTallies) {
        let cmt = self.config.cmt.enabled;
        for (p, path) in self.paths.iter_mut() {
            let restart =
                t.per_path.get(p.index()).is_some_and(|pt| if cmt { pt.pseudo_cum_moved() } else { pt.cum_acked });
            if path.flight_size == 0 {
                self.timers.stop(Timer::T3Rtx(p));
            } else if restart {
                self.timers.set(Timer::T3Rtx(p), now + path.rto.rto);
            }
        }
    }

    /// §7.2.4: one miss indication for each chunk in flight at offsets `from..to` past the
    /// cumulative ack (with CMT, as `rule` says); the third marks it for fast
    /// retransmission (once per chunk).
    fn count_misses(&mut self, from: usize, to: usize, t: &mut SackTallies, rule: Option<CmtMisses>) {
        for k in from..to {
            let Some(s) = self.out.sent.get_mut(k - 1) else { return };
            if s.state != SentState::InFlight {
                continue;
            }
            let n = match rule {
                None => 1,
                Some(r) => r.indications(s.tsn, s.path, t),
            };
            if n == 0 {
                continue;
            }
            s.misses += n;
            if s.misses >= 3 && !s.fast_retransmitted {
                s.fast_retransmitted = true;
                let p = self.mark_for_retransmission(k - 1, RtxKind::Fast);
                if let Some(pt) = t.per_path.get_mut(p.index()) {
                    pt.fast += 1;
                }
            }
        }
    }

    /// Marks the chunk at `i` of the sent queue, in flight, for retransmission of `kind`: it
    /// leaves its destination's flight and (§6.2.1 C) gives its size back to the peer's rwnd.
    /// Returns that destination.
    fn mark_for_retransmission(&mut self, i: usize, kind: RtxKind) -> PathId {
        let s = &mut self.out.sent[i];
        debug_assert_eq!(s.state, SentState::InFlight);
        s.state = SentState::Marked(kind);
        s.misses = 0;
        let (p, len) = (s.path, s.frag.len());
        self.out.marked += 1;
        let path = &mut self.paths[p];
        path.flight_size = path.flight_size.saturating_sub(len);
        self.out.peer_rwnd = self.out.peer_rwnd.saturating_add(len);
        p
    }

    /// Bookkeeping for a chunk newly acknowledged by the cumulative ack.
    fn newly_acked(&mut self, now: Instant, s: &Sent, tallies: &mut [PathTally]) {
        self.account_ack(now, s.acked(), tallies);
    }

    /// Flight, error counters and RTT for one newly acknowledged chunk (§6.3.1, §8.2, §8.3).
    fn account_ack(&mut self, now: Instant, c: AckedChunk, tallies: &mut [PathTally]) {
        let AckedChunk { path: p, tsn, len, state, transmissions, sent_at, revoked } = c;
        match state {
            SentState::InFlight => self.paths[p].flight_size = self.paths[p].flight_size.saturating_sub(len),
            SentState::Marked(_) => {
                // Acknowledged while waiting for retransmission: its last transmission may
                // have crossed a path that has since failed, so (as Linux does for its
                // retransmit queue) it credits no destination and clears no error counter.
                self.out.marked = self.out.marked.saturating_sub(1);
                return;
            }
            SentState::Acked => return,
        }
        // A revoked chunk's bytes were credited when it was first gap-acknowledged.
        if let Some(pt) = tallies.get_mut(p.index()).filter(|_| !revoked) {
            pt.acked += len;
        }
        self.error_count = 0;
        // CMT-PF rule 5 (Natarajan et al. 2008): the ack of a retransmission may be for an
        // earlier transmission, so it neither clears the destination's error counter nor
        // brings it back from PF (ns-2 sctp-cmt.cc: only chunks with one transmission do).
        let credits_path = transmissions == 1 || self.config.pf_variant != PfVariant::Cmt;
        let path = &mut self.paths[p];
        if credits_path {
            path.error_count = 0;
        }
        // §6.3.1 C5 (Karn): only chunks sent once give RTT samples.
        if path.rtt_probe.is_some_and(|(t, _)| t == tsn) {
            path.rtt_probe = None;
            if transmissions == 1 {
                path.rto.on_measurement(now.saturating_since(sent_at), &self.config);
            }
        }
        if credits_path && path.state != super::PathState::Active {
            // §8.2: an acknowledged TSN makes its destination active again; RFC 7829 §5:
            // so does it for a PF destination.
            self.set_path_state(now, p, super::PathState::Active);
        }
    }

    // ----- T3-rtx (§6.3.3) -----

    pub(super) fn on_t3_expiry(&mut self, now: Instant, p: PathId) {
        self.timers.stop(Timer::T3Rtx(p));
        let mut marked = 0u32;
        for i in 0..self.out.sent.len() {
            let s = &self.out.sent[i];
            if s.path == p && s.state == SentState::InFlight {
                marked += 1;
                self.mark_for_retransmission(i, RtxKind::Timeout);
            }
        }
        if marked == 0 {
            return; // nothing outstanding here: a stale timer.
        }
        if self.paths.values().any(|p| p.controller.reads_group_view()) {
            self.group_view.refill(self.paths.iter());
            self.group_view.show_to(p);
        }
        let path = &mut self.paths[p];
        path.stats.t3_timeouts += 1;
        // E1: ssthresh and cwnd; E2: back off the RTO; Karn: no sample from this round.
        path.controller.on_timeout(&mut path.cc, &self.group_view);
        path.note_loss();
        path.ecn_recover = Some(self.out.next_tsn.wrapping_sub(1));
        path.rto.back_off(&self.config);
        path.rtt_probe = None;
        let rto = path.rto.rto;
        self.events.push_back(Event::T3Timeout { path: p, rto });
        // E3: one packet of the earliest marked chunks goes out at once, to where the
        // retransmission policy sends them (§6.4: an alternate); the rest wait for cwnd.
        let view = PathsView::new(&self.paths, self.primary, self.data_path);
        let mut ties = TieBreaker::new(&mut self.rng);
        let dst = self.retransmit_policy.destination(&view, p, RtxKind::Timeout, &mut ties);
        if let Some(path) = self.paths.get_mut(dst) {
            path.force_packet = Some(RtxKind::Timeout);
            self.any_forced_packet = true;
        }
        self.path_error(now, p);
    }

    /// Destination `p` is going away (RFC 5061 DELETE-IP) or unreachable: its DATA in flight
    /// is marked for retransmission and counted as last sent to `to`, so the retransmission
    /// policy sends it from there; no congestion reaction (nothing was lost). Its flight
    /// leaves `p`, which may stay (unreachable, it is probed and may come back).
    pub(super) fn evacuate_path(&mut self, p: PathId, to: PathId) {
        for i in 0..self.out.sent.len() {
            if self.out.sent[i].path != p {
                continue;
            }
            if self.out.sent[i].state == SentState::InFlight {
                self.mark_for_retransmission(i, RtxKind::Timeout);
            }
            let s = &mut self.out.sent[i];
            s.path = to;
            // Its share of the send buffer goes with it (taken off `to` when it is acked).
            let len = s.frag.len();
            self.paths[p].queued_bytes = self.paths[p].queued_bytes.saturating_sub(len);
            self.paths[to].queued_bytes += len;
        }
        self.timers.stop(Timer::T3Rtx(p));
        self.dirty = true;
    }

    // ----- destination choice (§6.4) -----

    /// An active destination other than `p` for retransmissions (§6.4), or `p` itself.
    pub(super) fn alternate(&self, p: PathId) -> PathId {
        self.paths_view().alternate(p)
    }

    // ----- packet building (§6.1, §6.10) -----

    fn open_packet(&mut self, path: PathId) -> Open {
        let limit = self.config.max_packet();
        let header =
            CommonHeader { src_port: self.local_port, dst_port: self.peer_port, verification_tag: self.peer_tag };
        // The buffer has room for the lower layers too (a whole MTU), so a driver can put its
        // headers in front of the packet without copying it to a new buffer.
        Open {
            path,
            builder: PacketBuilder::with_headroom(header, self.buffers.take(), self.headroom),
            limit,
            new_data: false,
            cwr: false,
            retransmission: false,
            auth_at: None,
        }
    }

    /// Sends the packet `open` holds (if it holds one), leaving it empty. It is not moved:
    /// a move of the builder right after its data was written would load its fields back
    /// while those stores are still on their way to the cache.
    fn close_packet(&mut self, open: &mut Open) {
        if open.builder.is_empty() {
            return;
        }
        if let (Some(at), Some(state)) = (open.auth_at, self.auth.as_ref()) {
            super::signing::sign(state, open.builder.packet_mut(), at);
        }
        let path = &mut self.paths[open.path];
        path.stats.packets_sent += 1;
        // RFC 9260 Appendix A: ECT(0) on packets of new DATA once ECN is agreed (none on
        // retransmissions, as RFC 3168 §6.1.5 for TCP), and on a packet carrying a CWR, which
        // stands in the data stream (see `ecn.rs`).
        let ect = self.ecn.ok && (open.new_data || open.cwr) && !open.retransmission;
        self.transmits.push_back(Transmit {
            remote: path.remote,
            local: self.local_source,
            ecn: if ect { ECT0 } else { 0 },
            path: open.path,
            headroom: self.headroom,
            payload: open.builder.take_finished(self.checksum),
        });
    }

    /// The builder of the open packet for `path` with room for `need` more bytes, closing
    /// the current one if it goes elsewhere or is full. The packet stays in `open` (not
    /// moved in and out by value: this runs for every chunk).
    ///
    /// A chunk of a type the peer requires authenticated (`ctype`, RFC 4895 §6.2) goes after an
    /// AUTH chunk: one is added to the packet first if it has none (the AUTH covers every
    /// chunk after it, so chunks already in the packet stay where they are).
    fn packet_for<'a>(
        &mut self,
        open: &'a mut Option<Open>,
        path: PathId,
        need: usize,
        ctype: ChunkType,
    ) -> &'a mut PacketBuilder {
        let auth = match self.auth.as_ref() {
            Some(a) if a.must_sign(ctype.0) => self.auth_placeholder(),
            _ => None,
        };
        let extra = |o: &Open| if o.auth_at.is_none() { auth.as_ref().map_or(0, Chunk::buffer_len) } else { 0 };
        let fits = open.as_ref().is_some_and(|o| o.path == path && o.builder.len() + need + extra(o) <= o.limit);
        if !fits {
            if let Some(o) = open.as_mut() {
                self.close_packet(o);
            }
            *open = None;
        }
        let o = open.get_or_insert_with(|| self.open_packet(path));
        if let Some(chunk) = auth.filter(|_| o.auth_at.is_none()) {
            o.auth_at = Some(o.builder.len());
            o.builder.chunk(&chunk);
        }
        &mut o.builder
    }

    /// `p` if it names a path, else the primary (or any path): a chunk queued for a path
    /// that has since been removed goes elsewhere.
    fn existing_or_primary(&self, p: PathId) -> PathId {
        if self.paths.contains(p) {
            return p;
        }
        if self.paths.contains(self.primary) {
            return self.primary;
        }
        self.paths.first().unwrap_or(p)
    }

    /// Builds every packet that may go out now: the SACK, control chunks, retransmissions,
    /// then new data.
    pub(super) fn flush(&mut self, now: Instant) {
        if self.paths.is_empty() {
            self.control.clear();
            return;
        }
        if self.asconf.enabled {
            self.send_asconf(now); // RFC 5061 §5.1: pending address changes
        }
        let mut open: Option<Open> = None;
        // §5.1 D: a COOKIE ACK is the first chunk of its packet, ahead even of the SACK that
        // DATA bundled with a repeated COOKIE ECHO makes due (§5.2.4 A, D).
        if let Some(i) = self.control.iter().position(|(_, c)| matches!(c, Chunk::CookieAck)) {
            if let Some((p, chunk)) = self.control.remove(i) {
                let p = self.existing_or_primary(p);
                self.packet_for(&mut open, p, chunk.buffer_len(), chunk.chunk_type()).chunk(&chunk);
            }
        }
        // Otherwise a SACK leads the first packet to its destination (§6.4: replies go where
        // the DATA came from).
        let data_states = matches!(
            self.state,
            State::Established | State::ShutdownPending | State::ShutdownSent | State::ShutdownReceived
        );
        let sack_due = self.inb.sack_due() || self.timers.is_due(Timer::DelayedSack, now);
        if data_states && (sack_due || self.inb.window_update_due(self.config.pmtu)) {
            self.timers.stop(Timer::DelayedSack);
            // Room for gap blocks after the common and SACK headers, keeping 256 bytes for
            // other chunks; Config::validate's PMTU floor keeps it positive.
            let max_blocks = self.config.max_packet().saturating_sub(12 + 16 + 64 * 4) / 4;
            let sack = Chunk::Sack(self.inb.make_sack(max_blocks.max(1), self.config.cmt.dac_active()));
            self.stats.sacks_sent += 1;
            let p = self.existing_or_primary(self.sack_path);
            // RFC 9260 Appendix A: the ECNE rides with every SACK until a CWR covers it.
            if let Some(ecne) = self.ecne_due() {
                self.packet_for(&mut open, p, ecne.buffer_len() + sack.buffer_len(), ChunkType::ECNE).chunk(&ecne);
            }
            self.packet_for(&mut open, p, sack.buffer_len(), ChunkType::SACK).chunk(&sack);
            if let Chunk::Sack(sack) = sack {
                self.inb.recycle_sack(sack);
            }
        }
        while let Some((p, chunk)) = self.control.pop_front() {
            let p = self.existing_or_primary(p);
            let len = chunk.buffer_len();
            self.packet_for(&mut open, p, len, chunk.chunk_type()).chunk(&chunk);
            if let Chunk::Heartbeat { .. } = chunk {
                self.paths[p].stats.heartbeats_sent += 1;
                self.events.push_back(Event::HeartbeatSent { path: p });
            }
        }
        let mut rwnd_blocked = false;
        if data_states {
            let held = self.fill_retransmissions(now, &mut open);
            if matches!(self.state, State::Established | State::ShutdownPending | State::ShutdownReceived) {
                rwnd_blocked = self.fill_new_data(now, &mut open, &held);
            }
        }
        self.out.note_rwnd_blocked(now, rwnd_blocked);
        if self.ecn.cwr.is_some() && self.out.queue.is_empty() && self.out.sent.is_empty() {
            // No data queued or in flight, so none will carry the CWR soon: it goes alone.
            if let Some(cwr) = self.take_cwr() {
                let p = self.existing_or_primary(self.primary);
                self.packet_for(&mut open, p, cwr.buffer_len(), ChunkType::CWR).chunk(&cwr);
                if let Some(o) = open.as_mut() {
                    o.cwr = true;
                }
            }
        }
        if let Some(o) = open.as_mut() {
            self.close_packet(o);
        }
        if std::mem::take(&mut self.any_forced_packet) {
            for (_, path) in self.paths.iter_mut() {
                path.force_packet = None;
            }
        }
    }

    /// Chunks marked for retransmission, lowest TSN first (§6.1 C), within each
    /// destination's cwnd except for one forced packet per destination (§6.3.3 E3, §7.2.4
    /// step 3). After a T3-rtx expiry that packet is all its destination gets in this
    /// opportunity (E3; the rest are "sent as soon as cwnd allows (normally, when a SACK
    /// arrives)"), as in Linux (net/sctp/outqueue.c sends one packet on a retransmission
    /// timeout) and FreeBSD (one transmission out of a T3 timeout). Returns, indexed by
    /// [`PathId::index`] (empty if none), the destinations where E3 holds marked chunks
    /// back: new data must not overtake them there (§6.1 C).
    fn fill_retransmissions(&mut self, now: Instant, open: &mut Option<Open>) -> Vec<bool> {
        let mut held = Vec::new();
        if self.out.marked == 0 {
            return held;
        }
        let n = self.paths.id_bound();
        let room = self.config.max_packet().saturating_sub(12);
        // DATA bytes in each destination's forced packet so far.
        let mut forced_bytes = vec![0usize; n];
        // A destination whose cwnd refused its lowest marked chunk takes no later ones in
        // this flush (lowest TSN first); once every possible destination is full the scan
        // stops, instead of visiting every marked chunk on every packet received.
        let mut blocked = vec![false; n];
        for i in 0..self.out.sent.len() {
            if self.out.marked == 0 {
                break;
            }
            let SentState::Marked(kind) = self.out.sent[i].state else { continue };
            let view = PathsView::new(&self.paths, self.primary, self.data_path);
            let mut ties = TieBreaker::new(&mut self.rng);
            let dst = self.retransmit_policy.destination(&view, self.out.sent[i].path, kind, &mut ties);
            let Some(force) = self.paths.get(dst).map(|p| p.force_packet) else { continue };
            let d = dst.index();
            let len = self.out.sent[i].frag.len();
            let chunk_len = (16 + len as usize).next_multiple_of(4);
            let forced = force.is_some() && forced_bytes[d] + chunk_len <= room;
            let waits = force == Some(RtxKind::Timeout) || !self.paths[dst].cwnd_allows(len);
            if !forced && (blocked[d] || waits) {
                blocked[d] = true;
                if force == Some(RtxKind::Timeout) {
                    held.resize(n, false);
                    held[d] = true;
                }
                if self.all_destinations_blocked(&blocked) {
                    break;
                }
                continue;
            }
            if forced {
                forced_bytes[d] += chunk_len;
            } else if force.is_some() {
                self.paths[dst].force_packet = None;
            }
            let builder = self.packet_for(open, dst, chunk_len, ChunkType::DATA);
            let from = self.out.sent[i].path;
            let s = &mut self.out.sent[i];
            s.frag.write_into(builder, s.tsn);
            if let Some(o) = open.as_mut() {
                o.retransmission = true;
            }
            let s = &mut self.out.sent[i];
            s.state = SentState::InFlight;
            s.path = dst;
            s.revoked = false;
            let tsn = s.tsn;
            s.sent_at = now;
            s.transmissions += 1;
            self.out.marked = self.out.marked.saturating_sub(1);
            if from != dst {
                if let Some(old) = self.paths.get_mut(from) {
                    old.queued_bytes = old.queued_bytes.saturating_sub(len);
                }
                self.paths[dst].queued_bytes += len;
            }
            let path = &mut self.paths[dst];
            if path.miss_floor.is_some_and(|f| tsn_lt(tsn, f)) {
                path.miss_floor = Some(tsn);
            }
            path.flight_size += len;
            path.stats.bytes_retransmitted += u64::from(len);
            self.stats.data_bytes_sent += u64::from(len);
            match kind {
                RtxKind::Fast => path.stats.fast_retransmissions += 1,
                RtxKind::Timeout => path.stats.timeout_retransmissions += 1,
            }
            path.data_since_hb = true;
            path.last_data_sent = Some(now);
            if !self.timers.is_armed(Timer::T3Rtx(dst)) {
                self.timers.set(Timer::T3Rtx(dst), now + path.rto.rto);
            }
            self.out.peer_rwnd = self.out.peer_rwnd.saturating_sub(len);
            if kind == RtxKind::Timeout && dst != from {
                self.events.push_back(Event::RetransmitOnAlternate { from, to: dst });
            }
        }
        held
    }

    /// True if no retransmission can go anywhere: every usable destination is `blocked`.
    /// While one destination is usable, the retransmission policy picks only usable ones
    /// (an active path is usable once confirmed, and data only goes to confirmed ones).
    fn all_destinations_blocked(&self, blocked: &[bool]) -> bool {
        let mut any_usable = false;
        for (id, path) in self.paths.iter() {
            let b = blocked[id.index()];
            if path.is_usable() {
                any_usable = true;
                if !b {
                    return false;
                }
            } else if path.state == super::PathState::Active {
                return false;
            }
        }
        any_usable
    }

    /// New data to the destinations the path scheduler chooses, each filled in turn within
    /// its cwnd and Max.Burst and the peer's rwnd (and its share of the buffers, with buffer
    /// splitting); none to a destination in `held` (marked chunks wait there, see
    /// [`Association::fill_retransmissions`]). Returns true if new data waited for the
    /// peer's rwnd alone: some destination had cwnd room for it.
    fn fill_new_data(&mut self, now: Instant, open: &mut Option<Open>, held: &[bool]) -> bool {
        if self.out.queue.is_empty() {
            return false;
        }
        let view = PathsView::new(&self.paths, self.primary, self.data_path);
        let split_enabled = self.config.buffer_splitting.enabled();
        match self.scheduler.as_mut() {
            // The default, without buffer splitting: one destination, no list.
            None if !split_enabled => {
                let p = Primary::select(&view);
                let rwnd_blocked = self.paths.contains(p)
                    && held.get(p.index()) != Some(&true)
                    && self.fill_new_data_on(now, open, p, None);
                return rwnd_blocked && !self.out.queue.is_empty();
            }
            None => {
                self.schedule.clear();
                Primary.schedule(&view, &mut self.schedule);
            }
            Some(scheduler) => {
                self.schedule.clear();
                scheduler.schedule(&view, &mut self.schedule);
            }
        }
        let split = split_enabled.then(|| self.split_limits());
        let mut rwnd_blocked = false;
        for k in 0..self.schedule.len() {
            if self.out.queue.is_empty() {
                break;
            }
            let p = self.schedule[k];
            let listed_before = self.schedule[..k].contains(&p);
            if self.paths.contains(p) && !listed_before && held.get(p.index()) != Some(&true) {
                rwnd_blocked |= self.fill_new_data_on(now, open, p, split.as_ref());
            }
        }
        rwnd_blocked && !self.out.queue.is_empty()
    }

    /// Buffer splitting's limits for this transmission opportunity: the destinations the
    /// scheduler listed share the buffers.
    fn split_limits(&self) -> SplitLimits {
        let mut sharing = 0;
        let mut total_cwnd = 0u64;
        for (k, &p) in self.schedule.iter().enumerate() {
            let Some(path) = self.paths.get(p) else { continue };
            if !self.schedule[..k].contains(&p) {
                sharing += 1;
                total_cwnd += u64::from(path.cc.cwnd);
            }
        }
        let in_flight: u64 = self.paths.values().map(|p| u64::from(p.flight_size)).sum();
        let peer_window = u64::from(self.out.peer_rwnd) + in_flight;
        SplitLimits::new(&self.config.buffer_splitting, sharing, total_cwnd, self.config.send_buffer, peer_window)
    }

    /// New data to destination `p`, within its cwnd, the peer's rwnd, Max.Burst and its
    /// share of the buffers under `split`. Returns true if it stopped for the peer's rwnd
    /// while its cwnd had room.
    fn fill_new_data_on(
        &mut self,
        now: Instant,
        open: &mut Option<Open>,
        p: PathId,
        split: Option<&SplitLimits>,
    ) -> bool {
        self.apply_idle_rule(now, p);
        // §6.1 D, first method: within one transmission opportunity the window is at most
        // flightsize + Max.Burst * MTU (cwnd itself is not changed).
        let burst_window = self.paths[p].flight_size + self.config.max_burst * self.config.pmtu;
        let mut nagle_budget = self.nagle_budget();
        while let Some(frag) = self.out.queue.front() {
            let len = frag.len();
            let chunk_len = (16 + len as usize).next_multiple_of(4);
            if chunk_len > nagle_budget {
                break;
            }
            // §6.1 A: respect the peer's rwnd, but one chunk may always be in flight.
            let rwnd_ok = len <= self.out.peer_rwnd || self.out.sent.is_empty();
            let path = &self.paths[p];
            if !path.window_allows(len, burst_window) {
                break;
            }
            if !rwnd_ok {
                return true;
            }
            if let Some(limits) = split {
                let splitting = &self.config.buffer_splitting;
                let bytes = match splitting.counts {
                    SplitCounts::Queued => path.queued_bytes,
                    SplitCounts::Outstanding => path.flight_size,
                };
                if !limits.allows(splitting.share, path.cc.cwnd, path.cc.mtu, bytes, len) {
                    break;
                }
            }
            let Some(frag) = self.out.queue.pop_front() else { break };
            nagle_budget = nagle_budget.saturating_sub(chunk_len);
            let tsn = self.out.next_tsn;
            self.out.next_tsn = tsn.wrapping_add(1);
            if let Some(cwr) = self.ecn.cwr.is_some().then(|| self.take_cwr()).flatten() {
                // RFC 9260 Appendix A: the CWR rides in front of new DATA (see `ecn.rs`).
                self.packet_for(open, p, cwr.buffer_len() + chunk_len, ChunkType::CWR).chunk(&cwr);
                if let Some(o) = open.as_mut() {
                    o.cwr = true;
                }
            }
            frag.write_into(self.packet_for(open, p, chunk_len, ChunkType::DATA), tsn);
            if let Some(o) = open.as_mut() {
                o.new_data = true;
            }
            let path = &mut self.paths[p];
            path.flight_size += len;
            path.queued_bytes += len;
            path.stats.data_chunks_sent += 1;
            path.stats.bytes_sent += u64::from(len);
            self.stats.data_bytes_sent += u64::from(len);
            path.data_since_hb = true;
            path.last_data_sent = Some(now);
            if path.rtt_probe.is_none() {
                path.rtt_probe = Some((tsn, now));
            }
            if !self.timers.is_armed(Timer::T3Rtx(p)) {
                self.timers.set(Timer::T3Rtx(p), now + path.rto.rto);
            }
            self.out.peer_rwnd = self.out.peer_rwnd.saturating_sub(len);
            self.out.sent.push_back(Sent {
                tsn,
                frag,
                path: p,
                sent_at: now,
                transmissions: 1,
                state: SentState::InFlight,
                misses: 0,
                fast_retransmitted: false,
                revoked: false,
            });
            if p != self.data_path {
                let from = self.data_path;
                self.data_path = p;
                // With CMT new data goes to every destination at once: the data path
                // changing is the normal course, not an event.
                if !self.config.cmt.enabled {
                    self.events.push_back(Event::DataPathChanged { from, to: p });
                }
            }
        }
        false
    }

    /// Bytes of DATA chunks new data may fill in this transmission opportunity under the
    /// Nagle-like rule (RFC 9260 §6.1 allows it; RFC 6458 §8.1.5 names the socket option
    /// SCTP_NODELAY that turns it off): while data is outstanding, only whole packets of
    /// queued chunks leave, the remainder waits for an acknowledgement (or for more data to
    /// fill a packet). Unlimited when `Config::nagle` is off (the default) or nothing is
    /// outstanding.
    fn nagle_budget(&self) -> usize {
        if !self.config.nagle || self.out.sent.is_empty() {
            return usize::MAX;
        }
        let payload = self.config.pmtu.saturating_sub(self.config.lower_layer_overhead + 12) as usize;
        if payload == 0 {
            return usize::MAX;
        }
        // Queued chunk bytes, counted only as far as they could matter.
        let mut queued = 0usize;
        let limit = payload.saturating_mul(self.config.max_burst.max(1) as usize + 1);
        for frag in &self.out.queue {
            queued += (16 + frag.len() as usize).next_multiple_of(4);
            if queued >= limit {
                break;
            }
        }
        queued - queued % payload
    }

    /// §7.2.1: a destination that sent nothing for an RTO or more halves its cwnd (to no
    /// less than 4 MTU) per RTO of silence.
    fn apply_idle_rule(&mut self, now: Instant, p: PathId) {
        let path = &mut self.paths[p];
        let (Some(last), true) = (path.last_data_sent, path.flight_size == 0) else { return };
        let rto = path.rto.rto.as_nanos().max(1);
        let rtos = (now.saturating_since(last).as_nanos() / rto).min(u64::from(u32::MAX)) as u32;
        if rtos > 0 {
            path.controller.on_idle(&mut path.cc, rtos);
            path.last_data_sent = Some(now);
        }
    }

    /// DATA chunks sent and not yet covered by the cumulative TSN ack.
    pub fn outstanding_chunks(&self) -> usize {
        self.out.sent.len()
    }

    /// Highest TSN assigned so far.
    pub fn highest_tsn_sent(&self) -> u32 {
        self.out.next_tsn.wrapping_sub(1)
    }
}
