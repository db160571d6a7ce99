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

/// H0 – R – H1 with `queue` at the bottleneck, the congestion windows sampled every 10 ms (a
/// quarter of a round trip between samples), so each halving shows.
fn through(queue: &str, apps: &str) -> RunResult {
    let text = common::chain(
        "rate = \"1Gbps\"\ndelay = \"1ms\"\nqueue = { limit = 1000 }",
        &format!("rate = \"10Mbps\"\ndelay = \"20ms\"\nqueue = {{ {queue} }}"),
        apps,
    );
    run_with(&text, &["duration=30s", "record.interval=10ms"])
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

/// Where a transport's figures are in the results.
struct Transport {
    /// The applications of each ECN setting.
    apps: fn(bool) -> String,
    /// The scalars' kind (`tcp`, `sctp`).
    kind: &'static str,
    /// Its fast-retransmission counter.
    fast_retransmits: &'static str,
    /// The series entity of the sender's congestion window.
    cwnd: &'static str,
    /// The goodput's kind and entity.
    goodput: (&'static str, &'static str),
    /// Its retransmission counters.
    retransmissions: &'static [&'static str],
}

const TCP: Transport = Transport {
    apps: tcp_apps,
    kind: "tcp",
    fast_retransmits: "fast_retransmits",
    cwnd: "up",
    goodput: ("flow", "up"),
    retransmissions: &["retransmissions"],
};

const SCTP: Transport = Transport {
    apps: sctp_apps,
    kind: "sctp",
    fast_retransmits: "fast_retransmissions",
    cwnd: "up/path0",
    goodput: ("sctp", "sink"),
    retransmissions: &["fast_retransmissions", "timeout_retransmissions"],
};

const RED_ECN: &str =
    r#"kind = "red", mode = "packets", min_th = 5, max_th = 15, limit = 200, ecn = true, mark_p = 1.0"#;
const RED: &str = r#"kind = "red", mode = "packets", min_th = 5, max_th = 15, limit = 200"#;
const CODEL_ECN: &str = r#"kind = "codel", limit = 200, ecn = true"#;
const CODEL: &str = r#"kind = "codel", limit = 200"#;

/// The ECN flow through `queue` was marked rather than dropped, reacted to the marks by halving
/// its window (RFC 3168 §6.1.2) without a loss recovery, and kept `goodput_share` of the
/// bottleneck; the same flow without ECN through `plain_queue` lost packets and recovered
/// them.
fn marked_instead_of_dropped(t: &Transport, queue: &str, plain_queue: &str, goodput_share: f64) -> Outcome {
    let r = through(queue, &(t.apps)(true));
    let marks = get(&r, "flow", "up", "marks");
    let drops = get(&r, "flow", "up", "drops");
    let sent = get(&r, "flow", "up", "tx_packets");
    assert!(marks > 20.0, "{marks} marks");
    assert!(drops <= 0.001 * sent, "{drops} drops of {sent}");
    let reductions = get(&r, t.kind, "up", "ecn_reductions");
    assert!(reductions >= 10.0 && reductions <= marks, "{reductions} reductions, {marks} marks");
    assert!(get(&r, t.kind, "up", t.fast_retransmits) <= 1.0);
    let halved = halvings(&r, t.cwnd, "cwnd", 1.0);
    assert!(halved as f64 >= 0.8 * reductions, "{halved} halvings for {reductions} reductions");
    assert!(get(&r, t.goodput.0, t.goodput.1, "goodput") > goodput_share * 10e6);

    let plain = through(plain_queue, &(t.apps)(false));
    assert!(get(&plain, "flow", "up", "drops") > 20.0);
    assert!(plain.scalars.get("flow", "up", "marks").is_none());
    let rtx: f64 = t.retransmissions.iter().map(|m| get(&plain, t.kind, "up", m)).sum();
    assert!(rtx >= 20.0, "{rtx} retransmissions");
    Outcome { ecn: r, plain, marks, reductions }
}

/// The runs of [`marked_instead_of_dropped`].
struct Outcome {
    /// The run with ECN.
    ecn: RunResult,
    /// The run without.
    plain: RunResult,
    /// Packets marked in the ECN run.
    marks: f64,
    /// Window reductions for ECN in the ECN run.
    reductions: f64,
}

/// The number of times a series fell, after `from` seconds, to at most 60 % of the value it
/// had just before (a halving, allowing for the window's growth between samples).
fn halvings(r: &RunResult, entity: &str, metric: &str, from: f64) -> usize {
    let s = series(r, entity, metric);
    s.windows(2).filter(|w| w[1].0 >= from && w[1].1 <= 0.6 * w[0].1 && w[0].1 > 0.0).count()
}

#[test]
fn tcp_through_red_with_ecn_is_marked_instead_of_dropped() {
    let o = marked_instead_of_dropped(&TCP, RED_ECN, RED, 0.85);
    assert!(o.reductions < o.marks);
}

#[test]
fn sctp_through_red_with_ecn_is_marked_instead_of_dropped() {
    let o = marked_instead_of_dropped(&SCTP, RED_ECN, RED, 0.85);
    assert!(o.reductions < o.marks);
    assert_eq!(get(&o.ecn, "sctp", "sink", "ecn_ce_received"), o.marks);
}

// CoDel keeps the standing queue near 5 ms, less than this path's bandwidth-delay product, so
// a single flow that halves its window leaves the link idle for part of each cycle (about
// 82 % busy here); RED's 15-packet threshold band keeps it fuller.

#[test]
fn tcp_through_codel_with_ecn_is_marked_instead_of_dropped() {
    let o = marked_instead_of_dropped(&TCP, CODEL_ECN, CODEL, 0.7);
    assert_eq!(get(&o.ecn, "iface", "R/eth1", "codel_marks"), o.marks);
    assert_eq!(get(&o.ecn, "iface", "R/eth1", "codel_drops"), 0.0);
    assert!(get(&o.plain, "iface", "R/eth1", "codel_drops") > 20.0);
}

#[test]
fn sctp_through_codel_with_ecn_is_marked_instead_of_dropped() {
    let o = marked_instead_of_dropped(&SCTP, CODEL_ECN, CODEL, 0.7);
    assert_eq!(get(&o.ecn, "iface", "R/eth1", "codel_marks"), o.marks);
    assert_eq!(get(&o.ecn, "sctp", "sink", "ecn_ce_received"), o.marks);
}
