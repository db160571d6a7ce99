//! A sender and a sink over real UDP sockets on loopback, each in its own thread.

use std::net::{Ipv4Addr, UdpSocket};
use std::thread;

use netsim::recorder::Scalars;
use sctp_udp::{
    run_send, run_sink, CheckMode, Fault, FaultStart, LocalOptions, NoControl, RealResult, SendOptions, SinkOptions,
};
use simtime::{Duration, Instant};

const A1: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);
const A2: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// A UDP port free on both loopback addresses now (released before use: a small race).
fn free_port() -> u16 {
    loop {
        let s = UdpSocket::bind((A1, 0)).expect("bind");
        let port = s.local_addr().expect("addr").port();
        if UdpSocket::bind((A2, port)).is_ok() {
            return port;
        }
    }
}

fn get(s: &Scalars, kind: &str, entity: &str, metric: &str) -> f64 {
    s.get(kind, entity, metric).unwrap_or_else(|| panic!("no scalar {kind}/{entity}/{metric}"))
}

fn fast_config() -> sctp::Config {
    sctp::Config {
        // Short timers, not so short that a loaded machine's scheduling delays fire them.
        rto_initial: Duration::from_millis(200),
        rto_min: Duration::from_millis(200),
        rto_max: Duration::from_millis(800),
        // Well below RTO.Min, as RFC 9260's 200 ms is below its 1 s.
        sack_delay: Duration::from_millis(40),
        path_max_retrans: 2,
        hb_interval: Some(Duration::from_millis(200)),
        ..sctp::Config::default()
    }
}

fn sink_opts(addrs: Vec<Ipv4Addr>, udp_port: u16, sctp_port: u16) -> SinkOptions {
    SinkOptions {
        local: LocalOptions { addrs, udp_port, sctp_port, ..LocalOptions::default() },
        config: fast_config(),
        time: Some(Duration::from_secs(30)),
        once: true,
        check: CheckMode::Pattern,
        name: "sink".into(),
    }
}

fn send_opts(addrs: Vec<Ipv4Addr>, peers: Vec<Ipv4Addr>, peer_udp: u16, peer_port: u16) -> SendOptions {
    SendOptions {
        local: LocalOptions { addrs, udp_port: 0, sctp_port: 0, remote_udp_port: peer_udp, ..LocalOptions::default() },
        peers,
        peer_port,
        config: fast_config(),
        bytes: Some(4 << 20),
        time: None,
        message_size: 1000,
        streams: 3,
        unordered: false,
        name: "send".into(),
    }
}

/// Tells a channel, once, that data has been acknowledged.
struct Notify(Option<std::sync::mpsc::Sender<()>>);

impl sctp_udp::Control for Notify {
    fn check_in(&mut self, p: &sctp_udp::Progress) -> bool {
        if p.bytes > 0 {
            if let Some(tx) = self.0.take() {
                let _ = tx.send(());
            }
        }
        false
    }
}

fn pair(sink: SinkOptions, send: SendOptions) -> (RealResult, RealResult) {
    let t = thread::spawn(move || run_sink(&sink, &mut NoControl).expect("sink runs"));
    // The sink binds first; INIT retransmission covers a slow start anyway.
    thread::sleep(std::time::Duration::from_millis(50));
    let s = run_send(&send, &mut NoControl).expect("sender runs");
    let k = t.join().expect("sink thread");
    (s, k)
}

#[test]
fn a_transfer_arrives_whole_and_ends_gracefully() {
    let port = free_port();
    let (s, k) = pair(sink_opts(vec![A1], port, 5001), send_opts(vec![A1], vec![A1], port, 5001));
    let bytes = (4u64 << 20) as f64;
    assert_eq!(get(&s.scalars, "sctp", "send", "queued_bytes"), bytes);
    assert_eq!(get(&s.scalars, "sctp", "send", "acked_bytes"), bytes);
    assert_eq!(get(&s.scalars, "sctp", "send", "closed"), 1.0);
    assert!(get(&s.scalars, "sctp", "send", "goodput") > 0.0);
    assert_eq!(get(&k.scalars, "sctp", "sink", "delivered_bytes"), bytes);
    assert_eq!(get(&k.scalars, "real", "sink", "checked_messages"), (bytes / 1000.0).ceil());
    assert_eq!(get(&k.scalars, "real", "sink", "check_errors"), 0.0);
    assert_eq!(get(&k.scalars, "real", "sink", "duplicate_messages"), 0.0);
    assert_eq!(get(&k.scalars, "real", "sink", "associations_closed"), 1.0);
    // A graceful end, on both sides.
    assert!(s.events.detail.iter().any(|d| d.contains("Closed { reason: Shutdown }")), "{:?}", s.events.detail);
    assert!(k.events.detail.iter().any(|d| d.contains("Closed { reason: Shutdown }")));
    // Per-path RTT and RTO are reported.
    assert!(get(&s.scalars, "sctp_path", "send/path0", "srtt") < 0.5);
    assert!(get(&s.scalars, "sctp_path", "send/path0", "rto") >= 0.05);
    assert_eq!(get(&s.scalars, "real", "send", "bad_checksum"), 0.0);
    // Trains of datagrams left in one system call and arrived in one (UDP segmentation
    // and receive offload), and every message still arrived whole and was checked.
    assert!(get(&s.scalars, "real", "send", "segmented_sends") > 0.0);
    assert!(get(&k.scalars, "real", "sink", "coalesced_receives") > 0.0);
    // The loop's CPU time: some, and less than the run lasted.
    for (r, name) in [(&s, "send"), (&k, "sink")] {
        let cpu = get(&r.scalars, "real", name, "cpu_user") + get(&r.scalars, "real", name, "cpu_system");
        assert!(cpu > 0.0 && cpu <= get(&r.scalars, "run", "run", "wall_time") + 0.01, "{name} {cpu}");
        assert!(get(&r.scalars, "real", name, "cpu_per_byte") > 0.0);
    }
}

#[test]
fn a_multihomed_association_survives_the_loss_of_one_address() {
    let port = free_port();
    let sink = sink_opts(vec![A1, A2], port, 5002);
    let mut send = send_opts(vec![A1, A2], vec![A1, A2], port, 5002);
    send.bytes = None;
    send.time = Some(Duration::from_millis(3000));
    // Everything through the sender's first address is lost from 0.5 s on.
    send.local.faults = vec![Fault { addr: A1, start: FaultStart::At(Instant(500_000_000)), drop: 1.0 }];
    let (s, k) = pair(sink, send);
    let queued = get(&s.scalars, "sctp", "send", "queued_bytes");
    assert!(queued > 0.0);
    assert_eq!(get(&s.scalars, "sctp", "send", "closed"), 1.0);
    assert_eq!(get(&s.scalars, "sctp", "send", "acked_bytes"), queued);
    assert_eq!(get(&k.scalars, "sctp", "sink", "delivered_bytes"), queued);
    assert_eq!(get(&k.scalars, "real", "sink", "check_errors"), 0.0);
    assert_eq!(get(&k.scalars, "real", "sink", "duplicate_messages"), 0.0);
    // The primary was found failed, and new data moved to the second path.
    assert_eq!(get(&s.scalars, "sctp", "send", "primary_break_at"), 0.5);
    let failover = get(&s.scalars, "sctp", "send", "failover_time");
    // Path.Max.Retrans 2: three timeouts; the first comes within an RTO of the break (its
    // timer was running), the next two after 0.4 and 0.8 s of backoff.
    assert!((1.2..3.0).contains(&failover), "{failover} {:?}", s.events.detail);
    assert!(get(&s.scalars, "sctp", "send", "data_moved_time") > 0.0);
    assert!(get(&s.scalars, "sctp_path", "send/path1", "bytes_sent") > 0.0);
    assert_eq!(get(&s.scalars, "sctp_path", "send/path0", "state"), 2.0);
    assert!(get(&s.scalars, "real", "send", "fault_dropped_tx") > 0.0);
}

#[test]
fn a_sink_refuses_associations_beyond_its_limit() {
    let port = free_port();
    let mut sink = sink_opts(vec![A1], port, 5003);
    sink.local.max_associations = 1;
    sink.once = false;
    sink.time = Some(Duration::from_secs(5));
    let t = thread::spawn(move || run_sink(&sink, &mut NoControl).expect("sink runs"));
    thread::sleep(std::time::Duration::from_millis(50));
    let mut first = send_opts(vec![A1], vec![A1], port, 5003);
    first.bytes = None;
    first.time = Some(Duration::from_millis(1500));
    let second = send_opts(vec![A1], vec![A1], port, 5003);
    // The second sender starts once the first has data acknowledged (its association is up).
    let (up_tx, up_rx) = std::sync::mpsc::channel();
    let h = thread::spawn(move || run_send(&first, &mut Notify(Some(up_tx))).expect("first sender"));
    up_rx.recv_timeout(std::time::Duration::from_secs(20)).expect("the first association is up");
    let refused = run_send(&second, &mut NoControl).expect("second sender");
    let accepted = h.join().expect("first");
    // The first association has closed and left: its place is free again.
    let mut third = send_opts(vec![A1], vec![A1], port, 5003);
    third.bytes = Some(1 << 20);
    let later = run_send(&third, &mut NoControl).expect("third sender");
    let k = t.join().expect("sink");
    assert_eq!(get(&later.scalars, "sctp", "send", "acked_bytes"), f64::from(1 << 20));
    assert!(refused.events.detail.iter().any(|d| d.contains("AbortedByPeer")), "{:?}", refused.events.detail);
    assert_eq!(get(&refused.scalars, "sctp", "send", "acked_bytes"), 0.0);
    assert!(get(&k.scalars, "real", "sink", "rejected_over_limit") >= 1.0);
    assert_eq!(get(&k.scalars, "real", "sink", "associations"), 2.0);
    assert_eq!(get(&k.scalars, "real", "sink", "associations_closed"), 2.0);
    assert!(get(&accepted.scalars, "sctp", "send", "acked_bytes") > 0.0);
}

#[test]
fn a_single_homed_peer_is_reached_through_the_other_local_address() {
    let port = free_port();
    let sink = sink_opts(vec![A1], port, 5004);
    let mut send = send_opts(vec![A1, A2], vec![A1], port, 5004);
    send.bytes = None;
    send.time = Some(Duration::from_millis(2000));
    // Counted from the establishment: half a second into the transfer.
    let offset = Duration::from_millis(500);
    send.local.faults = vec![Fault { addr: A1, start: FaultStart::AfterEstablished(offset), drop: 1.0 }];
    let (s, k) = pair(sink, send);
    let at = |what: &str| {
        let i = s.events.detail.iter().position(|d| d.starts_with(what)).unwrap_or_else(|| panic!("no {what}"));
        s.events.time_ns[i]
    };
    assert_eq!(at("drop addr=127.0.0.1"), at("Connected") + offset.as_nanos(), "{:?}", s.events.detail);
    let queued = get(&s.scalars, "sctp", "send", "queued_bytes");
    assert_eq!(get(&s.scalars, "sctp", "send", "closed"), 1.0);
    assert_eq!(get(&s.scalars, "sctp", "send", "acked_bytes"), queued);
    assert_eq!(get(&k.scalars, "sctp", "sink", "delivered_bytes"), queued);
    assert_eq!(get(&k.scalars, "real", "sink", "check_errors"), 0.0);
    // The one destination timed out once, then its packets left from 127.0.0.2.
    assert!(get(&s.scalars, "real", "send", "source_changes") >= 1.0);
    assert!(get(&s.scalars, "sctp", "send", "t3_timeouts") >= 1.0);
    assert!(s.events.detail.iter().any(|d| d.contains("from=127.0.0.1 to=127.0.0.2")), "{:?}", s.events.detail);
    // Data kept flowing after the fault: well beyond what one RTO's worth of stall allows.
    let after = get(&k.scalars, "sctp", "sink", "last_delivery_at");
    assert!(after > 1.5, "{after}");
}

#[test]
fn without_crc32c_both_ends_send_zero_and_say_so_and_a_checking_end_refuses_them() {
    let port = free_port();
    let mut sink = sink_opts(vec![A1], port, 5005);
    let mut send = send_opts(vec![A1], vec![A1], port, 5005);
    sink.local.checksum = sctp_udp::Checksum::Skip;
    send.local.checksum = sctp_udp::Checksum::Skip;
    send.local.pcap = Some(std::env::temp_dir().join(format!("sctpsim-nocrc-{port}.pcap")));
    let (s, k) = pair(sink, send);
    let bytes = (4u64 << 20) as f64;
    assert_eq!(get(&k.scalars, "sctp", "sink", "delivered_bytes"), bytes);
    assert_eq!(get(&s.scalars, "real", "send", "crc32c_skipped"), 1.0);
    assert_eq!(get(&k.scalars, "real", "sink", "crc32c_skipped"), 1.0);
    // The packets on the wire carry zero in the checksum field (the capture's last bytes
    // of the IPv4 + UDP headers are followed by SCTP's common header).
    let pcap = std::fs::read(send_pcap(&s)).expect("capture");
    let first = &pcap[24 + 16..];
    assert_eq!(&first[20 + 8 + 8..20 + 8 + 12], &[0, 0, 0, 0]);

    // A sender that skips it, to a sink that checks: nothing is accepted.
    let port = free_port();
    let mut sink = sink_opts(vec![A1], port, 5006);
    sink.time = Some(Duration::from_millis(1500));
    let mut send = send_opts(vec![A1], vec![A1], port, 5006);
    send.local.checksum = sctp_udp::Checksum::Skip;
    send.config.max_init_retransmits = 1;
    let t = thread::spawn(move || run_sink(&sink, &mut NoControl).expect("sink runs"));
    thread::sleep(std::time::Duration::from_millis(50));
    let s = run_send(&send, &mut NoControl);
    let k = t.join().expect("sink thread");
    assert!(s.is_err() || get(&s.expect("sent").scalars, "sctp", "send", "acked_bytes") == 0.0);
    assert!(get(&k.scalars, "real", "sink", "bad_checksum") > 0.0);
    assert!(k.scalars.get("real", "sink", "crc32c_skipped").is_none());
}

/// The capture file of a run (the first one it names).
fn send_pcap(r: &RealResult) -> std::path::PathBuf {
    r.captures.first().cloned().expect("a capture")
}

#[test]
fn without_offload_every_datagram_has_its_own_system_call() {
    let port = free_port();
    let mut sink = sink_opts(vec![A1], port, 5007);
    let mut send = send_opts(vec![A1], vec![A1], port, 5007);
    sink.local.offload = false;
    send.local.offload = false;
    let (s, k) = pair(sink, send);
    assert_eq!(get(&k.scalars, "sctp", "sink", "delivered_bytes"), (4u64 << 20) as f64);
    assert_eq!(get(&s.scalars, "real", "send", "segmented_sends"), 0.0);
    assert_eq!(get(&k.scalars, "real", "sink", "coalesced_receives"), 0.0);
}
