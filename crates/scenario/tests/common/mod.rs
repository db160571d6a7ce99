//! Helpers shared by the whole-scenario tests: run a scenario text, read its scalars, series
//! and events, load a bundled example, and build the H0 – R – H1 chain most tests start from
//! the two directly linked hosts A – B, and the uploads to D behind R that the TCP tests use.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use netsim::world::RunResult;

/// Parses `text` with `--set`-style `overrides`, builds it with its own seed and runs it.
pub fn run_with(text: &str, overrides: &[&str]) -> RunResult {
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    let s = scenario::parse(text, &overrides).unwrap_or_else(|e| panic!("{e}"));
    s.build(s.seed, None).unwrap().world.run().unwrap()
}

pub fn run(text: &str) -> RunResult {
    run_with(text, &[])
}

/// The text of `examples/NAME`.
pub fn example(name: &str) -> String {
    std::fs::read_to_string(format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

pub fn get(r: &RunResult, kind: &str, entity: &str, metric: &str) -> f64 {
    r.scalars.get(kind, entity, metric).unwrap_or_else(|| panic!("no scalar {kind} {entity} {metric}"))
}

/// The samples of one time series as (seconds, value).
pub fn series(r: &RunResult, entity: &str, metric: &str) -> Vec<(f64, f64)> {
    let ts = &r.timeseries;
    let Some(id) = ts.names.iter().position(|n| n.entity == entity && n.metric == metric) else {
        panic!("no series {entity} {metric}")
    };
    (0..ts.value.len())
        .filter(|&i| ts.series[i] as usize == id)
        .map(|i| (ts.time_ns[i] as f64 * 1e-9, ts.value[i]))
        .collect()
}

/// Times (ns) of `kind` events at `entity`.
pub fn event_times(r: &RunResult, kind: &str, entity: &str) -> Vec<u64> {
    (0..r.events.kind.len())
        .filter(|&i| r.events.kind[i] == kind && r.events.entity[i] == entity)
        .map(|i| r.events.time_ns[i])
        .collect()
}

/// H0 – R – H1, single-homed, 10 s: `link0` and `link1` are the keys of the two links
/// (rate, delay, queue, ...), `rest` is appended (apps, faults, record).
pub fn chain(link0: &str, link1: &str, rest: &str) -> String {
    format!(
        r#"
duration = "10s"
[[nodes]]
name = "H0"
interfaces = [{{ address = "10.0.0.1" }}]
[[nodes]]
name = "R"
kind = "router"
interfaces = [{{ address = "10.0.0.2" }}, {{ address = "10.0.1.2" }}]
[[nodes]]
name = "H1"
interfaces = [{{ address = "10.0.1.1" }}]
[[links]]
ends = ["H0/eth0", "R/eth0"]
{link0}
[[links]]
ends = ["R/eth1", "H1/eth0"]
{link1}
{rest}
"#
    )
}

/// Hosts of a group behind router R uploading to host D over the link R/core – D/eth0:
/// `bottleneck` holds that link's keys (rate, delay, queue, loss), `group` the group's
/// (name, count, access link, tcp).
pub fn uploads(duration: &str, bottleneck: &str, group: &str) -> String {
    format!(
        r#"
duration = "{duration}"
[[nodes]]
name = "R"
kind = "router"
interfaces = [{{ name = "core", address = "10.0.100.1" }}]
[[nodes]]
name = "D"
interfaces = [{{ address = "10.0.100.2" }}]
[[links]]
ends = ["R/core", "D/eth0"]
{bottleneck}
[[groups]]
router = "R"
dst = "D"
{group}
"#
    )
}

/// Hosts A (10.0.0.1) and B (10.0.0.2) on one direct link: `link` holds that link's keys
/// (rate, delay, mtu), `rest` is appended (apps, record).
pub fn pair(duration: &str, link: &str, rest: &str) -> String {
    format!(
        r#"
duration = "{duration}"
[[nodes]]
name = "A"
interfaces = [{{ address = "10.0.0.1" }}]
[[nodes]]
name = "B"
interfaces = [{{ address = "10.0.0.2" }}]
[[links]]
ends = ["A/eth0", "B/eth0"]
{link}
{rest}
"#
    )
}
