//! The few statistical functions the gate needs: Student's t distribution (through the
//! regularised incomplete beta function), medians and robust spreads. Pure and deterministic.

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; ~1e-15 relative accuracy).
fn ln_gamma(x: f64) -> f64 {
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEFFICIENTS[0];
    for (i, c) in COEFFICIENTS.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let even = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + even * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + even / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + odd * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + odd / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularised incomplete beta function I_x(a, b).
fn regularized_incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_continued_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_continued_fraction(b, a, 1.0 - x) / b
    }
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom; `df = ∞` gives the normal distribution.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    if df.is_infinite() {
        return normal_cdf(t);
    }
    let tail = 0.5 * regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The upper tail `P(F > f)` of Snedecor's F with `d1` and `d2` degrees of freedom.
pub fn f_upper_tail(f: f64, d1: f64, d2: f64) -> f64 {
    if f <= 0.0 {
        return 1.0;
    }
    regularized_incomplete_beta(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f))
}

/// The standard normal CDF, accurate deep into the tails.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// The complementary error function, as erfc(x) = Q(1/2, x²) for x ≥ 0: short polynomial fits
/// lose the relative accuracy that multiplicity-corrected tail probabilities need.
fn erfc(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    upper_incomplete_gamma_regularized(0.5, x * x)
}

/// Q(a, x) = Γ(a, x)/Γ(a).
fn upper_incomplete_gamma_regularized(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let ln_front = -x + a * x.ln() - ln_gamma(a);
    if x < a + 1.0 {
        // Series for P, then Q = 1 − P.
        let mut sum = 1.0 / a;
        let mut term = sum;
        let mut n = a;
        for _ in 0..500 {
            n += 1.0;
            term *= x / n;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        1.0 - sum * ln_front.exp()
    } else {
        // Continued fraction for Q (modified Lentz).
        const TINY: f64 = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..500 {
            let i = f64::from(i);
            let an = -i * (i - a);
            b += 2.0;
            d = an * d + b;
            d = if d.abs() < TINY { TINY } else { d };
            c = b + an / c;
            c = if c.abs() < TINY { TINY } else { c };
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        ln_front.exp() * h
    }
}

/// The `p` quantile of the standard normal distribution, for 0 < p < 1: Acklam's rational
/// approximation (relative error 1.15e-9) refined by one Newton step on [`normal_cdf`].
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let x = if p < 0.024_25 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.024_25 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    // One Newton step: x − (Φ(x) − p) / φ(x).
    let density = (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
    x - (normal_cdf(x) - p) / density
}

/// The `p` quantile of Student's t with `df` degrees of freedom (bisection on [`t_cdf`]; closed
/// form for the normal).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if df.is_infinite() {
        return normal_quantile(p);
    }
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let (mut low, mut high) = (0.0, 1.0);
    while t_cdf(high, df) < p {
        high *= 2.0;
        if high > 1e12 {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if t_cdf(mid, df) < p {
            low = mid;
        } else {
            high = mid;
        }
        if high - low < 1e-12 * high.max(1.0) {
            break;
        }
    }
    0.5 * (low + high)
}

/// The median of `values` (which it reorders: selection, not a sort; the change-point detector
/// takes thousands of them); NaN for none.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let (n, mid) = (values.len(), values.len() / 2);
    let (below, upper, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        upper
    } else {
        // The largest of the lower half.
        0.5 * (below.iter().copied().fold(f64::NEG_INFINITY, f64::max) + upper)
    }
}

/// The mean of `values`; NaN for none.
pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The sample variance (n − 1 denominator); NaN for fewer than two values.
pub fn variance(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return f64::NAN;
    }
    let m = mean(values);
    values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (values.len() - 1) as f64
}

/// A robust per-run standard deviation of a series from its successive differences:
/// `1.4826 · MAD(Δx) / √2`. A real step moves one difference, not the estimate.
pub fn successive_difference_sigma(series: &[f64]) -> f64 {
    if series.len() < 3 {
        return f64::NAN;
    }
    1.4826 * median(&mut difference_deviations(series)) / std::f64::consts::SQRT_2
}

/// How far each successive difference of `series` sits from their median.
fn difference_deviations(series: &[f64]) -> Vec<f64> {
    let differences: Vec<f64> = series.windows(2).map(|w| w[1] - w[0]).collect();
    let centre = median(&mut differences.clone());
    differences.iter().map(|d| (d - centre).abs()).collect()
}

/// The clean runs' [`successive_difference_sigma`] of a series of `ln` times, where
/// interference only adds time: runs more than `cut` standard deviations (and at least
/// `smallest_jump`) above the second fastest of their neighbours and themselves (`half_window`
/// runs either side) are set aside, and the spread is taken
/// again over the runs left, until the runs set aside no longer change. A benchmark that
/// alternates between its clean level and one a neighbour slowed has successive differences
/// mostly as large as the gap, which say nothing of how far its clean runs scatter.
///
/// The first cut reads the spread from the lower quartile of the successive differences'
/// deviations (`0.4506 · σ` for normal noise), which stays among the clean pairs while up to
/// about two thirds of the differences are jumps; their median does not. The series' own
/// [`successive_difference_sigma`] when fewer than half its runs are left: no clean level to
/// read.
pub fn clean_runs_sigma(series: &[f64], cut: f64, smallest_jump: f64, half_window: usize) -> f64 {
    let plain = successive_difference_sigma(series);
    if !plain.is_finite() {
        return plain;
    }
    let mut deviations = difference_deviations(series);
    deviations.sort_by(f64::total_cmp);
    let lower_quartile = deviations[(deviations.len() - 1) / 4];
    // P(|Δ| ≤ x) = 1/4 for Δ ~ N(0, 2σ²): x = 0.3186 · √2 · σ.
    let mut sigma = plain.min(lower_quartile / 0.4506);
    let mut kept_before: Vec<bool> = Vec::new();
    for _ in 0..8 {
        let kept: Vec<bool> = (0..series.len())
            .map(|i| {
                let from = i.saturating_sub(half_window);
                let to = (i + half_window + 1).min(series.len());
                let floor = second_fastest(&series[from..to]);
                series[i] <= floor + (cut * sigma).max(smallest_jump)
            })
            .collect();
        if kept == kept_before {
            break;
        }
        let clean: Vec<f64> = series
            .iter()
            .zip(&kept)
            .filter(|(_, k)| **k)
            .map(|(v, _)| *v)
            .collect();
        if clean.len() * 2 < series.len() {
            return plain;
        }
        sigma = successive_difference_sigma(&clean);
        if !sigma.is_finite() {
            return plain;
        }
        kept_before = kept;
    }
    sigma
}

/// The second smallest of `values` (the smallest of one): a run in a faster mode of its own is
/// no floor its neighbours sit above.
pub fn second_fastest(values: &[f64]) -> f64 {
    let (mut first, mut second) = (f64::INFINITY, f64::INFINITY);
    for &v in values {
        if v < first {
            second = first;
            first = v;
        } else if v < second {
            second = v;
        }
    }
    if second.is_finite() { second } else { first }
}

/// A per-run standard deviation that respects heavy tails: the larger of the robust
/// [`successive_difference_sigma`] and a range-based estimate, the largest successive difference
/// (from their median) divided by the median of the largest of n half-normal draws, over √2.
/// Gaussian noise gives about the same from both; a benchmark that sometimes jumps between two
/// levels (allocator or hash-seed states) gets the band its jumps call for, where the MAD alone
/// would ignore them and cry wolf on the next jump.
pub fn tail_aware_sigma(series: &[f64]) -> f64 {
    let robust = successive_difference_sigma(series);
    if !robust.is_finite() {
        return robust;
    }
    let deviations = difference_deviations(series);
    let largest = deviations.iter().copied().fold(0.0, f64::max);
    let n = deviations.len() as f64;
    // P(max of n half-normals ≤ x) = (2Φ(x) − 1)^n = 1/2.
    let median_of_max = normal_quantile((1.0 + 0.5f64.powf(1.0 / n)) / 2.0);
    robust.max(largest / median_of_max / std::f64::consts::SQRT_2)
}

/// The digamma function ψ(x), x > 0 (recurrence to x ≥ 6, then the asymptotic series).
pub fn digamma(mut x: f64) -> f64 {
    let mut result = 0.0;
    while x < 10.0 {
        result -= 1.0 / x;
        x += 1.0;
    }
    let r = 1.0 / (x * x);
    result + x.ln() - 0.5 / x - r * (1.0 / 12.0 - r * (1.0 / 120.0 - r / 252.0))
}

/// The trigamma function ψ′(x), x > 0.
pub fn trigamma(mut x: f64) -> f64 {
    let mut result = 0.0;
    while x < 10.0 {
        result += 1.0 / (x * x);
        x += 1.0;
    }
    let r = 1.0 / (x * x);
    result
        + 1.0 / x
        + r / 2.0
        + r / x * (1.0 / 6.0 - r * (1.0 / 30.0 - r * (1.0 / 42.0 - r / 30.0)))
}

/// ψ″(x), x > 0: the derivative Newton's method needs for [`inverse_trigamma`].
fn tetragamma(mut x: f64) -> f64 {
    let mut result = 0.0;
    while x < 10.0 {
        result -= 2.0 / (x * x * x);
        x += 1.0;
    }
    let r = 1.0 / (x * x);
    result - r * (1.0 + 1.0 / x + r * (0.5 - r * (1.0 / 6.0 - r * (1.0 / 6.0 - r * 0.3))))
}

/// The x > 0 with ψ′(x) = y, y > 0 (Smyth's Newton iteration, as in limma).
pub fn inverse_trigamma(y: f64) -> f64 {
    if y > 1e7 {
        return 1.0 / y.sqrt();
    }
    if y < 1e-6 {
        return 1.0 / y;
    }
    let mut x = 0.5 + 1.0 / y;
    for _ in 0..50 {
        let tri = trigamma(x);
        let step = tri * (1.0 - tri / y) / tetragamma(x);
        x += step;
        if -step / x < 1e-8 {
            break;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * b.abs().max(1e-300)
    }

    #[test]
    fn polygamma_functions_match_published_values() {
        // ψ(1) = −γ, ψ(1/2) = −γ − 2 ln 2, ψ′(1) = π²/6, ψ′(1/2) = π²/2.
        let gamma = 0.577_215_664_901_532_9;
        assert!(close(-digamma(1.0), gamma, 1e-10));
        assert!(close(-digamma(0.5), gamma + 2.0 * 2f64.ln(), 1e-10));
        let pi2 = std::f64::consts::PI.powi(2);
        assert!(close(trigamma(1.0), pi2 / 6.0, 1e-10));
        assert!(close(trigamma(0.5), pi2 / 2.0, 1e-10));
        assert!(close(trigamma(10.0), 0.105_166_335_681_685_1, 1e-10));
        // ψ″(1) = −2ζ(3).
        assert!(close(-tetragamma(1.0), 2.0 * 1.202_056_903_159_594, 1e-9));
        for x in [0.05, 0.5, 1.0, 3.7, 40.0, 2000.0] {
            assert!(close(inverse_trigamma(trigamma(x)), x, 1e-6), "{x}");
        }
    }

    #[test]
    fn t_quantiles_match_published_tables() {
        // (p, df, quantile) from standard t tables.
        let table = [
            (0.95, 1.0, 6.313_751_5),
            (0.975, 2.0, 4.302_652_7),
            (0.95, 2.0, 2.919_986_0),
            (0.999, 5.0, 5.893_430_6),
            (0.975, 10.0, 2.228_138_9),
            (0.95, 30.0, 1.697_260_9),
            (0.975, f64::INFINITY, 1.959_964_0),
            (0.9995, f64::INFINITY, 3.290_526_7),
        ];
        for (p, df, expected) in table {
            let q = t_quantile(p, df);
            assert!(
                close(q, expected, 1e-6),
                "t_quantile({p}, {df}) = {q}, expected {expected}"
            );
        }
    }

    #[test]
    fn normal_quantiles_match_tables_and_invert_the_cdf() {
        for (p, expected) in [
            (0.5, 0.0),
            (0.975, 1.959_963_984_5),
            (0.9995, 3.290_526_731_5),
            (1e-6, -4.753_424_308_8),
            (0.05, -1.644_853_626_9),
        ] {
            let q = normal_quantile(p);
            assert!(
                (q - expected).abs() < 1e-9,
                "normal_quantile({p}) = {q}, expected {expected}"
            );
        }
        for p in [1e-9, 0.01, 0.3, 0.7, 0.99, 1.0 - 1e-9] {
            assert!(
                (normal_cdf(normal_quantile(p)) - p).abs() < 1e-12 * p.max(1e-3),
                "{p}"
            );
        }
    }

    #[test]
    fn t_cdf_is_symmetric_and_reaches_deep_tails() {
        assert!(close(t_cdf(0.0, 3.0), 0.5, 1e-12));
        assert!(close(t_cdf(-2.0, 7.0) + t_cdf(2.0, 7.0), 1.0, 1e-12));
        // P(Z > 6) = 9.865876e-10.
        assert!(close(1.0 - normal_cdf(6.0), 9.865_876e-10, 1e-3));
        assert!(close(normal_cdf(-6.0), 9.865_876_45e-10, 1e-6));
    }

    /// Gaussian noise with σ = 0.01 from a fixed xorshift stream (Box–Muller).
    fn gaussian_series(n: usize) -> Vec<f64> {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                0.01 * (-2.0 * uniform().ln()).sqrt()
                    * (2.0 * std::f64::consts::PI * uniform()).cos()
            })
            .collect()
    }

    #[test]
    fn robust_sigma_recovers_the_noise_and_ignores_one_step() {
        let mut series = gaussian_series(400);
        let before = successive_difference_sigma(&series);
        assert!((before - 0.01).abs() < 0.0015, "σ estimate {before}");
        for value in series.iter_mut().skip(200) {
            *value += 0.5;
        }
        let after = successive_difference_sigma(&series);
        assert!((after - before).abs() < 0.05 * before, "{before} → {after}");
    }

    #[test]
    fn tail_aware_sigma_agrees_on_gaussian_noise_and_widens_for_jumps() {
        let series = gaussian_series(30);
        let robust = successive_difference_sigma(&series);
        let tail = tail_aware_sigma(&series);
        assert!(tail >= robust && tail < 1.6 * robust, "{robust} vs {tail}");
        // The shape of HashMap::insert/100 in tests/fixtures/recordings/idle: mostly flat,
        // sometimes 13–18% higher for one run.
        let mut jumpy: Vec<f64> = series.iter().map(|x| x * 0.3).collect();
        for i in [1, 9, 19, 21] {
            jumpy[i] += 0.17;
        }
        let robust = successive_difference_sigma(&jumpy);
        let tail = tail_aware_sigma(&jumpy);
        assert!(robust < 0.03, "the MAD ignores the jumps: {robust}");
        assert!(tail > 0.05, "the tail-aware estimate does not: {tail}");
    }

    #[test]
    fn clean_runs_sigma_sets_aside_the_runs_a_neighbour_slowed_and_nothing_else() {
        let series = gaussian_series(60);
        let robust = successive_difference_sigma(&series);
        let clean = clean_runs_sigma(&series, 3.0, 0.05, 3);
        assert!(
            clean <= robust && clean > 0.9 * robust,
            "{robust} vs {clean}"
        );
        // A step the code took stays: the runs after it are clean beside each other.
        let stepped: Vec<f64> = series
            .iter()
            .enumerate()
            .map(|(i, x)| x + if i >= 30 { 0.3 } else { 0.0 })
            .collect();
        let after_step = clean_runs_sigma(&stepped, 3.0, 0.05, 3);
        assert!(
            (after_step - clean).abs() < 0.2 * clean,
            "{clean} → {after_step}"
        );
        // Every third run 40–60% slower: the successive differences are mostly the gap.
        let often_slowed: Vec<f64> = series
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x + if i % 3 == 1 {
                    0.4 + 0.01 * (i % 20) as f64
                } else {
                    0.0
                }
            })
            .collect();
        let robust = successive_difference_sigma(&often_slowed);
        let clean = clean_runs_sigma(&often_slowed, 3.0, 0.05, 3);
        assert!(robust > 0.2, "{robust}");
        assert!((clean - 0.01).abs() < 0.003, "{clean}");
        // Slowed more often than not: no clean level to read, the plain spread stands.
        let mostly_slowed: Vec<f64> = series
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x + if i % 3 != 0 {
                    0.4 * (i % 2) as f64 + 0.2
                } else {
                    0.0
                }
            })
            .collect();
        assert_eq!(
            clean_runs_sigma(&mostly_slowed, 3.0, 0.05, 3),
            successive_difference_sigma(&mostly_slowed)
        );
    }

    #[test]
    fn the_f_tail_matches_published_quantiles() {
        // F(1, 10) 0.99 quantile 10.04; F(2, 60) 0.99 quantile 4.98; F(4, 4) 0.95 quantile 6.39.
        assert!((f_upper_tail(10.044, 1.0, 10.0) - 0.01).abs() < 2e-4);
        assert!((f_upper_tail(4.977, 2.0, 60.0) - 0.01).abs() < 2e-4);
        assert!((f_upper_tail(6.388, 4.0, 4.0) - 0.05).abs() < 2e-4);
        assert_eq!(f_upper_tail(0.0, 3.0, 3.0), 1.0);
    }

    #[test]
    fn medians_and_variances() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&mut [5.0, 1.0, 9.0, 3.0, 7.0, 2.0]), 4.0);
        assert_eq!(median(&mut [2.0, 2.0, 1.0, 2.0]), 2.0);
        assert!(median(&mut []).is_nan());
        assert!(close(
            variance(&[1.0, 2.0, 3.0, 4.0]),
            1.666_666_666_666_7,
            1e-12
        ));
        assert!(variance(&[1.0]).is_nan());
    }
}
