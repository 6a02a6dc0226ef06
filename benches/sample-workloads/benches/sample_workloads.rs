//! Sample workloads for demos and end-to-end tests: small, quick benchmarks shaped like the ones
//! the projects benchgate is for measure (AEAD seal and open on 16 KiB, message framing, a
//! key-exchange handshake over loopback TCP), plus ones that exercise every throughput kind and
//! the awkward ids real projects use (spaces, `::`, slashes, brackets, non-ASCII).
//!
//! Run with `cargo bench -p benchgate-sample-workloads`; `-- '^(aead|framing|handshake)/'` runs the
//! protocol workloads alone.
//!
//! `benchgate_sample_workloads::SLOWED` makes named benchmarks do their work several times per
//! iteration: a regression of known size, made by changing code, for demos and the Action's
//! end-to-end test.

#![allow(
    clippy::expect_used,
    reason = "a benchmark that cannot set up has nothing to measure"
)]

use std::hint::black_box;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ring::aead::{AES_256_GCM, Aad, CHACHA20_POLY1305, LessSafeKey, UnboundKey};
use ring::agreement::{EphemeralPrivateKey, UnparsedPublicKey, X25519, agree_ephemeral};
use ring::hkdf::{HKDF_SHA256, Salt};
use ring::rand::{SecureRandom as _, SystemRandom};

use benchgate_sample_workloads::{
    PAYLOAD, aead_key, csv_line, decode_frames, encode_frames, fnv1a, messages, nonce, open,
    parse_numbers, popcount, repeats, seal, sealed_record,
};

/// AEAD seal and open of a 16 KiB record, as a secure channel does per record.
fn aead(c: &mut Criterion) {
    let mut group = c.benchmark_group("aead");
    group.throughput(Throughput::Bytes(PAYLOAD as u64));
    for (name, algorithm) in [
        ("chacha20-poly1305", &CHACHA20_POLY1305),
        ("aes-256-gcm", &AES_256_GCM),
    ] {
        let key = aead_key(algorithm);
        let id = format!("seal/{name}/16 KiB");
        let times = repeats(&format!("aead/{id}"));
        let mut record = vec![0x42u8; PAYLOAD];
        let mut counter = 0u64;
        group.bench_function(&id, |b| {
            b.iter(|| black_box(seal(&key, &mut record, &mut counter, times)))
        });

        let sealed = sealed_record(&key);
        let id = format!("open/{name}/16 KiB");
        let times = repeats(&format!("aead/{id}"));
        group.bench_function(&id, |b| {
            b.iter_batched_ref(
                || vec![sealed.clone(); times],
                |records| {
                    for record in records.iter_mut() {
                        black_box(open(&key, record));
                    }
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

/// Message framing: encode and decode 256 messages of mixed sizes (16 B to 1.5 KiB).
fn framing(c: &mut Criterion) {
    let messages = messages();
    let mut wire = Vec::new();
    encode_frames(&messages, &mut wire);
    let mut group = c.benchmark_group("framing");
    group.throughput(Throughput::Bytes(wire.len() as u64));
    let times = repeats("framing/encode");
    let mut out = Vec::with_capacity(wire.len());
    group.bench_function("encode/256 messages", |b| {
        b.iter(|| {
            for _ in 0..times {
                encode_frames(black_box(&messages), &mut out);
            }
            out.len()
        })
    });
    let times = repeats("framing/decode");
    group.bench_function("decode/256 messages", |b| {
        b.iter(|| {
            let mut decoded = None;
            for _ in 0..times {
                decoded = Some(decode_frames(black_box(&wire)).expect("the frames decode"));
            }
            decoded
        })
    });
    group.finish();
}

/// Derives a 32-byte key for `label` from a shared secret and the transcript.
fn derive(secret: &[u8], transcript: &[u8], label: &[u8]) -> LessSafeKey {
    struct Len32;
    impl ring::hkdf::KeyType for Len32 {
        fn len(&self) -> usize {
            32
        }
    }
    let prk = Salt::new(HKDF_SHA256, transcript).extract(secret);
    let info = [label];
    let okm = prk.expand(&info, Len32).expect("32 bytes of HKDF output");
    let mut key = [0u8; 32];
    okm.fill(&mut key).expect("32 bytes");
    LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &key).expect("a 32-byte key"))
}

fn crypto(_: ring::error::Unspecified) -> std::io::Error {
    std::io::Error::other("a cryptographic operation failed")
}

/// One side of the handshake: send our ephemeral X25519 key and nonce, read the peer's, agree,
/// and derive the key; the server then proves it with a sealed transcript the client opens.
fn handshake(stream: &mut TcpStream, server: bool, rng: &SystemRandom) -> std::io::Result<()> {
    let private = EphemeralPrivateKey::generate(&X25519, rng).map_err(crypto)?;
    let public = private.compute_public_key().map_err(crypto)?;
    let mut hello = [0u8; 64];
    hello[..32].copy_from_slice(public.as_ref());
    rng.fill(&mut hello[32..]).map_err(crypto)?;
    let mut peer = [0u8; 64];
    if server {
        stream.read_exact(&mut peer)?;
        stream.write_all(&hello)?;
    } else {
        stream.write_all(&hello)?;
        stream.read_exact(&mut peer)?;
    }
    let (client_hello, server_hello) = if server {
        (&peer, &hello)
    } else {
        (&hello, &peer)
    };
    let transcript = [&client_hello[..], &server_hello[..]].concat();
    let key = agree_ephemeral(
        private,
        &UnparsedPublicKey::new(&X25519, &peer[..32]),
        |secret| derive(secret, &transcript, b"finished"),
    )
    .map_err(crypto)?;
    let mut finished = transcript.clone();
    if server {
        key.seal_in_place_append_tag(nonce(1), Aad::empty(), &mut finished)
            .map_err(crypto)?;
        stream.write_all(&finished)
    } else {
        let mut sealed = vec![0u8; transcript.len() + CHACHA20_POLY1305.tag_len()];
        stream.read_exact(&mut sealed)?;
        let opened = key
            .open_in_place(nonce(1), Aad::empty(), &mut sealed)
            .map_err(crypto)?;
        if opened != transcript.as_slice() {
            return Err(std::io::Error::other(
                "the server's finished does not match",
            ));
        }
        Ok(())
    }
}

/// A handshake over loopback TCP: connect, exchange X25519 keys, derive with HKDF-SHA256, and
/// check the server's sealed finished message.
fn handshakes(c: &mut Criterion) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let address = listener.local_addr().expect("the port's address");
    std::thread::spawn(move || {
        let rng = SystemRandom::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_nodelay(true);
            let _ = handshake(&mut stream, true, &rng);
        }
    });
    let rng = SystemRandom::new();
    let times = repeats("handshake/x25519");
    let mut group = c.benchmark_group("handshake");
    group.bench_function("x25519 + hkdf + chacha20-poly1305/loopback tcp", |b| {
        b.iter(|| {
            for _ in 0..times {
                let mut stream = TcpStream::connect(address).expect("connect over loopback");
                stream.set_nodelay(true).expect("TCP_NODELAY");
                handshake(&mut stream, false, &rng).expect("the handshake completes");
            }
        })
    });
    group.finish();
}

fn parsing(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    for n in [16usize, 256, 4096] {
        let line = csv_line(n);
        group.throughput(Throughput::Bytes(line.len() as u64));
        group.bench_with_input(BenchmarkId::new("csv numbers", n), &line, |b, line| {
            b.iter(|| parse_numbers(black_box(line)))
        });
    }
    group.finish();
}

fn hashing(c: &mut Criterion) {
    let mut group = c.benchmark_group("hash");
    for (size, name) in [
        (64usize, "fnv1a::hash [64 B]"),
        (4096, "fnv1a::hash [4 KB]"),
        (262_144, "fnv1a::hash [256 KB]"),
    ] {
        let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        group.throughput(Throughput::BytesDecimal(data.len() as u64));
        group.bench_function(name, |b| b.iter(|| fnv1a(black_box(&data))));
    }
    group.finish();
}

fn sorting(c: &mut Criterion) {
    let input: Vec<u32> = (0..1000u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let mut group = c.benchmark_group("sort");
    group.throughput(Throughput::Elements(input.len() as u64));
    group.bench_function("Vec::sort_unstable/1000 u32", |b| {
        b.iter_batched_ref(
            || input.clone(),
            |v| v.sort_unstable(),
            criterion::BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn bits(c: &mut Criterion) {
    let words: Vec<u64> = (0..512u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let mut group = c.benchmark_group("bits");
    group.throughput(Throughput::Bits(words.len() as u64 * 64));
    group.bench_function("popcount", |b| b.iter(|| popcount(black_box(&words))));
    group.finish();
}

fn latency_only(c: &mut Criterion) {
    c.bench_function("naïve λ lookup", |b| {
        let table: Vec<u64> = (0..64).collect();
        b.iter(|| table.iter().position(|&x| x == black_box(63)))
    });
    let mut group = c.benchmark_group("collections");
    for n in [100usize, 10_000] {
        group.bench_function(format!("HashMap::insert/{n}"), |b| {
            b.iter(|| {
                let mut map = std::collections::HashMap::with_capacity(n);
                for i in 0..n {
                    map.insert(black_box(i as u64).wrapping_mul(0x9e37_79b9), i);
                }
                map.len()
            })
        });
        group.bench_function(format!("BTreeMap::insert/{n}"), |b| {
            b.iter(|| {
                let mut map = std::collections::BTreeMap::new();
                for i in 0..n {
                    map.insert(black_box(i as u64).wrapping_mul(0x9e37_79b9), i);
                }
                map.len()
            })
        });
    }
    group.bench_function("Vec::push/1000 boxed", |b| {
        b.iter(|| {
            (0..1000u64)
                .map(|i| Box::new(black_box(i)))
                .collect::<Vec<_>>()
        })
    });
    group.finish();

    let mut group = c.benchmark_group("text");
    group.bench_function("format!/1000 numbers", |b| {
        b.iter(|| {
            let mut out = String::new();
            for i in 0..1000u32 {
                out.push_str(&format!("{},", black_box(i)));
            }
            out.len()
        })
    });
    group.bench_function("str::replace/10 KB", |b| {
        let text = "the quick brown fox jumps over the lazy dog ".repeat(230);
        b.iter(|| black_box(&text).replace("fox", "cat").len())
    });
    group.finish();

    let mut group = c.benchmark_group("memory");
    for size in [4096usize, 1 << 20] {
        let source = vec![7u8; size];
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_function(format!("copy/{size} B"), |b| {
            let mut target = vec![0u8; size];
            b.iter(|| target.copy_from_slice(black_box(&source)))
        });
    }
    group.finish();
}

fn quick() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(600))
}

criterion_group! {
    name = benches;
    config = quick();
    targets = aead, framing, handshakes, parsing, hashing, sorting, bits, latency_only
}
criterion_main!(benches);
