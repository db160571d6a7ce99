//! `links[].queue.kind` = red, fred, blue, rem, pi: every key reaches the discipline, the
//! discipline reports its statistics and reasons, and bad parameters are refused naming the key
//! and the value.
mod common;

use common::{chain, get, run};

/// H0 sends 8 Mbit/s of UDP into a 2 Mbit/s link R -> H1 that runs `queue`.
fn overloaded(queue: &str) -> String {
    chain(
        r#"rate = "100Mbps""#,
        &format!("rate = \"2Mbps\"\ndelay = \"10ms\"\nqueue = {queue}"),
        r#"
[[apps]]
kind = "udp-cbr"
name = "cbr"
node = "H0"
dst = "H1"
rate = "8Mbps"
packet_size = 972
[[apps]]
kind = "udp-sink"
name = "sink"
node = "H1"
"#,
    )
}

#[test]
fn each_discipline_runs_from_a_scenario_and_reports_its_statistics() {
    let cases = [
        ("{ kind = \"red\", mode = \"packets\", min_th = 5, max_th = 15 }", "red_avg_queue", "red_early"),
        ("{ kind = \"fred\" }", "fred_avg_queue", "fred_flow"),
        ("{ kind = \"blue\", limit = 20 }", "blue_p_m", "blue_early"),
        ("{ kind = \"rem\", gamma = 0.01 }", "rem_price", "rem_early"),
        ("{ kind = \"pi\", q_ref = 10, a = 0.001, b = 0.0009 }", "pi_probability", "pi_early"),
    ];
    for (queue, stat, reason) in cases {
        let r = run(&overloaded(queue));
        let value = get(&r, "iface", "R/eth1", stat);
        assert!(value > 0.0, "{queue}: {stat} = {value}");
        let drops = get(&r, "iface", "R/eth1", &format!("drops_{reason}"));
        assert!(drops > 100.0, "{queue}: {drops} drops for {reason}");
    }
}

#[test]
fn red_keys_reach_the_discipline() {
    // Thresholds given in packets and byte mode: the statistics show them in bytes.
    let r = run(&overloaded("{ kind = \"red\", min_th = 4, max_th = 12, mean_pktsize = 1000, w_q = 0.01 }"));
    assert_eq!(get(&r, "iface", "R/eth1", "red_min_th"), 4000.0);
    assert_eq!(get(&r, "iface", "R/eth1", "red_max_th"), 12000.0);
    assert_eq!(get(&r, "iface", "R/eth1", "red_w_q"), 0.01);
    // Automatic thresholds from the rate: 2 Mbit/s, 500-byte packets, 5 ms -> 5 packets.
    let r = run(&overloaded("{ kind = \"red\" }"));
    assert_eq!(get(&r, "iface", "R/eth1", "red_min_th"), 2500.0);
    assert_eq!(get(&r, "iface", "R/eth1", "red_max_th"), 7500.0);
    // Not gentle: forced drops once the average passes max_th.
    let r = run(&overloaded("{ kind = \"red\", gentle = false, mode = \"packets\", min_th = 2, max_th = 6 }"));
    assert!(get(&r, "iface", "R/eth1", "drops_red_forced") > 100.0);
}

#[test]
fn bad_parameters_name_the_key_and_the_value() {
    let cases = [
        (
            "{ kind = \"red\", min_th = 30, max_th = 10 }",
            "links[1].queue.max_th: 10 is invalid: max_th (10) must be more than min_th (30) (packets)",
        ),
        (
            "{ kind = \"fred\", min_th = 40 }",
            "links[1].queue.max_th: max_th (30) must be more than min_th (40) (packets)",
        ),
        ("{ kind = \"red\", w_q = 2 }", "links[1].queue.w_q: 2 is out of range (expected a number from 0 to 1)"),
        ("{ kind = \"rem\", phi = 0.5 }", "links[1].queue.phi: 0.5 is invalid: 0.5 must be more than 1"),
        ("{ kind = \"pi\", w = 0 }", "links[1].queue.w: 0 is invalid: 0 must be more than zero"),
        (
            "{ kind = \"blue\", increase_above = 100 }",
            "links[1].queue.increase_above: 100 is invalid: 100 must be below the limit (100 packets) or it never triggers",
        ),
        ("{ kind = \"blue\", min_th = 3 }", "links[1].queue.min_th: unknown key (expected one of: kind, limit, d1, d2, freeze_time, increase_above, ecn)"),
        ("{ kind = \"reds\" }", "links[1].queue.kind: \"reds\" is not one of \"droptail\", \"red\", \"fred\", \"blue\", \"rem\", \"pi\", \"codel\", \"fq-codel\", \"pie\" (did you mean \"red\"?)"),
    ];
    for (queue, expect) in cases {
        let e = scenario::parse(&overloaded(queue), &[]).unwrap_err();
        assert_eq!(e.to_string(), expect, "{queue}");
    }
}

#[test]
fn a_link_queue_inherited_by_a_direction_is_checked_at_its_rate() {
    // min_th automatic from the 100 Mbit/s forward rate (62.5 packets) is above max_th = 50 on the
    // link: refused, naming the direction.
    let text = chain(
        r#"rate = "1Mbps""#,
        "rate = \"1Mbps\"\nqueue = { kind = \"red\", mode = \"packets\", max_th = 50 }\nforward = { rate = \"100Mbps\" }",
        "",
    );
    let e = scenario::parse(&text, &[]).unwrap_err().to_string();
    assert!(e.starts_with("links[1].forward.queue: the link's queue does not suit this direction"), "{e}");
}
