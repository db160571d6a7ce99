//! ECN (RFC 3168 §6.1) in the two-endpoint harness: negotiation, which segments are
//! ECN-capable, the receiver's echo until CWR, one window reduction per window of data, and a
//! marking bottleneck that replaces drops by marks.
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use common::{config, Dir, Harness, Path};
use tcp::wire::{Ecn, Flags};
use tcp::{Config, Duration, Event, Instant};

const MSS_PAYLOAD: u64 = 1448;
const ALGORITHMS: [&str; 3] = ["newreno", "sack", "cubic"];

fn secs(s: u64) -> Instant {
    Instant::ZERO + Duration::from_secs(s)
}

fn ecn(cc: &str, on: bool) -> Config {
    Config { ecn: on, ..config(cc) }
}

/// (time, cwnd after) of A's ECN reductions, with A's window just before each.
fn reductions(h: &Harness) -> Vec<(Instant, u64, u64)> {
    h.events_a
        .iter()
        .filter_map(|&(t, e)| match e {
            Event::EcnReduction { cwnd, .. } => {
                let before = h.cwnd_a.iter().take_while(|c| c.0 < t).last().map_or(0, |c| c.1);
                Some((t, before, cwnd))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn ecn_is_used_only_when_both_ends_offer_it() {
    for (a_on, b_on) in [(true, true), (true, false), (false, true), (false, false)] {
        let mut h = Harness::new(ecn("newreno", a_on), ecn("newreno", b_on), Path::default(), 1).transfer(300_000);
        h.run(secs(10));
        assert_eq!(h.received.len(), 300_000);
        let both = a_on && b_on;
        assert_eq!((h.a.ecn_negotiated(), h.b.ecn_negotiated()), (both, both), "{a_on} {b_on}");
        // RFC 3168 §6.1.1: ECN-setup SYN (ECE + CWR), ECN-setup SYN-ACK (ECE only).
        let syn = if a_on { Flags::SYN | Flags::ECE | Flags::CWR } else { Flags::SYN };
        let syn_ack = if both { Flags::SYN | Flags::ACK | Flags::ECE } else { Flags::SYN | Flags::ACK };
        assert_eq!((h.log[0].2, h.log[1].2), (syn, syn_ack), "{a_on} {b_on}");
        for (l, &e) in h.log.iter().zip(&h.log_ecn) {
            // §6.1.4: data ECT(0) only when negotiated; SYNs, pure ACKs and FINs Not-ECT.
            let expect = if both && l.1 == Dir::AtoB && l.4 > 0 { Ecn::Ect0 } else { Ecn::NotEct };
            assert_eq!(e, expect, "{a_on} {b_on}: {l:?}");
            if l.2 & Flags::SYN == 0 {
                assert_eq!(l.2 & (Flags::ECE | Flags::CWR), 0, "no marks, no echo: {l:?}");
            }
        }
    }
}

#[test]
fn one_mark_is_echoed_until_cwr_and_halves_the_window_once() {
    for cc in ALGORITHMS {
        let mark_at = 1 + 150 * MSS_PAYLOAD;
        let mut h = Harness::new(ecn(cc, true), ecn(cc, true), Path::default(), 2).transfer(3_000_000);
        let mut pending = true;
        h.marker = Some(Box::new(move |s| {
            let hit = pending && s.dir == Dir::AtoB && s.offset == mark_at;
            pending &= !hit;
            hit
        }));
        h.run(secs(30));
        assert_eq!(h.received.len(), 3_000_000, "{cc}");
        assert!(h.data_ok());
        let (a, b) = (h.a.stats(), h.b.stats());
        assert_eq!(h.marked[0], 1, "{cc}");
        assert_eq!((b.ce_received, a.ecn_reductions, a.cwr_sent), (1, 1, 1), "{cc}");
        // §6.1.2: no retransmission for a mark.
        assert_eq!((a.retransmissions, a.fast_retransmits, a.timeouts), (0, 0, 0), "{cc}");
        // §6.1.3: B's ACKs carry ECE from the mark until A's CWR has arrived, and only then.
        let b_acks: Vec<_> = h.log.iter().filter(|l| l.1 == Dir::BtoA && l.2 & Flags::SYN == 0).collect();
        let first = b_acks.iter().position(|l| l.2 & Flags::ECE != 0).unwrap();
        let last = b_acks.iter().rposition(|l| l.2 & Flags::ECE != 0).unwrap();
        assert_eq!(b.ece_sent as usize, last - first + 1, "{cc}: ECE on every ACK in between");
        assert!(last > first, "{cc}: echoed on more than one ACK");
        let cwr = h.log.iter().find(|l| l.2 & Flags::CWR != 0 && l.2 & Flags::SYN == 0).unwrap();
        assert!(cwr.1 == Dir::AtoB && cwr.4 > 0, "{cc}: CWR rides on new data");
        let mark_sent = h.log.iter().find(|l| l.1 == Dir::AtoB && l.3 == mark_at).unwrap().0;
        assert!(b_acks[first].0 > mark_sent, "{cc}");
        // The last ECE leaves before the CWR segment can have arrived (one-way 10 ms), the
        // first ACK after it has none.
        assert!(b_acks[last].0 < cwr.0 + Duration::from_millis(11), "{cc}");
        assert!(b_acks[last + 1].0 >= cwr.0 + Duration::from_millis(10), "{cc}");
        // The window: halved (NewReno, RFC 5681 eq. 4) or times 0.7 (CUBIC, RFC 9438 §4.6).
        let r = reductions(&h);
        assert_eq!(r.len(), 1);
        let ratio = r[0].2 as f64 / r[0].1 as f64;
        let range = if cc == "cubic" { 0.65..=0.72 } else { 0.42..=0.52 };
        assert!(range.contains(&ratio), "{cc}: cwnd {} -> {} ({ratio})", r[0].1, r[0].2);
    }
}

#[test]
fn echo_during_fast_recovery_is_not_a_second_reduction() {
    for cc in ALGORITHMS {
        let (lost, marked) = (1 + 200 * MSS_PAYLOAD, 1 + 203 * MSS_PAYLOAD);
        let mut h = Harness::new(ecn(cc, true), ecn(cc, true), Path::default(), 3).transfer(3_000_000);
        let mut drop_once = true;
        h.filter = Some(Box::new(move |s| {
            let hit = drop_once && s.dir == Dir::AtoB && s.offset == lost;
            drop_once &= !hit;
            hit
        }));
        let mut mark_once = true;
        h.marker = Some(Box::new(move |s| {
            let hit = mark_once && s.dir == Dir::AtoB && s.offset == marked;
            mark_once &= !hit;
            hit
        }));
        h.run(secs(30));
        assert_eq!(h.received.len(), 3_000_000, "{cc}");
        let a = h.a.stats();
        assert_eq!(h.b.stats().ce_received, 1, "{cc}");
        assert_eq!((a.fast_retransmits, a.retransmissions), (1, 1), "{cc}");
        assert_eq!(a.ecn_reductions, 0, "{cc}: the loss already reduced this window");
        assert_eq!(a.cwr_sent, 1, "{cc}: CWR after the loss reduction");
    }
}

/// 10 Mbit/s, 20 ms one way, 100 packets of buffer, CE marks (or drops of Not-ECT
/// segments) from 20 queued packets on.
fn marking_bottleneck(cc: &str, on: bool) -> Harness {
    let path = Path {
        rate_bps: 10_000_000,
        delay: Duration::from_millis(20),
        queue_limit: 100,
        mark_threshold: Some(20),
        ..Path::default()
    };
    let mut h = Harness::new(ecn(cc, on), ecn(cc, true), path, 4).transfer(10_000_000);
    h.run(secs(100));
    assert_eq!(h.received.len(), 10_000_000, "{cc} ecn={on}");
    assert!(h.data_ok());
    h
}

#[test]
fn a_marking_bottleneck_slows_an_ecn_flow_without_losses() {
    for cc in ALGORITHMS {
        let h = marking_bottleneck(cc, true);
        let a = h.a.stats();
        assert_eq!((h.dropped[0], a.retransmissions, a.timeouts), (0, 0, 0), "{cc}: {a:?}");
        assert!(h.marked[0] > 0 && a.ecn_reductions >= 5, "{cc}: {} marks, {a:?}", h.marked[0]);
        assert_eq!(h.b.stats().ce_received, h.marked[0], "{cc}");
        assert!(a.cwr_sent >= a.ecn_reductions, "{cc}");
        let done = h.events_b.iter().find(|e| e.1 == Event::PeerClosed).unwrap().0.as_secs_f64();
        let goodput = 10_000_000.0 * 8.0 / done;
        assert!(goodput > 0.85 * 10e6, "{cc}: {goodput}");
        // Each reduction cuts the window (halves it for NewReno, 0.7 for CUBIC), and they
        // come at most once per round trip (40 ms of propagation).
        let r = reductions(&h);
        assert_eq!(r.len() as u64, a.ecn_reductions);
        for &(t, before, after) in &r {
            let ratio = after as f64 / before as f64;
            let max = if cc == "cubic" { 0.75 } else { 0.56 };
            assert!(ratio <= max, "{cc} at {t}: {before} -> {after}");
        }
        for w in r.windows(2) {
            assert!(w[1].0 - w[0].0 >= Duration::from_millis(40), "{cc}: {} then {}", w[0].0, w[1].0);
        }
        assert!(a.ecn_reductions < h.marked[0], "{cc}: several marks per window, one reaction");
    }
}

#[test]
fn without_ecn_the_same_bottleneck_drops() {
    for cc in ALGORITHMS {
        let h = marking_bottleneck(cc, false);
        let a = h.a.stats();
        assert!(!h.a.ecn_negotiated());
        assert_eq!((h.marked[0], a.ecn_reductions), (0, 0), "{cc}");
        assert!(h.dropped[0] > 0 && a.retransmissions > 0, "{cc}: {a:?}");
    }
}
