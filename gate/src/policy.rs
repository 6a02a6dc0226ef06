//! The gate's policy: regression limits (global and per benchmark by glob), the ignore list and
//! the error rates, read from `benchgate.toml` and validated key by key.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
pub use crate::glob::Glob;

/// Which statistic of a round's per-iteration times is compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Statistic {
    /// The median (Criterion's own estimate and interval).
    Median,
    /// A quantile of the per-iteration sample times, 0 being the minimum. Interference on a
    /// shared machine only adds time, so low quantiles are often far steadier than the median.
    Quantile(f64),
}

impl Statistic {
    /// `median`, `min`, or `pNN` (0 < NN < 100).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "median" => Some(Statistic::Median),
            "min" => Some(Statistic::Quantile(0.0)),
            _ => {
                let percent: f64 = text.strip_prefix('p')?.parse().ok()?;
                (percent > 0.0 && percent < 100.0).then_some(Statistic::Quantile(percent / 100.0))
            }
        }
    }

    /// The name used in reports and `benchgate.toml`.
    pub fn name(self) -> String {
        match self {
            Statistic::Median => "median".to_owned(),
            Statistic::Quantile(0.0) => "min".to_owned(),
            Statistic::Quantile(q) => format!("p{}", (q * 100_000.0).round() / 1000.0),
        }
    }
}

/// Default latency limit: +15% time.
pub const DEFAULT_LATENCY_INCREASE: f64 = 0.15;
/// Default throughput limit: −10% throughput (a time ratio of 1/0.9).
pub const DEFAULT_THROUGHPUT_DROP: f64 = 0.10;

/// The configuration file an error is in: each error names it and the key at fault.
struct At<'a>(&'a Path);

impl At<'_> {
    fn error(&self, key: String, message: String) -> Error {
        Error::Config {
            path: self.0.to_owned(),
            key,
            message,
        }
    }
}

/// The file's shape. Every table rejects unknown keys, so a typo is an error, not a silent default.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    gate: GateSection,
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default, rename = "override")]
    overrides: Vec<OverrideSection>,
    #[serde(default)]
    budget: Vec<BudgetSection>,
    #[serde(default)]
    quarantine: Vec<QuarantineSection>,
    #[serde(default)]
    instructions: Option<InstructionsSection>,
}

/// `[instructions]`: how exact counts (gungraun's) are judged.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InstructionsSection {
    decide: Option<bool>,
    instructions: Option<String>,
    estimated_cycles: Option<String>,
    l1_hits: Option<String>,
    ll_hits: Option<String>,
    ram_hits: Option<String>,
}

/// Default limit on instruction counts: +5%. Counts are exact (identical code: 0.0% on every
/// sample workload, with two CPU hogs running, and after unrelated code changes), so the limit
/// is about what matters, not noise; it leaves room for the artefacts a toolchain or allocator
/// change brings, which move counts a little.
pub const DEFAULT_INSTRUCTIONS_INCREASE: f64 = 0.05;

/// How exact counts are judged (`[instructions]`): a limit per event, and whether their
/// verdicts decide the gate.
#[derive(Debug, Clone, PartialEq)]
pub struct CountPolicy {
    /// Whether a count regression fails the gate (`false`: it is reported and informs).
    pub decide: bool,
    /// (event, largest tolerated increase as a fraction); events not listed are reported only.
    pub limits: Vec<(&'static str, f64)>,
}

impl Default for CountPolicy {
    fn default() -> Self {
        Self {
            decide: true,
            limits: vec![(
                benchgate_core::counts::INSTRUCTIONS,
                DEFAULT_INSTRUCTIONS_INCREASE,
            )],
        }
    }
}

impl CountPolicy {
    /// The event's limit as a fraction, if it is judged.
    pub fn limit(&self, event: &str) -> Option<f64> {
        self.limits
            .iter()
            .find(|(name, _)| *name == event)
            .map(|(_, limit)| *limit)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QuarantineSection {
    benchmarks: String,
    reason: String,
}

/// Benchmarks reported but never deciding the gate (`[[quarantine]]`), with why.
#[derive(Debug, Clone, PartialEq)]
pub struct Quarantine {
    /// Which benchmarks.
    pub benchmarks: Glob,
    /// Why they do not decide (shown beside each).
    pub reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BudgetSection {
    benchmark: String,
    statistic: Option<String>,
    bound: String,
    #[serde(default)]
    warn: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct GateSection {
    latency_increase: Option<String>,
    throughput_drop: Option<String>,
    min_change: Option<String>,
    confidence: Option<f64>,
    false_alarm_rate: Option<f64>,
    statistic: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OverrideSection {
    benchmarks: String,
    latency_increase: Option<String>,
    throughput_drop: Option<String>,
}

/// Limits for benchmarks whose id matches a pattern; unset limits keep the defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// Which benchmarks.
    pub benchmarks: Glob,
    /// Their latency limit, as a fraction (0.25 = +25% time).
    pub latency_increase: Option<f64>,
    /// Their throughput limit, as a fraction (0.2 = −20% throughput).
    pub throughput_drop: Option<f64>,
}

/// How the gate decides.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Largest tolerated time increase for latency benchmarks, as a fraction.
    pub latency_increase: f64,
    /// Largest tolerated throughput drop for throughput benchmarks, as a fraction.
    pub throughput_drop: f64,
    /// Smallest significant change reported as a warning or an improvement, as a fraction.
    pub min_change: f64,
    /// Confidence with which `pass` excludes a regression as large as the limit.
    pub confidence: f64,
    /// Family-wise rate of false `regressed` verdicts per comparison (Holm over benchmarks).
    pub false_alarm_rate: f64,
    /// Which statistic of each round's per-iteration times is compared.
    pub statistic: Statistic,
    /// Per-benchmark limits; the first matching pattern wins.
    pub overrides: Vec<Override>,
    /// Benchmarks never judged.
    pub ignore: Vec<Glob>,
    /// Acceptance criteria judged on the head (`[[budget]]`).
    pub budgets: Vec<crate::budget::Budget>,
    /// Benchmarks judged and reported, but never failing or holding up the gate.
    pub quarantine: Vec<Quarantine>,
    /// How exact counts (gungraun's instruction counts) are judged.
    pub counts: CountPolicy,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            latency_increase: DEFAULT_LATENCY_INCREASE,
            throughput_drop: DEFAULT_THROUGHPUT_DROP,
            min_change: 0.02,
            confidence: 0.95,
            false_alarm_rate: 0.05,
            // Chosen by the accuracy harness (tests/it/accuracy.rs): on real A/A recordings the
            // minimum per-iteration time is far steadier than the median, because interference
            // only ever adds time.
            statistic: Statistic::Quantile(0.0),
            overrides: Vec::new(),
            ignore: Vec::new(),
            budgets: Vec::new(),
            quarantine: Vec::new(),
            counts: CountPolicy::default(),
        }
    }
}

impl Policy {
    /// Reads `benchgate.toml` text; `path` names the file in errors.
    pub fn from_toml(text: &str, path: &Path) -> Result<Self> {
        let at = At(path);
        let deserializer = toml::Deserializer::parse(text)
            .map_err(|e| at.error(".".to_owned(), one_line(&e.to_string())))?;
        let file: ConfigFile = serde_path_to_error::deserialize(deserializer).map_err(|e| {
            let key = e.path().to_string();
            at.error(key, one_line(&e.into_inner().to_string()))
        })?;
        let mut policy = Policy::default();
        policy.apply_gate(&file.gate, &at)?;
        policy.ignore = file.ignore.iter().map(|p| Glob::new(p)).collect();
        policy.apply_budgets(&file.budget, &at)?;
        policy.apply_overrides(&file.overrides, &at)?;
        policy.apply_quarantine(&file.quarantine, &at)?;
        if let Some(section) = &file.instructions {
            policy.apply_instructions(section, &at)?;
        }
        Ok(policy)
    }

    /// `[gate]`: the limits and how sure a verdict must be.
    fn apply_gate(&mut self, gate: &GateSection, at: &At<'_>) -> Result<()> {
        if let Some(value) = &gate.latency_increase {
            self.latency_increase = percent(value, 0.0, 100.0)
                .map_err(|m| at.error("gate.latency_increase".into(), m))?;
        }
        if let Some(value) = &gate.throughput_drop {
            self.throughput_drop = percent(value, 0.0, 0.99)
                .map_err(|m| at.error("gate.throughput_drop".into(), m))?;
        }
        if let Some(value) = &gate.min_change {
            self.min_change =
                percent(value, 0.0, 1.0).map_err(|m| at.error("gate.min_change".into(), m))?;
        }
        if let Some(value) = gate.confidence {
            if !(0.5..1.0).contains(&value) {
                return Err(at.error(
                    "gate.confidence".into(),
                    format!("is {value}; expected a fraction in [0.5, 1), e.g. 0.95"),
                ));
            }
            self.confidence = value;
        }
        if let Some(value) = gate.false_alarm_rate {
            if !(value > 0.0 && value < 0.5) {
                return Err(at.error(
                    "gate.false_alarm_rate".into(),
                    format!("is {value}; expected a fraction in (0, 0.5), e.g. 0.05"),
                ));
            }
            self.false_alarm_rate = value;
        }
        if let Some(name) = &gate.statistic {
            self.statistic = Statistic::parse(name).ok_or_else(|| {
                at.error(
                    "gate.statistic".into(),
                    format!(
                        "is {name:?}; expected \"median\", \"min\" or a quantile such as \"p10\""
                    ),
                )
            })?;
        }
        Ok(())
    }

    /// `[[budget]]`: absolute bounds on a benchmark's statistic.
    fn apply_budgets(&mut self, sections: &[BudgetSection], at: &At<'_>) -> Result<()> {
        for (i, section) in sections.iter().enumerate() {
            let key = |name: &str| format!("budget[{i}].{name}");
            let statistic = match section.statistic.as_deref() {
                None => crate::budget::BudgetStatistic::Median,
                Some(name) => crate::budget::BudgetStatistic::parse(name).ok_or_else(|| {
                    at.error(
                        key("statistic"),
                        format!("is {name:?}; expected median, mean, p95, p99 or throughput"),
                    )
                })?,
            };
            let bound = crate::budget::parse_bound(&section.bound)
                .map_err(|m| at.error(key("bound"), m))?;
            if section.benchmark.trim().is_empty() {
                return Err(at.error(key("benchmark"), "is empty".into()));
            }
            self.budgets.push(crate::budget::Budget {
                benchmark: Glob::new(&section.benchmark),
                pattern: section.benchmark.clone(),
                statistic,
                bound,
                expression: section.bound.trim().to_owned(),
                warn: section.warn,
            });
        }
        Ok(())
    }

    /// `[[override]]`: other limits for some benchmarks.
    fn apply_overrides(&mut self, sections: &[OverrideSection], at: &At<'_>) -> Result<()> {
        for (i, section) in sections.iter().enumerate() {
            let key = |name: &str| format!("override[{i}].{name}");
            let latency_increase = section
                .latency_increase
                .as_deref()
                .map(|v| percent(v, 0.0, 100.0))
                .transpose()
                .map_err(|m| at.error(key("latency_increase"), m))?;
            let throughput_drop = section
                .throughput_drop
                .as_deref()
                .map(|v| percent(v, 0.0, 0.99))
                .transpose()
                .map_err(|m| at.error(key("throughput_drop"), m))?;
            if latency_increase.is_none() && throughput_drop.is_none() {
                return Err(at.error(
                    key("benchmarks"),
                    "an override needs latency_increase or throughput_drop".to_owned(),
                ));
            }
            self.overrides.push(Override {
                benchmarks: Glob::new(&section.benchmarks),
                latency_increase,
                throughput_drop,
            });
        }
        Ok(())
    }

    /// `[[quarantine]]`: benchmarks that may not decide the gate, and why.
    fn apply_quarantine(&mut self, sections: &[QuarantineSection], at: &At<'_>) -> Result<()> {
        for (i, section) in sections.iter().enumerate() {
            let key = |name: &str| format!("quarantine[{i}].{name}");
            if section.benchmarks.trim().is_empty() {
                return Err(at.error(key("benchmarks"), "is empty".into()));
            }
            if section.reason.trim().is_empty() {
                return Err(at.error(
                    key("reason"),
                    "is empty; say why these benchmarks may not decide the gate".into(),
                ));
            }
            self.quarantine.push(Quarantine {
                benchmarks: Glob::new(&section.benchmarks),
                reason: section.reason.trim().to_owned(),
            });
        }
        Ok(())
    }

    /// `[instructions]`: exact counts' limits and whether they decide.
    fn apply_instructions(&mut self, section: &InstructionsSection, at: &At<'_>) -> Result<()> {
        if let Some(decide) = section.decide {
            self.counts.decide = decide;
        }
        for (key, event, value) in [
            ("instructions", "instructions", &section.instructions),
            (
                "estimated_cycles",
                "estimated cycles",
                &section.estimated_cycles,
            ),
            ("l1_hits", "L1 hits", &section.l1_hits),
            ("ll_hits", "LL hits", &section.ll_hits),
            ("ram_hits", "RAM hits", &section.ram_hits),
        ] {
            let Some(value) = value else { continue };
            let limit = percent(value, 0.0, 100.0)
                .map_err(|m| at.error(format!("instructions.{key}"), m))?;
            self.counts.limits.retain(|(name, _)| *name != event);
            self.counts.limits.push((event, limit));
        }
        Ok(())
    }

    /// Why a benchmark is quarantined, if it is.
    pub fn quarantine_reason(&self, id: &str) -> Option<&str> {
        self.quarantine
            .iter()
            .find(|q| q.benchmarks.matches(id))
            .map(|q| q.reason.as_str())
    }

    /// Whether a benchmark is on the ignore list.
    pub fn is_ignored(&self, id: &str) -> bool {
        self.ignore.iter().any(|glob| glob.matches(id))
    }

    /// The limit for a benchmark as a log time ratio: `ln(1 + increase)` for latency,
    /// `ln(1 / (1 − drop))` for throughput.
    pub fn log_limit(&self, id: &str, is_throughput: bool) -> f64 {
        let matching = self.overrides.iter().find(|o| o.benchmarks.matches(id));
        if is_throughput {
            let drop = matching
                .and_then(|o| o.throughput_drop)
                .unwrap_or(self.throughput_drop);
            -(1.0 - drop).ln()
        } else {
            let increase = matching
                .and_then(|o| o.latency_increase)
                .unwrap_or(self.latency_increase);
            increase.ln_1p()
        }
    }
}

/// `"15%"` → 0.15, within (low, high] as fractions.
fn percent(value: &str, low: f64, high: f64) -> std::result::Result<f64, String> {
    let number = value
        .trim()
        .strip_suffix('%')
        .and_then(|n| n.trim().parse::<f64>().ok())
        .ok_or_else(|| format!("is {value:?}; expected a percentage such as \"15%\""))?;
    let fraction = number / 100.0;
    if fraction > low && fraction <= high && fraction.is_finite() {
        Ok(fraction)
    } else {
        Err(format!(
            "is {value:?}; expected more than {}% and at most {}%",
            low * 100.0,
            high * 100.0
        ))
    }
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn globs_match_whole_ids() {
        let cases = [
            ("parse/*", "parse/csv/16", true),
            ("parse/*", "parser/x", false),
            ("*/16", "parse/csv/16", true),
            ("a?c", "abc", true),
            ("a?c", "abbc", false),
            ("*", "", true),
            ("exact", "exact", true),
            ("exact", "exactly", false),
            ("*λ*", "naïve λ lookup", true),
        ];
        for (pattern, id, expected) in cases {
            assert_eq!(Glob::new(pattern).matches(id), expected, "{pattern} ~ {id}");
        }
    }

    #[test]
    fn a_full_config_reads_and_overrides_win_in_order() {
        let text = r#"
            ignore = ["flaky/*"]
            [gate]
            latency_increase = "20%"
            throughput_drop = "5%"
            min_change = "1%"
            confidence = 0.99
            false_alarm_rate = 0.01
            [[override]]
            benchmarks = "parse/*"
            latency_increase = "50%"
            [[override]]
            benchmarks = "*"
            throughput_drop = "25%"
        "#;
        let policy = Policy::from_toml(text, Path::new("benchgate.toml")).unwrap();
        assert!((policy.log_limit("parse/x", false) - 1.5f64.ln()).abs() < 1e-12);
        assert!((policy.log_limit("other", false) - 1.2f64.ln()).abs() < 1e-12);
        assert!(
            (policy.log_limit("parse/x", true) - (1.0f64 / 0.95).ln()).abs() < 1e-12,
            "parse/* sets no throughput limit"
        );
        assert!((policy.log_limit("other", true) - (1.0f64 / 0.75).ln()).abs() < 1e-12);
        assert!(policy.is_ignored("flaky/net") && !policy.is_ignored("parse/x"));
        assert_eq!(
            (
                policy.confidence,
                policy.false_alarm_rate,
                policy.min_change
            ),
            (0.99, 0.01, 0.01)
        );
    }

    #[test]
    fn defaults_are_fifteen_and_ten_percent() {
        let policy = Policy::from_toml("", Path::new("benchgate.toml")).unwrap();
        assert!((policy.log_limit("x", false) - 1.15f64.ln()).abs() < 1e-12);
        assert!((policy.log_limit("x", true) - (1.0f64 / 0.9).ln()).abs() < 1e-12);
    }

    #[test]
    fn bad_configs_name_the_key() {
        let cases = [
            (
                "[gate]\nlatency_increse = \"15%\"",
                "gate.latency_increse",
                "unknown field",
            ),
            (
                "[gate]\nlatency_increase = \"fifteen\"",
                "gate.latency_increase",
                "percentage",
            ),
            (
                "[gate]\nlatency_increase = 15",
                "gate.latency_increase",
                "string",
            ),
            (
                "[gate]\nthroughput_drop = \"100%\"",
                "gate.throughput_drop",
                "at most 99%",
            ),
            ("[gate]\nconfidence = 1.5", "gate.confidence", "[0.5, 1)"),
            (
                "[[override]]\nbenchmarks = \"x\"",
                "override[0].benchmarks",
                "needs",
            ),
            (
                "[[override]]\nlatency_increase = \"5%\"",
                "override[0]",
                "benchmarks",
            ),
            ("[gates]\n", "gates", "unknown field"),
            ("[gate\n", ".", "TOML"),
        ];
        for (text, key, message) in cases {
            let error = Policy::from_toml(text, Path::new("cfg/benchgate.toml"))
                .unwrap_err()
                .to_string();
            assert!(error.starts_with("cfg/benchgate.toml: `"), "{error}");
            assert!(
                error.contains(&format!("`{key}`")) || key == ".",
                "{key} not named in: {error}"
            );
            assert!(
                error.to_lowercase().contains(&message.to_lowercase()),
                "{message:?} not in: {error}"
            );
        }
    }
}
