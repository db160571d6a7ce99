//! Whole-scenario checks of the wired network: exact timing, queues, faults, routing, loss,
//! determinism. Each test writes a small scenario, runs it, and checks results that follow
//! from first principles (computed here, independently of the simulator).
#![allow(clippy::unwrap_used)]

mod common;

use common::{event_times, get, run};

/// H0 -- R -- H1 with the given link lines, a UDP sink on H1 and `extra` lines.
fn chain(link0: &str, link1: &str, extra: &str) -> String {
    common::chain(link0, link1, &format!("[[apps]]\nkind = \"udp-sink\"\nnode = \"H1\"\n{extra}"))
}

#[test]
fn serialisation_and_propagation_are_exact_to_the_nanosecond() {
    // Three 1000-byte payloads sent back to back (at 100 Mbit/s of payload, faster than the
    // 10 Mbit/s link): the datagram is 1000 + 8 (UDP) + 20 (IP) = 1028 bytes.
    let text = chain(
        "rate = \"10Mbps\"\ndelay = \"7ms\"",
        "rate = \"5Mbps\"\ndelay = \"3ms\"",
        "[[apps]]\nkind = \"udp-cbr\"\nname = \"f\"\nnode = \"H0\"\ndst = \"H1\"\nrate = \"100Mbps\"\nstop = \"240us\"\n[record]\nevents = [\"rx\", \"tx\"]",
    );
    let r = run(&text);
    let bits = 1028u64 * 8;
    let tx1 = bits * 1_000_000_000 / 10_000_000; // 822_400 ns on link 0
    let tx2 = bits * 1_000_000_000 / 5_000_000; // 1_644_800 ns on link 1
    let sends: Vec<u64> = (0..3).map(|k| k * 80_000).collect(); // 1000 B at 100 Mbit/s = 80 us apart
    assert_eq!(event_times(&r, "tx", "H0/eth0"), vec![0, tx1, 2 * tx1], "link 0 transmits back to back");
    let at_r: Vec<u64> = (1..=3).map(|k| k * tx1 + 7_000_000).collect();
    assert_eq!(event_times(&r, "rx", "R/eth0"), at_r);
    // Link 1 is slower than link 0, so the router's queue holds packets: each starts when
    // both it has arrived and the previous one has left.
    let mut start = 0;
    let mut expected = vec![];
    for a in &at_r {
        start = (*a).max(start);
        expected.push(start + tx2 + 3_000_000);
        start += tx2;
    }
    assert_eq!(event_times(&r, "rx", "H1/eth0"), expected);
    // One-way delay measured by the sink from the payload timestamps.
    let max_delay = expected[2] - sends[2];
    assert!((get(&r, "flow", "f", "delay_max") - max_delay as f64 * 1e-9).abs() < 1e-12);
    assert!((get(&r, "flow", "f", "delay_min") - (expected[0] - sends[0]) as f64 * 1e-9).abs() < 1e-12);
    assert_eq!(get(&r, "flow", "f", "rx_packets"), 3.0);
}

#[test]
fn drop_tail_holds_exactly_its_limit_and_conserves_packets() {
    // 20 Mbit/s of payload into a 10 Mbit/s link for 2 s, queue of 10 packets.
    let text = chain(
        "rate = \"1Gbps\"",
        "rate = \"10Mbps\"\nqueue = { limit = 10 }",
        "[[apps]]\nkind = \"udp-cbr\"\nname = \"f\"\nnode = \"H0\"\ndst = \"H1\"\nrate = \"20Mbps\"\nstop = \"2s\"",
    );
    let r = run(&text);
    assert_eq!(get(&r, "iface", "R/eth1", "queue_max_packets"), 10.0);
    let (tx, rx, drops) =
        (get(&r, "flow", "f", "tx_packets"), get(&r, "flow", "f", "rx_packets"), get(&r, "flow", "f", "drops"));
    assert_eq!(tx, 5000.0);
    assert_eq!(tx, rx + drops, "every packet is delivered or dropped once the network drains");
    assert_eq!(drops, get(&r, "iface", "R/eth1", "drops_queue_full"));
    // The bottleneck delivers at its line rate: 2 s of 1028-byte datagrams at 10 Mbit/s, plus
    // the queue's 10 and the one in service when the source stops (give or take one).
    let line_rate = 2.0 * 10e6 / (1028.0 * 8.0);
    assert!((rx - line_rate).abs() <= 12.0, "rx {rx} vs line rate {line_rate}");
    // A byte limit of 5 datagrams' worth holds 5.
    let r = run(&text.replace("queue = { limit = 10 }", "queue = { limit = \"5140B\" }"));
    assert_eq!(get(&r, "iface", "R/eth1", "queue_max_packets"), 5.0);
    assert_eq!(get(&r, "iface", "R/eth1", "queue_max_bytes"), 5140.0);
}

#[test]
fn scenarios_choose_the_queue_discipline_by_its_registry_name() {
    for &kind in netsim::queue::KINDS {
        let text = chain("", &format!("queue = {{ kind = \"{kind}\" }}"), "");
        let s = scenario::parse(&text, &[]).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(s.links[1].dirs.each_ref().map(|d| d.queue.kind()), [kind, kind]);
        assert_eq!(s.links[0].dirs[0].queue.kind(), "droptail", "the default");
    }
    let text = chain("", "queue = { kind = \"fifo\" }", "");
    let e = scenario::parse(&text, &[]).unwrap_err().to_string();
    assert!(e.contains("links[1].queue.kind") && e.contains("droptail"), "{e}");
}

#[test]
fn link_failure_loses_queued_and_in_flight_packets_and_recovers() {
    // 1 packet per ms; link 1 fails at 1 s and comes back at 2 s; the run drains by 10 s.
    let text = chain(
        "",
        "delay = \"10ms\"",
        "[[apps]]\nkind = \"udp-cbr\"\nname = \"f\"\nnode = \"H0\"\ndst = \"H1\"\nrate = \"8Mbps\"\nstop = \"3s\"\n\
         [[faults]]\nat = \"1s\"\naction = \"link-down\"\ntarget = \"R-H1\"\n[[faults]]\nat = \"2s\"\naction = \"link-up\"\ntarget = \"R-H1\"\n\
         [record]\nevents = [\"fault\", \"drop\", \"rx\"]",
    );
    let r = run(&text);
    let (tx, rx, lost) = (
        get(&r, "flow", "f", "tx_packets"),
        get(&r, "flow", "f", "rx_packets"),
        get(&r, "flow", "f", "drops_link_down"),
    );
    assert_eq!(tx, 3000.0);
    assert_eq!(tx, rx + lost);
    // Sent in [1s - 10ms - tx time - path, 2s): about 1000 + the ~10 in flight on the 10 ms link.
    assert!((1005.0..=1015.0).contains(&lost), "lost {lost}");
    let rx_times = event_times(&r, "rx", "H1/eth0");
    assert!(rx_times.iter().all(|&t| !(1_000_000_000..2_000_000_000).contains(&t)), "nothing arrives while down");
    assert!(rx_times.iter().any(|&t| t > 2_000_000_000), "traffic resumes after repair");
    assert_eq!(event_times(&r, "fault", "R-H1"), vec![1_000_000_000, 2_000_000_000]);
}

#[test]
fn interface_failure_stops_sending_and_receiving() {
    let text = chain(
        "",
        "",
        "[[apps]]\nkind = \"udp-cbr\"\nname = \"f\"\nnode = \"H0\"\ndst = \"H1\"\nrate = \"8Mbps\"\nstop = \"3s\"\n\
         [[faults]]\nat = \"1s\"\naction = \"iface-down\"\ntarget = \"H1/eth0\"\n[[faults]]\nat = \"1500ms\"\naction = \"iface-up\"\ntarget = \"H1/eth0\"",
    );
    let r = run(&text);
    let down = get(&r, "flow", "f", "drops_iface_down");
    assert!((498.0..=502.0).contains(&down), "{down}");
    assert_eq!(get(&r, "flow", "f", "tx_packets"), get(&r, "flow", "f", "rx_packets") + down);
}

/// A multihomed H0 reaching H1 over a short path (via R1) and a long one (via R2, R3).
const TWO_PATHS: &str = r#"
duration = "1s"
[[nodes]]
name = "H0"
interfaces = [{ address = "10.1.0.1" }, { address = "10.2.0.1" }]
[[nodes]]
name = "H1"
interfaces = [{ address = "10.1.1.1" }, { address = "10.2.1.1" }]
[[nodes]]
name = "R1"
kind = "router"
interfaces = [{ address = "10.1.0.2" }, { address = "10.1.1.2" }]
[[nodes]]
name = "R2"
kind = "router"
interfaces = [{ address = "10.2.0.2" }, { address = "10.2.2.1" }]
[[nodes]]
name = "R3"
kind = "router"
interfaces = [{ address = "10.2.2.2" }, { address = "10.2.1.2" }]
[[links]]
ends = ["H0/eth0", "R1/eth0"]
[[links]]
ends = ["R1/eth1", "H1/eth0"]
[[links]]
ends = ["H0/eth1", "R2/eth0"]
[[links]]
ends = ["R2/eth1", "R3/eth0"]
[[links]]
ends = ["R3/eth1", "H1/eth1"]
[[apps]]
kind = "udp-sink"
node = "H1"
"#;

fn cbr(name: &str, extra: &str) -> String {
    format!(
        "[[apps]]\nkind = \"udp-cbr\"\nname = \"{name}\"\nnode = \"H0\"\nrate = \"1Mbps\"\nstop = \"900ms\"\n{extra}\n"
    )
}

#[test]
fn routing_takes_shortest_paths_and_honours_source_addresses() {
    // An address is reached over its own interface's link: 10.2.1.1 sits on the R3-H1 link,
    // so both flows take H0/eth1 -> R2 -> R3 -> H1 even though H0/eth0 -> R1 -> H1 is
    // shorter to the node, and even the flow bound to H0/eth0's address leaves by eth1 (its
    // source interface does not reach that link). 10.1.1.1 is reached via R1.
    let text = format!(
        "{TWO_PATHS}{}{}{}",
        cbr("far", "dst = \"10.2.1.1\""),
        cbr("pinned", "dst = \"10.2.1.1\"\nsrc = \"H0/eth0\""),
        cbr("near", "dst = \"10.1.1.1\"")
    );
    let r = run(&text);
    for flow in ["far", "pinned", "near"] {
        assert_eq!(get(&r, "flow", flow, "rx_packets"), get(&r, "flow", flow, "tx_packets"));
    }
    let far = get(&r, "flow", "far", "tx_packets") + get(&r, "flow", "pinned", "tx_packets");
    assert_eq!(get(&r, "iface", "R3/eth1", "tx_packets"), far);
    assert_eq!(get(&r, "iface", "R1/eth1", "tx_packets"), get(&r, "flow", "near", "tx_packets"));
}

#[test]
fn explicit_routes_override_automatic_ones() {
    // Host routes on H0, R2 and R3 steer traffic for 10.1.1.1 onto the long path (H1
    // accepts it on either interface).
    let steer = "[[routes]]\nnode = \"H0\"\ndest = \"10.1.1.1/32\"\nvia = \"eth1\"\n[[routes]]\nnode = \"R2\"\ndest = \"10.1.1.1/32\"\nvia = \"eth1\"\n[[routes]]\nnode = \"R3\"\ndest = \"10.1.1.1/32\"\nvia = \"eth1\"\n";
    let text = format!("{TWO_PATHS}{}{steer}", cbr("f", "dst = \"10.1.1.1\""));
    let r = run(&text);
    let tx = get(&r, "flow", "f", "tx_packets");
    assert_eq!(get(&r, "iface", "R3/eth1", "tx_packets"), tx);
    assert_eq!(get(&r, "flow", "f", "rx_packets"), tx);
    // R1 sends 10.1.1.0/24 back towards H0, which does not forward: dropped there.
    let text = format!(
        "{TWO_PATHS}{}[[routes]]\nnode = \"R1\"\ndest = \"10.1.1.0/24\"\nvia = \"eth0\"\n",
        cbr("f", "dst = \"10.1.1.1\"")
    );
    let r = run(&text);
    assert_eq!(get(&r, "flow", "f", "drops_not_for_this_host"), get(&r, "flow", "f", "tx_packets"));
}

#[test]
fn routing_loops_expire_the_ttl_and_unreachable_destinations_have_no_route() {
    // R3 sends H1/eth1's address back to R2, and R2 forwards it to R3 again.
    let text = format!(
        "{TWO_PATHS}{}[[routes]]\nnode = \"R3\"\ndest = \"10.2.1.1/32\"\nvia = \"eth0\"\n",
        cbr("loop", "dst = \"10.2.1.1\"\nsrc = \"H0/eth1\"")
    );
    let r = run(&text);
    let tx = get(&r, "flow", "loop", "tx_packets");
    assert_eq!(get(&r, "flow", "loop", "drops_ttl_expired"), tx);
    // TTL 64 leaves H0; R2 forwards at 64..=2 (even values) and R3 at 63..=3 (odd values):
    // R2 -> R3 carries each packet 32 times, and R3 discards it when it arrives with TTL 1.
    assert_eq!(get(&r, "iface", "R2/eth1", "tx_packets"), tx * 32.0);
    assert_eq!(get(&r, "node", "R3", "drops_ttl_expired"), tx);
    // An interface with no link is unreachable: H0 has no route to it.
    let text = format!(
        "{TWO_PATHS}[[nodes]]\nname = \"R9\"\nkind = \"router\"\ninterfaces = [{{ address = \"10.9.9.9\" }}]\n"
    );
    let r = run(&format!("{text}{}", cbr("nr", "dst = \"10.9.9.9\"")));
    assert_eq!(get(&r, "flow", "nr", "drops_no_route"), get(&r, "flow", "nr", "tx_packets"));
    assert_eq!(get(&r, "node", "H0", "drops_no_route"), get(&r, "flow", "nr", "tx_packets"));
}

#[test]
fn packets_larger_than_the_mtu_are_dropped() {
    let text = chain("mtu = 1000", "", "[[apps]]\nkind = \"udp-cbr\"\nname = \"f\"\nnode = \"H0\"\ndst = \"H1\"\nrate = \"1Mbps\"\npacket_size = 973\nstop = \"1s\"");
    let r = run(&text);
    assert_eq!(get(&r, "flow", "f", "drops_mtu_exceeded"), get(&r, "flow", "f", "tx_packets"));
    let r = run(&text.replace("packet_size = 973", "packet_size = 972")); // 972 + 28 = 1000
    assert_eq!(get(&r, "flow", "f", "drops"), 0.0);
}

#[test]
fn link_loss_rates_match_the_models() {
    let base = chain("rate = \"1Gbps\"", "rate = \"1Gbps\"\n__LOSS__", "[[apps]]\nkind = \"udp-cbr\"\nname = \"f\"\nnode = \"H0\"\ndst = \"H1\"\nrate = \"800Mbps\"\npacket_size = 100\nstop = \"1s\"");
    let n = 1_000_000.0;
    let r = run(&base.replace("__LOSS__", "loss = { model = \"bernoulli\", p = 0.02 }"));
    assert_eq!(get(&r, "flow", "f", "tx_packets"), n);
    let measured = get(&r, "flow", "f", "drops_link_loss") / n;
    assert!((measured - 0.02).abs() < 5.0 * (0.02f64 * 0.98 / n).sqrt(), "{measured}");
    let r = run(&base.replace(
        "__LOSS__",
        "loss = { model = \"gilbert-elliott\", p_good_bad = 0.005, p_bad_good = 0.1, loss_bad = 0.5 }",
    ));
    let expected = 0.005 * 0.5 / 0.105;
    let measured = get(&r, "flow", "f", "drops_link_loss") / n;
    assert!((measured - expected).abs() < 0.003, "{measured} vs {expected}");
}

#[test]
fn same_seed_same_results_different_seed_different_losses() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/two-path-cbr.toml")).unwrap();
    let s = scenario::parse(&text, &[]).unwrap();
    let render = |seed: u64| {
        let r = s.build(seed, None).unwrap().world.run().unwrap();
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            r.scalars, r.timeseries.time_ns, r.timeseries.value, r.timeseries.names, r.events
        )
    };
    assert_eq!(render(1), render(1));
    assert_ne!(render(1), render(2));
}

#[test]
fn a_scenario_runs_to_its_end_whatever_it_records() {
    // Without sampling nothing is scheduled after the last delivery (about 1 s), yet the run
    // lasts its 10 s: every scalar (time averages such as utilization included) is the same
    // as with sampling, but the count of events, which includes the samples.
    let text = chain("", "", "[[apps]]\nkind = \"udp-cbr\"\nname = \"f\"\nnode = \"H0\"\ndst = \"H1\"\nrate = \"1Mbps\"\nstop = \"1s\"\n[record]\ninterval = \"0s\"");
    let quiet = run(&text);
    let sampled = run(&text.replace("interval = \"0s\"", "interval = \"1s\""));
    assert_eq!(quiet.end.as_secs_f64(), 10.0);
    assert_eq!(sampled.end.as_secs_f64(), 10.0);
    let rows = |r: &netsim::world::RunResult| -> Vec<String> {
        let rows = r.scalars.rows.iter().filter(|x| (x.kind.as_str(), x.metric.as_str()) != ("run", "events"));
        rows.map(|x| format!("{} {} {} {:?}", x.kind, x.entity, x.metric, x.value)).collect()
    };
    assert!(rows(&quiet).iter().any(|r| r.contains("utilization")));
    assert_eq!(rows(&quiet), rows(&sampled));
}

/// A 1-packet-per-millisecond CBR source and a TCP upload over H0 – R – H1 for 3 s, both
/// starting at 1 s with `jitter` (none when empty), under master seed `seed`: the packets each sent.
fn jittered_sources(jitter: &str, seed: u64) -> (f64, f64) {
    let text = common::chain(
        "rate = \"100Mbps\"\ndelay = \"1ms\"",
        "rate = \"100Mbps\"\ndelay = \"1ms\"",
        &format!(
            r#"
[[apps]]
kind = "udp-sink"
node = "H1"
[[apps]]
kind = "udp-cbr"
name = "cbr"
node = "H0"
dst = "H1"
rate = "8Mbps"
packet_size = 1000
start = "1s"
{jitter}
[[apps]]
kind = "tcp-sink"
node = "H1"
[[apps]]
kind = "tcp-bulk"
name = "tcp"
node = "H0"
dst = "H1"
bytes = "100MiB"
start = "1s"
tcp = {{ recv_buffer = "64KiB" }}
{jitter}
"#
        ),
    );
    let r = common::run_with(&text, &["duration=3s", &format!("seed={seed}")]);
    (get(&r, "flow", "cbr", "tx_packets"), get(&r, "flow", "tcp", "tx_packets"))
}

#[test]
fn start_jitter_draws_each_start_from_its_window_per_seed() {
    // Without jitter (or with a zero window) a source starts exactly at `start` whatever the
    // seed: the CBR source sends one packet each millisecond from 1 s to 3 s (both included).
    let plain: Vec<(f64, f64)> = (1..=4).map(|seed| jittered_sources("", seed)).collect();
    assert!(plain.iter().all(|&(cbr, _)| cbr == 2001.0), "{plain:?}");
    assert!(plain.iter().all(|&(_, tcp)| tcp == plain[0].1), "{plain:?}");
    assert_eq!(jittered_sources("start_jitter = \"0s\"", 1), plain[0]);
    // With a 1 s window each source starts somewhere in [1 s, 2 s): fewer packets, a different
    // count for each seed, and the same again for the same seed.
    let jittered: Vec<(f64, f64)> = (1..=8).map(|seed| jittered_sources("start_jitter = \"1s\"", seed)).collect();
    assert!(jittered.iter().all(|&(cbr, _)| cbr > 1000.0 && cbr < 2001.0), "{jittered:?}");
    let mut cbr: Vec<u64> = jittered.iter().map(|&(c, _)| c as u64).collect();
    cbr.sort_unstable();
    cbr.dedup();
    assert!(cbr.len() >= 7, "{jittered:?}");
    assert!(cbr[cbr.len() - 1] - cbr[0] > 300, "starts spread over the window: {jittered:?}");
    let mut tcp: Vec<u64> = jittered.iter().map(|&(_, t)| t as u64).collect();
    tcp.sort_unstable();
    tcp.dedup();
    assert!(tcp.len() >= 7 && jittered.iter().all(|&(_, t)| t < plain[0].1), "{jittered:?}");
    assert_eq!(jittered_sources("start_jitter = \"1s\"", 3), jittered[2]);
    // The CBR source's and the TCP upload's starts come from their own streams.
    assert_ne!(
        jittered.iter().map(|&(c, _)| c).collect::<Vec<_>>(),
        jittered.iter().map(|&(_, t)| t).collect::<Vec<_>>()
    );
}
