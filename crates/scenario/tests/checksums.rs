//! `record.checksums`: absent means "auto" and stays out of the resolved scenario; a capture's
//! SCTP packets carry correct CRC32c whatever the setting, and the captures and results are
//! the same with "auto" and "always".
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};

use common::example;
use netsim::world::ChecksumPolicy;

/// The failover example cut to 20 s (the primary breaks at 10 s), both of A's interfaces
/// captured.
const OVERRIDES: &[&str] = &["duration=20s", r#"record.capture=["A/eth0", "A/eth1"]"#];

/// Runs the example with `extra` overrides, capturing to a fresh directory named `tag`;
/// returns the run's results rendered and the capture files' bytes.
fn captured(tag: &str, extra: &[&str]) -> (String, Vec<(String, Vec<u8>)>) {
    let dir: PathBuf = std::env::temp_dir().join(format!("sctpsim-checksums-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let overrides: Vec<String> = OVERRIDES.iter().chain(extra).map(|o| o.to_string()).collect();
    let s = scenario::parse(&example("failover.toml"), &overrides).unwrap();
    let built = s.build(s.seed, Some(&dir)).unwrap();
    let r = built.world.run().unwrap();
    let files = built.captures.iter().map(|f| (f.clone(), std::fs::read(dir.join(f)).unwrap())).collect();
    std::fs::remove_dir_all(&dir).unwrap();
    (format!("{:?}\n{:?}\n{:?}", r.scalars, r.timeseries, r.events), files)
}

/// The SCTP packets of a pcap file (link type RAW: each record an IPv4 datagram).
fn sctp_packets(pcap: &[u8]) -> Vec<&[u8]> {
    assert_eq!(&pcap[..4], &0xa1b2_3c4d_u32.to_le_bytes());
    let (mut at, mut out) = (24, Vec::new());
    while at < pcap.len() {
        let caplen = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        let ip = &pcap[at + 16..at + 16 + caplen];
        if ip[9] == 132 {
            out.push(&ip[usize::from(ip[0] & 0x0f) * 4..]);
        }
        at += 16 + caplen;
    }
    out
}

fn assert_correct_checksums(files: &[(String, Vec<u8>)]) {
    let mut total = 0;
    for (name, bytes) in files {
        let packets = sctp_packets(bytes);
        assert!(!packets.is_empty(), "{name} has SCTP packets");
        for p in &packets {
            let stored = u32::from_le_bytes(p[8..12].try_into().unwrap());
            assert_eq!(stored, sctp::wire::packet_checksum(p), "{name}");
        }
        total += packets.len();
    }
    assert!(total > 1000, "{total} packets captured");
}

#[test]
fn the_key_is_absent_unless_set_and_takes_auto_or_always() {
    let text = example("failover.toml");
    let s = scenario::parse(&text, &[]).unwrap();
    assert_eq!(s.record.checksums, ChecksumPolicy::Auto);
    assert!(!s.resolved_toml(1).contains("checksums"), "an unset key stays out of the resolved scenario");
    let on = scenario::parse(&text, &[r#"record.checksums="always""#.into()]).unwrap();
    assert_eq!(on.record.checksums, ChecksumPolicy::Always);
    assert!(on.resolved_toml(1).contains("checksums = \"always\""));
    let auto = scenario::parse(&text, &[r#"record.checksums="auto""#.into()]).unwrap();
    assert_eq!(auto.record.checksums, ChecksumPolicy::Auto);
    let err = scenario::parse(&text, &[r#"record.checksums="never""#.into()]).unwrap_err();
    assert_eq!(err.path, "record.checksums");
}

#[test]
fn captures_carry_correct_crc32c_and_are_the_same_with_auto_and_always() {
    let (auto_results, auto_files) = captured("auto", &[]);
    let (always_results, always_files) = captured("always", &[r#"record.checksums="always""#]);
    assert_eq!(auto_files.len(), 2);
    assert_correct_checksums(&auto_files);
    assert_correct_checksums(&always_files);
    assert!(auto_files == always_files, "the captures are byte-identical");
    assert_eq!(auto_results, always_results);
    // Without a capture the checksums are skipped; the results stay the same.
    let s = scenario::parse(&example("failover.toml"), &OVERRIDES.iter().map(|o| o.to_string()).collect::<Vec<_>>())
        .unwrap();
    let r = s.build(s.seed, None::<&Path>).unwrap().world.run().unwrap();
    assert_eq!(format!("{:?}\n{:?}\n{:?}", r.scalars, r.timeseries, r.events), auto_results);
}
