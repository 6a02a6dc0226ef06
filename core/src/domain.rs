//! Domain types shared by every part of benchgate: built once at the edge, valid afterwards.

use std::fmt;
use std::str::FromStr;

use crate::{InvalidInput, Result};

/// A full 40-hex git commit SHA, lower-case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommitSha(String);

impl CommitSha {
    /// Accepts exactly 40 hexadecimal digits (either case); stores them lower-case.
    pub fn parse(value: &str) -> Result<Self> {
        if value.len() == 40 && value.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(Self(value.to_ascii_lowercase()))
        } else {
            Err(InvalidInput {
                what: "commit SHA",
                value: value.to_owned(),
                reason: "expected the full 40-hex-digit SHA (git rev-parse HEAD)",
            })
        }
    }

    /// The SHA as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 digits, for people.
    pub fn short(&self) -> &str {
        &self.0[..12]
    }
}

impl fmt::Display for CommitSha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A repository name, `owner/name`, as GitHub spells it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RepositoryName(String);

impl RepositoryName {
    /// Accepts `owner/name` where both parts are non-empty and use GitHub's characters
    /// (ASCII letters, digits, `-`, `_`, `.`).
    pub fn parse(value: &str) -> Result<Self> {
        let valid_part = |part: &str| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        };
        match value.split_once('/') {
            Some((owner, name)) if valid_part(owner) && valid_part(name) => {
                Ok(Self(value.to_owned()))
            }
            _ => Err(InvalidInput {
                what: "repository",
                value: value.to_owned(),
                reason: "expected OWNER/NAME, e.g. rust-lang/regex",
            }),
        }
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RepositoryName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a run was made: it decides which runs can serve as baselines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunKind {
    /// On a developer's machine.
    Local,
    /// On a push to a branch.
    Push,
    /// For a pull request.
    Pr,
    /// The scheduled run on the default branch.
    Nightly,
}

impl RunKind {
    /// The lower-case name used on the command line and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Local => "local",
            RunKind::Push => "push",
            RunKind::Pr => "pr",
            RunKind::Nightly => "nightly",
        }
    }
}

impl FromStr for RunKind {
    type Err = InvalidInput;

    fn from_str(value: &str) -> Result<Self> {
        match value {
            "local" => Ok(RunKind::Local),
            "push" => Ok(RunKind::Push),
            "pr" => Ok(RunKind::Pr),
            "nightly" => Ok(RunKind::Nightly),
            _ => Err(InvalidInput {
                what: "run kind",
                value: value.to_owned(),
                reason: "expected one of local, push, pr, nightly",
            }),
        }
    }
}

impl fmt::Display for RunKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A benchmark's identity: Criterion's `full_id`, exactly as written (any characters but control ones).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BenchmarkId(String);

impl BenchmarkId {
    /// Accepts any non-empty text without control characters; spaces, `::`, `/`, brackets and
    /// non-ASCII are all kept as they are.
    pub fn parse(value: &str) -> Result<Self> {
        if value.is_empty() || value.chars().any(char::is_control) {
            return Err(InvalidInput {
                what: "benchmark id",
                value: value.to_owned(),
                reason: "a benchmark id must be non-empty and hold no control characters",
            });
        }
        Ok(Self(value.to_owned()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for BenchmarkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How much work one iteration of a benchmark does, as Criterion records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Throughput {
    /// Bytes per iteration, reported in binary multiples (KiB/s).
    Bytes(u64),
    /// Bytes per iteration, reported in decimal multiples (KB/s).
    BytesDecimal(u64),
    /// Elements per iteration.
    Elements(u64),
    /// Bits per iteration.
    Bits(u64),
    /// Elements per iteration, with the bytes they occupy (Criterion ≥ 0.6).
    ElementsAndBytes {
        /// Elements per iteration: the amount throughput is judged on.
        elements: u64,
        /// Bytes per iteration.
        bytes: u64,
    },
}

impl Throughput {
    /// Criterion's name of the kind (`Bytes`, `BytesDecimal`, `Elements`, `Bits`, `ElementsAndBytes`).
    pub fn kind(&self) -> &'static str {
        match self {
            Throughput::Bytes(_) => "Bytes",
            Throughput::BytesDecimal(_) => "BytesDecimal",
            Throughput::Elements(_) => "Elements",
            Throughput::Bits(_) => "Bits",
            Throughput::ElementsAndBytes { .. } => "ElementsAndBytes",
        }
    }

    /// The amount per iteration the benchmark's throughput is computed from.
    pub fn amount(&self) -> u64 {
        match *self {
            Throughput::Bytes(n)
            | Throughput::BytesDecimal(n)
            | Throughput::Elements(n)
            | Throughput::Bits(n) => n,
            Throughput::ElementsAndBytes { elements, .. } => elements,
        }
    }

    /// The bytes per iteration of an `ElementsAndBytes` throughput.
    pub fn secondary_bytes(&self) -> Option<u64> {
        match *self {
            Throughput::ElementsAndBytes { bytes, .. } => Some(bytes),
            _ => None,
        }
    }

    /// Rebuilds a throughput from its stored kind and amounts.
    pub fn from_parts(kind: &str, amount: u64, secondary_bytes: Option<u64>) -> Option<Self> {
        Some(match kind {
            "Bytes" => Throughput::Bytes(amount),
            "BytesDecimal" => Throughput::BytesDecimal(amount),
            "Elements" => Throughput::Elements(amount),
            "Bits" => Throughput::Bits(amount),
            "ElementsAndBytes" => Throughput::ElementsAndBytes {
                elements: amount,
                bytes: secondary_bytes?,
            },
            _ => return None,
        })
    }
}

/// A point estimate with its confidence interval, in nanoseconds per iteration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The point estimate.
    pub point: f64,
    /// Lower bound of the confidence interval.
    pub lower: f64,
    /// Upper bound of the confidence interval.
    pub upper: f64,
    /// Confidence level of the interval (Criterion's default is 0.95).
    pub confidence_level: f64,
}

/// Criterion's raw samples: sample `i` ran `iters[i]` iterations in `times[i]` nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Samples {
    iters: Vec<f64>,
    times: Vec<f64>,
}

impl Samples {
    /// Pairs iteration counts with total times. Both arrays must be non-empty and of the same
    /// length; counts must be positive and times finite and non-negative. On failure the error
    /// names the offending array (`iters` or `times`) and index.
    pub fn new(iters: Vec<f64>, times: Vec<f64>) -> std::result::Result<Self, (String, String)> {
        if iters.len() != times.len() {
            return Err((
                "times".to_owned(),
                format!(
                    "has {} entries but iters has {}; the two arrays must be the same length",
                    times.len(),
                    iters.len()
                ),
            ));
        }
        if iters.is_empty() {
            return Err((
                "iters".to_owned(),
                "is empty; a benchmark needs at least one sample".to_owned(),
            ));
        }
        if let Some(i) = iters.iter().position(|n| !(n.is_finite() && *n > 0.0)) {
            return Err((
                format!("iters[{i}]"),
                format!("is {}; iteration counts must be positive", iters[i]),
            ));
        }
        if let Some(i) = times.iter().position(|t| !(t.is_finite() && *t >= 0.0)) {
            return Err((
                format!("times[{i}]"),
                format!("is {}; times must be finite and not negative", times[i]),
            ));
        }
        Ok(Self { iters, times })
    }

    /// One observation of `value` (an exact count, a custom metric's single value).
    pub fn single(value: f64) -> Self {
        Self {
            iters: vec![1.0],
            times: vec![value],
        }
    }

    /// Iteration counts, one per sample.
    pub fn iters(&self) -> &[f64] {
        &self.iters
    }

    /// Total nanoseconds, one per sample.
    pub fn times(&self) -> &[f64] {
        &self.times
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.iters.len()
    }

    /// Always false: a `Samples` holds at least one sample.
    pub fn is_empty(&self) -> bool {
        self.iters.is_empty()
    }

    /// Nanoseconds per iteration of each sample (`times[i] / iters[i]`): what the statistics use.
    pub fn per_iteration(&self) -> impl Iterator<Item = f64> + '_ {
        self.iters.iter().zip(&self.times).map(|(n, t)| t / n)
    }
}

/// Adds `more` to `measurements` (callers sort once they have merged everything); the id of a
/// benchmark already there is an error (a run measures each benchmark once, whichever tool
/// measured it).
pub fn merge_measurements(
    measurements: &mut Vec<Measurement>,
    more: impl IntoIterator<Item = Measurement>,
) -> std::result::Result<(), BenchmarkId> {
    for measurement in more {
        if measurements.iter().any(|m| m.id == measurement.id) {
            return Err(measurement.id);
        }
        measurements.push(measurement);
    }
    Ok(())
}

/// One benchmark's result in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The benchmark's identity.
    pub id: BenchmarkId,
    /// Work per iteration, when the benchmark declared it.
    pub throughput: Option<Throughput>,
    /// Mean time per iteration.
    pub mean: Estimate,
    /// Median time per iteration.
    pub median: Estimate,
    /// Criterion's sampling mode (`Linear`, `Flat`, `Auto`), when known.
    pub sampling_mode: Option<String>,
    /// Every sample Criterion took.
    pub samples: Samples,
    /// For a custom metric (`ingest --metrics`), its unit and direction: the estimates and
    /// samples then hold values in that unit, not nanoseconds per iteration, and each sample
    /// is one observation (`iters` all 1). `None` for Criterion's measurements.
    pub custom: Option<CustomMetric>,
}

/// The longest time per iteration accepted from Criterion: one hour. Criterion's own estimates
/// are finite for any f64, so a damaged or forged file can say `1.7e308` ns; stored, such a
/// value would swamp every comparison it enters.
pub const MAX_NS_PER_ITERATION: f64 = 3.6e12;

/// Criterion's sampling modes, as its files and messages write them, and benchgate's own
/// `imported` (a value from an imported history).
pub const SAMPLING_MODES: &[&str] = &["Linear", "Flat", "Auto", "imported"];

impl Measurement {
    /// Checks what the types cannot: a Criterion time's estimates and every sample's time per
    /// iteration at most [`MAX_NS_PER_ITERATION`], and the sampling mode one of
    /// [`SAMPLING_MODES`]. Custom metrics and counts are in their own units and not bounded.
    /// The error is (field, reason), fields named as in Criterion's files.
    pub fn check_plausible(&self) -> std::result::Result<(), (String, String)> {
        if let Some(mode) = &self.sampling_mode
            && !SAMPLING_MODES.contains(&mode.as_str())
        {
            return Err((
                "sampling_mode".to_owned(),
                format!("is {mode:?}; expected one of Linear, Flat, Auto (or imported)"),
            ));
        }
        if self.custom.is_some() {
            return Ok(());
        }
        let too_long = |ns: f64| ns > MAX_NS_PER_ITERATION;
        for (name, estimate) in [("mean", &self.mean), ("median", &self.median)] {
            for (part, value) in [
                ("point_estimate", estimate.point),
                ("confidence_interval.lower_bound", estimate.lower),
                ("confidence_interval.upper_bound", estimate.upper),
            ] {
                if too_long(value) {
                    return Err((
                        format!("{name}.{part}"),
                        format!(
                            "is {value} ns; more than an hour per iteration is not a measurement"
                        ),
                    ));
                }
            }
        }
        if let Some(i) = self
            .samples
            .iters()
            .iter()
            .zip(self.samples.times())
            .position(|(n, t)| too_long(t / n))
        {
            return Err((
                format!("times[{i}]"),
                format!(
                    "is {} ns for {} iterations; more than an hour per iteration is not a measurement",
                    self.samples.times()[i],
                    self.samples.iters()[i]
                ),
            ));
        }
        Ok(())
    }
}

/// What a custom metric measures in: its unit and which way is better.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomMetric {
    /// The unit the values are in, as the file gave it (`ms`, `MiB`, `conn/s`, ...).
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
}

/// Which way a custom metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Lower values are better (latency, memory, size).
    LowerIsBetter,
    /// Higher values are better (throughput, rates).
    HigherIsBetter,
}

impl Direction {
    /// `lower` or `higher`, as stored and as the metrics file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::LowerIsBetter => "lower",
            Direction::HigherIsBetter => "higher",
        }
    }

    /// The inverse of [`Direction::as_str`].
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "lower" => Some(Direction::LowerIsBetter),
            "higher" => Some(Direction::HigherIsBetter),
            _ => None,
        }
    }
}

/// A stored run's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunId(i64);

impl RunId {
    /// Accepts a positive integer, as printed by `benchgate ingest`.
    pub fn parse(value: &str) -> Result<Self> {
        match value.parse::<i64>() {
            Ok(id) if id > 0 => Ok(Self(id)),
            _ => Err(InvalidInput {
                what: "run id",
                value: value.to_owned(),
                reason: "expected a positive integer, as printed by `benchgate ingest` or listed by `benchgate runs`",
            }),
        }
    }

    /// Wraps an id read from the store.
    pub fn from_row(id: i64) -> Self {
        Self(id)
    }

    /// The id as a number.
    pub fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn commit_shas_must_be_forty_hex_digits() {
        let valid = "B288DB9EF7427C7003A02530C22B46A385A3C251";
        assert_eq!(
            CommitSha::parse(valid).unwrap().as_str(),
            valid.to_ascii_lowercase()
        );
        assert_eq!(CommitSha::parse(valid).unwrap().short(), "b288db9ef742");
        for invalid in [
            "",
            "b288db9",
            "g288db9ef7427c7003a02530c22b46a385a3c251",
            " b288db9ef7427c7003a02530c22b46a385a3c25",
        ] {
            assert!(CommitSha::parse(invalid).is_err(), "{invalid:?}");
        }
    }

    #[test]
    fn repository_names_are_owner_slash_name() {
        for valid in ["rust-lang/regex", "a/b", "Owner_1/repo.rs"] {
            assert_eq!(RepositoryName::parse(valid).unwrap().as_str(), valid);
        }
        for invalid in [
            "",
            "regex",
            "/regex",
            "rust-lang/",
            "a/b/c",
            "a b/c",
            "../x",
            "a/..",
        ] {
            assert!(RepositoryName::parse(invalid).is_err(), "{invalid:?}");
        }
    }

    #[test]
    fn run_kinds_round_trip_and_unknown_ones_are_named() {
        for kind in [RunKind::Local, RunKind::Push, RunKind::Pr, RunKind::Nightly] {
            assert_eq!(kind.as_str().parse::<RunKind>().unwrap(), kind);
        }
        let error = "weekly".parse::<RunKind>().unwrap_err().to_string();
        assert!(
            error.contains("\"weekly\"") && error.contains("nightly"),
            "{error}"
        );
    }

    #[test]
    fn benchmark_ids_keep_every_printable_character() {
        for id in ["a b/c::d [e] (f)", "λ/Ünïcode", "x #2"] {
            assert_eq!(BenchmarkId::parse(id).unwrap().as_str(), id);
        }
        assert!(BenchmarkId::parse("").is_err());
        assert!(BenchmarkId::parse("a\nb").is_err());
    }

    #[test]
    fn throughput_round_trips_through_its_stored_parts() {
        let all = [
            Throughput::Bytes(1),
            Throughput::BytesDecimal(2),
            Throughput::Elements(3),
            Throughput::Bits(4),
            Throughput::ElementsAndBytes {
                elements: 5,
                bytes: 6,
            },
        ];
        for t in all {
            assert_eq!(
                Throughput::from_parts(t.kind(), t.amount(), t.secondary_bytes()),
                Some(t)
            );
        }
        assert_eq!(Throughput::from_parts("Furlongs", 1, None), None);
    }

    #[test]
    fn samples_divide_times_by_iterations() {
        let samples = Samples::new(vec![2.0, 4.0], vec![10.0, 30.0]).unwrap();
        assert_eq!(samples.per_iteration().collect::<Vec<_>>(), [5.0, 7.5]);
        assert_eq!(
            Samples::new(vec![0.0], vec![1.0]).unwrap_err().0,
            "iters[0]"
        );
        assert_eq!(
            Samples::new(vec![1.0], vec![f64::NAN]).unwrap_err().0,
            "times[0]"
        );
        assert_eq!(Samples::new(vec![], vec![]).unwrap_err().0, "iters");
    }

    #[test]
    fn run_ids_are_positive_integers() {
        assert_eq!(RunId::parse("17").unwrap().get(), 17);
        for invalid in ["0", "-1", "x", "", "1.5"] {
            assert!(RunId::parse(invalid).is_err(), "{invalid:?}");
        }
    }
}

/// What a run measured and why: with the fingerprint, (repository, commit, kind, attempt) form
/// the run's key; branch and pull request describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunMeta {
    /// The repository measured.
    pub repository: RepositoryName,
    /// The commit measured.
    pub commit: CommitSha,
    /// The branch, when known.
    pub branch: Option<String>,
    /// Why the run was made.
    pub kind: RunKind,
    /// The pull request, for `pr` runs.
    pub pr_number: Option<u64>,
    /// 1 for the first run under this key; CI re-runs count up.
    pub attempt: u32,
}
