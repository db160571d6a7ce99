//! The invalid-scenario corpus: every file in `tests/invalid/` starts with
//! `# expect: MESSAGE` and must be rejected with exactly that message.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

fn corpus() -> Vec<(PathBuf, String, String)> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/invalid"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let expect = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("# expect: "))
                .unwrap_or_else(|| panic!("{} lacks '# expect: '", p.display()))
                .to_string();
            (p, text, expect)
        })
        .collect()
}

#[test]
fn every_invalid_scenario_gets_its_expected_message() {
    let cases = corpus();
    assert!(cases.len() >= 20, "the corpus must have at least 20 files");
    let mut failures = Vec::new();
    for (path, text, expect) in &cases {
        match scenario::parse(text, &[]) {
            Ok(_) => failures.push(format!("{}: accepted, expected: {expect}", path.display())),
            Err(e) if e.to_string() != *expect => {
                failures.push(format!("{}:\n  got:      {e}\n  expected: {expect}", path.display()))
            }
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn messages_are_one_line() {
    for (path, text, _) in corpus() {
        let e = scenario::parse(&text, &[]).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{}: {e}", path.display());
    }
}
