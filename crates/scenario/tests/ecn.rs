//! ECN end to end through a RED bottleneck in marking mode (RFC 3168; Floyd & Jacobson 1993
//! with ns-2's `setbit_`) and through a CoDel bottleneck in marking mode (RFC 8289 §5: CoDel
//! marks an ECN-capable packet where it would drop it): a TCP flow and an SCTP association
//! with `ecn = true` are marked instead of dropped, lose (almost) no packets and still reduce
//! their windows; the same flows without ECN lose packets at the same queue.
//!
//! H0 – R – H1: a 1 Gbit/s access link and a 10 Mbit/s, 20 ms bottleneck whose queue is RED
//! in packet mode with thresholds of 5 and 15 packets and room for 200 (ns-2's byte-mode
//! thresholds, in 500-byte units, are two full-sized packets). With ECN, `mark_p = 1` marks
//! every ECN-capable packet the early test picks (ns-2's `mark_p_ 0.1` drops them once the
//! average passes max_th, in the gentle region, which a slow start's burst reaches before
//! the average has caught up); overflow drops stay drops.
#![allow(clippy::unwrap_used)]

mod common;

use common::{get, run_with, series};
use netsim::world::RunResult;

fn through_red(queue: &str, apps: &str) -> RunResult {
    let text = common::chain(
        "rate = \"1Gbps\"\ndelay = \"1ms\"\nqueue = { limit = 1000 }",
        &format!("rate = \"10Mbps\"\ndelay = \"20ms\"\nqueue = {{ {queue} }}"),
        apps,
    );
    run_with(&text, &["duration=30s"])
}

fn tcp_apps(ecn: bool) -> String {
    format!(
        r#"
[[apps]]
kind = "tcp-sink"
name = "sink"
node = "H1"
tcp = {{ ecn = {ecn} }}
[[apps]]
kind = "tcp-bulk"
name = "up"
node = "H0"
dst = "H1"
tcp = {{ ecn = {ecn}, cc = "sack" }}
"#
    )
}

fn sctp_apps(ecn: bool) -> String {
    format!(
        r#"
[[apps]]
kind = "sctp-sink"
name = "sink"
node = "H1"
sctp = {{ ecn = {ecn}, recv_buffer = "1MiB" }}
[[apps]]
kind = "sctp-bulk"
name = "up"
node = "H0"
peer = "H1"
sctp = {{ ecn = {ecn}, recv_buffer = "1MiB", send_buffer = "1MiB" }}
"#
    )
}

const RED_ECN: &str =
    r#"kind = "red", mode = "packets", min_th = 5, max_th = 15, limit = 200, ecn = true, mark_p = 1.0"#;
const RED: &str = r#"kind = "red", mode = "packets", min_th = 5, max_th = 15, limit = 200"#;

#[test]
fn tcp_through_red_with_ecn_is_marked_instead_of_dropped() {
    let r = through_red(RED_ECN, &tcp_apps(true));
    let marks = get(&r, "flow", "up", "marks");
    let drops = get(&r, "flow", "up", "drops");
    let sent = get(&r, "flow", "up", "tx_packets");
    assert!(marks > 20.0, "{marks} marks");
    assert!(drops <= 0.001 * sent, "{drops} drops of {sent}");
    let reductions = get(&r, "tcp", "up", "ecn_reductions");
    assert!(reductions >= 10.0 && reductions < marks, "{reductions} reductions, {marks} marks");
    assert!(get(&r, "tcp", "up", "fast_retransmits") <= 1.0);
    assert!(get(&r, "flow", "up", "goodput") > 0.85 * 10e6);

    let plain = through_red(RED, &tcp_apps(false));
    assert!(get(&plain, "flow", "up", "drops") > 20.0);
    assert!(get(&plain, "tcp", "up", "retransmissions") >= 20.0);
    assert!(plain.scalars.get("flow", "up", "marks").is_none());
}

#[test]
fn sctp_through_red_with_ecn_is_marked_instead_of_dropped() {
    let r = through_red(RED_ECN, &sctp_apps(true));
    let marks = get(&r, "flow", "up", "marks");
    let drops = get(&r, "flow", "up", "drops");
    let sent = get(&r, "flow", "up", "tx_packets");
    assert!(marks > 20.0, "{marks} marks");
    assert!(drops <= 0.001 * sent, "{drops} drops of {sent}");
    assert_eq!(get(&r, "sctp", "sink", "ecn_ce_received"), marks);
    let reductions = get(&r, "sctp", "up", "ecn_reductions");
    assert!(reductions >= 10.0 && reductions < marks, "{reductions} reductions, {marks} marks");
    assert!(get(&r, "sctp", "up", "fast_retransmissions") <= 1.0);
    assert!(get(&r, "sctp", "sink", "goodput") > 0.85 * 10e6);

    let plain = through_red(RED, &sctp_apps(false));
    assert!(get(&plain, "flow", "up", "drops") > 20.0);
    let rtx = get(&plain, "sctp", "up", "fast_retransmissions") + get(&plain, "sctp", "up", "timeout_retransmissions");
    assert!(rtx >= 20.0, "{rtx}");
}

/// The RED test's chain with `queue` at the bottleneck, the congestion windows sampled every
/// 10 ms (a tenth of a round trip's worth of growth between samples).
fn through_codel(queue: &str, apps: &str) -> RunResult {
    let text = common::chain(
        "rate = \"1Gbps\"\ndelay = \"1ms\"\nqueue = { limit = 1000 }",
        &format!("rate = \"10Mbps\"\ndelay = \"20ms\"\nqueue = {{ {queue} }}"),
        apps,
    );
    run_with(&text, &["duration=30s", "record.interval=10ms"])
}

const CODEL_ECN: &str = r#"kind = "codel", limit = 200, ecn = true"#;
const CODEL: &str = r#"kind = "codel", limit = 200"#;

/// The largest congestion window a series reached after `from` seconds, and the number of times
/// it fell to at most 60 % of the value it had just before (a halving, allowing for the
/// window's growth between samples).
fn halvings(r: &RunResult, entity: &str, metric: &str, from: f64) -> usize {
    let s = series(r, entity, metric);
    s.windows(2).filter(|w| w[1].0 >= from && w[1].1 <= 0.6 * w[0].1 && w[0].1 > 0.0).count()
}

#[test]
fn tcp_through_codel_with_ecn_is_marked_instead_of_dropped() {
    let r = through_codel(CODEL_ECN, &tcp_apps(true));
    let marks = get(&r, "flow", "up", "marks");
    let drops = get(&r, "flow", "up", "drops");
    let sent = get(&r, "flow", "up", "tx_packets");
    assert!(marks > 20.0, "{marks} marks");
    assert!(drops <= 0.001 * sent, "{drops} drops of {sent}");
    assert_eq!(get(&r, "iface", "R/eth1", "codel_marks"), marks);
    assert_eq!(get(&r, "iface", "R/eth1", "codel_drops"), 0.0);
    let reductions = get(&r, "tcp", "up", "ecn_reductions");
    assert!(reductions >= 10.0 && reductions <= marks, "{reductions} reductions, {marks} marks");
    assert!(get(&r, "tcp", "up", "fast_retransmits") <= 1.0);
    // Each reaction halves the window (RFC 3168 §6.1.2), and the sender saw no loss.
    let halved = halvings(&r, "up", "cwnd", 1.0);
    assert!(halved as f64 >= 0.8 * reductions, "{halved} halvings for {reductions} reductions");
    // CoDel keeps the standing queue near 5 ms, less than this path's bandwidth-delay product,
    // so a single flow that halves its window leaves the link idle for part of each cycle
    // (about 82 % here); RED's 15-packet threshold band keeps it fuller.
    assert!(get(&r, "flow", "up", "goodput") > 0.7 * 10e6);

    let plain = through_codel(CODEL, &tcp_apps(false));
    assert!(get(&plain, "flow", "up", "drops") > 20.0);
    assert!(get(&plain, "iface", "R/eth1", "codel_drops") > 20.0);
    assert!(get(&plain, "tcp", "up", "retransmissions") >= 20.0);
    assert!(plain.scalars.get("flow", "up", "marks").is_none());
}

#[test]
fn sctp_through_codel_with_ecn_is_marked_instead_of_dropped() {
    let r = through_codel(CODEL_ECN, &sctp_apps(true));
    let marks = get(&r, "flow", "up", "marks");
    let drops = get(&r, "flow", "up", "drops");
    let sent = get(&r, "flow", "up", "tx_packets");
    assert!(marks > 20.0, "{marks} marks");
    assert!(drops <= 0.001 * sent, "{drops} drops of {sent}");
    assert_eq!(get(&r, "iface", "R/eth1", "codel_marks"), marks);
    assert_eq!(get(&r, "sctp", "sink", "ecn_ce_received"), marks);
    let reductions = get(&r, "sctp", "up", "ecn_reductions");
    assert!(reductions >= 10.0 && reductions <= marks, "{reductions} reductions, {marks} marks");
    assert!(get(&r, "sctp", "up", "fast_retransmissions") <= 1.0);
    let halved = halvings(&r, "up/path0", "cwnd", 1.0);
    assert!(halved as f64 >= 0.8 * reductions, "{halved} halvings for {reductions} reductions");
    assert!(get(&r, "sctp", "sink", "goodput") > 0.7 * 10e6);

    let plain = through_codel(CODEL, &sctp_apps(false));
    assert!(get(&plain, "flow", "up", "drops") > 20.0);
    let rtx = get(&plain, "sctp", "up", "fast_retransmissions") + get(&plain, "sctp", "up", "timeout_retransmissions");
    assert!(rtx >= 20.0, "{rtx}");
}
