//! Runs one scenario file in the core alone (no Python, no result files) and prints its
//! kernel events and wall time: for profiling the simulator under `perf` or callgrind.
//!
//! ```sh
//! cargo run --release -p scenario --example run -- FILE [KEY=VALUE ...]
//! SCTPSIM_RUN_SCALARS=scalars.txt cargo run ...   # also write every scalar's exact bits
//! ```
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)]

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: run FILE [KEY=VALUE ...]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let overrides: Vec<String> = args.collect();
    let s = scenario::parse(&text, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let start = std::time::Instant::now();
    let result = s.build(s.seed, None).unwrap().world.run().unwrap();
    let wall = start.elapsed().as_secs_f64();
    let events = result.scalars.get("run", "run", "events").unwrap_or(f64::NAN);
    println!("events {events} wall {wall:.3} s");
    if let Ok(out) = std::env::var("SCTPSIM_RUN_SCALARS") {
        // Every scalar with its exact bits, to compare two builds' results.
        let rows: Vec<String> = result
            .scalars
            .rows
            .iter()
            .map(|r| format!("{},{},{},{:016x}", r.kind, r.entity, r.metric, r.value.to_bits()))
            .collect();
        std::fs::write(&out, rows.join("\n") + "\n").unwrap();
    }
}
