//! Tests of the mobility models through the public API.

use super::*;
use crate::rng::RngTree;
use crate::time::Duration;

fn secs(s: f64) -> Instant {
    Instant::from_nanos((s * 1e9).round() as u64)
}

fn p(x: f64, y: f64) -> Position {
    Position::new(x, y)
}

/// Every segment from the start until `until`, in order, through `segment_at` and `next_change`.
fn segments(m: &Mobility, until: Instant) -> Vec<Segment> {
    let mut out = vec![m.segment_at(Instant::ZERO)];
    while let Some(t) = m.next_change(out[out.len() - 1].start) {
        if t > until {
            break;
        }
        out.push(m.segment_at(t));
    }
    out
}

fn rwp(seed: u64, start: Option<Position>) -> Mobility {
    let config = RandomWaypointConfig {
        area: Area::sized(600.0, 400.0).unwrap(),
        speed_min: 4.5 / 3.6,
        speed_max: 15.5 / 3.6,
        pause: Duration::from_secs(2),
    };
    Mobility::random_waypoint(config, start, RngTree::new(seed).stream(&stream_name("mc"))).unwrap()
}

fn walk(seed: u64, area: Area, step: WalkStep) -> Mobility {
    let config = RandomWalkConfig { area, speed_min: 2.0, speed_max: 4.0, step };
    Mobility::random_walk(config, None, RngTree::new(seed).stream(&stream_name("w"))).unwrap()
}

#[test]
fn stationary_is_where_it_was_put_for_ever() {
    let m = Mobility::stationary(12.5, -3.0);
    for t in [Instant::ZERO, Instant::from_nanos(1), Instant::ZERO + Duration::from_secs(1_000_000)] {
        assert_eq!(m.position_at(t), p(12.5, -3.0));
        assert_eq!(m.next_change(t), None);
    }
    let other = Mobility::stationary(0.0, 1.0);
    assert_eq!(m.next_crossing(&other, Instant::ZERO, 100.0), Crossing::Never);
}

#[test]
fn waypoints_at_a_speed_give_exact_positions() {
    // Wait 1 s, 50 m to (30, 40) at 5 m/s (10 s), pause 2 s, 40 m to (30, 0) (8 s), stay.
    let w = Waypoints::with_speed(p(0.0, 0.0), secs(1.0), &[p(30.0, 40.0), p(30.0, 0.0)], 5.0, Duration::from_secs(2))
        .unwrap();
    let m = Mobility::Waypoints(w);
    let expect = [
        (0.0, p(0.0, 0.0)),
        (1.0, p(0.0, 0.0)),
        (6.0, p(15.0, 20.0)),
        (11.0, p(30.0, 40.0)),
        (12.0, p(30.0, 40.0)),
        (13.0, p(30.0, 40.0)),
        (17.0, p(30.0, 20.0)),
        (21.0, p(30.0, 0.0)),
        (1000.0, p(30.0, 0.0)),
    ];
    for (t, want) in expect {
        assert_eq!(m.position_at(secs(t)), want, "at {t} s");
    }
    let changes: Vec<_> = segments(&m, Instant::MAX).iter().map(|s| s.end).collect();
    assert_eq!(changes, vec![secs(1.0), secs(11.0), secs(13.0), secs(21.0), Instant::MAX]);
    assert_eq!(m.next_change(secs(21.0)), None);
    // Backwards queries are answered too.
    assert_eq!(m.position_at(secs(6.0)), p(15.0, 20.0));
    assert_eq!(m.segment_at(secs(17.0)).speed(), 5.0);
}

#[test]
fn timed_waypoints_interpolate_and_jump() {
    let points =
        [(secs(2.0), p(0.0, 0.0)), (secs(4.0), p(10.0, 0.0)), (secs(4.0), p(20.0, 20.0)), (secs(6.0), p(20.0, 0.0))];
    let m = Mobility::Waypoints(Waypoints::timed(None, &points).unwrap());
    assert_eq!(m.position_at(secs(0.0)), p(0.0, 0.0));
    assert_eq!(m.position_at(secs(3.0)), p(5.0, 0.0));
    assert_eq!(m.position_at(secs(4.0)), p(20.0, 20.0));
    assert_eq!(m.position_at(secs(5.0)), p(20.0, 10.0));
    assert_eq!(m.position_at(secs(60.0)), p(20.0, 0.0));
    // With a start position the node leaves it at once to be at the first point in time.
    let m = Mobility::Waypoints(Waypoints::timed(Some(p(-10.0, 0.0)), &points[..2]).unwrap());
    assert_eq!(m.position_at(secs(1.0)), p(-5.0, 0.0));
    let back = [(secs(2.0), p(0.0, 0.0)), (secs(1.0), p(1.0, 0.0))];
    assert_eq!(Waypoints::timed(None, &back).unwrap_err(), MobilityError::TimeGoesBack { index: 1 });
    assert_eq!(Waypoints::timed(None, &[]).unwrap_err(), MobilityError::NoWaypoints);
    assert_eq!(
        Waypoints::with_speed(p(0.0, 0.0), Instant::ZERO, &[], 0.0, Duration::ZERO).unwrap_err(),
        MobilityError::Speed(0.0)
    );
}

#[test]
fn random_waypoint_stays_in_the_area_within_its_speeds_and_pauses() {
    let m = rwp(7, Some(p(100.0, 200.0)));
    let area = Area::sized(600.0, 400.0).unwrap();
    let segs = segments(&m, secs(20_000.0));
    assert!(segs.len() > 100, "{} segments", segs.len());
    assert_eq!(segs[0].from, p(100.0, 200.0));
    let (mut lo, mut hi) = (f64::MAX, 0.0f64);
    for (i, s) in segs.iter().enumerate() {
        assert!(area.contains(&s.to), "{s:?}");
        if i > 0 {
            assert_eq!(s.start, segs[i - 1].end);
            assert_eq!(s.from, segs[i - 1].to);
        }
        if i % 2 == 0 {
            // Pauses first, then every other segment.
            assert_eq!(s.from, s.to);
            assert_eq!(s.duration(), Duration::from_secs(2));
        } else {
            let v = s.speed();
            lo = lo.min(v);
            hi = hi.max(v);
            assert!((4.5 / 3.6 - 1e-6..=15.5 / 3.6 + 1e-6).contains(&v), "speed {v}");
        }
    }
    // The draws spread over the range (the speed is drawn, not fixed).
    assert!(lo < 1.5 && hi > 4.0, "speeds {lo}..{hi}");
    // Without a start position the first point is drawn in the area too.
    let drawn = rwp(7, None).position_at(Instant::ZERO);
    assert!(area.contains(&drawn) && drawn != p(100.0, 200.0));
}

#[test]
fn random_waypoint_depends_on_the_seed_only_not_on_the_queries() {
    let coarse = rwp(11, None);
    let fine = rwp(11, None);
    let mut at_second = Vec::new();
    for k in 0..=30_000u64 {
        let t = Instant::from_nanos(k * 100_000_000);
        let pos = fine.position_at(t);
        if k % 10 == 0 {
            at_second.push(pos);
        }
    }
    for (k, want) in at_second.iter().enumerate() {
        let got = coarse.position_at(Instant::ZERO + Duration::from_secs(k as u64));
        assert_eq!(got.x.to_bits(), want.x.to_bits());
        assert_eq!(got.y.to_bits(), want.y.to_bits());
    }
    // Going back far (past the kept segments) replays the same trajectory.
    assert_eq!(coarse.position_at(Instant::ZERO + Duration::from_secs(17)), at_second[17]);
    assert_eq!(coarse.position_at(Instant::ZERO + Duration::from_secs(2_999)), at_second[2_999]);
    // Another seed is another trajectory.
    assert_ne!(rwp(12, None).position_at(Instant::ZERO + Duration::from_secs(100)), at_second[100]);
}

#[test]
fn random_walk_reflects_at_the_borders() {
    let area = Area::sized(20.0, 10.0).unwrap();
    let m = walk(3, area, WalkStep::Time(Duration::from_secs(30)));
    let segs = segments(&m, secs(3_000.0));
    let mut reflections = 0;
    for pair in segs.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        assert!(area.contains(&a.to), "{a:?}");
        assert_eq!(a.to, b.from);
        let step_end = a.end.as_nanos() % 30_000_000_000 == 0;
        if step_end {
            continue;
        }
        // Within a step: the same speed, mirrored across the border that was hit.
        reflections += 1;
        let ((ax, ay), (bx, by)) = (a.velocity(), b.velocity());
        assert!((a.speed() - b.speed()).abs() < 1e-6 * a.speed().max(1.0), "{a:?} {b:?}");
        let on_x = a.to.x == area.x0 || a.to.x == area.x1;
        let on_y = a.to.y == area.y0 || a.to.y == area.y1;
        assert!(on_x || on_y, "turned away from the borders: {a:?}");
        if on_x && !on_y {
            assert!(ax * bx < 0.0 && (ay - by).abs() < 1e-6, "{a:?} {b:?}");
        }
        if on_y && !on_x {
            assert!(ay * by < 0.0 && (ax - bx).abs() < 1e-6, "{a:?} {b:?}");
        }
    }
    assert!(reflections > 100, "{reflections} reflections");
}

#[test]
fn random_walk_by_distance_draws_a_new_direction_after_each_distance() {
    let area = Area::sized(1000.0, 1000.0).unwrap();
    let m = walk(5, area, WalkStep::Distance(10.0));
    let segs = segments(&m, secs(1_000.0));
    // Far from the borders almost every segment is one whole step of 10 m.
    let whole = segs.iter().filter(|s| (s.from.distance(&s.to) - 10.0).abs() < 1e-6).count();
    assert!(whole * 10 >= segs.len() * 9, "{whole} of {}", segs.len());
    for s in &segs {
        assert!(s.speed() >= 2.0 - 1e-6 && s.speed() <= 4.0 + 1e-6);
    }
}

#[test]
fn crossings_along_a_random_trajectory_match_sampling() {
    let m = rwp(21, None);
    let ap = Mobility::stationary(300.0, 200.0);
    let r = 150.0;
    let end = secs(3_000.0);
    let side = |t: Instant| m.position_at(t).distance(&ap.position_at(t)) < r;
    let mut crossings = Vec::new();
    let mut t = Instant::ZERO;
    while t < end {
        match m.next_crossing(&ap, t, r) {
            Crossing::At(c) => {
                assert_ne!(side(c), side(Instant::from_nanos(c.as_nanos() - 1)), "not a crossing at {c}");
                crossings.push(c);
                t = c;
            }
            Crossing::NotBefore(c) => t = c,
            Crossing::Never => break,
        }
    }
    assert!(crossings.len() > 4, "{} crossings", crossings.len());
    let start = side(Instant::ZERO);
    for k in 0..300_000u64 {
        let t = Instant::from_nanos(k * 10_000_000);
        let odd = crossings.iter().filter(|&&c| c <= t).count() % 2 == 1;
        assert_eq!(side(t), start != odd, "at {t}");
    }
}
