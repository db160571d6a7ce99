//! The CMT retransmission policies (Iyengar et al., ICON 2004) in whole associations: a
//! scripted loss is retransmitted where each policy says. Five destinations with fixed
//! windows make the policies disagree; new data goes to destination 0 (the primary), so
//! every loss happens there.
#![allow(clippy::unwrap_used)]

mod harness;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use harness::{addr, ms, Harness, CLIENT, SERVER};
use sctp::cmt::RetransmitConfig;
use sctp::congestion::{AckInfo, CongestionState, Controller, GroupView};
use sctp::wire::{Chunk, HeaderView};
use sctp::{Config, CongestionConfig, PathId, Plugin};
use simtime::Duration;

const MTU: u32 = 1500;
const TSN0: u32 = 1000;
/// Messages the client sends (one DATA chunk each).
const MESSAGES: u64 = 100;

/// One destination's fixed windows, in MTUs, and the loss rate the driver declares.
#[derive(Clone, Copy, Debug)]
struct Dest {
    cwnd: u32,
    ssthresh: u32,
    /// cwnd after a fast retransmit (none: unchanged).
    cwnd_after_loss: Option<u32>,
    loss: f64,
}

const fn dest(cwnd: u32, ssthresh: u32, loss: f64) -> Dest {
    Dest { cwnd, ssthresh, cwnd_after_loss: None, loss }
}

/// Windows that never move, so the policies' inputs are known exactly.
#[derive(Debug)]
struct Fixed(Dest);

impl Controller for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn init(&mut self, s: &mut CongestionState) {
        s.cwnd = self.0.cwnd * MTU;
        s.ssthresh = self.0.ssthresh * MTU;
    }
    fn on_ack(&mut self, _: &mut CongestionState, _: &AckInfo, _: &GroupView) {}
    fn on_fast_retransmit(&mut self, s: &mut CongestionState, _: &GroupView) {
        if let Some(c) = self.0.cwnd_after_loss {
            s.cwnd = c * MTU;
        }
    }
}

/// Controllers for the destinations in the order the association creates them.
fn fixed(dests: Vec<Dest>) -> CongestionConfig {
    let next = AtomicUsize::new(0);
    CongestionConfig::Custom(Plugin::new("fixed", move || -> Box<dyn Controller> {
        let i = next.fetch_add(1, Ordering::Relaxed) % dests.len();
        Box::new(Fixed(dests[i]))
    }))
}

/// Destinations on which the policies disagree: 0 carries the data; 1 comes next in §6.4
/// order; 2 has the largest cwnd, 3 the largest ssthresh and 4 the lowest loss rate.
fn disagreeing() -> Vec<Dest> {
    vec![dest(4, 4, 0.05), dest(2, 2, 0.05), dest(30, 8, 0.05), dest(8, 30, 0.05), dest(8, 8, 0.01)]
}

/// Where the retransmissions went: per destination, (fast, timeout) chunks.
type Retransmissions = Vec<(u64, u64)>;

/// The client sends `MESSAGES` 1,400-byte messages over five 10 ms paths with `dests`'
/// windows and the `policy`; the first transmission of each TSN offset in `lose` is lost.
/// Offset 50 is followed by more data (a fast retransmit), the last one is not (a T3-rtx
/// expiry).
fn run(policy: RetransmitConfig, dests: Vec<Dest>, lose: &[u32], seed: u64) -> (Harness, Retransmissions) {
    let client =
        Config { congestion: fixed(dests.clone()), retransmit: policy, initial_tsn: Some(TSN0), ..Config::default() };
    let mut h = Harness::new(client, Config::default(), dests.len(), ms(10), seed);
    h.connect();
    // Every destination confirmed (§5.4) before data flows.
    h.run_for(ms(200));
    for (i, d) in dests.iter().enumerate() {
        let p = h.assoc(CLIENT).set_loss_rate_hint(addr(SERVER, i), d.loss);
        assert_eq!(p, Some(PathId::new(i as u32)));
        let path = &h.assoc_ref(CLIENT).paths()[PathId::new(i as u32)];
        assert!(path.confirmed);
        assert_eq!((path.cc.cwnd, path.cc.ssthresh), (d.cwnd * MTU, d.ssthresh * MTU), "destination {i}");
    }
    let lost = Arc::new(Mutex::new(lose.iter().map(|o| TSN0 + o).collect::<Vec<u32>>()));
    let pending = Arc::clone(&lost);
    h.mangle = Some(Box::new(move |bytes: &mut Vec<u8>| {
        let Ok(header) = HeaderView::new_checked(bytes) else { return };
        let tsns: Vec<u32> = header
            .chunks()
            .flatten()
            .filter_map(|c| match Chunk::parse(&c) {
                Ok(Chunk::Data(d)) => Some(d.tsn),
                _ => None,
            })
            .collect();
        let mut pending = pending.lock().unwrap();
        if tsns.iter().any(|t| pending.contains(t)) {
            pending.retain(|t| !tsns.contains(t));
            // A wrong checksum: the receiver discards the packet (RFC 9260 §6.8).
            let last = bytes.len() - 1;
            bytes[last] ^= 0xff;
        }
    }));
    h.apps[CLIENT] = harness::App { to_send: MESSAGES * 1400, msg_size: 1400, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(10));
    assert!(lost.lock().unwrap().is_empty(), "every scripted loss happened");
    assert_eq!(h.apps[SERVER].received_bytes, MESSAGES * 1400);
    let rtx = h
        .assoc_ref(CLIENT)
        .paths()
        .values()
        .map(|p| (p.stats.fast_retransmissions, p.stats.timeout_retransmissions))
        .collect();
    (h, rtx)
}

/// The destination of the one fast and the one timeout retransmission.
fn destinations(rtx: &Retransmissions) -> (usize, usize) {
    assert_eq!(rtx.iter().map(|r| r.0).sum::<u64>(), 1, "{rtx:?}");
    assert_eq!(rtx.iter().map(|r| r.1).sum::<u64>(), 1, "{rtx:?}");
    (rtx.iter().position(|r| r.0 == 1).unwrap(), rtx.iter().position(|r| r.1 == 1).unwrap())
}

#[test]
fn each_policy_sends_the_retransmissions_where_it_says() {
    let lose = [50, MESSAGES as u32 - 1];
    let cases = [
        // RFC 9260 §6.4: fast retransmission where it was sent, a timeout to the next.
        (RetransmitConfig::Alternate, (0, 1)),
        (RetransmitConfig::Same, (0, 0)),
        (RetransmitConfig::Cwnd, (2, 2)),
        (RetransmitConfig::Ssthresh, (3, 3)),
        (RetransmitConfig::LossRate, (4, 4)),
    ];
    for (policy, want) in cases {
        let name = policy.name();
        let (_, rtx) = run(policy, disagreeing(), &lose, 7);
        assert_eq!(destinations(&rtx), want, "{name}: {rtx:?}");
    }
}

#[test]
fn asap_sends_a_retransmission_to_the_destination_with_room() {
    // After the loss destination 0 has no window left; of the others only `room` has any
    // (a window of 0 never has room).
    for room in [2, 4] {
        let mut dests = vec![dest(0, 4, 0.0); 5];
        dests[0] = Dest { cwnd: 4, cwnd_after_loss: Some(1), ..dests[0] };
        dests[room].cwnd = 2;
        let (_, rtx) = run(RetransmitConfig::Asap, dests.clone(), &[50], 7);
        let fast: Vec<u64> = rtx.iter().map(|r| r.0).collect();
        let mut want = vec![0; 5];
        want[room] = 1;
        assert_eq!(fast, want, "room on {room}");
        // The default keeps it on destination 0, which waits for room.
        let (_, rtx) = run(RetransmitConfig::Alternate, dests, &[50], 7);
        assert_eq!(rtx[0].0, 1);
    }
}

#[test]
fn ties_are_broken_by_the_association_seed() {
    // Destinations 2 and 3 have the same, largest, cwnd.
    let mut dests = disagreeing();
    dests[3].cwnd = dests[2].cwnd;
    let mut seen = Vec::new();
    for seed in 1..=8 {
        let (_, rtx) = run(RetransmitConfig::Cwnd, dests.clone(), &[50], seed);
        let at = rtx.iter().position(|r| r.0 == 1).unwrap();
        assert!(at == 2 || at == 3, "seed {seed}: {rtx:?}");
        // The same seed, the same choice.
        let (_, again) = run(RetransmitConfig::Cwnd, dests.clone(), &[50], seed);
        assert_eq!(again, rtx, "seed {seed}");
        seen.push(at);
    }
    assert!(seen.contains(&2) && seen.contains(&3), "{seen:?}");
}

/// CMT over two 10 Mbit/s paths, the second losing 2 % of the client's packets; per
/// destination, (fast, timeout) retransmitted chunks.
fn cmt_over_a_lossy_path(policy: RetransmitConfig) -> Retransmissions {
    let client = Config { retransmit: policy, ..Config::default() }.with_cmt();
    let mut h = Harness::new(client, Config::default().with_cmt(), 2, ms(10), 5);
    for l in &mut h.links {
        l.rate_bps = 10_000_000;
    }
    h.links[1].loss = 0.02;
    h.connect();
    h.run_for(ms(200));
    h.assoc(CLIENT).set_loss_rate_hint(addr(SERVER, 0), 0.0);
    h.assoc(CLIENT).set_loss_rate_hint(addr(SERVER, 1), 0.02);
    h.apps[CLIENT] = harness::App { to_send: 3_000_000, msg_size: 1400, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(20));
    assert_eq!(h.apps[SERVER].received_bytes, 3_000_000);
    let paths = h.assoc_ref(CLIENT).paths();
    assert!(paths.values().all(|p| p.stats.data_chunks_sent > 200), "CMT uses both paths");
    paths.values().map(|p| (p.stats.fast_retransmissions, p.stats.timeout_retransmissions)).collect()
}

#[test]
fn under_cmt_the_policy_decides_where_losses_on_one_path_are_repaired() {
    // Only path 1 loses packets. RTX-SAME repairs them there; RTX-LOSSRATE on path 0.
    let same = cmt_over_a_lossy_path(RetransmitConfig::Same);
    assert_eq!(same[0], (0, 0), "{same:?}");
    assert!(same[1].0 > 5, "{same:?}");
    let lossrate = cmt_over_a_lossy_path(RetransmitConfig::LossRate);
    assert_eq!(lossrate[1], (0, 0), "{lossrate:?}");
    assert!(lossrate[0].0 > 5, "{lossrate:?}");
}
