//! The engine options paper 002 (SCTP in data centres) uses: a SACK frequency that holds
//! under loss and reordering (`Config::sack_immediate_on_gap = false`) and the Nagle-like
//! bundling delay on or off (`Config::nagle`), and go-back-N instead of selective
//! acknowledgement (`Config::go_back_n`).
#![allow(clippy::unwrap_used)]

mod harness;

use harness::{ms, Harness, CLIENT, SERVER};
use sctp::Config;
use simtime::Duration;

/// Packets with DATA the server received and SACK chunks it sent during a 600 KB transfer
/// of 1000-byte messages in which the client's packets `drops` are lost.
fn transfer(config: Config, drops: &[u64]) -> (usize, usize) {
    let mut h = Harness::new(config.clone(), config, 1, ms(1), 5);
    h.links[0].rate_bps = 100_000_000;
    h.connect();
    h.run_for(ms(100));
    let base = h.sent_count[CLIENT];
    for &n in drops {
        h.drop_nth.push((CLIENT, base + n));
    }
    let from = h.sent.len();
    h.apps[CLIENT] = harness::App { to_send: 600_000, msg_size: 1000, streams: 1, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(30));
    assert_eq!(h.apps[SERVER].received_bytes, 600_000);
    let chunk_types =
        |side: usize, ty: u8| h.sent[from..].iter().filter(|(_, s, _, p)| *s == side && p.get(12) == Some(&ty)).count();
    // DATA leads a client packet (type 0) unless a SACK or control chunk is bundled first;
    // the client sends no SACKs in a one-way transfer.
    (chunk_types(CLIENT, 0), chunk_types(SERVER, 3))
}

#[test]
fn a_counted_sack_frequency_holds_under_loss_where_rfc_9260_acknowledges_every_packet() {
    let drops = [40, 120, 200, 300];
    let rfc = Config { sack_freq: 7, ..Config::default() };
    let counted = Config { sack_immediate_on_gap: false, ..rfc.clone() };
    let (data_rfc, sacks_rfc) = transfer(rfc, &drops);
    let (data_counted, sacks_counted) = transfer(counted, &drops);
    // Every packet arriving while a gap is open is acknowledged at once under §6.7; counted,
    // one SACK per 7 packets, plus the few the delayed-ACK timer sends at the end of bursts.
    let budget = data_counted / 7 + 12;
    assert!(sacks_counted <= budget, "{sacks_counted} SACKs for {data_counted} packets");
    assert!(
        sacks_rfc >= sacks_counted + 4 * drops.len(),
        "§6.7 immediate SACKs on gaps: {sacks_rfc} for {data_rfc} packets vs {sacks_counted} counted"
    );
}

#[test]
fn without_loss_both_settings_acknowledge_alike() {
    let rfc = Config { sack_freq: 7, ..Config::default() };
    let counted = Config { sack_immediate_on_gap: false, ..rfc.clone() };
    assert_eq!(transfer(rfc, &[]), transfer(counted, &[]));
}

/// Times at which the client sent packets with DATA, from `from` on, and their DATA counts.
fn client_data_packets(h: &Harness, from: simtime::Instant) -> Vec<(simtime::Instant, usize)> {
    h.sent
        .iter()
        .filter(|(t, s, ..)| *s == CLIENT && *t >= from)
        .filter_map(|(t, _, _, p)| {
            let packet = sctp::wire::Packet::parse(p).ok()?;
            let n = packet.chunks.iter().filter(|c| matches!(c, sctp::wire::Chunk::Data(_))).count();
            (n > 0).then_some((*t, n))
        })
        .collect()
}

/// One small message goes out; 1 ms later five more are written.
fn small_messages(config: Config) -> (simtime::Instant, Vec<(simtime::Instant, usize)>) {
    let mut h = Harness::new(config.clone(), config, 1, ms(10), 3);
    h.connect();
    h.run_for(Duration::from_secs(1));
    let t0 = h.now;
    h.assoc(CLIENT).send(0, 0, false, &[1; 100]).unwrap();
    h.run_for(ms(1));
    for k in 0..5u8 {
        h.assoc(CLIENT).send(0, 0, false, &[k; 100]).unwrap();
    }
    h.run_for(Duration::from_secs(1));
    (t0, client_data_packets(&h, t0))
}

#[test]
fn nagle_holds_small_messages_while_data_is_outstanding() {
    // Off (the default, NO-DELAY): the five messages leave at once, bundled in one packet.
    let (t0, off) = small_messages(Config::default());
    assert_eq!(off, vec![(t0, 1), (t0 + ms(1), 5)]);
    // On: they wait for the SACK of the first (one-way 10 ms, then the 200 ms delayed ack,
    // then 10 ms back), as less than a packet's worth.
    let (t0, on) = small_messages(Config { nagle: true, ..Config::default() });
    assert_eq!(on, vec![(t0, 1), (t0 + ms(220), 5)]);
}

/// A 600 KB transfer of 1000-byte messages over one 1 ms path in which the client's
/// packets `drops` are lost (counted from the first after set-up): the finished harness,
/// the time the last byte arrived and the client's packet count before the transfer.
fn go_back_transfer(config: Config, drops: &[u64]) -> (Harness, simtime::Instant, u64) {
    let mut h = Harness::new(config.clone(), config, 1, ms(1), 5);
    h.links[0].rate_bps = 100_000_000;
    h.connect();
    h.run_for(ms(100));
    let base = h.sent_count[CLIENT];
    for &n in drops {
        h.drop_nth.push((CLIENT, base + n));
    }
    h.apps[CLIENT] = harness::App { to_send: 600_000, msg_size: 1000, streams: 1, ..Default::default() };
    h.apps[SERVER].reading = true;
    let start = h.now;
    h.run_for(Duration::from_secs(30));
    assert_eq!(h.apps[SERVER].received_bytes, 600_000);
    let done = h.delivered.iter().map(|d| d.0).max().unwrap();
    assert!(done > start);
    (h, done, base)
}

/// Gap ack blocks in the SACKs the server sent.
fn gap_blocks_sent(h: &Harness) -> usize {
    h.sent
        .iter()
        .filter(|(_, s, ..)| *s == SERVER)
        .filter_map(|(_, _, _, p)| sctp::wire::Packet::parse(p).ok())
        .flat_map(|p| p.chunks)
        .map(|c| match c {
            sctp::wire::Chunk::Sack(s) => s.gap_ack_blocks.len(),
            _ => 0,
        })
        .sum()
}

fn fast_retransmitted_chunks(h: &Harness) -> u32 {
    h.events[CLIENT]
        .iter()
        .map(|(_, e)| match e {
            sctp::Event::FastRetransmit { chunks, .. } => *chunks,
            _ => 0,
        })
        .sum()
}

#[test]
fn go_back_n_discards_out_of_order_data_and_resends_everything_after_a_loss() {
    let drops = [40, 200];
    let gbn = Config { go_back_n: true, ..Config::default() };
    let (h, ..) = go_back_transfer(gbn, &drops);
    let server = h.assoc_ref(SERVER).stats().clone();
    let client = h.assoc_ref(CLIENT).stats().clone();
    // The receiver kept nothing out of order and reported no gap.
    assert!(server.chunks_discarded_out_of_order > 0);
    assert_eq!(gap_blocks_sent(&h), 0);
    // One round per loss, each resending the whole flight after it (far more than the
    // lost chunk), without waiting for T3-rtx (RTO.Min is 1 s).
    assert_eq!(client.go_back_n_rounds, drops.len() as u64);
    let t3 = h.event_times(CLIENT, |e| matches!(e, sctp::Event::T3Timeout { .. }));
    assert!(t3.is_empty(), "T3 timeouts at {t3:?}");
    let resent = fast_retransmitted_chunks(&h);
    assert!(resent as u64 >= server.chunks_discarded_out_of_order, "{resent} resent, {server:?}");
    assert!(resent >= 4 * drops.len() as u32, "{resent} chunks resent");

    // Selective acknowledgement: the same losses cost one chunk each, reported in gaps.
    let (s, ..) = go_back_transfer(Config::default(), &drops);
    assert_eq!(s.assoc_ref(SERVER).stats().chunks_discarded_out_of_order, 0);
    assert!(gap_blocks_sent(&s) > 0);
    assert_eq!(s.assoc_ref(CLIENT).stats().go_back_n_rounds, 0);
    assert_eq!(fast_retransmitted_chunks(&s), drops.len() as u32);
}

/// The 1-based number of the client packet that first carried a TSN a second time.
fn first_retransmission(h: &Harness) -> u64 {
    let mut seen = std::collections::BTreeSet::new();
    let client = h.sent.iter().filter(|(_, s, ..)| *s == CLIENT);
    for (n, (_, _, _, p)) in client.enumerate() {
        let Ok(packet) = sctp::wire::Packet::parse(p) else { continue };
        for c in packet.chunks {
            if let sctp::wire::Chunk::Data(d) = c {
                if !seen.insert(d.tsn) {
                    return n as u64 + 1;
                }
            }
        }
    }
    panic!("no retransmission");
}

#[test]
fn go_back_n_recovers_a_lost_retransmission_with_a_second_round() {
    let gbn = Config { go_back_n: true, ..Config::default() };
    let (h, first_done, base) = go_back_transfer(gbn.clone(), &[40]);
    let rtx = first_retransmission(&h) - base;
    // The retransmission of the lost chunk is lost too: the discarded originals' duplicates
    // start no second round, but those at the cumulative ack the retransmissions reached do.
    let (h, done, _) = go_back_transfer(gbn, &[40, rtx]);
    assert_eq!(h.assoc_ref(CLIENT).stats().go_back_n_rounds, 2);
    let t3 = h.event_times(CLIENT, |e| matches!(e, sctp::Event::T3Timeout { .. }));
    assert!(t3.is_empty(), "T3 timeouts at {t3:?}");
    assert!(done < first_done + ms(20), "{done:?} vs {first_done:?}");
}

#[test]
fn go_back_n_without_loss_is_selective_acknowledgement() {
    let gbn = Config { go_back_n: true, ..Config::default() };
    let (g, g_done, _) = go_back_transfer(gbn, &[]);
    let (s, s_done, _) = go_back_transfer(Config::default(), &[]);
    assert_eq!(g_done, s_done);
    assert_eq!(g.sent.len(), s.sent.len());
    assert_eq!(g.assoc_ref(CLIENT).stats().go_back_n_rounds, 0);
}

#[test]
fn a_go_back_n_receiver_alone_leaves_recovery_to_t3() {
    // The sender's duplicate-SACK rule is what recovers within an RTT: with it off (a
    // go-back-N receiver, a selective sender) the loss waits for T3-rtx.
    let drops = [40];
    let gbn = Config { go_back_n: true, ..Config::default() };
    let mut h = Harness::new(Config::default(), gbn, 1, ms(1), 5);
    h.links[0].rate_bps = 100_000_000;
    h.connect();
    h.run_for(ms(100));
    let base = h.sent_count[CLIENT];
    for &n in &drops {
        h.drop_nth.push((CLIENT, base + n));
    }
    h.apps[CLIENT] = harness::App { to_send: 600_000, msg_size: 1000, streams: 1, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(30));
    assert_eq!(h.apps[SERVER].received_bytes, 600_000);
    let t3 = h.event_times(CLIENT, |e| matches!(e, sctp::Event::T3Timeout { .. }));
    assert_eq!(t3.len(), 1);
}
