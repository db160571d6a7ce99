//! Scenario keys of Concurrent Multipath Transfer (`apps[].sctp.cmt`): the failover
//! example's two routed 10 Mbit/s paths (20 and 40 ms round trips) carry new data on both
//! paths when `cmt.enabled` is set on both ends, and close to twice the goodput; the keys
//! reach the engine (`scheduler`, `sfr`); and a scenario without them is unchanged.
#![allow(clippy::unwrap_used)]

mod common;

use common::{example, get, run_with};
use netsim::world::RunResult;

/// `examples/failover.toml` without its fault, for 20 s, with `overrides`.
fn two_paths(overrides: &[&str]) -> RunResult {
    let text = example("failover.toml");
    let mut all = vec!["duration=20s", "faults=[]", "apps[0].sctp.recv_buffer=4MiB", "apps[1].sctp.recv_buffer=4MiB"];
    all.extend_from_slice(overrides);
    run_with(&text, &all)
}

const CMT: [&str; 2] = ["apps[0].sctp.cmt.enabled=true", "apps[1].sctp.cmt.enabled=true"];

fn per_path_bytes(r: &RunResult) -> [f64; 2] {
    [get(r, "sctp_path", "upload/path0", "bytes_sent"), get(r, "sctp_path", "upload/path1", "bytes_sent")]
}

#[test]
fn cmt_keys_spread_new_data_over_both_paths() {
    let single = two_paths(&[]);
    assert_eq!(per_path_bytes(&single)[1], 0.0);
    let cmt = two_paths(&CMT);
    let bytes = per_path_bytes(&cmt);
    assert!(bytes.iter().all(|&b| b > 0.35 * (bytes[0] + bytes[1])), "{bytes:?}");
    let (g1, g2) = (get(&single, "sctp", "sink", "goodput"), get(&cmt, "sctp", "sink", "goodput"));
    assert!(g2 > 1.8 * g1, "goodput single path {g1}, CMT {g2}");

    // The scheduler key: CMT's algorithms with the primary as the only data path.
    let mut primary = CMT.to_vec();
    primary.push("apps[1].sctp.cmt.scheduler=primary");
    assert_eq!(per_path_bytes(&two_paths(&primary))[1], 0.0);

    // The sfr key: without split fast retransmit the reordering causes fast retransmissions.
    let fr = |r: &RunResult| get(r, "sctp", "upload", "fast_retransmissions");
    let mut no_sfr = CMT.to_vec();
    no_sfr.push("apps[1].sctp.cmt.sfr=false");
    assert!(fr(&two_paths(&no_sfr)) > 5.0 * fr(&cmt).max(1.0), "{} vs {}", fr(&two_paths(&no_sfr)), fr(&cmt));
}

#[test]
fn cmt_keys_are_resolved_only_where_given() {
    let text = example("failover.toml");
    let plain = scenario::parse(&text, &[]).unwrap();
    assert!(!plain.resolved_toml(1).contains("cmt"), "a scenario without cmt keys resolves as before");
    let with = scenario::parse(&text, &["apps[1].sctp.cmt.enabled=true".to_string()]).unwrap();
    let resolved = with.resolved_toml(1);
    for key in ["enabled = true", "sfr = true", "cuc = true", "dac = true"] {
        assert!(resolved.contains(key), "{key} missing from\n{resolved}");
    }
}

#[test]
fn buffer_splitting_keys_reach_the_engine() {
    // A send buffer and receive window small enough that the slower path's chunks fill them.
    let base = [
        "apps[0].sctp.cmt.enabled=true",
        "apps[1].sctp.cmt.enabled=true",
        "apps[0].sctp.recv_buffer=64KiB",
        "apps[1].sctp.send_buffer=64KiB",
        "duration=5s",
    ];
    let with = |extra: &[&str]| {
        let mut all = base.to_vec();
        all.extend_from_slice(extra);
        run_with(&example("failover.toml"), &[&all[..], &["faults=[]"]].concat())
    };
    let plain = per_path_bytes(&with(&[]));
    assert_eq!(plain, per_path_bytes(&with(&["apps[1].sctp.cmt.buffer_splitting=\"off\""])));
    for side in ["sender", "receiver", "both"] {
        let key = format!("apps[1].sctp.cmt.buffer_splitting=\"{side}\"");
        let split = per_path_bytes(&with(&[&key]));
        assert_ne!(split, plain, "buffer_splitting = {side} made no difference");
    }
    let equal = per_path_bytes(&with(&["apps[1].sctp.cmt.buffer_splitting=\"both\""]));
    let cwnd = per_path_bytes(&with(&[
        "apps[1].sctp.cmt.buffer_splitting=\"both\"",
        "apps[1].sctp.cmt.buffer_split_share=\"cwnd\"",
    ]));
    assert_ne!(equal, cwnd, "buffer_split_share = cwnd made no difference");
}

#[test]
fn buffer_splitting_keys_are_validated_and_resolved_only_where_given() {
    let text = example("failover.toml");
    let err = scenario::parse(&text, &["apps[1].sctp.cmt.buffer_splitting=\"sideways\"".to_string()]).unwrap_err();
    assert!(err.to_string().contains("buffer_splitting"), "{err}");
    let cmt = scenario::parse(&text, &["apps[1].sctp.cmt.enabled=true".to_string()]).unwrap();
    assert!(!cmt.resolved_toml(1).contains("buffer_split"), "absent keys stay absent");
    let with = scenario::parse(
        &text,
        &["apps[1].sctp.cmt.enabled=true".to_string(), "apps[1].sctp.cmt.buffer_splitting=\"both\"".to_string()],
    )
    .unwrap();
    assert!(with.resolved_toml(1).contains("buffer_splitting = \"both\""), "{}", with.resolved_toml(1));
}
