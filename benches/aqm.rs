//! Forwarding through each queue discipline: the traffic of `benches/forwarding.rs` (a 1 Gbit/s
//! UDP CBR flow of 1000-byte datagrams across H0 - R1 - R2 - R3 - H1, 10 Gbit/s links, one
//! simulated second) with every link's queue the discipline under test (`idle`: the queues
//! never build, each packet finds its transmitter idle, 100-packet buffers), and the same with
//! the last link at 900 Mbit/s and 1000-packet buffers (`bottleneck`: a standing queue at R3,
//! where the discipline drops a tenth of the packets; with ns-2's defaults RED's automatic
//! thresholds at 900 Mbit/s are 562 and 1687 packets of 500 bytes, inside that buffer).
//!
//! The disciplines come from [`disciplines`], a list of `QueueConfig`s: add an entry to measure
//! another. Throughput is packet-hops (packets sent on a link) per second.
//!
//! For instruction counts, which do not depend on the machine's load, run one workload once
//! under callgrind: `AQM_BENCH_ONCE=<name>/<workload> valgrind --tool=callgrind <bench binary>`
//! prints the packet-hops and exits without criterion.
#![allow(missing_docs)] // criterion generates the entry points
#[path = "support/cbr_chain.rs"]
mod cbr_chain;

use cbr_chain::cbr_chain;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsim::queue::{BlueConfig, FredConfig, PiConfig, QueueConfig, QueueLimit, RedConfig, RemConfig};
use netsim::queue::{CodelConfig, FqCodelConfig, PieConfig};
use netsim::world::RunResult;

/// The disciplines measured, by name, with buffers of `limit`; drop-tail first (the reference).
fn disciplines(limit: QueueLimit) -> Vec<(&'static str, QueueConfig)> {
    vec![
        ("droptail", QueueConfig::DropTail { limit }),
        ("red", QueueConfig::Red(RedConfig { limit, ..RedConfig::default() })),
        ("fred", QueueConfig::Fred(FredConfig { limit, ..FredConfig::default() })),
        ("blue", QueueConfig::Blue(BlueConfig { limit, ..BlueConfig::default() })),
        ("rem", QueueConfig::Rem(RemConfig { limit, ..RemConfig::default() })),
        ("pi", QueueConfig::Pi(PiConfig { limit, ..PiConfig::default() })),
        ("codel", QueueConfig::CoDel(CodelConfig { limit, ..CodelConfig::default() })),
        ("fq-codel", QueueConfig::FqCodel(FqCodelConfig { limit: packets(limit), ..FqCodelConfig::default() })),
        ("pie", QueueConfig::Pie(PieConfig { limit, ..PieConfig::default() })),
    ]
}

/// FQ-CoDel's limit counts packets: a byte limit in 1000-byte packets.
fn packets(limit: QueueLimit) -> usize {
    match limit {
        QueueLimit::Packets(n) => n,
        QueueLimit::Bytes(b) => b.div_ceil(1000),
    }
}

/// The workloads: the rate of the last link and the buffers.
const WORKLOADS: [(&str, u64, QueueLimit); 2] =
    [("idle", 10_000_000_000, QueueLimit::Packets(100)), ("bottleneck", 900_000_000, QueueLimit::Packets(1000))];

/// Packets sent on links in a run: the packet-hops.
fn hops(r: &RunResult) -> u64 {
    r.scalars.rows.iter().filter(|s| s.kind == "iface" && s.metric == "tx_packets").map(|s| s.value as u64).sum()
}

fn run(queue: &QueueConfig, last_rate: u64) -> RunResult {
    cbr_chain(queue, last_rate).build().run().expect("run")
}

fn aqm(c: &mut Criterion) {
    if let Ok(which) = std::env::var("AQM_BENCH_ONCE") {
        for (workload, rate, limit) in WORKLOADS {
            for (name, queue) in disciplines(limit) {
                if which == format!("{name}/{workload}") {
                    println!("{which}: {} packet-hops", hops(&run(&queue, rate)));
                    return;
                }
            }
        }
        panic!("AQM_BENCH_ONCE={which}: no such discipline/workload");
    }
    for (workload, rate, limit) in WORKLOADS {
        let mut g = c.benchmark_group(format!("aqm_{workload}"));
        g.sample_size(10);
        for (name, queue) in disciplines(limit) {
            let n = hops(&run(&queue, rate));
            assert!(n > 100_000, "{name}/{workload}: {n} packet-hops");
            g.throughput(Throughput::Elements(n));
            g.bench_function(format!("{name}_packet_hops"), |b| b.iter(|| run(&queue, rate)));
        }
        g.finish();
    }
}

criterion_group!(benches, aqm);
criterion_main!(benches);
