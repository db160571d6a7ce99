//! Quantities written the way people write them: durations (`"30ms"`, `"1.5s"`), data rates
//! (`"1Gbps"`, `"100Mbit/s"`), sizes (`"1500B"`, `"64KiB"`), speeds (`"4.5km/h"`, `"1.25m/s"`)
//! and probabilities (`0.01`, `"1%"`).
//!
//! Parsers return `Err(hint)` where `hint` is a corrected spelling to suggest (`"30ms"` for
//! `"30 sm"`), or an empty string when no sensible correction exists.

use netsim::Duration;

/// Duration units and their length in nanoseconds.
const DURATION_UNITS: &[(&str, f64)] =
    &[("ns", 1.0), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("min", 60e9), ("h", 3600e9)];

/// Rate units and their value in bit/s (SI prefixes: k = 1000).
const RATE_UNITS: &[(&str, f64)] = &[
    ("bps", 1.0),
    ("kbps", 1e3),
    ("Kbps", 1e3),
    ("Mbps", 1e6),
    ("Gbps", 1e9),
    ("Tbps", 1e12),
    ("bit/s", 1.0),
    ("kbit/s", 1e3),
    ("Kbit/s", 1e3),
    ("Mbit/s", 1e6),
    ("Gbit/s", 1e9),
    ("Tbit/s", 1e12),
];

/// Size units and their value in bytes (kB = 1000, KiB = 1024).
const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("kB", 1e3),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
];

/// Speed units and their value in m/s.
const SPEED_UNITS: &[(&str, f64)] = &[("m/s", 1.0), ("km/h", 1.0 / 3.6)];

/// Split `"30 ms"` into (30.0, "ms"): a decimal number, optional spaces, a unit.
fn split(text: &str) -> Option<(f64, &str, &str)> {
    let t = text.trim();
    let end = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    let value: f64 = num.replace('_', "").parse().ok()?;
    Some((value, num, unit.trim()))
}

fn parse_with(text: &str, units: &[(&str, f64)], example_unit: &str) -> Result<f64, String> {
    let Some((value, num, unit)) = split(text) else {
        return Err(String::new());
    };
    if let Some((_, scale)) = units.iter().find(|(u, _)| *u == unit) {
        return Ok(value * scale);
    }
    if unit.is_empty() {
        return Err(format!("{num}{example_unit}"));
    }
    // Suggest the closest unit: fewest edits (transpositions count once), then closest length.
    let best = units
        .iter()
        .map(|(u, _)| (strsim::osa_distance(u, unit), u.len().abs_diff(unit.len()), *u))
        .filter(|(d, _, u)| *d <= 2.max(u.len() / 2))
        .min();
    Err(best.map(|(_, _, u)| format!("{num}{u}")).unwrap_or_default())
}

/// Parse a duration such as `"30ms"`, `"1.5s"`, `"250us"`, `"2min"`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let ns = parse_with(text, DURATION_UNITS, "ms")?;
    if !(0.0..=u64::MAX as f64).contains(&ns) {
        return Err(String::new());
    }
    Ok(Duration(ns.round() as u64))
}

/// Parse a data rate in bit/s such as `"100Mbps"`, `"1Gbit/s"`, `"64kbps"`.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    let bps = parse_with(text, RATE_UNITS, "Mbps")?;
    if !(0.0..=u64::MAX as f64).contains(&bps) {
        return Err(String::new());
    }
    Ok(bps.round() as u64)
}

/// Parse a size in bytes such as `"1500B"`, `"64KiB"`, `"1MB"`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let bytes = parse_with(text, SIZE_UNITS, "B")?;
    if !(0.0..=u64::MAX as f64).contains(&bytes) || bytes.fract() != 0.0 {
        return Err(String::new());
    }
    Ok(bytes as u64)
}

/// Parse a speed in m/s such as `"4.5km/h"` or `"1.25m/s"`.
pub fn parse_speed(text: &str) -> Result<f64, String> {
    let mps = parse_with(text, SPEED_UNITS, "m/s")?;
    if !mps.is_finite() {
        return Err(String::new());
    }
    Ok(mps)
}

/// Parse a percentage such as `"1%"` or `"0.5 %"` into a fraction.
pub fn parse_percent(text: &str) -> Option<f64> {
    let v: f64 = text.trim().strip_suffix('%')?.trim().parse().ok()?;
    Some(v / 100.0)
}

/// Render a rate compactly (`100Mbps`), exact when possible.
pub fn format_rate(bps: u64) -> String {
    for (unit, scale) in [("Tbps", 1_000_000_000_000u64), ("Gbps", 1_000_000_000), ("Mbps", 1_000_000), ("kbps", 1_000)]
    {
        if bps >= scale && bps.is_multiple_of(scale) {
            return format!("{}{unit}", bps / scale);
        }
    }
    format!("{bps}bps")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30ms"), Ok(Duration::from_millis(30)));
        assert_eq!(parse_duration("30 ms"), Ok(Duration::from_millis(30)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("2min"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("7ns"), Ok(Duration(7)));
    }

    #[test]
    fn duration_hints() {
        assert_eq!(parse_duration("30 sm"), Err("30ms".into()));
        assert_eq!(parse_duration("30"), Err("30ms".into()));
        assert_eq!(parse_duration("10sec"), Err("10s".into()));
        assert_eq!(parse_duration("fast"), Err(String::new()));
        assert_eq!(parse_duration("5 parsecs"), Err(String::new()));
    }

    #[test]
    fn rates_and_sizes() {
        assert_eq!(parse_rate("1Gbps"), Ok(1_000_000_000));
        assert_eq!(parse_rate("100Mbit/s"), Ok(100_000_000));
        assert_eq!(parse_rate("64kbps"), Ok(64_000));
        assert_eq!(parse_rate("2.5 Mbps"), Ok(2_500_000));
        assert_eq!(parse_rate("10Mbs"), Err("10Mbps".into()));
        assert_eq!(parse_size("64KiB"), Ok(65_536));
        assert_eq!(parse_size("1500B"), Ok(1500));
        assert_eq!(parse_size("1.5kB"), Ok(1500));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("1.5B"), Err(String::new()));
        assert_eq!(parse_size("64Kib"), Err("64KiB".into()));
        assert_eq!(parse_percent("1%"), Some(0.01));
        assert_eq!(parse_percent("1"), None);
        assert_eq!(format_rate(100_000_000), "100Mbps");
        assert_eq!(format_rate(1_500_000), "1500kbps");
    }

    #[test]
    fn speeds() {
        assert_eq!(parse_speed("1.25m/s"), Ok(1.25));
        assert_eq!(parse_speed("4.5km/h"), Ok(1.25));
        assert_eq!(parse_speed("18 km/h"), Ok(5.0));
        assert_eq!(parse_speed("0m/s"), Ok(0.0));
        assert_eq!(parse_speed("4.5"), Err("4.5m/s".into()));
        assert_eq!(parse_speed("4.5kmh"), Err("4.5km/h".into()));
        assert_eq!(parse_speed("fast"), Err(String::new()));
    }
}
