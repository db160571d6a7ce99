//! `--set KEY=VALUE` overrides: change any key of a scenario by its dotted path before
//! validation, e.g. `duration=30s`, `links[0].delay=20ms`, `links[1].loss={model="bernoulli", p=0.01}`.
//!
//! The value is read as a TOML value when it is one (`30`, `true`, `"x"`, `[1, 2]`, `{...}`)
//! and as a plain string otherwise (`30s`, `10.0.0.1`), so quoting is rarely needed.

use toml::{Table, Value};

use crate::error::ScenarioError;

enum Step {
    Key(String),
    Index(usize),
}

fn parse_path(path: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
        if key.is_empty() {
            return None;
        }
        steps.push(Step::Key(key.to_string()));
        if !rest.is_empty() {
            rest = rest.strip_suffix(']')?;
            for idx in rest.split("][") {
                steps.push(Step::Index(idx.parse().ok()?));
            }
        }
    }
    Some(steps)
}

fn parse_value(text: &str) -> Value {
    toml::from_str::<Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(text.to_string()))
}

/// Apply one `KEY=VALUE` override to the scenario tree.
pub fn apply(root: &mut Table, assignment: &str) -> Result<(), ScenarioError> {
    let fail = |msg: String| ScenarioError::new(format!("--set {assignment}"), msg);
    let (path, text) = assignment.split_once('=').ok_or_else(|| fail("expected KEY=VALUE".into()))?;
    let steps =
        parse_path(path.trim()).ok_or_else(|| fail(format!("\"{path}\" is not a key path (e.g. links[0].delay)")))?;
    let value = parse_value(text.trim());
    let mut node = Value::Table(std::mem::take(root));
    let result = set(&mut node, &steps, value, path).map_err(fail);
    if let Value::Table(t) = node {
        *root = t;
    }
    result
}

fn set(node: &mut Value, steps: &[Step], value: Value, path: &str) -> Result<(), String> {
    let Some((first, rest)) = steps.split_first() else {
        *node = value;
        return Ok(());
    };
    let child = match (first, node) {
        (Step::Key(k), Value::Table(t)) => {
            if rest.is_empty() {
                t.insert(k.clone(), value);
                return Ok(());
            }
            t.entry(k.clone()).or_insert_with(|| Value::Table(Table::new()))
        }
        (Step::Index(i), Value::Array(items)) => {
            let n = items.len();
            items
                .get_mut(*i)
                .ok_or_else(|| format!("index {i} is out of range in {path} (the list has {n} entries)"))?
        }
        (Step::Key(k), _) => return Err(format!("cannot set \"{k}\" inside a value that is not a table")),
        (Step::Index(i), _) => return Err(format!("cannot index [{i}] into a value that is not a list")),
    };
    set(child, rest, value, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn sets_scalars_nested_keys_and_list_items() {
        let mut t = doc("duration = \"10s\"\n[[links]]\ndelay = \"1ms\"\n[[links]]\ndelay = \"2ms\"\n");
        apply(&mut t, "duration=30s").unwrap();
        apply(&mut t, "links[1].delay=20ms").unwrap();
        apply(&mut t, "links[0].loss={model=\"bernoulli\", p=0.01}").unwrap();
        apply(&mut t, "record.interval=1s").unwrap();
        apply(&mut t, "seed=7").unwrap();
        assert_eq!(t["duration"].as_str(), Some("30s"));
        assert_eq!(t["links"][1]["delay"].as_str(), Some("20ms"));
        assert_eq!(t["links"][0]["loss"]["p"].as_float(), Some(0.01));
        assert_eq!(t["record"]["interval"].as_str(), Some("1s"));
        assert_eq!(t["seed"].as_integer(), Some(7));
    }

    #[test]
    fn bad_overrides_explain_themselves() {
        let mut t = doc("[[links]]\ndelay = \"1ms\"\n");
        let e = apply(&mut t, "links[3].delay=1ms").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set links[3].delay=1ms: index 3 is out of range in links[3].delay (the list has 1 entries)"
        );
        assert!(apply(&mut t, "duration").unwrap_err().to_string().contains("expected KEY=VALUE"));
        assert!(apply(&mut t, "links[x].delay=1").unwrap_err().to_string().contains("is not a key path"));
        assert!(apply(&mut t, "links.delay=1").unwrap_err().to_string().contains("not a table"));
    }
}
