//! Quantities written the way people write them: durations (`"30ms"`, `"1.5s"`), data rates
//! (`"1Gbps"`, `"100Mbit/s"`), sizes (`"1500B"`, `"64KiB"`), speeds (`"4.5km/h"`, `"1.25m/s"`)
//! and probabilities (`0.01`, `"1%"`). The number may carry a decimal exponent (`"1e6bps"`,
//! `"2.5e-3s"`), as TOML numbers may.
//!
//! Parsers return a [`BadQuantity`] for text they cannot read: what to suggest, if anything. A
//! suggestion never changes the magnitude the text asks for: a unit that differs only in case
//! (`"10mbps"`) is corrected to the unit of that spelling (`"10Mbps"`), never to a nearby one
//! of another scale (`"10Gbps"`), and a unit that could stand for several scales (`"1m"`: ms or
//! min?) gets them all listed, or no guess.

use netsim::Duration;

/// Why a quantity could not be read, and what to suggest instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadQuantity {
    /// Not a quantity of this kind, and no spelling to suggest.
    Unknown,
    /// Very likely meant as this spelling (the same number with a corrected unit of the same
    /// scale, or with the unit that was left out).
    Try(String),
    /// The unit could stand for any of these spellings, each of another scale.
    Ambiguous(Vec<String>),
    /// A byte rate (`"10MBps"`, `"10MB/s"`): this is the same rate in bits per second.
    InBits(String),
    /// Read, but beyond the largest value the kind can hold, which this is (written out).
    TooLarge(String),
}

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

/// Split `"30 ms"` into (30.0, "30", "ms"): a decimal number with an optional exponent
/// (`1e6`, `2.5E-3`), optional spaces, a unit.
fn split(text: &str) -> Option<(f64, &str, &str)> {
    let t = text.trim();
    let mut end = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(t.len());
    // No unit starts with `e`, so `1e3s` is 1e3 seconds, never 1 of a unit "e3s".
    if let Some(rest) = t[end..].strip_prefix(|c| c == 'e' || c == 'E') {
        let unsigned = rest.strip_prefix(|c| c == '+' || c == '-').unwrap_or(rest);
        let digits = unsigned.find(|c: char| !c.is_ascii_digit()).unwrap_or(unsigned.len());
        if digits > 0 {
            end = t.len() - unsigned.len() + digits;
        }
    }
    let (num, unit) = t.split_at(end);
    let value: f64 = num.replace('_', "").parse().ok()?;
    Some((value, num, unit.trim()))
}

fn parse_with(text: &str, units: &[(&str, f64)], example_unit: &str) -> Result<f64, BadQuantity> {
    let Some((value, num, unit)) = split(text) else {
        return Err(BadQuantity::Unknown);
    };
    if let Some((_, scale)) = units.iter().find(|(u, _)| *u == unit) {
        return Ok(value * scale);
    }
    if unit.is_empty() {
        return Err(BadQuantity::Try(format!("{num}{example_unit}")));
    }
    Err(suggest(num, unit, units))
}

/// A unit with its case ignored, except that a `B` for byte stays apart from `b` (a `B` that
/// begins "bit" in any case, as in `"MBIT/S"`, is a bit).
fn fold(unit: &str) -> String {
    unit.char_indices()
        .map(|(i, c)| match c {
            'B' if !unit[i..].to_ascii_lowercase().starts_with("bit") => 'B',
            _ => c.to_ascii_lowercase(),
        })
        .collect()
}

/// What to suggest for `num` written with the unknown `unit`. The first rule that finds a
/// unit decides:
///
/// 1. the same unit in other case (`"10mbps"`: Mbps; `"1S"`: s);
/// 2. units the text is the start of (`"10mbit"`: Mbit/s), all listed when they differ in
///    scale (`"1m"`: ms or min);
/// 3. the same letters in another order (`"30 sm"`: ms);
/// 4. the nearest units by edit distance (`"10Mbs"`: Mbps; `"10sec"`: s), only when they
///    all have one scale: a guess between scales would change the magnitude.
///
/// A `B` (byte) is never suggested away: `"10MBps"` is no misspelt Mbps.
fn suggest(num: &str, unit: &str, units: &[(&str, f64)]) -> BadQuantity {
    let folded = fold(unit);
    let spell = |u: &str| format!("{num}{u}");
    // (unit, scale, folded unit) of each candidate.
    let candidates: Vec<(&str, f64, String)> = units
        .iter()
        .map(|&(u, scale)| (u, scale, fold(u)))
        .filter(|(_, _, f)| !folded.contains('B') || f.contains('B'))
        .collect();
    if let Some((u, _, _)) = candidates.iter().find(|(_, _, f)| *f == folded) {
        return BadQuantity::Try(spell(u));
    }
    let longer: Vec<_> = candidates.iter().filter(|(_, _, f)| f.starts_with(&folded)).collect();
    if !longer.is_empty() {
        let mut scales: Vec<(f64, &str)> = Vec::new();
        for (u, scale, _) in longer {
            if !scales.iter().any(|(s, _)| s == scale) {
                scales.push((*scale, u));
            }
        }
        return match scales.as_slice() {
            [(_, u)] => BadQuantity::Try(spell(u)),
            _ => BadQuantity::Ambiguous(scales.iter().map(|(_, u)| spell(u)).collect()),
        };
    }
    let letters = |s: &str| {
        let mut v: Vec<char> = s.chars().collect();
        v.sort_unstable();
        v
    };
    if let Some((u, _, _)) = candidates.iter().find(|(_, _, f)| letters(f) == letters(&folded)) {
        return BadQuantity::Try(spell(u));
    }
    let near: Vec<_> = candidates
        .iter()
        .map(|(u, scale, f)| (strsim::osa_distance(f, &folded), u.len().abs_diff(unit.len()), *u, *scale))
        .filter(|(d, _, u, _)| *d <= 2.max(u.len() / 2))
        .collect();
    let Some(best) = near.iter().map(|(d, ..)| *d).min() else { return BadQuantity::Unknown };
    let mut nearest: Vec<_> = near.into_iter().filter(|(d, ..)| *d == best).collect();
    if nearest.iter().any(|(.., scale)| *scale != nearest[0].3) {
        return BadQuantity::Unknown;
    }
    nearest.sort_by_key(|(_, len_diff, ..)| *len_diff);
    BadQuantity::Try(spell(nearest[0].2))
}

/// The largest duration there is (the simulation clock counts nanoseconds in 64 bits), as
/// [`BadQuantity::TooLarge`] gives it.
fn largest_duration() -> String {
    let max = Duration(u64::MAX);
    format!("{}, about {} years", format_duration(max), years(max))
}

/// Whole years (of 365.25 days) in `d`.
pub fn years(d: Duration) -> u64 {
    (d.as_secs_f64() / (365.25 * 86_400.0)) as u64
}

/// Parse a duration such as `"30ms"`, `"1.5s"`, `"250us"`, `"2min"`.
pub fn parse_duration(text: &str) -> Result<Duration, BadQuantity> {
    let ns = parse_with(text, DURATION_UNITS, "ms")?;
    if !(0.0..=u64::MAX as f64).contains(&ns) {
        return Err(BadQuantity::TooLarge(largest_duration()));
    }
    Ok(Duration(ns.round() as u64))
}

/// Parse a data rate in bit/s such as `"100Mbps"`, `"1Gbit/s"`, `"64kbps"`.
pub fn parse_rate(text: &str) -> Result<u64, BadQuantity> {
    let bps = parse_with(text, RATE_UNITS, "Mbps").map_err(|e| in_bits(text).unwrap_or(e))?;
    if !(0.0..=u64::MAX as f64).contains(&bps) {
        return Err(BadQuantity::TooLarge(format!("{}bps", u64::MAX)));
    }
    Ok(bps.round() as u64)
}

/// A byte rate such as `"10MBps"` or `"1.5 KiB/s"`, as the same rate in bit/s (when that is a
/// whole number of bit/s).
fn in_bits(text: &str) -> Option<BadQuantity> {
    let (value, _, unit) = split(text)?;
    let per = unit.strip_suffix("ps").or_else(|| unit.strip_suffix("/s"))?;
    let (_, scale) = SIZE_UNITS.iter().find(|(u, _)| *u == per)?;
    let bits = value * scale * 8.0;
    (bits >= 1.0 && bits.fract() == 0.0 && bits <= u64::MAX as f64)
        .then(|| BadQuantity::InBits(format_rate(bits as u64)))
}

/// Parse a size in bytes such as `"1500B"`, `"64KiB"`, `"1MB"`.
pub fn parse_size(text: &str) -> Result<u64, BadQuantity> {
    let bytes = parse_with(text, SIZE_UNITS, "B")?;
    if bytes > u64::MAX as f64 {
        return Err(BadQuantity::TooLarge(format!("{}B", u64::MAX)));
    }
    if !(0.0..=u64::MAX as f64).contains(&bytes) || bytes.fract() != 0.0 {
        return Err(BadQuantity::Unknown);
    }
    Ok(bytes as u64)
}

/// Parse a speed in m/s such as `"4.5km/h"` or `"1.25m/s"`.
pub fn parse_speed(text: &str) -> Result<f64, BadQuantity> {
    let mps = parse_with(text, SPEED_UNITS, "m/s")?;
    if !mps.is_finite() {
        return Err(BadQuantity::Unknown);
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

/// Render a duration exactly in the largest unit it reaches (`1us`, `250ms`,
/// `1844.6744073s`), as it can be written in a scenario.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    let (unit, scale) = [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)]
        .into_iter()
        .find(|&(_, scale)| ns >= scale)
        .unwrap_or(("ns", 1));
    let (whole, fraction) = (ns / scale, ns % scale);
    if fraction == 0 {
        return format!("{whole}{unit}");
    }
    let digits = scale.ilog10() as usize;
    let fraction = format!("{fraction:0digits$}");
    format!("{whole}.{}{unit}", fraction.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn try_(s: &str) -> BadQuantity {
        BadQuantity::Try(s.into())
    }

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
        assert_eq!(parse_duration("30 sm"), Err(try_("30ms")));
        assert_eq!(parse_duration("30"), Err(try_("30ms")));
        assert_eq!(parse_duration("10sec"), Err(try_("10s")));
        assert_eq!(parse_duration("fast"), Err(BadQuantity::Unknown));
        assert_eq!(parse_duration("5 parsecs"), Err(BadQuantity::Unknown));
    }

    #[test]
    fn a_unit_in_other_case_is_corrected_to_that_unit() {
        // The nearest unit by edit distance used to win: "10Gbps" for "10mbps", "1h" for "1S".
        assert_eq!(parse_rate("10mbps"), Err(try_("10Mbps")));
        assert_eq!(parse_rate("10MBIT/S"), Err(try_("10Mbit/s")));
        assert_eq!(parse_duration("1S"), Err(try_("1s")));
        assert_eq!(parse_duration("5MS"), Err(try_("5ms")));
        assert_eq!(parse_duration("2MIN"), Err(try_("2min")));
        assert_eq!(parse_size("64kib"), Err(try_("64KiB")));
        assert_eq!(parse_speed("4.5KM/H"), Err(try_("4.5km/h")));
    }

    #[test]
    fn a_unit_cut_short_is_completed_or_its_candidates_listed() {
        assert_eq!(parse_rate("10mbit"), Err(try_("10Mbit/s")));
        assert_eq!(parse_rate("10G"), Err(try_("10Gbps")));
        // Milliseconds or minutes: both are listed, no guess.
        let ms_or_min = Err(BadQuantity::Ambiguous(vec!["1ms".into(), "1min".into()]));
        assert_eq!(parse_duration("1m"), ms_or_min);
        assert_eq!(parse_duration("1M"), ms_or_min);
        assert_eq!(parse_size("64K"), Err(BadQuantity::Ambiguous(vec!["64kB".into(), "64KiB".into()])));
    }

    #[test]
    fn no_guess_between_units_of_other_scales() {
        // "Xbps" is as near to kbps, Mbps, Gbps and Tbps; "1mn" to ms and min.
        assert_eq!(parse_rate("10Xbps"), Err(BadQuantity::Unknown));
        assert_eq!(parse_duration("1mn"), Err(BadQuantity::Unknown));
        assert_eq!(parse_duration("1es"), Err(BadQuantity::Unknown));
        // Near misses keep the scale the text asks for.
        assert_eq!(parse_rate("10mbits"), Err(try_("10Mbit/s")));
        assert_eq!(parse_rate("10gbs"), Err(try_("10Gbps")));
        assert_eq!(parse_duration("1hr"), Err(try_("1h")));
        assert_eq!(parse_duration("1msec"), Err(try_("1ms")));
    }

    #[test]
    fn a_byte_rate_is_given_in_bits() {
        // "10Mbps" would be 8 times less than what "10MBps" says.
        assert_eq!(parse_rate("10MBps"), Err(BadQuantity::InBits("80Mbps".into())));
        assert_eq!(parse_rate("1.5 kB/s"), Err(BadQuantity::InBits("12kbps".into())));
        assert_eq!(parse_rate("10MBPS"), Err(BadQuantity::Unknown));
    }

    #[test]
    fn numbers_may_have_an_exponent() {
        assert_eq!(parse_rate("1e6bps"), Ok(1_000_000));
        assert_eq!(parse_rate("2.5E9 bit/s"), Ok(2_500_000_000));
        assert_eq!(parse_duration("1e3s"), Ok(Duration::from_secs(1000)));
        assert_eq!(parse_duration("5e-3s"), Ok(Duration::from_millis(5)));
        assert_eq!(parse_duration("1e+2ms"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_size("1.5e3B"), Ok(1500));
        assert_eq!(parse_speed("1e1m/s"), Ok(10.0));
        // An `e` not followed by digits is part of the unit.
        assert_eq!(parse_duration("1e"), Err(BadQuantity::Unknown));
    }

    #[test]
    fn too_large_values_say_so() {
        let max = "18446744073.709551615s, about 584 years".to_string();
        assert_eq!(parse_duration("5124096h"), Err(BadQuantity::TooLarge(max.clone())));
        assert_eq!(parse_duration("1e30s"), Err(BadQuantity::TooLarge(max)));
        assert_eq!(parse_duration("5124095h"), Ok(Duration::from_secs(5_124_095 * 3600)));
        assert_eq!(parse_rate("1e30Tbps"), Err(BadQuantity::TooLarge("18446744073709551615bps".into())));
        assert_eq!(parse_size("1e30GB"), Err(BadQuantity::TooLarge("18446744073709551615B".into())));
    }

    #[test]
    fn units_of_other_scales_never_differ_only_in_case() {
        // What lets a case-only match stand for the unit meant.
        for table in [DURATION_UNITS, RATE_UNITS, SIZE_UNITS, SPEED_UNITS] {
            for (a, sa) in table {
                for (b, sb) in table {
                    assert!(fold(a) != fold(b) || sa == sb, "{a} and {b}");
                }
            }
        }
    }

    #[test]
    fn rates_and_sizes() {
        assert_eq!(parse_rate("1Gbps"), Ok(1_000_000_000));
        assert_eq!(parse_rate("100Mbit/s"), Ok(100_000_000));
        assert_eq!(parse_rate("64kbps"), Ok(64_000));
        assert_eq!(parse_rate("2.5 Mbps"), Ok(2_500_000));
        assert_eq!(parse_rate("10Mbs"), Err(try_("10Mbps")));
        assert_eq!(parse_size("64KiB"), Ok(65_536));
        assert_eq!(parse_size("1500B"), Ok(1500));
        assert_eq!(parse_size("1.5kB"), Ok(1500));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("1.5B"), Err(BadQuantity::Unknown));
        assert_eq!(parse_size("64Kib"), Err(try_("64KiB")));
        assert_eq!(parse_percent("1%"), Some(0.01));
        assert_eq!(parse_percent("1"), None);
        assert_eq!(format_rate(100_000_000), "100Mbps");
        assert_eq!(format_rate(1_500_000), "1500kbps");
    }

    #[test]
    fn durations_are_formatted_exactly() {
        assert_eq!(format_duration(Duration(1_000)), "1us");
        assert_eq!(format_duration(Duration::from_millis(250)), "250ms");
        assert_eq!(format_duration(Duration(1_844_674_407_300)), "1844.6744073s");
        assert_eq!(format_duration(Duration(1_500)), "1.5us");
        assert_eq!(format_duration(Duration(7)), "7ns");
        assert_eq!(format_duration(Duration::ZERO), "0ns");
        assert_eq!(parse_duration(&format_duration(Duration(u64::MAX))), Ok(Duration(u64::MAX)));
    }

    #[test]
    fn speeds() {
        assert_eq!(parse_speed("1.25m/s"), Ok(1.25));
        assert_eq!(parse_speed("4.5km/h"), Ok(1.25));
        assert_eq!(parse_speed("18 km/h"), Ok(5.0));
        assert_eq!(parse_speed("0m/s"), Ok(0.0));
        assert_eq!(parse_speed("4.5"), Err(try_("4.5m/s")));
        assert_eq!(parse_speed("4.5kmh"), Err(try_("4.5km/h")));
        assert_eq!(parse_speed("fast"), Err(BadQuantity::Unknown));
    }
}
