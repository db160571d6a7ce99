//! Limits a scenario must keep so that a run can be held in memory and its clock cannot
//! overflow: the number of time-series samples and the length of a run.
#![allow(clippy::unwrap_used)]

mod common;

/// Two hosts and a link, run for `duration`.
fn two_hosts(duration: &str) -> String {
    common::pair(duration, "", "")
}

fn error(text: &str, overrides: &[&str]) -> String {
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    scenario::parse(text, &overrides).unwrap_err().to_string()
}

#[test]
fn an_interval_that_takes_too_many_samples_is_rejected_with_the_shortest_allowed() {
    // "1ns" (for 1ms) made ten billion samples: the run grew until the allocator aborted.
    let text = two_hosts("10s");
    assert_eq!(
        error(&text, &["record.interval=1ns"]),
        "record.interval: \"1ns\" would take 10000000000 samples over duration \"10s\", more than the 10000000 \
         a run may keep (each holds a row per interface, flow and association in memory): use \"1us\" or longer, \
         or \"0s\" for no time series"
    );
    assert!(error(&text, &["record.interval=999ns"]).starts_with("record.interval: \"999ns\" would take 10010010"));
    // Exactly the limit is accepted, and so is any run without time series.
    let s = scenario::parse(&text, &["record.interval=1us".into()]).unwrap();
    assert_eq!(s.record.interval, Some(netsim::Duration::from_micros(1)));
    assert_eq!(10_000_000, scenario::model::MAX_SAMPLES);
    scenario::parse(&two_hosts("9000000000s"), &["record.interval=0s".into()]).unwrap();
}

#[test]
fn a_run_too_long_for_its_default_interval_names_the_duration() {
    assert_eq!(
        error(&two_hosts("9000000000s"), &[]),
        "duration: \"9000000000s\" would take 90000000000 samples at record.interval \"100ms\", more than the \
         10000000 a run may keep (each holds a row per interface, flow and association in memory): set \
         record.interval to \"900s\" or longer, or to \"0s\" for no time series"
    );
}

#[test]
fn a_run_longer_than_half_the_clock_is_rejected_with_the_longest() {
    let beyond = "is longer than a run may last (9223372036s, about 292 years: half the range of the simulation \
                  clock, which counts nanoseconds in 64 bits)";
    let off = ["record.interval=0s"];
    // Beyond the run's limit, and beyond any duration at all ("not a duration" before).
    for duration in ["9223372037s", "18446744073s", "5124096h", "1e30s"] {
        assert_eq!(error(&two_hosts(duration), &off), format!("duration: \"{duration}\" {beyond}"));
    }
    assert_eq!(error(&two_hosts("10s"), &["duration=5124096h", "apps=[]"]), format!("duration: \"5124096h\" {beyond}"));
    let s = scenario::parse(&two_hosts("9223372036s"), &["record.interval=0s".into()]).unwrap();
    assert_eq!(s.duration, scenario::model::MAX_DURATION);
}

#[test]
fn a_run_of_the_longest_duration_sampled_at_its_end_completes() {
    // The sampler schedules its next sample one interval after the last: with "18446744073s"
    // for both, that overflowed the clock (a panic with overflow checks).
    let r = common::run_with(&two_hosts("9223372036s"), &["record.interval=9223372036s"]);
    let times = &r.timeseries.time_ns;
    assert_eq!(times.first(), Some(&0));
    assert_eq!(times.last(), Some(&9_223_372_036_000_000_000));
}
