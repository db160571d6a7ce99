//! Scenario files choose CoDel, FQ-CoDel and PIE by name, with their parameters; a bad value
//! names its key; a run reports the discipline's drops under its reasons.
#![allow(clippy::unwrap_used)]

mod common;

use common::{get, run};
use netsim::queue::{CodelConfig, CodelParams, FqCodelConfig, PieConfig, PieDelay, QueueConfig, QueueLimit};
use netsim::Duration;

/// H0 -- R -- H1: `queue` on the 10 Mbit/s link R -> H1, 20 Mbit/s of CBR into it for 2 s.
fn overload(queue: &str) -> String {
    common::chain(
        "",
        &format!("rate = \"10Mbps\"\nqueue = {{ {queue} }}"),
        "[[apps]]\nkind = \"udp-sink\"\nnode = \"H1\"\n\
         [[apps]]\nkind = \"udp-cbr\"\nname = \"f\"\nnode = \"H0\"\ndst = \"H1\"\nrate = \"20Mbps\"\nstop = \"2s\"",
    )
}

fn queue_of(text: &str) -> QueueConfig {
    let s = scenario::parse(text, &[]).unwrap_or_else(|e| panic!("{e}"));
    s.links[1].dirs[0].queue.clone()
}

fn error_of(text: &str) -> String {
    scenario::parse(text, &[]).unwrap_err().to_string()
}

#[test]
fn codel_keys_set_its_parameters_with_the_rfc_defaults() {
    assert_eq!(queue_of(&overload("kind = \"codel\"")), QueueConfig::CoDel(CodelConfig::default()));
    assert_eq!(
        CodelConfig::default(),
        CodelConfig {
            limit: QueueLimit::Packets(1000),
            params: CodelParams { target: Duration::from_millis(5), interval: Duration::from_millis(100), ecn: false }
        }
    );
    let q =
        queue_of(&overload("kind = \"codel\", target = \"2ms\", interval = \"50ms\", ecn = true, limit = \"64KiB\""));
    assert_eq!(
        q,
        QueueConfig::CoDel(CodelConfig {
            limit: QueueLimit::Bytes(65536),
            params: CodelParams { target: Duration::from_millis(2), interval: Duration::from_millis(50), ecn: true }
        })
    );
}

#[test]
fn bad_codel_parameters_name_the_key_and_value() {
    let e = error_of(&overload("kind = \"codel\", target = \"0s\""));
    assert!(e.contains("links[1].queue.target") && e.contains("\"0s\""), "{e}");
    let e = error_of(&overload("kind = \"codel\", interval = 100"));
    assert!(e.contains("links[1].queue.interval") && e.contains("100"), "{e}");
    // A drop-tail key is not a CoDel key.
    let e = error_of(&overload("kind = \"codel\", quantum = 300"));
    assert!(e.contains("links[1].queue.quantum") && e.contains("unknown key"), "{e}");
}

#[test]
fn an_overloaded_codel_queue_drops_at_the_head_and_reports_why() {
    let r = run(&overload("kind = \"codel\""));
    let at = "R/eth1";
    let codel = get(&r, "iface", at, "drops_codel_drop");
    assert!(codel > 100.0, "{codel}");
    assert_eq!(get(&r, "iface", at, "codel_drops"), codel);
    assert_eq!(get(&r, "flow", "f", "drops_codel_drop"), codel);
    // Unresponsive traffic at twice the link rate still fills the 1,000-packet buffer.
    assert!(get(&r, "iface", at, "drops_queue_full") > 0.0);
    assert!(get(&r, "iface", at, "codel_sojourn_mean") > 0.005);
}

#[test]
fn pie_keys_set_its_parameters_and_bad_values_name_the_key() {
    assert_eq!(queue_of(&overload("kind = \"pie\"")), QueueConfig::Pie(PieConfig::default()));
    let q = queue_of(&overload(
        "kind = \"pie\", target = \"20ms\", t_update = \"30ms\", alpha = 0.25, beta = 2, max_burst = \"0s\", \
         delay = \"timestamp\", dq_threshold = \"8KiB\", ecn = true, mark_ecnth = \"5%\", cap_drop_adjustment = false, \
         derandomize = true, limit = 200",
    ));
    let expected = PieConfig {
        limit: QueueLimit::Packets(200),
        target: Duration::from_millis(20),
        t_update: Duration::from_millis(30),
        alpha: 0.25,
        beta: 2.0,
        max_burst: Duration::ZERO,
        delay: PieDelay::Timestamp,
        dq_threshold: 8192,
        ecn: true,
        mark_ecnth: 0.05,
        cap_drop_adjustment: false,
        derandomize: true,
    };
    assert_eq!(q, QueueConfig::Pie(expected));
    let e = error_of(&overload("kind = \"pie\", alpha = -0.5"));
    assert!(e.contains("links[1].queue.alpha") && e.contains("-0.5"), "{e}");
    let e = error_of(&overload("kind = \"pie\", beta = \"fast\""));
    assert!(e.contains("links[1].queue.beta") && e.contains("\"fast\""), "{e}");
    let e = error_of(&overload("kind = \"pie\", t_update = \"0ms\""));
    assert!(e.contains("links[1].queue.t_update") && e.contains("\"0ms\""), "{e}");
    let e = error_of(&overload("kind = \"pie\", delay = \"guess\""));
    assert!(e.contains("links[1].queue.delay") && e.contains("timestamp"), "{e}");
    let e = error_of(&overload("kind = \"pie\", mark_ecnth = 1.5"));
    assert!(e.contains("links[1].queue.mark_ecnth") && e.contains("1.5"), "{e}");
}

#[test]
fn an_overloaded_pie_queue_drops_early_and_reports_its_probability() {
    let r = run(&overload("kind = \"pie\""));
    let at = "R/eth1";
    let early = get(&r, "iface", at, "drops_pie_early");
    assert!(early > 100.0, "{early}");
    assert_eq!(get(&r, "iface", at, "pie_early_drops"), early);
    assert!(get(&r, "iface", at, "pie_prob_max") > 0.4);
}

#[test]
fn fq_codel_keys_set_its_parameters_and_bad_values_name_the_key() {
    assert_eq!(queue_of(&overload("kind = \"fq-codel\"")), QueueConfig::FqCodel(FqCodelConfig::default()));
    let q = queue_of(&overload(
        "kind = \"fq-codel\", limit = 500, flows = 64, quantum = 300, drop_batch = 1, target = \"10ms\", \
         interval = \"200ms\", ecn = false",
    ));
    let expected = FqCodelConfig {
        limit: 500,
        flows: 64,
        quantum: 300,
        drop_batch: 1,
        codel: CodelParams { target: Duration::from_millis(10), interval: Duration::from_millis(200), ecn: false },
    };
    assert_eq!(q, QueueConfig::FqCodel(expected));
    let e = error_of(&overload("kind = \"fq-codel\", flows = 0"));
    assert!(e.contains("links[1].queue.flows") && e.contains('0'), "{e}");
    let e = error_of(&overload("kind = \"fq-codel\", quantum = 0"));
    assert!(e.contains("links[1].queue.quantum") && e.contains('0'), "{e}");
    let e = error_of(&overload("kind = \"fq-codel\", limit = \"64KiB\""));
    assert!(e.contains("links[1].queue.limit") && e.contains("64KiB"), "{e}");
    let e = error_of(&overload("kind = \"fq-codel\", target = \"0s\""));
    assert!(e.contains("links[1].queue.target"), "{e}");
}

#[test]
fn fq_codel_runs_from_a_scenario_and_reports_its_drops() {
    let r = run(&overload("kind = \"fq-codel\", limit = 200"));
    let at = "R/eth1";
    // One unresponsive flow at twice the rate: CoDel drops at the head, the limit is reached too.
    assert!(get(&r, "iface", at, "drops_codel_drop") > 100.0);
    assert_eq!(get(&r, "iface", at, "fq_codel_drops"), get(&r, "iface", at, "drops_codel_drop"));
    assert!(get(&r, "iface", at, "drops_fq_codel_overflow") > 0.0);
    assert_eq!(get(&r, "iface", at, "fq_codel_new_flows"), 1.0);
}
