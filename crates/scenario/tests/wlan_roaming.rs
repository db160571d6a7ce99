//! Scenario keys of roaming stations (`nodes[].interfaces[].wlan.association = "roam"` and its
//! scanning and threshold keys, APs' beacons): the roaming example associates, scans and
//! hands over at the thresholds' distances; the keys reach the station; mistakes name their
//! key.
#![allow(clippy::unwrap_used)]

mod common;

use common::{example, get, run_with};

fn steps(r: &netsim::world::RunResult, step: &str) -> Vec<f64> {
    let t = &r.events;
    (0..t.kind.len())
        .filter(|&i| {
            t.kind[i] == "wlan" && t.entity[i] == "mn/wlan0" && t.detail[i].starts_with(&format!("step={step} "))
        })
        .map(|i| t.time_ns[i] as f64 * 1e-9)
        .collect()
}

#[test]
fn roaming_example_hands_over_from_ap1_to_ap2() {
    let r = run_with(&example("wlan-roaming.toml"), &[]);
    let speed = 15.5 / 3.6;
    // Default channel: log-distance, exponent 3, free space at 1 m; channel 1; the scenario's
    // default transmit power, 16.02 dBm.
    let l0 = 20.0 * (4.0 * std::f64::consts::PI * 2412e6 / 299_792_458.0f64).log10();
    let d = |rss: f64| 10f64.powf((16.02 - l0 - rss) / 30.0);
    let ho = steps(&r, "handover");
    assert_eq!(ho.len(), 1, "{ho:?}");
    assert!((ho[0] - (d(-90.0) - 10.0) / speed).abs() < 1e-6, "{ho:?}");
    let scans = steps(&r, "scan-start");
    assert!((scans[1] - (d(-80.0) - 10.0) / speed).abs() < 1e-6, "{scans:?}");
    let assoc: Vec<_> = (0..r.events.kind.len())
        .filter(|&i| r.events.detail[i].starts_with("step=associated "))
        .map(|i| r.events.detail[i].clone())
        .collect();
    assert_eq!(assoc.len(), 2);
    assert!(assoc[0].contains("addr=10.0.1.10"), "{assoc:?}");
    assert!(assoc[1].contains("addr=10.0.2.10"), "{assoc:?}");
    assert_eq!(get(&r, "iface", "mn/wlan0", "wlan_handovers"), 1.0);
    assert!(
        get(&r, "iface", "ap1/wlan0", "mgmt_tx_beacon") > 400.0,
        "{}",
        get(&r, "iface", "ap1/wlan0", "mgmt_tx_beacon")
    );
    assert_eq!(get(&r, "iface", "ap2/wlan0", "mgmt_tx_assoc_resp"), 1.0);
    // The upload ran over AP1 before the handover.
    assert!(get(&r, "flow", "upload", "rx_bytes") > 1e6);
    // RSS series of the station's AP, falling while it walks away from AP1.
    let ts = &r.timeseries;
    let id = ts.names.iter().position(|n| n.entity == "mn/wlan0" && n.metric == "rss").unwrap() as u32;
    let rss: Vec<f64> = (0..ts.value.len()).filter(|&i| ts.series[i] == id).map(|i| ts.value[i]).collect();
    assert!(rss.len() > 300 && rss[1] > -60.0 && rss.iter().any(|&v| v < -85.0), "{}", rss.len());
}

#[test]
fn roaming_keys_reach_the_station() {
    let text = example("wlan-roaming.toml");
    // Passive scanning: the first association waits for a beacon on each channel's dwell.
    let passive = run_with(&text, &["duration=3s", "nodes[4].interfaces[0].wlan.scan=\"passive\""]);
    assert!(passive.scalars.get("iface", "mn/wlan0@bss1", "mgmt_tx_probe_req").is_none());
    let first = steps(&passive, "associated")[0];
    assert!(first > 0.22 && first < 0.23, "{first}");
    // Scan list of one channel: one probe per scan, on bss1 only.
    let one = run_with(&text, &["duration=3s", "nodes[4].interfaces[0].wlan.scan_channels=[\"bss1\"]"]);
    assert!(one.scalars.get("iface", "mn/wlan0@bss2", "mac_tx_frames").is_none());
    assert_eq!(get(&one, "iface", "mn/wlan0@bss1", "mgmt_tx_probe_req"), 1.0);
    // A higher handover threshold hands over earlier.
    let early = run_with(&text, &["nodes[4].interfaces[0].wlan.handover_threshold=-82.0"]);
    assert!(steps(&early, "handover")[0] < 31.0);
    // No beacons.
    let quiet = run_with(&text, &["duration=1s", "nodes[0].interfaces[0].wlan.beacons=false"]);
    assert!(quiet.scalars.get("iface", "ap1/wlan0", "mgmt_tx_beacon").is_none());
}

#[test]
fn roaming_mistakes_name_their_key() {
    let text = example("wlan-roaming.toml");
    let err = |o: &str| scenario::model::parse(&text, &[o.to_string()]).unwrap_err().to_string();
    let w = "nodes[4].interfaces[0].wlan";
    assert!(err(&format!("{w}.scan_channels=[\"bss9\"]")).contains(&format!("{w}.scan_channels[0]")));
    assert!(err(&format!("{w}.scan_channels=[\"bss2\"]")).contains("does not list the station's channel"));
    assert!(err(&format!("{w}.ap=\"ap1/wlan0\"")).contains(&format!("{w}.ap")));
    assert!(err(&format!("{w}.handover_threshold=-70.0")).contains(&format!("{w}.handover_threshold")));
    assert!(err(&format!("{w}.association=\"sometimes\"")).contains(&format!("{w}.association")));
    assert!(err("nodes[0].interfaces[0].wlan.beacon_interval=\"0s\"")
        .contains("nodes[0].interfaces[0].wlan.beacon_interval"));
    assert!(err("nodes[0].interfaces[0].wlan.association=\"roam\"").contains("nodes[0].interfaces[0].wlan.association"));
}
