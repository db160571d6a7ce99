//! SCTP throughput of the simulator: one bulk association from H0 to H1 through router R over
//! 1 Gbit/s, 1 ms links, for 1 simulated second. The sender keeps its send buffer full with
//! 1452-byte messages (one DATA chunk per packet at a 1500-byte MTU); the sink reads at once.
//! Both buffers are 1 MiB, about twice the bandwidth-delay product (~4 ms x 1 Gbit/s), so the
//! link stays busy: the standing queue (at H0's own interface, ~360 packets) fits the
//! 1,000-packet drop-tail queue and nothing is lost. Throughput counts packets: every packet
//! an endpoint sends (DATA from H0, SACKs from H1, and the four handshake packets), each once,
//! per second of wall time; each crosses two links.
//!
//! `cmt_bulk_1gbps_packets` is the same transfer with Concurrent Multipath Transfer over two
//! such paths (H0 – R – H1 and H0 – R2 – H1, disjoint): round-robin scheduler, SFR, CUC and
//! DAC, the same 1 MiB buffers (about the two paths' bandwidth-delay product, so the standing
//! queues stay short), twice the packets in the simulated second. Its cost per packet
//! depends on the reordering between the paths: SACKs carry a gap block per run of TSNs
//! that overtook another path's (about 10 per SACK here; with 2 MiB buffers, longer queues
//! and about 40, +41 % instructions per packet).
//!
//! No capture is attached, so the endpoints skip SCTP's CRC32c (`ChecksumPolicy::Auto`, as a
//! scenario without `record.capture`); with `SCTPSIM_BENCH_CHECKSUMS=always` in the
//! environment they compute and verify it on every packet (`record.checksums = "always"`), to
//! measure what it costs. The simulated packets are the same either way.
#![allow(missing_docs)] // criterion generates the entry points
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsim::world::RunResult;

#[path = "support/sctp_bulk.rs"]
mod sctp_bulk;
use sctp_bulk::{run_paths, MESSAGE_SIZE, RATE_BPS};

fn run() -> RunResult {
    run_paths(1)
}

fn run_cmt() -> RunResult {
    run_paths(2)
}

fn scalar(r: &RunResult, kind: &str, entity: &str, metric: &str) -> f64 {
    r.scalars.get(kind, entity, metric).unwrap_or_else(|| panic!("no {kind} {entity} {metric}"))
}

fn sctp_bulk(c: &mut Criterion) {
    let r = run();
    let data = scalar(&r, "iface", "H0/eth0", "tx_packets") as u64;
    let sacks = scalar(&r, "iface", "H1/eth0", "tx_packets") as u64;
    // The run must carry real data at close to line rate: 1452 of every 1500 bytes on the
    // wire are user data, so the payload ceiling is about 968 Mbit/s; slow start costs a few
    // tens of milliseconds of the second.
    let goodput = scalar(&r, "sctp", "sink", "goodput");
    assert!(goodput > 0.9 * RATE_BPS as f64 * MESSAGE_SIZE as f64 / 1500.0, "goodput {goodput}");
    assert!(scalar(&r, "sctp", "bulk", "t3_timeouts") == 0.0 && scalar(&r, "iface", "H0/eth0", "drops") == 0.0);
    // Delayed SACKs (§6.2): one SACK for every second DATA packet.
    assert!(data > 75_000 && sacks > data / 3, "data {data} sacks {sacks}");
    eprintln!("sctp bulk: {data} packets from H0, {sacks} from H1, goodput {:.1} Mbit/s", goodput / 1e6);
    let mut g = c.benchmark_group("sctp");
    g.sample_size(20);
    g.throughput(Throughput::Elements(data + sacks));
    g.bench_function("bulk_1gbps_packets", |b| b.iter(run));
    g.finish();
}

fn sctp_cmt_bulk(c: &mut Criterion) {
    let r = run_cmt();
    let data: u64 = (0..2).map(|i| scalar(&r, "iface", &format!("H0/eth{i}"), "tx_packets") as u64).sum();
    let sacks: u64 = (0..2).map(|i| scalar(&r, "iface", &format!("H1/eth{i}"), "tx_packets") as u64).sum();
    // Both paths busy: close to twice the single path's payload ceiling.
    let goodput = scalar(&r, "sctp", "sink", "goodput");
    assert!(goodput > 1.8 * RATE_BPS as f64 * MESSAGE_SIZE as f64 / 1500.0, "goodput {goodput}");
    assert!(scalar(&r, "sctp", "bulk", "t3_timeouts") == 0.0);
    assert!(data > 150_000 && sacks > data / 3, "data {data} sacks {sacks}");
    eprintln!("sctp cmt bulk: {data} packets from H0, {sacks} from H1, goodput {:.1} Mbit/s", goodput / 1e6);
    let mut g = c.benchmark_group("sctp");
    g.sample_size(20);
    g.throughput(Throughput::Elements(data + sacks));
    g.bench_function("cmt_bulk_1gbps_packets", |b| b.iter(run_cmt));
    g.finish();
}

criterion_group!(benches, sctp_bulk, sctp_cmt_bulk);
criterion_main!(benches);
