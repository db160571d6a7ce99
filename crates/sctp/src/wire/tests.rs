//! Round-trip tests on static byte arrays written from the RFC 9260 layouts, CRC32c
//! vectors, and malformed input.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::*;

/// Builds a packet from a 12-byte header (checksum zero) and chunk bytes, filling in
/// the CRC32c.
fn with_crc(chunks: &[u8]) -> Vec<u8> {
    let mut p = vec![0x13, 0x88, 0x13, 0x89, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0];
    p.extend_from_slice(chunks);
    let crc = packet_checksum(&p);
    p[8..12].copy_from_slice(&crc.to_le_bytes());
    p
}

const HDR: CommonHeader = CommonHeader { src_port: 5000, dst_port: 5001, verification_tag: 0xdead_beef };

/// parse(bytes) == chunks and emit(chunks) == bytes.
fn round_trip(chunk_bytes: &[u8], chunks: Vec<Chunk>) {
    let bytes = with_crc(chunk_bytes);
    let packet = Packet { header: HDR, chunks };
    assert_eq!(Packet::parse(&bytes), Ok(packet.clone()));
    assert_eq!(packet.emit(), bytes);
    assert_eq!(packet.buffer_len(), bytes.len());
    assert_eq!(packet.try_emit(), Ok(bytes));
}

#[test]
fn crc32c_vectors() {
    // RFC 3720 §B.4 (iSCSI) test vectors.
    assert_eq!(crc32c::crc32c(&[0u8; 32]), 0x8A91_36AA);
    assert_eq!(crc32c::crc32c(&[0xffu8; 32]), 0x62A8_AB43);
    let inc: Vec<u8> = (0u8..32).collect();
    assert_eq!(crc32c::crc32c(&inc), 0x46DD_794E);
    assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
}

#[test]
fn data_round_trip() {
    // Flags U|B|E, TSN 1, stream 2, SSN 3, PPID 0x33, 5 bytes of data, 3 padding.
    let bytes = [
        0x00, 0x07, 0x00, 0x15, //
        0x00, 0x00, 0x00, 0x01, //
        0x00, 0x02, 0x00, 0x03, //
        0x00, 0x00, 0x00, 0x33, //
        b'h', b'e', b'l', b'l', //
        b'o', 0, 0, 0,
    ];
    let data = DataChunk {
        immediate: false,
        unordered: true,
        beginning: true,
        ending: true,
        tsn: 1,
        stream_id: 2,
        ssn: 3,
        ppid: 0x33,
        user_data: b"hello".to_vec(),
    };
    round_trip(&bytes, vec![Chunk::Data(data)]);
}

#[test]
fn ecne_and_cwr_round_trip_and_need_exactly_one_tsn() {
    #[rustfmt::skip]
    let bytes = [
        0x0c, 0x00, 0x00, 0x08, 0x12, 0x34, 0x56, 0x78, // ECNE, lowest TSN 0x12345678
        0x0d, 0x00, 0x00, 0x08, 0xff, 0xff, 0xff, 0xfe, // CWR, lowest TSN 0xfffffffe
    ];
    round_trip(&bytes, vec![Chunk::Ecne { lowest_tsn: 0x1234_5678 }, Chunk::Cwr { lowest_tsn: 0xffff_fffe }]);
    for bad in [&[0x0c, 0x00, 0x00, 0x04][..], &[0x0d, 0x00, 0x00, 0x0c, 0, 0, 0, 1, 0, 0, 0, 2]] {
        assert!(matches!(Packet::parse(&with_crc(bad)), Err(WireError::BadLength { .. })), "{bad:?}");
    }
    // An ECN Capable parameter with a value is malformed (RFC 9260 Appendix A: length 4).
    assert!(Parameter::parse(0x8000, &[0, 0, 0, 0]).is_err());
    assert_eq!(Parameter::parse(0x8000, &[]), Ok(Parameter::EcnCapable));
}

#[test]
fn init_round_trip_with_every_init_parameter() {
    #[rustfmt::skip]
    let bytes = [
        0x01, 0x00, 0x00, 0x4e, // INIT, length 78 (last parameter's 2 padding bytes excluded)
        0x01, 0x02, 0x03, 0x04, // initiate tag
        0x00, 0x01, 0x00, 0x00, // a_rwnd
        0x00, 0x0a, 0xff, 0xff, // OS 10, MIS 65535
        0x11, 0x22, 0x33, 0x44, // initial TSN
        0x00, 0x05, 0x00, 0x08, 192, 0, 2, 1, // IPv4 Address
        0x00, 0x06, 0x00, 0x14, // IPv6 Address 2001:db8::1
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
        0x00, 0x09, 0x00, 0x08, 0x00, 0x00, 0x03, 0xe8, // Cookie Preservative 1000 ms
        0x00, 0x0b, 0x00, 0x09, b'h', b'o', b's', b't', 0, 0, 0, 0, // Host Name, 3 pad
        0x80, 0x00, 0x00, 0x04, // ECN Capable (unknown here)
        0x00, 0x0c, 0x00, 0x06, 0x00, 0x05, 0, 0, // Supported Address Types: IPv4, 2 pad
    ];
    let init = InitChunk {
        initiate_tag: 0x0102_0304,
        a_rwnd: 0x1_0000,
        outbound_streams: 10,
        inbound_streams: 0xffff,
        initial_tsn: 0x1122_3344,
        params: vec![
            Parameter::Ipv4Address(Ipv4Addr::new(192, 0, 2, 1)),
            Parameter::Ipv6Address(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)),
            Parameter::CookiePreservative { increment_ms: 1000 },
            Parameter::HostNameAddress(b"host\0".to_vec()),
            Parameter::EcnCapable,
            Parameter::SupportedAddressTypes(vec![5]),
        ],
    };
    round_trip(&bytes, vec![Chunk::Init(init)]);
}

#[test]
fn init_ack_round_trip_with_cookie_and_unrecognized_parameter() {
    #[rustfmt::skip]
    let bytes = [
        0x02, 0x00, 0x00, 0x2c, // INIT ACK, length 44
        0xa1, 0xa2, 0xa3, 0xa4, // initiate tag
        0x00, 0x00, 0xff, 0xff, // a_rwnd
        0x00, 0x01, 0x00, 0x01, // OS 1, MIS 1
        0x00, 0x00, 0x00, 0x00, // initial TSN
        0x00, 0x07, 0x00, 0x09, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0, 0, 0, // State Cookie
        0x00, 0x08, 0x00, 0x0c, 0x80, 0x01, 0x00, 0x08, 0xaa, 0xbb, 0xcc, 0xdd, // Unrecognized
    ];
    let ack = InitChunk {
        initiate_tag: 0xa1a2_a3a4,
        a_rwnd: 0xffff,
        outbound_streams: 1,
        inbound_streams: 1,
        initial_tsn: 0,
        params: vec![
            Parameter::StateCookie(vec![0xc1, 0xc2, 0xc3, 0xc4, 0xc5]),
            Parameter::UnrecognizedParameter(vec![0x80, 0x01, 0x00, 0x08, 0xaa, 0xbb, 0xcc, 0xdd]),
        ],
    };
    round_trip(&bytes, vec![Chunk::InitAck(ack)]);
}

#[test]
fn sack_round_trip() {
    #[rustfmt::skip]
    let bytes = [
        0x03, 0x00, 0x00, 0x1c, // SACK, length 28
        0x00, 0x00, 0x01, 0x00, // cumulative TSN ack 256
        0x00, 0x00, 0x40, 0x00, // a_rwnd
        0x00, 0x02, 0x00, 0x01, // 2 gap blocks, 1 duplicate
        0x00, 0x02, 0x00, 0x03, // gap 2..=3
        0x00, 0x05, 0x00, 0x05, // gap 5..=5
        0x00, 0x00, 0x00, 0xff, // duplicate TSN 255
    ];
    let sack = SackChunk {
        flags: 0,
        cumulative_tsn_ack: 256,
        a_rwnd: 0x4000,
        gap_ack_blocks: vec![GapAckBlock { start: 2, end: 3 }, GapAckBlock { start: 5, end: 5 }],
        duplicate_tsns: vec![255],
    };
    round_trip(&bytes, vec![Chunk::Sack(sack)]);
}

#[test]
fn sack_keeps_its_chunk_flags() {
    // Flags 0x05 (what CMT's delayed ack puts there); no gap blocks, no duplicates.
    #[rustfmt::skip]
    let bytes = [
        0x03, 0x05, 0x00, 0x10, // SACK, flags 0x05, length 16
        0x00, 0x00, 0x00, 0x07, // cumulative TSN ack 7
        0x00, 0x01, 0x00, 0x00, // a_rwnd 65536
        0x00, 0x00, 0x00, 0x00, // no gap blocks, no duplicates
    ];
    let sack = SackChunk { flags: 0x05, cumulative_tsn_ack: 7, a_rwnd: 0x1_0000, ..SackChunk::default() };
    round_trip(&bytes, vec![Chunk::Sack(sack)]);
}

#[test]
fn heartbeat_and_ack_round_trip() {
    // Heartbeat Info of 5 bytes: parameter length 9, chunk length 13, 3 padding bytes.
    let hb = [0x04, 0x00, 0x00, 0x0d, 0x00, 0x01, 0x00, 0x09, 1, 2, 3, 4, 5, 0, 0, 0];
    round_trip(&hb, vec![Chunk::Heartbeat { info: vec![1, 2, 3, 4, 5] }]);
    #[rustfmt::skip]
    let ack = [0x05, 0x00, 0x00, 0x10, 0x00, 0x01, 0x00, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8];
    round_trip(&ack, vec![Chunk::HeartbeatAck { info: (1..=8).collect() }]);
}

#[test]
fn abort_round_trip_with_causes_1_to_4_and_12() {
    #[rustfmt::skip]
    let bytes = [
        0x06, 0x01, 0x00, 0x2b, // ABORT, T bit, length 43
        0x00, 0x01, 0x00, 0x08, 0x00, 0x07, 0x00, 0x00, // Invalid Stream Identifier 7
        0x00, 0x02, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x07, 0, 0, // Missing: State Cookie
        0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x27, 0x10, // Stale Cookie, 10000 us
        0x00, 0x04, 0x00, 0x04, // Out of Resource
        0x00, 0x0c, 0x00, 0x07, b'b', b'y', b'e', 0, // User-Initiated Abort "bye"
    ];
    let causes = vec![
        ErrorCause::InvalidStreamIdentifier { stream_id: 7 },
        ErrorCause::MissingMandatoryParameter { missing: vec![7] },
        ErrorCause::StaleCookie { staleness_us: 10_000 },
        ErrorCause::OutOfResource,
        ErrorCause::UserInitiatedAbort { reason: b"bye".to_vec() },
    ];
    round_trip(&bytes, vec![Chunk::Abort { t_bit: true, causes }]);
}

#[test]
fn error_round_trip_with_remaining_causes() {
    #[rustfmt::skip]
    let bytes = [
        0x09, 0x00, 0x00, 0x4d, // ERROR, length 77
        0x00, 0x05, 0x00, 0x0c, 0x00, 0x0b, 0x00, 0x08, b'a', b'b', b'c', 0, // Unresolvable
        0x00, 0x06, 0x00, 0x08, 0xc1, 0x05, 0x00, 0x04, // Unrecognized Chunk Type
        0x00, 0x07, 0x00, 0x04, // Invalid Mandatory Parameter
        0x00, 0x08, 0x00, 0x0c, 0x80, 0x01, 0x00, 0x08, 0xaa, 0xbb, 0xcc, 0xdd, // Unrecognized P.
        0x00, 0x09, 0x00, 0x08, 0x00, 0x00, 0x00, 0x2a, // No User Data, TSN 42
        0x00, 0x0a, 0x00, 0x04, // Cookie Received While Shutting Down
        0x00, 0x0b, 0x00, 0x0c, 0x00, 0x05, 0x00, 0x08, 192, 0, 2, 2, // Restart, new address
        0x00, 0x0d, 0x00, 0x06, b'x', b'y', 0, 0, // Protocol Violation
        0x00, 0xff, 0x00, 0x05, 0xee, 0, 0, 0, // unknown cause 255
    ];
    let causes = vec![
        ErrorCause::UnresolvableAddress { address: vec![0, 0x0b, 0, 8, b'a', b'b', b'c', 0] },
        ErrorCause::UnrecognizedChunkType { chunk: vec![0xc1, 0x05, 0x00, 0x04] },
        ErrorCause::InvalidMandatoryParameter,
        ErrorCause::UnrecognizedParameters { params: vec![0x80, 0x01, 0x00, 0x08, 0xaa, 0xbb, 0xcc, 0xdd] },
        ErrorCause::NoUserData { tsn: 42 },
        ErrorCause::CookieReceivedWhileShuttingDown,
        ErrorCause::RestartWithNewAddresses { addresses: vec![0, 5, 0, 8, 192, 0, 2, 2] },
        ErrorCause::ProtocolViolation { info: b"xy".to_vec() },
        ErrorCause::Unknown { code: 255, value: vec![0xee] },
    ];
    round_trip(&bytes, vec![Chunk::Error { causes }]);
}

#[test]
fn small_chunks_round_trip_bundled() {
    #[rustfmt::skip]
    let bytes = [
        0x07, 0x00, 0x00, 0x08, 0x00, 0x00, 0x01, 0x00, // SHUTDOWN, cum TSN ack 256
        0x08, 0x00, 0x00, 0x04, // SHUTDOWN ACK
        0x0a, 0x00, 0x00, 0x07, 0xc1, 0xc2, 0xc3, 0x00, // COOKIE ECHO, 3-byte cookie
        0x0b, 0x00, 0x00, 0x04, // COOKIE ACK
        0x0e, 0x01, 0x00, 0x04, // SHUTDOWN COMPLETE, T bit
        0x0e, 0x00, 0x00, 0x04, // SHUTDOWN COMPLETE
        0x06, 0x00, 0x00, 0x04, // ABORT without causes
        0xc2, 0x05, 0x00, 0x06, 0xab, 0xcd, 0x00, 0x00, // unknown type 0xc2, flags 5
    ];
    let chunks = vec![
        Chunk::Shutdown { cumulative_tsn_ack: 256 },
        Chunk::ShutdownAck,
        Chunk::CookieEcho { cookie: vec![0xc1, 0xc2, 0xc3] },
        Chunk::CookieAck,
        Chunk::ShutdownComplete { t_bit: true },
        Chunk::ShutdownComplete { t_bit: false },
        Chunk::Abort { t_bit: false, causes: vec![] },
        Chunk::Unknown { chunk_type: 0xc2, flags: 5, value: vec![0xab, 0xcd] },
    ];
    round_trip(&bytes, chunks);
}

#[test]
fn data_flags_decode_individually() {
    for (flags, i, u, b, e) in [
        (0x08, true, false, false, false),
        (0x04, false, true, false, false),
        (0x02, false, false, true, false),
        (0x01, false, false, false, true),
        (0xf0, false, false, false, false), // reserved bits ignored
    ] {
        let bytes = [0, flags, 0, 17, 0, 0, 0, 9, 0, 1, 0, 2, 0, 0, 0, 3, 0xaa, 0, 0, 0];
        let view = ChunkIter::new(&bytes).next().unwrap().unwrap();
        let Chunk::Data(d) = Chunk::parse(&view).unwrap() else { panic!("not DATA") };
        assert_eq!((d.immediate, d.unordered, d.beginning, d.ending), (i, u, b, e));
        assert_eq!((d.tsn, d.stream_id, d.ssn, d.ppid, d.user_data), (9, 1, 2, 3, vec![0xaa]));
    }
}

#[test]
fn header_view_reads_fields_and_checksum() {
    let bytes = with_crc(&[0x0b, 0x00, 0x00, 0x04]);
    let v = HeaderView::new_checked(&bytes).unwrap();
    assert_eq!((v.src_port(), v.dst_port(), v.verification_tag()), (5000, 5001, 0xdead_beef));
    assert!(v.checksum_ok());
    assert_eq!(v.fields(), HDR);
    let views: Vec<_> = v.chunks().collect();
    assert_eq!(views, vec![Ok(ChunkView { chunk_type: ChunkType::COOKIE_ACK, flags: 0, value: &[] })]);
}

#[test]
fn checksum_stored_least_significant_byte_first() {
    let bytes = with_crc(&[0x0b, 0x00, 0x00, 0x04]);
    let crc = packet_checksum(&bytes);
    assert_eq!(bytes[8..12], crc.to_le_bytes());
    // The checksum field does not feed into its own computation.
    let mut other = bytes.clone();
    other[8..12].copy_from_slice(&[1, 2, 3, 4]);
    assert_eq!(packet_checksum(&other), crc);
}

#[test]
fn unknown_type_actions_follow_upper_two_bits() {
    use UnknownAction::*;
    assert_eq!(unknown_chunk_action(0x0f), Stop);
    assert_eq!(unknown_chunk_action(0x40), StopAndReport);
    assert_eq!(unknown_chunk_action(0x80), Skip);
    assert_eq!(unknown_chunk_action(0xc1), SkipAndReport);
    assert_eq!(unknown_parameter_action(0x3fff), Stop);
    assert_eq!(unknown_parameter_action(0x4001), StopAndReport);
    assert_eq!(unknown_parameter_action(0x8000), Skip); // ECN Capable
    assert_eq!(unknown_parameter_action(0xc004), SkipAndReport);
}

#[test]
fn missing_final_padding_is_accepted() {
    // COOKIE ECHO with a 3-byte cookie and no padding at the end of the packet.
    let bytes = with_crc(&[0x0a, 0x00, 0x00, 0x07, 0xc1, 0xc2, 0xc3]);
    let p = Packet::parse(&bytes).unwrap();
    assert_eq!(p.chunks, vec![Chunk::CookieEcho { cookie: vec![0xc1, 0xc2, 0xc3] }]);
}

// ---- malformed input -------------------------------------------------------------------

fn parse_chunks(chunk_bytes: &[u8]) -> Result<Packet, WireError> {
    Packet::parse(&with_crc(chunk_bytes))
}

#[test]
fn truncated_common_header() {
    for len in 0..COMMON_HEADER_LEN {
        let bytes = vec![0u8; len];
        assert_eq!(Packet::parse(&bytes), Err(WireError::Truncated { what: "common header", need: 12, have: len }));
    }
}

#[test]
fn header_without_chunks() {
    assert_eq!(parse_chunks(&[]), Err(WireError::NoChunks));
}

#[test]
fn bad_checksum_is_reported() {
    let mut bytes = with_crc(&[0x0b, 0x00, 0x00, 0x04]);
    let good = packet_checksum(&bytes);
    bytes[8] ^= 0xff;
    let received = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    assert_eq!(Packet::parse(&bytes), Err(WireError::BadChecksum { received, computed: good }));
    assert!(!HeaderView::new_checked(&bytes).unwrap().checksum_ok());
    // Unchecked parsing still decodes it.
    assert!(Packet::parse_unchecked_crc(&bytes).is_ok());
}

#[test]
fn malformed_chunks_give_specific_errors() {
    use WireError::*;
    let cases: &[(&[u8], WireError)] = &[
        (&[0x0b, 0x00], Truncated { what: "chunk", need: 4, have: 2 }),
        (&[0x0b, 0x00, 0x00, 0x03], BadLength { what: "chunk", length: 3 }),
        (&[0x0b, 0x00, 0x00, 0x0c, 0, 0, 0, 0], LengthPastEnd { what: "chunk", length: 12, available: 8 }),
        (&[0x00, 0x00, 0x00, 0x08, 0, 0, 0, 1], Truncated { what: "DATA chunk", need: 2, have: 0 }),
        (&[0x07, 0x00, 0x00, 0x0c, 0, 0, 0, 1, 0, 0, 0, 0], BadLength { what: "SHUTDOWN chunk", length: 12 }),
        (&[0x0b, 0x00, 0x00, 0x08, 0, 0, 0, 0], BadLength { what: "COOKIE ACK chunk", length: 8 }),
        // SACK announcing one gap block but carrying none.
        (&[0x03, 0, 0, 0x10, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0], BadLength { what: "SACK chunk", length: 16 }),
        // HEARTBEAT carrying a State Cookie instead of Heartbeat Info.
        (&[0x04, 0, 0, 0x08, 0, 7, 0, 4], MissingHeartbeatInfo),
        (&[0x04, 0, 0, 0x04], MissingHeartbeatInfo),
        // Parameter length 2, inside an INIT.
        (
            &[1, 0, 0, 24, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 5, 0, 2],
            BadLength { what: "parameter", length: 2 },
        ),
        // IPv4 Address parameter of length 7.
        (
            &[1, 0, 0, 27, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 5, 0, 7, 1, 2, 3, 0],
            BadLength { what: "IPv4 Address parameter", length: 7 },
        ),
        // Parameter running past the INIT's value.
        (
            &[1, 0, 0, 24, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 5, 0, 8],
            LengthPastEnd { what: "parameter", length: 8, available: 4 },
        ),
        // Missing Mandatory Parameter claiming 2 types but carrying 1.
        (&[9, 0, 0, 14, 0, 2, 0, 10, 0, 0, 0, 2, 0, 7, 0, 0], BadLength { what: "error cause", length: 10 }),
        // Out of Resource with information attached.
        (&[9, 0, 0, 12, 0, 4, 0, 8, 0, 0, 0, 0], BadLength { what: "error cause", length: 8 }),
        // Error cause with length 0.
        (&[6, 0, 0, 8, 0, 1, 0, 0], BadLength { what: "error cause", length: 0 }),
    ];
    for (chunk_bytes, err) in cases {
        assert_eq!(parse_chunks(chunk_bytes), Err(err.clone()), "input {chunk_bytes:02x?}");
    }
}

#[test]
fn well_formed_chunks_stop_where_the_iterator_reports_an_error() {
    // COOKIE ACK, SHUTDOWN COMPLETE, then a chunk whose length runs past the packet, then a
    // well-formed one the iterator never reaches.
    let bytes = [0x0b, 0, 0, 4, 0x0e, 1, 0, 4, 0x0b, 0, 0, 12, 0x0b, 0, 0, 4];
    let all: Vec<_> = ChunkIter::new(&bytes).collect();
    assert_eq!(all.len(), 3);
    assert!(all[2].is_err());
    let views: Vec<_> = ChunkIter::new(&bytes).well_formed().collect();
    let expected: Vec<_> = all[..2].iter().cloned().map(Result::unwrap).collect();
    assert_eq!(views, expected);
    assert_eq!(views[1], ChunkView { chunk_type: ChunkType::SHUTDOWN_COMPLETE, flags: 1, value: &[] });
    assert_eq!(ChunkIter::new(&[]).well_formed().count(), 0);
}

#[test]
fn try_emit_rejects_overlong_values() {
    let big = Packet { header: HDR, chunks: vec![Chunk::CookieEcho { cookie: vec![0; 70_000] }] };
    assert_eq!(big.try_emit(), Err(WireError::TooLong));
    let many = Packet {
        header: HDR,
        chunks: vec![Chunk::Sack(SackChunk { duplicate_tsns: vec![0; 70_000], ..Default::default() })],
    };
    assert_eq!(many.try_emit(), Err(WireError::TooLong));
}

#[test]
fn a_packet_built_after_headroom_is_the_same_packet_behind_zero_bytes() {
    let data = DataRef {
        tsn: 7,
        stream_id: 1,
        ssn: 2,
        ppid: 3,
        unordered: false,
        beginning: true,
        ending: true,
        immediate: false,
        user_data: &[9; 33],
    };
    let build = |mut b: PacketBuilder| {
        b.data(&data);
        b.chunk(&Chunk::CookieAck);
        b
    };
    let plain = build(PacketBuilder::new(HDR, 100));
    for headroom in [0, 20, 52, 53, 100] {
        let roomy = build(PacketBuilder::with_headroom(HDR, vec![0xff; 7], headroom));
        assert_eq!(roomy.len(), plain.len(), "headroom {headroom}: the length counts the packet only");
        let bytes = roomy.finish();
        assert!(bytes[..headroom].iter().all(|&b| b == 0), "headroom {headroom} is zero");
        assert_eq!(&bytes[headroom..], build(PacketBuilder::new(HDR, 100)).finish(), "headroom {headroom}");
    }
    let empty = PacketBuilder::with_headroom(HDR, Vec::new(), 20);
    assert!(empty.is_empty() && empty.len() == COMMON_HEADER_LEN);
}

#[test]
fn the_checksum_checked_in_place_agrees_and_leaves_the_packet_as_it_was() {
    let good = with_crc(&[0x0b, 0, 0, 4]);
    let mut p = good.clone();
    assert!(checksum_ok_in_place(&mut p));
    assert_eq!(p, good, "the field is restored");
    assert!(HeaderView::new_checked(&good).unwrap().checksum_ok());
    for byte in [0, 8, 11, 12, 15] {
        let mut bad = good.clone();
        bad[byte] ^= 0x40;
        let copy = bad.clone();
        assert!(!checksum_ok_in_place(&mut bad), "byte {byte} flipped");
        assert_eq!(bad, copy);
    }
    assert!(!checksum_ok_in_place(&mut [0; 11]));
}

#[test]
fn a_data_chunk_built_in_place_is_the_typed_chunk_s_bytes() {
    for len in [0, 1, 2, 3, 4, 5, 1452, 1453] {
        for flags in 0..16u8 {
            let user_data: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
            let (immediate, unordered, beginning, ending) =
                (flags & 8 != 0, flags & 4 != 0, flags & 2 != 0, flags & 1 != 0);
            let (tsn, stream_id, ssn, ppid) = (0xdead_beef, 0x1234, 0xfedc, 0x0102_0304);
            let typed = DataChunk {
                immediate,
                unordered,
                beginning,
                ending,
                tsn,
                stream_id,
                ssn,
                ppid,
                user_data: user_data.clone(),
            };
            let borrowed =
                DataRef { immediate, unordered, beginning, ending, tsn, stream_id, ssn, ppid, user_data: &user_data };
            let mut a = PacketBuilder::new(HDR, 100);
            a.data(&borrowed);
            a.chunk(&Chunk::CookieAck);
            let mut b = PacketBuilder::new(HDR, 100);
            b.chunk(&Chunk::Data(typed));
            b.chunk(&Chunk::CookieAck);
            assert_eq!(a.finish(), b.finish(), "len {len} flags {flags:#x}");
        }
    }
}
