//! One run of the SCTP bulk workload of `benches/sctp.rs`, for instruction counts and
//! profiles (criterion's warm-up and sampling make a poor callgrind or perf subject):
//!
//! ```sh
//! cargo build --profile bench -p netsim --example sctp_once
//! valgrind --tool=callgrind target/release/examples/sctp_once        # one single-path run
//! valgrind --tool=callgrind target/release/examples/sctp_once cmt    # one CMT run
//! ```
//!
//! `SCTPSIM_BENCH_CHECKSUMS=always` forces the CRC32c on as in the benchmark (valgrind cannot
//! run the CRC library's AVX-512 code). An optional count after the mode runs the world that
//! many times (for `perf`).
#![allow(missing_docs)]
use std::time::Instant as WallClock;

#[path = "support/sctp_bulk.rs"]
mod sctp_bulk;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let paths = match args.first().map(String::as_str) {
        None | Some("bulk") => 1,
        Some("cmt") => 2,
        Some(other) => {
            eprintln!("usage: sctp_once [bulk|cmt] [RUNS] (got {other})");
            std::process::exit(2);
        }
    };
    let runs: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    for _ in 0..runs {
        let t = WallClock::now();
        let r = sctp_bulk::run_paths(paths);
        let wall = t.elapsed().as_secs_f64();
        let tx = |entity: &str| r.scalars.get("iface", entity, "tx_packets").unwrap_or(0.0) as u64;
        let data: u64 = (0..paths).map(|i| tx(&format!("H0/eth{i}"))).sum();
        let sacks: u64 = (0..paths).map(|i| tx(&format!("H1/eth{i}"))).sum();
        let goodput = r.scalars.get("sctp", "sink", "goodput").unwrap_or(0.0);
        println!(
            "{data} packets from H0, {sacks} from H1, goodput {:.1} Mbit/s, {} events, {:.1} ms, {:.2} M packets/s",
            goodput / 1e6,
            r.events_processed,
            wall * 1e3,
            (data + sacks) as f64 / wall / 1e6
        );
    }
}
