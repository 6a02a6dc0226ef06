//! The sample workloads' instruction counts: the same code as `sample_workloads.rs` times, run
//! once under Valgrind's Callgrind by gungraun. Counts do not move with the machine's other
//! load, so they decide where wall time on a busy runner cannot.
//!
//! Run with `cargo bench -p benchgate-sample-workloads --bench instructions` (needs Valgrind and
//! `gungraun-runner` 0.20.0); gungraun writes `target/gungraun/**/summary.json`, which
//! `benchgate ingest` reads beside Criterion's output.
//!
//! Each benchmark is named like its wall-time twin (`aead` / `seal` / `chacha20_poly1305_16_kib`
//! for `aead/seal/chacha20-poly1305/16 KiB`): benchgate matches ids ignoring case and
//! punctuation, so the comment shows both on one row.

#![allow(
    missing_docs,
    reason = "gungraun's macros generate items without documentation"
)]

use std::hint::black_box;

use gungraun::{library_benchmark, library_benchmark_group, main};
use ring::aead::{AES_256_GCM, CHACHA20_POLY1305, LessSafeKey};

use benchgate_sample_workloads as workloads;

/// A key, a record and how many times the id's work is repeated (`SLOWED`).
struct Aead {
    key: LessSafeKey,
    record: Vec<u8>,
    times: usize,
}

fn sealing(algorithm: &'static ring::aead::Algorithm, id: &str) -> Aead {
    Aead {
        key: workloads::aead_key(algorithm),
        record: vec![0x42u8; workloads::PAYLOAD],
        times: workloads::repeats(id),
    }
}

fn opening(algorithm: &'static ring::aead::Algorithm, id: &str) -> (LessSafeKey, Vec<Vec<u8>>) {
    let key = workloads::aead_key(algorithm);
    let sealed = workloads::sealed_record(&key);
    let records = vec![sealed; workloads::repeats(id)];
    (key, records)
}

#[library_benchmark]
#[bench::chacha20_poly1305_16_kib(sealing(&CHACHA20_POLY1305, "aead/seal/chacha20-poly1305/16 KiB"))]
#[bench::aes_256_gcm_16_kib(sealing(&AES_256_GCM, "aead/seal/aes-256-gcm/16 KiB"))]
fn seal(mut input: Aead) -> u8 {
    let mut counter = 0;
    black_box(workloads::seal(
        &input.key,
        &mut input.record,
        &mut counter,
        input.times,
    ))
}

#[library_benchmark]
#[bench::chacha20_poly1305_16_kib(opening(&CHACHA20_POLY1305, "aead/open/chacha20-poly1305/16 KiB"))]
#[bench::aes_256_gcm_16_kib(opening(&AES_256_GCM, "aead/open/aes-256-gcm/16 KiB"))]
fn open(input: (LessSafeKey, Vec<Vec<u8>>)) -> usize {
    let (key, mut records) = input;
    records
        .iter_mut()
        .map(|record| black_box(workloads::open(&key, record)))
        .sum()
}

library_benchmark_group!(name = aead, benchmarks = [seal, open]);

fn framed() -> (Vec<(u8, u64, Vec<u8>)>, Vec<u8>) {
    let messages = workloads::messages();
    let mut wire = Vec::new();
    workloads::encode_frames(&messages, &mut wire);
    (messages, wire)
}

#[library_benchmark]
#[bench::_256_messages(framed())]
fn encode(input: (Vec<(u8, u64, Vec<u8>)>, Vec<u8>)) -> usize {
    let (messages, mut out) = input;
    for _ in 0..workloads::repeats("framing/encode") {
        workloads::encode_frames(black_box(&messages), &mut out);
    }
    out.len()
}

#[library_benchmark]
#[bench::_256_messages(framed().1)]
fn decode(wire: Vec<u8>) -> Option<(usize, usize, u64)> {
    let mut decoded = None;
    for _ in 0..workloads::repeats("framing/decode") {
        decoded = workloads::decode_frames(black_box(&wire));
    }
    decoded
}

library_benchmark_group!(name = framing, benchmarks = [encode, decode]);

#[library_benchmark]
#[bench::_16(workloads::csv_line(16))]
#[bench::_256(workloads::csv_line(256))]
#[bench::_4096(workloads::csv_line(4096))]
fn csv_numbers(line: String) -> u64 {
    workloads::parse_numbers(black_box(&line))
}

library_benchmark_group!(name = parse, benchmarks = [csv_numbers]);

main!(library_benchmark_groups = aead, framing, parse);
