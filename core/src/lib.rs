//! benchgate's domain types, shared by the store, the decision engine and the site: runs and
//! their keys, benchmarks, measurements and the units they are counted in. No I/O: reading
//! Criterion's output, fingerprinting the machine and storing runs are `benchgate-collector`'s.

pub mod counts;
pub mod domain;

pub use domain::{
    BenchmarkId, CommitSha, CustomMetric, Direction, Estimate, Measurement, RepositoryName, RunId,
    RunKind, RunMeta, Samples, Throughput, merge_measurements,
};

/// A malformed value given on the command line or in a run, named with what it should be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} {value:?}: {reason}")]
pub struct InvalidInput {
    /// What the value is (`commit SHA`, `repository`, ...).
    pub what: &'static str,
    /// The value as given.
    pub value: String,
    /// What a valid value looks like.
    pub reason: &'static str,
}

/// The result of building a domain value.
pub type Result<T> = std::result::Result<T, InvalidInput>;

/// `bytes` as lowercase hex (a digest's usual spelling).
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 0x0f)] as char);
    }
    out
}
