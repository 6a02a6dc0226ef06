//! Sample workloads for demos and end-to-end tests: small, quick benchmarks that exercise every
//! throughput kind and the awkward ids real projects use (spaces, `::`, slashes, brackets,
//! non-ASCII). Run with `cargo bench --bench sample_workloads`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// Sums the decimal numbers of a comma-separated line.
fn parse_numbers(line: &str) -> u64 {
    line.split(',')
        .filter_map(|field| field.trim().parse::<u64>().ok())
        .sum()
}

/// FNV-1a over bytes.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Counts set bits across a word slice.
fn popcount(words: &[u64]) -> u32 {
    words.iter().map(|w| w.count_ones()).sum()
}

fn parsing(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    for n in [16usize, 256] {
        let line: String = (0..n)
            .map(|i| (i * 7919).to_string())
            .collect::<Vec<_>>()
            .join(",");
        group.throughput(Throughput::Bytes(line.len() as u64));
        group.bench_with_input(BenchmarkId::new("csv numbers", n), &line, |b, line| {
            b.iter(|| parse_numbers(black_box(line)))
        });
    }
    group.finish();
}

fn hashing(c: &mut Criterion) {
    let data: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    let mut group = c.benchmark_group("hash");
    group.throughput(Throughput::BytesDecimal(data.len() as u64));
    group.bench_function("fnv1a::hash [4 KB]", |b| b.iter(|| fnv1a(black_box(&data))));
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
    targets = parsing, hashing, sorting, bits, latency_only
}
criterion_main!(benches);
