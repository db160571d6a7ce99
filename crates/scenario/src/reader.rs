//! Reading a TOML tree through the schema, with the exact key path in every error.
//!
//! A [`Reader`] wraps one TOML table and the [`Section`] describing it. Construction rejects
//! unknown keys (suggesting the closest known one); typed getters convert values, fall back to
//! the schema's default, and record the value actually used so that the fully resolved scenario
//! can be written out with the results.

use std::net::Ipv4Addr;

use netsim::Duration;
use toml::{Table, Value};

use crate::error::ScenarioError;
use crate::schema::{Fallback, Field, Section, Ty};
use crate::units::{self, BadQuantity};

/// A table being read against its section of the schema.
pub struct Reader<'a> {
    path: String,
    table: &'a Table,
    fields: Vec<&'static Field>,
    resolved: Table,
}

/// Render a value as it appears in a TOML file (strings quoted).
pub fn show(v: &Value) -> String {
    match v {
        Value::Table(_) => "a table".into(),
        Value::Array(a) if a.len() > 4 => format!("a list of {} values", a.len()),
        other => other.to_string(),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Why `shown` (a value as written) is not a `what` (`"duration"`, `"rate"`, ...), with the
/// suggestion the unit parser made, or `example` when it made none.
pub(crate) fn explain(shown: &str, what: &str, bad: BadQuantity, example: &str) -> String {
    let quoted = |items: &[String]| items.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>().join(" or ");
    match bad {
        BadQuantity::Unknown => format!("{shown} is not a {what} ({example})"),
        BadQuantity::Try(s) => format!("{shown} is not a {what} (try \"{s}\")"),
        BadQuantity::Ambiguous(list) => format!("{shown} is not a {what} (did you mean {}?)", quoted(&list)),
        BadQuantity::InBits(s) => format!("{shown} is not a {what} (rates are in bits per second: try \"{s}\")"),
        BadQuantity::TooLarge(max) => format!("{shown} is too large (the largest {what} is {max})"),
    }
}

/// "did you mean" for a misspelt word among `candidates`.
pub fn suggest<'c>(word: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3) && *d < c.len())
        .min()
        .map(|(_, c)| c)
}

impl<'a> Reader<'a> {
    /// Read `table` (found at `path`) as `section`: the tag is read first, then every key is
    /// checked against the section's keys.
    pub fn new(path: String, table: &'a Table, section: &'static Section) -> Result<Self, ScenarioError> {
        let mut fields: Vec<&'static Field> = section.fields.iter().collect();
        let mut reader = Reader { path, table, fields: fields.clone(), resolved: Table::new() };
        if let Some(tag) = section.tag {
            if let Some(value) = reader.opt_str(tag)? {
                if let Some((_, extra)) = section.variants.iter().find(|(v, _)| *v == value) {
                    fields.extend(extra.iter());
                }
            }
        }
        reader.fields = fields;
        for key in table.keys() {
            if !reader.fields.iter().any(|f| f.key == key) {
                let known = reader.fields.iter().map(|f| f.key);
                let detail = match suggest(key, known.clone()) {
                    Some(s) => format!("unknown key (did you mean \"{s}\"?)"),
                    None => format!("unknown key (expected one of: {})", known.collect::<Vec<_>>().join(", ")),
                };
                return Err(ScenarioError::new(join(&reader.path, key), detail));
            }
        }
        Ok(reader)
    }

    /// Path of this table (`links[2]`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Path of one of its keys (`links[2].delay`).
    pub fn key_path(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// An error about `key`.
    pub fn error(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError::new(self.key_path(key), message)
    }

    /// True if the scenario gives `key` explicitly.
    pub fn has(&self, key: &str) -> bool {
        self.table.contains_key(key)
    }

    /// The value given for `key` (no default), for messages.
    pub fn given(&self, key: &str) -> Option<&'a Value> {
        self.table.get(key)
    }

    fn field(&self, key: &str) -> &'static Field {
        self.fields
            .iter()
            .find(|f| f.key == key)
            .copied()
            .unwrap_or_else(|| panic!("schema has no key {}", self.key_path(key)))
    }

    /// The value given, or the default; `None` if absent without default. Records it.
    fn value(&mut self, key: &str) -> Result<Option<Value>, ScenarioError> {
        let field = self.field(key);
        let value = match (self.table.get(key), field.default) {
            (Some(v), _) => v.clone(),
            (None, Fallback::Required) => {
                return Err(self.error(key, format!("missing (expected {})", field.ty.describe())));
            }
            (None, Fallback::Absent(_)) => return Ok(None),
            (None, Fallback::Value(text)) if field.ty.is_stringy() => Value::String(text.into()),
            (None, Fallback::Value(text)) => {
                let doc: Table = toml::from_str(&format!("v = {text}"))
                    .unwrap_or_else(|e| panic!("bad schema default for {key}: {e}"));
                doc["v"].clone()
            }
        };
        if !matches!(field.ty, Ty::Table(_) | Ty::TableList(_)) {
            self.resolved.insert(key.into(), value.clone());
        }
        Ok(Some(value))
    }

    /// Record the value actually used for a key that has no static default (derived names).
    pub fn resolve(&mut self, key: &str, value: impl Into<Value>) {
        self.resolved.insert(key.into(), value.into());
    }

    pub(crate) fn typed<T>(
        &mut self,
        key: &str,
        convert: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<Option<T>, ScenarioError> {
        match self.value(key)? {
            None => Ok(None),
            Some(v) => convert(&v).map(Some).map_err(|m| self.error(key, m)),
        }
    }

    fn required<T>(&self, key: &str, v: Option<T>) -> T {
        v.unwrap_or_else(|| panic!("schema key {} has no default but is read as required", self.key_path(key)))
    }

    /// A string (`Str`, `Name`, `Enum`, address-like keys), if given or defaulted.
    pub fn opt_str(&mut self, key: &str) -> Result<Option<String>, ScenarioError> {
        let ty = self.field(key).ty;
        self.typed(key, |v| {
            let Value::String(s) = v else {
                return Err(format!("{} is not a string (expected {})", show(v), ty.describe()));
            };
            match ty {
                Ty::Name if s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) => {
                    Err(format!("{} is not a valid name (use letters, digits, '-', '_' and '.')", show(v)))
                }
                Ty::Enum(words) if !words.contains(&s.as_str()) => {
                    let options = words.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(", ");
                    Err(match suggest(s, words.iter().copied()) {
                        Some(w) => format!("{} is not one of {options} (did you mean \"{w}\"?)", show(v)),
                        None => format!("{} is not one of {options}", show(v)),
                    })
                }
                _ => Ok(s.clone()),
            }
        })
    }

    /// A string that has a default or is required.
    pub fn str(&mut self, key: &str) -> Result<String, ScenarioError> {
        let v = self.opt_str(key)?;
        Ok(self.required(key, v))
    }

    /// A duration, if given or defaulted.
    pub fn opt_duration(&mut self, key: &str) -> Result<Option<Duration>, ScenarioError> {
        self.read_duration(key, None)
    }

    /// A duration that has a default or is required.
    pub fn duration(&mut self, key: &str) -> Result<Duration, ScenarioError> {
        let v = self.opt_duration(key)?;
        Ok(self.required(key, v))
    }

    /// A duration, if given or defaulted, of at most `max`. A longer one, or one too large for
    /// any duration, is rejected as "`<value>` `<beyond>`", where `beyond` says what the limit
    /// is and why (e.g. "is longer than the 500ms RFC 9260 §6.2 allows").
    pub fn opt_duration_up_to(
        &mut self,
        key: &str,
        max: Duration,
        beyond: &str,
    ) -> Result<Option<Duration>, ScenarioError> {
        self.read_duration(key, Some((max, beyond)))
    }

    fn read_duration(&mut self, key: &str, limit: Option<(Duration, &str)>) -> Result<Option<Duration>, ScenarioError> {
        self.typed(key, |v| {
            let Value::String(s) = v else {
                return Err(format!(
                    "{} is not a duration (write it as a string with a unit, e.g. \"{}s\")",
                    show(v),
                    v.as_integer().unwrap_or(30)
                ));
            };
            match (units::parse_duration(s), limit) {
                (Ok(d), Some((max, beyond))) if d > max => Err(format!("{} {beyond}", show(v))),
                (Err(BadQuantity::TooLarge(_)), Some((_, beyond))) => Err(format!("{} {beyond}", show(v))),
                (Ok(d), _) => Ok(d),
                (Err(bad), _) => Err(explain(&show(v), "duration", bad, "e.g. \"30ms\"")),
            }
        })
    }

    /// A duration of at most `max` that has a default or is required (see
    /// [`Reader::opt_duration_up_to`]).
    pub fn duration_up_to(&mut self, key: &str, max: Duration, beyond: &str) -> Result<Duration, ScenarioError> {
        let v = self.opt_duration_up_to(key, max, beyond)?;
        Ok(self.required(key, v))
    }

    /// A rate in bit/s, if given or defaulted. Zero is rejected.
    pub fn opt_rate(&mut self, key: &str) -> Result<Option<u64>, ScenarioError> {
        self.typed(key, |v| match v {
            Value::String(s) => match units::parse_rate(s) {
                Ok(0) => Err(format!("{} is not a positive rate", show(v))),
                Ok(r) => Ok(r),
                Err(bad) => Err(explain(&show(v), "rate", bad, "e.g. \"100Mbps\"")),
            },
            _ => Err(format!("{} is not a rate (write it as a string with a unit, e.g. \"100Mbps\")", show(v))),
        })
    }

    /// A rate that has a default or is required.
    pub fn rate(&mut self, key: &str) -> Result<u64, ScenarioError> {
        let v = self.opt_rate(key)?;
        Ok(self.required(key, v))
    }

    /// A size in bytes, if given or defaulted.
    pub fn opt_size(&mut self, key: &str) -> Result<Option<u64>, ScenarioError> {
        self.typed(key, |v| match v {
            Value::Integer(n) if *n >= 0 => Ok(*n as u64),
            Value::String(s) => units::parse_size(s).map_err(|bad| explain(&show(v), "size", bad, "e.g. \"1500B\"")),
            _ => Err(format!("{} is not a size (expected a number of bytes or e.g. \"64KiB\")", show(v))),
        })
    }

    /// A size that has a default or is required.
    pub fn size(&mut self, key: &str) -> Result<u64, ScenarioError> {
        let v = self.opt_size(key)?;
        Ok(self.required(key, v))
    }

    /// An integer within the schema's bounds, if given or defaulted.
    pub fn opt_int(&mut self, key: &str) -> Result<Option<i64>, ScenarioError> {
        let Ty::Int(lo, hi) = self.field(key).ty else { panic!("{} is not an integer key", self.key_path(key)) };
        self.typed(key, |v| match v {
            Value::Integer(n) if (lo..=hi).contains(n) => Ok(*n),
            Value::Integer(_) => Err(format!("{} is out of range (expected an integer from {lo} to {hi})", show(v))),
            _ => Err(format!("{} is not an integer", show(v))),
        })
    }

    /// An integer that has a default or is required.
    pub fn int(&mut self, key: &str) -> Result<i64, ScenarioError> {
        let v = self.opt_int(key)?;
        Ok(self.required(key, v))
    }

    /// A probability in [0, 1] (a number or a percentage string).
    pub fn probability(&mut self, key: &str) -> Result<f64, ScenarioError> {
        let v = self.typed(key, |v| {
            let p = match v {
                Value::Float(x) => *x,
                Value::Integer(n) => *n as f64,
                Value::String(s) => units::parse_percent(s)
                    .ok_or_else(|| format!("{} is not a probability (e.g. 0.01 or \"1%\")", show(v)))?,
                _ => return Err(format!("{} is not a probability (e.g. 0.01 or \"1%\")", show(v))),
            };
            if (0.0..=1.0).contains(&p) {
                Ok(p)
            } else {
                Err(format!("{} is out of range (expected a probability between 0 and 1)", show(v)))
            }
        })?;
        Ok(self.required(key, v))
    }

    /// A number within the schema's bounds (an integer or a float), if given or defaulted.
    pub fn opt_number(&mut self, key: &str) -> Result<Option<f64>, ScenarioError> {
        let Ty::Number(lo, hi) = self.field(key).ty else { panic!("{} is not a number key", self.key_path(key)) };
        self.typed(key, |v| {
            let x = match v {
                Value::Float(x) => *x,
                Value::Integer(n) => *n as f64,
                _ => return Err(format!("{} is not a number", show(v))),
            };
            if x.is_finite() && (lo..=hi).contains(&x) {
                Ok(x)
            } else if hi == f64::MAX {
                Err(format!("{} is out of range (expected a number >= {lo})", show(v)))
            } else {
                Err(format!("{} is out of range (expected a number from {lo} to {hi})", show(v)))
            }
        })
    }

    /// A number that has a default or is required.
    pub fn number(&mut self, key: &str) -> Result<f64, ScenarioError> {
        let v = self.opt_number(key)?;
        Ok(self.required(key, v))
    }

    /// A power in dBm: a number (dBm) or a string `"<x>dBm"` / `"<x>mW"` (mW above zero).
    pub fn power_dbm(&mut self, key: &str) -> Result<f64, ScenarioError> {
        let v = self.typed(key, |v| {
            let bad = || format!("{} is not a power (e.g. 16, \"16dBm\" or \"40mW\")", show(v));
            let dbm = match v {
                Value::Float(x) => *x,
                Value::Integer(n) => *n as f64,
                Value::String(s) => {
                    let s = s.trim();
                    if let Some(x) = s.strip_suffix("dBm") {
                        x.trim().parse::<f64>().map_err(|_| bad())?
                    } else if let Some(x) = s.strip_suffix("mW") {
                        let mw = x.trim().parse::<f64>().map_err(|_| bad())?;
                        if mw.is_nan() || mw <= 0.0 {
                            return Err(format!("{} is not a positive power", show(v)));
                        }
                        10.0 * mw.log10()
                    } else {
                        return Err(bad());
                    }
                }
                _ => return Err(bad()),
            };
            if dbm.is_finite() && (-100.0..=60.0).contains(&dbm) {
                Ok(dbm)
            } else {
                Err(format!("{} is out of range (expected -100 to 60 dBm)", show(v)))
            }
        })?;
        Ok(self.required(key, v))
    }

    /// A boolean.
    pub fn bool(&mut self, key: &str) -> Result<bool, ScenarioError> {
        let v = self.opt_bool(key)?;
        Ok(self.required(key, v))
    }

    /// A boolean, `None` if absent without default.
    pub fn opt_bool(&mut self, key: &str) -> Result<Option<bool>, ScenarioError> {
        self.typed(key, |v| match v {
            Value::Boolean(b) => Ok(*b),
            _ => Err(format!("{} is not a boolean (write true or false)", show(v))),
        })
    }

    /// A list of strings; each element's path is `key[i]`.
    pub fn str_list(&mut self, key: &str) -> Result<Vec<String>, ScenarioError> {
        let v = self.typed(key, |v| {
            let Value::Array(items) = v else { return Err(format!("{} is not a list of strings", show(v))) };
            Ok(items.clone())
        })?;
        let items = self.required(key, v);
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(ScenarioError::new(
                    format!("{}[{i}]", self.key_path(key)),
                    format!("{} is not a string", show(other)),
                )),
            })
            .collect()
    }

    /// An IPv4 address.
    pub fn addr(&mut self, key: &str) -> Result<Ipv4Addr, ScenarioError> {
        let v = self.typed(key, |v| match v {
            Value::String(s) => {
                s.parse::<Ipv4Addr>().map_err(|_| format!("{} is not an IPv4 address (e.g. \"10.0.1.1\")", show(v)))
            }
            _ => Err(format!("{} is not an IPv4 address (write it as a string, e.g. \"10.0.1.1\")", show(v))),
        })?;
        Ok(self.required(key, v))
    }

    /// An IPv4 prefix `a.b.c.d/len`.
    pub fn prefix(&mut self, key: &str) -> Result<(Ipv4Addr, u8), ScenarioError> {
        let v = self.typed(key, |v| {
            let bad = || format!("{} is not an IPv4 prefix (e.g. \"10.0.2.0/24\")", show(v));
            let Value::String(s) = v else { return Err(bad()) };
            let (addr, len) = s.split_once('/').ok_or_else(bad)?;
            let addr: Ipv4Addr = addr.parse().map_err(|_| bad())?;
            let len: u8 = len.parse().ok().filter(|l| *l <= 32).ok_or_else(bad)?;
            Ok((addr, len))
        })?;
        Ok(self.required(key, v))
    }

    /// A queue limit: an integer is packets, a size string is bytes.
    pub fn queue_limit(&mut self, key: &str) -> Result<netsim::queue::QueueLimit, ScenarioError> {
        use netsim::queue::QueueLimit;
        let v = self.typed(key, |v| match v {
            Value::Integer(n) if *n >= 1 => Ok(QueueLimit::Packets(*n as usize)),
            Value::String(s) => match units::parse_size(s) {
                Ok(b) if b >= 1 => Ok(QueueLimit::Bytes(b as usize)),
                Ok(_) => Err(format!("{} is not a positive size", show(v))),
                Err(bad) => Err(explain(
                    &show(v),
                    "queue limit",
                    bad,
                    "an integer number of packets, or a size such as \"64KiB\"",
                )),
            },
            _ => Err(format!(
                "{} is not a queue limit (an integer number of packets >= 1, or a size like \"64KiB\")",
                show(v)
            )),
        })?;
        Ok(self.required(key, v))
    }

    /// A nested table, read as its section (absent tables are read as empty when the schema
    /// default is `{}`; `None` when absent without default).
    pub fn table(&mut self, key: &str) -> Result<Option<Reader<'a>>, ScenarioError> {
        let field = self.field(key);
        let Ty::Table(section) = field.ty else { panic!("{} is not a table key", self.key_path(key)) };
        static EMPTY: std::sync::OnceLock<Table> = std::sync::OnceLock::new();
        let table = match self.table.get(key) {
            Some(Value::Table(t)) => t,
            Some(other) => return Err(self.error(key, format!("{} is not a table", show(other)))),
            None if matches!(field.default, Fallback::Value(_)) => EMPTY.get_or_init(Table::new),
            None => return Ok(None),
        };
        Reader::new(self.key_path(key), table, section).map(Some)
    }

    /// A list of tables, each read as the field's section with path `key[i]`.
    pub fn table_list(&mut self, key: &str) -> Result<Vec<Reader<'a>>, ScenarioError> {
        let field = self.field(key);
        let Ty::TableList(section) = field.ty else { panic!("{} is not a list key", self.key_path(key)) };
        let items = match self.table.get(key) {
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(
                    self.error(key, format!("{} is not a list of tables (write [[{key}]] sections)", show(other)))
                )
            }
            None if field.default == Fallback::Required => {
                return Err(self.error(key, "missing (expected at least one entry)"))
            }
            None => return Ok(Vec::new()),
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::Table(t) => Reader::new(format!("{}[{i}]", self.key_path(key)), t, section),
                other => Err(ScenarioError::new(
                    format!("{}[{i}]", self.key_path(key)),
                    format!("{} is not a table", show(other)),
                )),
            })
            .collect()
    }

    /// Store a finished child table in the resolved output.
    pub fn put_table(&mut self, key: &str, child: Table) {
        self.resolved.insert(key.into(), Value::Table(child));
    }

    /// Store finished child tables in the resolved output.
    pub fn put_list(&mut self, key: &str, children: Vec<Table>) {
        self.resolved.insert(key.into(), Value::Array(children.into_iter().map(Value::Table).collect()));
    }

    /// The resolved table (every key read, with defaults filled in).
    pub fn finish(self) -> Table {
        self.resolved
    }
}
