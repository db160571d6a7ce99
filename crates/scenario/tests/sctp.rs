//! Whole-scenario SCTP checks: one association fills an uncongested path; a small receive
//! buffer or a slow reader limits goodput as the window says; the failover, PF and
//! switch-back examples move traffic when RFC 9260 and RFC 7829 say; the same seed gives the
//! same results; SCTP and TCP share a bottleneck without either starving; and what the
//! reproductions rely on: a finite transfer reports its completion time and first and last
//! delivery instants, and `sctp.pmtu` sets the packet size.
#![allow(clippy::unwrap_used)]

mod common;

use common::{example, get, run, run_with, series};
use netsim::world::RunResult;

/// H0 – R – H1, single-homed: a 1 Gbit/s, 1 ms access link and a `rate` bottleneck with
/// `delay` one way and a 100-packet drop-tail queue; an unlimited SCTP upload from 0.5 s.
/// `sink` and `sctp` are extra keys of the sink app and of both association tables.
fn one_path(rate: &str, delay: &str, duration: &str, sink: &str, sctp: &str) -> RunResult {
    let text = common::chain(
        "rate = \"1Gbps\"\ndelay = \"1ms\"\nqueue = { limit = 1000 }",
        &format!("rate = \"{rate}\"\ndelay = \"{delay}\"\nqueue = {{ limit = 100 }}"),
        &format!(
            r#"
[[apps]]
kind = "sctp-sink"
name = "sink"
node = "H1"
{sink}
sctp = {{ {sctp} }}
[[apps]]
kind = "sctp-bulk"
name = "up"
node = "H0"
peer = "H1"
start = "0.5s"
sctp = {{ {sctp} }}
"#
        ),
    );
    run_with(&text, &[&format!("duration={duration}")])
}

#[test]
fn one_association_fills_an_uncongested_path() {
    // 1452 of every 1500 bytes on the wire are user data, so 96.8 % of the link rate is the
    // most goodput can be; slow start and the queue-overflow losses that end it cost the rest.
    let r = one_path("10Mbps", "10ms", "60s", "", r#"recv_buffer = "1MiB""#);
    let goodput = get(&r, "sctp", "sink", "goodput");
    assert!(goodput >= 0.95 * 10e6, "goodput {goodput}");
    assert!(get(&r, "iface", "R/eth1", "utilization") > 0.97);
    assert_eq!(get(&r, "sctp", "up", "t3_timeouts"), 0.0, "loss is repaired by fast retransmit");
}

#[test]
fn a_small_receive_buffer_limits_goodput_to_a_rwnd_over_rtt() {
    // 100 Mbit/s, 20 ms each way: the 64 KiB window, not the link, is the limit.
    let r = one_path("100Mbps", "20ms", "30s", "", r#"recv_buffer = "64KiB""#);
    let goodput = get(&r, "sctp", "sink", "goodput");
    // RTT: 2 x (20 + 1) ms of propagation plus serialisation of a packet and its SACK.
    let rtt = 2.0 * 21e-3 + 1500.0 * 8.0 / 100e6 + 1500.0 * 8.0 / 1e9;
    let window = 65536.0 * 8.0 / rtt;
    assert!((goodput / window - 1.0).abs() < 0.05, "goodput {goodput}, a_rwnd/RTT {window}");
    assert_eq!(get(&r, "iface", "R/eth1", "drops"), 0.0);
}

#[test]
fn a_slow_reader_limits_goodput_to_its_read_rate() {
    let r = one_path("10Mbps", "10ms", "60s", r#"drain_rate = "2Mbps""#, r#"recv_buffer = "64KiB""#);
    let goodput = get(&r, "sctp", "sink", "goodput");
    assert!((goodput / 2e6 - 1.0).abs() < 0.03, "goodput {goodput}");
    // The sender is held back by the receiver's window, not by losses: the buffer fills, and
    // a_rwnd settles near what the reader frees in one round trip (2 Mbit/s x ~24 ms = 6 kB).
    assert_eq!(get(&r, "iface", "R/eth1", "drops"), 0.0);
    let a_rwnd = series(&r, "sink", "a_rwnd");
    assert!(a_rwnd.iter().filter(|&&(t, _)| t > 1.0).all(|&(_, v)| v < 16384.0), "{a_rwnd:?}");
}

#[test]
fn failover_examples_move_traffic_when_the_rfcs_say() {
    // failover.toml: RFC 9260 defaults; inactive after 1+2+4+8+16+32 s of backed-off T3-rtx
    // timeouts (the break comes 4.28 ms after the last send before it, hence .004).
    let r = run(&example("failover.toml"));
    let t = |m: &str| get(&r, "sctp", "upload", m);
    assert!((t("failover_time") - 63.004).abs() < 1e-3);
    assert!((t("first_alternate_rtx_time") - 1.004).abs() < 1e-3);
    // The last timeout sends one packet of its retransmissions to the alternate (RFC 9260
    // §6.3.3 E3); the others, and new data after them (§6.1 C), wait for that packet's
    // delayed SACK: 200 ms plus the alternate's round trip.
    let wait = t("data_moved_time") - t("failover_time");
    assert!(wait > 0.2 && wait < 0.3, "{wait}");
    assert_eq!(get(&r, "sctp_path", "upload/path0", "state"), 2.0);

    // pf-failover.toml: PF after the first timeout, new data moves within a few RTTs
    // (the retransmissions go first), the primary is inactive after the same 63 s.
    let r = run(&example("pf-failover.toml"));
    let t = |m: &str| get(&r, "sctp", "upload", m);
    assert!((t("pf_time") - 1.004).abs() < 1e-3);
    assert!(t("data_moved_time") > t("pf_time") && t("data_moved_time") < 1.5, "{}", t("data_moved_time"));
    assert!((t("failover_time") - 63.004).abs() < 1e-3);

    // switch-back.toml: inactive after 1+2+4 s, repaired at 30 s; back on the primary with
    // the first HEARTBEAT ACK after the repair, which carries traffic again at the end.
    let r = run(&example("switch-back.toml"));
    let t = |m: &str| get(&r, "sctp", "upload", m);
    assert!((t("failover_time") - 7.004).abs() < 1e-3);
    let back = t("switch_back_time") + 10.0;
    assert!(back > 30.0 && back < 60.0, "{back}");
    assert_eq!(get(&r, "sctp_path", "upload/path0", "state"), 0.0);
    let after: Vec<f64> = series(&r, "upload/path0", "flight_size")
        .into_iter()
        .filter(|&(t, _)| t > back + 1.0)
        .map(|(_, v)| v)
        .collect();
    assert!(!after.is_empty() && after.iter().all(|&v| v > 0.0), "no data on the primary after switch-back");
}

#[test]
fn the_same_seed_gives_identical_results() {
    let text = example("pf-failover.toml");
    let (a, b) = (run(&text), run(&text));
    assert_eq!(a.scalars, b.scalars);
    let ts = |r: &RunResult| (r.timeseries.time_ns.clone(), r.timeseries.series.clone(), r.timeseries.value.clone());
    assert_eq!(ts(&a), ts(&b));
    assert_eq!(a.events, b.events);
    // Another seed changes the heartbeat jitter, hence the results.
    let c = run_with(&text, &["seed=2"]);
    assert_ne!(a.events, c.events);
}

#[test]
fn sctp_and_tcp_share_a_bottleneck_without_either_starving() {
    // Two senders behind R, 10 Mbit/s 10 ms bottleneck with a 100-packet drop-tail queue: one
    // SCTP association (RFC 9260 congestion control) and one TCP connection, both with large
    // enough buffers that only the network limits them. BENCHMARKS.md reports the split.
    for cc in ["newreno", "sack", "cubic"] {
        let text = r#"
duration = "120s"
[[nodes]]
name = "S"
interfaces = [{ address = "10.0.0.1" }]
[[nodes]]
name = "T"
interfaces = [{ address = "10.0.2.1" }]
[[nodes]]
name = "R"
kind = "router"
interfaces = [{ address = "10.0.0.2" }, { address = "10.0.2.2" }, { address = "10.0.1.2" }]
[[nodes]]
name = "D"
interfaces = [{ address = "10.0.1.1" }]
[[links]]
ends = ["S/eth0", "R/eth0"]
rate = "100Mbps"
delay = "5ms"
[[links]]
ends = ["T/eth0", "R/eth1"]
rate = "100Mbps"
delay = "5ms"
[[links]]
ends = ["R/eth2", "D/eth0"]
rate = "10Mbps"
delay = "10ms"
queue = { limit = 100 }
[[apps]]
kind = "sctp-sink"
name = "sctp-sink"
node = "D"
sctp = { recv_buffer = "1MiB" }
[[apps]]
kind = "sctp-bulk"
name = "sctp"
node = "S"
peer = "D"
start = "1s"
sctp = { recv_buffer = "1MiB" }
[[apps]]
kind = "tcp-sink"
node = "D"
tcp = { recv_buffer = "1MiB" }
[[apps]]
kind = "tcp-bulk"
name = "tcp"
node = "T"
dst = "D"
start = "1s"
tcp = { cc = "CC", send_buffer = "1MiB" }
"#
        .replace("CC", cc);
        let r = run(&text);
        let sctp = get(&r, "sctp", "sctp-sink", "goodput");
        let tcp = get(&r, "flow", "tcp", "goodput");
        let share = sctp / (sctp + tcp);
        println!("| {cc} | {:.2} | {:.2} | {:.3} |", sctp / 1e6, tcp / 1e6, share);
        assert!(sctp + tcp > 0.93 * 10e6, "{cc}: together they fill the bottleneck");
        assert!((0.2..=0.8).contains(&share), "{cc}: SCTP share {share}");
    }
}

/// A uploads `bytes` (or without end) in 4000-byte messages to B over a 10 Mbit/s, 30 ms
/// link with MTU 3500.
fn transfer(bytes: Option<u64>, pmtu: Option<u32>) -> String {
    let bytes = bytes.map_or(String::new(), |b| format!("bytes = {b}"));
    let pmtu = pmtu.map_or(String::new(), |p| format!("pmtu = {p}"));
    let apps = format!(
        r#"
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
    );
    common::pair("20s", "rate = \"10Mbps\"\ndelay = \"30ms\"\nmtu = 3500", &apps)
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

#[test]
fn two_applications_opening_an_association_to_each_other_at_once_share_one() {
    // Both INITs cross on the wire (RFC 9260 §5.2.1): each endpoint answers the other's from
    // COOKIE-WAIT, the cookies resolve the collision (§5.2.4 B/D), and each side ends with one
    // association carrying both transfers.
    let link = "rate = \"10Mbps\"\ndelay = \"5ms\"";
    let apps = r#"
[[apps]]
kind = "sctp-bulk"
name = "there"
node = "H0"
peer = "H1"
port = 5000
peer_port = 5000
bytes = "1MB"
start = "0.5s"
[[apps]]
kind = "sctp-bulk"
name = "back"
node = "H1"
peer = "H0"
port = 5000
peer_port = 5000
bytes = "1MB"
start = "0.5s"
[record]
events = ["sctp"]
"#;
    let r = run(&common::chain(link, link, apps));
    for app in ["there", "back"] {
        assert_eq!(get(&r, "sctp", app, "delivered_bytes"), 1e6, "{app}");
        assert_eq!(get(&r, "sctp", app, "closed"), 0.0, "{app}");
        assert!(get(&r, "sctp", app, "completion_time") > 0.0, "{app}");
        let connected: Vec<usize> = (0..r.events.kind.len())
            .filter(|&i| r.events.entity[i] == app && r.events.detail[i] == "Connected")
            .collect();
        assert_eq!(connected.len(), 1, "{app}: one association");
    }
}

#[test]
fn a_slow_reader_keeps_its_read_rate_over_several_associations() {
    // Two uploads from H0 feed one sink: its read rate is the application's, whatever the
    // number of associations, and each association reports what was read from it.
    let text = common::chain(
        "rate = \"1Gbps\"\ndelay = \"1ms\"\nqueue = { limit = 1000 }",
        "rate = \"10Mbps\"\ndelay = \"10ms\"\nqueue = { limit = 100 }",
        r#"
[[apps]]
kind = "sctp-sink"
name = "sink"
node = "H1"
drain_rate = "2Mbps"
sctp = { recv_buffer = "64KiB" }
[[apps]]
kind = "sctp-bulk"
name = "up0"
node = "H0"
peer = "H1"
start = "0.5s"
[[apps]]
kind = "sctp-bulk"
name = "up1"
node = "H0"
peer = "H1"
start = "0.6s"
"#,
    );
    let r = run_with(&text, &["duration=30s"]);
    let goodput = get(&r, "sctp", "sink", "goodput");
    assert!((goodput / 2e6 - 1.0).abs() < 0.03, "goodput {goodput}");
    let (a, b) = (get(&r, "sctp", "sink/assoc0", "delivered_bytes"), get(&r, "sctp", "sink/assoc1", "delivered_bytes"));
    assert_eq!(a + b, get(&r, "sctp", "sink", "delivered_bytes"));
    assert!((a / b - 1.0).abs() < 0.1, "the reads go round the associations: {a} {b}");
    // The second association's transport results are its own.
    assert_eq!(get(&r, "sctp", "sink/assoc1", "closed"), 0.0);
    assert!(r.scalars.get("sctp_path", "sink/assoc1/path0", "bytes_acked").is_some());
}

#[test]
fn a_sender_with_several_peers_opens_an_association_to_each_and_reports_each() {
    // A – B and A – C: one application on A uploads 500 kB to B and 500 kB to C.
    let text = r#"
duration = "20s"
[[nodes]]
name = "A"
interfaces = [{ address = "10.0.0.1" }, { address = "10.0.1.1" }]
[[nodes]]
name = "B"
interfaces = [{ address = "10.0.0.2" }]
[[nodes]]
name = "C"
interfaces = [{ address = "10.0.1.2" }]
[[links]]
ends = ["A/eth0", "B/eth0"]
rate = "10Mbps"
delay = "5ms"
[[links]]
ends = ["A/eth1", "C/eth0"]
rate = "10Mbps"
delay = "20ms"
[[apps]]
kind = "sctp-sink"
name = "sink-b"
node = "B"
[[apps]]
kind = "sctp-sink"
name = "sink-c"
node = "C"
[[apps]]
kind = "sctp-bulk"
name = "up"
node = "A"
peer = "B"
more_peers = ["C"]
bytes = 500000
streams = 2
"#;
    let r = run(text);
    for sink in ["sink-b", "sink-c"] {
        assert_eq!(get(&r, "sctp", sink, "delivered_bytes"), 500_000.0, "{sink}");
        // Two streams used on each association.
        let per_stream = get(&r, "sctp", &format!("{sink}/stream1"), "delivered_bytes");
        assert!(per_stream > 100_000.0, "{sink}: {per_stream}");
    }
    // The first association under the application's name, the second under up/assoc1.
    assert!(get(&r, "sctp", "up", "sent_bytes") >= 500_000.0);
    assert!(get(&r, "sctp", "up/assoc1", "sent_bytes") >= 500_000.0);
    assert_eq!(get(&r, "sctp", "up/assoc1", "closed"), 0.0);
    assert!(get(&r, "sctp_path", "up/assoc1/path0", "bytes_acked") >= 500_000.0);
    // The upload completes when both transfers are acknowledged; C's 40 ms round trip is the
    // longer one.
    let done = get(&r, "sctp", "up", "completion_time");
    assert!(done > 0.4 && done < 5.0, "{done}");
}

#[test]
fn the_ecn_switch_is_negotiated_per_association_and_off_by_default() {
    // A drop-tail queue never marks: ECN is agreed, nothing is echoed or reacted to.
    let both = one_path("10Mbps", "10ms", "3s", "", "ecn = true");
    assert_eq!(get(&both, "sctp", "up", "ecn_negotiated"), 1.0);
    assert_eq!(get(&both, "sctp", "sink", "ecn_negotiated"), 1.0);
    assert_eq!(get(&both, "sctp", "up", "ecn_reductions"), 0.0);
    assert_eq!(get(&both, "sctp_path", "up/path0", "ecn_reductions"), 0.0);
    // Off by default: the counters are not reported at all, and the transfer is the same.
    let off = one_path("10Mbps", "10ms", "3s", "", "");
    assert!(off.scalars.get("sctp", "up", "ecn_negotiated").is_none());
    assert_eq!(get(&off, "sctp", "sink", "delivered_bytes"), get(&both, "sctp", "sink", "delivered_bytes"));
}

#[test]
fn the_handover_policy_and_asconf_keys_reach_the_application() {
    let text = r#"
[[nodes]]
name = "A"
interfaces = [{ address = "10.0.0.1" }]
[[nodes]]
name = "B"
interfaces = [{ address = "10.0.0.2" }]
[[links]]
ends = ["A/eth0", "B/eth0"]
[[apps]]
kind = "sctp-sink"
node = "B"
[[apps]]
kind = "sctp-bulk"
node = "A"
peer = "B"
sctp = { auth = true, asconf = true, handover = "break-before-make" }
"#;
    let s = scenario::model::parse(text, &[]).unwrap();
    let scenario::model::AppSpec::Sctp { config, .. } = &s.apps[1] else { panic!("an SCTP app") };
    assert_eq!(config.handover, netsim::apps::handover::HandoverPolicy::BreakBeforeMake);
    assert!(config.config.auth && config.config.asconf);
    let scenario::model::AppSpec::Sctp { config, .. } = &s.apps[0] else { panic!("an SCTP app") };
    assert_eq!(config.handover, netsim::apps::handover::HandoverPolicy::None);
    assert!(!config.config.auth && !config.config.asconf);
}

/// The error `overrides` of the failover example get (its `apps[1]` is the SCTP upload, on the
/// rfc9260 preset).
fn failover_error(overrides: &[&str]) -> String {
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    scenario::parse(&example("failover.toml"), &overrides).unwrap_err().to_string()
}

#[test]
fn rto_errors_name_the_key_given_with_its_value_and_the_other() {
    // These named rto_initial for a zero rto_min, gave no values, and named
    // `congestion.factor`, which is no key.
    assert_eq!(
        failover_error(&[r#"apps[1].sctp.rto_min="0s""#]),
        r#"apps[1].sctp.rto_min: "0s" is not a positive duration"#
    );
    assert_eq!(
        failover_error(&[r#"apps[1].sctp.rto_initial="0ms""#]),
        r#"apps[1].sctp.rto_initial: "0ms" is not a positive duration"#
    );
    assert_eq!(
        failover_error(&[r#"apps[1].sctp.rto_max="0.5s""#]),
        r#"apps[1].sctp.rto_max: "0.5s" is below rto_min ("1s" of preset "rfc9260")"#
    );
    assert_eq!(
        failover_error(&[r#"apps[1].sctp.rto_min="100s""#]),
        r#"apps[1].sctp.rto_min: "100s" is above rto_max ("60s" of preset "rfc9260")"#
    );
    assert_eq!(
        failover_error(&[r#"apps[1].sctp.rto_min="2s""#, r#"apps[1].sctp.rto_max="1s""#]),
        r#"apps[1].sctp.rto_max: "1s" is below rto_min ("2s")"#
    );
    assert_eq!(
        failover_error(&[r#"apps[1].sctp.congestion="ca-shrink""#, "apps[1].sctp.congestion_factor=1"]),
        "apps[1].sctp.congestion_factor: 1 is out of range for \"ca-shrink\" (expected at least 0 and below 1: each \
         step takes factor * cwnd off the window)"
    );
    assert_eq!(
        failover_error(&["apps[1].sctp.recv_buffer=1000"]),
        "apps[1].sctp.recv_buffer: 1000 is below the 1500 bytes RFC 9260 §6 requires of the initial receive window"
    );
    // Values at the limits are accepted.
    let ok = [r#"apps[1].sctp.rto_min="60s""#, "apps[1].sctp.recv_buffer=1500", "apps[1].sctp.congestion_factor=0.99"];
    scenario::parse(&example("failover.toml"), &ok.map(String::from)).unwrap();
}

#[test]
fn sack_delay_is_at_most_the_500ms_rfc_9260_allows() {
    assert_eq!(
        failover_error(&[r#"apps[1].sctp.sack_delay="10s""#]),
        r#"apps[1].sctp.sack_delay: "10s" is longer than the 500ms RFC 9260 §6.2 allows"#
    );
    assert_eq!(
        failover_error(&[r#"apps[1].sctp.sack_delay="500001us""#]),
        r#"apps[1].sctp.sack_delay: "500001us" is longer than the 500ms RFC 9260 §6.2 allows"#
    );
    let s = scenario::parse(&example("failover.toml"), &[r#"apps[1].sctp.sack_delay="500ms""#.into()]).unwrap();
    let scenario::model::AppSpec::Sctp { config, .. } = &s.apps[1] else { panic!("an SCTP app") };
    assert_eq!(config.config.sack_delay, netsim::Duration::from_millis(500));
}

#[test]
fn a_break_scheduled_after_the_end_of_the_run_is_not_reported() {
    // The failover example's link breaks at 10 s: a 5-s run saw no break.
    let short = run_with(&example("failover.toml"), &["duration=5s", "record.capture=[]"]);
    assert_eq!(short.scalars.get("sctp", "upload", "primary_break_at"), None);
    let long = run_with(&example("failover.toml"), &["duration=12s", "record.capture=[]"]);
    assert_eq!(get(&long, "sctp", "upload", "primary_break_at"), 10.0);
}
