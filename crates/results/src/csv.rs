//! `scalars.csv`, byte for byte as pandas writes it.

use std::io::Write;
use std::path::Path;

use netsim::recorder::Scalars;

use crate::{with_file, Error};

/// The header line.
const HEADER: &[u8] = b"kind,entity,metric,value,unit\n";

/// Write the scalars as `scalars.csv`: a header, then one line per row in order,
/// `kind,entity,metric,value,unit`, each line ended by `\n`.
///
/// What `DataFrame.to_csv(index=False, lineterminator="\n", na_rep="NaN")` writes: text as
/// it is unless it holds a comma, a double quote, `\n` or `\r`, in which case it is put in
/// double quotes with its double quotes doubled (Python's `csv.QUOTE_MINIMAL`); a value as
/// [`python_float`] writes it, `NaN` for not-a-number.
///
/// # Errors
///
/// [`Error::Io`] if the file cannot be written.
pub fn write_scalars(path: &Path, scalars: &Scalars) -> Result<(), Error> {
    with_file(path, |out| {
        out.write_all(HEADER)?;
        let mut line = String::with_capacity(128);
        for row in &scalars.rows {
            line.clear();
            push_field(&mut line, &row.kind);
            line.push(',');
            push_field(&mut line, &row.entity);
            line.push(',');
            push_field(&mut line, &row.metric);
            line.push(',');
            if row.value.is_nan() {
                line.push_str("NaN");
            } else {
                python_float(row.value, &mut line);
            }
            line.push(',');
            push_field(&mut line, &row.unit);
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
        Ok(())
    })
}

/// Append `text` as a CSV field: quoted only when it holds a delimiter, a quote or a line
/// break, quotes doubled.
fn push_field(line: &mut String, text: &str) {
    if !text.contains([',', '"', '\n', '\r']) {
        line.push_str(text);
        return;
    }
    line.push('"');
    for c in text.chars() {
        if c == '"' {
            line.push('"');
        }
        line.push(c);
    }
    line.push('"');
}

/// Append `x` as Python's `repr(x)` (and numpy's `str`) writes it: the shortest digits that
/// read back as `x`, in positional notation when the decimal exponent is from -4 to 15
/// (`0.0001`, `123.0`, `1234567890123456.0`) and in scientific notation otherwise
/// (`1e-05`, `1.5e+16`: a sign and at least two digits in the exponent); a whole number in
/// positional notation ends in `.0`. Also `inf`, `-inf`, `nan`, and `-0.0`.
pub fn python_float(x: f64, out: &mut String) {
    if x.is_nan() {
        out.push_str("nan");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "inf" } else { "-inf" });
        return;
    }
    if x.is_sign_negative() {
        out.push('-');
    }
    let sci = shortest_digits(x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let digits = digits.as_str();
    // The value is 0.<digits> x 10^point.
    let point = exp + 1;
    if point > -4 && point <= 16 {
        positional(digits, point, out);
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let magnitude = exp.unsigned_abs();
        if magnitude < 10 {
            out.push('0');
        }
        out.push_str(&magnitude.to_string());
    }
}

/// `x` (finite, not negative) in scientific notation with the fewest digits that read back
/// as `x`, "d.ddde<exp>" or "de<exp>"; when two such strings are equally close to `x`, the
/// one with an even last digit, as Python's repr (David Gay's dtoa, mode 0) chooses.
fn shortest_digits(x: f64) -> String {
    // Rust's `{:e}` gives the shortest digits that round-trip, but breaks a tie between two
    // upward (86991125246116.125 -> ...116.13, Python ...116.12). Formatting the exact value
    // to as many digits rounds a tie to even; it is the answer whenever it also reads back as
    // `x` (not always so next to a power of two, where the gap below `x` is half the gap above).
    let shortest = format!("{x:e}");
    let digits = shortest.split('e').next().map_or(1, |m| m.chars().filter(char::is_ascii_digit).count());
    let rounded = format!("{:.*e}", digits.saturating_sub(1), x);
    if rounded != shortest && rounded.parse::<f64>() == Ok(x) {
        rounded
    } else {
        shortest
    }
}

/// `0.<digits> x 10^point` in positional notation, at least one digit after the point.
fn positional(digits: &str, point: i32, out: &mut String) {
    let n = digits.len() as i32;
    if point <= 0 {
        out.push_str("0.");
        for _ in 0..-point {
            out.push('0');
        }
        out.push_str(digits);
    } else if point < n {
        let split = point as usize;
        out.push_str(&digits[..split]);
        out.push('.');
        out.push_str(&digits[split..]);
    } else {
        out.push_str(digits);
        for _ in 0..point - n {
            out.push('0');
        }
        out.push_str(".0");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(x: f64) -> String {
        let mut s = String::new();
        python_float(x, &mut s);
        s
    }

    #[test]
    #[allow(clippy::excessive_precision)] // exact values halfway between two shortest strings
    fn floats_are_written_as_python_repr() {
        // Each pair checked against CPython 3.11's repr().
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (0.30000000000000004, "0.30000000000000004"),
            (123456.0, "123456.0"),
            (9.98e6, "9980000.0"),
            (0.0123456, "0.0123456"),
            (1e-4, "0.0001"),
            (1.5e-4, "0.00015"),
            (1e-5, "1e-05"),
            (2.5e-5, "2.5e-05"),
            (1234567890123456.0, "1234567890123456.0"),
            (9999999999999998.0, "9999999999999998.0"),
            (1e16, "1e+16"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (1e100, "1e+100"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            // Two shortest candidates equally close: the even last digit.
            (-86991125246116.125, "-86991125246116.12"),
            (1201151154146267.25, "1201151154146267.2"),
            (0.125, "0.125"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ];
        for &(x, want) in cases {
            assert_eq!(repr(x), want, "{x:e}");
        }
    }

    #[test]
    fn fields_are_quoted_only_when_needed() {
        let mut s = String::new();
        for text in ["R1/eth0", "", "a,b", "say \"hi\"", "two\nlines", "cr\r"] {
            push_field(&mut s, text);
            s.push('|');
        }
        assert_eq!(s, "R1/eth0||\"a,b\"|\"say \"\"hi\"\"\"|\"two\nlines\"|\"cr\r\"|");
    }

    #[test]
    fn scalars_file_has_header_rows_and_nan() {
        let dir = std::env::temp_dir().join(format!("results-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("scalars.csv");
        let mut scalars = Scalars::default();
        scalars.push("flow", "video", "goodput", 9.98e6, "bit/s");
        scalars.push("flow", "a,b", "delay_mean", f64::NAN, "s");
        write_scalars(&path, &scalars).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            text,
            "kind,entity,metric,value,unit\nflow,video,goodput,9980000.0,bit/s\nflow,\"a,b\",delay_mean,NaN,s\n"
        );
    }
}
