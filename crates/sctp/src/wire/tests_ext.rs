//! The chunks and parameters of AUTH (RFC 4895) and ASCONF (RFC 5061): round trips on byte
//! arrays written from the RFC layouts, and property tests (no panic on arbitrary bytes;
//! `parse(emit(x)) == x` for generated values).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::*;

const HDR: CommonHeader = CommonHeader { src_port: 5000, dst_port: 5001, verification_tag: 0xdead_beef };

fn round_trip(chunk_bytes: &[u8], chunk: Chunk) {
    let mut bytes = vec![0x13, 0x88, 0x13, 0x89, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0];
    bytes.extend_from_slice(chunk_bytes);
    let crc = packet_checksum(&bytes);
    bytes[8..12].copy_from_slice(&crc.to_le_bytes());
    let packet = Packet { header: HDR, chunks: vec![chunk] };
    assert_eq!(Packet::parse(&bytes), Ok(packet.clone()));
    assert_eq!(packet.emit(), bytes);
    assert_eq!(packet.buffer_len(), bytes.len());
}

#[test]
fn auth_chunk_round_trips() {
    #[rustfmt::skip]
    let bytes = [
        0x0f, 0x00, 0x00, 0x1c, // AUTH, length 28
        0x00, 0x00, 0x00, 0x01, // key 0, HMAC-SHA-1
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
    ];
    round_trip(&bytes, Chunk::Auth { key_id: 0, hmac_id: 1, hmac: (1..=20).collect() });
}

#[test]
fn init_with_auth_and_extension_parameters_round_trips() {
    #[rustfmt::skip]
    let bytes = [
        0x01, 0x00, 0x00, 0x4f, // INIT, length 79 (the last padding not counted)
        0, 0, 0, 1, 0, 0, 0x10, 0, 0, 10, 0, 10, 0, 0, 0, 5,
        0x80, 0x02, 0x00, 0x24, // RANDOM, 32 bytes
        7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
        0x80, 0x03, 0x00, 0x06, 0xc1, 0x80, 0, 0, // CHUNKS: ASCONF, ASCONF-ACK, padded
        0x80, 0x04, 0x00, 0x06, 0x00, 0x01, 0, 0, // HMAC-ALGO: SHA-1, padded
        0x80, 0x08, 0x00, 0x07, 0x0f, 0xc1, 0x80, 0, // Supported Extensions, padded
    ];
    round_trip(
        &bytes,
        Chunk::Init(InitChunk {
            initiate_tag: 1,
            a_rwnd: 0x1000,
            outbound_streams: 10,
            inbound_streams: 10,
            initial_tsn: 5,
            params: vec![
                Parameter::Random(vec![7; 32]),
                Parameter::ChunkList(vec![0xc1, 0x80]),
                Parameter::HmacAlgo(vec![1]),
                Parameter::SupportedExtensions(vec![0x0f, 0xc1, 0x80]),
            ],
        }),
    );
}

#[test]
fn asconf_chunk_round_trips() {
    #[rustfmt::skip]
    let bytes = [
        0xc1, 0x00, 0x00, 0x40, // ASCONF, length 64
        0x00, 0x00, 0x01, 0x00, // serial 256
        0x00, 0x05, 0x00, 0x08, 10, 0, 0, 1, // Address Parameter
        0xc0, 0x01, 0x00, 0x10, 0, 0, 0, 1, 0x00, 0x05, 0x00, 0x08, 10, 1, 0, 1, // ADD-IP
        0xc0, 0x04, 0x00, 0x10, 0, 0, 0, 2, 0x00, 0x05, 0x00, 0x08, 10, 1, 0, 1, // SET-PRIMARY
        0xc0, 0x02, 0x00, 0x10, 0, 0, 0, 3, 0x00, 0x05, 0x00, 0x08, 10, 0, 0, 1, // DELETE-IP
    ];
    let a: IpAddr = Ipv4Addr::new(10, 0, 0, 1).into();
    let b: IpAddr = Ipv4Addr::new(10, 1, 0, 1).into();
    round_trip(
        &bytes,
        Chunk::Asconf {
            serial: 256,
            address: a,
            params: vec![
                Parameter::AddIp { correlation: 1, address: b },
                Parameter::SetPrimary { correlation: 2, address: b },
                Parameter::DeleteIp { correlation: 3, address: a },
            ],
        },
    );
}

#[test]
fn asconf_ack_chunk_round_trips() {
    #[rustfmt::skip]
    let bytes = [
        0x80, 0x00, 0x00, 0x2c, // ASCONF-ACK, length 44
        0x00, 0x00, 0x01, 0x00, // serial 256
        0xc0, 0x03, 0x00, 0x1c, 0, 0, 0, 3, // Error Cause Indication, correlation 3
        0x00, 0xa0, 0x00, 0x14, // cause 0xA0 with the refused request
        0xc0, 0x02, 0x00, 0x10, 0, 0, 0, 3, 0x00, 0x05, 0x00, 0x08, 10, 0, 0, 1,
        0xc0, 0x05, 0x00, 0x08, 0, 0, 0, 4, // Success Indication, correlation 4
    ];
    let refused = Parameter::DeleteIp { correlation: 3, address: Ipv4Addr::new(10, 0, 0, 1).into() };
    round_trip(
        &bytes,
        Chunk::AsconfAck {
            serial: 256,
            params: vec![
                Parameter::ErrorCauseIndication {
                    correlation: 3,
                    causes: vec![ErrorCause::Unknown { code: 0xa0, value: Parameter::emit_list(&[refused]) }],
                },
                Parameter::SuccessIndication { correlation: 4 },
            ],
        },
    );
}

#[test]
fn malformed_asconf_parameters_are_errors() {
    // ADD-IP whose address is a Heartbeat Info, or cut short, or with trailing bytes.
    assert!(Parameter::parse(0xc001, &[0, 0, 0, 1, 0, 1, 0, 4]).is_err());
    assert!(Parameter::parse(0xc001, &[0, 0, 0, 1, 0, 5, 0, 8, 1]).is_err());
    assert!(Parameter::parse(0xc001, &[0, 0, 0, 1, 0, 5, 0, 8, 1, 2, 3, 4, 0, 0, 0, 0]).is_err());
    assert!(Parameter::parse(0x8004, &[0, 1, 0]).is_err());
    assert!(Parameter::parse(0xc005, &[0, 1]).is_err());
    assert!(Parameter::parse(0xc006, &[0, 0, 0, 9]).is_ok());
    // ASCONF without an Address Parameter.
    assert!(Chunk::parse(&ChunkView { chunk_type: ChunkType::ASCONF, flags: 0, value: &[0, 0, 0, 1] }).is_err());
    assert!(Chunk::parse(&ChunkView { chunk_type: ChunkType::AUTH, flags: 0, value: &[0, 0, 0] }).is_err());
}

fn ip() -> impl Strategy<Value = IpAddr> {
    prop_oneof![
        any::<u32>().prop_map(|a| IpAddr::V4(Ipv4Addr::from(a))),
        any::<u128>().prop_map(|a| IpAddr::V6(Ipv6Addr::from(a))),
    ]
}

fn ext_param() -> impl Strategy<Value = Parameter> {
    let bytes = || proptest::collection::vec(any::<u8>(), 0..40);
    prop_oneof![
        bytes().prop_map(Parameter::Random),
        bytes().prop_map(Parameter::ChunkList),
        proptest::collection::vec(any::<u16>(), 0..6).prop_map(Parameter::HmacAlgo),
        bytes().prop_map(Parameter::SupportedExtensions),
        (any::<u32>(), ip()).prop_map(|(correlation, address)| Parameter::AddIp { correlation, address }),
        (any::<u32>(), ip()).prop_map(|(correlation, address)| Parameter::DeleteIp { correlation, address }),
        (any::<u32>(), ip()).prop_map(|(correlation, address)| Parameter::SetPrimary { correlation, address }),
        (any::<u32>(), proptest::collection::vec(any::<u8>(), 0..9)).prop_map(|(correlation, v)| {
            Parameter::ErrorCauseIndication {
                correlation,
                causes: vec![ErrorCause::Unknown { code: 0xa0 + u16::from(v.len() as u8 % 4), value: v }],
            }
        }),
        any::<u32>().prop_map(|correlation| Parameter::SuccessIndication { correlation }),
        any::<u32>().prop_map(Parameter::AdaptationLayerIndication),
    ]
}

fn ext_chunk() -> impl Strategy<Value = Chunk> {
    prop_oneof![
        (any::<u16>(), any::<u16>(), proptest::collection::vec(any::<u8>(), 0..40))
            .prop_map(|(key_id, hmac_id, hmac)| Chunk::Auth { key_id, hmac_id, hmac }),
        (any::<u32>(), ip(), proptest::collection::vec(ext_param(), 0..5))
            .prop_map(|(serial, address, params)| Chunk::Asconf { serial, address, params }),
        (any::<u32>(), proptest::collection::vec(ext_param(), 0..5))
            .prop_map(|(serial, params)| Chunk::AsconfAck { serial, params }),
    ]
}

proptest! {
    #[test]
    fn generated_auth_and_asconf_chunks_round_trip(chunks in proptest::collection::vec(ext_chunk(), 1..4)) {
        let packet = Packet { header: HDR, chunks };
        let bytes = packet.emit();
        prop_assert_eq!(bytes.len(), packet.buffer_len());
        prop_assert_eq!(Packet::parse(&bytes), Ok(packet));
    }

    #[test]
    fn arbitrary_values_of_the_new_types_never_panic(
        kind in 0usize..3,
        param_type in prop_oneof![Just(0x8002u16), Just(0x8003), Just(0x8004), Just(0x8008),
            0xc001u16..=0xc006],
        value in proptest::collection::vec(any::<u8>(), 0..80),
    ) {
        let chunk_type = [ChunkType::AUTH, ChunkType::ASCONF, ChunkType::ASCONF_ACK][kind];
        if let Ok(c) = Chunk::parse(&ChunkView { chunk_type, flags: 0, value: &value }) {
            // Whatever parses re-encodes to something that parses the same.
            let p = Packet { header: HDR, chunks: vec![c] };
            prop_assert_eq!(Packet::parse(&p.emit()), Ok(p));
        }
        let _ = Parameter::parse(param_type, &value);
    }
}
