//! Concurrent Multipath Transfer over two paths (Iyengar, Amer, Stewart, IEEE/ACM ToN 14(5),
//! 2006): the round-robin and largest-cwnd schedulers spread new data over both
//! destinations; with paths of different delay the reordering makes spurious fast
//! retransmissions without split fast retransmit (SFR) and none with it, slows the faster
//! destination's window without the cwnd update for CMT (CUC), and doubles the SACKs
//! without the delayed ack for CMT (DAC), whose SACKs carry a packet count of 1 or 2.
#![allow(clippy::unwrap_used)]

mod harness;

use harness::{addr, ms, Harness, CLIENT, PORTS, SERVER};
use sctp::cmt::{CmtConfig, SchedulerConfig};
use sctp::wire::{Chunk, CommonHeader, GapAckBlock, HeaderView, Packet, SackChunk};
use sctp::{Config, Event, PathId};
use simtime::{Duration, Instant};

const P0: PathId = PathId::new(0);
const P1: PathId = PathId::new(1);

/// Two paths, 10 Mbit/s each (0: no limit), one-way delays `delays`; the client uploads
/// `bytes` in 1,400-byte messages, the server reads at once. Both ends use `config`.
fn upload(config: Config, delays: [u64; 2], rate_bps: u64, bytes: u64) -> Harness {
    let mut h = Harness::new(config.clone(), config, 2, ms(delays[0]), 5);
    h.links[1].delay = ms(delays[1]);
    for l in &mut h.links {
        l.rate_bps = rate_bps;
    }
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: bytes, msg_size: 1400, ..Default::default() };
    h.apps[SERVER].reading = true;
    h
}

fn cmt(sfr: bool, cuc: bool, dac: bool) -> Config {
    Config { cmt: CmtConfig { sfr, cuc, dac, ..CmtConfig::on() }, ..Config::default().with_cmt() }
}

/// Sum of a per-path counter of the client.
fn client_sum(h: &Harness, f: impl Fn(&sctp::PathStats) -> u64) -> u64 {
    h.assoc_ref(CLIENT).paths().values().map(|p| f(&p.stats)).sum()
}

/// The SACK chunks `side` sent, in order.
fn sacks_sent(h: &Harness, side: usize) -> Vec<SackChunk> {
    h.sent
        .iter()
        .filter(|(_, s, _, _)| *s == side)
        .filter_map(|(.., p)| HeaderView::new_checked(p).ok().map(|v| (v, p)))
        .flat_map(|(v, _)| {
            v.chunks()
                .flatten()
                .filter_map(|c| match Chunk::parse(&c) {
                    Ok(Chunk::Sack(s)) => Some(s),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn with_cmt_turns_on_cmt_and_the_round_robin_scheduler() {
    let c = Config::default().with_cmt();
    assert!(c.cmt.enabled && c.cmt.sfr && c.cmt.cuc && c.cmt.dac);
    assert_eq!(c.scheduler, SchedulerConfig::RoundRobin);
    assert_eq!(Config::default().cmt, CmtConfig::default());
    assert!(!Config::default().cmt.enabled);
    for name in SchedulerConfig::NAMES {
        assert_eq!(SchedulerConfig::from_name(name).unwrap().name(), name);
    }
}

#[test]
fn round_robin_sends_new_data_over_both_destinations_and_primary_over_one() {
    let bytes = 3_000_000;
    let mut h = upload(Config::default().with_cmt(), [10, 10], 10_000_000, bytes);
    h.run_for(Duration::from_secs(10));
    assert_eq!(h.apps[SERVER].received_bytes, bytes);
    let sent: Vec<u64> = h.assoc_ref(CLIENT).paths().values().map(|p| p.stats.bytes_sent).collect();
    // Two equal paths: each carries close to half of the new data.
    for &b in &sent {
        assert!(b > bytes * 2 / 5, "new data bytes per path: {sent:?}");
    }
    assert_eq!(sent.iter().sum::<u64>(), bytes);
    // With CMT the data path alternating is no event.
    assert!(h.event_times(CLIENT, |e| matches!(e, Event::DataPathChanged { .. })).is_empty());
    let cmt_done = h.delivered.iter().filter(|d| d.1 == SERVER).map(|d| d.0).max().unwrap();

    let mut h = upload(Config::default(), [10, 10], 10_000_000, bytes);
    h.run_for(Duration::from_secs(10));
    assert_eq!(h.apps[SERVER].received_bytes, bytes);
    let paths = h.assoc_ref(CLIENT).paths();
    assert_eq!((paths[P0].stats.bytes_sent, paths[P1].stats.bytes_sent), (bytes, 0));
    let single_done = h.delivered.iter().filter(|d| d.1 == SERVER && d.2 == 0).map(|d| d.0).max().unwrap();
    // Two paths' worth: the transfer takes well under the single path's time.
    let (c, s) = (cmt_done.as_nanos() as f64, single_done.as_nanos() as f64);
    assert!(c < 0.65 * s, "CMT done at {cmt_done:?}, single path at {single_done:?}");
}

#[test]
fn largest_cwnd_fills_every_destination_the_roomiest_first() {
    let bytes = 2_000_000;
    let config = Config { scheduler: SchedulerConfig::LargestCwnd, ..Config::default().with_cmt() };
    let mut h = upload(config, [10, 20], 10_000_000, bytes);
    h.run_for(Duration::from_secs(10));
    assert_eq!(h.apps[SERVER].received_bytes, bytes);
    let sent: Vec<u64> = h.assoc_ref(CLIENT).paths().values().map(|p| p.stats.bytes_sent).collect();
    assert!(sent.iter().all(|&b| b > bytes / 5), "{sent:?}");
}

/// Fast retransmissions (chunks) and T3 timeouts of a 4 MB upload over 10 Mbit/s paths of
/// 10 and 40 ms one-way delay, without loss: every fast retransmission is spurious.
fn reordering_upload(config: Config) -> (u64, u64, Harness) {
    let bytes = 4_000_000;
    let mut h = upload(config, [10, 40], 10_000_000, bytes);
    h.run_for(Duration::from_secs(20));
    assert_eq!(h.apps[SERVER].received_bytes, bytes);
    let fast = client_sum(&h, |s| s.fast_retransmissions);
    let events = h.event_times(CLIENT, |e| matches!(e, Event::FastRetransmit { .. })).len() as u64;
    assert_eq!(fast > 0, events > 0);
    (fast, client_sum(&h, |s| s.t3_timeouts), h)
}

#[test]
fn without_sfr_reordering_causes_spurious_fast_retransmissions_and_with_it_none() {
    let (fast, timeouts, h) = reordering_upload(cmt(false, true, true));
    assert!(fast >= 10, "spurious fast retransmissions without SFR: {fast}");
    let dup: u64 = h.assoc_ref(SERVER).stats().duplicate_chunks_received;
    assert!(dup >= 10, "the receiver got the spurious retransmissions as duplicates: {dup}");
    let _ = timeouts;
    let (fast, timeouts, h) = reordering_upload(cmt(true, true, true));
    assert_eq!((fast, timeouts), (0, 0), "SFR: no fast retransmission without loss");
    assert_eq!(h.assoc_ref(SERVER).stats().duplicate_chunks_received, 0);
    // Without DAC too (every reordered arrival acknowledged at once).
    let (fast, timeouts, _) = reordering_upload(cmt(true, true, false));
    assert_eq!((fast, timeouts), (0, 0));
}

/// The faster destination's cwnd 400 ms into an upload over 10 Mbit/s paths of 5 and 50 ms
/// one-way delay, both confirmed before it starts (slow start all along: no loss, 8 MiB
/// windows).
fn fast_path_cwnd(cuc: bool) -> u32 {
    let config = Config { recv_buffer: 8 << 20, send_buffer: 8 << 20, ..cmt(true, cuc, true) };
    let mut h = upload(config, [5, 50], 10_000_000, 0);
    h.run_for(ms(300));
    assert!(h.assoc_ref(CLIENT).paths().values().all(|p| p.confirmed));
    h.apps[CLIENT].to_send = u64::MAX;
    h.run_for(ms(400));
    let paths = h.assoc_ref(CLIENT).paths();
    assert_eq!(client_sum(&h, |s| s.fast_retransmissions + s.t3_timeouts), 0);
    assert!(paths[P1].stats.bytes_sent > 20_000, "{}", paths[P1].stats.bytes_sent);
    paths[P0].cc.cwnd
}

#[test]
fn cuc_lets_the_faster_destination_grow_its_window_when_the_cumulative_ack_stands_still() {
    let with = fast_path_cwnd(true);
    let without = fast_path_cwnd(false);
    assert!(with > 3 * without, "fast path cwnd with CUC {with}, without {without}");
}

/// SACKs the server sent during a 3 MB upload over paths of 10 and 40 ms, and those SACKs.
fn sacks_under_reordering(dac: bool) -> (u64, Vec<SackChunk>) {
    let mut h = upload(cmt(true, true, dac), [10, 40], 10_000_000, 3_000_000);
    h.run_for(Duration::from_secs(20));
    assert_eq!(h.apps[SERVER].received_bytes, 3_000_000);
    (h.assoc_ref(SERVER).stats().sacks_sent, sacks_sent(&h, SERVER))
}

#[test]
fn dac_keeps_delaying_sacks_under_reordering_and_reports_one_or_two_packets() {
    let (with, sacks) = sacks_under_reordering(true);
    let (without, plain) = sacks_under_reordering(false);
    assert!(
        (with as f64) < 0.7 * without as f64,
        "SACKs with DAC {with}, without {without}: reordering makes almost every one immediate"
    );
    // Every data-carrying SACK reports 1 or 2 packets in bits 6-7; the others are zero.
    let counts: Vec<u8> = sacks.iter().map(|s| s.flags >> 6).collect();
    assert!(sacks.iter().all(|s| s.flags & 0x3f == 0));
    let twos = counts.iter().filter(|&&n| n == 2).count();
    let ones = counts.iter().filter(|&&n| n == 1).count();
    assert!(twos > sacks.len() / 2 && ones > 0, "2: {twos}, 1: {ones} of {}", sacks.len());
    assert!(counts.iter().all(|&n| n <= 2));
    // Without DAC the flags stay zero (RFC 9260 §3.3.4: reserved).
    assert!(plain.iter().all(|s| s.flags == 0));
}

fn carries_data(packet: &[u8]) -> bool {
    HeaderView::new_checked(packet)
        .is_ok_and(|v| v.chunks().flatten().any(|c| matches!(Chunk::parse(&c), Ok(Chunk::Data(_)))))
}

/// How long after losing one DATA packet on a single 10 Mbit/s path the client
/// fast-retransmits it, CMT on at both ends and the receiver's SACKs delayed (DAC) and
/// carrying their packet counts; the client counts them if `sender_dac`. Every SACK
/// newly acknowledges chunks of one destination, all above the lost one.
fn fast_retransmit_delay(sender_dac: bool) -> Duration {
    let single = |dac| Config { scheduler: SchedulerConfig::Primary, ..cmt(true, true, dac) };
    let mut h = Harness::new(single(sender_dac), single(true), 1, ms(10), 5);
    h.links[0].rate_bps = 10_000_000;
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: 2_000_000, msg_size: 1400, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(ms(300));
    // The next DATA packet the client sends is lost.
    let n = h.sent.len();
    h.links[0].loss = 1.0;
    while !h.sent[n..].iter().any(|(_, s, _, p)| *s == CLIENT && carries_data(p)) {
        h.run_for(Duration::from_micros(10));
    }
    let lost_at = h.now;
    h.links[0].loss = 0.0;
    h.run_for(Duration::from_secs(5));
    assert_eq!(h.apps[SERVER].received_bytes, 2_000_000);
    assert_eq!(client_sum(&h, |s| s.t3_timeouts), 0);
    let fr = h.event_times(CLIENT, |e| matches!(e, Event::FastRetransmit { .. }));
    fr.first().map(|t: &Instant| t.saturating_since(lost_at)).unwrap()
}

#[test]
fn a_dac_sender_counts_the_packets_each_sack_reports() {
    let counting = fast_retransmit_delay(true);
    let ignoring = fast_retransmit_delay(false);
    // Two SACKs reporting two packets each make four indications; one per SACK takes a
    // third SACK, two packets (2.3 ms at 10 Mbit/s) later.
    assert!(
        counting + Duration::from_micros(2000) < ignoring,
        "repaired after {counting:?} counting DAC's packet counts, {ignoring:?} not"
    );
}

/// A SACK from the server to the client, as the server would send it.
fn sack_to_client(h: &Harness, cum: u32, a_rwnd: u32, blocks: &[(u16, u16)]) -> Vec<u8> {
    let header = CommonHeader {
        src_port: PORTS[SERVER],
        dst_port: PORTS[CLIENT],
        verification_tag: h.assoc_ref(CLIENT).local_tag(),
    };
    let gap_ack_blocks = blocks.iter().map(|&(start, end)| GapAckBlock { start, end }).collect();
    let sack = SackChunk { cumulative_tsn_ack: cum, a_rwnd, gap_ack_blocks, ..SackChunk::default() };
    Packet { header, chunks: vec![Chunk::Sack(sack)] }.emit()
}

#[test]
fn a_sack_overtaken_by_a_later_one_revokes_its_gap_acks_so_the_peer_window_is_not_overestimated() {
    // Under CMT the SACKs return over paths of different delay, so an older SACK often
    // arrives after a newer one with the same cumulative ack. RFC 9260 §6.2.1 D ii, iii:
    // what the older one does not report is outstanding again, and rwnd is its a_rwnd less
    // all that; keeping the newer one's gap acks instead overestimated the peer's window
    // (its a_rwnd does not count them) and overran the receiver's buffer (validation/ns2
    // case B: chunks dropped at the receiver and retransmitted).
    let mut h = harness::connected(1);
    h.set_link(0, false); // the client's DATA goes nowhere; the test plays the server
    let first = h.assoc_ref(CLIENT).highest_tsn_sent().wrapping_add(1);
    h.apps[CLIENT] = harness::App { to_send: 5_000, msg_size: 1000, ..Default::default() };
    h.run_for(ms(1));
    let sent = h.assoc_ref(CLIENT).highest_tsn_sent().wrapping_sub(first) + 1;
    assert_eq!(sent, 5, "TSNs first..first+4 in flight, 1000 bytes each");
    let (s, c, cum) = (addr(SERVER, 0), addr(CLIENT, 0), first.wrapping_sub(1));
    let flight = |h: &Harness| h.assoc_ref(CLIENT).paths()[P0].flight_size;
    // The newer SACK: TSNs first+1..first+3 arrived; 3000 bytes held.
    let now = h.now;
    h.eps[CLIENT].handle(now, s, c, &sack_to_client(&h, cum, 65_536 - 3_000, &[(2, 4)]));
    assert_eq!((flight(&h), h.assoc_ref(CLIENT).peer_rwnd()), (2_000, 65_536 - 3_000 - 2_000));
    // The older one, overtaken: only first+1 had arrived. first+2 and first+3 are in flight
    // again: rwnd = 64,536 - 4,000, not 64,536 - 2,000.
    h.eps[CLIENT].handle(now, s, c, &sack_to_client(&h, cum, 65_536 - 1_000, &[(2, 2)]));
    assert_eq!((flight(&h), h.assoc_ref(CLIENT).peer_rwnd()), (4_000, 65_536 - 1_000 - 4_000));
    // A later SACK reports them again: out of flight, and their bytes not credited twice.
    h.eps[CLIENT].handle(now, s, c, &sack_to_client(&h, cum, 65_536 - 4_000, &[(2, 5)]));
    let path = &h.assoc_ref(CLIENT).paths()[P0];
    assert_eq!((path.flight_size, path.stats.bytes_acked), (1_000, 4_000));
    assert_eq!(h.assoc_ref(CLIENT).peer_rwnd(), 65_536 - 4_000 - 1_000);
    // The overtaken SACK acknowledged nothing new, so it gave `first` no miss indication
    // (two SACKs did): not fast-retransmitted.
    assert_eq!(path.stats.fast_retransmissions, 0);
}
