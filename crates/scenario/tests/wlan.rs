//! Scenario keys of WLANs (`wlans[]`, `nodes[].interfaces[].wlan`): the saturation example
//! runs and saturates its channel, the keys reach the MAC, mistakes name their key, and a
//! scenario without WLANs resolves as before.
#![allow(clippy::unwrap_used)]

mod common;

use common::{example, get, run_with};

#[test]
fn saturation_example_saturates_the_channel() {
    let r = run_with(&example("wlan-saturation.toml"), &["duration=1s"]);
    let util = get(&r, "wlan", "bss1", "utilization");
    // Air time only: SIFS, DIFS and idle backoff slots are the rest (about 23 % here).
    assert!(util > 0.7 && util < 0.85, "{util}");
    assert!(get(&r, "wlan", "bss1", "collisions") > 0.0);
    let acked: f64 = (0..10).map(|i| get(&r, "iface", &format!("sta{i}/wlan0"), "mac_tx_acked")).sum();
    assert_eq!(acked, get(&r, "iface", "ap/wlan0", "mac_rx_data") + get(&r, "iface", "ap/wlan0", "mac_rx_duplicates"));
    // Each station is offered 8 Mbit/s, far above its share: its queue overflows.
    assert!(get(&r, "iface", "sta0/wlan0", "drops_queue_full") > 0.0);
    assert_eq!(get(&r, "iface", "sta0/wlan0", "mac_rate"), 54e6);
    let goodput: f64 = (0..10).map(|i| get(&r, "flow", &format!("up{i}"), "goodput")).sum();
    assert!(goodput > 20e6 && goodput < 30e6, "{goodput}");
}

#[test]
fn radio_keys_reach_the_mac() {
    let text = example("wlan-saturation.toml");
    let slow = run_with(&text, &["duration=1s", "nodes[2].interfaces[0].wlan.rate=24"]);
    assert_eq!(get(&slow, "iface", "sta0/wlan0", "mac_rate"), 24e6);
    let rts = run_with(&text, &["duration=1s", "nodes[2].interfaces[0].wlan.rts_threshold=500"]);
    assert!(get(&rts, "iface", "sta0/wlan0", "mac_tx_rts") > 0.0);
    assert_eq!(get(&rts, "iface", "sta1/wlan0", "mac_tx_rts"), 0.0);
    let far = run_with(&text, &["duration=1s", "nodes[2].interfaces[0].wlan.x=200.0"]);
    assert_eq!(get(&far, "iface", "sta0/wlan0", "mac_tx_acked"), 0.0, "out of range at 200 m");
    // The node's own position (nodes[].position, or its mobility) wins over the radio's x, y.
    let placed = run_with(&text, &["duration=1s", "nodes[2].position=[200.0, 0.0]"]);
    assert_eq!(get(&placed, "iface", "sta0/wlan0", "mac_tx_acked"), 0.0);
    let q = run_with(&text, &["duration=1s", "nodes[2].interfaces[0].wlan.queue.limit=5"]);
    assert!(get(&q, "iface", "sta0/wlan0", "queue_packets") <= 5.0);
    let red = run_with(&text, &["duration=1s", "nodes[2].interfaces[0].wlan.queue.kind=\"red\""]);
    // RED's own limit (100 packets by default) replaces drop-tail's 50.
    assert!(get(&red, "iface", "sta0/wlan0", "queue_packets") > 50.0);
}

#[test]
fn mistakes_name_their_key() {
    let text = example("wlan-saturation.toml");
    let err = |o: &str| scenario::model::parse(&text, &[o.to_string()]).unwrap_err().to_string();
    assert!(err("nodes[2].interfaces[0].wlan.channel=\"nope\"").contains("nodes[2].interfaces[0].wlan.channel"));
    assert!(err("nodes[2].interfaces[0].wlan.ap=\"sta1/wlan0\"").contains("nodes[2].interfaces[0].wlan.ap"));
    assert!(err("nodes[2].interfaces[0].wlan.rate=11").contains("not an ERP-OFDM rate"));
    assert!(err("nodes[2].interfaces[0].wlan.tx_power=\"1W\"").contains("tx_power"));
    assert!(err("nodes[0].kind=\"host\"").contains("nodes[0].interfaces[0].wlan.role"));
    assert!(err("wlans[0].channel=14").contains("wlans[0].channel"));
    assert!(err("links[0].ends=[\"ap/wlan0\", \"D/eth0\"]").contains("is a WLAN interface"));
}

#[test]
fn power_in_milliwatts_equals_dbm() {
    let text = example("wlan-saturation.toml");
    let a = scenario::model::parse(&text, &["nodes[2].interfaces[0].wlan.tx_power=\"40mW\"".into()]).unwrap();
    let b = scenario::model::parse(&text, &["nodes[2].interfaces[0].wlan.tx_power=16.0206".into()]).unwrap();
    assert!((a.radios[1].config.tx_power_dbm - b.radios[1].config.tx_power_dbm).abs() < 1e-3);
}

#[test]
fn scenarios_without_wlans_resolve_without_the_keys() {
    let s = scenario::model::parse(&example("failover.toml"), &[]).unwrap();
    let resolved = s.resolved_toml(1);
    assert!(!resolved.contains("wlan"), "{resolved}");
}
