//! Datagrams handed over to the endpoint (`Endpoint::handle_datagram`), whose whole messages
//! the application reads where they arrived (`Association::read_in_place`), against packets
//! the endpoint only borrows and messages read as copies: the same packets go out and the
//! same messages come in, whether a message stays in its datagram (in order, the first DATA
//! chunk of its packet) or is copied out (behind a loss, bundled after another, fragmented,
//! delivered in parts).
#![allow(clippy::unwrap_used)]

mod harness;

use harness::{ms, App, Harness, CLIENT, SERVER};
use sctp::{Config, Message};
use simtime::Duration;

/// What one transfer did: every packet sent, every message received, and how many of them
/// were read in their datagram.
type Outcome = (Vec<(simtime::Instant, usize, usize, Vec<u8>)>, Vec<Message>, u64);

fn transfer(hand_over: bool, config: Config, client: App, loss: f64, pause_reading: bool) -> Outcome {
    let mut h = Harness::new(config.clone(), config, 2, ms(5), 11);
    h.hand_over = hand_over;
    h.links[0].loss = loss;
    h.connect();
    h.run_for(ms(100));
    h.apps[CLIENT] = client;
    h.apps[SERVER].reading = true;
    if pause_reading {
        // Messages pile up unread (in their datagrams, or copied), closing the window.
        h.run_for(ms(300));
        h.apps[SERVER].reading = false;
        h.run_for(ms(500));
        h.apps[SERVER].reading = true;
    }
    h.run_for(Duration::from_secs(20));
    let app = &h.apps[SERVER];
    (h.sent.clone(), app.received.clone(), app.read_in_datagram)
}

fn same_either_way(name: &str, config: Config, client: App, loss: f64, pause_reading: bool) -> (usize, u64) {
    let (sent, received, in_datagram) = transfer(false, config.clone(), client.clone(), loss, pause_reading);
    assert_eq!(in_datagram, 0, "{name}");
    let (sent_over, received_over, in_datagram) = transfer(true, config, client.clone(), loss, pause_reading);
    assert_eq!(received.iter().map(|m| m.data.len() as u64).sum::<u64>(), client.to_send, "{name}: all delivered");
    assert!(received_over == received, "{name}: the messages differ");
    assert!(sent_over == sent, "{name}: the packets differ");
    (received.len(), in_datagram)
}

fn bulk(to_send: u64, msg_size: usize) -> App {
    App { to_send, msg_size, streams: 2, ..App::default() }
}

#[test]
fn in_order_messages_stay_in_their_datagrams_and_the_rest_are_copied() {
    // Without loss every full-sized message is read in its datagram.
    let (n, kept) = same_either_way("lossless", Config::default(), bulk(400_000, 1000), 0.0, false);
    assert_eq!(kept, n as u64);
    // Behind a loss, later messages wait for the retransmission and are copied.
    let (n, kept) = same_either_way("lossy", Config::default(), bulk(400_000, 1000), 0.05, false);
    assert!(kept > n as u64 / 2 && kept < n as u64, "{kept} of {n}");
    // Unordered messages are ready at once, loss or not.
    let unordered = App { unordered: true, ..bulk(400_000, 1000) };
    let (n, kept) = same_either_way("unordered", Config::default(), unordered, 0.05, false);
    assert!(kept > n as u64 / 2, "{kept} of {n}");
    // Small messages share packets: the first of a packet stays in it, the others are copied.
    let (n, kept) = same_either_way("bundled", Config::default(), bulk(200_000, 200), 0.0, false);
    assert!(kept > 0 && kept < n as u64 / 2, "{kept} of {n}");
    // Fragmented messages are reassembled, by copy.
    let (_, kept) = same_either_way("fragmented", Config::default(), bulk(400_000, 5000), 0.02, false);
    assert_eq!(kept, 0);
    // Unread messages keep their datagrams while the window closes, and a message larger
    // than the receive buffer is delivered in parts (§6.9).
    let small = Config { recv_buffer: 16_000, ..Config::default() };
    let (n, kept) = same_either_way("paused", small.clone(), bulk(300_000, 1000), 0.01, true);
    assert!(kept > 0 && kept < n as u64, "{kept} of {n}");
    same_either_way("in parts", small, bulk(100_000, 20_000), 0.0, false);
}
