//! The sample workloads' code, shared by the two harnesses that measure it: Criterion's wall time
//! (`benches/sample_workloads.rs`) and gungraun's instruction counts under Valgrind
//! (`benches/instructions.rs`); and their one knob, which benchmarks do their work more than
//! once per iteration.
//!
//! A slowdown is a change of code, as in a real pull request: edit [`SLOWED`] (the Action's
//! end-to-end test does), and the build that benchmarks it is a different program.

#![allow(
    clippy::expect_used,
    reason = "a workload that cannot set up has nothing to measure"
)]

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey};

/// Bytes per AEAD record.
pub const PAYLOAD: usize = 16 * 1024;

/// Benchmarks whose id contains the first string do their work the second number of times per
/// iteration. Empty: every benchmark does its work once.
pub const SLOWED: &[(&str, usize)] = &[];

/// How many times the benchmark `id` does its work per iteration.
pub fn repeats(id: &str) -> usize {
    SLOWED
        .iter()
        .find(|(name, _)| id.contains(name))
        .map_or(1, |(_, times)| *times)
}

/// Seals `record` in place `times` times, each with the next nonce; returns the last tag's
/// first byte.
pub fn seal(key: &LessSafeKey, record: &mut [u8], counter: &mut u64, times: usize) -> u8 {
    let mut first = 0;
    for _ in 0..times {
        *counter += 1;
        let tag = key
            .seal_in_place_separate_tag(nonce(*counter), Aad::from(b"hdr"), record)
            .expect("sealing 16 KiB");
        first = tag.as_ref()[0];
    }
    first
}

/// A record of [`PAYLOAD`] bytes sealed with nonce 0, as [`open`] expects it.
pub fn sealed_record(key: &LessSafeKey) -> Vec<u8> {
    let mut sealed = vec![0x42u8; PAYLOAD];
    key.seal_in_place_append_tag(nonce(0), Aad::from(b"hdr"), &mut sealed)
        .expect("sealing 16 KiB");
    sealed
}

/// Opens a record sealed by [`sealed_record`] in place; returns the plaintext's length.
pub fn open(key: &LessSafeKey, record: &mut [u8]) -> usize {
    key.open_in_place(nonce(0), Aad::from(b"hdr"), record)
        .expect("the record opens")
        .len()
}

/// 256 messages of mixed sizes (16 B to 1.5 KiB) as (type, stream id, payload).
pub fn messages() -> Vec<(u8, u64, Vec<u8>)> {
    (0..256u64)
        .map(|i| {
            let len = [16usize, 64, 200, 1500][(i % 4) as usize];
            ((i % 7) as u8, i * 4 + 1, vec![(i % 251) as u8; len])
        })
        .collect()
}

/// A comma-separated line of `n` decimal numbers.
pub fn csv_line(n: usize) -> String {
    (0..n)
        .map(|i| (i * 7919).to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// A fixed key of `algorithm`'s length.
pub fn aead_key(algorithm: &'static ring::aead::Algorithm) -> LessSafeKey {
    let bytes: Vec<u8> = (0..algorithm.key_len()).map(|i| i as u8 ^ 0x5c).collect();
    LessSafeKey::new(UnboundKey::new(algorithm, &bytes).expect("a key of the algorithm's length"))
}

/// The nonce of record `counter`.
pub fn nonce(counter: u64) -> Nonce {
    let mut bytes = [0u8; 12];
    bytes[4..].copy_from_slice(&counter.to_be_bytes());
    Nonce::assume_unique_for_key(bytes)
}

/// Writes `value` as a LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads a LEB128 varint at `at`, advancing it; `None` if cut short or longer than 10 bytes.
pub fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..70).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// Frames: a varint length, a type byte, a varint stream id, then the payload.
pub fn encode_frames(messages: &[(u8, u64, Vec<u8>)], out: &mut Vec<u8>) {
    out.clear();
    for (kind, stream, payload) in messages {
        put_varint(out, payload.len() as u64);
        out.push(*kind);
        put_varint(out, *stream);
        out.extend_from_slice(payload);
    }
}

/// Decodes every frame, checking bounds and summing each payload as a reader would touch it;
/// returns (frames, payload bytes, a checksum of stream ids and payloads).
pub fn decode_frames(bytes: &[u8]) -> Option<(usize, usize, u64)> {
    let (mut at, mut frames, mut payload, mut streams) = (0usize, 0usize, 0usize, 0u64);
    while at < bytes.len() {
        let len = usize::try_from(get_varint(bytes, &mut at)?).ok()?;
        let kind = *bytes.get(at)?;
        at += 1;
        streams ^= get_varint(bytes, &mut at)? ^ u64::from(kind);
        let body = bytes.get(at..at.checked_add(len)?)?;
        streams = streams.wrapping_add(body.iter().map(|&b| u64::from(b)).sum::<u64>());
        payload += body.len();
        at += len;
        frames += 1;
    }
    Some((frames, payload, streams))
}

/// Sums the decimal numbers of a comma-separated line.
pub fn parse_numbers(line: &str) -> u64 {
    line.split(',')
        .filter_map(|field| field.trim().parse::<u64>().ok())
        .sum()
}

/// FNV-1a over bytes.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Counts set bits across a word slice.
pub fn popcount(words: &[u64]) -> u32 {
    words.iter().map(|w| w.count_ones()).sum()
}
