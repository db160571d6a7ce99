//! Nodes a scenario leaves out (`nodes[].present = false`), for a sweep over how many hosts
//! take part: the tree without them and without the applications on them. An absent node
//! costs nothing in the run, where a silent one would still receive every frame of its WLAN.

use std::collections::BTreeSet;

use toml::{Table, Value};

use crate::ScenarioError;

/// `root` without its absent nodes and the applications on them; `None` when every node is
/// present. Whatever else names an absent node (`"H7"`, `"H7/wlan0"`) or one of those
/// applications is an error at its key, as the file numbers it.
pub(crate) fn without_absent_nodes(root: &Table) -> Result<Option<Table>, ScenarioError> {
    let tables = |key: &str| -> Vec<&Table> {
        root.get(key)
            .and_then(Value::as_array)
            .map_or_else(Vec::new, |a| a.iter().filter_map(Value::as_table).collect())
    };
    let name = |t: &Table, key: &str| t.get(key).and_then(Value::as_str).map(str::to_string);
    let nodes = tables("nodes");
    let absent: BTreeSet<String> = nodes
        .iter()
        .filter(|n| n.get("present").and_then(Value::as_bool) == Some(false))
        .filter_map(|n| name(n, "name"))
        .collect();
    if absent.is_empty() {
        return Ok(None);
    }
    let apps = tables("apps");
    let on_absent = |app: &Table| name(app, "node").is_some_and(|n| absent.contains(&n));
    let gone =
        Gone { nodes: &absent, apps: apps.iter().filter(|a| on_absent(a)).filter_map(|a| name(a, "name")).collect() };
    let mut out = Table::new();
    for (key, value) in root {
        let kept = match key.as_str() {
            "nodes" => keep_items(key, value, &gone, |n| !name(n, "name").is_some_and(|n| absent.contains(&n)))?,
            "apps" => keep_items(key, value, &gone, |a| !on_absent(a))?,
            _ => {
                gone.check(key.clone(), value)?;
                value.clone()
            }
        };
        out.insert(key.clone(), kept);
    }
    Ok(Some(out))
}

/// The items of the list `key` that `keep` keeps, each checked for names of what is gone.
fn keep_items(
    key: &str,
    value: &Value,
    gone: &Gone<'_>,
    keep: impl Fn(&Table) -> bool,
) -> Result<Value, ScenarioError> {
    let Some(items) = value.as_array() else { return Ok(value.clone()) };
    let mut kept = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if item.as_table().is_some_and(|t| !keep(t)) {
            continue;
        }
        gone.check(format!("{key}[{i}]"), item)?;
        kept.push(item.clone());
    }
    Ok(Value::Array(kept))
}

/// The absent nodes and the applications that go with them.
struct Gone<'a> {
    nodes: &'a BTreeSet<String>,
    apps: BTreeSet<String>,
}

impl Gone<'_> {
    /// Every string under `value` (at key path `path`) except names of its own, which must not
    /// name something gone.
    fn check(&self, path: String, value: &Value) -> Result<(), ScenarioError> {
        match value {
            Value::String(s) => {
                let node = s.split('/').next().unwrap_or_default();
                if self.nodes.contains(node) {
                    return Err(ScenarioError::new(
                        path,
                        format!("\"{s}\" names node \"{node}\", which is absent (present = false)"),
                    ));
                }
                if self.apps.contains(s) {
                    return Err(ScenarioError::new(
                        path,
                        format!("\"{s}\" names an application on an absent node (present = false)"),
                    ));
                }
                Ok(())
            }
            Value::Array(items) => {
                items.iter().enumerate().try_for_each(|(i, v)| self.check(format!("{path}[{i}]"), v))
            }
            Value::Table(t) => t
                .iter()
                .filter(|(k, _)| k.as_str() != "name")
                .try_for_each(|(k, v)| self.check(format!("{path}.{k}"), v)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse;

    const TWO_HOSTS: &str = r#"
name = "t"
duration = "1s"
[[nodes]]
name = "A"
interfaces = [{ address = "10.0.0.1" }]
[[nodes]]
name = "B"
interfaces = [{ address = "10.0.0.2" }]
[[nodes]]
name = "C"
interfaces = [{ address = "10.0.0.3" }]
[[links]]
ends = ["A/eth0", "B/eth0"]
[[apps]]
kind = "udp-sink"
name = "sink"
node = "B"
port = 9
[[apps]]
kind = "udp-cbr"
name = "cbr"
node = "A"
dst = "B/eth0"
dst_port = 9
rate = "1Mbps"
"#;

    #[test]
    fn an_absent_node_goes_with_its_applications() {
        let s = parse(TWO_HOSTS, &["nodes[2].present=false".into()]).unwrap();
        assert_eq!(s.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(), ["A", "B"]);
        assert_eq!(s.apps.len(), 2);
        assert_eq!(s.links.len(), 1);
        // The resolved scenario is the one given, the absent node in it.
        assert!(s.resolved_toml(1).contains("present = false"), "{}", s.resolved_toml(1));
        let s = parse(TWO_HOSTS, &["nodes[0].present=false".into(), "links=[]".into()]).unwrap();
        assert_eq!(s.nodes.len(), 2);
        assert_eq!(s.apps.len(), 1);
        assert!(format!("{:?}", s.apps[0]).contains("\"sink\""));
    }

    #[test]
    fn what_names_an_absent_node_is_an_error_at_its_key() {
        let e = parse(TWO_HOSTS, &["nodes[1].present=false".into()]).unwrap_err();
        assert_eq!(e.to_string(), "apps[1].dst: \"B/eth0\" names node \"B\", which is absent (present = false)");
        // Checked whole first: an error elsewhere keeps the file's numbering.
        let e = parse(TWO_HOSTS, &["nodes[0].present=false".into(), "apps[1].rate=\"fast\"".into()]).unwrap_err();
        assert!(e.to_string().starts_with("apps[1].rate:"), "{e}");
        let e = parse(TWO_HOSTS, &["nodes[0].present=\"no\"".into()]).unwrap_err();
        assert!(e.to_string().starts_with("nodes[0].present:"), "{e}");
    }
}
