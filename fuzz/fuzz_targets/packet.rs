//! Any bytes: parsing returns an error or a packet, never panics; a packet that parses
//! re-encodes to bytes that parse to the same packet.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sctp::wire::Packet;

fuzz_target!(|data: &[u8]| {
    // Skip the checksum so the fuzzer reaches the chunk and parameter parsers.
    if let Ok(packet) = Packet::parse_unchecked_crc(data) {
        if let Ok(bytes) = packet.try_emit() {
            let again = Packet::parse(&bytes).expect("emitted packets parse");
            assert_eq!(again, packet);
        }
    }
});
