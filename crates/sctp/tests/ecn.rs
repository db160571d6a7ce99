//! ECN in SCTP (RFC 9260 Appendix A): the ECN Capable parameter in INIT and INIT ACK, ECT(0)
//! on packets of new DATA only when both ends agree, ECNE in every SACK-bearing packet from a
//! CE mark until a CWR covers it, one cwnd reduction per window of the destination the marked
//! data went to (per destination under CMT), and a marking bottleneck that replaces drops by
//! marks.
#![allow(clippy::unwrap_used)]

mod harness;

use harness::{ms, Harness, CLIENT, SERVER};
use sctp::wire::{Chunk, ChunkType, HeaderView, Parameter};
use sctp::{Config, Event, PathId};
use simtime::Instant;

const P0: PathId = PathId::new(0);
const P1: PathId = PathId::new(1);
const ECT0: u8 = 2;

fn ecn(on: bool) -> Config {
    Config { ecn: on, ..Config::default() }
}

/// The chunks of a packet.
fn chunks(packet: &[u8]) -> Vec<Chunk> {
    HeaderView::new_checked(packet).unwrap().chunks().map(|c| Chunk::parse(&c.unwrap()).unwrap()).collect()
}

/// Client uploads `bytes` in 1,400-byte messages over `paths` paths of `delay` one way.
fn upload(client: Config, server: Config, paths: usize, delay: u64, bytes: u64) -> Harness {
    let mut h = Harness::new(client, server, paths, ms(delay), 3);
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: bytes, msg_size: 1400, ..Default::default() };
    h.apps[SERVER].reading = true;
    h
}

/// (time, cwnd after) of the client's ECN reductions on `path`, with the cwnd just before
/// each (sampled every millisecond while running).
fn run_sampling(h: &mut Harness, secs: u64, path: PathId) -> Vec<(Instant, u32, u32)> {
    let mut cwnd = Vec::new();
    while h.now < Instant::ZERO + simtime::Duration::from_secs(secs) {
        h.run_for(ms(1));
        if let Some(p) = h.eps[CLIENT].associations().next().and_then(|(_, a)| a.paths().get(path).map(|p| p.cc.cwnd)) {
            cwnd.push((h.now, p));
        }
    }
    h.events[CLIENT]
        .iter()
        .filter_map(|&(t, ref e)| match *e {
            Event::EcnReduction { path: p, cwnd: after, .. } if p == path => {
                let before = cwnd.iter().take_while(|c| c.0 < t).last().map_or(0, |c| c.1);
                Some((t, before, after))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn ecn_is_used_only_when_both_ends_list_the_parameter() {
    for (c, s) in [(true, true), (true, false), (false, true), (false, false)] {
        let mut h = upload(ecn(c), ecn(s), 1, 10, 200_000);
        h.run_for(ms(3000));
        assert_eq!(h.apps[SERVER].received_bytes, 200_000);
        let both = c && s;
        assert_eq!(h.assoc_ref(CLIENT).ecn_negotiated(), both, "{c} {s}");
        assert_eq!(h.assoc_ref(SERVER).ecn_negotiated(), both, "{c} {s}");
        let offers = |ty: ChunkType| {
            h.sent.iter().any(|(.., p)| {
                chunks(p).iter().any(|ch| match ch {
                    Chunk::Init(i) | Chunk::InitAck(i) if ch.chunk_type() == ty => {
                        i.params.contains(&Parameter::EcnCapable)
                    }
                    _ => false,
                })
            })
        };
        assert_eq!(offers(ChunkType::INIT), c, "INIT lists ECN Capable when configured");
        assert_eq!(offers(ChunkType::INIT_ACK), both, "INIT ACK echoes it only when both support it");
        for ((_, side, _, p), &e) in h.sent.iter().zip(&h.sent_ecn) {
            let data = chunks(p).iter().any(|ch| matches!(ch, Chunk::Data(_)));
            let expect = if both && *side == CLIENT && data { ECT0 } else { 0 };
            assert_eq!(e, expect, "{c} {s}: {:?}", chunks(p).iter().map(|c| c.chunk_type()).collect::<Vec<_>>());
        }
    }
}

#[test]
fn one_mark_is_echoed_until_cwr_and_reduces_the_window_once() {
    let mut h = upload(ecn(true), ecn(true), 1, 10, 3_000_000);
    h.links[0].rate_bps = 100_000_000;
    h.mark_nth.push((CLIENT, 40));
    let r = run_sampling(&mut h, 5, P0);
    assert_eq!(h.apps[SERVER].received_bytes, 3_000_000);
    assert_eq!(h.marked[CLIENT], 1);
    let (c, s) = (h.assoc_ref(CLIENT), h.assoc_ref(SERVER));
    assert_eq!(s.stats().ce_received, 1);
    assert!(s.stats().ecne_sent >= 1);
    assert!(c.stats().cwr_sent >= 1);
    let p = c.paths().get(P0).unwrap();
    assert_eq!(p.stats.ecn_reductions, 1);
    // No retransmission for a mark (RFC 3168 §6.1.2).
    assert_eq!((p.stats.fast_retransmissions, p.stats.timeout_retransmissions), (0, 0));
    // §7.2.4's reduction: ssthresh = max(cwnd/2, 4*MTU), cwnd = ssthresh; the window is
    // sampled every millisecond and grows in slow start, so "before" may be a few MTU short.
    assert_eq!(r.len(), 1);
    let (_, before, after) = r[0];
    assert!(2 * after >= before && 2 * after <= before + 4 * 1500, "cwnd {before} -> {after}");
    assert_eq!(p.cc.ssthresh, after);
    // The ECNE rides in the server's SACK packets from the mark until the CWR arrives, and
    // only then: every server packet with a SACK in between has one.
    let server: Vec<Vec<Chunk>> = h.sent.iter().filter(|s| s.1 == SERVER).map(|s| chunks(&s.3)).collect();
    let with_sack: Vec<bool> = server
        .iter()
        .filter(|cs| cs.iter().any(|c| matches!(c, Chunk::Sack(_))))
        .map(|cs| cs.iter().any(|c| matches!(c, Chunk::Ecne { .. })))
        .collect();
    let first = with_sack.iter().position(|&e| e).unwrap();
    let last = with_sack.iter().rposition(|&e| e).unwrap();
    assert!(with_sack[first..=last].iter().all(|&e| e), "ECNE in every SACK packet until CWR");
    assert_eq!(s.stats().ecne_sent as usize, last - first + 1);
    assert!(last + 10 < with_sack.len(), "the CWR stopped the echo; SACKs went on without ECNE");
    let cwr_sent_at =
        h.sent.iter().find(|s| s.1 == CLIENT && chunks(&s.3).iter().any(|c| matches!(c, Chunk::Cwr { .. }))).unwrap().0;
    let last_ecne_at = h
        .sent
        .iter()
        .rfind(|s| s.1 == SERVER && chunks(&s.3).iter().any(|c| matches!(c, Chunk::Ecne { .. })))
        .unwrap()
        .0;
    // One way is 10 ms (plus 0.12 ms on the wire): no ECNE once the CWR has arrived.
    assert!(last_ecne_at <= cwr_sent_at + ms(11), "last ECNE {last_ecne_at}, CWR sent {cwr_sent_at}");
    // The reported TSN is that of the marked packet's DATA, and the CWR answers it.
    let marked_tsn = chunks(&h.sent.iter().filter(|s| s.1 == CLIENT).nth(39).unwrap().3)
        .iter()
        .find_map(|c| if let Chunk::Data(d) = c { Some(d.tsn) } else { None })
        .unwrap();
    let ecne_tsn =
        server.iter().flatten().find_map(|c| if let Chunk::Ecne { lowest_tsn } = c { Some(*lowest_tsn) } else { None });
    assert_eq!(ecne_tsn, Some(marked_tsn));
    let cwr = h.sent.iter().filter(|s| s.1 == CLIENT).flat_map(|s| chunks(&s.3)).find_map(|c| match c {
        Chunk::Cwr { lowest_tsn } => Some(lowest_tsn),
        _ => None,
    });
    assert_eq!(cwr, Some(marked_tsn));
}

/// 10 Mbit/s, `delay` ms one way, marks (or drops of Not-ECT packets) from 20 waiting
/// packets, 100 at most.
fn marking_bottleneck(client_ecn: bool) -> (Harness, Vec<(Instant, u32, u32)>) {
    let mut h = upload(ecn(client_ecn), ecn(true), 1, 20, 8_000_000);
    h.links[0].rate_bps = 10_000_000;
    h.links[0].queue_limit = 100;
    h.links[0].mark_threshold = Some(20);
    let r = run_sampling(&mut h, 15, P0);
    assert_eq!(h.apps[SERVER].received_bytes, 8_000_000);
    (h, r)
}

#[test]
fn a_marking_bottleneck_slows_an_ecn_association_without_losses() {
    let (h, r) = marking_bottleneck(true);
    let p = h.assoc_ref(CLIENT).paths().get(P0).unwrap();
    assert_eq!(h.queue_drops[CLIENT], 0);
    assert_eq!((p.stats.fast_retransmissions, p.stats.timeout_retransmissions, p.stats.t3_timeouts), (0, 0, 0));
    assert!(h.marked[CLIENT] > 10, "{} marks", h.marked[CLIENT]);
    assert!(p.stats.ecn_reductions >= 5 && p.stats.ecn_reductions < h.marked[CLIENT], "{:?}", p.stats);
    assert_eq!(h.assoc_ref(SERVER).stats().ce_received, h.marked[CLIENT]);
    // Each reduction halves the window (down to 4 MTU), at most once per round trip.
    assert_eq!(r.len() as u64, p.stats.ecn_reductions);
    for &(t, before, after) in &r {
        assert_eq!(after, (before / 2).max(6000), "at {t}");
    }
    for w in r.windows(2) {
        assert!(w[1].0 - w[0].0 >= ms(40), "{} then {}", w[0].0, w[1].0);
    }
}

#[test]
fn without_ecn_the_same_bottleneck_drops() {
    let (h, r) = marking_bottleneck(false);
    let p = h.assoc_ref(CLIENT).paths().get(P0).unwrap();
    assert!(r.is_empty() && h.marked[CLIENT] == 0);
    assert!(h.queue_drops[CLIENT] > 0);
    assert!(p.stats.fast_retransmissions > 0);
}

#[test]
fn under_cmt_only_the_marked_destination_slows_down() {
    let config = Config { ecn: true, ..Config::default().with_cmt() };
    let mut h = upload(config.clone(), config, 2, 20, 6_000_000);
    for l in &mut h.links {
        l.rate_bps = 10_000_000;
    }
    // Only path 1's queue marks (path 0's never overflows: no limit).
    h.links[1].queue_limit = 100;
    h.links[1].mark_threshold = Some(10);
    let r1 = run_sampling(&mut h, 15, P1);
    assert_eq!(h.apps[SERVER].received_bytes, 6_000_000);
    let c = h.assoc_ref(CLIENT);
    let (p0, p1) = (c.paths().get(P0).unwrap(), c.paths().get(P1).unwrap());
    assert_eq!(h.queue_drops[CLIENT], 0);
    assert!(p1.stats.ecn_reductions >= 2 && h.marked[CLIENT] > p1.stats.ecn_reductions, "{:?}", p1.stats);
    assert_eq!(p0.stats.ecn_reductions, 0, "path 0 was never marked");
    assert_eq!(r1.len() as u64, p1.stats.ecn_reductions);
    assert!(p0.stats.bytes_sent > 0 && p1.stats.bytes_sent > 0);
}
