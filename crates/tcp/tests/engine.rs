//! Engine tests in the two-endpoint harness: handshake, transfer, loss recovery, RTO backoff,
//! close, zero window, resets.
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use common::{config, Dir, Harness, Path};
use tcp::connection::LossKind;
use tcp::wire::Flags;
use tcp::{Config, Duration, Event, Instant, State};

const MSS_PAYLOAD: u64 = 1448; // 1460 - 12 bytes of timestamps option

fn secs(s: u64) -> Instant {
    Instant::ZERO + Duration::from_secs(s)
}

#[test]
fn handshake_negotiates_options_and_closes_cleanly() {
    let mut h = Harness::new(Config::default(), Config::default(), Path::default(), 1).transfer(0);
    h.run(secs(10));
    // SYN, SYN-ACK, ACK; then FIN, ACK+FIN, ACK (B's FIN may carry the ACK of A's FIN).
    let first: Vec<_> = h.log.iter().take(3).map(|l| (l.1, l.2)).collect();
    assert_eq!(
        first,
        vec![(Dir::AtoB, Flags::SYN), (Dir::BtoA, Flags::SYN | Flags::ACK), (Dir::AtoB, Flags::FIN | Flags::ACK)]
    );
    assert_eq!(h.a.negotiated(), (true, true, 5, 5)); // 1 MiB buffer -> shift 5
    assert_eq!(h.b.negotiated(), (true, true, 5, 5));
    assert_eq!(h.a.smss(), MSS_PAYLOAD);
    assert_eq!(h.a.state(), State::Closed, "A went through TIME-WAIT");
    assert_eq!(h.b.state(), State::Closed);
    assert!(h.events_a.iter().any(|e| e.1 == Event::Connected));
    assert!(h.events_b.iter().any(|e| e.1 == Event::PeerClosed));
    let time_wait =
        h.events_a.iter().find(|e| matches!(e.1, Event::StateChanged { to: State::TimeWait, .. })).unwrap().0;
    let closed = h.events_a.iter().find(|e| e.1 == Event::Closed).unwrap().0;
    assert_eq!(closed - time_wait, Duration::from_secs(1));
    // The RTT of the handshake is measured: 2 x 10 ms plus serialisation.
    let srtt = h.a.srtt().unwrap();
    assert!(srtt >= Duration::from_millis(20) && srtt < Duration::from_millis(21), "{srtt}");
}

#[test]
fn options_off_fall_back_to_rfc_defaults() {
    let plain =
        Config { sack: false, timestamps: false, window_scaling: false, recv_buffer: 65535, ..Config::default() };
    let mut h = Harness::new(Config::default(), plain, Path::default(), 2).transfer(200_000);
    h.run(secs(30));
    assert_eq!(h.a.negotiated(), (false, false, 0, 0));
    assert_eq!(h.a.smss(), 1460);
    assert_eq!(h.received.len(), 200_000);
    assert!(h.data_ok());
}

#[test]
fn bulk_transfer_is_intact_and_uses_the_initial_window() {
    let mut h = Harness::new(Config::default(), Config::default(), Path::default(), 3).transfer(2_000_000);
    h.run(secs(60));
    assert_eq!(h.received.len(), 2_000_000);
    assert!(h.data_ok());
    assert_eq!(h.a.stats().retransmissions, 0);
    // RFC 6928: 10 segments in the first flight (14600 / 1448 -> min(10 MSS, 14600 B) = 10).
    let first_rtt = h.data_segments().iter().filter(|s| s.0 < Instant::ZERO + Duration::from_millis(25)).count();
    assert_eq!(first_rtt, 10);
    // Delayed ACKs: about one pure ACK per two data segments.
    let data = h.a.stats().segments_sent as f64;
    let acks = h.b.stats().acks_sent as f64;
    assert!(acks > 0.4 * data && acks < 0.65 * data, "{acks} acks for {data} segments");
}

fn drop_offsets(offsets: Vec<u64>) -> common::Filter {
    let mut pending = offsets;
    Box::new(move |s| {
        if s.dir == Dir::AtoB && !s.repr.payload.is_empty() {
            if let Some(i) = pending.iter().position(|&o| o == s.offset) {
                pending.remove(i);
                return true;
            }
        }
        false
    })
}

fn with_losses(cc: &str, offsets: Vec<u64>) -> Harness {
    let mut h = Harness::new(config(cc), Config::default(), Path::default(), 4).transfer(3_000_000);
    h.filter = Some(drop_offsets(offsets));
    h.run(secs(60));
    assert_eq!(h.received.len(), 3_000_000, "{cc}");
    assert!(h.data_ok(), "{cc}");
    h
}

#[test]
fn single_loss_is_repaired_by_one_fast_retransmit() {
    for cc in ["newreno", "sack", "cubic"] {
        let h = with_losses(cc, vec![1 + 200 * MSS_PAYLOAD]);
        let s = h.a.stats();
        assert_eq!((s.fast_retransmits, s.timeouts, s.retransmissions), (1, 0, 1), "{cc}: {s:?}");
        let loss = h.events_a.iter().find_map(|e| match e.1 {
            Event::Loss { kind, cwnd, ssthresh } => Some((kind, cwnd, ssthresh)),
            _ => None,
        });
        let (kind, _, ssthresh) = loss.unwrap();
        assert_eq!(kind, LossKind::FastRetransmit);
        assert!(ssthresh > 2 * MSS_PAYLOAD, "{cc}");
    }
}

#[test]
fn several_losses_in_one_window_take_one_episode() {
    let lost: Vec<u64> = [300, 303, 307, 310].iter().map(|k| 1 + k * MSS_PAYLOAD).collect();
    for cc in ["newreno", "sack", "cubic"] {
        let h = with_losses(cc, lost.clone());
        let s = h.a.stats();
        assert_eq!(s.timeouts, 0, "{cc}: {s:?}");
        assert_eq!(s.fast_retransmits, 1, "{cc}: {s:?}");
        assert_eq!(s.retransmissions, 4, "{cc}: {s:?}");
    }
    // NewReno repairs one hole per round trip; SACK recovery repairs them all in the first.
    let rtx_span = |cc: &str| {
        let h = with_losses(cc, lost.clone());
        let segs = h.data_segments();
        let rtx: Vec<Instant> = lost.iter().map(|o| segs.iter().filter(|s| s.1 == *o).nth(1).unwrap().0).collect();
        *rtx.iter().max().unwrap() - *rtx.iter().min().unwrap()
    };
    assert!(rtx_span("newreno") >= Duration::from_millis(60), "{}", rtx_span("newreno"));
    assert!(rtx_span("sack") < Duration::from_millis(20), "{}", rtx_span("sack"));
}

#[test]
fn retransmission_timer_backs_off_exponentially() {
    let mut h = Harness::new(Config::default(), Config::default(), Path::default(), 5).transfer(20_000_000);
    // A black hole from 0.5 s to 20 s in both directions.
    h.filter = Some(Box::new(|s| {
        s.now >= Instant::ZERO + Duration::from_millis(500) && s.now < Instant::ZERO + Duration::from_secs(20)
    }));
    h.run(secs(120));
    assert_eq!(h.received.len(), 20_000_000);
    assert!(h.data_ok());
    let timeouts: Vec<Instant> =
        h.events_a.iter().filter(|e| matches!(e.1, Event::Loss { kind: LossKind::Timeout, .. })).map(|e| e.0).collect();
    assert!(timeouts.len() >= 4, "{timeouts:?}");
    let gaps: Vec<f64> = timeouts.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
    for g in gaps.windows(2) {
        assert!((g[1] / g[0] - 2.0).abs() < 1e-6, "{gaps:?}");
    }
    let s = h.a.stats();
    assert_eq!(s.timeouts, timeouts.len() as u64);
    // After a timeout the window restarts at one segment.
    let after = h.events_a.iter().find_map(|e| match e.1 {
        Event::Loss { kind: LossKind::Timeout, cwnd, .. } => Some(cwnd),
        _ => None,
    });
    assert_eq!(after, Some(MSS_PAYLOAD));
}

#[test]
fn lost_syn_is_retransmitted_after_the_initial_rto_with_a_one_segment_window() {
    let mut h = Harness::new(Config::default(), Config::default(), Path::default(), 6).transfer(100_000);
    h.filter = Some(Box::new(|s| s.index == 0 && s.dir == Dir::AtoB));
    h.run(secs(30));
    let syns: Vec<Instant> = h.log.iter().filter(|l| l.1 == Dir::AtoB && l.2 & Flags::SYN != 0).map(|l| l.0).collect();
    assert_eq!(syns, vec![Instant::ZERO, secs(1)]);
    assert_eq!(h.received.len(), 100_000);
    let first_flight = h.data_segments().iter().filter(|s| s.0 < secs(1) + Duration::from_millis(25)).count();
    assert_eq!(first_flight, 1, "RFC 5681: IW is one segment after a lost SYN");
}

#[test]
fn abort_after_max_retries_and_reset_reaches_the_peer() {
    let cfg = Config { max_retries: 3, ..Config::default() };
    let mut h = Harness::new(cfg, Config::default(), Path::default(), 7).transfer(100_000_000);
    h.filter = Some(Box::new(|s| {
        s.dir == Dir::AtoB && s.now >= Instant::ZERO + Duration::from_millis(100) && s.repr.flags.0 & Flags::RST == 0
    }));
    h.run(secs(100));
    assert!(h.events_a.iter().any(|e| e.1 == Event::TimedOut));
    assert_eq!(h.a.state(), State::Closed);
    assert!(h.events_b.iter().any(|e| e.1 == Event::Reset), "the RST got through");
    assert_eq!(h.b.state(), State::Closed);
}

#[test]
fn zero_window_stalls_and_probes_until_the_reader_returns() {
    let small = Config { recv_buffer: 20_000, ..Config::default() };
    let mut h = Harness::new(Config::default(), small, Path::default(), 8).transfer(200_000);
    h.read_from = secs(5);
    h.run(secs(60));
    assert_eq!(h.received.len(), 200_000);
    assert!(h.data_ok());
    assert_eq!(h.a.stats().timeouts, 0, "probes are not congestion timeouts");
    let probes = h.data_segments().iter().filter(|s| s.2 == 1).count();
    assert!(probes >= 2, "{probes} one-byte probes");
}

#[test]
fn random_loss_transfers_intact_with_every_algorithm() {
    for cc in ["newreno", "sack", "cubic"] {
        for seed in 0..3 {
            let path = Path { loss: 0.02, ..Path::default() };
            let mut h = Harness::new(config(cc), Config::default(), path, 100 + seed).transfer(1_000_000);
            h.run(secs(600));
            assert_eq!(h.received.len(), 1_000_000, "{cc} seed {seed}");
            assert!(h.data_ok(), "{cc} seed {seed}");
            assert_eq!(h.a.state(), State::Closed, "{cc} seed {seed}");
        }
    }
}

#[test]
fn drop_tail_bottleneck_is_filled_and_recovered() {
    for cc in ["newreno", "sack", "cubic"] {
        let path = Path { rate_bps: 10_000_000, queue_limit: 20, delay: Duration::from_millis(20), ..Path::default() };
        let mut h = Harness::new(config(cc), Config::default(), path, 9).transfer(20_000_000);
        h.run(secs(100));
        assert_eq!(h.received.len(), 20_000_000, "{cc}");
        let done = h.events_b.iter().find(|e| e.1 == Event::PeerClosed).unwrap().0.as_secs_f64();
        let goodput = 20_000_000.0 * 8.0 / done;
        // Payload share of the wire rate: 1448 / (1448 + 52 + 20 IP) = 95.3 %.
        assert!(goodput > 0.85 * 10e6, "{cc}: {goodput}");
        assert!(h.dropped[0] > 0, "{cc}: the queue overflowed");
    }
}

#[test]
fn initial_window_is_configurable() {
    let cfg = Config { initial_window: Some(4), ..Config::default() };
    let mut h = Harness::new(cfg, Config::default(), Path::default(), 10).transfer(100_000);
    h.run(secs(10));
    let first_rtt = h.data_segments().iter().filter(|s| s.0 < Instant::ZERO + Duration::from_millis(25)).count();
    assert_eq!(first_rtt, 4);
    assert_eq!(h.received.len(), 100_000);
}

#[test]
fn after_a_timeout_in_sack_recovery_no_new_episode_starts_before_the_recovery_point() {
    // The first hole and the second are lost again when fast recovery repairs them, so the
    // retransmission timer expires. RFC 6675 §5.1: the SACK scoreboard may be kept, but no new
    // recovery episode may start until the cumulative ACK reaches RecoveryPoint (HighData at
    // the timeout); otherwise the first ACK after the timeout would start one and halve the
    // whole pre-timeout flight into the window, a burst out of slow start.
    let (x, y) = (1 + 300 * MSS_PAYLOAD, 1 + 310 * MSS_PAYLOAD);
    for cc in ["sack", "cubic"] {
        let h = with_losses(cc, vec![x, x, y, y]);
        let s = h.a.stats();
        assert_eq!((s.fast_retransmits, s.timeouts), (1, 1), "{cc}: {s:?}");
        let timeout = h
            .events_a
            .iter()
            .position(|e| matches!(e.1, Event::Loss { kind: LossKind::Timeout, .. }))
            .expect("a timeout");
        let late_fr =
            h.events_a[timeout..].iter().find(|e| matches!(e.1, Event::Loss { kind: LossKind::FastRetransmit, .. }));
        assert!(late_fr.is_none(), "{cc}: recovery restarted after the timeout: {late_fr:?}");
    }
}

/// Segments built in the buffers of received ones (`Connection::recycle`) are the same
/// segments: a lossy transfer in both ways sends the same log and delivers the same bytes.
#[test]
fn recycled_buffers_change_no_segment() {
    let run = |recycle: bool| {
        let path = Path { loss: 0.02, ..Path::default() };
        let mut h = Harness::new(Config::default(), Config::default(), path, 11).transfer(3_000_000);
        h.recycle = recycle;
        h.run(secs(120));
        assert!(h.data_ok());
        assert_eq!(h.received.len(), 3_000_000);
        (h.log.clone(), h.sent, h.dropped)
    };
    let (plain, recycled) = (run(false), run(true));
    assert!(plain.2[0] > 0, "the path lost segments");
    assert_eq!(plain, recycled);
}

/// Segments handed over in buffers of their own (`Connection::handle_segment_in`), whose
/// in-order data the receiver keeps there for the application to read, change nothing: a
/// lossy transfer sends the same log and delivers the same bytes, whether the reader keeps up
/// or starts late (kept bytes then move into the receive buffer behind later ones).
#[test]
fn handed_over_buffers_change_no_segment_and_no_byte() {
    for late in [false, true] {
        let run = |hand_over: bool| {
            let path = Path { loss: 0.02, ..Path::default() };
            let mut h = Harness::new(Config::default(), Config::default(), path, 11).transfer(3_000_000);
            h.recycle = true;
            h.hand_over = hand_over;
            if late {
                h.read_from = secs(2);
            }
            h.run(secs(120));
            assert!(h.data_ok(), "late reader {late}, handed over {hand_over}: bytes differ");
            assert_eq!(h.received.len(), 3_000_000);
            (h.log.clone(), h.sent, h.dropped)
        };
        let (copied, kept) = (run(false), run(true));
        assert!(copied.2[0] > 0, "the path lost segments");
        assert_eq!(copied, kept, "late reader {late}");
    }
}

/// Bytes queued as generated ones (`Connection::write_generated`), made into each segment as
/// it is built, change nothing: a lossy transfer, with SACK recovery and without, sends the
/// same segments and delivers the same bytes as when they are written into the send buffer.
#[test]
fn generated_bytes_are_sent_as_written_ones() {
    for sack in [true, false] {
        let run = |generate: bool| {
            let path = Path { loss: 0.02, ..Path::default() };
            let c = Config { sack, ..Config::default() };
            let mut h = Harness::new(c.clone(), c, path, 13).transfer(3_000_000);
            h.recycle = true;
            h.hand_over = true;
            h.generate = generate;
            h.run(secs(120));
            assert!(h.data_ok(), "sack {sack}, generated {generate}: bytes differ");
            assert_eq!(h.received.len(), 3_000_000);
            (h.log.clone(), h.sent, h.dropped, h.a.stats().retransmissions)
        };
        let (written, generated) = (run(false), run(true));
        assert!(written.2[0] > 0 && written.3 > 0, "the path lost segments, which were sent again");
        assert_eq!(written, generated, "sack {sack}");
    }
}

/// A recycled buffer big enough for a full segment is where the next segment is built.
#[test]
fn the_next_segment_is_built_in_a_recycled_buffer() {
    let (a, b) = ("10.0.0.1:1000".parse().unwrap(), "10.0.0.2:80".parse().unwrap());
    let mut c = tcp::Connection::connect(Config::default(), a, b, 1, Instant::ZERO);
    let buf = Vec::with_capacity(2_000);
    let at = buf.as_ptr();
    c.recycle(buf);
    let syn = c.poll_transmit(Instant::ZERO).unwrap();
    assert_eq!(syn.as_ptr(), at);
}
