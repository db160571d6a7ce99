//! Whole-scenario checks on the bundled example.
#![allow(clippy::unwrap_used)]

mod common;

fn example() -> String {
    common::example("two-path-cbr.toml")
}

#[test]
fn example_runs_and_shows_queue_and_failure_drops() {
    let s = scenario::parse(&example(), &[]).unwrap();
    let r = s.build(s.seed, None).unwrap().world.run().unwrap();
    let get = |k: &str, e: &str, m: &str| r.scalars.get(k, e, m).unwrap_or_else(|| panic!("{k} {e} {m}"));
    assert!(get("flow", "path2", "rx_packets") > 4000.0);
    assert!(get("iface", "R1/eth1", "drops_queue_full") > 0.0);
    assert!(get("flow", "path1", "drops_link_down") > 0.0);
    assert!(r.events.kind.iter().any(|k| k == "fault"));
    println!("{}", s.resolved_toml(1));
}
