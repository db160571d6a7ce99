//! `nodes[].position`, `nodes[].mobility` and `record.positions`: what they build, what
//! they leave alone, and the errors they give.
#![allow(clippy::unwrap_used)]

mod common;

use common::{example, run_with, series};
use netsim::mobility::Position;
use netsim::network::NodeId;
use netsim::{Duration, Instant};

/// Two hosts on one link; `a` and `b` are extra keys of the two nodes.
fn pair(a: &str, b: &str) -> String {
    format!(
        r#"
duration = "20s"
[[nodes]]
name = "A"
interfaces = [{{ address = "10.0.0.1" }}]
{a}
[[nodes]]
name = "B"
interfaces = [{{ address = "10.0.0.2" }}]
{b}
[[links]]
ends = ["A/eth0", "B/eth0"]
rate = "10Mbps"
delay = "1ms"
"#
    )
}

fn positions(text: &str, seed: u64, node: u32, times: &[f64]) -> Vec<Option<Position>> {
    let s = scenario::parse(text, &[]).unwrap_or_else(|e| panic!("{e}"));
    let world = s.build(seed, None).unwrap().world;
    times
        .iter()
        .map(|&t| world.network().position_at(NodeId(node), Instant::ZERO + Duration::from_secs_f64(t)))
        .collect()
}

fn error(text: &str) -> String {
    scenario::parse(text, &[]).unwrap_err().to_string()
}

#[test]
fn without_positions_nothing_changes() {
    let text = example("failover.toml");
    let s = scenario::parse(&text, &[]).unwrap();
    assert!(s.nodes.iter().all(|n| n.mobility.is_none()));
    let resolved = s.resolved_toml(1);
    for key in ["position", "mobility", "positions"] {
        assert!(!resolved.contains(key), "{key} in the resolved scenario");
    }
    assert_eq!(positions(&text, 1, 0, &[0.0]), vec![None]);
    let r = run_with(&text, &["duration=2s"]);
    assert!(r.timeseries.names.iter().all(|n| n.kind != "node"));
}

#[test]
fn a_position_alone_is_a_stationary_node() {
    let text = pair("position = [10, 20.5]", "");
    assert_eq!(positions(&text, 1, 0, &[0.0, 15.0]), vec![Some(Position::new(10.0, 20.5)); 2]);
    assert_eq!(positions(&text, 1, 1, &[0.0]), vec![None]);
    let text = pair("position = [1, 2]\nmobility = { model = \"stationary\" }", "");
    assert_eq!(positions(&text, 1, 0, &[3.0]), vec![Some(Position::new(1.0, 2.0))]);
}

#[test]
fn waypoints_at_a_speed_and_at_instants() {
    // 4.5 km/h = 1.25 m/s: 10 m takes 8 s, after leaving at 2 s.
    let text = pair(
        "position = [0, 0]\nmobility = { model = \"waypoints\", waypoints = [[10, 0], [10, 10]], speed = \"4.5km/h\", start = \"2s\", pause = \"1s\" }",
        "mobility = { model = \"waypoints\", waypoints = [{ at = \"0s\", position = [0, 0] }, { at = \"10s\", position = [100, 0] }] }",
    );
    let got = positions(&text, 1, 0, &[0.0, 2.0, 6.0, 10.0, 11.0, 15.0, 19.0, 100.0]);
    let want = [(0.0, 0.0), (0.0, 0.0), (5.0, 0.0), (10.0, 0.0), (10.0, 0.0), (10.0, 5.0), (10.0, 10.0), (10.0, 10.0)];
    assert_eq!(got, want.iter().map(|&(x, y)| Some(Position::new(x, y))).collect::<Vec<_>>());
    assert_eq!(
        positions(&text, 1, 1, &[2.5, 30.0]),
        vec![Some(Position::new(25.0, 0.0)), Some(Position::new(100.0, 0.0))]
    );
}

#[test]
fn random_waypoint_of_paper_001_stays_in_its_area_and_depends_on_the_seed_and_node_only() {
    let mc = "mobility = { model = \"random-waypoint\", area = [600, 400], speed = \"15.5km/h\", pause = \"1s\" }";
    let text = pair(mc, "");
    let times: Vec<f64> = (0..=400).map(|k| k as f64 * 0.5).collect();
    let a = positions(&text, 7, 0, &times);
    for p in a.iter().map(|p| p.unwrap()) {
        assert!((0.0..=600.0).contains(&p.x) && (0.0..=400.0).contains(&p.y), "{p:?}");
    }
    // It moves, at 15.5 km/h at most.
    let step = a.windows(2).map(|w| w[0].unwrap().distance(&w[1].unwrap())).fold(0.0, f64::max);
    assert!(step > 0.0 && step <= 15.5 / 3.6 * 0.5 + 1e-9, "{step}");
    assert_eq!(positions(&text, 7, 0, &times), a, "same seed, same trajectory");
    assert_ne!(positions(&text, 8, 0, &times), a, "another seed, another trajectory");
    // Giving the other node a random model too (its own stream) changes nothing here.
    let both = pair(mc, "mobility = { model = \"random-walk\", area = [[-50, -50], [50, 50]], speed_min = \"1m/s\", speed_max = \"2m/s\", step_distance = 5 }");
    assert_eq!(positions(&both, 7, 0, &times), a);
    let b = positions(&both, 7, 1, &times);
    assert!(b.iter().all(|p| p.unwrap().x.abs() <= 50.0 && p.unwrap().y.abs() <= 50.0));
    assert!(b[0] != b[400]);
}

#[test]
fn positions_are_recorded_only_when_asked() {
    let text = pair(
        "position = [0, 0]\nmobility = { model = \"waypoints\", waypoints = [[20, 0]], speed = \"2m/s\" }",
        "position = [5, 5]",
    );
    let off = run_with(&text, &["record.interval=\"1s\""]);
    assert!(off.timeseries.names.iter().all(|n| n.kind != "node"));
    let on = run_with(&text, &["record.positions=true", "record.interval=\"1s\""]);
    let x = series(&on, "A", "x");
    assert_eq!(x.len(), 21);
    let values = |s: Vec<(f64, f64)>| s.into_iter().map(|(_, v)| v).collect::<Vec<_>>();
    let want_x: Vec<f64> = (0..=20).map(|t| f64::from(t.min(10) * 2)).collect();
    assert_eq!(values(x), want_x);
    assert_eq!(values(series(&on, "B", "y")), vec![5.0; 21]);
    // Nothing else about the run changes.
    assert_eq!(off.scalars.rows, on.scalars.rows);
}

#[test]
fn errors_name_the_key_and_the_value() {
    let cases = [
        ("position = [1]", "", "nodes[0].position: [1] is not a position (expected [x, y] in metres, e.g. [100, 50.5])"),
        ("position = \"here\"", "", "nodes[0].position: \"here\" is not a position (expected [x, y] in metres, e.g. [100, 50.5])"),
        ("mobility = { model = \"stationary\" }", "", "nodes[0].position: missing (a stationary node needs a position, e.g. [100, 50])"),
        ("mobility = { model = \"random-waypiont\" }", "", "nodes[0].mobility.model: \"random-waypiont\" is not one of \"stationary\", \"waypoints\", \"random-waypoint\", \"random-walk\" (did you mean \"random-waypoint\"?)"),
        ("mobility = { model = \"random-waypoint\", speed = \"1m/s\" }", "", "nodes[0].mobility.area: missing (expected [width, height] or [[x0, y0], [x1, y1]] (metres))"),
        ("mobility = { model = \"random-waypoint\", area = [600, 0], speed = \"1m/s\" }", "", "nodes[0].mobility.area: [600, 0] is empty (width and height must be positive)"),
        ("mobility = { model = \"random-waypoint\", area = [600, 400], speed = \"4.5kmh\" }", "", "nodes[0].mobility.speed: \"4.5kmh\" is not a speed (try \"4.5km/h\")"),
        ("mobility = { model = \"random-waypoint\", area = [600, 400], speed = 4.5 }", "", "nodes[0].mobility.speed: 4.5 is not a speed (write it as a string with a unit, e.g. \"4.5km/h\" or \"1.25m/s\")"),
        ("mobility = { model = \"random-waypoint\", area = [600, 400], speed = \"0m/s\" }", "", "nodes[0].mobility.speed: \"0m/s\" is not a positive speed"),
        ("mobility = { model = \"random-waypoint\", area = [600, 400], speed_min = \"2m/s\", speed_max = \"1m/s\" }", "", "nodes[0].mobility.speed_max: \"1m/s\" is below speed_min \"2m/s\""),
        ("mobility = { model = \"random-waypoint\", area = [600, 400], speed_min = \"2m/s\" }", "", "nodes[0].mobility.speed_max: missing (speed_min needs speed_max)"),
        ("mobility = { model = \"random-waypoint\", area = [600, 400] }", "", "nodes[0].mobility.speed: missing (give speed, or speed_min and speed_max)"),
        ("mobility = { model = \"random-waypoint\", area = [600, 400], speed = \"1m/s\", speed_max = \"2m/s\" }", "", "nodes[0].mobility.speed: give either speed or speed_min and speed_max, not both (speed and speed_max given)"),
        ("position = [700, 10]\nmobility = { model = \"random-waypoint\", area = [600, 400], speed = \"1m/s\" }", "", "nodes[0].position: [700, 10] is outside the mobility area [[0, 0], [600, 400]]"),
        ("mobility = { model = \"random-waypoint\", area = [600, 400], speed = \"1m/s\", step = \"1s\" }", "", "nodes[0].mobility.step: unknown key (expected one of: model, area, speed, speed_min, speed_max, pause)"),
        ("mobility = { model = \"random-walk\", area = [60, 40], speed = \"1m/s\", step = \"1s\", step_distance = 3 }", "", "nodes[0].mobility.step_distance: give either step or step_distance, not both"),
        ("mobility = { model = \"random-walk\", area = [60, 40], speed = \"1m/s\", step = \"0s\" }", "", "nodes[0].mobility.step: \"0s\" is not a positive duration"),
        ("mobility = { model = \"waypoints\", waypoints = [[1, 2]] }", "", "nodes[0].mobility.speed: missing (plain [x, y] waypoints are visited at a speed)"),
        ("mobility = { model = \"waypoints\", waypoints = [] }", "", "nodes[0].mobility.waypoints: is empty (give at least one waypoint)"),
        ("mobility = { model = \"waypoints\", waypoints = [[1, 2], { at = \"1s\", position = [0, 0] }], speed = \"1m/s\" }", "", "nodes[0].mobility.waypoints[1]: a table does not match waypoint 0: use either [x, y] points or { at = \"10s\", position = [x, y] } tables throughout"),
        ("mobility = { model = \"waypoints\", waypoints = [{ at = \"5s\", position = [0, 0] }, { at = \"1s\", position = [1, 0] }] }", "", "nodes[0].mobility.waypoints[1].at: is earlier than the waypoint before it (instants must not decrease)"),
        ("mobility = { model = \"waypoints\", waypoints = [{ at = 5, position = [0, 0] }] }", "", "nodes[0].mobility.waypoints[0].at: 5 is not a duration (write it as a string with a unit, e.g. \"10s\")"),
        ("mobility = { model = \"waypoints\", waypoints = [{ at = \"5s\", pos = [0, 0] }] }", "", "nodes[0].mobility.waypoints[0].pos: unknown key (expected at, position)"),
        ("mobility = { model = \"waypoints\", waypoints = [{ at = \"5s\", position = [0, 0] }], speed = \"1m/s\" }", "", "nodes[0].mobility.speed: only for plain [x, y] waypoints (timed waypoints give the instants)"),
        ("", "mobility = { model = \"stationary\", area = [1, 1] }", "nodes[1].mobility.area: unknown key (expected one of: model)"),
    ];
    let mut failures = Vec::new();
    for (a, b, want) in cases {
        let got = error(&pair(a, b));
        if got != want {
            failures.push(format!("{a} {b}\n  got:  {got}\n  want: {want}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
