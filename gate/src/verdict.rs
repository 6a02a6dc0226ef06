//! What a comparison concludes: each benchmark's verdict with its numbers, and the
//! comparison's. The decision engine (`decision.rs`) and the exact counts (`counts.rs`) both
//! produce them; the reports read them.

use crate::noise::NoiseSource;
use crate::policy::Policy;

/// How the baseline was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Base and head built and run in turn in the same job (A B, B A, ...).
    SameJobAb,
    /// A stored run of the base commit (or a near ancestor) on the same fingerprint.
    StoredBaseline,
}

/// A benchmark's verdict.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Slower by at least the limit, significantly.
    Regressed,
    /// The noise allows neither verdict.
    Inconclusive,
    /// Significantly slower, but under the limit.
    Warn,
    /// Significantly faster.
    Improved,
    /// A regression as large as the limit is excluded.
    Pass,
    /// Only in the head.
    New,
    /// Only in the base.
    Missing,
    /// On the ignore list.
    Ignored,
}

impl Verdict {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regressed => "regressed",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Warn => "warn",
            Verdict::Improved => "improved",
            Verdict::Pass => "pass",
            Verdict::New => "new",
            Verdict::Missing => "missing",
            Verdict::Ignored => "ignored",
        }
    }
}

/// The comparison's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Overall {
    /// No benchmark regressed and none was inconclusive.
    Pass,
    /// At least one benchmark regressed.
    Regressed,
    /// None regressed, but at least one could not be decided.
    Inconclusive,
    /// Nothing to compare against.
    NoBaseline,
}

impl Overall {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Overall::Pass => "pass",
            Overall::Regressed => "regressed",
            Overall::Inconclusive => "inconclusive",
            Overall::NoBaseline => "no-baseline",
        }
    }
}

/// What a benchmark is judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Time per iteration; lower is better.
    Time,
    /// Work per second; higher is better (judged through time, with the throughput limit).
    Throughput,
    /// A custom metric where lower is better (judged with the latency limit).
    Lower,
    /// A custom metric where higher is better (judged with the throughput limit).
    Higher,
}

impl Metric {
    /// Whether higher values are better: such metrics get the throughput limit.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Throughput | Metric::Higher)
    }
}

/// One benchmark's result.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkResult {
    /// The benchmark id.
    pub id: String,
    /// Time, throughput, or a custom metric.
    pub metric: Metric,
    /// A custom metric's unit (then `base_ns` and `head_ns` are values in it).
    pub unit: Option<String>,
    /// The verdict.
    pub verdict: Verdict,
    /// Base ns per iteration, the policy's statistic (geometric mean over the rounds kept).
    pub base_ns: Option<f64>,
    /// Head ns per iteration, the policy's statistic (geometric mean over the rounds kept).
    pub head_ns: Option<f64>,
    /// Work per iteration, for throughput benchmarks: the base's where the head's differs
    /// (then `head_ns` is the head's time at the base's work), else the head's, else the base's.
    pub throughput_per_iteration: Option<(&'static str, u64)>,
    /// The head's own work per iteration, where it differs from the base's: the comparison is
    /// per unit of work (a bigger input is not a slowdown).
    pub head_work: Option<u64>,
    /// The change as a ratio where above 1 is worse, `exp(d̂)`: head/base time, or base/head
    /// for a higher-is-better custom metric.
    pub ratio: Option<f64>,
    /// The limit as a time ratio (1.15 latency, 1.111 throughput by default).
    pub limit: f64,
    /// Relative half-width of the two-sided confidence band of the ratio.
    pub noise: Option<f64>,
    /// The confidence band of the ratio, (low, high).
    pub interval: Option<(f64, f64)>,
    /// One-sided p-value of "slower", before the multiplicity correction.
    pub p_slower: Option<f64>,
    /// Where the noise estimate came from.
    pub noise_source: Option<NoiseSource>,
    /// True when too little between-run information was available to trust the noise band.
    pub uncalibrated: bool,
    /// Rounds compared.
    pub rounds: usize,
    /// Rounds set aside as interfered (their change far from the benchmark's other rounds):
    /// `pass`, `warn`, the ratio and its band rest on the rest. See
    /// [`crate::noise::undisturbed`].
    pub set_aside: usize,
    /// A stored baseline's runs the base value is the median of: the base run and the base
    /// commit's newest runs before it at its level (see [`crate::noise::pooled_base`]); 1 for
    /// the base run alone, 0 where no base was compared.
    pub base_runs: usize,
    /// The bound the verdict was decided on, as ratios (one-sided where it is one-sided).
    pub bound: Option<DecisionBound>,
    /// The smallest change (a ratio, above 1 worse) that would read `regressed` at this noise
    /// and round count: the limit, or more where the noise demands it.
    pub detectable: Option<f64>,
    /// Set when even the plan's last look (or this one, with no more rounds coming) could not
    /// call a change as large as the limit `regressed`: the rounds it was judged at, and the
    /// change that would be detectable there.
    pub too_noisy: Option<TooNoisy>,
    /// Set on an adaptive comparison's `inconclusive` when more rounds, up to the plan's last,
    /// were unlikely to decide it (see [`crate::sequential::FUTILITY_POWER`]): the runner stops
    /// it there, as it stops a decided one.
    pub futile: bool,
    /// The reason from `benchgate.toml`'s `[[quarantine]]`: reported, never deciding.
    pub quarantined: Option<String>,
    /// A stored baseline's `pass` bound rests on the others' floor, which more head runs in
    /// the same job cannot narrow: its re-runs judge the `pass` once, at the first head run
    /// ([`crate::decision::HeadReruns`]). Not written to the summary.
    pub pass_on_floor: bool,
}

/// The confidence bound a verdict rests on: `upper` for `pass` and `inconclusive` (the
/// largest change not excluded), `lower` for `regressed` and `improved` (the change is at
/// least this), both for `warn`. Ratios where above 1 is worse.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionBound {
    /// The lower bound, when the verdict rests on one.
    pub lower: Option<f64>,
    /// The upper bound, when the verdict rests on one.
    pub upper: Option<f64>,
    /// The one-sided confidence of each bound at this look.
    pub confidence: f64,
}

/// A benchmark too noisy to gate within the rounds there are or can be.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TooNoisy {
    /// The rounds it was judged at.
    pub rounds: usize,
    /// The smallest change (ratio) that would read `regressed` there.
    pub detectable: f64,
}

/// The whole comparison's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The comparison's verdict.
    pub verdict: Overall,
    /// How the baseline was obtained.
    pub mode: Mode,
    /// Rounds compared.
    pub rounds: usize,
    /// Every benchmark, sorted by id.
    pub benchmarks: Vec<BenchmarkResult>,
    /// Every `[[budget]]`, judged on the head.
    pub budgets: Vec<crate::budget::BudgetResult>,
    /// Counts stored but not judged: events without a limit under `[instructions]`.
    pub unjudged: Vec<String>,
}

impl Decision {
    /// Budgets missed that are not `warn`: each fails the gate.
    pub fn missed_budgets(&self) -> usize {
        self.budgets
            .iter()
            .filter(|b| b.verdict == crate::budget::BudgetVerdict::Missed && !b.warn)
            .count()
    }

    /// Whether the gate fails: a regression or a missed budget (not under `--warn-only`).
    pub fn fails(&self, warn_only: bool) -> bool {
        !warn_only && (self.verdict == Overall::Regressed || self.missed_budgets() > 0)
    }

    /// How many benchmarks got `verdict`.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.benchmarks
            .iter()
            .filter(|b| b.verdict == verdict)
            .count()
    }

    /// The regressed benchmark with the largest slowdown, if any.
    pub fn worst_regression(&self) -> Option<&BenchmarkResult> {
        self.benchmarks
            .iter()
            .filter(|b| b.verdict == Verdict::Regressed)
            .max_by(|a, b| a.ratio.unwrap_or(1.0).total_cmp(&b.ratio.unwrap_or(1.0)))
    }
}

impl BenchmarkResult {
    /// A benchmark with `verdict` and nothing compared: no values, ratio or noise.
    pub(crate) fn uncompared(
        id: &str,
        metric: Metric,
        verdict: Verdict,
        limit: f64,
        policy: &Policy,
    ) -> Self {
        BenchmarkResult {
            id: id.to_owned(),
            metric,
            unit: None,
            verdict,
            base_ns: None,
            head_ns: None,
            throughput_per_iteration: None,
            head_work: None,
            ratio: None,
            limit,
            noise: None,
            interval: None,
            p_slower: None,
            noise_source: None,
            uncalibrated: false,
            rounds: 0,
            set_aside: 0,
            base_runs: 0,
            bound: None,
            detectable: None,
            too_noisy: None,
            futile: false,
            quarantined: policy.quarantine_reason(id).map(str::to_owned),
            pass_on_floor: false,
        }
    }

    /// A benchmark that was not measured because base and head built byte-identical
    /// executables and nothing else it could read changed: the same code on the same inputs,
    /// a pass with no change, decided without a round (or ignored, where the policy says so).
    pub fn same_executables(id: &str, policy: &Policy) -> Self {
        let limit = policy.log_limit(id, false).exp();
        if policy.is_ignored(id) {
            return Self::uncompared(id, Metric::Time, Verdict::Ignored, limit, policy);
        }
        BenchmarkResult {
            ratio: Some(1.0),
            interval: Some((1.0, 1.0)),
            noise_source: Some(NoiseSource::SameExecutables),
            ..Self::uncompared(id, Metric::Time, Verdict::Pass, limit, policy)
        }
    }
}

/// The comparison's verdict from its benchmarks' (quarantined ones never decide): regressed if
/// one is, no baseline if none was compared, inconclusive if one is, else pass.
pub fn overall(results: &[BenchmarkResult]) -> Overall {
    let deciding = || results.iter().filter(|r| r.quarantined.is_none());
    if deciding().any(|r| r.verdict == Verdict::Regressed) {
        Overall::Regressed
    } else if results.iter().all(|r| r.ratio.is_none()) {
        Overall::NoBaseline
    } else if deciding().any(|r| r.verdict == Verdict::Inconclusive) {
        Overall::Inconclusive
    } else {
        Overall::Pass
    }
}
