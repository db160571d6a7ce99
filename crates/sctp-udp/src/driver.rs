//! [`UdpDriver`]: an [`sctp::Endpoint`] on UDP sockets (SCTP over UDP, RFC 6951).
//!
//! # Sockets and addresses
//!
//! One non-blocking UDP socket per local address, each bound to that address and to the
//! same UDP port (the local encapsulation port, 9899 by default: RFC 6951 §5.1 names the
//! registered port). A packet's local address is the address of the socket it arrived on,
//! and a packet leaves from the socket of the local address the driver chooses for it:
//!
//! * the address the engine names ([`sctp::Datagram::local`]: a reply goes out from the
//!   address the request came to), else
//! * the local address on which the association last received a packet from that peer
//!   address, else
//! * for a path of an association, the local address at the path's index (modulo their
//!   number): with two local and two peer addresses, path 0 runs between the first
//!   addresses and path 1 between the second ones, so a fault on one local address breaks
//!   one path; a stateless reply goes out from the address the request came to.
//!
//! When T3-rtx expires towards a destination and the association has no other active one,
//! that destination's packets move to the next local address (as FreeBSD selects a new
//! source address for a failed destination), so an association with a single-homed peer
//! survives the loss of one of our addresses.
//!
//! # Encapsulation port (RFC 6951 §5.4)
//!
//! The remote UDP port is kept per association and peer address, learnt from the UDP source
//! port of every packet the association accepts from that address (one that passes the
//! verification tag check, or the COOKIE ECHO that creates it); an address never heard
//! from uses the configured remote port (9899 by default). A stateless reply (INIT ACK,
//! ABORT, SHUTDOWN COMPLETE for an out-of-the-blue packet) goes back to the port its request
//! came from.
//!
//! # As a server
//!
//! The engine keeps no state for an INIT (its INIT ACK carries an HMAC-signed State Cookie
//! whose secret comes from the OS CSPRNG) and checks verification tags (RFC 9260 §8.5);
//! finished associations leave the endpoint and the driver's tables. The driver bounds the
//! number of associations: at the limit, an INIT or a COOKIE ECHO that would open another one
//! is answered with an ABORT carrying the "Out of Resource" cause (RFC 9260 §3.3.10.4), with
//! the INIT's Initiate Tag, or for a COOKIE ECHO the tag it carried with the T bit set
//! (§8.4, §8.5.1), and counted in [`DriverStats::rejected_over_limit`]; nothing is stored.

use std::collections::{BTreeMap, VecDeque};
use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::PathBuf;

use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use netsim::transport::sctp::SctpSocketApi;
use sctp::wire::{Chunk, ChunkType, CommonHeader, ErrorCause, HeaderView, Packet};
use sctp::{AssocId, Association, Checksum, Config, Datagram, Endpoint, Entropy, Event};
use simtime::Instant;

use crate::clock::Clock;
use crate::fault::{Fault, FaultPlan};
use crate::pcap::PcapWriter;

/// The registered UDP port for SCTP over UDP (RFC 6951 §5.1, IANA "sctp-tunneling").
pub const DEFAULT_UDP_PORT: u16 = 9899;

/// Bytes below the SCTP common header on the wire: IPv4 (20) and UDP (8) headers. The
/// engine's [`Config::lower_layer_overhead`] is set to it, so packets fit the path MTU with
/// the encapsulation (RFC 6951 §5.6).
pub const UDP_OVERHEAD: u32 = 28;

/// Largest UDP payload received.
const MAX_DATAGRAM: usize = 65_535;

/// Largest number of socket buffer bytes asked for (the kernel may give less).
const DEFAULT_SOCKET_BUFFER: usize = 4 << 20;

/// How the driver sits on the machine.
#[derive(Clone, Debug)]
pub struct LocalOptions {
    /// Local IPv4 addresses, one socket each; the first is the primary source.
    pub addrs: Vec<Ipv4Addr>,
    /// Local UDP (encapsulation) port; 0 lets the system choose one (the same for every
    /// address).
    pub udp_port: u16,
    /// Local SCTP port; 0 takes the local UDP port's number.
    pub sctp_port: u16,
    /// UDP port of a peer address not heard from yet.
    pub remote_udp_port: u16,
    /// Accept incoming associations.
    pub listening: bool,
    /// Most associations at once; further INITs and COOKIE ECHOs are refused.
    pub max_associations: usize,
    /// Injected packet loss.
    pub faults: Vec<Fault>,
    /// Seed of the partial-drop decisions of `faults`.
    pub fault_seed: u64,
    /// Capture file to write, if any.
    pub pcap: Option<PathBuf>,
    /// Socket send and receive buffer sizes asked for, bytes.
    pub socket_buffer: usize,
    /// Send trains of equal-sized datagrams to one destination in one system call and
    /// receive them so (Linux UDP segmentation and receive offload, `batch.rs`); the peer
    /// sees ordinary datagrams. On by default; off, or where the kernel refuses it, one
    /// datagram per call.
    pub offload: bool,
    /// SCTP's CRC32c (RFC 9260 §6.8): [`Checksum::Compute`] (the default) on every packet
    /// sent and checked on every packet received. [`Checksum::Skip`] sends zero and checks
    /// nothing: only for measuring what the checksum costs on loopback (paper 002 removed
    /// it), never on a network, where a corrupted packet would be accepted. The results
    /// say so (scalar `real/<name>/crc32c_skipped`).
    pub checksum: Checksum,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            addrs: vec![Ipv4Addr::LOCALHOST],
            udp_port: DEFAULT_UDP_PORT,
            sctp_port: 5001,
            remote_udp_port: DEFAULT_UDP_PORT,
            listening: false,
            max_associations: 256,
            faults: Vec::new(),
            fault_seed: 1,
            pcap: None,
            socket_buffer: DEFAULT_SOCKET_BUFFER,
            checksum: Checksum::Compute,
            offload: true,
        }
    }
}

/// What can go wrong setting a driver up or running it.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// No local address given.
    #[error("no local address to bind")]
    NoAddress,
    /// A fault names an address the driver does not have.
    #[error("fault on {0}, which is not a local address")]
    FaultAddress(Ipv4Addr),
    /// Binding a socket failed.
    #[error("binding UDP {addr}:{port}: {source}")]
    Bind {
        /// The address.
        addr: Ipv4Addr,
        /// The port.
        port: u16,
        /// The system's error.
        source: std::io::Error,
    },
    /// The capture file could not be written.
    #[error("capture file {path}: {source}")]
    Capture {
        /// Its path.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// Polling the sockets failed.
    #[error("polling sockets: {0}")]
    Poll(#[from] std::io::Error),
}

/// The driver's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriverStats {
    /// UDP datagrams received.
    pub datagrams_received: u64,
    /// UDP datagrams sent.
    pub datagrams_sent: u64,
    /// UDP payload bytes received.
    pub bytes_received: u64,
    /// UDP payload bytes sent.
    pub bytes_sent: u64,
    /// Datagrams the socket would not take (its buffer full): lost, as on a full queue.
    pub send_blocked: u64,
    /// Datagrams whose sending failed otherwise.
    pub send_errors: u64,
    /// INITs and COOKIE ECHOs refused at the association limit.
    pub rejected_over_limit: u64,
    /// Datagrams from a non-IPv4 source, ignored.
    pub not_ipv4: u64,
    /// Times a destination's packets moved to another local address after a timeout.
    pub source_changes: u64,
    /// System calls that sent several datagrams (segmentation offload, `batch.rs`).
    pub segmented_sends: u64,
    /// System calls that received several datagrams (receive offload, `batch.rs`).
    pub coalesced_receives: u64,
}

/// One local address and its socket.
#[derive(Debug)]
struct Local {
    addr: Ipv4Addr,
    sock: UdpSocket,
    /// Readable according to the last poll, not yet drained.
    readable: bool,
    /// Segmentation and receive offload are on (see `batch.rs`).
    offload: bool,
}

/// Where a peer address of an association is reached.
#[derive(Clone, Copy, Debug)]
struct PeerAddr {
    /// Its UDP port (learnt, RFC 6951 §5.4).
    udp_port: u16,
    /// Index of the local address to send from.
    local: usize,
}

/// An SCTP endpoint on UDP sockets. See the module documentation.
#[derive(Debug)]
pub struct UdpDriver {
    ep: Endpoint,
    clock: Clock,
    poll: Poll,
    events: Events,
    locals: Vec<Local>,
    udp_port: u16,
    remote_udp_port: u16,
    /// Per association and peer address: UDP port and local address.
    peers: BTreeMap<(AssocId, IpAddr), PeerAddr>,
    /// Per association, the packets it had accepted (passed the verification tag check) when
    /// it last handled one.
    accepted: BTreeMap<AssocId, u64>,
    /// Source of the last datagram handed to the engine, and the local address it came to.
    last_from: Option<(SocketAddrV4, usize)>,
    faults: FaultPlan,
    pcap: Option<PcapWriter>,
    max_associations: usize,
    stats: DriverStats,
    /// Receive buffer.
    rx: Vec<u8>,
    /// Datagrams waiting to leave in one call (`batch.rs`).
    batch: crate::batch::Batch,
    /// The associations in the order met (for [`SctpSocketApi::associations`]), closed ones
    /// removed.
    ids: Vec<AssocId>,
    /// Engine events not yet taken, with their time.
    engine_events: VecDeque<(Instant, AssocId, Event)>,
    /// Finished associations not yet taken.
    closed: VecDeque<(AssocId, Association)>,
    /// Notes about the driver's own decisions, not yet taken.
    notes: VecDeque<(Instant, String)>,
}

impl UdpDriver {
    /// Binds the sockets and creates the endpoint. `config` is used as given, except that its
    /// lower-layer overhead becomes IPv4 + UDP ([`UDP_OVERHEAD`]).
    pub fn new(mut config: Config, opts: &LocalOptions, clock: Clock) -> Result<Self, DriverError> {
        if opts.addrs.is_empty() {
            return Err(DriverError::NoAddress);
        }
        if let Some(f) = opts.faults.iter().find(|f| !opts.addrs.contains(&f.addr)) {
            return Err(DriverError::FaultAddress(f.addr));
        }
        config.lower_layer_overhead = UDP_OVERHEAD;
        let poll = Poll::new()?;
        let mut locals = Vec::with_capacity(opts.addrs.len());
        let mut port = opts.udp_port;
        for (i, &addr) in opts.addrs.iter().enumerate() {
            let bind = |source| DriverError::Bind { addr, port, source };
            let mut sock = UdpSocket::bind(SocketAddr::V4(SocketAddrV4::new(addr, port))).map_err(bind)?;
            if port == 0 {
                port = sock.local_addr().map_err(bind)?.port();
            }
            set_buffers(&sock, opts.socket_buffer);
            poll.registry().register(&mut sock, Token(i), Interest::READABLE)?;
            let offload = opts.offload && crate::batch::enable(std::os::fd::AsRawFd::as_raw_fd(&sock));
            locals.push(Local { addr, sock, readable: true, offload });
        }
        let addrs = opts.addrs.iter().map(|a| IpAddr::V4(*a)).collect();
        // Port 0 is not a valid SCTP port (RFC 9260 §3.1): take the UDP port's number.
        let sctp_port = if opts.sctp_port == 0 { port } else { opts.sctp_port };
        let mut ep = Endpoint::with_entropy(config, addrs, sctp_port, opts.listening, Entropy::Os);
        ep.set_checksum(opts.checksum);
        let pcap = match &opts.pcap {
            Some(path) => {
                Some(PcapWriter::create(path).map_err(|source| DriverError::Capture { path: path.clone(), source })?)
            }
            None => None,
        };
        Ok(UdpDriver {
            ep,
            clock,
            poll,
            events: Events::with_capacity(64),
            locals,
            udp_port: port,
            remote_udp_port: opts.remote_udp_port,
            peers: BTreeMap::new(),
            accepted: BTreeMap::new(),
            last_from: None,
            faults: FaultPlan::new(opts.faults.clone(), opts.fault_seed),
            pcap,
            max_associations: opts.max_associations,
            stats: DriverStats::default(),
            rx: vec![0; MAX_DATAGRAM],
            batch: crate::batch::Batch::default(),
            ids: Vec::new(),
            engine_events: VecDeque::new(),
            closed: VecDeque::new(),
            notes: VecDeque::new(),
        })
    }

    /// The engine's time now.
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// The clock.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The local UDP port (the one the system chose if 0 was asked for).
    pub fn udp_port(&self) -> u16 {
        self.udp_port
    }

    /// The local addresses.
    pub fn local_addrs(&self) -> Vec<Ipv4Addr> {
        self.locals.iter().map(|l| l.addr).collect()
    }

    /// The endpoint (read-only).
    pub fn endpoint(&self) -> &Endpoint {
        &self.ep
    }

    /// The endpoint, for application commands; call [`UdpDriver::flush`] afterwards.
    pub fn endpoint_mut(&mut self) -> &mut Endpoint {
        &mut self.ep
    }

    /// Counters.
    pub fn stats(&self) -> &DriverStats {
        &self.stats
    }

    /// Packets dropped by the fault plan: (received, sent).
    pub fn fault_drops(&self) -> (u64, u64) {
        (self.faults.dropped_rx, self.faults.dropped_tx)
    }

    /// The injected faults, as configured.
    pub fn faults(&self) -> &[Fault] {
        self.faults.faults()
    }

    /// The injected faults whose start is known (one counted from the first association's
    /// establishment is not before then), each with its start, in engine time.
    pub fn fault_schedule(&self) -> Vec<(Fault, Instant)> {
        self.faults.scheduled()
    }

    /// Opens an association to `remotes` (the first is the primary) on SCTP port `port`,
    /// reached on UDP port `udp_port` until each address is heard from.
    pub fn open(&mut self, remotes: &[Ipv4Addr], port: u16, udp_port: u16) -> AssocId {
        let now = self.now();
        let addrs: Vec<IpAddr> = remotes.iter().map(|a| IpAddr::V4(*a)).collect();
        let id = self.ep.connect(now, &addrs, port);
        let n = self.locals.len();
        for (i, r) in addrs.iter().enumerate() {
            self.peers.insert((id, *r), PeerAddr { udp_port, local: i % n });
        }
        self.ids.push(id);
        id
    }

    /// Waits until a socket is readable or `timeout` has passed (`None`: no limit).
    pub fn wait(&mut self, timeout: Option<std::time::Duration>) -> Result<(), DriverError> {
        if self.locals.iter().any(|l| l.readable) {
            return Ok(());
        }
        match self.poll.poll(&mut self.events, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(e.into()),
        }
        for ev in &self.events {
            if let Some(l) = self.locals.get_mut(ev.token().0) {
                l.readable = true;
            }
        }
        Ok(())
    }

    /// Receives one datagram from a readable socket and hands it to the engine (then sends
    /// what the engine has to send). `None` once no socket has anything more;
    /// `Some(association)` otherwise, the association being the one the packet went to.
    pub fn receive(&mut self) -> Option<Option<AssocId>> {
        for i in 0..self.locals.len() {
            if !self.locals[i].readable {
                continue;
            }
            let got = if self.locals[i].offload {
                let fd = std::os::fd::AsRawFd::as_raw_fd(&self.locals[i].sock);
                crate::batch::recv(fd, &mut self.rx).map(|(n, from, seg)| (n, SocketAddr::V4(from), seg))
            } else {
                self.locals[i].sock.recv_from(&mut self.rx).map(|(n, from)| (n, from, None))
            };
            match got {
                Ok((len, from, segment)) => {
                    let mut buf = std::mem::take(&mut self.rx);
                    let mut id = None;
                    // A train of datagrams the kernel coalesced (UDP_GRO): each on its own.
                    if segment.is_some_and(|seg| seg < len) {
                        self.stats.coalesced_receives += 1;
                    }
                    for datagram in buf[..len].chunks_mut(segment.unwrap_or(len).max(1)) {
                        id = self.input(i, from, datagram);
                    }
                    self.rx = buf;
                    self.flush();
                    return Some(id);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => self.locals[i].readable = false,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // ICMP port unreachable and the like, reported on the next call: not ours.
                Err(_) => {}
            }
        }
        None
    }

    /// One datagram that arrived on local address `local` from `from`: fault filter,
    /// capture, admission, the engine. Returns the association it went to. Public for the
    /// input-path tests; the engine's outputs wait for [`UdpDriver::flush`].
    pub fn input(&mut self, local: usize, from: SocketAddr, datagram: &mut [u8]) -> Option<AssocId> {
        let now = self.now();
        let SocketAddr::V4(from) = from else {
            self.stats.not_ipv4 += 1;
            return None;
        };
        let to = self.locals.get(local)?.addr;
        self.stats.datagrams_received += 1;
        self.stats.bytes_received += datagram.len() as u64;
        if self.faults.drops(to, now, false) {
            return None;
        }
        if let Some(p) = &mut self.pcap {
            p.record(self.clock.epoch_ns(now), from, SocketAddrV4::new(to, self.udp_port), datagram);
        }
        if !self.admit(now, local, from, datagram) {
            return None;
        }
        self.last_from = Some((from, local));
        let id = self.ep.handle_in_place(now, IpAddr::V4(*from.ip()), IpAddr::V4(to), datagram)?;
        // RFC 6951 §5.4: "after finding the SCTP association (which includes checking the
        // verification tag)", the port a peer address sends from is where it is reached. A
        // packet passed the check if the association counted it as accepted; a new
        // association came from a valid cookie.
        let accepted = self.ep.association(id).map_or(0, |a| a.stats().packets_received);
        let before = self.accepted.insert(id, accepted);
        if before.is_some_and(|b| b >= accepted) {
            return Some(id);
        }
        let key = (id, IpAddr::V4(*from.ip()));
        match self.peers.get_mut(&key) {
            Some(p) => *p = PeerAddr { udp_port: from.port(), local },
            None => {
                if !self.ids.contains(&id) {
                    self.ids.push(id);
                }
                self.peers.insert(key, PeerAddr { udp_port: from.port(), local });
            }
        }
        Some(id)
    }

    /// Whether a datagram may go to the engine: always below the association limit; at it,
    /// not an INIT or COOKIE ECHO that would open another association (answered with an
    /// ABORT, Out of Resource).
    fn admit(&mut self, now: Instant, local: usize, from: SocketAddrV4, datagram: &[u8]) -> bool {
        if self.ep.len() < self.max_associations {
            return true;
        }
        let Ok(view) = HeaderView::new_checked(datagram) else { return true };
        let Some(Ok(first)) = view.chunks().next() else { return true };
        let (tag, t_bit) = match first.chunk_type {
            ChunkType::INIT => {
                // An INIT from a peer of an existing association (restart, collision) is its.
                if self.ep.associations().any(|(_, a)| a.path_of(IpAddr::V4(*from.ip())).is_some()) {
                    return true;
                }
                let v = first.value;
                let Some(tag) = v.get(..4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]])) else {
                    return true;
                };
                (tag, false)
            }
            ChunkType::COOKIE_ECHO => {
                if self.ep.association_by_tag(view.verification_tag()).is_some() {
                    return true;
                }
                (view.verification_tag(), true)
            }
            _ => return true,
        };
        if self.ep.checksum() == Checksum::Compute && !view.checksum_ok() {
            return false; // §6.8: discarded silently
        }
        self.stats.rejected_over_limit += 1;
        let abort = Packet {
            header: CommonHeader { src_port: view.dst_port(), dst_port: view.src_port(), verification_tag: tag },
            chunks: vec![Chunk::Abort { t_bit, causes: vec![ErrorCause::OutOfResource] }],
        };
        self.send_raw(now, local, from, &abort.emit());
        self.send_batch();
        false
    }

    /// Sends everything the engine has to send, then collects its events and finished
    /// associations (taken with [`UdpDriver::take_event`] and [`UdpDriver::take_closed`]).
    pub fn flush(&mut self) {
        let now = self.now();
        while let Some(d) = self.ep.poll_transmit(now) {
            self.transmit(now, d);
        }
        while let Some((id, e)) = self.ep.poll_any_event() {
            match e {
                Event::T3Timeout { path, .. } => self.on_t3_timeout(now, id, path),
                Event::Connected => self.faults.on_established(now),
                _ => {}
            }
            self.engine_events.push_back((now, id, e));
        }
        while let Some((id, a)) = self.ep.poll_closed() {
            self.forget(id);
            self.closed.push_back((id, a));
        }
        self.send_batch();
    }

    /// T3-rtx expired towards `path` of `id`: when no other destination of the association
    /// is active, the next packets to it leave from the next local address. The engine knows
    /// destinations, not local addresses; a peer with a single address stays reachable
    /// through another local address only if the driver moves (FreeBSD likewise drops the
    /// cached source address of a destination that became unreachable or potentially
    /// failed and selects again: `sctp_t3rxt_timer`, netinet/sctp_timer.c). The peer answers
    /// the address the data came from, which the driver then learns as usual.
    fn on_t3_timeout(&mut self, now: Instant, id: AssocId, path: sctp::PathId) {
        let n = self.locals.len();
        if n < 2 {
            return;
        }
        let Some(a) = self.ep.association(id) else { return };
        let Some(remote) = a.paths().get(path).map(|p| p.remote) else { return };
        if a.paths().iter().any(|(p, x)| p != path && x.state == sctp::PathState::Active) {
            return;
        }
        let Some(entry) = self.peers.get_mut(&(id, remote)) else { return };
        let from = entry.local;
        entry.local = (from + 1) % n;
        let (old, new) = (self.locals[from].addr, self.locals[entry.local].addr);
        self.stats.source_changes += 1;
        self.notes.push_back((now, format!("source_changed assoc={id} remote={remote} from={old} to={new}")));
    }

    /// The next note about what the driver itself did (time, `key=value` text).
    pub fn take_note(&mut self) -> Option<(Instant, String)> {
        self.notes.pop_front()
    }

    /// Drops what the driver keeps about association `id`.
    fn forget(&mut self, id: AssocId) {
        let keys: Vec<_> = self
            .peers
            .range((id, IpAddr::V4(Ipv4Addr::UNSPECIFIED))..)
            .take_while(|(k, _)| k.0 == id)
            .map(|(k, _)| *k)
            .collect();
        for k in keys {
            self.peers.remove(&k);
        }
        self.ids.retain(|&x| x != id);
        self.accepted.remove(&id);
    }

    /// Sends one engine datagram from the local address chosen for it.
    fn transmit(&mut self, now: Instant, d: Datagram) {
        let IpAddr::V4(remote) = d.remote else { return };
        let n = self.locals.len();
        let (udp_port, mut local) = match d.assoc {
            Some(id) => match self.peers.get(&(id, d.remote)) {
                Some(p) => (p.udp_port, p.local),
                None => {
                    let i = self.ep.association(id).and_then(|a| a.path_of(d.remote)).map_or(0, |p| p.index() % n);
                    self.peers.insert((id, d.remote), PeerAddr { udp_port: self.remote_udp_port, local: i });
                    (self.remote_udp_port, i)
                }
            },
            None => match self.last_from {
                Some((from, l)) if *from.ip() == remote => (from.port(), l),
                _ => (self.remote_udp_port, 0),
            },
        };
        if let Some(IpAddr::V4(src)) = d.local {
            if let Some(i) = self.locals.iter().position(|l| l.addr == src) {
                local = i;
            }
        }
        self.send_raw(now, local, SocketAddrV4::new(remote, udp_port), d.packet());
        if let Some(id) = d.assoc {
            self.ep.recycle(id, d.payload);
        }
    }

    /// Sends `packet` from local address `local` to `to`, through the fault plan: at once,
    /// or with segmentation offload joined to the datagrams before it to the same place
    /// (sent by [`UdpDriver::send_batch`], which every path that sends ends with).
    fn send_raw(&mut self, now: Instant, local: usize, to: SocketAddrV4, packet: &[u8]) {
        let Some(l) = self.locals.get(local) else { return };
        let from = l.addr;
        if self.faults.drops(from, now, true) {
            return;
        }
        if l.offload {
            if self.batch.takes(local, to, packet.len()) {
                self.batch.push(packet);
            } else {
                self.send_batch();
                self.batch.start(local, to, packet);
            }
            return;
        }
        self.send_one(now, local, to, packet);
    }

    /// Sends one datagram from local address `local` (the fault plan already passed).
    fn send_one(&mut self, now: Instant, local: usize, to: SocketAddrV4, packet: &[u8]) {
        let Some(l) = self.locals.get(local) else { return };
        let from = l.addr;
        match l.sock.send_to(packet, SocketAddr::V4(to)) {
            Ok(_) => {
                self.stats.datagrams_sent += 1;
                self.stats.bytes_sent += packet.len() as u64;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                self.stats.send_blocked += 1;
                return;
            }
            Err(_) => {
                self.stats.send_errors += 1;
                return;
            }
        }
        if let Some(p) = &mut self.pcap {
            p.record(self.clock.epoch_ns(now), SocketAddrV4::new(from, self.udp_port), to, packet);
        }
    }

    /// Sends the datagrams waiting in the batch, in one call (one datagram: a plain send).
    /// A socket that will not take them loses them all, as a full queue would.
    fn send_batch(&mut self) {
        let Some((local, to)) = self.batch.key else { return };
        let Some(l) = self.locals.get(local) else {
            self.batch.clear();
            return;
        };
        let from = l.addr;
        let n = self.batch.count as u64;
        let result = if self.batch.count == 1 {
            l.sock.send_to(&self.batch.bytes, SocketAddr::V4(to))
        } else {
            let fd = std::os::fd::AsRawFd::as_raw_fd(&l.sock);
            crate::batch::send(fd, to, &self.batch.bytes, self.batch.segment)
        };
        match result {
            Ok(_) => {
                self.stats.segmented_sends += u64::from(n > 1);
                self.stats.datagrams_sent += n;
                self.stats.bytes_sent += self.batch.bytes.len() as u64;
                if let Some(p) = &mut self.pcap {
                    let now = self.clock.epoch_ns(self.clock.now());
                    for segment in self.batch.segments() {
                        p.record(now, SocketAddrV4::new(from, self.udp_port), to, segment);
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => self.stats.send_blocked += n,
            Err(_) if n > 1 => {
                // The kernel refused the train (a segment larger than the route's MTU is
                // EINVAL with UDP_SEGMENT, where a single datagram would be fragmented): one
                // datagram per call, as without offload.
                let batch = std::mem::take(&mut self.batch);
                let now = self.clock.now();
                for segment in batch.segments() {
                    self.send_one(now, local, to, segment);
                }
                self.batch = batch;
            }
            Err(_) => self.stats.send_errors += n,
        }
        self.batch.clear();
    }

    /// Handles the engine's timers if their deadline has passed, and sends what follows.
    pub fn handle_timeout(&mut self) {
        let now = self.now();
        if self.ep.poll_timeout().is_some_and(|t| t <= now) {
            self.ep.handle_timeout(now);
            self.flush();
        }
    }

    /// The engine's next deadline.
    pub fn deadline(&mut self) -> Option<Instant> {
        self.ep.poll_timeout()
    }

    /// The next engine event (time, association, event), in the order they came.
    pub fn take_event(&mut self) -> Option<(Instant, AssocId, Event)> {
        self.engine_events.pop_front()
    }

    /// The next association that finished and left the endpoint.
    pub fn take_closed(&mut self) -> Option<(AssocId, Association)> {
        self.closed.pop_front()
    }

    /// Flushes the capture file.
    pub fn finish_capture(&mut self) -> Result<Option<PathBuf>, DriverError> {
        let Some(p) = &mut self.pcap else { return Ok(None) };
        p.finish().map_err(|source| DriverError::Capture { path: p.path().to_path_buf(), source })?;
        Ok(Some(p.path().to_path_buf()))
    }

    /// The local address association `id` sends to peer address `remote` from, once known.
    pub fn local_for(&self, id: AssocId, remote: IpAddr) -> Option<Ipv4Addr> {
        let p = self.peers.get(&(id, remote))?;
        self.locals.get(p.local).map(|l| l.addr)
    }

    /// The UDP port packets of association `id` to peer address `remote` go to.
    pub fn remote_udp_port(&self, id: AssocId, remote: IpAddr) -> Option<u16> {
        self.peers.get(&(id, remote)).map(|p| p.udp_port)
    }

    /// Number of (association, peer address) entries kept (bounded by the associations'
    /// paths; for the input-path tests).
    pub fn peer_entries(&self) -> usize {
        self.peers.len()
    }
}

/// The same socket surface as the simulator's SCTP socket, so applications written against
/// it run here too. Flows do not exist on a real network: `flow` is ignored.
impl SctpSocketApi for UdpDriver {
    fn endpoint_mut(&mut self) -> &mut Endpoint {
        &mut self.ep
    }

    fn connect(&mut self, _now: simtime::Instant, peer: &[IpAddr], peer_port: u16, _flow: u32) -> AssocId {
        let v4: Vec<Ipv4Addr> = peer
            .iter()
            .filter_map(|a| match a {
                IpAddr::V4(a) => Some(*a),
                IpAddr::V6(_) => None,
            })
            .collect();
        let port = self.remote_udp_port;
        self.open(&v4, peer_port, port)
    }

    fn associations(&self) -> &[AssocId] {
        &self.ids
    }

    fn association(&self, assoc: AssocId) -> Option<&Association> {
        self.ep.association(assoc)
    }
}

/// Asks for `bytes` of socket send and receive buffer (forcing past the system's limit when
/// allowed); best effort, the kernel may give less.
fn set_buffers(sock: &UdpSocket, bytes: usize) {
    use std::os::fd::AsRawFd;
    let fd = sock.as_raw_fd();
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    for (force, plain) in [(libc::SO_RCVBUFFORCE, libc::SO_RCVBUF), (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF)] {
        // SAFETY: `fd` is an open socket owned by `sock`; the option value is a c_int that
        // outlives the calls, and `len` is its size.
        unsafe {
            let p = std::ptr::from_ref(&v).cast();
            if libc::setsockopt(fd, libc::SOL_SOCKET, force, p, len) != 0 {
                libc::setsockopt(fd, libc::SOL_SOCKET, plain, p, len);
            }
        }
    }
}
