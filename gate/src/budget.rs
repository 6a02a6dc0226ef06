//! Budgets: absolute and cross-benchmark acceptance criteria (`[[budget]]` in `benchgate.toml`),
//! judged with the statistic's confidence interval: `met` when the whole interval satisfies the
//! bound, `missed` when none of it does, `unclear` when the bound lies inside it. Pure.

use benchgate_core::{Measurement, Throughput};

use crate::glob::Glob;

/// What a budget measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetStatistic {
    /// The median time per iteration.
    Median,
    /// The mean time per iteration.
    Mean,
    /// The 95th percentile of the per-iteration sample times.
    P95,
    /// The 99th percentile.
    P99,
    /// Work per second at the median time (the benchmark must declare a throughput).
    Throughput,
}

impl BudgetStatistic {
    /// `median`, `mean`, `p95`, `p99` or `throughput`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "median" => Self::Median,
            "mean" => Self::Mean,
            "p95" => Self::P95,
            "p99" => Self::P99,
            "throughput" => Self::Throughput,
            _ => return None,
        })
    }

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Median => "median",
            Self::Mean => "mean",
            Self::P95 => "p95",
            Self::P99 => "p99",
            Self::Throughput => "throughput",
        }
    }
}

/// What a value is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    /// Nanoseconds.
    Time,
    /// Bytes per second.
    Bytes,
    /// Elements per second.
    Elements,
    /// Bytes (a size: memory, a binary), for custom metrics.
    Size,
    /// A custom metric's own unit (`%`, `conn/s`, ...), compared by name.
    Custom,
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Less,
    /// `<=`
    AtMost,
    /// `>`
    Greater,
    /// `>=`
    AtLeast,
}

impl Op {
    /// Where `value` stands against `bound`.
    fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Op::Less => value < bound,
            Op::AtMost => value <= bound,
            Op::Greater => value > bound,
            Op::AtLeast => value >= bound,
        }
    }
}

/// A budget's bound.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    /// `< 50 ms`, `>= 2 GiB/s`: a value in the dimension's base unit (ns, B/s, elem/s).
    Absolute {
        /// The comparison.
        op: Op,
        /// The bound, in the base unit.
        value: f64,
        /// Its dimension.
        dimension: Dimension,
        /// The base unit's name (`ns`, `B/s`, `elem/s`, `B`), or a custom unit as written.
        unit: String,
    },
    /// `<= 1.1 x "tcp/rr"`: the statistic's ratio to another benchmark's.
    Ratio {
        /// The comparison.
        op: Op,
        /// The factor.
        factor: f64,
        /// The other benchmark.
        other: String,
    },
    /// `within 10% of "tcp/rr"`: the ratio within 1 ± fraction.
    Within {
        /// The tolerance, as a fraction.
        fraction: f64,
        /// The other benchmark.
        other: String,
    },
}

/// One `[[budget]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// The benchmarks it applies to (an exact id or a glob).
    pub benchmark: Glob,
    /// The pattern as written.
    pub pattern: String,
    /// The statistic.
    pub statistic: BudgetStatistic,
    /// The bound.
    pub bound: Bound,
    /// The bound as written.
    pub expression: String,
    /// A missed `warn` budget does not fail the gate.
    pub warn: bool,
}

/// ns per unit, for time units.
fn time_unit(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1.0,
        "µs" | "μs" | "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    })
}

/// (dimension, base units per unit), for rates.
fn rate_unit(unit: &str) -> Option<(Dimension, f64)> {
    Some(match unit {
        "B/s" => (Dimension::Bytes, 1.0),
        "KB/s" => (Dimension::Bytes, 1e3),
        "MB/s" => (Dimension::Bytes, 1e6),
        "GB/s" => (Dimension::Bytes, 1e9),
        "KiB/s" => (Dimension::Bytes, 1024.0),
        "MiB/s" => (Dimension::Bytes, 1024.0 * 1024.0),
        "GiB/s" => (Dimension::Bytes, 1024.0 * 1024.0 * 1024.0),
        "bit/s" => (Dimension::Bytes, 1.0 / 8.0),
        "Kbps" => (Dimension::Bytes, 1e3 / 8.0),
        "Mbps" => (Dimension::Bytes, 1e6 / 8.0),
        "Gbps" => (Dimension::Bytes, 1e9 / 8.0),
        "elem/s" => (Dimension::Elements, 1.0),
        _ => return None,
    })
}

/// Bytes per unit, for sizes.
fn size_unit(unit: &str) -> Option<f64> {
    Some(match unit {
        "B" => 1.0,
        "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// A custom metric's own unit a bound may name: `%`, or a count per second (`conn/s`,
/// `req/s`, `ops/s`). Anything else is refused, so a misspelt time or rate is caught.
fn custom_unit(unit: &str) -> bool {
    unit == "%"
        || unit.strip_suffix("/s").is_some_and(|what| {
            (1..=16).contains(&what.len()) && what.chars().all(|c| c.is_ascii_alphabetic())
        })
}

/// (dimension, base units per unit, base unit name) of a unit, for bounds and custom metrics.
fn dimension_of(unit: &str) -> Option<(Dimension, f64, String)> {
    if let Some(scale) = time_unit(unit) {
        return Some((Dimension::Time, scale, "ns".to_owned()));
    }
    if let Some((dimension, scale)) = rate_unit(unit) {
        return Some((dimension, scale, unit_of(dimension).to_owned()));
    }
    if let Some(scale) = size_unit(unit) {
        return Some((Dimension::Size, scale, "B".to_owned()));
    }
    custom_unit(unit).then(|| (Dimension::Custom, 1.0, unit.to_owned()))
}

fn parse_op(text: &str) -> Option<(Op, &str)> {
    for (symbol, op) in [
        ("<=", Op::AtMost),
        (">=", Op::AtLeast),
        ("<", Op::Less),
        (">", Op::Greater),
    ] {
        if let Some(rest) = text.strip_prefix(symbol) {
            return Some((op, rest.trim_start()));
        }
    }
    None
}

fn quoted(text: &str) -> Option<String> {
    let inner = text.trim().strip_prefix('"')?.strip_suffix('"')?;
    (!inner.is_empty() && !inner.contains('"')).then(|| inner.to_owned())
}

/// Parses a bound: `< 50 ms`, `>= 2 GiB/s`, `>= 8578 Mbps`, `within 10% of "tcp/rr"`,
/// `<= 1.1 x "tcp/rr"`. The error says what was expected.
pub fn parse_bound(text: &str) -> Result<Bound, String> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix("within ") {
        let (percent, other) = rest
            .split_once("% of ")
            .ok_or_else(|| format!("{text:?}: expected `within N% of \"benchmark\"`"))?;
        let percent: f64 = percent
            .trim()
            .parse()
            .map_err(|_| format!("{text:?}: {percent:?} is not a number"))?;
        if !(percent > 0.0 && percent < 100.0) {
            return Err(format!("{text:?}: the tolerance must lie in (0, 100)%"));
        }
        let other = quoted(other)
            .ok_or_else(|| format!("{text:?}: the other benchmark goes in double quotes"))?;
        return Ok(Bound::Within {
            fraction: percent / 100.0,
            other,
        });
    }
    let (op, rest) = parse_op(text).ok_or_else(|| {
        format!("{text:?}: expected `< 50 ms`, `>= 2 GiB/s`, `<= 1.1 x \"other\"` or `within 10% of \"other\"`")
    })?;
    if let Some((factor, other)) = rest.split_once(" x ") {
        let factor: f64 = factor
            .trim()
            .parse()
            .map_err(|_| format!("{text:?}: {factor:?} is not a number"))?;
        if !(factor.is_finite() && factor > 0.0) {
            return Err(format!("{text:?}: the factor must be positive"));
        }
        let other = quoted(other)
            .ok_or_else(|| format!("{text:?}: the other benchmark goes in double quotes"))?;
        return Ok(Bound::Ratio { op, factor, other });
    }
    let (number, unit) = rest
        .split_once(char::is_whitespace)
        .ok_or_else(|| format!("{text:?}: a number and a unit, e.g. `50 ms`"))?;
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?}: {number:?} is not a number"))?;
    if !(number.is_finite() && number >= 0.0) {
        return Err(format!(
            "{text:?}: the bound must be a finite, non-negative number"
        ));
    }
    let unit = unit.trim();
    if let Some((dimension, scale, unit)) = dimension_of(unit) {
        return Ok(Bound::Absolute {
            op,
            value: number * scale,
            dimension,
            unit,
        });
    }
    Err(format!(
        "{text:?}: unknown unit {unit:?}; times: ns, µs (us), ms, s; rates: B/s, KiB/s, MiB/s, GiB/s, KB/s, MB/s, GB/s, bit/s, Kbps, Mbps, Gbps, elem/s; for custom metrics also sizes (B, KB, MB, GB, KiB, MiB, GiB), % and counts per second (conn/s)"
    ))
}

/// A budget's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BudgetVerdict {
    /// The whole interval satisfies the bound.
    Met,
    /// None of the interval does (or the benchmark is missing).
    Missed,
    /// The bound lies inside the interval: the run cannot tell.
    Unclear,
}

/// One budget judged on one benchmark.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BudgetResult {
    /// The benchmark.
    pub benchmark: String,
    /// The statistic's name.
    pub statistic: String,
    /// The bound as written.
    pub expression: String,
    /// The value (ns, B/s, elem/s; or the ratio for relative bounds), if measured.
    pub value: Option<f64>,
    /// Its unit: `ns`, `B/s`, `elem/s` or `x` (a ratio).
    pub unit: String,
    /// The value's 95% interval.
    pub interval: Option<[f64; 2]>,
    /// The verdict.
    pub verdict: BudgetVerdict,
    /// A missed warn budget does not fail the gate.
    pub warn: bool,
    /// Why the verdict is what it is, when it is not plain.
    pub note: Option<String>,
}

/// The statistic of one benchmark over `rounds` (samples pooled) with its 95% interval and
/// dimension, or why it cannot be had.
fn statistic_of(
    rounds: &[&Measurement],
    statistic: BudgetStatistic,
) -> Result<(f64, f64, f64, Dimension, String), String> {
    if let Some(custom) = rounds.iter().find_map(|m| m.custom.as_ref()) {
        return custom_statistic_of(rounds, statistic, &custom.unit);
    }
    statistic_of_times(rounds, statistic).map(|(value, low, high, dimension)| {
        (value, low, high, dimension, unit_of(dimension).to_owned())
    })
}

/// A custom metric's statistic, in base units when its unit is a known one: a lone
/// observation's median and mean are the value with the interval the file gave.
fn custom_statistic_of(
    rounds: &[&Measurement],
    statistic: BudgetStatistic,
    unit: &str,
) -> Result<(f64, f64, f64, Dimension, String), String> {
    let (dimension, scale, base) =
        dimension_of(unit).unwrap_or_else(|| (Dimension::Custom, 1.0, unit.to_owned()));
    if statistic == BudgetStatistic::Throughput {
        return Err(format!(
            "a custom metric in {unit} has no throughput; use median, mean, p95 or p99"
        ));
    }
    // Rounds of one observation each (a value with the interval the file gave): the median of
    // their points, within the hull of their intervals.
    let lone = rounds.iter().all(|m| m.samples.len() == 1)
        && matches!(statistic, BudgetStatistic::Median | BudgetStatistic::Mean);
    let single = lone.then(|| {
        let estimates: Vec<_> = rounds
            .iter()
            .map(|m| {
                if statistic == BudgetStatistic::Mean {
                    m.mean
                } else {
                    m.median
                }
            })
            .collect();
        let mut points: Vec<f64> = estimates.iter().map(|e| e.point).collect();
        points.sort_by(f64::total_cmp);
        let middle = (points.len() - 1) as f64 / 2.0;
        let point = (points[middle.floor() as usize] + points[middle.ceil() as usize]) / 2.0;
        let low = estimates.iter().map(|e| e.lower).fold(point, f64::min);
        let high = estimates.iter().map(|e| e.upper).fold(point, f64::max);
        (point, low, high)
    });
    let (value, low, high) = match single {
        Some(estimate) => estimate,
        None => {
            let (value, low, high, _) = statistic_of_times(rounds, statistic)?;
            (value, low, high)
        }
    };
    Ok((value * scale, low * scale, high * scale, dimension, base))
}

fn statistic_of_times(
    rounds: &[&Measurement],
    statistic: BudgetStatistic,
) -> Result<(f64, f64, f64, Dimension), String> {
    let mut values: Vec<f64> = rounds
        .iter()
        .flat_map(|m| m.samples.per_iteration())
        .collect();
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return Err("no samples".into());
    }
    let quantile = |q: f64| -> Result<(f64, f64, f64), String> {
        let rank = q * (n - 1) as f64;
        let spread = 1.96 * (n as f64 * q * (1.0 - q)).sqrt();
        let (low, high) = ((rank - spread).floor(), (rank + spread).ceil());
        if low < 0.0 || high > (n - 1) as f64 {
            return Err(format!(
                "{n} samples are too few for an interval of the p{}",
                (q * 100.0).round()
            ));
        }
        let at = |r: f64| values[(r as usize).min(n - 1)];
        let below = rank.floor();
        let value = at(below) + (rank - below) * (at(below + 1.0) - at(below));
        Ok((value, at(low), at(high)))
    };
    match statistic {
        BudgetStatistic::Median => quantile(0.5).map(|(v, l, h)| (v, l, h, Dimension::Time)),
        BudgetStatistic::P95 => quantile(0.95).map(|(v, l, h)| (v, l, h, Dimension::Time)),
        BudgetStatistic::P99 => quantile(0.99).map(|(v, l, h)| (v, l, h, Dimension::Time)),
        BudgetStatistic::Mean => {
            if n < 2 {
                return Err("one sample gives no interval of the mean".into());
            }
            let mean = values.iter().sum::<f64>() / n as f64;
            let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let half =
                crate::stats::t_quantile(0.975, (n - 1) as f64) * (variance / n as f64).sqrt();
            Ok((mean, mean - half, mean + half, Dimension::Time))
        }
        BudgetStatistic::Throughput => {
            let throughput = rounds
                .iter()
                .find_map(|m| m.throughput)
                .ok_or("the benchmark declares no throughput")?;
            let (amount, dimension) = match throughput {
                Throughput::Bytes(b) | Throughput::BytesDecimal(b) => (b as f64, Dimension::Bytes),
                Throughput::Bits(b) => (b as f64 / 8.0, Dimension::Bytes),
                Throughput::Elements(e) => (e as f64, Dimension::Elements),
                Throughput::ElementsAndBytes { bytes, .. } => (bytes as f64, Dimension::Bytes),
            };
            let (time, low, high) = quantile(0.5)?;
            if low <= 0.0 {
                return Err("a zero time has no throughput".into());
            }
            // Faster is more: the interval's ends swap.
            Ok((
                amount / time * 1e9,
                amount / high * 1e9,
                amount / low * 1e9,
                dimension,
            ))
        }
    }
}

fn unit_of(dimension: Dimension) -> &'static str {
    match dimension {
        Dimension::Time => "ns",
        Dimension::Bytes => "B/s",
        Dimension::Elements => "elem/s",
        Dimension::Size => "B",
        Dimension::Custom => "its own unit",
    }
}

/// Met, missed or unclear: whether all, none or part of `[low, high]` satisfies `op bound`.
fn judge(op: Op, bound: f64, low: f64, high: f64) -> BudgetVerdict {
    match (op.holds(low, bound), op.holds(high, bound)) {
        (true, true) => BudgetVerdict::Met,
        (false, false) => BudgetVerdict::Missed,
        _ => BudgetVerdict::Unclear,
    }
}

/// Every budget on every benchmark it matches in the head `rounds`. A budget that matches no
/// benchmark is `missed`: an acceptance item never silently passes.
pub fn evaluate(budgets: &[Budget], rounds: &[Vec<Measurement>]) -> Vec<BudgetResult> {
    let of = |id: &str| -> Vec<&Measurement> {
        rounds
            .iter()
            .filter_map(|r| r.iter().find(|m| m.id.as_str() == id))
            .collect()
    };
    let mut ids: Vec<&str> = rounds.iter().flatten().map(|m| m.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut results = Vec::new();
    for budget in budgets {
        let matched: Vec<&str> = ids
            .iter()
            .copied()
            .filter(|id| budget.benchmark.matches(id))
            .collect();
        let base = |benchmark: &str| BudgetResult {
            benchmark: benchmark.to_owned(),
            statistic: budget.statistic.name().to_owned(),
            expression: budget.expression.clone(),
            value: None,
            unit: String::new(),
            interval: None,
            verdict: BudgetVerdict::Missed,
            warn: budget.warn,
            note: None,
        };
        if matched.is_empty() {
            results.push(BudgetResult {
                note: Some("no benchmark of this run matches".into()),
                ..base(&budget.pattern)
            });
            continue;
        }
        for id in matched {
            let mut result = base(id);
            let measured = statistic_of(&of(id), budget.statistic);
            let outcome: Result<(), String> = (|| {
                let (value, low, high, dimension, unit) = measured?;
                match &budget.bound {
                    Bound::Absolute {
                        op,
                        value: bound,
                        dimension: wanted,
                        unit: wanted_unit,
                    } => {
                        if *wanted != dimension || *wanted_unit != unit {
                            return Err(format!(
                                "the bound is in {wanted_unit} but {} is in {unit}",
                                budget.statistic.name(),
                            ));
                        }
                        result.value = Some(value);
                        result.unit = unit;
                        result.interval = Some([low, high]);
                        result.verdict = judge(*op, *bound, low, high);
                    }
                    Bound::Ratio { other, .. } | Bound::Within { other, .. } => {
                        let others = of(other);
                        if others.is_empty() {
                            return Err(format!("no benchmark \"{other}\" in this run"));
                        }
                        let (other_value, other_low, other_high, _, other_unit) =
                            statistic_of(&others, budget.statistic)
                                .map_err(|e| format!("\"{other}\": {e}"))?;
                        if other_unit != unit {
                            return Err(format!(
                                "{} is in {unit} but \"{other}\" is in {other_unit}",
                                budget.statistic.name()
                            ));
                        }
                        let ratio = value / other_value;
                        let (ratio_low, ratio_high) = (low / other_high, high / other_low);
                        result.value = Some(ratio);
                        result.unit = "x".to_owned();
                        result.interval = Some([ratio_low, ratio_high]);
                        result.verdict = match &budget.bound {
                            Bound::Ratio { op, factor, .. } => {
                                judge(*op, *factor, ratio_low, ratio_high)
                            }
                            Bound::Within { fraction, .. } => {
                                let inside =
                                    |r: f64| (1.0 - fraction..=1.0 + fraction).contains(&r);
                                if inside(ratio_low) && inside(ratio_high) {
                                    BudgetVerdict::Met
                                } else if ratio_high < 1.0 - fraction || ratio_low > 1.0 + fraction
                                {
                                    BudgetVerdict::Missed
                                } else {
                                    BudgetVerdict::Unclear
                                }
                            }
                            Bound::Absolute { .. } => BudgetVerdict::Unclear,
                        };
                    }
                }
                Ok(())
            })();
            if let Err(why) = outcome {
                result.verdict = BudgetVerdict::Unclear;
                result.note = Some(why);
            }
            results.push(result);
        }
    }
    results
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn absolute(text: &str) -> (Op, f64, Dimension) {
        match parse_bound(text).unwrap() {
            Bound::Absolute {
                op,
                value,
                dimension,
                ..
            } => (op, value, dimension),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn units_are_read_into_base_units() {
        assert_eq!(absolute("< 50 ms"), (Op::Less, 50e6, Dimension::Time));
        assert_eq!(absolute("<= 3 µs"), (Op::AtMost, 3000.0, Dimension::Time));
        assert_eq!(absolute("<= 3 us"), (Op::AtMost, 3000.0, Dimension::Time));
        assert_eq!(absolute("> 1.5 s").1, 1.5e9);
        assert_eq!(
            absolute(">= 2 GiB/s"),
            (Op::AtLeast, 2.0 * 1024f64.powi(3), Dimension::Bytes)
        );
        assert_eq!(absolute(">= 2 GB/s").1, 2e9);
        assert_eq!(absolute(">= 8578 Mbps").1, 8578e6 / 8.0);
        assert_eq!(absolute(">= 1 Gbps").1, 1e9 / 8.0);
        assert_eq!(absolute(">= 64 bit/s").1, 8.0);
        assert_eq!(absolute(">= 512 KiB/s").1, 512.0 * 1024.0);
        assert_eq!(
            absolute(">= 10 elem/s"),
            (Op::AtLeast, 10.0, Dimension::Elements)
        );
    }

    #[test]
    fn custom_metric_units_are_sizes_percentages_and_counts_per_second() {
        assert_eq!(
            absolute("< 200 MiB"),
            (Op::Less, 200.0 * 1024.0 * 1024.0, Dimension::Size)
        );
        assert_eq!(absolute("< 2 GB").1, 2e9);
        assert_eq!(
            absolute(">= 10000 conn/s"),
            (Op::AtLeast, 10000.0, Dimension::Custom)
        );
        assert_eq!(absolute("< 5 %").2, Dimension::Custom);
        for text in ["< 50 msec", ">= 2 GiB/sec", "< 3 conn per s", "< 1 a-b/s"] {
            assert!(
                parse_bound(text).unwrap_err().contains("unknown unit"),
                "{text}"
            );
        }
    }

    #[test]
    fn relative_bounds_name_the_other_benchmark() {
        assert_eq!(
            parse_bound("within 10% of \"tcp/rr\"").unwrap(),
            Bound::Within {
                fraction: 0.1,
                other: "tcp/rr".into()
            }
        );
        assert_eq!(
            parse_bound(">= 0.9 x \"tcp/throughput\"").unwrap(),
            Bound::Ratio {
                op: Op::AtLeast,
                factor: 0.9,
                other: "tcp/throughput".into()
            }
        );
    }

    #[test]
    fn bad_bounds_say_what_was_expected() {
        for (text, needle) in [
            ("< 50 minutes", "unknown unit \"minutes\""),
            ("< fast ms", "\"fast\" is not a number"),
            ("about 5 ms", "expected `< 50 ms`"),
            ("< 50", "a number and a unit"),
            ("within 150% of \"a\"", "(0, 100)%"),
            ("<= 1.1 x tcp", "double quotes"),
            ("<= -2 x \"a\"", "must be positive"),
        ] {
            let error = parse_bound(text).unwrap_err();
            assert!(error.contains(needle), "{text:?}: {error}");
        }
    }

    #[test]
    fn verdicts_follow_the_interval() {
        assert_eq!(judge(Op::Less, 10.0, 8.0, 9.0), BudgetVerdict::Met);
        assert_eq!(judge(Op::Less, 10.0, 9.0, 11.0), BudgetVerdict::Unclear);
        assert_eq!(judge(Op::Less, 10.0, 10.0, 11.0), BudgetVerdict::Missed);
        assert_eq!(judge(Op::AtLeast, 10.0, 10.0, 12.0), BudgetVerdict::Met);
    }
}
