//! `record.packets`: the SCTP packet log agrees with the engine's own counters, follows the
//! failover from one path to the other, and changes nothing else about a run.
#![allow(clippy::unwrap_used)]

mod common;

use common::{example, get, run_with};
use netsim::packetlog::{PacketKind, PacketLog};

/// The failover example cut to 40 s: the primary breaks at 10 s, T3 expiries at 11, 13, 17,
/// 25 s retransmit on the alternate path.
const SHORT: &str = "duration=40s";

fn rows(log: &PacketLog, assoc: &str, kind: PacketKind) -> Vec<usize> {
    let a = log.assoc_names.iter().position(|n| n == assoc).unwrap() as u32;
    (0..log.len()).filter(|&i| log.assoc[i] == a && log.kind[i] == kind as u8).collect()
}

#[test]
fn the_log_is_off_by_default_and_resolves_to_nothing() {
    let text = example("failover.toml");
    let r = run_with(&text, &[SHORT]);
    assert!(r.packets.is_none());
    let s = scenario::parse(&text, &[]).unwrap();
    assert!(!s.record.packets);
    assert!(!s.resolved_toml(1).contains("packets"), "an unset key stays out of the resolved scenario");
    let on = scenario::parse(&text, &["record.packets=true".into()]).unwrap();
    assert!(on.resolved_toml(1).contains("packets = true"));
    let err = scenario::parse(&text, &["record.packets=1".into()]).unwrap_err();
    assert_eq!(err.path, "record.packets");
}

#[test]
fn data_and_sack_rows_match_the_association_counters_and_follow_the_failover() {
    let text = example("failover.toml");
    let r = run_with(&text, &[SHORT, "record.packets=true"]);
    let log = r.packets.as_ref().unwrap();
    let data = rows(log, "upload", PacketKind::Data);
    let sum =
        |f: &dyn Fn(usize) -> bool| data.iter().filter(|&&i| f(i)).map(|&i| u64::from(log.length[i])).sum::<u64>();
    // Every chunk the engine counts is a row, new data and retransmissions apart.
    assert_eq!(sum(&|i| !log.retransmission[i]) as f64, get(&r, "sctp", "upload", "sent_bytes"));
    assert_eq!(sum(&|i| log.retransmission[i]) as f64, get(&r, "sctp", "upload", "retransmitted_bytes"));
    let rtx = data.iter().filter(|&&i| log.retransmission[i]).count() as f64;
    let counted =
        get(&r, "sctp", "upload", "fast_retransmissions") + get(&r, "sctp", "upload", "timeout_retransmissions");
    assert_eq!(rtx, counted);
    for p in 0..2u32 {
        let sent = sum(&|i| log.path[i] == p && !log.retransmission[i]) as f64;
        assert_eq!(sent, get(&r, "sctp_path", &format!("upload/path{p}"), "bytes_sent"), "path {p}");
    }
    // Before the break (10 s) new data goes to the primary (path 0); the first T3 expiry
    // (about 11 s) retransmits on the alternate (path 1).
    let break_ns = 10_000_000_000;
    assert!(data.iter().filter(|&&i| log.time_ns[i] < break_ns).all(|&i| log.path[i] == 0));
    let first_alt_rtx = data.iter().find(|&&i| log.path[i] == 1 && log.retransmission[i]).unwrap();
    let t = log.time_ns[*first_alt_rtx] as f64 * 1e-9;
    let expected =
        get(&r, "sctp", "upload", "primary_break_at") + get(&r, "sctp", "upload", "first_alternate_rtx_time");
    assert!((t - expected).abs() < 1e-9, "first retransmission on the alternate at {t} s, scalars say {expected}");
    // SACKs: the cumulative ack never goes back; it reaches past the data sent before the break.
    let sacks = rows(log, "upload", PacketKind::Sack);
    assert!(sacks.len() > 100);
    assert!(sacks.windows(2).all(|w| log.tsn[w[1]].wrapping_sub(log.tsn[w[0]]) as i32 >= 0));
    assert!(sacks.iter().all(|&i| log.highest_tsn[i].wrapping_sub(log.tsn[i]) as i32 >= 0 && log.a_rwnd[i] > 0));
    let last_ack = log.tsn[*sacks.last().unwrap()];
    let before_break = data.iter().rfind(|&&i| log.time_ns[i] < break_ns).unwrap();
    assert!(last_ack.wrapping_sub(log.tsn[*before_break]) as i32 > 0);
    // The receiving side sends no DATA and receives no SACK.
    assert!(!log.assoc_names.iter().any(|n| n == "sink"));
}

#[test]
fn the_log_changes_nothing_else() {
    let text = example("failover.toml");
    let off = run_with(&text, &[SHORT]);
    let on = run_with(&text, &[SHORT, "record.packets=true"]);
    assert_eq!(off.scalars, on.scalars);
    assert_eq!(off.timeseries.value, on.timeseries.value);
    assert_eq!(off.events, on.events);
}
