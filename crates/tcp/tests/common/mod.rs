//! A two-endpoint harness: two connections joined by a simulated path with one-way delay, a
//! serialisation rate, a drop-tail queue (optionally marking ECN-capable segments CE above a
//! threshold), and scripted or random loss and CE marks. Virtual time only.
#![allow(dead_code, missing_docs, unreachable_pub)]

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddrV4};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use tcp::seq::SeqNumber;
use tcp::wire::{Ecn, Flags, TcpRepr};
use tcp::{Config, Connection, Duration, Event, Instant, State};

pub const A_ADDR: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 40000);
pub const B_ADDR: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(10, 0, 1, 1), 5001);

/// Which way a segment travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    AtoB,
    BtoA,
}

/// What the loss filter sees.
pub struct Seen<'a> {
    pub dir: Dir,
    pub now: Instant,
    pub repr: &'a TcpRepr<'a>,
    /// Sequence offset relative to the sender's ISN (data starts at 1).
    pub offset: u64,
    /// Index of this segment among all segments sent in this direction.
    pub index: u64,
}

pub type Filter = Box<dyn FnMut(&Seen<'_>) -> bool>;

pub struct Path {
    pub delay: Duration,
    pub rate_bps: u64,
    pub queue_limit: usize,
    pub loss: f64,
    /// With `Some(n)`: a segment arriving to `n` or more queued segments is marked CE when it
    /// is ECN-capable and dropped when it is not (RFC 3168 §5 marking instead of dropping).
    pub mark_threshold: Option<usize>,
}

impl Default for Path {
    fn default() -> Self {
        Path {
            delay: Duration::from_millis(10),
            rate_bps: 100_000_000,
            queue_limit: 1000,
            loss: 0.0,
            mark_threshold: None,
        }
    }
}

pub struct Harness {
    pub now: Instant,
    pub a: Connection,
    pub b: Connection,
    pub path: Path,
    /// (arrival time, sequence) -> (direction, bytes, ECN field)
    flying: BTreeMap<(Instant, u64), (Dir, Vec<u8>, Ecn)>,
    order: u64,
    link_free: [Instant; 2],
    departures: [Vec<Instant>; 2],
    pub sent: [u64; 2],
    pub dropped: [u64; 2],
    pub filter: Option<Filter>,
    /// Scripted CE marks: an ECN-capable segment it returns true for arrives marked.
    pub marker: Option<Filter>,
    /// Segments marked CE, per direction.
    pub marked: [u64; 2],
    rng: Xoshiro256PlusPlus,
    a_isn: Option<SeqNumber>,
    b_isn: Option<SeqNumber>,
    /// Bytes the application at A still has to write; `None` for unlimited.
    pub to_write: Option<u64>,
    written: u64,
    pub received: Vec<u8>,
    /// B's application reads only while `now >= read_from`.
    pub read_from: Instant,
    pub close_when_done: bool,
    pub events_a: Vec<(Instant, Event)>,
    pub events_b: Vec<(Instant, Event)>,
    /// (time, direction, flags, offset, payload length) of every segment put on the path.
    pub log: Vec<(Instant, Dir, u8, u64, usize)>,
    /// The ECN field each segment of `log` was sent with.
    pub log_ecn: Vec<Ecn>,
    /// A's congestion window after every step that changed it.
    pub cwnd_a: Vec<(Instant, u64)>,
    /// Hand every delivered segment's buffer back to its receiver (`Connection::recycle`).
    pub recycle: bool,
    /// Deliver each segment in a buffer of its own, after `HANDOVER_AT` bytes of something
    /// else, handed over to the receiver (`Connection::handle_segment_in`).
    pub hand_over: bool,
    /// A's application queues its bytes as generated ones (`Connection::write_generated`),
    /// made when they are sent, each write with a tag of its own.
    pub generate: bool,
}

/// Where a handed-over segment starts in its buffer ([`Harness::hand_over`]).
pub const HANDOVER_AT: usize = 20;

pub fn pattern(i: u64) -> u8 {
    (i % 251) as u8
}

/// [`pattern`] as a generator of a transfer's bytes (`Connection::write_generated`), for runs
/// tagged with the offset they start at: a byte made under the wrong run, or at the wrong
/// place, comes out wrong.
fn generate_pattern(offset: u64, tag: u64, out: &mut [u8]) {
    assert!(tag <= offset, "a run's bytes start at its tag");
    assert!(out.iter().all(|&v| v == 0), "generated into zeros");
    for (k, v) in out.iter_mut().enumerate() {
        *v = pattern(offset + k as u64);
    }
}

impl Harness {
    pub fn new(ca: Config, cb: Config, path: Path, seed: u64) -> Self {
        let now = Instant::ZERO;
        Harness {
            now,
            a: Connection::connect(ca, A_ADDR, B_ADDR, seed, now),
            b: Connection::accept(cb, B_ADDR, A_ADDR, seed.wrapping_add(1), now),
            path,
            flying: BTreeMap::new(),
            order: 0,
            link_free: [now; 2],
            departures: [Vec::new(), Vec::new()],
            sent: [0; 2],
            dropped: [0; 2],
            filter: None,
            marker: None,
            marked: [0; 2],
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            a_isn: None,
            b_isn: None,
            to_write: Some(0),
            written: 0,
            received: Vec::new(),
            read_from: now,
            close_when_done: true,
            events_a: Vec::new(),
            events_b: Vec::new(),
            log: Vec::new(),
            log_ecn: Vec::new(),
            cwnd_a: Vec::new(),
            recycle: false,
            hand_over: false,
            generate: false,
        }
    }

    pub fn transfer(mut self, bytes: u64) -> Self {
        self.to_write = Some(bytes);
        self
    }

    fn put_on_path(&mut self, dir: Dir, bytes: Vec<u8>, mut ecn: Ecn) {
        let d = dir as usize;
        let (src, dst) = if dir == Dir::AtoB { (A_ADDR, B_ADDR) } else { (B_ADDR, A_ADDR) };
        let repr = TcpRepr::parse(&bytes, *src.ip(), *dst.ip()).expect("engine emits valid segments");
        let isn = if dir == Dir::AtoB { &mut self.a_isn } else { &mut self.b_isn };
        if repr.flags.has(Flags::SYN) {
            *isn = Some(repr.seq);
        }
        let offset = isn.map_or(0, |i| repr.seq.diff(i).max(0) as u64);
        let index = self.sent[d];
        self.sent[d] += 1;
        let flags = repr.flags.0 | if repr.ack.is_some() { Flags::ACK } else { 0 };
        self.log.push((self.now, dir, flags, offset, repr.payload.len()));
        self.log_ecn.push(ecn);
        let mut lose = self.path.loss > 0.0 && self.rng.random::<f64>() < self.path.loss;
        let seen = Seen { dir, now: self.now, repr: &repr, offset, index };
        if let Some(f) = self.filter.as_mut() {
            lose |= f(&seen);
        }
        let ect = matches!(ecn, Ecn::Ect0 | Ecn::Ect1);
        let mut mark = ect && self.marker.as_mut().is_some_and(|f| f(&seen));
        // Drop-tail queue in front of the serialiser.
        self.departures[d].retain(|&t| t > self.now);
        if self.path.mark_threshold.is_some_and(|n| self.departures[d].len() >= n) {
            if ect {
                mark = true;
            } else {
                lose = true;
            }
        }
        if mark {
            ecn = Ecn::Ce;
            self.marked[d] += 1;
        }
        if lose || self.departures[d].len() >= self.path.queue_limit {
            self.dropped[d] += 1;
            return;
        }
        let start = self.link_free[d].max(self.now);
        let tx = Duration::transmission(bytes.len() + 20, self.path.rate_bps);
        self.link_free[d] = start + tx;
        self.departures[d].push(start + tx);
        let at = start + tx + self.path.delay;
        self.order += 1;
        self.flying.insert((at, self.order), (dir, bytes, ecn));
    }

    fn drive(&mut self) {
        // Application at A: keep the send buffer full, close when everything is written.
        loop {
            let room = self.a.send_space();
            let left = self.to_write.map_or(u64::MAX, |t| t - self.written);
            if room == 0 || left == 0 {
                break;
            }
            let n = (room as u64).min(left).min(65536) as usize;
            let w = if self.generate {
                // The tag is the offset written from: the generator finds it again.
                self.a.write_generated(n, self.written, generate_pattern)
            } else {
                let chunk: Vec<u8> = (self.written..self.written + n as u64).map(pattern).collect();
                self.a.write(&chunk)
            };
            self.written += w as u64;
            if w == 0 {
                break;
            }
        }
        if self.close_when_done && self.to_write == Some(self.written) && self.a.state() == State::Established {
            self.a.close();
        }
        if self.now >= self.read_from {
            let mut buf = std::mem::take(&mut self.received);
            self.b.read(&mut buf, usize::MAX);
            self.received = buf;
        }
        for _ in 0..2 {
            while let Some((seg, ecn)) = self.a.poll_transmit_ecn(self.now) {
                self.put_on_path(Dir::AtoB, seg, ecn);
            }
            while let Some((seg, ecn)) = self.b.poll_transmit_ecn(self.now) {
                self.put_on_path(Dir::BtoA, seg, ecn);
            }
            while let Some(e) = self.a.poll_event() {
                self.events_a.push((self.now, e));
            }
            while let Some(e) = self.b.poll_event() {
                if e == Event::PeerClosed && self.close_when_done {
                    self.b.close();
                }
                self.events_b.push((self.now, e));
            }
        }
        let cwnd = self.a.cwnd();
        if self.cwnd_a.last().is_none_or(|&(_, c)| c != cwnd) {
            self.cwnd_a.push((self.now, cwnd));
        }
    }

    /// Run until nothing is left to do or `until`.
    pub fn run(&mut self, until: Instant) {
        self.drive();
        loop {
            let next = [
                self.flying.keys().next().map(|k| k.0),
                self.a.poll_timeout(),
                self.b.poll_timeout(),
                (self.read_from > self.now).then_some(self.read_from),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next.filter(|&t| t <= until) else {
                break;
            };
            self.now = next;
            while let Some(entry) = self.flying.first_entry() {
                if entry.key().0 > self.now {
                    break;
                }
                let (dir, bytes, ecn) = entry.remove();
                let to = match dir {
                    Dir::AtoB => &mut self.b,
                    Dir::BtoA => &mut self.a,
                };
                let unkept = if self.hand_over {
                    let mut buf = vec![0xee; HANDOVER_AT];
                    buf.extend_from_slice(&bytes);
                    to.handle_segment_in(self.now, buf, HANDOVER_AT, ecn)
                } else {
                    to.handle_segment_ecn(self.now, &bytes, ecn);
                    Some(bytes)
                };
                if let (true, Some(buf)) = (self.recycle, unkept) {
                    to.recycle(buf);
                }
            }
            if self.a.poll_timeout().is_some_and(|t| t <= self.now) {
                self.a.handle_timeout(self.now);
            }
            if self.b.poll_timeout().is_some_and(|t| t <= self.now) {
                self.b.handle_timeout(self.now);
            }
            self.drive();
        }
    }

    pub fn data_ok(&self) -> bool {
        self.received.iter().enumerate().all(|(i, &b)| b == pattern(i as u64))
    }

    /// Data segments A sent, as (time, offset, len), retransmissions included.
    pub fn data_segments(&self) -> Vec<(Instant, u64, usize)> {
        self.log.iter().filter(|l| l.1 == Dir::AtoB && l.4 > 0).map(|l| (l.0, l.3, l.4)).collect()
    }
}

pub fn config(cc: &str) -> Config {
    Config { cc: tcp::CcAlgorithm::from_name(cc).expect("known algorithm"), ..Config::default() }
}
