//! Goodput of one TCP flow under random loss: it falls as loss rises, following the
//! 1/sqrt(p) law of Mathis et al. (1997), `B = MSS/RTT * sqrt(3/(2bp))`. The window grows by
//! byte counting (RFC 3465), one MSS per window of acknowledged bytes whatever the ACK
//! frequency, so b = 1 although the receiver delays ACKs. At high loss, timeouts (RTO at
//! least 1 s) make goodput fall faster, as Padhye et al. (1998) model. The ignored test prints
//! the curve documented in BENCHMARKS.md:
//! `cargo test -p scenario --profile checked --test tcp_loss -- --ignored --nocapture`.
#![allow(clippy::unwrap_used)]

mod common;

/// H -- R -- D; 100 Mbit/s links; Bernoulli loss `p` on R -> D; one-way delays give `rtt_ms`.
fn scenario(p: f64, rtt_ms: u64, cc: &str, duration: &str) -> String {
    let half = rtt_ms as f64 / 2.0 - 1.0;
    let bottleneck = format!(
        r#"rate = "100Mbps"
delay = "{half}ms"
forward = {{ loss = {{ model = "bernoulli", p = {p} }} }}"#
    );
    let group = format!(
        r#"name = "flow"
count = 1
link = {{ rate = "1Gbps", delay = "1ms" }}
tcp = {{ cc = "{cc}", recv_buffer = "16MiB", send_buffer = "16MiB" }}"#
    );
    common::uploads(duration, &bottleneck, &group)
}

fn goodput(p: f64, rtt_ms: u64, cc: &str, duration: &str) -> (f64, f64, f64) {
    let r = common::run(&scenario(p, rtt_ms, cc, duration));
    let get = |k: &str, m: &str| common::get(&r, k, "flow-1", m);
    (get("flow", "goodput"), get("tcp", "timeouts"), get("tcp", "fast_retransmits"))
}

/// Mathis et al.: MSS/RTT * sqrt(3 / (2 b p)), b = 1; MSS is the data per segment (1448 B).
fn mathis(p: f64, rtt_ms: u64) -> f64 {
    1448.0 * 8.0 / (rtt_ms as f64 / 1000.0) * (3.0 / (2.0 * p)).sqrt()
}

#[test]
fn goodput_falls_with_loss_like_one_over_sqrt_p() {
    let ps = [0.001, 0.004, 0.016];
    let g: Vec<f64> = ps.iter().map(|&p| goodput(p, 100, "sack", "120s").0).collect();
    assert!(g[0] > g[1] && g[1] > g[2], "{g:?}");
    // Quadrupling p halves the goodput under the square-root law; timeouts make the fall a
    // little steeper at high loss.
    for w in g.windows(2) {
        let ratio = w[0] / w[1];
        assert!((1.6..=3.0).contains(&ratio), "{g:?}: ratio {ratio}");
    }
    for (&p, &b) in ps.iter().zip(&g) {
        let m = b / mathis(p, 100);
        assert!((0.75..=1.25).contains(&m), "p = {p}: measured/model {m}");
    }
}

#[test]
#[ignore = "prints the loss-vs-goodput table for BENCHMARKS.md (takes about a minute)"]
fn loss_sweep_table() {
    println!(
        "| cc | RTT | p | goodput (Mbit/s) | Mathis model (Mbit/s) | measured / model | timeouts | fast retransmits |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for cc in ["newreno", "sack"] {
        for rtt in [20, 100] {
            for p in [0.001, 0.002, 0.005, 0.01, 0.02, 0.05] {
                let (g, to, fr) = goodput(p, rtt, cc, "300s");
                let m = mathis(p, rtt);
                println!(
                    "| {cc} | {rtt} ms | {:.1} % | {:.2} | {:.2} | {:.2} | {to} | {fr} |",
                    p * 100.0,
                    g / 1e6,
                    m / 1e6,
                    g / m
                );
            }
        }
    }
}
