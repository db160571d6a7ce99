//! Whole-scenario TCP checks: a single flow fills an uncongested bottleneck; N flows with equal
//! RTTs share a drop-tail bottleneck fairly; the example with groups and a traffic mix runs.
#![allow(clippy::unwrap_used)]

mod common;

use common::{get, pair, run, uploads};

/// `n` TCP uploads behind R to D over a 10 Mbit/s, 10 ms bottleneck with a 100-packet queue.
fn dumbbell(n: usize, duration: &str, cc: &str) -> String {
    let bottleneck = r#"name = "bottleneck"
rate = "10Mbps"
delay = "10ms"
queue = { limit = 100 }"#;
    let group = format!(
        r#"name = "up"
count = {n}
link = {{ rate = "100Mbps", delay = "5ms", queue = {{ limit = 1000 }} }}
spread = "50ms"
tcp = {{ cc = "{cc}" }}"#
    );
    uploads(duration, bottleneck, &group)
}

#[test]
fn one_flow_reaches_95_percent_of_an_uncongested_bottleneck() {
    for cc in ["newreno", "sack", "cubic"] {
        let r = run(&dumbbell(1, "60s", cc));
        let goodput = get(&r, "flow", "up-1", "goodput");
        assert!(goodput >= 0.95 * 10e6, "{cc}: {goodput}");
        assert!(get(&r, "iface", "R/core", "utilization") > 0.97, "{cc}");
    }
}

#[test]
fn flows_with_equal_rtts_share_a_droptail_bottleneck_fairly() {
    for n in 2..=10 {
        let r = run(&dumbbell(n, "200s", "newreno"));
        let jain = get(&r, "group", "up", "jain_index");
        assert!(jain >= 0.95, "n = {n}: Jain's index {jain}");
        assert!(get(&r, "group", "up", "goodput_sum") > 0.95 * 10e6, "n = {n}");
    }
}

#[test]
fn tcp_example_runs_its_groups_and_mix() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/tcp-dumbbell.toml")).unwrap();
    let s = scenario::parse(&text, &[]).unwrap();
    assert_eq!(s.flow_groups[0].1, ["cross-1", "cross-2", "cross-3", "cross-4"]);
    let r = s.build(s.seed, None).unwrap().world.run().unwrap();
    assert!(get(&r, "flow", "cross-5", "rx_packets") > 0.0, "the VBR source is the fifth host");
    assert_eq!(get(&r, "group", "cross", "flows"), 4.0);
    for i in 1..=3 {
        assert_eq!(get(&r, "flow", &format!("ftp-{i}"), "rx_bytes"), 2e6);
        assert!(get(&r, "tcp", &format!("ftp-{i}"), "completion_time") > 0.0);
    }
    assert!(r.events.kind.iter().any(|k| k == "tcp"));
    // The sink answers each upload's FIN with its own: the sender goes on to TIME-WAIT.
    for i in 1..=3 {
        let entity = format!("ftp-{i}");
        let time_wait = (0..r.events.kind.len())
            .any(|k| r.events.entity[k] == entity && r.events.detail[k].starts_with("state=TIME-WAIT"));
        assert!(time_wait, "{entity} never reached TIME-WAIT");
    }
    // Determinism: the same scenario and seed give the same numbers.
    let again = s.build(s.seed, None).unwrap().world.run().unwrap();
    assert_eq!(format!("{:?}", r.scalars), format!("{:?}", again.scalars));
}

#[test]
fn vbr_and_onoff_sources_keep_their_mean_rates() {
    let apps = r#"
[[apps]]
kind = "udp-sink"
node = "B"
[[apps]]
kind = "udp-vbr"
name = "vbr"
node = "A"
dst = "B"
random = true
[[apps]]
kind = "udp-onoff"
name = "onoff"
node = "A"
dst = "B"
rate = "2Mbps"
on_mean = "300ms"
off_mean = "700ms"
"#;
    let r = run(&pair("1000s", "", apps));
    let rate = |flow: &str| get(&r, "flow", flow, "tx_bytes") * 8.0 / 1000.0;
    // Paper 003, Table 1: 448 kbit/s on average, payloads uniform in 100..200 bytes.
    let vbr = rate("vbr");
    assert!((vbr / 448e3 - 1.0).abs() < 0.03, "{vbr}");
    let mean_size = get(&r, "flow", "vbr", "tx_bytes") / get(&r, "flow", "vbr", "tx_packets");
    assert!((mean_size - 150.0).abs() < 3.0, "{mean_size}");
    // On 30 % of the time at 2 Mbit/s.
    let onoff = rate("onoff");
    assert!((onoff / 600e3 - 1.0).abs() < 0.08, "{onoff}");
    assert_eq!(get(&r, "flow", "onoff", "rx_packets"), get(&r, "flow", "onoff", "tx_packets"));
}

#[test]
fn a_slow_reader_limits_goodput_through_the_window() {
    let apps = r#"
[[apps]]
kind = "tcp-sink"
node = "B"
drain_rate = "2Mbps"
tcp = { recv_buffer = "64KiB" }
[[apps]]
kind = "tcp-bulk"
name = "up"
node = "A"
dst = "B"
tcp = { initial_window = 4 }
"#;
    let r = run(&pair("30s", "rate = \"10Mbps\"\ndelay = \"10ms\"", apps));
    let goodput = get(&r, "flow", "up", "goodput");
    assert!((goodput / 2e6 - 1.0).abs() < 0.03, "{goodput}");
    // The sender was held back by the window, not by loss.
    assert_eq!(get(&r, "tcp", "up", "retransmissions"), 0.0);
    assert_eq!(get(&r, "flow", "up", "drops"), 0.0);
}

#[test]
fn the_ecn_switch_is_negotiated_per_connection_and_off_by_default() {
    let apps = |sink: &str, bulk: &str| {
        format!(
            r#"
[[apps]]
kind = "tcp-sink"
node = "B"
{sink}
[[apps]]
kind = "tcp-bulk"
name = "up"
node = "A"
dst = "B"
bytes = "1MB"
{bulk}
"#
        )
    };
    let link = "rate = \"10Mbps\"\ndelay = \"10ms\"";
    let both = run(&pair("10s", link, &apps("tcp = { ecn = true }", "tcp = { ecn = true }")));
    assert_eq!(get(&both, "tcp", "up", "ecn_negotiated"), 1.0);
    // A drop-tail queue never marks: nothing to echo or react to.
    assert_eq!(get(&both, "tcp", "up", "ecn_reductions"), 0.0);
    let sink_off = run(&pair("10s", link, &apps("", "tcp = { ecn = true }")));
    assert_eq!(get(&sink_off, "tcp", "up", "ecn_negotiated"), 0.0);
    // Off by default: no ECN counters at all.
    let off = run(&pair("10s", link, &apps("", "")));
    assert!(off.scalars.get("tcp", "up", "ecn_negotiated").is_none());
    assert_eq!(get(&off, "flow", "up", "rx_bytes"), get(&both, "flow", "up", "rx_bytes"));
}
