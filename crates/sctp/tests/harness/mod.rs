//! A two-endpoint test harness: virtual time, one point-to-point link per address pair
//! (client address i <-> server address i) with its own one-way delay, optional rate,
//! Bernoulli loss and up/down state, an optional queue limit and ECN marking threshold (in
//! packets waiting for the link), plus scripted drops and CE marks. No simulator involved.

#![allow(dead_code, unreachable_pub)]

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::net::IpAddr;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sctp::{AssocId, Association, Config, Endpoint, Event, Message};
use simtime::{Duration, Instant};

/// `v` milliseconds.
pub fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// Client and server with `paths` address pairs, 10 ms apart, default configurations,
/// associated and settled (100 ms after the handshake began).
pub fn connected(paths: usize) -> Harness {
    let mut h = Harness::new(Config::default(), Config::default(), paths, ms(10), 7);
    h.connect();
    h.run_for(ms(100));
    h
}

pub const CLIENT: usize = 0;
pub const SERVER: usize = 1;
/// Each side's port.
pub const PORTS: [u16; 2] = [5000, 6000];

/// Rewrites a packet in flight.
pub type Mangler = Box<dyn FnMut(&mut Vec<u8>)>;

pub struct Link {
    pub delay: Duration,
    /// Bits per second; 0 = infinite.
    pub rate_bps: u64,
    pub loss: f64,
    pub up: bool,
    /// Packets that may wait for the link per direction (beyond: dropped).
    pub queue_limit: usize,
    /// With `Some(n)`: a packet finding `n` or more waiting is marked CE if ECN-capable and
    /// dropped if not (RFC 3168 §5).
    pub mark_threshold: Option<usize>,
    busy_until: [Instant; 2],
    departures: [Vec<Instant>; 2],
}

/// What each side's application does.
#[derive(Clone, Default)]
pub struct App {
    /// Bytes still to send (u64::MAX: unlimited).
    pub to_send: u64,
    pub msg_size: usize,
    pub streams: u16,
    pub unordered: bool,
    /// Read everything as it arrives.
    pub reading: bool,
    pub received: Vec<Message>,
    pub received_bytes: u64,
    pub sent_msgs: u64,
    /// Messages read where they arrived, in their datagram (with `Harness::hand_over`).
    pub read_in_datagram: u64,
}

struct InFlight {
    to_side: usize,
    from: IpAddr,
    to: IpAddr,
    link: usize,
    bytes: Vec<u8>,
    ecn: u8,
}

pub struct Harness {
    pub now: Instant,
    pub eps: [Endpoint; 2],
    pub addrs: [Vec<IpAddr>; 2],
    pub links: Vec<Link>,
    pub apps: [App; 2],
    pub events: [Vec<(Instant, Event)>; 2],
    /// Every packet delivered: (time, to_side, link, bytes).
    pub delivered: Vec<(Instant, usize, usize, usize)>,
    /// Every packet sent: (time, from_side, link, payload).
    pub sent: Vec<(Instant, usize, usize, Vec<u8>)>,
    /// Drop the n-th packet sent by a side (1-based): (side, n).
    pub drop_nth: Vec<(usize, u64)>,
    /// Mark the n-th packet sent by a side CE if it is ECN-capable: (side, n).
    pub mark_nth: Vec<(usize, u64)>,
    /// The ECN codepoint of every packet in `sent`.
    pub sent_ecn: Vec<u8>,
    /// Packets marked CE and dropped by the queues, per sending side.
    pub marked: [u64; 2],
    pub queue_drops: [u64; 2],
    /// Hook that may rewrite packets in flight (fuzzing).
    pub mangle: Option<Mangler>,
    pub sent_count: [u64; 2],
    /// Hand every packet over in a datagram of its own, after a few bytes of other headers
    /// (`Endpoint::handle_datagram`), and read messages where they are
    /// (`Association::read_in_place`), as the simulator does; otherwise the endpoints borrow
    /// the packets (`Endpoint::handle_in_place_ecn`) and the applications read copies.
    pub hand_over: bool,
    queue: BinaryHeap<Reverse<(Instant, u64)>>,
    packets: BTreeMap<u64, InFlight>,
    seq: u64,
    rng: Xoshiro256PlusPlus,
    pub assoc: [Option<AssocId>; 2],
    /// Associations that finished and left their endpoint (see `Endpoint::poll_closed`),
    /// kept so tests can look at their final state.
    pub closed: [BTreeMap<AssocId, Association>; 2],
}

/// Address `i` of `side`: the end of link `i`.
pub fn addr(side: usize, i: usize) -> IpAddr {
    IpAddr::from([10, i as u8, 0, side as u8 + 1])
}

impl Harness {
    /// Client and server each with `paths` addresses; link i joins address i of each.
    pub fn new(client: Config, server: Config, paths: usize, delay: Duration, seed: u64) -> Self {
        let addrs = [
            (0..paths).map(|i| addr(CLIENT, i)).collect::<Vec<_>>(),
            (0..paths).map(|i| addr(SERVER, i)).collect::<Vec<_>>(),
        ];
        let eps = [
            Endpoint::new(client, addrs[0].clone(), PORTS[CLIENT], false, seed),
            Endpoint::new(server, addrs[1].clone(), PORTS[SERVER], true, seed + 1),
        ];
        let links = (0..paths)
            .map(|_| Link {
                delay,
                rate_bps: 0,
                loss: 0.0,
                up: true,
                queue_limit: usize::MAX,
                mark_threshold: None,
                busy_until: [Instant::ZERO; 2],
                departures: [Vec::new(), Vec::new()],
            })
            .collect();
        Harness {
            now: Instant::ZERO,
            eps,
            addrs,
            links,
            apps: [App::default(), App::default()],
            events: [Vec::new(), Vec::new()],
            delivered: Vec::new(),
            sent: Vec::new(),
            drop_nth: Vec::new(),
            mark_nth: Vec::new(),
            sent_ecn: Vec::new(),
            marked: [0; 2],
            queue_drops: [0; 2],
            mangle: None,
            sent_count: [0; 2],
            hand_over: false,
            queue: BinaryHeap::new(),
            packets: BTreeMap::new(),
            seq: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xabcdef),
            assoc: [None, None],
            closed: [BTreeMap::new(), BTreeMap::new()],
        }
    }

    pub fn connect(&mut self) {
        self.connect_from(CLIENT);
    }

    /// `side` opens an association to every address of the other side.
    pub fn connect_from(&mut self, side: usize) {
        let remote = self.addrs[1 - side].clone();
        let id = self.eps[side].connect(self.now, &remote, PORTS[1 - side]);
        self.assoc[side] = Some(id);
    }

    /// Puts `ep` in place of `side`'s endpoint, as a host that crashed and came back: its
    /// associations are gone, packets in flight reach the new one.
    pub fn replace_endpoint(&mut self, side: usize, ep: Endpoint) {
        self.eps[side] = ep;
        self.assoc[side] = None;
        self.closed[side].clear();
    }

    /// `side`'s association, in its endpoint or finished.
    pub fn assoc(&mut self, side: usize) -> &mut sctp::Association {
        let id = self.assoc[side].expect("association exists");
        match self.eps[side].association_mut(id) {
            Some(a) => a,
            None => self.closed[side].get_mut(&id).expect("association exists"),
        }
    }

    pub fn assoc_ref(&self, side: usize) -> &sctp::Association {
        self.any_assoc(side, self.assoc[side].expect("association exists")).expect("association exists")
    }

    /// Association `id` of `side`, in its endpoint or finished.
    pub fn any_assoc(&self, side: usize, id: AssocId) -> Option<&sctp::Association> {
        self.eps[side].association(id).or_else(|| self.closed[side].get(&id))
    }

    /// Every association `side` has had, live or finished, by id.
    pub fn all_assocs(&self, side: usize) -> Vec<(AssocId, &sctp::Association)> {
        let mut all: Vec<_> =
            self.eps[side].associations().chain(self.closed[side].iter().map(|(&id, a)| (id, a))).collect();
        all.sort_by_key(|(id, _)| *id);
        all
    }

    fn route(&mut self, side: usize, remote: IpAddr, mut bytes: Vec<u8>, mut ecn: u8) {
        self.sent_count[side] += 1;
        let n = self.sent_count[side];
        let Some(l) = self.addrs[1 - side].iter().position(|&a| a == remote) else { return };
        self.sent.push((self.now, side, l, bytes.clone()));
        self.sent_ecn.push(ecn);
        if self.drop_nth.contains(&(side, n)) {
            return;
        }
        if let Some(m) = self.mangle.as_mut() {
            m(&mut bytes);
        }
        let from = self.addrs[side][l];
        let link = &mut self.links[l];
        if !link.up || (link.loss > 0.0 && self.rng.random::<f64>() < link.loss) {
            return;
        }
        let now = self.now;
        link.departures[side].retain(|&t| t > now);
        let waiting = link.departures[side].len();
        let ect = ecn == 1 || ecn == 2;
        let mut mark = ect && self.mark_nth.contains(&(side, n));
        if link.mark_threshold.is_some_and(|t| waiting >= t) {
            if !ect {
                self.queue_drops[side] += 1;
                return;
            }
            mark = true;
        }
        if waiting >= link.queue_limit {
            self.queue_drops[side] += 1;
            return;
        }
        if mark {
            ecn = 3;
            self.marked[side] += 1;
        }
        let start = self.now.max(link.busy_until[side]);
        let ser =
            if link.rate_bps == 0 { Duration::ZERO } else { Duration::transmission(bytes.len() + 20, link.rate_bps) };
        link.busy_until[side] = start + ser;
        link.departures[side].push(start + ser);
        let at = start + ser + link.delay;
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq)));
        self.packets.insert(self.seq, InFlight { to_side: 1 - side, from, to: remote, link: l, bytes, ecn });
    }

    fn pump_apps(&mut self) {
        for side in 0..2 {
            let Some(id) = self.assoc[side] else { continue };
            let Some(a) = self.eps[side].association_mut(id) else { continue };
            let app = &mut self.apps[side];
            let hand_over = self.hand_over;
            while app.to_send > 0 && app.msg_size > 0 {
                let len = (app.msg_size as u64).min(app.to_send) as usize;
                let stream = (app.sent_msgs % u64::from(app.streams.max(1))) as u16;
                let mut msg = vec![(app.sent_msgs % 251) as u8; len];
                let k = 8.min(len);
                msg[..k].copy_from_slice(&app.sent_msgs.to_be_bytes()[..k]);
                if a.send(stream, 0, app.unordered, &msg).is_err() {
                    break;
                }
                app.sent_msgs += 1;
                if app.to_send != u64::MAX {
                    app.to_send -= len as u64;
                }
            }
            if app.reading {
                loop {
                    let read = if hand_over { a.read_in_place() } else { a.read().map(|m| (m, 0)) };
                    let Some((mut m, start)) = read else { break };
                    if start > 0 {
                        app.read_in_datagram += 1;
                        m.data.drain(..start);
                    }
                    app.received_bytes += m.data.len() as u64;
                    app.received.push(m);
                }
            }
        }
    }

    fn drain(&mut self) {
        loop {
            self.pump_apps();
            let mut any = false;
            for side in 0..2 {
                while let Some(d) = self.eps[side].poll_transmit(self.now) {
                    any = true;
                    self.route(side, d.remote, d.payload, d.ecn);
                }
                if let Some(id) = self.assoc[side] {
                    if let Some(a) = self.eps[side].association_mut(id) {
                        while let Some(e) = a.poll_event() {
                            self.events[side].push((self.now, e));
                        }
                    }
                }
                while let Some((id, a)) = self.eps[side].poll_closed() {
                    self.closed[side].insert(id, a);
                }
            }
            if !any {
                break;
            }
        }
    }

    /// Runs until `end` or until nothing is left to do.
    pub fn run_until(&mut self, end: Instant) {
        loop {
            self.drain();
            let next_pkt = self.queue.peek().map(|r| r.0 .0);
            let next_timer = [self.eps[0].poll_timeout(), self.eps[1].poll_timeout()].into_iter().flatten().min();
            let Some(next) = [next_pkt, next_timer].into_iter().flatten().min() else {
                self.now = end;
                return;
            };
            if next > end {
                self.now = end;
                return;
            }
            self.now = next.max(self.now);
            while let Some(Reverse((at, seq))) = self.queue.peek().copied() {
                if at > self.now {
                    break;
                }
                self.queue.pop();
                let Some(mut p) = self.packets.remove(&seq) else { continue };
                if !self.links[p.link].up {
                    continue; // lost with the link
                }
                self.delivered.push((self.now, p.to_side, p.link, p.bytes.len()));
                let id = if self.hand_over {
                    let start = 20 + (seq % 5) as usize;
                    let mut datagram = vec![0xEE; start];
                    datagram.extend_from_slice(&p.bytes);
                    self.eps[p.to_side].handle_datagram(self.now, p.from, p.to, datagram, start, p.ecn)
                } else {
                    self.eps[p.to_side].handle_in_place_ecn(self.now, p.from, p.to, &mut p.bytes, p.ecn)
                };
                if self.assoc[p.to_side].is_none() {
                    self.assoc[p.to_side] = id;
                }
            }
            for side in 0..2 {
                if self.eps[side].poll_timeout().is_some_and(|t| t <= self.now) {
                    self.eps[side].handle_timeout(self.now);
                }
            }
        }
    }

    pub fn run_for(&mut self, d: Duration) {
        let end = self.now + d;
        self.run_until(end);
    }

    /// Breaks or restores link `l`; packets on it are lost while it is down.
    pub fn set_link(&mut self, l: usize, up: bool) {
        self.links[l].up = up;
    }

    /// Times of events on `side` matching `f`.
    pub fn event_times(&self, side: usize, f: impl Fn(&Event) -> bool) -> Vec<Instant> {
        self.events[side].iter().filter(|(_, e)| f(e)).map(|(t, _)| *t).collect()
    }

    /// Last delivery to `side` over link `l` at or before `t`.
    pub fn last_delivery(&self, side: usize, l: usize, t: Instant) -> Option<Instant> {
        self.delivered.iter().rev().find(|d| d.1 == side && d.2 == l && d.0 <= t).map(|d| d.0)
    }
}
