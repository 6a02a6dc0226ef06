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
    for n in [16usize, 256, 4096] {
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
    targets = parsing, hashing, sorting, bits, latency_only
}
criterion_main!(benches);
