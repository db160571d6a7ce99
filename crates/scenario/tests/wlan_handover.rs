//! An SCTP association on a mobile client with two roaming WLAN interfaces survives a walk
//! from AP1 to AP2 (examples/wlan-handover.toml): ADD-IP and SET-PRIMARY when the second
//! interface associates, DELETE-IP when the first leaves its AP; the handover delay, the
//! ASCONF round trip and the layer-2 handover time recorded per handover match the run's
//! events. With paper 001's trigger the SET-PRIMARY waits for the first interface to leave.
#![allow(clippy::unwrap_used)]

mod common;

use common::{example, get, run_with};
use netsim::world::RunResult;

/// (time in s, kind, entity, detail) of every event whose detail contains `needle`.
fn events(r: &RunResult, entity: &str, needle: &str) -> Vec<(f64, String)> {
    let e = &r.events;
    (0..e.kind.len())
        .filter(|&i| e.entity[i] == entity && e.detail[i].contains(needle))
        .map(|i| (e.time_ns[i] as f64 * 1e-9, e.detail[i].clone()))
        .collect()
}

fn at(r: &RunResult, entity: &str, needle: &str) -> f64 {
    let found = events(r, entity, needle);
    assert_eq!(found.len(), 1, "{entity} {needle}: {found:?}");
    found[0].0
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn make_before_break_keeps_the_association_across_the_walk() {
    let r = run_with(&example("wlan-handover.toml"), &[]);
    let joined = at(&r, "mc/wlan1", "step=associated");
    let left = at(&r, "mc/wlan0", "step=disassociated");
    assert!(joined > 10.0 && joined + 10.0 < left, "{joined} {left}");
    // The association survives and the upload goes on through AP2 to the end of the run.
    assert_eq!(get(&r, "sctp", "upload", "closed"), 0.0);
    assert_eq!(get(&r, "sctp", "sink", "closed"), 0.0);
    assert!(get(&r, "sctp", "sink", "last_delivery_at") > 44.0);
    // ADD-IP and SET-PRIMARY of wlan1's address in one ASCONF when wlan1 associates ...
    assert!(close(at(&r, "upload", "HandoverRequested { new: 10.2.1.1, old: None }"), joined));
    let added = at(&r, "sink", "PeerAddressAdded { path: 1, address: 10.2.1.1 }");
    assert!(close(at(&r, "sink", "PeerPrimaryRequested { path: 1, address: 10.2.1.1 }"), added));
    let acked = at(&r, "upload", "AsconfAcked { request: SetPrimary(10.2.1.1)");
    assert!(close(at(&r, "upload", "AsconfAcked { request: Add(10.2.1.1)"), acked));
    assert!(joined < added && added < acked && acked < joined + 0.5);
    // ... then the client's own primary moves to D/eth1, which wlan1 reaches ...
    assert!(close(at(&r, "upload", "PrimaryDestinationMoved { to: 172.17.165.1, local: 10.2.1.1 }"), acked));
    // ... and DELETE-IP of wlan0's address when wlan0 leaves AP1.
    let removed = at(&r, "sink", "PeerAddressRemoved { path: 0, address: 10.1.1.1 }");
    assert!(left < removed && removed < left + 0.5);
    assert!(at(&r, "upload", "AsconfAcked { request: Delete(10.1.1.1)") > removed);
    // One handover, its times as the events show them.
    assert_eq!(get(&r, "sctp", "upload", "handovers"), 1.0);
    let h = "upload/handover0";
    assert!(close(get(&r, "sctp_handover", h, "requested_at"), joined));
    assert!(close(get(&r, "sctp_handover", h, "asconf_rtt"), acked - joined));
    let delay = get(&r, "sctp_handover", h, "handover_delay");
    assert!(delay >= acked - joined && delay < 0.5, "{delay}");
    // Layer 2: from the start of the scan that found AP2 to the association.
    let scan = events(&r, "mc/wlan1", "step=scan-start").into_iter().map(|e| e.0).rfind(|&t| t < joined).unwrap();
    assert!(close(get(&r, "sctp_handover", h, "l2_handover_time"), joined - scan));
    assert!(close(get(&r, "sctp_handover", h, "l2_associated_at"), joined));
    let l2 = joined - scan;
    assert!(l2 > 0.0 && l2 < 0.1, "{l2}");
    assert!(close(get(&r, "sctp", "upload", "l2_handover_time_mean"), l2));
}

#[test]
fn the_papers_trigger_sets_the_primary_when_the_old_interface_leaves() {
    let r = run_with(&example("wlan-handover.toml"), &["apps[1].sctp.handover_trigger=\"old-address-lost\""]);
    let joined = at(&r, "mc/wlan1", "step=associated");
    let left = at(&r, "mc/wlan0", "step=disassociated");
    assert_eq!(get(&r, "sctp", "upload", "closed"), 0.0);
    assert!(get(&r, "sctp", "sink", "last_delivery_at") > 44.0);
    // ADD-IP alone when wlan1 associates ...
    let added = at(&r, "sink", "PeerAddressAdded { path: 1, address: 10.2.1.1 }");
    assert!(joined < added && added < joined + 0.5);
    assert!(events(&r, "sink", "PeerPrimaryRequested").iter().all(|e| e.0 > left));
    // ... SET-PRIMARY with DELETE-IP when wlan0 leaves AP1 (its signal below -90 dBm).
    assert!(close(at(&r, "upload", "HandoverRequested { new: 10.2.1.1, old: Some(10.1.1.1) }"), left));
    let primary = at(&r, "sink", "PeerPrimaryRequested { path: 1, address: 10.2.1.1 }");
    assert!(close(at(&r, "sink", "PeerAddressRemoved { path: 0, address: 10.1.1.1 }"), primary));
    assert!(left < primary && primary < left + 0.5);
    let h = "upload/handover0";
    assert!(close(get(&r, "sctp_handover", h, "requested_at"), left));
    // The old path is gone: what was outstanding on it goes to the new one at once (the
    // destination it reached is unreachable), so the first DATA may leave at the decision.
    let delay = get(&r, "sctp_handover", h, "handover_delay");
    assert!((0.0..0.5).contains(&delay), "{delay}");
    assert!(get(&r, "sctp_handover", h, "asconf_rtt") < 0.5);
    // The layer-2 time is the new interface's association, earlier.
    assert!(close(get(&r, "sctp_handover", h, "l2_associated_at"), joined));
}
