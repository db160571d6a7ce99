//! An SCTP association (RFC 9260), sans-IO.
//!
//! # Driving contract
//!
//! Time is always an argument; the association never reads a clock, opens a socket or draws
//! from a global RNG (its random values come from the [`Entropy`](crate::Entropy) its creator
//! chooses: a seed in simulation, the OS CSPRNG on real sockets). Methods come in four groups:
//!
//! * **Getters** (read-only): [`state`](Association::state), [`paths`](Association::paths),
//!   [`primary`](Association::primary), [`data_path`](Association::data_path),
//!   [`stats`](Association::stats), [`a_rwnd`](Association::a_rwnd), ...
//! * **Inputs**: [`handle_packet`](Association::handle_packet) for a datagram from the peer
//!   (the [`Endpoint`](crate::Endpoint) demultiplexes and checks the CRC32c first) and
//!   [`handle_timeout`](Association::handle_timeout) when [`poll_timeout`] has passed (a
//!   spurious call is harmless).
//! * **Application commands**: [`send`](Association::send), [`read`](Association::read),
//!   [`shutdown`](Association::shutdown), [`abort`](Association::abort),
//!   [`set_primary`](Association::set_primary); and from the driver,
//!   [`set_loss_rate_hint`](Association::set_loss_rate_hint) (for the ideal RTX-LOSSRATE
//!   policy).
//! * **Outputs**: [`poll_transmit`](Association::poll_transmit) until `None`, then
//!   [`poll_event`](Association::poll_event) until `None`, then
//!   [`poll_timeout`](Association::poll_timeout).
//!
//! After any input or command, drain the outputs in that order. Packets are built lazily
//! at the first `poll_transmit`, so an application that sends several messages before
//! polling gets them bundled, and a SACK built after the application has read reports the
//! freed window.
//!
//! Per-destination state lives in [`Path`]; outstanding data remembers the destination it
//! was last sent to, so every counter, window and timer is per path from the start.
//!
//! [`poll_timeout`]: Association::poll_timeout

mod asconf;
mod buffers;
mod cookie;
mod ecn;
mod handshake;
mod inbound;
mod outbound;
mod path;
mod paths;
mod reachability;
mod signing;
mod splitting;
mod timers;
mod tsn;

use std::collections::VecDeque;
use std::net::IpAddr;

use rand::{Rng, RngCore};
use simtime::{Duration, Instant};

use crate::cmt::{PathScheduler, PathsView, RetransmitPolicy, SchedulerConfig};
use crate::config::Config;
use crate::congestion::GroupView;
use crate::random::RandomStream;
use crate::wire::{Checksum, Chunk, ChunkType, ChunkView, DataRef, ErrorCause, HeaderView, SackChunk, UnknownAction};

pub use asconf::{
    AddressRequest, AsconfError, CAUSE_DELETE_LAST_ADDRESS, CAUSE_DELETE_SOURCE_ADDRESS, CAUSE_RESOURCE_SHORTAGE,
    CAUSE_UNRESOLVABLE_ADDRESS,
};
use buffers::BufferPool;
pub(crate) use cookie::CookieState;
pub(crate) use handshake::{
    address_params, peer_addresses, screen_unknown_params, AckTags, CookieEchoOutcome, InitAnswer, Offer,
};
pub use inbound::Message;
use inbound::{DataOutcome, Inbound};
pub use outbound::Generator;
use outbound::{Outbound, SackTallies};
pub use path::{Path, PathState, PathStats, RtoEstimator};
pub use paths::{Iter as PathsIter, PathId, Paths};
pub use signing::CAUSE_UNSUPPORTED_HMAC;
pub(crate) use signing::{extension_params, peer_supports_asconf};
pub use splitting::{BufferSplitting, SplitCounts, SplitShare};
pub use timers::Timer;
use timers::TimerTable;

/// Association states (RFC 9260 §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// No association (after close).
    Closed,
    /// INIT sent, waiting for INIT ACK.
    CookieWait,
    /// COOKIE ECHO sent, waiting for COOKIE ACK.
    CookieEchoed,
    /// Data may flow both ways.
    Established,
    /// The application asked to shut down; outstanding data still being acknowledged.
    ShutdownPending,
    /// SHUTDOWN sent.
    ShutdownSent,
    /// SHUTDOWN received; finishing our outstanding data.
    ShutdownReceived,
    /// SHUTDOWN ACK sent.
    ShutdownAckSent,
}

impl State {
    /// Name as the RFC writes it.
    pub fn name(self) -> &'static str {
        match self {
            State::Closed => "CLOSED",
            State::CookieWait => "COOKIE-WAIT",
            State::CookieEchoed => "COOKIE-ECHOED",
            State::Established => "ESTABLISHED",
            State::ShutdownPending => "SHUTDOWN-PENDING",
            State::ShutdownSent => "SHUTDOWN-SENT",
            State::ShutdownReceived => "SHUTDOWN-RECEIVED",
            State::ShutdownAckSent => "SHUTDOWN-ACK-SENT",
        }
    }
}

/// Why an association ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// Graceful shutdown completed (§9.2).
    Shutdown,
    /// The peer sent ABORT.
    AbortedByPeer,
    /// The application aborted, or a protocol violation made us abort.
    Aborted,
    /// The association error counter exceeded Association.Max.Retrans (§8.1).
    AssociationFailure,
    /// INIT or COOKIE ECHO retransmitted Max.Init.Retransmits times without answer (§5.1).
    InitFailed,
    /// The T5-shutdown-guard timer expired (§9.2).
    ShutdownGuardExpired,
}

/// Something the application or a recorder may want to know.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The association reached ESTABLISHED.
    Connected,
    /// The peer restarted (§5.2.4 action A): the association goes on, ESTABLISHED, with the
    /// tags, TSNs and streams of the peer's new INIT; no `Connected` follows.
    ///
    /// Data: user data not yet acknowledged by the old peer, queued or in flight, is
    /// discarded (`discarded_bytes`). Received messages ready for [`Association::read`] and
    /// not read yet (complete and, on an ordered stream, next in order) stay readable;
    /// fragments, and complete messages waiting for an earlier one, are dropped.
    ///
    /// State: a restart in SHUTDOWN-PENDING, SHUTDOWN-SENT or SHUTDOWN-RECEIVED returns to
    /// ESTABLISHED and drops the shutdown (T2-shutdown and T5-shutdown-guard stop): the
    /// application calls [`Association::shutdown`] again if it still wants one. In
    /// SHUTDOWN-ACK-SENT the association does not restart (§5.2.4 A).
    ///
    /// Paths: an address the association had keeps its [`PathId`], and the primary and the
    /// data path stay on their paths. An address the new INIT no longer lists is removed: its
    /// id is left unused (never given to another address) and no other path moves; a primary
    /// or data path that was on it goes to the path of the INIT's source. New addresses get
    /// new ids. Every path starts afresh, as in a new
    /// association: state active (no [`Event::PathStateChanged`] for it), error counter 0,
    /// initial RTO, cwnd and ssthresh at their initial values, nothing in flight, T3-rtx
    /// stopped. Only the address the INIT came from starts confirmed (§5.4); the others are
    /// probed by heartbeats at once. Per-path counters ([`PathStats`]) go on.
    Restarted {
        /// User-data bytes accepted by `send` and not acknowledged, discarded.
        discarded_bytes: u32,
    },
    /// A destination changed reachability state.
    PathStateChanged {
        /// Which path.
        path: PathId,
        /// Old state.
        from: PathState,
        /// New state.
        to: PathState,
    },
    /// A destination was confirmed by a HEARTBEAT ACK (§5.4).
    PathConfirmed {
        /// Which path.
        path: PathId,
    },
    /// The primary path changed (application request, no switch-back, or RFC 7829
    /// primary path switchover).
    PrimaryChanged {
        /// Old primary.
        from: PathId,
        /// New primary.
        to: PathId,
    },
    /// New data started going to another destination (failover or switch-back): emitted
    /// when the first new DATA chunk is sent on `to`. Not emitted with CMT on
    /// ([`crate::cmt::CmtConfig::enabled`]), where new data goes to every destination at once.
    DataPathChanged {
        /// Destination new data went to before.
        from: PathId,
        /// Destination new data goes to now.
        to: PathId,
    },
    /// T3-rtx expired on a destination (§6.3.3); `rto` is the backed-off value.
    T3Timeout {
        /// Which path.
        path: PathId,
        /// RTO after backoff.
        rto: Duration,
    },
    /// An ECNE reduced the window of a destination (RFC 9260 Appendix A); the values after
    /// the reduction.
    EcnReduction {
        /// The destination the CE-marked data was sent to.
        path: PathId,
        /// Its cwnd, bytes.
        cwnd: u32,
        /// Its ssthresh, bytes.
        ssthresh: u32,
    },
    /// Chunks marked for fast retransmission (§7.2.4).
    FastRetransmit {
        /// Destination the chunks were last sent to.
        path: PathId,
        /// Number of chunks marked.
        chunks: u32,
    },
    /// A chunk that timed out was retransmitted on another destination (§6.4).
    RetransmitOnAlternate {
        /// Destination it timed out on.
        from: PathId,
        /// Destination it was retransmitted to.
        to: PathId,
    },
    /// A HEARTBEAT was sent.
    HeartbeatSent {
        /// Which path.
        path: PathId,
    },
    /// A HEARTBEAT ACK arrived.
    HeartbeatAcked {
        /// Which path.
        path: PathId,
        /// Round-trip time it measured.
        rtt: Duration,
    },
    /// The peer reported an error (OPERATION ERROR chunk).
    PeerError {
        /// Cause codes.
        causes: Vec<u16>,
    },
    /// The peer added an address (RFC 5061 ADD-IP): a new destination.
    PeerAddressAdded {
        /// Its path.
        path: PathId,
        /// The address.
        address: IpAddr,
    },
    /// The peer deleted an address (RFC 5061 DELETE-IP): the destination is gone, its
    /// outstanding data moved to another.
    PeerAddressRemoved {
        /// The path it had (never reused).
        path: PathId,
        /// The address.
        address: IpAddr,
    },
    /// The peer asked us to use one of its addresses as primary (RFC 5061 SET-PRIMARY);
    /// a [`Event::PrimaryChanged`] precedes it if the primary moved.
    PeerPrimaryRequested {
        /// The path.
        path: PathId,
        /// The address.
        address: IpAddr,
    },
    /// The peer acknowledged one of our address requests (RFC 5061 §5.3).
    AsconfAcked {
        /// The request.
        request: AddressRequest,
        /// From the request (its ASCONF leaves with the next packet) to the ASCONF-ACK.
        round_trip: Duration,
    },
    /// The peer refused one of our address requests (RFC 5061 §5.3).
    AsconfFailed {
        /// The request.
        request: AddressRequest,
        /// The error cause code (e.g. 0x00A0, delete of the last address).
        cause: u16,
    },
    /// T4-RTO expired and the outstanding ASCONF went again (RFC 5061 §5.1).
    AsconfRetransmitted {
        /// Its serial number.
        serial: u32,
        /// The destination it went to.
        path: PathId,
        /// The RTO T4 runs with now.
        rto: Duration,
    },
    /// The association ended.
    Closed {
        /// Why.
        reason: CloseReason,
    },
}

/// A datagram to send: an SCTP packet for one of the peer's addresses.
///
/// In declaration order (`repr(C)`): the addresses follow the buffer and the headroom, at
/// offset 32, where an IPv4 address (after its one-byte tag) lies within one 8-byte word.
/// Where the compiler placed them, a datagram's destination crossed a word, and its reader
/// loaded it as one 4-byte value straight after the datagram was written: a load the stores
/// cannot forward, which waits for every earlier store to reach the cache (BENCHMARKS.md,
/// "Values moved where the stores can hand them over"; `tests/layout.rs` checks it).
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Transmit {
    /// The SCTP packet (common header, chunks, CRC32c) after `headroom` bytes.
    pub payload: Vec<u8>,
    /// Bytes in front of the packet in `payload`, left for the driver's lower-layer headers
    /// ([`Association::set_headroom`]); 0 unless the driver asked for some.
    pub headroom: usize,
    /// Destination address.
    pub remote: IpAddr,
    /// Source address the association chose, or `None`: the driver picks it (routing decides
    /// the interface). `None` unless the peer acknowledged a SET-PRIMARY naming one of our
    /// addresses (RFC 5061): packets then leave from that address.
    pub local: Option<IpAddr>,
    /// ECN codepoint for the IP header (RFC 3168 §5): 0 Not-ECT (the only one used today),
    /// 1 ECT(1), 2 ECT(0), 3 CE.
    pub ecn: u8,
    /// Path it belongs to.
    pub path: PathId,
}

/// Why [`Association::send`] refused a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The association does not accept new data in this state (§9.2 after shutdown).
    #[error("association is {0:?}; no new data accepted")]
    NotOpen(State),
    /// The stream identifier is not below the negotiated number of outbound streams.
    #[error("stream {0} is not open")]
    InvalidStream(u16),
    /// The send buffer has no room for the message now; try again later.
    #[error("send buffer full")]
    BufferFull,
    /// Empty messages cannot be sent (§6.2 forbids empty DATA chunks).
    #[error("empty message")]
    Empty,
}

/// Association-wide counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssocStats {
    /// Packets accepted from the peer.
    pub packets_received: u64,
    /// Packets discarded for a wrong verification tag (§8.5).
    pub bad_verification_tag: u64,
    /// DATA chunks received more than once.
    pub duplicate_chunks_received: u64,
    /// DATA chunks dropped because the receive buffer was full.
    pub chunks_dropped_no_space: u64,
    /// DATA chunks above the next expected TSN discarded in go-back-N mode
    /// (`Config::go_back_n`).
    pub chunks_discarded_out_of_order: u64,
    /// Go-back-N rounds (`Config::go_back_n`): times a third duplicate SACK marked every
    /// chunk in flight for retransmission.
    pub go_back_n_rounds: u64,
    /// SACK chunks sent.
    pub sacks_sent: u64,
    /// SACK chunks received.
    pub sacks_received: u64,
    /// User messages accepted by `send`.
    pub messages_submitted: u64,
    /// User bytes accepted by `send`.
    pub bytes_submitted: u64,
    /// User bytes sent in DATA chunks, first transmissions and retransmissions, on every
    /// path: the sum of the paths' `bytes_sent` and `bytes_retransmitted`, including paths
    /// since removed. A driver reads one counter per packet instead of summing the paths.
    pub data_bytes_sent: u64,
    /// Packets received with the CE codepoint while ECN was in use (RFC 9260 Appendix A);
    /// those with DATA are echoed.
    pub ce_received: u64,
    /// ECNE chunks sent.
    pub ecne_sent: u64,
    /// CWR chunks sent.
    pub cwr_sent: u64,
    /// Packets whose AUTH chunk failed (wrong HMAC or key, unsupported HMAC; RFC 4895 §6.3).
    pub auth_failures: u64,
    /// Chunks discarded because they had to be authenticated and were not (RFC 4895 §6.3).
    pub unauthenticated_discarded: u64,
}

/// A random verification tag or Tie-Tag: never zero (§5.3.1).
pub(crate) fn random_tag(rng: &mut impl RngCore) -> u32 {
    loop {
        let t = rng.next_u32();
        if t != 0 {
            break t;
        }
    }
}

/// One SCTP association. See the module documentation for the driving contract.
#[derive(Debug)]
pub struct Association {
    config: Config,
    state: State,
    local_port: u16,
    peer_port: u16,
    /// Our tag: the peer writes it in every packet to us (§8.5).
    local_tag: u32,
    /// The peer's tag: we write it in every packet to the peer.
    peer_tag: u32,
    /// Tie-Tags (§5.2.2): random values that link cookies issued for unexpected INITs to this
    /// association without revealing its tags; drawn when first needed, zero until then.
    tie_tags: (u32, u32),
    local_addrs: Vec<IpAddr>,
    paths: Paths,
    /// The primary destination (§6.4).
    primary: PathId,
    /// Destination of the last new DATA chunk.
    data_path: PathId,
    /// Every timer, association-wide and per destination.
    timers: TimerTable,
    /// T1 retransmissions so far and the RTO they back off from.
    init_retransmits: u32,
    /// Stale Cookie errors answered with a new INIT (§5.2.6).
    stale_restarts: u32,
    t1_rto: Duration,
    /// Control chunk retransmitted by T1 (INIT or COOKIE ECHO) and the destination it last
    /// went to.
    handshake_chunk: Option<(PathId, Chunk)>,
    t2_retransmits: u32,
    /// Destination of the SHUTDOWN or SHUTDOWN ACK that T2-shutdown times.
    t2_path: PathId,
    /// The destination the peer's latest SHUTDOWN came from: where the SHUTDOWN ACK answers
    /// it (§6.4), while it is usable.
    shutdown_from: Option<PathId>,
    out: Outbound,
    /// Scratch space for SACK processing, kept to avoid allocating per SACK.
    sack_tallies: SackTallies,
    /// The SACK chunk being processed, parsed into room kept between SACKs.
    sack_in: SackChunk,
    inb: Inbound,
    /// Buffers for packets, queued fragments and received data, reused.
    buffers: BufferPool,
    /// Bytes left free in front of every packet built (see [`Association::set_headroom`]).
    headroom: usize,
    /// Whether packets built carry their CRC32c (see [`Association::set_checksum`]).
    checksum: Checksum,
    /// Where the next SACK goes (§6.4: the source of the DATA being acknowledged).
    sack_path: PathId,
    /// Control chunks waiting for the next packet to their destination.
    control: VecDeque<(PathId, Chunk)>,
    /// Chooses the destinations of new data: `None` for the default, [`Primary`](crate::cmt::Primary), called
    /// directly (it runs on every flush with data queued).
    scheduler: Option<Box<dyn PathScheduler>>,
    /// The destinations the scheduler chose (scratch space kept between flushes).
    schedule: Vec<PathId>,
    /// Chooses where retransmissions go.
    retransmit_policy: Box<dyn RetransmitPolicy>,
    /// Every path as the congestion controllers see it on a SACK (refilled per SACK).
    group_view: GroupView,
    /// Some path has [`Path::force_packet`] set (so the flush need not look at every path).
    any_forced_packet: bool,
    /// Association error counter (§8.1).
    error_count: u32,
    transmits: VecDeque<Transmit>,
    events: VecDeque<Event>,
    /// Set by every input; cleared once outputs are built.
    dirty: bool,
    rng: RandomStream,
    stats: AssocStats,
    /// ECN (RFC 9260 Appendix A).
    ecn: ecn::EcnState,
    /// What our INIT or INIT ACK sent for AUTH (RFC 4895), if AUTH is on.
    local_auth: Option<crate::auth::AuthParams>,
    /// AUTH in force (both sides sent their parameters).
    auth: Option<crate::auth::AuthState>,
    /// Dynamic address reconfiguration (RFC 5061).
    asconf: asconf::AsconfState,
    /// The source address packets name ([`Transmit::local`]): set once the peer acknowledged
    /// a SET-PRIMARY naming one of our addresses (RFC 5061), `None` (the driver picks) before.
    local_source: Option<IpAddr>,
}

impl Association {
    fn new_common(
        config: Config,
        local_addrs: Vec<IpAddr>,
        local_port: u16,
        peer_port: u16,
        mut rng: RandomStream,
    ) -> Self {
        let local_tag = random_tag(&mut rng);
        let initial_tsn = config.initial_tsn.unwrap_or_else(|| rng.next_u32());
        let out = Outbound::new(initial_tsn, config.outbound_streams);
        let inb = Inbound::new(0, 0, config.recv_buffer);
        let t1_rto = config.rto_initial;
        Association {
            state: State::Closed,
            local_port,
            peer_port,
            local_tag,
            peer_tag: 0,
            tie_tags: (0, 0),
            local_addrs,
            paths: Paths::new(),
            primary: PathId::default(),
            data_path: PathId::default(),
            timers: TimerTable::default(),
            init_retransmits: 0,
            stale_restarts: 0,
            t1_rto,
            handshake_chunk: None,
            t2_retransmits: 0,
            t2_path: PathId::default(),
            shutdown_from: None,
            out,
            sack_tallies: SackTallies::default(),
            sack_in: SackChunk::default(),
            inb,
            buffers: BufferPool::new(config.pmtu as usize),
            headroom: 0,
            checksum: Checksum::Compute,
            sack_path: PathId::default(),
            control: VecDeque::new(),
            scheduler: match config.scheduler {
                SchedulerConfig::Primary => None,
                _ => Some(config.scheduler.build()),
            },
            schedule: Vec::new(),
            retransmit_policy: config.retransmit.build(),
            group_view: GroupView::default(),
            any_forced_packet: false,
            error_count: 0,
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            dirty: true,
            rng,
            stats: AssocStats::default(),
            ecn: ecn::EcnState::default(),
            local_auth: None,
            auth: None,
            asconf: asconf::AsconfState::default(),
            local_source: None,
            config,
        }
    }

    // ----- getters -----

    /// Current state.
    pub fn state(&self) -> State {
        self.state
    }
    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.config
    }
    /// Every destination, indexed by [`PathId`].
    pub fn paths(&self) -> &Paths {
        &self.paths
    }
    /// The primary destination.
    pub fn primary(&self) -> PathId {
        self.primary
    }
    /// The destination the latest new data went to.
    pub fn data_path(&self) -> PathId {
        self.data_path
    }
    /// Path to `remote`, if it is one of the peer's addresses.
    pub fn path_of(&self, remote: IpAddr) -> Option<PathId> {
        self.paths.find(remote)
    }
    /// Association-wide counters.
    pub fn stats(&self) -> &AssocStats {
        &self.stats
    }
    /// Association error counter (§8.1).
    pub fn error_count(&self) -> u32 {
        self.error_count
    }
    /// Our current advertised receiver window (§6.2.1).
    pub fn a_rwnd(&self) -> u32 {
        self.inb.a_rwnd()
    }
    /// Our view of the peer's receiver window (§6.2.1).
    pub fn peer_rwnd(&self) -> u32 {
        self.out.peer_rwnd
    }
    /// How long, up to `now`, new data waited for the peer's receiver window alone: data was
    /// queued and a destination the scheduler offered had cwnd room, but the peer's rwnd
    /// (§6.1 A) had none. Judged at every transmission opportunity (every input).
    pub fn rwnd_blocked_time(&self, now: Instant) -> Duration {
        self.out.rwnd_blocked_time(now)
    }
    /// User-data bytes held in the receive buffer (not yet read by the application).
    pub fn receive_buffer_used(&self) -> u32 {
        self.inb.held()
    }
    /// New TSNs received after a higher TSN (out of order: reordering across paths of
    /// different delay, and retransmissions filling a hole).
    pub fn reordered_tsns(&self) -> u64 {
        self.inb.reordered_tsns
    }
    /// User-data bytes delivered to the application so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.inb.delivered_bytes
    }
    /// User messages delivered to the application so far.
    pub fn delivered_messages(&self) -> u64 {
        self.inb.delivered_messages
    }
    /// Free space in the send buffer, bytes.
    pub fn send_buffer_space(&self) -> usize {
        self.config.send_buffer.saturating_sub(self.out.buffered) as usize
    }
    /// User-data bytes accepted and not yet acknowledged (queued, in flight or marked).
    pub fn buffered_bytes(&self) -> u32 {
        self.out.buffered
    }
    /// True once the association has closed and the driver has taken everything it had: its
    /// packets, its events and its received messages. The [`Endpoint`](crate::Endpoint)
    /// removes such an association.
    pub fn is_finished(&self) -> bool {
        self.state == State::Closed
            && !self.dirty
            && self.transmits.is_empty()
            && self.events.is_empty()
            && !self.inb.readable()
    }
    /// True when every message sent has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.out.is_empty()
    }
    /// Local port.
    pub fn local_port(&self) -> u16 {
        self.local_port
    }
    /// Peer port.
    pub fn peer_port(&self) -> u16 {
        self.peer_port
    }
    /// Our verification tag (the peer writes it in its packets).
    pub fn local_tag(&self) -> u32 {
        self.local_tag
    }
    /// The peer's verification tag.
    pub fn peer_tag(&self) -> u32 {
        self.peer_tag
    }
    /// Number of outbound streams negotiated.
    pub fn outbound_streams(&self) -> u16 {
        self.out.stream_count()
    }
    /// Number of inbound streams negotiated.
    pub fn inbound_streams(&self) -> u16 {
        self.inb.stream_count()
    }

    // ----- outputs -----

    /// The next packet to send, building packets if there is work.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        if self.transmits.is_empty() && self.dirty {
            self.dirty = false;
            self.flush(now);
        }
        self.transmits.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The earliest timer, if any runs. After [`handle_timeout`](Association::handle_timeout)
    /// at `now` it is `None` or later than `now`.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.earliest()
    }

    /// When `timer` expires, if it runs.
    pub fn timer(&self, timer: Timer) -> Option<Instant> {
        self.timers.get(timer)
    }

    // ----- inputs -----

    /// Fires every timer due at `now`. Afterwards no timer is due at `now`: one that its
    /// handler left due (armed for `now` again) fires in the same call, up to a few rounds;
    /// past those it is put off by a nanosecond, so a driver never spins on one instant.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.dirty = true;
        for _ in 0..4 {
            self.fire_due_timers(now);
            if self.timers.earliest().is_none_or(|t| t > now) {
                return;
            }
        }
        self.timers.postpone_due(now);
    }

    /// One round over the table: association timers, then each destination's.
    fn fire_due_timers(&mut self, now: Instant) {
        if self.timers.is_due(Timer::T1, now) {
            self.on_t1_expiry(now);
        }
        if self.timers.is_due(Timer::T2, now) {
            self.on_t2_expiry(now);
        }
        if self.timers.is_due(Timer::T5, now) {
            self.timers.stop(Timer::T5);
            self.abort_with(now, CloseReason::ShutdownGuardExpired, Vec::new());
        }
        if self.timers.is_due(Timer::T4, now) {
            self.on_t4_expiry(now); // RFC 5061 §5.1
        }
        if self.timers.is_due(Timer::DelayedSack, now) {
            // §6.2: the SACK is due; the next poll_transmit sends it.
            self.timers.stop(Timer::DelayedSack);
            self.inb.request_sack();
        }
        for i in 0..self.paths.id_bound() {
            let p = PathId::new(i as u32);
            if self.state == State::Closed {
                return;
            }
            if !self.paths.contains(p) {
                continue;
            }
            if self.timers.is_due(Timer::T3Rtx(p), now) {
                self.on_t3_expiry(now, p);
            }
            if self.timers.is_due(Timer::Heartbeat(p), now) {
                self.on_heartbeat_timer(now, p);
            }
        }
    }

    /// Processes a packet from the peer's address `from`. `packet` has passed the CRC32c
    /// check; ports matched this association. A packet led by an INIT or a COOKIE ECHO is the
    /// [`Endpoint`](crate::Endpoint)'s to handle (§5.2: answering an INIT and opening a cookie
    /// take its secret); given here, an INIT is discarded with its packet and a COOKIE ECHO
    /// skipped.
    pub fn handle_packet(&mut self, now: Instant, from: IpAddr, packet: &[u8]) {
        self.handle_packet_ecn(now, from, packet, 0);
    }

    /// [`Association::handle_packet`] for a packet whose IP header carried the ECN codepoint
    /// `ecn` (RFC 3168 §5: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE; only CE matters here).
    pub fn handle_packet_ecn(&mut self, now: Instant, from: IpAddr, packet: &[u8], ecn: u8) {
        let Ok(header) = HeaderView::new_checked(packet) else { return };
        self.process_chunks(now, from, &header, 0, ecn & 0b11 == 0b11);
    }

    /// As [`Association::handle_packet_ecn`] for the packet at `start` in `datagram`, which
    /// is handed over: a whole message in it that the application can read at once stays in
    /// it, without being copied out ([`Association::read_in_place`]). The datagram comes
    /// back if no message stayed in it.
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        from: IpAddr,
        datagram: Vec<u8>,
        start: usize,
        ecn: u8,
    ) -> Option<Vec<u8>> {
        let Some(packet) = datagram.get(start..) else { return Some(datagram) };
        self.lend(packet);
        self.handle_packet_ecn(now, from, packet, ecn);
        self.keep_datagram(datagram, start)
    }

    /// The next packet handled is `packet`, in a datagram handed over after it
    /// ([`Association::keep_datagram`]).
    pub(crate) fn lend(&mut self, packet: &[u8]) {
        self.inb.lend(packet.as_ptr() as usize, packet.len());
    }

    /// The datagram lent with [`Association::lend`], its packet at `start`: a message that
    /// stayed in it takes it; otherwise it comes back.
    pub(crate) fn keep_datagram(&mut self, datagram: Vec<u8>, start: usize) -> Option<Vec<u8>> {
        self.inb.keep_in(datagram, start)
    }

    /// The chunks bundled after the COOKIE ECHO that created this association (§5.1 D).
    pub(crate) fn handle_bundled_after_cookie(&mut self, now: Instant, from: IpAddr, header: &HeaderView<'_>) {
        self.process_chunks(now, from, header, 1, false);
    }

    /// The chunks of a packet from `from`, after the first `skip`; `ce` when the packet
    /// arrived with the CE codepoint.
    fn process_chunks(&mut self, now: Instant, from: IpAddr, header: &HeaderView<'_>, skip: usize, ce: bool) {
        self.dirty = true;
        let vtag = header.verification_tag();
        let from_path = self.path_of(from);
        let mut data_seen = false;
        // The lowest TSN of the packet's DATA, for an ECNE if it arrived CE.
        let mut lowest_tsn: Option<u32> = None;
        let mut first = skip == 0;
        // RFC 4895 §6.3: the chunks after a valid AUTH chunk are authenticated.
        let mut authenticated = false;
        for view in header.chunks().well_formed().skip(skip) {
            if !self.tag_ok(&view, vtag, first) {
                self.stats.bad_verification_tag += 1;
                return;
            }
            if first {
                self.stats.packets_received += 1;
            }
            first = false;
            if let Some(state) = self.auth.as_ref() {
                if view.chunk_type == ChunkType::AUTH {
                    match self.check_auth(header.chunk_bytes(), &view) {
                        signing::AuthCheck::Valid => authenticated = true,
                        signing::AuthCheck::Invalid => {
                            self.stats.auth_failures += 1;
                            return;
                        }
                        signing::AuthCheck::UnsupportedHmac(id) => {
                            self.stats.auth_failures += 1;
                            self.report_unsupported_hmac(from_path, id);
                            return;
                        }
                    }
                    continue;
                }
                if !authenticated && state.must_verify(view.chunk_type.0) {
                    // §6.3: a chunk that must be authenticated, without AUTH, is dropped.
                    self.stats.unauthenticated_discarded += 1;
                    continue;
                }
            } else if self.config.asconf && matches!(view.chunk_type, ChunkType::ASCONF | ChunkType::ASCONF_ACK) {
                // RFC 5061 §4.1: without AUTH in force there is no authenticated ASCONF.
                self.stats.unauthenticated_discarded += 1;
                continue;
            }
            if view.chunk_type == ChunkType::DATA {
                if let (Some(d), Some(p)) = (DataRef::from_view(&view), from_path) {
                    data_seen = true;
                    if ce && lowest_tsn.is_none_or(|t| tsn::tsn_lt(d.tsn, t)) {
                        lowest_tsn = Some(d.tsn);
                    }
                    if !self.on_data(now, p, &d) {
                        return;
                    }
                }
                continue;
            }
            if !view.chunk_type.is_known() {
                match view.chunk_type.unknown_action() {
                    UnknownAction::Stop => return,
                    UnknownAction::StopAndReport => {
                        self.report_unrecognized(from_path, &view);
                        return;
                    }
                    UnknownAction::Skip => continue,
                    UnknownAction::SkipAndReport => {
                        self.report_unrecognized(from_path, &view);
                        continue;
                    }
                }
            }
            if view.chunk_type == ChunkType::SACK {
                // Parsed into a SACK kept for the purpose, whose vectors keep their room: with
                // several paths a SACK carries many gap blocks.
                let mut sack = std::mem::take(&mut self.sack_in);
                let parsed = sack.parse_into(view.flags, view.value).is_ok();
                if parsed {
                    self.on_sack_chunk(now, &sack);
                }
                self.sack_in = sack;
                if !parsed {
                    return;
                }
                continue;
            }
            let Ok(chunk) = Chunk::parse(&view) else { return };
            if !self.on_control(now, from, from_path, chunk) {
                return;
            }
        }
        if ce {
            self.on_ce_packet(lowest_tsn);
        }
        if data_seen && matches!(self.state, State::Established | State::ShutdownPending | State::ShutdownSent) {
            let sack_now = self.inb.on_data_packet(self.config.sack_freq);
            if !sack_now && !self.timers.is_armed(Timer::DelayedSack) {
                self.timers.set(Timer::DelayedSack, now + self.config.sack_delay);
            }
            if self.state == State::ShutdownSent {
                // §9.2: in SHUTDOWN-SENT, answer DATA with a SACK and a fresh SHUTDOWN.
                self.inb.request_sack();
                self.queue_shutdown();
            }
        }
    }

    /// §8.5 / §8.5.1: which verification tag each chunk type requires.
    fn tag_ok(&self, view: &ChunkView<'_>, vtag: u32, first: bool) -> bool {
        match view.chunk_type {
            // INIT carries tag 0 and must be alone; an association ignores it (see on_control).
            ChunkType::INIT => first && vtag == 0,
            // ABORT and SHUTDOWN COMPLETE (§8.5.1 B, C): our tag with the T bit clear, or with
            // it set the peer's tag, reflected by a sender that found it in our packet. Before
            // the peer's tag is known (COOKIE-WAIT: our INIT carried 0), only our own will do.
            ChunkType::ABORT | ChunkType::SHUTDOWN_COMPLETE => {
                let reflected = view.flags & 1 == 1;
                if reflected {
                    self.peer_tag != 0 && vtag == self.peer_tag
                } else {
                    vtag == self.local_tag
                }
            }
            _ => vtag == self.local_tag,
        }
    }

    fn report_unrecognized(&mut self, from: Option<PathId>, view: &ChunkView<'_>) {
        let mut chunk = vec![view.chunk_type.0, view.flags];
        chunk.extend_from_slice(&((view.value.len() + 4) as u16).to_be_bytes());
        chunk.extend_from_slice(view.value);
        let p = from.unwrap_or(self.primary);
        self.control.push_back((p, Chunk::Error { causes: vec![ErrorCause::UnrecognizedChunkType { chunk }] }));
    }

    /// One DATA chunk (§6.2). Returns false if the packet must not be processed further.
    fn on_data(&mut self, now: Instant, from: PathId, d: &DataRef<'_>) -> bool {
        if !matches!(self.state, State::Established | State::ShutdownPending | State::ShutdownSent) {
            return true;
        }
        if d.user_data.is_empty() {
            // §6.2: a DATA chunk with no user data is answered with ABORT (No User Data).
            self.abort_with(now, CloseReason::Aborted, vec![ErrorCause::NoUserData { tsn: d.tsn }]);
            return false;
        }
        self.sack_path = from;
        // CMT's DAC and the `sack_immediate_on_gap = false` option both keep the SACK
        // frequency under reordering (see `Config::sack_immediate_on_gap`).
        let keep_frequency = self.config.cmt.dac_active() || !self.config.sack_immediate_on_gap;
        match self.inb.on_data(d, &mut self.buffers, keep_frequency, self.config.go_back_n) {
            DataOutcome::Accepted => {}
            DataOutcome::OutOfOrder => self.stats.chunks_discarded_out_of_order += 1,
            DataOutcome::Duplicate => self.stats.duplicate_chunks_received += 1,
            DataOutcome::NoSpace => self.stats.chunks_dropped_no_space += 1,
            DataOutcome::InvalidStream => {
                // §6.5: acknowledge the TSN, report the stream, discard the data.
                self.control.push_back((
                    from,
                    Chunk::Error { causes: vec![ErrorCause::InvalidStreamIdentifier { stream_id: d.stream_id }] },
                ));
            }
        }
        true
    }

    /// A SACK chunk (§6.2.1), ignored before the association is up.
    fn on_sack_chunk(&mut self, now: Instant, sack: &SackChunk) {
        if matches!(self.state, State::CookieWait | State::CookieEchoed | State::Closed) {
            return;
        }
        self.stats.sacks_received += 1;
        self.on_sack(now, sack);
    }

    /// Every chunk but DATA. Returns false if the packet must not be processed further.
    fn on_control(&mut self, now: Instant, from: IpAddr, from_path: Option<PathId>, chunk: Chunk) -> bool {
        match chunk {
            Chunk::Sack(sack) => self.on_sack_chunk(now, &sack),
            Chunk::Heartbeat { info } => {
                // §8.3: echo the information unchanged, to the address it came from.
                let p = from_path.unwrap_or(self.primary);
                self.control.push_back((p, Chunk::HeartbeatAck { info }));
            }
            Chunk::HeartbeatAck { info } => self.on_heartbeat_ack(now, &info),
            Chunk::Abort { .. } => {
                self.close(CloseReason::AbortedByPeer);
                return false;
            }
            Chunk::InitAck(init) => self.on_init_ack(now, from, init),
            // INIT and COOKIE ECHO lead their packets, and there the endpoint hands them to
            // `on_unexpected_init` / `on_cookie_echo` (§5.2): answering one or opening a
            // cookie needs its secret. Anywhere else they are ignored.
            Chunk::Init(_) => return false,
            Chunk::CookieEcho { .. } => {}
            // §5.2.5: a COOKIE ACK outside COOKIE-ECHOED is discarded there.
            Chunk::CookieAck => self.on_cookie_ack(now),
            Chunk::Shutdown { cumulative_tsn_ack } => self.on_shutdown(now, cumulative_tsn_ack, from_path),
            Chunk::ShutdownAck => self.on_shutdown_ack(from_path),
            Chunk::ShutdownComplete { .. } => {
                if self.state == State::ShutdownAckSent {
                    self.close(CloseReason::Shutdown);
                }
                return false;
            }
            Chunk::Error { causes } => self.on_error_chunk(now, &causes),
            Chunk::Ecne { lowest_tsn } => self.on_ecne(lowest_tsn),
            Chunk::Cwr { lowest_tsn } => self.on_cwr(lowest_tsn),
            Chunk::Asconf { serial, address, params } => self.on_asconf(now, from, from_path, serial, address, params),
            Chunk::AsconfAck { serial, params } => self.on_asconf_ack(now, serial, params),
            // Checked in `process_chunks` when AUTH is in force; otherwise meaningless.
            Chunk::Auth { .. } | Chunk::Data(_) | Chunk::Unknown { .. } => {}
        }
        true
    }

    fn on_error_chunk(&mut self, now: Instant, causes: &[ErrorCause]) {
        let stale = causes.iter().any(|c| matches!(c, ErrorCause::StaleCookie { .. }));
        if stale && self.state == State::CookieEchoed {
            // §5.2.6: start over with a new INIT (without a Cookie Preservative).
            self.restart_init(now);
        }
        self.events.push_back(Event::PeerError { causes: causes.iter().map(ErrorCause::code).collect() });
    }

    // ----- application commands -----

    /// Queues one user message on `stream` (§6.1); fragments it to the path MTU (§6.9).
    pub fn send(&mut self, stream: u16, ppid: u32, unordered: bool, data: &[u8]) -> Result<(), SendError> {
        self.check_send(stream, data.len())?;
        let max = self.config.max_fragment();
        self.out.enqueue(stream, ppid, unordered, data, max, &mut self.buffers);
        self.submitted(data.len());
        Ok(())
    }

    /// As [`Association::send`] for a message of `len` bytes that is not held but made as it
    /// is sent, again for a retransmission: `generator(tag, at, out)` writes its bytes from
    /// offset `at` into `out` (zeros on the way in), straight into each packet. For an
    /// application whose data is a function of a tag and the position (a simulated bulk
    /// sender's message: a stamped header on zeros), it saves writing every message into a
    /// buffer and copying it into its packet, and the send buffer holds no bytes.
    pub fn send_generated(
        &mut self,
        stream: u16,
        ppid: u32,
        unordered: bool,
        len: usize,
        tag: [u64; 2],
        generator: Generator,
    ) -> Result<(), SendError> {
        self.check_send(stream, len)?;
        let max = self.config.max_fragment();
        self.out.enqueue_generated(stream, ppid, unordered, len, max, tag, generator);
        self.submitted(len);
        Ok(())
    }

    /// Whether a message of `len` bytes on `stream` may be queued now.
    fn check_send(&self, stream: u16, len: usize) -> Result<(), SendError> {
        if !matches!(self.state, State::CookieWait | State::CookieEchoed | State::Established) {
            return Err(SendError::NotOpen(self.state));
        }
        if len == 0 {
            return Err(SendError::Empty);
        }
        if stream >= self.out.stream_count() {
            return Err(SendError::InvalidStream(stream));
        }
        if len > self.send_buffer_space() {
            return Err(SendError::BufferFull);
        }
        Ok(())
    }

    /// Counts a queued message of `len` bytes; it goes out with the next flush.
    fn submitted(&mut self, len: usize) {
        self.stats.messages_submitted += 1;
        self.stats.bytes_submitted += len as u64;
        self.dirty = true;
    }

    /// The next complete message, in stream order (§6.6).
    pub fn read(&mut self) -> Option<Message> {
        let (mut msg, start) = self.read_in_place()?;
        msg.data.drain(..start);
        Some(msg)
    }

    /// As [`Association::read`], with the message's data where it is: `data[start..]`. A
    /// message that stayed in the datagram it came in ([`Association::handle_datagram`])
    /// starts after the datagram's headers; any other at 0.
    pub fn read_in_place(&mut self) -> Option<(Message, usize)> {
        let read = self.inb.read_in_place()?;
        if self.inb.window_update_due(self.config.pmtu) {
            self.inb.request_sack();
            self.dirty = true;
        }
        Some(read)
    }

    /// Builds every later packet after `bytes` bytes of headroom in its buffer
    /// ([`Transmit::headroom`]), where the driver writes the lower layers' headers in place (a
    /// simulator puts the IPv4 header there) instead of moving the packet to make room. The
    /// packet and the buffer's capacity (the path MTU) are unchanged.
    pub fn set_headroom(&mut self, bytes: usize) {
        self.headroom = bytes;
    }

    /// Whether every later packet carries its CRC32c ([`Checksum::Compute`], the default,
    /// RFC 9260 §6.8) or zero ([`Checksum::Skip`]: simulation only, never on a real network).
    /// Received packets are checked by the [`Endpoint`](crate::Endpoint), which sets this.
    pub fn set_checksum(&mut self, checksum: Checksum) {
        self.checksum = checksum;
    }

    /// Offers a buffer the driver has finished with (a datagram it has handled, the data of a
    /// message it has read) for building later packets and chunks in, saving allocations.
    /// Optional; the contents do not matter.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        self.buffers.give(buf);
    }

    /// Size of the next message `read` would return.
    pub fn peek_len(&self) -> Option<usize> {
        self.inb.peek_len()
    }

    /// True if `read` would return a message.
    pub fn readable(&self) -> bool {
        self.inb.readable()
    }

    /// Starts a graceful shutdown (§9.2): no new data; SHUTDOWN once all is acknowledged.
    pub fn shutdown(&mut self, now: Instant) {
        match self.state {
            State::Established => {
                self.set_state(State::ShutdownPending);
                self.dirty = true;
                self.maybe_progress_shutdown(now);
            }
            State::CookieWait | State::CookieEchoed => self.close(CloseReason::Aborted),
            _ => {}
        }
    }

    /// Sends ABORT and closes (§9.1).
    pub fn abort(&mut self, now: Instant) {
        if self.state != State::Closed {
            self.abort_with(now, CloseReason::Aborted, vec![ErrorCause::UserInitiatedAbort { reason: Vec::new() }]);
        }
    }

    /// Makes `path` the primary (§6.4: the application may change it at any time).
    pub fn set_primary(&mut self, path: PathId) {
        if self.paths.contains(path) && path != self.primary {
            self.events.push_back(Event::PrimaryChanged { from: self.primary, to: path });
            self.primary = path;
            self.dirty = true;
        }
    }

    /// Declares the loss rate (a fraction in [0, 1]) of the path to `remote`, for the ideal
    /// RTX-LOSSRATE retransmission policy ([`crate::cmt::RetransmitConfig::LossRate`]),
    /// which, as in ns-2, uses the path's configured loss rate rather than a measured one.
    /// Values outside [0, 1] are clamped, NaN is ignored, and an address that names no
    /// destination is ignored. Nothing but that policy reads it. Returns the destination.
    pub fn set_loss_rate_hint(&mut self, remote: IpAddr, rate: f64) -> Option<PathId> {
        let p = self.paths.find(remote)?;
        if !rate.is_nan() {
            self.paths[p].loss_rate_hint = rate.clamp(0.0, 1.0);
        }
        Some(p)
    }

    // ----- shared helpers -----

    fn abort_with(&mut self, _now: Instant, reason: CloseReason, causes: Vec<ErrorCause>) {
        if self.state != State::Closed && self.peer_tag != 0 {
            let p = self.primary;
            self.control.clear();
            self.control.push_back((p, Chunk::Abort { t_bit: false, causes }));
        }
        self.close(reason);
    }

    fn close(&mut self, reason: CloseReason) {
        if self.state == State::Closed {
            return;
        }
        self.set_state(State::Closed);
        self.dirty = true;
        self.events.push_back(Event::Closed { reason });
    }

    /// Enters `to`, stopping the timers it has no use for ([`Timer::serves`]).
    fn set_state(&mut self, to: State) {
        self.state = to;
        self.timers.keep_serving(to);
    }

    /// A random value in [-span/2, +span/2] added to `base` (§8.3 heartbeat jitter).
    fn jittered(&mut self, base: Duration, span: Duration) -> Duration {
        let half = span.as_nanos() / 2;
        if half == 0 {
            return base;
        }
        let offset = self.rng.random_range(0..=2 * half);
        Duration::from_nanos((base.as_nanos() + offset).saturating_sub(half))
    }

    /// The destinations as the multipath algorithms see them.
    fn paths_view(&self) -> PathsView<'_> {
        PathsView::new(&self.paths, self.primary, self.data_path)
    }

    /// The heartbeat nonce of a new path.
    fn next_nonce(&mut self) -> u64 {
        self.rng.next_u64()
    }
}
