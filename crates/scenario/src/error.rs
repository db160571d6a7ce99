//! The one error type of scenario handling: a key path and what is wrong with its value.

/// An invalid scenario (or override). Displays as one line: `path: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", if path.is_empty() { message.clone() } else { format!("{path}: {message}") })]
pub struct ScenarioError {
    /// Key path, e.g. `links[2].delay` (empty for whole-file problems such as TOML syntax).
    pub path: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl ScenarioError {
    /// An error about the key at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { path: path.into(), message: message.into() }
    }

    /// A TOML syntax error, located by line and column.
    pub fn syntax(text: &str, err: &toml::de::Error) -> Self {
        let message = err.message().trim().replace('\n', " ");
        let Some(span) = err.span() else { return ScenarioError::new("", format!("TOML syntax error: {message}")) };
        let before = &text[..span.start.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ScenarioError::new("", format!("line {line}, column {column}: TOML syntax error: {message}"))
    }
}
