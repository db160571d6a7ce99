//! `apps[].sctp.congestion` and `congestion_step` reach the association's configuration: the
//! coupled multipath controllers by name, with how they apply their increase.
#![allow(clippy::unwrap_used)]

mod common;

use scenario::model::AppSpec;
use sctp::congestion::{CaStep, OliaBest};
use sctp::CongestionConfig;

/// The congestion configuration of the sink of a two-host scenario whose associations have
/// the extra keys `sctp`.
fn congestion(sctp: &str) -> Result<CongestionConfig, String> {
    let apps = format!(
        r#"
[[apps]]
kind = "sctp-sink"
name = "sink"
node = "B"
sctp = {{ {sctp} }}
"#
    );
    let text = common::pair("1s", r#"rate = "10Mbps""#, &apps);
    let s = scenario::parse(&text, &[]).map_err(|e| e.to_string())?;
    match &s.apps[0] {
        AppSpec::Sctp { config, .. } => Ok(config.config.congestion.clone()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn coupled_controllers_are_chosen_by_name_with_their_step() {
    assert_eq!(congestion(r#"congestion = "lia""#), Ok(CongestionConfig::Lia { step: CaStep::Window }));
    assert_eq!(
        congestion(r#"congestion = "olia", congestion_step = "sack""#),
        Ok(CongestionConfig::Olia { step: CaStep::Sack, best: OliaBest::LossOverRttSquared })
    );
    assert_eq!(congestion(r#"congestion = "rp-v1""#), Ok(CongestionConfig::RpV1 { step: CaStep::Window }));
    assert_eq!(congestion(r#"congestion = "rp-v2""#), Ok(CongestionConfig::RpV2 { step: CaStep::Window }));
    assert_eq!(congestion(r#"congestion = "uncoupled""#), Ok(CongestionConfig::Rfc9260));
    assert_eq!(congestion(""), Ok(CongestionConfig::Rfc9260));
    let err = congestion(r#"congestion = "lia", congestion_step = "ack""#).unwrap_err();
    assert!(err.contains("congestion_step") && err.contains("\"window\", \"sack\""), "{err}");
}
