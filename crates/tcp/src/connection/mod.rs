//! One TCP connection (RFC 9293), sans-IO.
//!
//! # Driving contract
//!
//! A [`Connection`] is driven entirely by its owner; it never reads a clock or does I/O. Time
//! is always an argument.
//!
//! * **Create**: [`Connection::connect`] (active open: a SYN is queued) or
//!   [`Connection::accept`] (passive open for a known peer, in LISTEN: the peer's SYN is
//!   expected next). The initial sequence number is derived from the `seed` argument.
//! * **Read-only getters**: [`state`](Connection::state), [`stats`](Connection::stats),
//!   [`cwnd`](Connection::cwnd), [`ssthresh`](Connection::ssthresh),
//!   [`srtt`](Connection::srtt), [`rto`](Connection::rto), [`readable`](Connection::readable),
//!   [`send_space`](Connection::send_space), ...
//! * **Inputs**: [`handle_segment`](Connection::handle_segment) with the bytes of a TCP segment
//!   that arrived from the peer (checksum included, IP header removed), or
//!   [`handle_segment_ecn`](Connection::handle_segment_ecn) with the ECN field of its IP
//!   header too (a driver that supports ECN uses this one), or
//!   [`handle_segment_in`](Connection::handle_segment_in) with the buffer the segment lies in,
//!   handed over (in-order data may then be read from it without a copy), and
//!   [`handle_timeout`](Connection::handle_timeout) when the instant from `poll_timeout` has
//!   come. A spurious or early `handle_timeout` is harmless.
//! * **Application commands**: [`write`](Connection::write) (or
//!   [`write_generated`](Connection::write_generated): bytes made when sent), [`read`](Connection::read),
//!   [`close`](Connection::close) (FIN after the queued data), [`abort`](Connection::abort)
//!   (RST).
//! * **Outputs**: after any input or command, call [`poll_transmit`](Connection::poll_transmit)
//!   until it returns `None` (each call gives one segment's bytes), or
//!   [`poll_transmit_ecn`](Connection::poll_transmit_ecn), which also gives the ECN field to
//!   write into the segment's IP header (always Not-ECT unless [`Config::ecn`] was
//!   negotiated), then
//!   [`poll_event`](Connection::poll_event) until `None`, then
//!   [`poll_timeout`](Connection::poll_timeout) for the next instant to call `handle_timeout`.
//!
//! Malformed segments (bad checksum, bad header, wrong ports) are dropped and counted in
//! [`Stats::malformed`]; nothing derived from a segment can panic.
//!
//! # Model
//!
//! Three-way handshake with MSS (RFC 9293 §3.7.1), window scale and timestamps (RFC 7323) and
//! SACK-permitted (RFC 2018) options; FIN close with TIME-WAIT; RST. Retransmission timer per
//! RFC 6298 with exponential backoff; RTT samples come from the send times of segments sent
//! once (Karn's rule), which is exact in a simulator; timestamps are negotiated and echoed
//! (RFC 7323 §3) but PAWS is not applied. Delayed ACKs (RFC 5681 §4.2, RFC 9293 §3.8.6.3):
//! every `ack_every` full segments or after `delayed_ack`, immediately on out-of-order data or
//! when a gap is filled. Loss recovery: fast retransmit with NewReno (RFC 6582) or the
//! SACK-based algorithm of RFC 6675 (`IsLost`, `pipe`, `NextSeg` rules 1 and 2); windows from
//! a [`Controller`]. Sender and receiver silly-window avoidance (RFC 9293 §3.8.6.2), Nagle
//! (§3.7.4) and zero-window probing (§3.8.6.1). ECN (RFC 3168 §6.1) when configured: see the
//! `ecn` module. Not modelled: urgent data, limited transmit, keep-alives, simultaneous open,
//! RFC 5961 challenge ACKs.

mod ecn;
mod recv;
mod rtt;
mod send;

/// A small deterministic generator for the unit tests' random cases: `next(n)` is below `n`
/// (xorshift64 from `seed`).
#[cfg(test)]
fn test_rng(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed;
    move |n| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    }
}

use std::collections::VecDeque;
use std::net::SocketAddrV4;

use simtime::{Duration, Instant};

use crate::congestion::{rfc6928_initial_window, AckInfo, CcAlgorithm, Controller, Recovery};
use crate::seq::{unwrap, SeqNumber};
use crate::wire::{Ecn, Flags, TcpOptions, TcpRepr, HEADER_LEN, MAX_OPTIONS_LEN};
use ecn::EcnState;
use recv::RecvBuffer;
pub use rtt::RttEstimator;
pub use send::Generator;
use send::SendQueue;

/// Connection parameters. Defaults follow the RFCs unless noted.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// MSS this end advertises and sends at most (RFC 9293 §3.7.1). Default 1460.
    pub mss: u16,
    /// Initial window in segments; `None` for RFC 6928, `min(10*MSS, max(2*MSS, 14600))`.
    pub initial_window: Option<u32>,
    /// Congestion control and loss recovery. Default NewReno.
    pub cc: CcAlgorithm,
    /// Offer SACK (RFC 2018). Default on.
    pub sack: bool,
    /// Offer window scaling (RFC 7323 §2). Default on.
    pub window_scaling: bool,
    /// Offer timestamps (RFC 7323 §3). Default on.
    pub timestamps: bool,
    /// Send buffer in bytes: how much the application may queue. Default 1 MiB.
    pub send_buffer: usize,
    /// Receive buffer in bytes: the most the advertised window can be. Default 1 MiB.
    pub recv_buffer: usize,
    /// Delayed-ACK timeout (RFC 5681 §4.2: at most 500 ms); zero acknowledges every segment.
    /// Default 200 ms.
    pub delayed_ack: Duration,
    /// Acknowledge at least every this many full-sized segments. Default 2.
    pub ack_every: u32,
    /// Nagle's algorithm (RFC 9293 §3.7.4). Default on.
    pub nagle: bool,
    /// RTO before any RTT sample (RFC 6298 §2.1). Default 1 s.
    pub initial_rto: Duration,
    /// Lower bound of the RTO (RFC 6298 §2.4). Default 1 s.
    pub min_rto: Duration,
    /// Upper bound of the RTO (RFC 6298 §2.5). Default 60 s.
    pub max_rto: Duration,
    /// Consecutive timeouts after which the connection is aborted (RFC 9293 §3.8.3 R2). Default 15.
    pub max_retries: u32,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2). Default 3.
    pub dupthresh: u32,
    /// Time spent in TIME-WAIT (2 MSL; RFC 9293 has MSL = 2 min, a simulation rarely needs
    /// that long). Default 1 s.
    pub time_wait: Duration,
    /// Offer and use ECN (RFC 3168 §6.1): an ECN-setup SYN, or an ECN-setup SYN-ACK to one;
    /// used only when both ends agree. Default off.
    pub ecn: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mss: 1460,
            initial_window: None,
            cc: CcAlgorithm::NewReno,
            sack: true,
            window_scaling: true,
            timestamps: true,
            send_buffer: 1 << 20,
            recv_buffer: 1 << 20,
            delayed_ack: Duration::from_millis(200),
            ack_every: 2,
            nagle: true,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            max_retries: 15,
            dupthresh: 3,
            time_wait: Duration::from_secs(1),
            ecn: false,
        }
    }
}

/// Connection states (RFC 9293 §3.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// No connection.
    Closed,
    /// Waiting for the peer's SYN.
    Listen,
    /// SYN sent, waiting for SYN-ACK.
    SynSent,
    /// SYN received and SYN-ACK sent, waiting for its ACK.
    SynReceived,
    /// Data flows both ways.
    Established,
    /// Closed by the application, FIN sent, not yet acknowledged.
    FinWait1,
    /// Our FIN acknowledged, waiting for the peer's.
    FinWait2,
    /// The peer closed; the application may still send.
    CloseWait,
    /// Both sides closed at once, waiting for the ACK of our FIN.
    Closing,
    /// The peer closed first, then we did; waiting for the ACK of our FIN.
    LastAck,
    /// Both FINs acknowledged; lingering for 2 MSL.
    TimeWait,
}

impl State {
    /// Name as RFC 9293 writes it.
    pub fn name(self) -> &'static str {
        match self {
            State::Closed => "CLOSED",
            State::Listen => "LISTEN",
            State::SynSent => "SYN-SENT",
            State::SynReceived => "SYN-RECEIVED",
            State::Established => "ESTABLISHED",
            State::FinWait1 => "FIN-WAIT-1",
            State::FinWait2 => "FIN-WAIT-2",
            State::CloseWait => "CLOSE-WAIT",
            State::Closing => "CLOSING",
            State::LastAck => "LAST-ACK",
            State::TimeWait => "TIME-WAIT",
        }
    }

    /// States in which the peer's data is accepted.
    fn receives(self) -> bool {
        matches!(self, State::SynReceived | State::Established | State::FinWait1 | State::FinWait2)
    }

    /// States in which new data may be sent.
    fn sends(self) -> bool {
        matches!(self, State::Established | State::CloseWait)
    }
}

/// How a loss was detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    /// Duplicate ACKs or SACK information (fast retransmit, RFC 5681 §3.2 / RFC 6675 §5).
    FastRetransmit,
    /// The retransmission timer expired (RFC 6298 §5.4).
    Timeout,
}

/// Something the owner may want to know about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The state changed.
    StateChanged {
        /// Old state.
        from: State,
        /// New state.
        to: State,
    },
    /// The handshake completed.
    Connected,
    /// The peer sent its FIN and every byte before it has been received.
    PeerClosed,
    /// The connection closed normally (both FINs acknowledged, or TIME-WAIT over).
    Closed,
    /// The peer reset the connection.
    Reset,
    /// Aborted after `max_retries` consecutive timeouts.
    TimedOut,
    /// A loss episode began; the window values are after the reduction.
    Loss {
        /// How it was detected.
        kind: LossKind,
        /// Congestion window, bytes.
        cwnd: u64,
        /// Slow-start threshold, bytes.
        ssthresh: u64,
    },
    /// The window was reduced for an ECN-Echo (RFC 3168 §6.1.2); values after the reduction.
    EcnReduction {
        /// Congestion window, bytes.
        cwnd: u64,
        /// Slow-start threshold, bytes.
        ssthresh: u64,
    },
}

/// Counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Segments sent (all kinds).
    pub segments_sent: u64,
    /// Segments received and accepted as well-formed.
    pub segments_received: u64,
    /// Segments dropped as malformed (checksum, header, options, ports).
    pub malformed: u64,
    /// Data bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Data bytes retransmitted.
    pub bytes_retransmitted: u64,
    /// Segments retransmitted (fast and timer-based).
    pub retransmissions: u64,
    /// Loss episodes entered by fast retransmit.
    pub fast_retransmits: u64,
    /// Retransmission-timer expirations (zero-window probes excluded).
    pub timeouts: u64,
    /// Duplicate ACKs received.
    pub dup_acks: u64,
    /// Pure ACKs sent.
    pub acks_sent: u64,
    /// Bytes of ours the peer acknowledged (SYN and FIN included).
    pub bytes_acked: u64,
    /// Bytes of the peer's delivered in order (readable or read).
    pub bytes_received: u64,
    /// Segments received with the CE codepoint while ECN was in use (RFC 3168 §6.1.3).
    pub ce_received: u64,
    /// Segments sent with ECE (echoes of CE marks; the SYN and SYN-ACK not counted).
    pub ece_sent: u64,
    /// Segments sent with CWR (the ECN-setup SYN not counted).
    pub cwr_sent: u64,
    /// Window reductions in response to ECE (RFC 3168 §6.1.2).
    pub ecn_reductions: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    Retransmit = 0,
    DelayedAck = 1,
    Persist = 2,
    TimeWait = 3,
}

const TIMERS: [Timer; 4] = [Timer::Retransmit, Timer::DelayedAck, Timer::Persist, Timer::TimeWait];

/// One TCP connection. See the module documentation for the driving contract.
#[derive(Debug)]
pub struct Connection {
    config: Config,
    /// Zero bytes in front of every segment [`Connection::poll_transmit`] returns
    /// ([`Connection::set_headroom`]).
    headroom: usize,
    /// Compute and verify the Internet checksum ([`Connection::set_checksums`]).
    checksums: bool,
    /// Buffers of received segments the driver handed back ([`Connection::recycle`]), in
    /// which the next segments are built.
    spare: Vec<Vec<u8>>,
    /// The segment being handled came with its buffer ([`Connection::handle_segment_in`]).
    keep_arrival: bool,
    local: SocketAddrV4,
    remote: SocketAddrV4,
    state: State,
    iss: SeqNumber,
    irs: SeqNumber,
    snd: SendQueue,
    rcv: RecvBuffer,
    /// The peer's window in bytes (scaled) and the right edge it implies (SND.UNA + SND.WND).
    snd_wnd: u64,
    /// SND.WL1 / SND.WL2 as offsets (RFC 9293 §3.10.7.4, window update rule).
    snd_wl1: u64,
    snd_wl2: u64,
    /// Shift applied to the peer's window field, and to ours (0 unless both offered).
    snd_wscale: u8,
    rcv_wscale: u8,
    /// Payload bytes per full-sized segment.
    smss: u64,
    sack_ok: bool,
    ts_ok: bool,
    wscale_ok: bool,
    ts_recent: u32,
    ts_offset: u32,
    /// RCV.NXT when we last sent an ACK (RFC 7323 §4.3 Last.ACK.sent).
    last_ack_sent: u64,
    /// Right edge of the window we last advertised.
    rcv_adv: u64,
    cc: Box<dyn Controller>,
    recovery_kind: Recovery,
    in_recovery: bool,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint.
    recover: u64,
    /// NewReno window inflation during recovery (RFC 6582 §3.2 steps 2-5).
    inflation: u64,
    partial_acks: u32,
    dupacks: u32,
    rtt: RttEstimator,
    retries: u32,
    syn_retransmitted: bool,
    timers: [Option<Instant>; 4],
    /// In-order segments received since the last ACK we sent.
    unacked_segments: u32,
    ack_now: bool,
    probe: bool,
    rst_pending: Option<(SeqNumber, Option<SeqNumber>)>,
    peer_fin: Option<u64>,
    /// ECN state (RFC 3168 §6.1).
    ecn: EcnState,
    /// ECN field of the segment being built (set by `emit_segment`).
    tx_ecn: Ecn,
    events: VecDeque<Event>,
    stats: Stats,
}

impl Connection {
    /// Active open from `local` to `remote`: the SYN goes out on the first `poll_transmit`.
    pub fn connect(config: Config, local: SocketAddrV4, remote: SocketAddrV4, seed: u64, now: Instant) -> Self {
        let mut c = Self::new(config, local, remote, seed, now, State::SynSent);
        c.set_timer(Timer::Retransmit, now + c.rtt.rto());
        c
    }

    /// Passive open for a SYN expected from `remote` (the driver demultiplexes by address).
    pub fn accept(config: Config, local: SocketAddrV4, remote: SocketAddrV4, seed: u64, now: Instant) -> Self {
        Self::new(config, local, remote, seed, now, State::Listen)
    }

    fn new(config: Config, local: SocketAddrV4, remote: SocketAddrV4, seed: u64, _now: Instant, state: State) -> Self {
        let mut s = seed ^ 0x7cf3_1b2a_9e37_79b9;
        let iss = SeqNumber(splitmix64(&mut s) as u32);
        let ts_offset = splitmix64(&mut s) as u32;
        // RFC 7323 §2.3: the smallest shift that lets the buffer be advertised, at most 14.
        let mut rcv_wscale = 0u8;
        while config.window_scaling && rcv_wscale < 14 && (config.recv_buffer >> rcv_wscale) > 65535 {
            rcv_wscale += 1;
        }
        let smss = config.mss as u64;
        let iw = config.initial_window.map_or_else(|| rfc6928_initial_window(smss), |n| n as u64 * smss);
        Connection {
            headroom: 0,
            checksums: true,
            spare: Vec::new(),
            keep_arrival: false,
            cc: config.cc.build(smss, iw),
            recovery_kind: Recovery::NewReno,
            rtt: RttEstimator::new(config.initial_rto, config.min_rto, config.max_rto),
            snd: SendQueue::new(config.send_buffer),
            rcv: RecvBuffer::new(config.recv_buffer),
            local,
            remote,
            state,
            iss,
            irs: SeqNumber(0),
            snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            snd_wscale: 0,
            rcv_wscale,
            smss,
            sack_ok: false,
            ts_ok: false,
            wscale_ok: false,
            ts_recent: 0,
            ts_offset,
            last_ack_sent: 0,
            rcv_adv: 0,
            in_recovery: false,
            recover: 0,
            inflation: 0,
            partial_acks: 0,
            dupacks: 0,
            retries: 0,
            syn_retransmitted: false,
            timers: [None; 4],
            unacked_segments: 0,
            ack_now: false,
            probe: false,
            rst_pending: None,
            peer_fin: None,
            ecn: EcnState::default(),
            tx_ecn: Ecn::NotEct,
            events: VecDeque::new(),
            stats: Stats::default(),
            config,
        }
    }

    // ---- read-only getters ----

    /// Current state.
    pub fn state(&self) -> State {
        self.state
    }
    /// Counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }
    /// Local address and port.
    pub fn local(&self) -> SocketAddrV4 {
        self.local
    }
    /// Peer address and port.
    pub fn remote(&self) -> SocketAddrV4 {
        self.remote
    }
    /// Effective congestion window in bytes (NewReno inflation included).
    pub fn cwnd(&self) -> u64 {
        self.cc.window() + self.inflation
    }
    /// Slow-start threshold in bytes (`u64::MAX` until the first loss).
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }
    /// Smoothed RTT.
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }
    /// Smallest RTT sample.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.rtt.min_rtt()
    }
    /// Current retransmission timeout (backoff included).
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }
    /// Bytes in flight (RFC 6675 pipe).
    pub fn in_flight(&self) -> u64 {
        self.snd.pipe
    }
    /// Payload bytes per full-sized segment.
    pub fn smss(&self) -> u64 {
        self.smss
    }
    /// True while in fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// The peer's receive window in bytes.
    pub fn peer_window(&self) -> u64 {
        self.snd_wnd
    }
    /// Bytes the application may still write.
    pub fn send_space(&self) -> usize {
        if self.snd.fin_queued
            || !matches!(self.state, State::SynSent | State::SynReceived | State::Established | State::CloseWait)
        {
            0
        } else {
            self.snd.free()
        }
    }
    /// Bytes written and not yet acknowledged.
    pub fn send_buffered(&self) -> usize {
        self.snd.buffered()
    }
    /// In-order bytes waiting to be read.
    pub fn readable(&self) -> usize {
        self.rcv.readable()
    }
    /// The negotiated options: (SACK, timestamps, our window shift, peer's window shift).
    pub fn negotiated(&self) -> (bool, bool, u8, u8) {
        (self.sack_ok, self.ts_ok, self.rcv_wscale, self.snd_wscale)
    }
    /// True when both ends agreed on ECN (RFC 3168 §6.1.1).
    pub fn ecn_negotiated(&self) -> bool {
        self.ecn.ok
    }

    // ---- application commands ----

    /// Queue bytes for sending; returns how many fit in the send buffer (0 after `close`).
    pub fn write(&mut self, bytes: &[u8]) -> usize {
        self.write_with(bytes.len(), |a, b| {
            let (first, rest) = bytes.split_at(a.len());
            a.copy_from_slice(first);
            b.copy_from_slice(&rest[..b.len()]);
        })
    }

    /// Queue up to `len` bytes for sending, written in place: `fill` gets the new bytes of the
    /// send buffer, zeroed, as two slices in order (either may be empty) and writes them.
    /// Returns how many fit (0 after `close`). Saves [`Connection::write`]'s copy for an
    /// application that makes its data as it sends it.
    pub fn write_with(&mut self, len: usize, fill: impl FnOnce(&mut [u8], &mut [u8])) -> usize {
        if self.send_space() == 0 {
            return 0;
        }
        self.snd.write_with(len, fill)
    }

    /// Queue up to `len` bytes that the application can make again whenever they are needed:
    /// `generator(offset, tag, out)` writes the bytes from stream offset `offset` into `out`
    /// (zeroed), with `tag` this call's (a run of calls with the same tag is one run). They
    /// are made straight into each segment that carries them, when it is built (again for a
    /// retransmission), and never stored: an application whose data is a function of its
    /// position and of a tag (a bulk transfer of records stamped with their hand-over time)
    /// saves writing every byte into the send buffer and copying it out. Returns how many fit
    /// (0 after `close`, and behind bytes written with [`Connection::write`] or
    /// [`Connection::write_with`], which in turn write nothing behind generated bytes).
    pub fn write_generated(&mut self, len: usize, tag: u64, generator: Generator) -> usize {
        if self.send_space() == 0 {
            return 0;
        }
        self.snd.write_generated(len, tag, generator)
    }

    /// Move up to `max` received bytes into `out`; returns how many.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        self.read_with(max, |a, b| {
            out.extend_from_slice(a);
            out.extend_from_slice(b);
        })
    }

    /// Consume up to `max` received bytes where they lie: `visit` sees them as two slices in
    /// order (the second may be empty). Returns how many. Saves [`Connection::read`]'s copy
    /// for an application that only looks at what it reads.
    pub fn read_with(&mut self, max: usize, visit: impl FnOnce(&[u8], &[u8])) -> usize {
        let (n, emptied) = self.rcv.read_with(max, visit);
        if let Some(buf) = emptied {
            self.recycle(buf);
        }
        // RFC 9293 §3.8.6.2.2: announce an opened window once it has grown enough to matter:
        // by the SWS threshold after a (nearly) closed window, else by two segments or half the
        // buffer, whichever is less.
        if n > 0 && self.state.receives() {
            let kept = self.rcv_adv.max(self.rcv.nxt);
            let grown = self.advertisable_edge().saturating_sub(kept);
            let closed = kept - self.rcv.nxt < self.sws_threshold();
            let threshold =
                if closed { self.sws_threshold() } else { (2 * self.smss).min(self.rcv.capacity() as u64 / 2) };
            if grown >= threshold {
                self.ack_now = true;
            }
        }
        n
    }

    /// Close the sending direction: a FIN follows the data already written.
    pub fn close(&mut self) {
        match self.state {
            State::Listen | State::SynSent => self.set_state(State::Closed),
            State::SynReceived | State::Established => {
                self.snd.fin_queued = true;
                self.set_state(State::FinWait1);
            }
            State::CloseWait => {
                self.snd.fin_queued = true;
                self.set_state(State::LastAck);
            }
            _ => {}
        }
    }

    /// Abort: send a RST and close at once.
    pub fn abort(&mut self) {
        if !matches!(self.state, State::Closed | State::Listen | State::SynSent | State::TimeWait) {
            self.rst_pending = Some((self.iss.plus(self.snd.nxt), None));
        }
        self.set_state(State::Closed);
    }

    // ---- inputs ----

    /// A segment arrived from the peer (its IP header's ECN field taken as Not-ECT).
    pub fn handle_segment(&mut self, now: Instant, bytes: &[u8]) {
        self.handle_segment_ecn(now, bytes, Ecn::NotEct);
    }

    /// As [`Connection::handle_segment_ecn`], for the segment at `buf[at..]` of a buffer the
    /// caller hands over: in-order data that arrives with nothing else waiting for the
    /// application stays in it, to be read where it lies ([`Connection::read_with`]) instead
    /// of being copied into the receive buffer first. Returns the buffer unless it was kept
    /// (for the caller to [`recycle`](Connection::recycle) or drop).
    pub fn handle_segment_in(&mut self, now: Instant, buf: Vec<u8>, at: usize, ecn: Ecn) -> Option<Vec<u8>> {
        let Some(segment) = buf.get(at..) else { return Some(buf) };
        self.keep_arrival = true;
        let payload = self.handle_parsed(now, segment, ecn);
        self.keep_arrival = false;
        // What was kept lies in the payload, after the TCP header (valid, if anything was).
        self.rcv.adopt(buf, at + payload.unwrap_or(0))
    }

    /// A segment arrived from the peer in an IP packet whose ECN field was `ecn`.
    pub fn handle_segment_ecn(&mut self, now: Instant, bytes: &[u8], ecn: Ecn) {
        self.handle_parsed(now, bytes, ecn);
    }

    /// [`Connection::handle_segment_ecn`], returning where the payload starts in `bytes` if
    /// the segment was well-formed (so that the caller need not parse it again).
    fn handle_parsed(&mut self, now: Instant, bytes: &[u8], ecn: Ecn) -> Option<usize> {
        let parsed = if self.checksums {
            TcpRepr::parse(bytes, *self.remote.ip(), *self.local.ip())
        } else {
            TcpRepr::parse_unchecked(bytes)
        };
        let seg = match parsed {
            Ok(s) if s.src_port == self.remote.port() && s.dst_port == self.local.port() => s,
            _ => {
                self.stats.malformed += 1;
                return None;
            }
        };
        self.stats.segments_received += 1;
        match self.state {
            State::Closed => self.reply_reset(&seg),
            State::Listen => self.on_listen(now, &seg),
            State::SynSent => self.on_syn_sent(now, &seg),
            _ => self.on_synchronized(now, &seg, ecn),
        }
        Some(bytes.len() - seg.payload.len())
    }

    /// Timers whose instant has come fire; others are left alone.
    pub fn handle_timeout(&mut self, now: Instant) {
        for timer in TIMERS {
            if self.timers[timer as usize].is_some_and(|t| t <= now) {
                self.timers[timer as usize] = None;
                match timer {
                    Timer::Retransmit => self.on_rto(now),
                    Timer::DelayedAck => self.ack_now = true,
                    Timer::Persist => self.probe = true,
                    Timer::TimeWait => {
                        self.set_state(State::Closed);
                        self.events.push_back(Event::Closed);
                    }
                }
            }
        }
    }

    // ---- outputs ----

    /// The next segment to send, if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        self.poll_transmit_ecn(now).map(|(bytes, _)| bytes)
    }

    /// The next segment to send, if any, with the ECN field for its IP header: ECT(0) on new
    /// data when ECN was negotiated, else Not-ECT (RFC 3168 §6.1.2, §6.1.4, §6.1.5).
    pub fn poll_transmit_ecn(&mut self, now: Instant) -> Option<(Vec<u8>, Ecn)> {
        self.tx_ecn = Ecn::NotEct;
        let seg = self.next_transmit(now)?;
        Some((seg, self.tx_ecn))
    }

    fn next_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        if let Some((seq, ack)) = self.rst_pending.take() {
            return Some(self.emit_raw(seq, ack, Flags::RST));
        }
        match self.state {
            State::Closed | State::Listen => return None,
            State::SynSent | State::SynReceived if self.snd.nxt == 0 => {
                self.snd.sent_new(0, 1, true, false, now);
                self.stats.segments_sent += 1;
                self.ensure_rto(now);
                return Some(self.emit_segment(now, 0, 1, true, false, false));
            }
            _ => {}
        }
        if let Some(seg) = self.next_retransmission(now) {
            return Some(seg);
        }
        if let Some(seg) = self.next_new_segment(now) {
            return Some(seg);
        }
        if self.ack_now {
            self.stats.acks_sent += 1;
            self.stats.segments_sent += 1;
            return Some(self.emit_segment(now, self.snd.nxt, self.snd.nxt, false, false, false));
        }
        None
    }

    /// The next instant `handle_timeout` should be called, if any.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.iter().flatten().min().copied()
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    // ---- segment arrival, by state (RFC 9293 §3.10.7) ----

    /// §3.10.7.1: in CLOSED, anything but a RST draws a RST.
    fn reply_reset(&mut self, seg: &TcpRepr<'_>) {
        if seg.flags.has(Flags::RST) {
            return;
        }
        self.rst_pending = Some(match seg.ack {
            Some(ack) => (ack, None),
            None => (SeqNumber(0), Some(seg.seq.plus(seg.segment_len() as u64))),
        });
    }

    /// §3.10.7.2: LISTEN takes a SYN and answers with SYN-ACK.
    fn on_listen(&mut self, now: Instant, seg: &TcpRepr<'_>) {
        if seg.flags.has(Flags::RST) {
            return;
        }
        if seg.ack.is_some() || !seg.flags.has(Flags::SYN) {
            return self.reply_reset(seg);
        }
        self.irs = seg.seq;
        self.rcv.nxt = 1;
        self.negotiate(seg);
        self.snd_wnd = seg.window as u64; // a SYN's window is never scaled (RFC 7323 §2.2)
        self.set_state(State::SynReceived);
        self.set_timer(Timer::Retransmit, now + self.rtt.rto());
    }

    /// §3.10.7.3: SYN-SENT expects SYN-ACK.
    fn on_syn_sent(&mut self, now: Instant, seg: &TcpRepr<'_>) {
        let ack_ok = seg.ack.map(|a| a == self.iss.plus(1));
        if ack_ok == Some(false) {
            if !seg.flags.has(Flags::RST) {
                self.rst_pending = seg.ack.map(|a| (a, None));
            }
            return;
        }
        if seg.flags.has(Flags::RST) {
            if ack_ok == Some(true) {
                self.set_state(State::Closed);
                self.events.push_back(Event::Reset);
            }
            return;
        }
        if !seg.flags.has(Flags::SYN) || ack_ok.is_none() {
            return; // simultaneous open is not modelled
        }
        self.irs = seg.seq;
        self.rcv.nxt = 1;
        self.negotiate(seg);
        self.snd_wnd = seg.window as u64;
        self.snd_wl1 = 0;
        self.snd_wl2 = 1;
        self.on_new_ack(now, 1);
        self.establish();
        self.ack_now = true;
    }

    /// Everything from SYN-RECEIVED on; `ecn` is the segment's IP ECN field.
    fn on_synchronized(&mut self, now: Instant, seg: &TcpRepr<'_>, ecn: Ecn) {
        let seq = unwrap(self.irs, seg.seq, self.rcv.nxt);
        let window = self.rcv.window().max(1);
        // §3.10.7.4 first check, as it applies to RSTs: in window, else ignored.
        if seg.flags.has(Flags::RST) {
            if seq.is_some_and(|s| s >= self.rcv.nxt && s < self.rcv.nxt + window) {
                self.set_state(State::Closed);
                self.events.push_back(Event::Reset);
            }
            return;
        }
        if seg.flags.has(Flags::SYN) {
            // A retransmitted SYN in SYN-RECEIVED means our SYN-ACK was lost: send it again.
            if self.state == State::SynReceived && seg.seq == self.irs {
                self.snd.mark_lost(0);
            } else {
                self.ack_now = true; // RFC 9293 §3.10.7.4 fourth check: challenge ACK
            }
            return;
        }
        let Some(seq) = seq else {
            self.ack_now = true;
            return;
        };
        let Some(ack) = seg.ack else { return };
        let Some(ack) = unwrap(self.iss, ack, self.snd.una) else {
            self.ack_now = true;
            return;
        };
        if let Some((tsval, _)) = seg.options.timestamps.filter(|_| self.ts_ok) {
            // RFC 7323 §4.3.
            if tsval.wrapping_sub(self.ts_recent) as i32 >= 0 && seq <= self.last_ack_sent {
                self.ts_recent = tsval;
            }
        }
        if self.state == State::SynReceived {
            if ack < 1 || ack > self.snd.nxt {
                self.rst_pending = Some((seg.ack.unwrap_or_default(), None));
                return;
            }
            self.snd_wnd = (seg.window as u64) << self.snd_wscale;
            self.snd_wl1 = seq;
            self.snd_wl2 = ack;
            self.establish();
        }
        self.process_ack(now, seq, ack, seg);
        if self.ecn.ok {
            self.on_ecn_receive(seg, ecn);
        }
        if !self.state.receives() && self.state != State::SynReceived {
            // Data or FIN after our side stopped receiving is acknowledged and discarded.
            if seg.segment_len() > 0 && !matches!(self.state, State::Closed) {
                self.ack_now = true;
            }
            return;
        }
        if !seg.payload.is_empty() {
            self.on_data(now, seq, seg.payload);
        }
        if seg.flags.has(Flags::FIN) {
            self.peer_fin = Some(seq + seg.payload.len() as u64);
            self.ack_now = true;
        }
        self.check_peer_fin(now);
    }

    /// RFC 3168 §6.1.3: CWR ends the echo, then CE (on the same segment too) starts it.
    fn on_ecn_receive(&mut self, seg: &TcpRepr<'_>, ecn: Ecn) {
        if seg.flags.has(Flags::CWR) {
            self.ecn.echo = false;
        }
        if ecn == Ecn::Ce {
            self.stats.ce_received += 1;
            self.ecn.echo = true;
        }
    }

    /// RFC 3168 §6.1.2: an ACK with ECE reduces the window, at most once per window of data
    /// and not during loss recovery; nothing is retransmitted.
    fn on_ecn_echo(&mut self, now: Instant) {
        if self.in_recovery || self.snd.una <= self.ecn.recover {
            return;
        }
        self.cc.on_ecn_echo(now, self.snd.flight_size());
        self.note_reduction();
        self.stats.ecn_reductions += 1;
        self.events.push_back(Event::EcnReduction { cwnd: self.cwnd(), ssthresh: self.ssthresh() });
    }

    /// Any window reduction: the next new data segment carries CWR, and ECEs for data sent
    /// before now are not reacted to (RFC 3168 §6.1.2).
    fn note_reduction(&mut self) {
        if self.ecn.ok {
            self.ecn.cwr_pending = true;
            self.ecn.recover = self.ecn.recover.max(self.snd.nxt);
        }
    }

    /// Options from the peer's SYN decide what this connection uses.
    fn negotiate(&mut self, seg: &TcpRepr<'_>) {
        let o = &seg.options;
        // RFC 9293 §3.7.1: without the option the peer takes 536 bytes.
        let peer_mss = o.mss.unwrap_or(536).max(64) as u64;
        self.sack_ok = self.config.sack && o.sack_permitted;
        self.ts_ok = self.config.timestamps && o.timestamps.is_some();
        if let Some((tsval, _)) = o.timestamps {
            self.ts_recent = tsval;
        }
        match o.window_scale {
            Some(shift) if self.config.window_scaling => {
                self.wscale_ok = true;
                self.snd_wscale = shift.min(14); // RFC 7323 §2.3
            }
            _ => self.rcv_wscale = 0,
        }
        // RFC 6691: the MSS bounds the data plus the options every segment carries.
        let ts_len = if self.ts_ok { 12 } else { 0 };
        self.smss = (self.config.mss as u64).min(peer_mss).saturating_sub(ts_len).max(1);
        let iw = match self.config.initial_window {
            _ if self.syn_retransmitted => self.smss, // RFC 5681 §3.1: IW = 1 SMSS after a lost SYN
            Some(n) => n as u64 * self.smss,
            None => rfc6928_initial_window(self.smss),
        };
        self.cc = self.config.cc.build(self.smss, iw);
        self.recovery_kind = self.config.cc.recovery(self.sack_ok);
        // RFC 3168 §6.1.1: the peer's SYN is an ECN-setup SYN (ECE and CWR), its SYN-ACK an
        // ECN-setup SYN-ACK (ECE without CWR).
        let (ece, cwr) = (seg.flags.has(Flags::ECE), seg.flags.has(Flags::CWR));
        self.ecn.ok = self.config.ecn && ece && (cwr != (self.state == State::SynSent));
    }

    fn establish(&mut self) {
        self.set_state(State::Established);
        self.events.push_back(Event::Connected);
        self.rcv_adv = self.rcv.nxt + self.rcv.window();
    }

    /// ACK processing (RFC 9293 §3.10.7.4 fifth check; RFC 5681, 6582, 6675).
    fn process_ack(&mut self, now: Instant, seq: u64, ack: u64, seg: &TcpRepr<'_>) {
        if ack > self.snd.nxt {
            self.ack_now = true; // acknowledges something not yet sent
            return;
        }
        let old_una = self.snd.una;
        let old_wnd = self.snd_wnd;
        // Window update rule: only from a segment at least as new as the last one used.
        if self.snd_wl1 < seq || (self.snd_wl1 == seq && self.snd_wl2 <= ack) {
            self.snd_wnd = (seg.window as u64) << self.snd_wscale;
            self.snd_wl1 = seq;
            self.snd_wl2 = ack;
            if self.snd_wnd > 0 {
                self.timers[Timer::Persist as usize] = None;
            }
        }
        if old_wnd == 0 && self.snd_wnd > 0 && ack == old_una {
            // The window reopened: a zero-window probe beyond the old (empty) window was
            // discarded by the peer, so send it again at once instead of waiting for a timer.
            for i in 0..self.snd.segs.len() {
                self.snd.mark_lost(i);
            }
        }
        let mut newly_sacked = 0;
        if self.sack_ok && self.recovery_kind == Recovery::Sack {
            for &(l, r) in seg.options.sack_blocks() {
                if let (Some(l), Some(r)) = (unwrap(self.iss, l, self.snd.una), unwrap(self.iss, r, self.snd.una)) {
                    if l < r && r <= self.snd.nxt {
                        newly_sacked += self.snd.sack(l, r);
                    }
                }
            }
        }
        if ack > old_una {
            self.on_new_ack(now, ack);
        } else if ack == old_una
            && !self.snd.segs.is_empty()
            && seg.payload.is_empty()
            && !seg.flags.has(Flags::SYN | Flags::FIN)
            && (self.snd_wnd == old_wnd || newly_sacked > 0)
            && self.snd_wnd > 0
        {
            // RFC 5681 §2 duplicate ACK (RFC 6675 §2: with SACK, one that SACKs new data).
            // Answers to zero-window probes repeat the ACK too, but signal no loss.
            if !(self.recovery_kind == Recovery::Sack && newly_sacked == 0 && self.sack_ok) {
                self.dupacks += 1;
                self.stats.dup_acks += 1;
                self.on_dupack(now);
            }
        }
        if self.ecn.ok && seg.flags.has(Flags::ECE) {
            self.on_ecn_echo(now);
        }
    }

    /// SND.UNA advanced to `ack`.
    fn on_new_ack(&mut self, now: Instant, ack: u64) {
        let in_flight = self.snd.pipe;
        let syn_acked = self.snd.una == 0;
        let (acked, rtt_from) = self.snd.ack(ack);
        let mut keep_timer = false;
        self.stats.bytes_acked += acked;
        if let Some(t) = rtt_from {
            self.rtt.sample(now.saturating_since(t));
        }
        self.retries = 0;
        self.dupacks = 0;
        if self.in_recovery {
            if ack >= self.recover {
                // RFC 6582 §3.2 step 3 / RFC 6675 §5: a full acknowledgment ends recovery.
                self.in_recovery = false;
                self.inflation = 0;
                self.snd.end_episode();
                self.cc.on_recovery_exit(now, self.snd.flight_size());
            } else if self.recovery_kind == Recovery::NewReno {
                // RFC 6582 §3.2 step 5: partial ACK: retransmit the next hole, deflate.
                self.snd.mark_lost(0);
                self.inflation = self.inflation.saturating_sub(acked) + if acked >= self.smss { self.smss } else { 0 };
                self.partial_acks += 1;
                // The "impatient" variant: only the first partial ACK re-arms the timer.
                keep_timer = self.partial_acks > 1;
            } else {
                self.snd.detect_losses(self.config.dupthresh as u64, self.smss);
            }
        } else if !syn_acked {
            let srtt = self.rtt.srtt();
            self.cc.on_ack(&AckInfo { now, acked, srtt, min_rtt: self.rtt.min_rtt(), in_flight });
            if self.sack_ok
                && self.recovery_kind == Recovery::Sack
                && self.may_start_recovery()
                && self.snd.first_is_lost(self.config.dupthresh as u64, self.smss)
            {
                self.enter_recovery(now);
            }
        }
        self.after_ack_timers(now, keep_timer);
        match self.state {
            State::FinWait1 if self.our_fin_acked() => self.set_state(State::FinWait2),
            State::Closing if self.our_fin_acked() => self.enter_time_wait(now),
            State::LastAck if self.our_fin_acked() => {
                self.set_state(State::Closed);
                self.events.push_back(Event::Closed);
            }
            _ => {}
        }
    }

    /// RFC 6298 §5.2 / §5.3 on an ACK of new data.
    fn after_ack_timers(&mut self, now: Instant, keep: bool) {
        if self.snd.segs.is_empty() {
            self.timers[Timer::Retransmit as usize] = None;
        } else if !keep {
            self.set_timer(Timer::Retransmit, now + self.rtt.rto());
        }
    }

    fn on_dupack(&mut self, now: Instant) {
        let thresh = self.config.dupthresh as u64;
        if self.in_recovery {
            match self.recovery_kind {
                // RFC 6582 §3.2 step 4 (RFC 5681 §3.2 step 4): inflate by one SMSS.
                Recovery::NewReno => self.inflation += self.smss,
                Recovery::Sack => {
                    self.snd.detect_losses(thresh, self.smss);
                }
            }
            return;
        }
        let sack_loss = self.recovery_kind == Recovery::Sack && self.snd.first_is_lost(thresh, self.smss);
        if self.dupacks as u64 >= thresh || sack_loss {
            if !self.may_start_recovery() {
                return;
            }
            self.enter_recovery(now);
        }
    }

    /// Whether a new loss-recovery episode may start: not while the cumulative ACK is below
    /// `recover`. For NewReno, RFC 6582 §3.2 step 2 (and §4 after a timeout). For SACK
    /// recovery, RFC 6675 §5.1: after a timeout RecoveryPoint is HighData, and no new episode
    /// starts until HighACK reaches it, although the scoreboard keeps its SACK information
    /// (without this, the first ACK after the timeout would find the old holes "lost" and halve
    /// the whole pre-timeout flight into the window). Outside the time after a timeout the
    /// test is always true, since an episode ends only when the ACK covers `recover`.
    fn may_start_recovery(&self) -> bool {
        self.snd.una >= self.recover
    }

    fn enter_recovery(&mut self, now: Instant) {
        self.in_recovery = true;
        self.partial_acks = 0;
        self.recover = self.snd.nxt;
        self.cc.on_congestion_event(now, self.snd.flight_size());
        self.note_reduction();
        self.stats.fast_retransmits += 1;
        self.snd.mark_lost(0);
        if self.recovery_kind == Recovery::Sack {
            self.snd.detect_losses(self.config.dupthresh as u64, self.smss);
        } else {
            // RFC 6582 §3.2 step 2: cwnd = ssthresh + 3*SMSS.
            self.inflation = self.config.dupthresh as u64 * self.smss;
        }
        self.events.push_back(Event::Loss {
            kind: LossKind::FastRetransmit,
            cwnd: self.cwnd(),
            ssthresh: self.ssthresh(),
        });
    }

    /// RFC 6298 §5.4-5.7.
    fn on_rto(&mut self, now: Instant) {
        if self.snd.segs.is_empty() {
            return;
        }
        let probing = self.snd_wnd == 0
            && self.snd.segs.len() == 1
            && self.snd.segs.front().is_some_and(|s| s.end - s.start == 1 && !s.syn && !s.fin);
        if !probing {
            self.stats.timeouts += 1;
            self.retries += 1;
            let limit = if matches!(self.state, State::SynSent | State::SynReceived) {
                self.config.max_retries.min(6)
            } else {
                self.config.max_retries
            };
            if self.retries > limit {
                self.abort();
                self.events.push_back(Event::TimedOut);
                return;
            }
            if matches!(self.state, State::SynSent | State::SynReceived) {
                self.syn_retransmitted = true;
            }
            // FlightSize is inflated by data sent during NewReno recovery; a timeout in
            // recovery keeps the threshold the episode already set (as Linux does).
            self.cc.on_timeout(now, self.snd.flight_size(), self.retries == 1 && !self.in_recovery);
            self.note_reduction();
            self.in_recovery = false;
            self.inflation = 0;
            self.dupacks = 0;
            // RFC 6582 §4: after a timeout, `recover` = highest sequence sent, so duplicate
            // ACKs for data sent before it cannot start another fast retransmit.
            self.recover = self.snd.nxt;
            self.events.push_back(Event::Loss {
                kind: LossKind::Timeout,
                cwnd: self.cwnd(),
                ssthresh: self.ssthresh(),
            });
        }
        self.snd.mark_all_lost();
        self.rtt.back_off();
        self.set_timer(Timer::Retransmit, now + self.rtt.rto());
    }

    /// In-order or out-of-order data arrived (RFC 9293 §3.10.7.4 seventh check).
    fn on_data(&mut self, now: Instant, seq: u64, payload: &[u8]) {
        let r = if self.keep_arrival { self.rcv.insert_keeping(seq, payload) } else { self.rcv.insert(seq, payload) };
        if let Some(buf) = self.rcv.released.take() {
            self.recycle(buf);
        }
        self.stats.bytes_received += r.advanced;
        if r.out_of_order || r.filled_gap || r.duplicate {
            // RFC 5681 §4.2: immediate ACK for out-of-order data and for data filling a gap;
            // RFC 9293: an unacceptable segment draws an ACK.
            self.ack_now = true;
        } else if r.advanced > 0 {
            self.unacked_segments += 1;
            if self.config.delayed_ack == Duration::ZERO || self.unacked_segments >= self.config.ack_every.max(1) {
                self.ack_now = true;
            } else if self.timers[Timer::DelayedAck as usize].is_none() {
                self.set_timer(Timer::DelayedAck, now + self.config.delayed_ack);
            }
        }
    }

    /// Consume the peer's FIN once everything before it arrived.
    fn check_peer_fin(&mut self, now: Instant) {
        let Some(fin) = self.peer_fin else { return };
        if self.rcv.nxt != fin || !self.state.receives() {
            return;
        }
        self.rcv.nxt = fin + 1;
        self.peer_fin = None;
        self.ack_now = true;
        self.events.push_back(Event::PeerClosed);
        match self.state {
            State::SynReceived | State::Established => self.set_state(State::CloseWait),
            State::FinWait1 if self.our_fin_acked() => self.enter_time_wait(now),
            State::FinWait1 => self.set_state(State::Closing),
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    fn our_fin_acked(&self) -> bool {
        self.snd.fin_offset().is_some_and(|f| self.snd.una > f)
    }

    fn enter_time_wait(&mut self, now: Instant) {
        self.set_state(State::TimeWait);
        self.timers = [None; 4];
        self.set_timer(Timer::TimeWait, now + self.config.time_wait);
    }

    // ---- transmission ----

    /// The lowest segment awaiting retransmission, if the window lets it go (RFC 6675
    /// NextSeg rule 1; after an RTO, go-back-N in slow start).
    fn next_retransmission(&mut self, now: Instant) -> Option<Vec<u8>> {
        let i = self.snd.first_lost()?;
        let s = self.snd.segs[i];
        let len = s.end - s.start;
        if self.snd.pipe > 0 && self.snd.pipe + len > self.cwnd() {
            return None;
        }
        self.snd.sent_again(i, now);
        self.stats.retransmissions += 1;
        self.stats.segments_sent += 1;
        let data = len - s.syn as u64 - s.fin as u64;
        self.stats.bytes_sent += data;
        self.stats.bytes_retransmitted += data;
        self.ensure_rto(now);
        Some(self.emit_segment(now, s.start, s.end, s.syn, s.fin, false))
    }

    /// New data (or the FIN) if the windows allow it (RFC 6675 NextSeg rule 2).
    fn next_new_segment(&mut self, now: Instant) -> Option<Vec<u8>> {
        let may_send = self.state.sends()
            || (matches!(self.state, State::FinWait1 | State::LastAck | State::Closing) && self.snd.fin_queued);
        if !may_send {
            return None;
        }
        let start = self.snd.nxt;
        let unsent = self.snd.unsent();
        let fin_next = self.snd.fin_offset().is_some_and(|f| start <= f) && unsent == 0;
        if unsent == 0 && !fin_next {
            return None;
        }
        let right_edge = self.snd.una + self.snd_wnd;
        let rwnd_room = right_edge.saturating_sub(start);
        let cwnd_room = self.cwnd().saturating_sub(self.snd.pipe);
        let mut len = unsent.min(self.smss).min(rwnd_room).min(cwnd_room);
        let mut window_probe = false;
        if self.probe {
            // RFC 9293 §3.8.6.1: a zero-window probe carries one byte beyond the window.
            self.probe = false;
            if unsent > 0 && len == 0 && rwnd_room == 0 {
                len = 1;
                window_probe = true;
            }
        }
        if unsent > 0 {
            let full = unsent.min(self.smss);
            if len < full {
                // Sender SWS avoidance (RFC 9293 §3.8.6.2.1): wait for a full segment's room,
                // unless nothing is in flight and the peer's window will not grow by itself.
                let nothing_out = self.snd.segs.is_empty();
                if len == 0 || !(nothing_out && rwnd_room < full && len >= rwnd_room) {
                    self.arm_persist(now);
                    return None;
                }
            }
            if len < self.smss && self.config.nagle && !self.snd.segs.is_empty() && !self.snd.fin_queued {
                return None; // Nagle: one small segment outstanding at most
            }
        }
        let end = start + len;
        let fin = self.snd.fin_offset() == Some(end) && (len == unsent);
        if len == 0 && !fin {
            return None;
        }
        let end = end + fin as u64;
        self.snd.sent_new(start, end, false, fin, now);
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len;
        self.ensure_rto(now);
        // RFC 3168 §6.1.4: a window probe is not ECN-capable.
        Some(self.emit_segment(now, start, end, false, fin, !window_probe))
    }

    fn arm_persist(&mut self, now: Instant) {
        if self.snd_wnd == 0 && self.snd.segs.is_empty() && self.timers[Timer::Persist as usize].is_none() {
            self.set_timer(Timer::Persist, now + self.rtt.rto());
        }
    }

    /// RFC 6298 §5.1: start the timer when data goes out and it is not running.
    fn ensure_rto(&mut self, now: Instant) {
        if self.timers[Timer::Retransmit as usize].is_none() {
            self.set_timer(Timer::Retransmit, now + self.rtt.rto());
        }
    }

    /// Right edge of the window we could advertise now.
    fn advertisable_edge(&self) -> u64 {
        self.rcv.nxt + self.rcv.window()
    }

    /// RFC 9293 §3.8.6.2.2: the window's right edge moves only in steps of
    /// min(buffer / 2, MSS).
    fn sws_threshold(&self) -> u64 {
        (self.rcv.capacity() as u64 / 2).min(self.config.mss as u64).max(1)
    }

    /// Window field and the right edge it advertises.
    fn window_to_advertise(&mut self, syn: bool) -> u16 {
        let edge = self.advertisable_edge();
        // The edge only moves right, and only in steps of the SWS threshold.
        let kept = self.rcv_adv.max(self.rcv.nxt).min(edge);
        let edge = if edge >= kept + self.sws_threshold() { edge } else { kept };
        let wnd = edge - self.rcv.nxt;
        if syn {
            return wnd.min(65535) as u16; // RFC 7323 §2.2: a SYN's window is not scaled
        }
        let field = (wnd >> self.rcv_wscale).min(65535);
        self.rcv_adv = self.rcv.nxt + (field << self.rcv_wscale);
        field as u16
    }

    /// Build the bytes of a segment covering `[start, end)` of our sequence space; `new_data`
    /// when it carries data sent for the first time (not a retransmission nor a window
    /// probe), the only segments that may be ECN-capable.
    fn emit_segment(&mut self, now: Instant, start: u64, end: u64, syn: bool, fin: bool, new_data: bool) -> Vec<u8> {
        // The data stays in the send buffer until the segment is built from it (below).
        let data_range = (end > start + syn as u64 + fin as u64).then_some((start, end - fin as u64));
        let payload_len = data_range.map_or(0, |(s, e)| self.snd.data_len(s, e));
        let mut options = TcpOptions::default();
        let tsval = self.ts_offset.wrapping_add((now.as_nanos() / 1_000_000) as u32);
        if syn {
            options.mss = Some(self.config.mss);
            // RFC 7323 §2.2: offered in a SYN; in a SYN-ACK only if the SYN offered it.
            let offer = if self.state == State::SynSent { self.config.window_scaling } else { self.wscale_ok };
            options.window_scale = offer.then_some(self.rcv_wscale);
            options.sack_permitted = if self.state == State::SynSent { self.config.sack } else { self.sack_ok };
            let ts = if self.state == State::SynSent { self.config.timestamps } else { self.ts_ok };
            options.timestamps = ts.then_some((tsval, if self.state == State::SynSent { 0 } else { self.ts_recent }));
        } else {
            if self.ts_ok {
                options.timestamps = Some((tsval, self.ts_recent));
            }
            if self.sack_ok && self.rcv.has_gaps() {
                // Fit the blocks into what the MSS leaves beside the payload (RFC 2018 §3,
                // RFC 6691): options and data together stay within the segment size.
                let budget = self.smss as usize + if self.ts_ok { 12 } else { 0 };
                let room = budget
                    .saturating_sub(payload_len + options.buffer_len())
                    .min(MAX_OPTIONS_LEN - options.buffer_len());
                let max = (room.saturating_sub(4) / 8).min(4);
                for (i, (l, r)) in self.rcv.sack_blocks(max).into_iter().enumerate() {
                    options.sack[i] = (self.irs.plus(l), self.irs.plus(r));
                    options.sack_len = i as u8 + 1;
                }
            }
        }
        let ack = (self.state != State::SynSent).then(|| self.irs.plus(self.rcv.nxt));
        let mut flags = 0;
        if syn {
            flags |= Flags::SYN;
        }
        if fin {
            flags |= Flags::FIN;
        }
        if payload_len > 0 && end - fin as u64 >= self.snd.data_end() {
            flags |= Flags::PSH;
        }
        flags |= self.ecn_flags(syn, ack.is_some(), new_data && payload_len > 0);
        let window = self.window_to_advertise(syn);
        let seq = self.iss.plus(start);
        if ack.is_some() {
            self.last_ack_sent = self.rcv.nxt;
            self.ack_now = false;
            self.unacked_segments = 0;
            self.timers[Timer::DelayedAck as usize] = None;
        }
        let buf = self.spare.pop().unwrap_or_default();
        let generated = self.snd.generated();
        let (first, rest) = match data_range {
            Some((s, e)) if !generated => self.snd.slices(s, e),
            _ => (&[][..], &[][..]),
        };
        let repr = TcpRepr {
            src_port: self.local.port(),
            dst_port: self.remote.port(),
            seq,
            ack,
            flags: Flags(flags),
            window,
            options,
            payload: first,
        };
        let (src, dst) = (*self.local.ip(), *self.remote.ip());
        match data_range {
            Some((s, e)) if generated => {
                let fill = |out: &mut [u8]| self.snd.generate(s, e, out);
                repr.emit_generated(buf, payload_len, fill, src, dst, self.headroom, self.checksums)
            }
            _ => repr.emit_into(buf, rest, src, dst, self.headroom, self.checksums),
        }
    }

    /// ECE and CWR for a segment being built (RFC 3168 §6.1.1-§6.1.3), and its ECN field.
    fn ecn_flags(&mut self, syn: bool, has_ack: bool, new_data: bool) -> u8 {
        if syn {
            return match self.state {
                // §6.1.1: an ECN-setup SYN has ECE and CWR, an ECN-setup SYN-ACK ECE only.
                State::SynSent if self.config.ecn => Flags::ECE | Flags::CWR,
                State::SynReceived if self.ecn.ok => Flags::ECE,
                _ => 0,
            };
        }
        if !self.ecn.ok {
            return 0;
        }
        let mut flags = 0;
        if new_data {
            self.tx_ecn = Ecn::Ect0;
            if self.ecn.cwr_pending {
                self.ecn.cwr_pending = false;
                self.stats.cwr_sent += 1;
                flags |= Flags::CWR;
            }
        }
        if has_ack && self.ecn.echo {
            self.stats.ece_sent += 1;
            flags |= Flags::ECE;
        }
        flags
    }

    fn emit_raw(&mut self, seq: SeqNumber, ack: Option<SeqNumber>, flags: u8) -> Vec<u8> {
        self.stats.segments_sent += 1;
        let repr = TcpRepr {
            src_port: self.local.port(),
            dst_port: self.remote.port(),
            seq,
            ack,
            flags: Flags(flags),
            window: 0,
            options: TcpOptions::default(),
            payload: &[],
        };
        let buf = self.spare.pop().unwrap_or_default();
        repr.emit_into(buf, &[], *self.local.ip(), *self.remote.ip(), self.headroom, self.checksums)
    }

    /// Hands back the buffer of a segment the driver has handled, for a later segment to be
    /// built in: a bulk transfer then circulates the same buffers between its two ends
    /// instead of allocating one per segment. Buffers too small for a full segment, any
    /// beyond a few, and every one once the connection is in TIME-WAIT or CLOSED, are dropped.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        const MAX_SPARE: usize = 4;
        let full_segment = self.headroom + HEADER_LEN + self.config.mss as usize;
        let sending = !matches!(self.state, State::TimeWait | State::Closed);
        if sending && self.spare.len() < MAX_SPARE && buf.capacity() >= full_segment {
            self.spare.push(buf);
        }
    }

    /// Every later segment [`Connection::poll_transmit`] returns starts after `bytes` zero
    /// bytes, where the driver writes the lower layers' headers in place (a simulator puts
    /// the IPv4 header there) instead of moving the segment to make room. Default 0.
    pub fn set_headroom(&mut self, bytes: usize) {
        self.headroom = bytes;
    }

    /// Whether segments carry a computed checksum and arriving ones are verified (RFC 9293
    /// §3.1). Default true. A simulator may turn both off when nothing can alter a segment's
    /// bytes or show them (no capture): the outcome of every check is then known, and
    /// results are the same either way. Both ends must agree.
    pub fn set_checksums(&mut self, on: bool) {
        self.checksums = on;
    }

    fn set_timer(&mut self, timer: Timer, at: Instant) {
        self.timers[timer as usize] = Some(at);
    }

    fn set_state(&mut self, to: State) {
        if to == self.state {
            return;
        }
        let from = self.state;
        self.state = to;
        if to == State::Closed {
            self.timers = [None; 4];
        }
        if matches!(to, State::TimeWait | State::Closed) {
            // Nothing but a repeated FIN's ACK goes out any more: spare buffers would only
            // hold memory (a finished connection stays for its results).
            self.spare = Vec::new();
        }
        self.events.push_back(Event::StateChanged { from, to });
    }
}

/// SplitMix64: spreads a seed into well-mixed 64-bit values (initial sequence numbers,
/// timestamp offsets).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
