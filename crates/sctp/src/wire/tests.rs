//! Round-trip tests on static byte arrays written from the RFC 9260 layouts, CRC32c
//! vectors, and malformed input.

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

const HDR: CommonHeader =
    CommonHeader { src_port: 5000, dst_port: 5001, verification_tag: 0xdead_beef };

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
