//! `record.capture` and `record.capture_wlans`: each capture is written to a pcap file of its
//! own, named after the interface (`<node>-<iface>.pcap`) or channel (`wlan-<name>.pcap`);
//! captures that would share a file are rejected before anything runs.
#![allow(clippy::unwrap_used)]

/// Nodes `A` (interface `b-c`) and `A-b` (interface `c`), linked: `A/b-c` and `A-b/c` both
/// make `A-b-c.pcap`.
const CLASH: &str = r#"
duration = "1s"
[[nodes]]
name = "A"
interfaces = [{ name = "b-c", address = "10.0.0.1" }]
[[nodes]]
name = "A-b"
interfaces = [{ name = "c", address = "10.0.0.2" }]
[[links]]
ends = ["A/b-c", "A-b/c"]
"#;

/// An access point and a station on channel `bss1`, a second channel `bss2`, and a wired node
/// `wlan` whose interface `bss1` makes `wlan-bss1.pcap`, the file of channel `bss1`.
const WLAN: &str = r#"
[[wlans]]
name = "bss1"
channel = 1
[[wlans]]
name = "bss2"
channel = 6
[[nodes]]
name = "ap"
kind = "router"
position = [0.0, 0.0]
interfaces = [
    { name = "wlan0", address = "10.0.1.1", wlan = { channel = "bss1", role = "ap" } },
    { name = "eth1", address = "10.0.2.2" },
]
[[nodes]]
name = "sta"
position = [5.0, 0.0]
interfaces = [{ name = "wlan0", address = "10.0.1.2", wlan = { channel = "bss1", ap = "ap/wlan0" } }]
[[nodes]]
name = "wlan"
interfaces = [{ name = "bss1", address = "10.0.2.1" }]
[[links]]
ends = ["wlan/bss1", "ap/eth1"]
"#;

fn error(text: &str, overrides: &[&str]) -> String {
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    scenario::parse(text, &overrides).unwrap_err().to_string()
}

#[test]
fn two_interfaces_whose_captures_share_a_file_are_rejected() {
    // Both were written into one A-b-c.pcap, and one capture was lost.
    assert_eq!(
        error(CLASH, &[r#"record.capture=["A/b-c", "A-b/c"]"#]),
        "record.capture[1]: \"A-b/c\" would be captured to \"A-b-c.pcap\", as record.capture[0] (\"A/b-c\") is: \
         rename a node, interface or channel so that each capture has a file of its own"
    );
    assert_eq!(
        error(CLASH, &[r#"record.capture=["A/b-c", "A/b-c"]"#]),
        "record.capture[1]: \"A/b-c\" is already captured by record.capture[0]"
    );
    // Either alone is written to that file.
    let s = scenario::parse(CLASH, &[r#"record.capture=["A-b/c"]"#.into()]).unwrap();
    let dir = std::env::temp_dir().join(format!("sctpsim-captures-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let built = s.build(s.seed, Some(&dir)).unwrap();
    assert_eq!(built.captures, ["A-b-c.pcap"]);
    drop(built);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn file_names_that_differ_only_in_case_are_one_file() {
    let text =
        CLASH.replace("\"A-b\"", "\"a\"").replace("A-b/c", "a/c").replace("\"b-c\"", "\"c\"").replace("A/b-c", "A/c");
    assert_eq!(
        error(&text, &[r#"record.capture=["A/c", "a/c"]"#]),
        "record.capture[1]: \"a/c\" would be captured to \"a-c.pcap\", which is \"A-c.pcap\" of record.capture[0] \
         (\"A/c\") where file names ignore case, as on macOS and Windows: rename a node, interface or channel so \
         that each capture has a file of its own"
    );
}

#[test]
fn a_channel_whose_capture_shares_a_file_is_rejected() {
    assert_eq!(
        error(WLAN, &[r#"record.capture=["wlan/bss1"]"#, r#"record.capture_wlans=["bss2", "bss1"]"#]),
        "record.capture_wlans[1]: \"bss1\" would be captured to \"wlan-bss1.pcap\", as record.capture[0] \
         (\"wlan/bss1\") is: rename a node, interface or channel so that each capture has a file of its own"
    );
    assert_eq!(
        error(WLAN, &[r#"record.capture_wlans=["bss1", "bss1"]"#]),
        "record.capture_wlans[1]: \"bss1\" is already captured by record.capture_wlans[0]"
    );
    let s =
        scenario::parse(WLAN, &[r#"record.capture=["wlan/bss1"]"#.into(), r#"record.capture_wlans=["bss2"]"#.into()])
            .unwrap();
    assert_eq!(s.record.capture_wlans, [1]);
}
