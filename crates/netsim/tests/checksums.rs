//! SCTP checksums in the simulator: with no capture attached the sockets skip the CRC32c
//! (zero in the field), with a sink that may read the bytes, or with `ChecksumPolicy::Always`,
//! every SCTP packet carries its CRC32c; either way the run's results are the same.
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use netsim::apps::sctp::{SctpAppConfig, SctpRole};
use netsim::event::NetEvent;
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::recorder::{EventLog, Names, TraceEvent, TraceSink};
use netsim::wire::PROTO_SCTP;
use netsim::world::{ChecksumPolicy, RunResult, WorldBuilder};
use netsim::{Duration, Instant};

const A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);

/// The checksum field of every SCTP packet sent on any interface, and whether it held the
/// packet's CRC32c.
type Seen = Arc<Mutex<Vec<(u32, bool)>>>;

/// A sink that records the SCTP checksums of the packets sent; `claims` is what it answers
/// to [`TraceSink::sees_checksums`] (a capture says yes, the default).
struct Spy {
    seen: Seen,
    claims: Option<bool>,
}

impl TraceSink for Spy {
    fn record(&mut self, _now: Instant, event: &TraceEvent<'_>, _names: &Names) {
        let TraceEvent::Net(NetEvent::Tx { pkt, .. }) = event else { return };
        let b = &pkt.bytes;
        if b[9] != PROTO_SCTP {
            return;
        }
        let sctp = &b[usize::from(b[0] & 0x0f) * 4..];
        let stored = u32::from_le_bytes(sctp[8..12].try_into().unwrap());
        self.seen.lock().unwrap().push((stored, stored == sctp::wire::packet_checksum(sctp)));
    }

    fn sees_checksums(&self) -> bool {
        self.claims.unwrap_or(true)
    }
}

fn ch(loss: LossConfig) -> ChannelConfig {
    ChannelConfig {
        rate_bps: 20_000_000,
        delay: Duration::from_millis(5),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(30) },
        loss,
    }
}

/// An upload from A to B through router R for 3 s, with random loss on the second link and
/// a queue short enough to overflow, sampled every 100 ms, every event kind logged; `spy`
/// (its answer to `sees_checksums`) watches the SCTP packets sent.
fn upload(policy: ChecksumPolicy, claims: Option<bool>) -> (RunResult, Vec<(u32, bool)>) {
    let mut b = WorldBuilder::new(7, Instant::ZERO + Duration::from_secs(3));
    let (a, r, z) = (b.node("A", NodeKind::Host), b.node("R", NodeKind::Router), b.node("B", NodeKind::Host));
    let (a0, r0) = (b.iface(a, "eth0", A), b.iface(r, "eth0", Ipv4Addr::new(10, 0, 0, 2)));
    let (r1, b0) = (b.iface(r, "eth1", Ipv4Addr::new(10, 0, 1, 2)), b.iface(z, "eth0", B));
    let lossy = LossConfig::Bernoulli { p: 0.01 };
    b.link("A-R", a0, r0, ch(LossConfig::None), ch(LossConfig::None), 1);
    b.link("R-B", r1, b0, ch(lossy), ch(lossy), 1);
    let config = sctp::Config::default();
    let sink_role = SctpRole::Sink { drain_rate: None };
    SctpAppConfig::new("sink", vec![B], 5000, config.clone(), sink_role, 1).install(&mut b, z);
    let role = SctpRole::bulk(vec![B], 5000, Instant::ZERO, 1000);
    SctpAppConfig::new("up", vec![A], 5001, config, role, 2).install(&mut b, a);
    let kinds = ["fault", "drop", "enqueue", "dequeue", "tx", "rx", "sctp"];
    b.trace(Box::new(EventLog::new(kinds.iter().map(|k| k.to_string()).collect())));
    let seen = Seen::default();
    b.trace(Box::new(Spy { seen: seen.clone(), claims }));
    b.sample_every(Duration::from_millis(100));
    b.checksums(policy);
    let r = b.build().run().unwrap();
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    (r, seen)
}

/// Everything a run reports, to compare runs.
fn results(r: &RunResult) -> String {
    format!("{:?}\n{:?}\n{:?}\n{:?}", r.scalars, r.timeseries, r.events, r.end)
}

#[test]
fn without_a_capture_the_checksum_is_skipped_and_nothing_else_changes() {
    let (auto, auto_seen) = upload(ChecksumPolicy::Auto, Some(false));
    let (always, always_seen) = upload(ChecksumPolicy::Always, Some(false));
    assert!(auto.scalars.get("sctp", "up", "fast_retransmissions").unwrap() > 0.0, "the loss is repaired");
    assert!(auto.events.kind.iter().any(|k| k == "drop"));
    assert!(auto_seen.len() > 1000);
    // Skipped: zero in every packet's field.
    assert!(auto_seen.iter().all(|&(stored, _)| stored == 0));
    // Forced on: every packet carries its CRC32c.
    assert!(always_seen.iter().all(|&(stored, ok)| ok && stored != 0));
    assert_eq!(auto_seen.len(), always_seen.len());
    assert_eq!(results(&auto), results(&always));
    assert_eq!(auto.events_processed, always.events_processed);
}

#[test]
fn a_sink_that_may_read_the_bytes_gets_correct_checksums_and_the_same_results() {
    let (plain, _) = upload(ChecksumPolicy::Auto, Some(false));
    // A sink that does not say otherwise may read the checksums (as a pcap capture does).
    let (watched, seen) = upload(ChecksumPolicy::Auto, None);
    assert!(seen.len() > 1000);
    assert!(seen.iter().all(|&(stored, ok)| ok && stored != 0));
    assert_eq!(results(&plain), results(&watched));
}
