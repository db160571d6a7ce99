//! SCTP parameters for real mode (`sctpsim real`): a preset and `sctp.KEY=VALUE` settings,
//! read and checked exactly as a scenario's `apps[].sctp` table is, so a key means the same
//! thing, with the same units, defaults and errors, in a simulation and on real sockets.

use crate::model::AppSpec;
use crate::ScenarioError;

/// The prefix of a real-mode setting's key.
const PREFIX: &str = "sctp.";

/// The SCTP configuration of preset `preset` with `settings` (`sctp.KEY=VALUE`, the keys of a
/// scenario's `apps[].sctp`) applied. Errors name the key as given (`sctp.rto_min`).
pub fn sctp_config(preset: &str, settings: &[String]) -> Result<sctp::Config, ScenarioError> {
    let preset_toml = toml::Value::String(preset.to_string());
    let text = format!(
        "name = \"real\"\n[[nodes]]\nname = \"A\"\ninterfaces = [{{ address = \"10.0.0.1\" }}]\n\
         [[apps]]\nkind = \"sctp-sink\"\nname = \"sink\"\nnode = \"A\"\nport = 5000\n\
         sctp = {{ preset = {preset_toml} }}\n"
    );
    let mut overrides = Vec::with_capacity(settings.len());
    for s in settings {
        let Some(rest) = s.strip_prefix(PREFIX) else {
            let key = s.split_once('=').map_or(s.as_str(), |(k, _)| k);
            return Err(ScenarioError::new(key, "real mode takes only sctp.KEY=VALUE settings"));
        };
        overrides.push(format!("apps[0].sctp.{rest}"));
    }
    let scenario = crate::parse(&text, &overrides).map_err(|e| {
        let path = match e.path.strip_prefix("apps[0].") {
            Some(p) => p.to_string(),
            None => e.path.clone(),
        };
        ScenarioError::new(path, e.message.replace("apps[0].sctp", "sctp"))
    })?;
    match scenario.apps.into_iter().next() {
        Some(AppSpec::Sctp { config, .. }) => Ok(config.config),
        _ => Err(ScenarioError::new("sctp", "no SCTP configuration")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_settings_apply_and_errors_name_the_key() {
        let c = sctp_config("linux", &["sctp.rto_min=200ms".into(), "sctp.path_max_retrans=2".into()]).expect("valid");
        assert_eq!(c.rto_min, netsim::Duration::from_millis(200));
        assert_eq!(c.path_max_retrans, 2);
        assert_eq!(c.rto_initial, sctp::Preset::Linux.config().rto_initial);
        let e = sctp_config("rfc9260", &["sctp.rto_min=fast".into()]).expect_err("invalid");
        assert_eq!(e.path, "sctp.rto_min");
        let e = sctp_config("rfc9260", &["sctp.no_such_key=1".into()]).expect_err("unknown");
        assert!(e.path.starts_with("sctp"), "{e:?}");
        let e = sctp_config("nope", &[]).expect_err("unknown preset");
        assert_eq!(e.path, "sctp.preset");
        assert!(sctp_config("rfc9260", &["duration=1s".into()]).is_err());
    }
}
