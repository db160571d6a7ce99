//! Scenario keys of the CMT retransmission policies and CMT-PF (`apps[].sctp.cmt.retransmit`,
//! `pf`, `pf_cwnd`) and the `freebsd-cmt` preset, on the failover example's two routed paths
//! with CMT on both ends: the keys reach the engine, and resolve to what the engine uses.
#![allow(clippy::unwrap_used)]

mod common;

use common::{example, get, run_with};
use netsim::world::RunResult;

/// `examples/failover.toml` without its fault, for 20 s, the A-R1 link (path 0) losing 2 %
/// of what A sends, CMT on both ends, with `overrides`.
fn lossy_path0(overrides: &[&str]) -> RunResult {
    let text = example("failover.toml").replacen(
        "ends = [\"A/eth0\", \"R1/eth0\"]",
        "ends = [\"A/eth0\", \"R1/eth0\"]\nloss = { model = \"bernoulli\", p = 0.02 }",
        1,
    );
    let mut all = vec![
        "duration=20s",
        "faults=[]",
        "apps[0].sctp.cmt.enabled=true",
        "apps[1].sctp.cmt.enabled=true",
        "apps[0].sctp.recv_buffer=4MiB",
        "apps[1].sctp.recv_buffer=4MiB",
    ];
    all.extend_from_slice(overrides);
    run_with(&text, &all)
}

fn retransmitted(r: &RunResult) -> [f64; 2] {
    [0, 1].map(|i| get(r, "sctp_path", &format!("upload/path{i}"), "bytes_retransmitted"))
}

#[test]
fn the_retransmit_key_chooses_where_losses_are_repaired() {
    // RTX-SAME repairs path 0's losses on path 0 (and path 1's queue overflows on path 1);
    // the ideal RTX-LOSSRATE, which the simulator tells each path's configured loss, sends
    // every retransmission to path 1, whose links are configured loss-free.
    let same = retransmitted(&lossy_path0(&["apps[1].sctp.cmt.retransmit=\"same\""]));
    assert!(same[0] > 20_000.0, "{same:?}");
    let lossrate = retransmitted(&lossy_path0(&["apps[1].sctp.cmt.retransmit=\"lossrate\""]));
    assert!(lossrate[0] == 0.0 && lossrate[1] > same[1] + 20_000.0, "{lossrate:?} vs {same:?}");
}

#[test]
fn cmt_pf_and_policy_keys_resolve_to_what_the_engine_uses() {
    let text = example("failover.toml");
    let resolved = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        scenario::parse(&text, &sets).unwrap().resolved_toml(1)
    };
    let r = resolved(&["apps[1].sctp.cmt.enabled=true"]);
    for key in ["retransmit = \"alternate\"", "pf = false", "dac = true"] {
        assert!(r.contains(key), "{key} missing from\n{r}");
    }
    // freebsd-cmt: its policy and DAC off stay unless given.
    let r = resolved(&["apps[1].sctp.preset=\"freebsd-cmt\"", "apps[1].sctp.cmt.scheduler=\"round-robin\""]);
    for key in ["retransmit = \"cwnd\"", "dac = false"] {
        assert!(r.contains(key), "{key} missing from\n{r}");
    }
    let r = resolved(&["apps[1].sctp.cmt.pf=true", "apps[1].sctp.cmt.pf_cwnd=3"]);
    assert!(r.contains("pf = true") && r.contains("pf_cwnd = 3"), "{r}");
    let sets = ["apps[1].sctp.cmt.pf_cwnd=5".to_string()];
    let err = scenario::parse(&text, &sets).unwrap_err().to_string();
    assert!(err.contains("apps[1].sctp.cmt.pf_cwnd"), "{err}");
}
