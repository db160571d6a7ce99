//! Whole-scenario SCTP checks for what the reproductions rely on: a finite transfer of
//! whole messages reports its completion time and its first and last delivery instants, and
//! `sctp.pmtu` sets the packet size.
#![allow(clippy::unwrap_used)]

use netsim::world::RunResult;

fn run(text: &str) -> RunResult {
    let s = scenario::parse(text, &[]).unwrap();
    s.build(s.seed, None).unwrap().world.run().unwrap()
}

fn get(r: &RunResult, kind: &str, entity: &str, metric: &str) -> f64 {
    r.scalars.get(kind, entity, metric).unwrap_or_else(|| panic!("no scalar {kind} {entity} {metric}"))
}

/// A uploads `bytes` (or without end) in 4000-byte messages to B over a 10 Mbit/s, 30 ms
/// link with MTU 3500.
fn transfer(bytes: Option<u64>, pmtu: Option<u32>) -> String {
    let bytes = bytes.map_or(String::new(), |b| format!("bytes = {b}"));
    let pmtu = pmtu.map_or(String::new(), |p| format!("pmtu = {p}"));
    format!(
        r#"
duration = "20s"
[[nodes]]
name = "A"
interfaces = [{{ address = "10.0.0.1" }}]
[[nodes]]
name = "B"
interfaces = [{{ address = "10.0.0.2" }}]
[[links]]
ends = ["A/eth0", "B/eth0"]
rate = "10Mbps"
delay = "30ms"
mtu = 3500
[[apps]]
kind = "sctp-sink"
name = "sink"
node = "B"
[[apps]]
kind = "sctp-bulk"
name = "up"
node = "A"
peer = "B"
start = "1s"
{bytes}
message_size = 4000
sctp = {{ {pmtu} }}
"#
    )
}

#[test]
fn a_finite_transfer_reports_completion_and_delivery_instants() {
    let r = run(&transfer(Some(400_000), Some(3500)));
    assert_eq!(get(&r, "sctp", "sink", "delivered_bytes"), 400_000.0);
    assert_eq!(get(&r, "sctp", "sink", "delivered_messages"), 100.0);
    let first = get(&r, "sctp", "sink", "first_delivery_at");
    let last = get(&r, "sctp", "sink", "last_delivery_at");
    // Handshake (2 RTTs of 60 ms) plus one one-way delay before the first delivery.
    assert!(first > 1.15 && first < 1.3, "first delivery at {first}");
    assert!(last > first && last < 3.0, "last delivery at {last}");
    let done = get(&r, "sctp", "up", "completion_time");
    // Completion is the last SACK's arrival: after the last delivery, measured from start.
    assert!(done + 1.0 > last && done + 1.0 < last + 0.5, "completed {done} s after the start");
    assert!(get(&r, "sctp", "up", "completion_time") < 2.0);
}

#[test]
fn an_unlimited_transfer_has_no_completion_time() {
    let r = run(&transfer(None, None));
    assert!(r.scalars.get("sctp", "up", "completion_time").is_none());
    assert!(r.scalars.get("sctp", "sink", "last_delivery_at").is_some());
}

#[test]
fn pmtu_sets_the_packet_size() {
    let packets = |pmtu: Option<u32>| {
        let r = run(&transfer(Some(400_000), pmtu));
        assert_eq!(get(&r, "sctp", "sink", "delivered_bytes"), 400_000.0);
        get(&r, "sctp_path", "up/path0", "packets_sent")
    };
    let small = packets(None);
    let large = packets(Some(3500));
    // 4000-byte messages: 3 fragments at 1500 bytes, 2 at 3500 (plus control packets).
    assert!(small >= 300.0, "{small} packets at the default 1500-byte PMTU");
    assert!((200.0..230.0).contains(&large), "{large} packets at PMTU 3500");
}
