//! `nodes[].position` and `nodes[].mobility`: reading them, and building the node's
//! [`Mobility`].
//!
//! A node with neither key has no place in the world, exactly as before these keys existed
//! (and resolves without them). `position` alone makes the node stationary there.

use netsim::mobility::{
    Area, Mobility, MobilityError, Position, RandomWalkConfig, RandomWaypointConfig, WalkStep, Waypoints,
};
use netsim::rng::SimRng;
use netsim::{Duration, Instant};
use toml::Value;

use crate::error::ScenarioError;
use crate::reader::{explain, show, Reader};
use crate::units;

/// How a node moves, as the scenario says (the random models get their stream when built).
#[derive(Clone, Debug, PartialEq)]
pub enum MobilitySpec {
    /// At a fixed point.
    Stationary(Position),
    /// Along waypoints (no randomness: built while reading).
    Waypoints(Waypoints),
    /// Random waypoint from a given or drawn start.
    RandomWaypoint(RandomWaypointConfig, Option<Position>),
    /// Random walk from a given or drawn start.
    RandomWalk(RandomWalkConfig, Option<Position>),
}

impl MobilitySpec {
    /// The model, drawing from `rng` (the node's stream, [`netsim::mobility::stream_name`]).
    pub fn build(&self, rng: SimRng) -> Result<Mobility, MobilityError> {
        Ok(match self {
            MobilitySpec::Stationary(p) => Mobility::Stationary(*p),
            MobilitySpec::Waypoints(w) => Mobility::Waypoints(w.clone()),
            MobilitySpec::RandomWaypoint(config, start) => Mobility::random_waypoint(*config, *start, rng)?,
            MobilitySpec::RandomWalk(config, start) => Mobility::random_walk(*config, *start, rng)?,
        })
    }
}

/// Read a node's `position` and `mobility` (`None`: the node has no place in the world).
pub(crate) fn read(r: &mut Reader<'_>) -> Result<Option<MobilitySpec>, ScenarioError> {
    let position = r.opt_point("position")?;
    let Some(mut m) = r.table("mobility")? else {
        return Ok(position.map(MobilitySpec::Stationary));
    };
    let spec = match m.str("model")?.as_str() {
        "waypoints" => waypoints(&mut m, position)?,
        model @ ("random-waypoint" | "random-walk") => {
            let area = m.opt_area("area")?.ok_or_else(|| m.error("area", "missing"))?;
            if let Some(p) = position.filter(|p| !area.contains(p)) {
                return Err(r.error(
                    "position",
                    format!(
                        "[{}, {}] is outside the mobility area [[{}, {}], [{}, {}]]",
                        p.x, p.y, area.x0, area.y0, area.x1, area.y1
                    ),
                ));
            }
            let (speed_min, speed_max) = speed_range(&mut m)?;
            if model == "random-waypoint" {
                let pause = m.duration("pause")?;
                MobilitySpec::RandomWaypoint(RandomWaypointConfig { area, speed_min, speed_max, pause }, position)
            } else {
                let step = walk_step(&mut m)?;
                MobilitySpec::RandomWalk(RandomWalkConfig { area, speed_min, speed_max, step }, position)
            }
        }
        _ => MobilitySpec::Stationary(
            position
                .ok_or_else(|| r.error("position", "missing (a stationary node needs a position, e.g. [100, 50])"))?,
        ),
    };
    // Every rule is checked above with its key; building once more checks the model's own.
    let check = netsim::rng::RngTree::new(0).stream("check");
    if let Err(e) = spec.build(check) {
        return Err(ScenarioError::new(m.path(), e.to_string()));
    }
    r.put_table("mobility", m.finish());
    Ok(Some(spec))
}

/// `speed`, or `speed_min` and `speed_max`, in m/s.
fn speed_range(m: &mut Reader<'_>) -> Result<(f64, f64), ScenarioError> {
    let speed = m.opt_speed("speed")?;
    let min = m.opt_speed("speed_min")?;
    let max = m.opt_speed("speed_max")?;
    let (min, max) = match (speed, min, max) {
        (Some(s), None, None) => (s, s),
        (Some(_), _, _) => {
            let other = if min.is_some() { "speed_min" } else { "speed_max" };
            return Err(m.error(
                "speed",
                format!("give either speed or speed_min and speed_max, not both (speed and {other} given)"),
            ));
        }
        (None, Some(lo), Some(hi)) => (lo, hi),
        (None, Some(_), None) => return Err(m.error("speed_max", "missing (speed_min needs speed_max)")),
        (None, None, Some(_)) => return Err(m.error("speed_min", "missing (speed_max needs speed_min)")),
        (None, None, None) => return Err(m.error("speed", "missing (give speed, or speed_min and speed_max)")),
    };
    let key = if speed.is_some() { "speed" } else { "speed_min" };
    if min <= 0.0 {
        return Err(m.error(key, format!("{} is not a positive speed", given(m, key))));
    }
    if max < min {
        return Err(
            m.error("speed_max", format!("{} is below speed_min {}", given(m, "speed_max"), given(m, "speed_min")))
        );
    }
    Ok((min, max))
}

/// `step` or `step_distance` of a random walk.
fn walk_step(m: &mut Reader<'_>) -> Result<WalkStep, ScenarioError> {
    let step = m.opt_duration("step")?;
    let distance = m.opt_metres("step_distance")?;
    match (step, distance) {
        (Some(_), Some(_)) => Err(m.error("step_distance", "give either step or step_distance, not both")),
        (_, Some(d)) if d <= 0.0 => {
            Err(m.error("step_distance", format!("{} is not a positive distance", given(m, "step_distance"))))
        }
        (_, Some(d)) => Ok(WalkStep::Distance(d)),
        (Some(s), None) if s.is_zero() => {
            Err(m.error("step", format!("{} is not a positive duration", given(m, "step"))))
        }
        (Some(s), None) => Ok(WalkStep::Time(s)),
        (None, None) => Ok(WalkStep::Time(Duration::from_secs(1))),
    }
}

/// The `waypoints` model.
fn waypoints(m: &mut Reader<'_>, position: Option<Position>) -> Result<MobilitySpec, ScenarioError> {
    let list = m.opt_waypoints("waypoints")?.ok_or_else(|| m.error("waypoints", "missing"))?;
    let speed = m.opt_speed("speed")?;
    let start = m.opt_duration("start")?;
    let pause = m.opt_duration("pause")?;
    let built = match list {
        WaypointList::Points(points) => {
            let speed =
                speed.ok_or_else(|| m.error("speed", "missing (plain [x, y] waypoints are visited at a speed)"))?;
            if speed <= 0.0 {
                return Err(m.error("speed", format!("{} is not a positive speed", given(m, "speed"))));
            }
            let (from, rest) = match position {
                Some(p) => (p, &points[..]),
                None => (points[0], &points[1..]),
            };
            let depart = Instant::ZERO + start.unwrap_or(Duration::ZERO);
            Waypoints::with_speed(from, depart, rest, speed, pause.unwrap_or(Duration::ZERO))
        }
        WaypointList::Timed(points) => {
            for key in ["speed", "start", "pause"] {
                if m.has(key) {
                    return Err(m.error(key, "only for plain [x, y] waypoints (timed waypoints give the instants)"));
                }
            }
            if let Some(i) = (1..points.len()).find(|&i| points[i].0 < points[i - 1].0) {
                return Err(ScenarioError::new(
                    format!("{}[{i}].at", m.key_path("waypoints")),
                    "is earlier than the waypoint before it (instants must not decrease)",
                ));
            }
            Waypoints::timed(position, &points)
        }
    };
    built.map(MobilitySpec::Waypoints).map_err(|e| m.error("waypoints", e.to_string()))
}

/// The value given for `key`, as written (for messages).
fn given(m: &Reader<'_>, key: &str) -> String {
    m.given(key).map(show).unwrap_or_default()
}

/// A `waypoints` list: plain points or timed ones, never mixed.
enum WaypointList {
    Points(Vec<Position>),
    Timed(Vec<(Instant, Position)>),
}

impl Reader<'_> {
    /// A point `[x, y]` in metres, if given.
    pub(crate) fn opt_point(&mut self, key: &str) -> Result<Option<Position>, ScenarioError> {
        self.typed(key, point)
    }

    /// A rectangle `[w, h]` or `[[x0, y0], [x1, y1]]`, if given.
    pub(crate) fn opt_area(&mut self, key: &str) -> Result<Option<Area>, ScenarioError> {
        self.typed(key, |v| {
            let bad =
                || format!("{} is not an area (expected [width, height] or [[x0, y0], [x1, y1]] in metres)", show(v));
            let Value::Array(items) = v else { return Err(bad()) };
            let area = match items.as_slice() {
                [Value::Array(_), Value::Array(_)] => {
                    let (a, b) = (point(&items[0]).map_err(|_| bad())?, point(&items[1]).map_err(|_| bad())?);
                    Area::new(a.x, a.y, b.x, b.y)
                }
                [w, h] => Area::sized(number(w).ok_or_else(bad)?, number(h).ok_or_else(bad)?),
                _ => return Err(bad()),
            };
            area.map_err(|_| format!("{} is empty (width and height must be positive)", show(v)))
        })
    }

    /// A speed in m/s, if given (zero allowed here; callers say where it must be positive).
    pub(crate) fn opt_speed(&mut self, key: &str) -> Result<Option<f64>, ScenarioError> {
        self.typed(key, |v| match v {
            Value::String(s) => {
                units::parse_speed(s).map_err(|bad| explain(&show(v), "speed", bad, "e.g. \"4.5km/h\" or \"1.25m/s\""))
            }
            _ => Err(format!(
                "{} is not a speed (write it as a string with a unit, e.g. \"4.5km/h\" or \"1.25m/s\")",
                show(v)
            )),
        })
    }

    /// A number of metres, if given.
    pub(crate) fn opt_metres(&mut self, key: &str) -> Result<Option<f64>, ScenarioError> {
        self.typed(key, |v| number(v).ok_or_else(|| format!("{} is not a number of metres", show(v))))
    }

    fn opt_waypoints(&mut self, key: &str) -> Result<Option<WaypointList>, ScenarioError> {
        let Some(v) = self.given(key) else { return Ok(None) };
        let Value::Array(items) = v else {
            return Err(self.error(key, format!("{} is not a list of waypoints", show(v))));
        };
        if items.is_empty() {
            return Err(self.error(key, "is empty (give at least one waypoint)"));
        }
        let path = self.key_path(key);
        let at = |i: usize, m: String| ScenarioError::new(format!("{path}[{i}]"), m);
        let timed = matches!(items[0], Value::Table(_));
        let mut points = Vec::new();
        let mut times = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match (item, timed) {
                (Value::Table(t), true) => {
                    if let Some(k) = t.keys().find(|k| !["at", "position"].contains(&k.as_str())) {
                        return Err(ScenarioError::new(format!("{path}[{i}].{k}"), "unknown key (expected at, position)"));
                    }
                    let field = |k: &str| {
                        t.get(k).ok_or_else(|| ScenarioError::new(format!("{path}[{i}].{k}"), "missing"))
                    };
                    let when = match field("at")? {
                        Value::String(s) => units::parse_duration(s).map_err(|bad| {
                            ScenarioError::new(
                                format!("{path}[{i}].at"),
                                explain(&format!("\"{s}\""), "duration", bad, "e.g. \"10s\""),
                            )
                        })?,
                        other => {
                            return Err(ScenarioError::new(
                                format!("{path}[{i}].at"),
                                format!("{} is not a duration (write it as a string with a unit, e.g. \"10s\")", show(other)),
                            ))
                        }
                    };
                    let p = point(field("position")?).map_err(|m| ScenarioError::new(format!("{path}[{i}].position"), m))?;
                    times.push((Instant::ZERO + when, p));
                }
                (Value::Array(_), false) => points.push(point(item).map_err(|m| at(i, m))?),
                _ => {
                    return Err(at(
                        i,
                        format!(
                            "{} does not match waypoint 0: use either [x, y] points or {{ at = \"10s\", position = [x, y] }} tables throughout",
                            show(item)
                        ),
                    ))
                }
            }
        }
        self.resolve(key, v.clone());
        Ok(Some(if timed { WaypointList::Timed(times) } else { WaypointList::Points(points) }))
    }
}

/// A finite number (integer or float).
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(n) => Some(*n as f64),
        Value::Float(x) if x.is_finite() => Some(*x),
        _ => None,
    }
}

/// `[x, y]`.
fn point(v: &Value) -> Result<Position, String> {
    let bad = || format!("{} is not a position (expected [x, y] in metres, e.g. [100, 50.5])", show(v));
    match v {
        Value::Array(items) => match items.as_slice() {
            [x, y] => Ok(Position::new(number(x).ok_or_else(bad)?, number(y).ok_or_else(bad)?)),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}
