//! Seeded random tests: parsing arbitrary and mutated bytes never panics, and
//! `parse(emit(p)) == p` for randomly generated typed packets.

use std::net::{Ipv4Addr, Ipv6Addr};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;

fn bytes(rng: &mut impl Rng, max: usize) -> Vec<u8> {
    let n = rng.random_range(0..=max);
    (0..n).map(|_| rng.random()).collect()
}

fn param(rng: &mut impl Rng) -> Parameter {
    match rng.random_range(0..10) {
        0 => Parameter::HeartbeatInfo(bytes(rng, 20)),
        1 => Parameter::Ipv4Address(Ipv4Addr::from(rng.random::<u32>())),
        2 => Parameter::Ipv6Address(Ipv6Addr::from(rng.random::<u128>())),
        3 => Parameter::StateCookie(bytes(rng, 40)),
        4 => Parameter::UnrecognizedParameter(bytes(rng, 12)),
        5 => Parameter::CookiePreservative { increment_ms: rng.random() },
        6 => Parameter::HostNameAddress(bytes(rng, 12)),
        7 => Parameter::SupportedAddressTypes((0..rng.random_range(0..4)).map(|_| rng.random()).collect()),
        8 => Parameter::EcnCapable,
        _ => loop {
            let param_type = rng.random();
            if !Parameter::is_known_type(param_type) {
                break Parameter::Unknown { param_type, value: bytes(rng, 10) };
            }
        },
    }
}

fn cause(rng: &mut impl Rng) -> ErrorCause {
    match rng.random_range(0..14) {
        0 => ErrorCause::InvalidStreamIdentifier { stream_id: rng.random() },
        1 => ErrorCause::MissingMandatoryParameter {
            missing: (0..rng.random_range(0..5)).map(|_| rng.random()).collect(),
        },
        2 => ErrorCause::StaleCookie { staleness_us: rng.random() },
        3 => ErrorCause::OutOfResource,
        4 => ErrorCause::UnresolvableAddress { address: bytes(rng, 12) },
        5 => ErrorCause::UnrecognizedChunkType { chunk: bytes(rng, 12) },
        6 => ErrorCause::InvalidMandatoryParameter,
        7 => ErrorCause::UnrecognizedParameters { params: bytes(rng, 12) },
        8 => ErrorCause::NoUserData { tsn: rng.random() },
        9 => ErrorCause::CookieReceivedWhileShuttingDown,
        10 => ErrorCause::RestartWithNewAddresses { addresses: bytes(rng, 12) },
        11 => ErrorCause::UserInitiatedAbort { reason: bytes(rng, 12) },
        12 => ErrorCause::ProtocolViolation { info: bytes(rng, 12) },
        _ => ErrorCause::Unknown { code: rng.random_range(14..=u16::MAX), value: bytes(rng, 9) },
    }
}

fn init(rng: &mut impl Rng) -> InitChunk {
    InitChunk {
        initiate_tag: rng.random(),
        a_rwnd: rng.random(),
        outbound_streams: rng.random(),
        inbound_streams: rng.random(),
        initial_tsn: rng.random(),
        params: (0..rng.random_range(0..5)).map(|_| param(rng)).collect(),
    }
}

fn chunk(rng: &mut impl Rng) -> Chunk {
    match rng.random_range(0..16) {
        0 => Chunk::Data(DataChunk {
            immediate: rng.random(),
            unordered: rng.random(),
            beginning: rng.random(),
            ending: rng.random(),
            tsn: rng.random(),
            stream_id: rng.random(),
            ssn: rng.random(),
            ppid: rng.random(),
            user_data: bytes(rng, 50),
        }),
        1 => Chunk::Init(init(rng)),
        2 => Chunk::InitAck(init(rng)),
        3 => Chunk::Sack(SackChunk {
            cumulative_tsn_ack: rng.random(),
            a_rwnd: rng.random(),
            gap_ack_blocks: (0..rng.random_range(0..5))
                .map(|_| GapAckBlock { start: rng.random(), end: rng.random() })
                .collect(),
            duplicate_tsns: (0..rng.random_range(0..5)).map(|_| rng.random()).collect(),
            flags: rng.random(),
        }),
        4 => Chunk::Heartbeat { info: bytes(rng, 20) },
        5 => Chunk::HeartbeatAck { info: bytes(rng, 20) },
        6 => Chunk::Abort { t_bit: rng.random(), causes: (0..rng.random_range(0..4)).map(|_| cause(rng)).collect() },
        7 => Chunk::Shutdown { cumulative_tsn_ack: rng.random() },
        8 => Chunk::ShutdownAck,
        9 => Chunk::Error { causes: (0..rng.random_range(0..4)).map(|_| cause(rng)).collect() },
        10 => Chunk::CookieEcho { cookie: bytes(rng, 40) },
        11 => Chunk::CookieAck,
        12 => Chunk::ShutdownComplete { t_bit: rng.random() },
        13 => Chunk::Ecne { lowest_tsn: rng.random() },
        14 => Chunk::Cwr { lowest_tsn: rng.random() },
        _ => loop {
            let chunk_type = rng.random();
            if !Chunk::is_known_type(chunk_type) {
                break Chunk::Unknown { chunk_type, flags: rng.random(), value: bytes(rng, 20) };
            }
        },
    }
}

fn packet(rng: &mut impl Rng) -> Packet {
    Packet {
        header: CommonHeader { src_port: rng.random(), dst_port: rng.random(), verification_tag: rng.random() },
        chunks: (0..rng.random_range(1..5)).map(|_| chunk(rng)).collect(),
    }
}

#[test]
fn random_typed_packets_round_trip() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5c7b);
    for _ in 0..20_000 {
        let p = packet(&mut rng);
        let bytes = p.emit();
        assert_eq!(bytes.len(), p.buffer_len());
        assert_eq!(bytes.len() % 4, 0);
        assert_eq!(Packet::parse(&bytes).as_ref(), Ok(&p), "bytes {bytes:02x?}");
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0xf022);
    for _ in 0..100_000 {
        let b = bytes(&mut rng, 120);
        let _ = Packet::parse(&b);
        let _ = Packet::parse_unchecked_crc(&b);
    }
}

#[test]
fn mutated_valid_packets_never_panic() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0xb175);
    let mut decoded = 0;
    for _ in 0..100_000 {
        let mut b = packet(&mut rng).emit();
        match rng.random_range(0..3) {
            0 => {
                let i = rng.random_range(0..b.len());
                b[i] ^= 1 << rng.random_range(0..8);
            }
            1 => b.truncate(rng.random_range(0..b.len())),
            _ => {
                // Overwrite a byte that is likely a length or count field.
                let i = rng.random_range(COMMON_HEADER_LEN..b.len());
                b[i] = rng.random();
            }
        }
        if Packet::parse_unchecked_crc(&b).is_ok() {
            decoded += 1;
        }
        assert!(Packet::parse(&b).is_err() || Packet::parse_unchecked_crc(&b).is_ok());
    }
    // The mutations leave a fair share decodable, so the deep parsers are exercised.
    assert!(decoded > 10_000, "only {decoded} mutated packets decoded");
}
