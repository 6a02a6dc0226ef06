//! The decision table: small data-driven cases, each with the verdict a wrong rule would miss.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::collections::HashMap;

mod common;

use benchgate_collector::{Measurement, Throughput};
use benchgate_gate::Policy;
use benchgate_gate::decision::{Input, Mode, NoiseSource, Overall, Verdict, evaluate};
use benchgate_gate::noise::POOLED_BASE_RUNS;
use common::measurement;

/// Deterministic standard-normal noise (xorshift + Box–Muller).
struct Noise(u64);

impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        (-2.0 * self.uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * self.uniform()).cos()
    }
}

/// One benchmark in a synthetic comparison: its true slowdown and its between-round noise.
struct Case {
    id: &'static str,
    slowdown: f64,
    round_noise: f64,
    throughput: bool,
}

fn case(id: &'static str, slowdown: f64, round_noise: f64) -> Case {
    Case {
        id,
        slowdown,
        round_noise,
        throughput: false,
    }
}

/// Builds `rounds` A/B rounds; each side's median gets independent lognormal noise.
fn rounds(
    cases: &[Case],
    rounds: usize,
    seed: u64,
) -> (Vec<Vec<Measurement>>, Vec<Vec<Measurement>>) {
    let mut noise = Noise(seed);
    let (mut base, mut head) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (mut b, mut h) = (Vec::new(), Vec::new());
        for c in cases {
            let throughput = c.throughput.then_some(Throughput::Bytes(1024));
            let base_ns = 1000.0 * (c.round_noise * noise.normal()).exp();
            let head_ns = 1000.0 * (1.0 + c.slowdown) * (c.round_noise * noise.normal()).exp();
            b.push(measurement(c.id, base_ns, 0.005, throughput));
            h.push(measurement(c.id, head_ns, 0.005, throughput));
        }
        base.push(b);
        head.push(h);
    }
    (base, head)
}

fn decide(
    base: &[Vec<Measurement>],
    head: &[Vec<Measurement>],
    history: &HashMap<String, Vec<f64>>,
) -> benchgate_gate::decision::Decision {
    let mode = if base.len() > 1 {
        Mode::SameJobAb
    } else {
        Mode::StoredBaseline
    };
    evaluate(
        &Input {
            mode,
            base_rounds: base,
            head_rounds: head,
            history,
        },
        &Policy::default(),
    )
}

fn verdicts(decision: &benchgate_gate::decision::Decision) -> HashMap<&str, Verdict> {
    decision
        .benchmarks
        .iter()
        .map(|b| (b.id.as_str(), b.verdict))
        .collect()
}

/// Twelve quiet benchmarks: the company every test keeps, so the shared noise level is known.
fn quiet(n: usize) -> Vec<Case> {
    const IDS: [&str; 12] = [
        "q00", "q01", "q02", "q03", "q04", "q05", "q06", "q07", "q08", "q09", "q10", "q11",
    ];
    IDS[..n].iter().map(|id| case(id, 0.0, 0.01)).collect()
}

#[test]
fn identical_code_on_a_quiet_machine_passes_every_benchmark() {
    let (base, head) = rounds(&quiet(12), 3, 1);
    let decision = decide(&base, &head, &HashMap::new());
    assert_eq!(decision.verdict, Overall::Pass);
    assert!(
        decision
            .benchmarks
            .iter()
            .all(|b| b.verdict == Verdict::Pass),
        "{:?}",
        verdicts(&decision)
    );
    assert!(
        decision
            .benchmarks
            .iter()
            .all(|b| b.noise_source == Some(NoiseSource::Rounds) && !b.uncalibrated)
    );
}

#[test]
fn a_latency_slowdown_of_twenty_five_percent_fails_the_gate() {
    let mut cases = quiet(11);
    cases.push(case("slow", 0.25, 0.01));
    let (base, head) = rounds(&cases, 3, 2);
    let decision = decide(&base, &head, &HashMap::new());
    assert_eq!(decision.verdict, Overall::Regressed);
    assert_eq!(verdicts(&decision)["slow"], Verdict::Regressed);
    assert_eq!(decision.count(Verdict::Regressed), 1);
    let slow = decision.worst_regression().unwrap();
    assert_eq!(slow.id, "slow");
    assert!(
        (slow.ratio.unwrap() - 1.25).abs() < 0.03,
        "{:?}",
        slow.ratio
    );
    assert!((slow.limit - 1.15).abs() < 1e-12);
}

#[test]
fn twelve_percent_slower_fails_a_throughput_benchmark_but_only_warns_a_latency_one() {
    let mut cases = quiet(10);
    cases.push(Case {
        id: "throughput",
        slowdown: 0.12,
        round_noise: 0.005,
        throughput: true,
    });
    cases.push(case("latency", 0.12, 0.005));
    let (base, head) = rounds(&cases, 5, 3);
    let decision = decide(&base, &head, &HashMap::new());
    let v = verdicts(&decision);
    assert_eq!(v["throughput"], Verdict::Regressed);
    assert_eq!(v["latency"], Verdict::Warn);
    let throughput = decision
        .benchmarks
        .iter()
        .find(|b| b.id == "throughput")
        .unwrap();
    assert!((throughput.limit - 1.0 / 0.9).abs() < 1e-12);
}

#[test]
fn a_noisy_benchmark_that_cannot_exclude_the_limit_is_inconclusive_not_pass() {
    let mut cases = quiet(11);
    cases.push(case("noisy", 0.05, 0.25));
    let (base, head) = rounds(&cases, 3, 4);
    let decision = decide(&base, &head, &HashMap::new());
    assert_eq!(verdicts(&decision)["noisy"], Verdict::Inconclusive);
    assert_eq!(decision.verdict, Overall::Inconclusive);
    let noisy = decision
        .benchmarks
        .iter()
        .find(|b| b.id == "noisy")
        .unwrap();
    assert!(
        noisy.noise.unwrap() > 0.15,
        "the band is wide: {:?}",
        noisy.noise
    );
}

#[test]
fn a_significant_speedup_is_an_improvement() {
    let mut cases = quiet(11);
    cases.push(case("faster", -0.20, 0.01));
    let (base, head) = rounds(&cases, 3, 5);
    let decision = decide(&base, &head, &HashMap::new());
    assert_eq!(verdicts(&decision)["faster"], Verdict::Improved);
    assert_eq!(decision.verdict, Overall::Pass);
}

#[test]
fn new_missing_and_ignored_benchmarks_are_named_not_judged() {
    let (mut base, mut head) = rounds(&quiet(6), 2, 6);
    base[0].push(measurement("gone", 100.0, 0.01, None));
    base[1].push(measurement("gone", 100.0, 0.01, None));
    head[0].push(measurement("added", 100.0, 0.01, None));
    head[1].push(measurement("added", 100.0, 0.01, None));
    base[0].push(measurement("flaky/net", 100.0, 0.01, None));
    head[0].push(measurement("flaky/net", 900.0, 0.01, None));
    let history = HashMap::new();
    let policy = Policy::from_toml(
        "ignore = [\"flaky/*\"]",
        std::path::Path::new("benchgate.toml"),
    )
    .unwrap();
    let decision = evaluate(
        &Input {
            mode: Mode::SameJobAb,
            base_rounds: &base,
            head_rounds: &head,
            history: &history,
        },
        &policy,
    );
    let v = verdicts(&decision);
    assert_eq!(
        (v["gone"], v["added"], v["flaky/net"]),
        (Verdict::Missing, Verdict::New, Verdict::Ignored)
    );
    assert_eq!(decision.verdict, Overall::Pass);
}

#[test]
fn a_single_stored_run_without_history_never_passes_but_still_catches_a_large_slowdown() {
    let base = vec![vec![
        measurement("a", 1000.0, 0.01, None),
        measurement("b", 1000.0, 0.01, None),
    ]];
    let head = vec![vec![
        measurement("a", 1600.0, 0.01, None),
        measurement("b", 1010.0, 0.01, None),
    ]];
    let decision = decide(&base, &head, &HashMap::new());
    let v = verdicts(&decision);
    assert_eq!(
        (v["a"], v["b"]),
        (Verdict::Regressed, Verdict::Inconclusive)
    );
    assert!(
        decision
            .benchmarks
            .iter()
            .all(|b| b.uncalibrated && b.noise_source == Some(NoiseSource::Assumed))
    );
    assert_eq!(decision.verdict, Overall::Regressed);
}

/// Twenty runs of history for `b00`..`b11`, each at 1000 ns with 1% run-to-run noise.
fn calm_history(seed: u64) -> HashMap<String, Vec<f64>> {
    let mut noise = Noise(seed);
    (0..12)
        .map(|j| {
            (
                format!("b{j:02}"),
                (0..20)
                    .map(|_| 1000f64.ln() + 0.01 * noise.normal())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn a_single_pair_where_one_benchmark_jumps_among_calm_ones_fails_it_but_a_uniform_shift_does_not() {
    let history = calm_history(11);
    let base = vec![
        (0..12)
            .map(|j| measurement(&format!("b{j:02}"), 1000.0, 0.01, None))
            .collect::<Vec<_>>(),
    ];
    let one_slower = vec![
        (0..12)
            .map(|j| {
                measurement(
                    &format!("b{j:02}"),
                    if j == 3 { 1300.0 } else { 1002.0 },
                    0.01,
                    None,
                )
            })
            .collect::<Vec<_>>(),
    ];
    let decision = decide(&base, &one_slower, &history);
    assert_eq!(verdicts(&decision)["b03"], Verdict::Regressed);
    // Every benchmark 30% slower between two single runs looks like a slower machine.
    let all_slower = vec![
        (0..12)
            .map(|j| measurement(&format!("b{j:02}"), 1300.0, 0.01, None))
            .collect::<Vec<_>>(),
    ];
    let decision = decide(&base, &all_slower, &history);
    assert_eq!(decision.verdict, Overall::Inconclusive);
}

#[test]
fn a_stored_base_at_its_floor_passes_a_jumpy_benchmark_and_one_above_it_does_not() {
    // A benchmark whose runs sit within 0.5% of 1000 ns but jump 25% one run in six (a
    // neighbour, a hash seed): the tail-aware band is wide, the clean spread narrow.
    let mut noise = Noise(29);
    let jumpy: Vec<f64> = (0..20)
        .map(|i| 1000f64.ln() + 0.005 * noise.normal() + if i % 6 == 1 { 0.22 } else { 0.0 })
        .collect();
    // Five quiet companions, so the others' moves give their floor.
    let quiet_ids = ["q0", "q1", "q2", "q3", "q4", "q5"];
    let history: HashMap<String, Vec<f64>> = quiet_ids
        .iter()
        .map(|id| {
            let series = (0..20)
                .map(|_| 1000f64.ln() + 0.005 * noise.normal())
                .collect();
            ((*id).to_owned(), series)
        })
        .collect();
    let judge = |series: &[f64], base_ns: f64, head_ns: f64| {
        let mut jumpy_history = series.to_vec();
        jumpy_history.push(base_ns.ln());
        let mut history = history.clone();
        history.insert("jumpy".to_owned(), jumpy_history);
        let side = |ns: f64| {
            let mut run: Vec<Measurement> = quiet_ids
                .iter()
                .map(|id| measurement(id, 1000.0, 0.001, None))
                .collect();
            run.push(measurement("jumpy", ns, 0.001, None));
            vec![run]
        };
        result_of(&decide(&side(base_ns), &side(head_ns), &history), "jumpy")
    };
    // Base at its floor, head 2% slower: the head's jumps could only have raised it, and the
    // base hid nothing, so +15% is excluded.
    let at_floor = judge(&jumpy, 1000.0, 1020.0);
    assert_eq!(at_floor.verdict, Verdict::Pass, "{at_floor:?}");
    assert_eq!(at_floor.noise_source, Some(NoiseSource::History));
    assert!(
        at_floor.bound.unwrap().upper.unwrap() < 1.15,
        "{at_floor:?}"
    );
    // The same code 15% slower, with the base run interfered (+25%): the head reads 8% faster,
    // but the base sits 25% above its floor, so a slowdown at the limit is not excluded.
    let hidden = judge(&jumpy, 1250.0, 1150.0);
    assert_ne!(hidden.verdict, Verdict::Pass, "{hidden:?}");
    assert!(hidden.bound.unwrap().upper.unwrap() > 1.15, "{hidden:?}");
    // A floor older than the newest runs does not count: twenty runs at 800 ns, then a
    // slower commit merged and five runs at 1000. The base at 1000 is at its recent floor.
    let mut stepped: Vec<f64> = (0..20)
        .map(|_| 800f64.ln() + 0.005 * noise.normal())
        .collect();
    stepped.extend((0..5).map(|_| 1000f64.ln() + 0.005 * noise.normal()));
    let after_step = judge(&stepped, 1000.0, 1020.0);
    assert_eq!(after_step.verdict, Verdict::Pass, "{after_step:?}");
}

#[test]
fn history_on_the_fingerprint_calibrates_a_stored_baseline() {
    let mut noise = Noise(7);
    let noisy_history: Vec<f64> = (0..30)
        .map(|_| 1000f64.ln() + 0.10 * noise.normal())
        .collect();
    let quiet_history: Vec<f64> = (0..30)
        .map(|_| 1000f64.ln() + 0.005 * noise.normal())
        .collect();
    let history = HashMap::from([
        ("noisy".to_owned(), noisy_history),
        ("quiet".to_owned(), quiet_history),
    ]);
    let base = vec![vec![
        measurement("noisy", 1000.0, 0.01, None),
        measurement("quiet", 1000.0, 0.01, None),
    ]];
    let head = vec![vec![
        measurement("noisy", 1200.0, 0.01, None),
        measurement("quiet", 1200.0, 0.01, None),
    ]];
    let decision = decide(&base, &head, &history);
    let v = verdicts(&decision);
    assert_eq!(
        v["noisy"],
        Verdict::Inconclusive,
        "20% is within a 10%-per-run noise band"
    );
    assert_eq!(v["quiet"], Verdict::Regressed);
    assert!(
        decision
            .benchmarks
            .iter()
            .all(|b| b.noise_source == Some(NoiseSource::History) && !b.uncalibrated)
    );
}

#[test]
fn a_hundred_identical_benchmarks_on_a_noisy_machine_do_not_fail_by_chance() {
    const IDS: usize = 100;
    let names: Vec<String> = (0..IDS).map(|i| format!("bench/{i:03}")).collect();
    let mut failures = 0;
    let mut passes = 0;
    for seed in 1..=20 {
        let cases: Vec<Case> = names
            .iter()
            .map(|n| Case {
                id: Box::leak(n.clone().into_boxed_str()),
                slowdown: 0.0,
                round_noise: 0.03,
                throughput: false,
            })
            .collect();
        let (base, head) = rounds(&cases, 3, seed);
        let decision = decide(&base, &head, &HashMap::new());
        failures += decision.count(Verdict::Regressed);
        passes += decision.count(Verdict::Pass);
    }
    assert_eq!(failures, 0, "2,000 identical comparisons, none may regress");
    assert!(
        passes >= 1800,
        "most identical comparisons are decided: {passes} of 2000 pass"
    );
}

#[test]
fn the_same_inputs_give_the_same_decision() {
    let mut cases = quiet(8);
    cases.push(case("slow", 0.2, 0.02));
    let (base, head) = rounds(&cases, 3, 9);
    assert_eq!(
        decide(&base, &head, &HashMap::new()),
        decide(&base, &head, &HashMap::new())
    );
}

#[test]
fn nothing_in_common_is_no_baseline() {
    let base = vec![vec![measurement("a", 1.0, 0.01, None)]];
    let head = vec![vec![measurement("b", 1.0, 0.01, None)]];
    assert_eq!(
        decide(&base, &head, &HashMap::new()).verdict,
        Overall::NoBaseline
    );
    assert_eq!(
        decide(&[], &[], &HashMap::new()).verdict,
        Overall::NoBaseline
    );
}

#[test]
fn a_quarantined_regression_is_reported_but_does_not_fail_the_gate() {
    let mut cases = quiet(12);
    cases.push(case("net/rtt", 0.40, 0.005));
    let (base, head) = rounds(&cases, 3, 11);
    let policy = Policy::from_toml(
        "[[quarantine]]\nbenchmarks = \"net/*\"\nreason = \"loopback latency\"\n",
        std::path::Path::new("benchgate.toml"),
    )
    .unwrap();
    let history = HashMap::new();
    let input = Input {
        mode: Mode::SameJobAb,
        base_rounds: &base,
        head_rounds: &head,
        history: &history,
    };
    let decision = evaluate(&input, &policy);
    let rtt = decision
        .benchmarks
        .iter()
        .find(|b| b.id == "net/rtt")
        .unwrap();
    assert_eq!(rtt.verdict, Verdict::Regressed);
    assert_eq!(rtt.quarantined.as_deref(), Some("loopback latency"));
    assert_eq!(decision.verdict, Overall::Pass);
    // Without the quarantine the same rounds fail.
    assert_eq!(
        evaluate(&input, &Policy::default()).verdict,
        Overall::Regressed
    );

    let missing_reason = Policy::from_toml(
        "[[quarantine]]\nbenchmarks = \"net/*\"\nreason = \" \"\n",
        std::path::Path::new("benchgate.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        missing_reason.contains("quarantine[0].reason"),
        "{missing_reason}"
    );
}

#[test]
fn a_significant_slowdown_whose_bound_reaches_the_limit_is_inconclusive_not_warn() {
    // 13% slower with 2% round noise: clearly slower, but 15% is not excluded at 3 rounds.
    let mut cases = quiet(12);
    cases.push(case("parse/big", 0.13, 0.02));
    let (base, head) = rounds(&cases, 3, 5);
    let decision = decide(&base, &head, &HashMap::new());
    let big = decision
        .benchmarks
        .iter()
        .find(|b| b.id == "parse/big")
        .unwrap();
    let bound = big.bound.unwrap();
    assert!(bound.upper.unwrap() >= big.limit, "{big:?}");
    assert_eq!(big.verdict, Verdict::Inconclusive, "{big:?}");
    // Every warn rests on a bound below the limit.
    for b in decision
        .benchmarks
        .iter()
        .filter(|b| b.verdict == Verdict::Warn)
    {
        assert!(b.bound.unwrap().upper.unwrap() < b.limit, "{b:?}");
    }
}

#[test]
fn adaptive_looks_confirm_a_regression_at_the_fourth_round_and_show_what_is_detectable() {
    use benchgate_gate::decision::Plan;
    let mut cases = quiet(12);
    cases.push(case("parse/json", 0.50, 0.005));
    let (base, head) = rounds(&cases, 4, 7);
    let at = |n: usize| look(&base, &head, n, Plan::adaptive(8));
    let json = |d: &benchgate_gate::decision::Decision| {
        d.benchmarks
            .iter()
            .find(|b| b.id == "parse/json")
            .unwrap()
            .clone()
    };
    for n in [2, 3] {
        let suspected = json(&at(n));
        assert_eq!(
            suspected.verdict,
            Verdict::Inconclusive,
            "suspected at {n} rounds, not yet failed"
        );
        assert!(
            suspected.bound.unwrap().lower.unwrap() > 1.15,
            "{suspected:?}"
        );
    }
    let fourth = json(&at(4));
    assert_eq!(fourth.verdict, Verdict::Regressed);
    // A quiet benchmark can detect a change at its limit, at every look.
    assert!(
        (fourth.detectable.unwrap() - 1.15).abs() < 1e-9,
        "{fourth:?}"
    );
    assert!(fourth.too_noisy.is_none());
    // The same rounds with one look spend the whole rate: the bound is tighter.
    let fixed = json(&decide(&base[..4], &head[..4], &HashMap::new()));
    assert!(fixed.bound.unwrap().lower.unwrap() > fourth.bound.unwrap().lower.unwrap());
}

/// `cases` over `n` rounds with `id`'s head (or base) in the listed rounds slowed by `factor`:
/// a neighbour on the machine during those runs.
fn interfered(
    cases: &[Case],
    n: usize,
    seed: u64,
    id: &str,
    head_rounds: &[usize],
    base_rounds: &[usize],
    factor: f64,
) -> (Vec<Vec<Measurement>>, Vec<Vec<Measurement>>) {
    let (mut base, mut head) = rounds(cases, n, seed);
    let slow = |side: &mut Vec<Vec<Measurement>>, at: &[usize]| {
        for &k in at {
            let m = side[k].iter_mut().find(|m| m.id.as_str() == id).unwrap();
            *m = measurement(id, m.median.point * factor, 0.005, None);
        }
    };
    slow(&mut head, head_rounds);
    slow(&mut base, base_rounds);
    (base, head)
}

#[test]
fn a_round_a_neighbour_slowed_is_set_aside_and_the_benchmark_still_passes() {
    let mut cases = quiet(12);
    cases.push(case("parse/csv", 0.0, 0.01));
    // Round 3's head run of `parse/csv` was 55% slower: a neighbour, not the code.
    let (base, head) = interfered(&cases, 5, 11, "parse/csv", &[2], &[], 1.55);
    let decision = decide(&base, &head, &HashMap::new());
    let csv = result_of(&decision, "parse/csv");
    assert_eq!(csv.verdict, Verdict::Pass, "{csv:?}");
    assert_eq!(csv.set_aside, 1);
    assert_eq!(csv.rounds, 5);
    // The comment says so in the row, and perf-summary.json carries it.
    let row = comment_row(&decision, "parse/csv");
    assert!(row.ends_with("| 5 (1 set aside) |"), "{row}");
    let entry = summary_entry(&decision, "parse/csv");
    assert_eq!(entry["set_aside"], 1);
    assert_eq!(entry["rounds"], 5);
    // The ratio and its band are the four rounds kept: no trace of the 55%.
    assert!((csv.ratio.unwrap() - 1.0).abs() < 0.03, "{csv:?}");
    assert!(csv.interval.unwrap().1 < 1.06, "{csv:?}");
    // Nothing else moved, nothing else was set aside.
    assert!(
        decision
            .benchmarks
            .iter()
            .filter(|b| b.id != "parse/csv")
            .all(|b| b.set_aside == 0 && b.verdict == Verdict::Pass),
        "{decision:?}"
    );
}

#[test]
fn a_real_slowdown_is_neither_hidden_nor_invented_by_setting_rounds_aside() {
    let mut cases = quiet(12);
    cases.push(case("parse/csv", 0.25, 0.01));
    // 25% slower, and one base run slowed by a neighbour as much: that round reads no change.
    let (base, head) = interfered(&cases, 5, 13, "parse/csv", &[], &[1], 1.25);
    let slowed = result_of(&decide(&base, &head, &HashMap::new()), "parse/csv");
    assert_eq!(slowed.verdict, Verdict::Regressed, "{slowed:?}");
    assert_eq!(slowed.set_aside, 1);
    assert!((slowed.ratio.unwrap() - 1.25).abs() < 0.03, "{slowed:?}");

    // Identical code whose head was slow in three rounds of five and fast in two (a random
    // hash seed per process): the three agree, the two are set aside for `pass`, but a
    // `regressed` must hold with every round too, and the mean of all five is under the limit.
    let mut cases = quiet(12);
    cases.push(case("hash/map", 0.0, 0.002));
    let (base, head) = interfered(&cases, 5, 17, "hash/map", &[0, 2, 4], &[1, 3], 1.5);
    let map = result_of(&decide(&base, &head, &HashMap::new()), "hash/map");
    assert_eq!(map.set_aside, 2, "{map:?}");
    assert!(
        map.ratio.unwrap() > 1.4,
        "the rounds kept read +50%: {map:?}"
    );
    assert_eq!(map.verdict, Verdict::Inconclusive, "{map:?}");
}

fn result_of(
    d: &benchgate_gate::decision::Decision,
    id: &str,
) -> benchgate_gate::decision::BenchmarkResult {
    d.benchmarks.iter().find(|b| b.id == id).unwrap().clone()
}

#[test]
fn an_adaptive_benchmark_that_more_rounds_would_not_decide_is_stopped_and_a_suspected_slowdown_is_not()
 {
    use benchgate_gate::decision::Plan;
    let mut cases = quiet(12);
    // Rounds that swing by tens of per cent (a random hash seed per process), a quiet benchmark
    // 14% slower (at its limit), and one 30% slower but noisy.
    cases.push(case("hash/map", 0.0, 0.01));
    cases.push(case("parse/csv", 0.14, 0.01));
    cases.push(case("parse/json", 0.30, 0.15));
    let (base, mut head) = rounds(&cases, 8, 23);
    // `HashMap::insert/100`'s changes in four rounds of identical code on the busy recording
    // (tests/fixtures/recordings/busy), then it goes on swinging.
    let swings = [-0.311, 0.082, 0.739, -0.009, 0.45, -0.2, 0.6, -0.3];
    for (k, swing) in swings.iter().enumerate() {
        let b = base[k]
            .iter()
            .find(|m| m.id.as_str() == "hash/map")
            .unwrap();
        let slowed = measurement("hash/map", b.median.point * f64::exp(*swing), 0.005, None);
        *head[k]
            .iter_mut()
            .find(|m| m.id.as_str() == "hash/map")
            .unwrap() = slowed;
    }
    let at = |n: usize, plan: Plan| look(&base, &head, n, plan);
    let map = result_of(&at(4, Plan::adaptive(8)), "hash/map");
    assert_eq!(map.verdict, Verdict::Inconclusive, "{map:?}");
    assert!(map.futile, "{map:?}");
    // Not before round 4, not at the last look (nothing more to stop), not with a fixed plan.
    assert!(!result_of(&at(3, Plan::adaptive(8)), "hash/map").futile);
    assert!(!result_of(&at(8, Plan::adaptive(8)), "hash/map").futile);
    assert!(!result_of(&at(4, Plan::Fixed), "hash/map").futile);
    // The quiet ones are decided, never stopped; a benchmark whose rounds read past its limit
    // is left to be confirmed, however noisy.
    let fourth = at(4, Plan::adaptive(8));
    for id in ["q00", "q11"] {
        let q = result_of(&fourth, id);
        assert_eq!((q.verdict, q.futile), (Verdict::Pass, false), "{q:?}");
    }
    // A change sitting at its limit is stopped too: no number of rounds tells 14.5% from 15%.
    let csv = result_of(&fourth, "parse/csv");
    assert_eq!(
        (csv.verdict, csv.futile),
        (Verdict::Inconclusive, true),
        "{csv:?}"
    );
    let json = result_of(&fourth, "parse/json");
    assert!(json.ratio.unwrap() > 1.15 && !json.futile, "{json:?}");
    // The comment says so in the row, and perf-summary.json carries it.
    let row = comment_row(&fourth, "hash/map");
    assert!(row.ends_with("| 4 (stopped early) |"), "{row}");
    assert_eq!(summary_entry(&fourth, "hash/map")["futile"], true);
    let quiet_entry = summary_entry(&fourth, "q00");
    assert!(quiet_entry.get("futile").is_none(), "{quiet_entry}");
}

/// The decision at the look after `n` of the rounds, under `plan`.
fn look(
    base: &[Vec<Measurement>],
    head: &[Vec<Measurement>],
    n: usize,
    plan: benchgate_gate::decision::Plan,
) -> benchgate_gate::decision::Decision {
    benchgate_gate::decision::evaluate_with(
        &Input {
            mode: Mode::SameJobAb,
            base_rounds: &base[..n],
            head_rounds: &head[..n],
            history: &HashMap::new(),
        },
        &Policy::default(),
        plan,
    )
}

/// The comment's table row of `id`.
fn comment_row(decision: &benchgate_gate::decision::Decision, id: &str) -> String {
    let context = benchgate_gate::report::Context::default();
    let comment = benchgate_gate::report::render_markdown(decision, &context, &Policy::default());
    comment
        .lines()
        .find(|l| l.starts_with(&format!("| `{id}`")))
        .unwrap()
        .to_owned()
}

/// `id`'s entry in perf-summary.json.
fn summary_entry(decision: &benchgate_gate::decision::Decision, id: &str) -> serde_json::Value {
    let context = benchgate_gate::report::Context::default();
    let json = benchgate_gate::report::summary_json(decision, &context, &Policy::default());
    json["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == id)
        .unwrap()
        .clone()
}

#[test]
fn fixed_ab_rounds_pass_on_a_bound_with_a_margin_and_the_other_plans_spend_their_share() {
    use benchgate_gate::decision::{FIXED_AB_PASS_SHARE, Plan};
    let (base, head) = rounds(&quiet(12), 3, 21);
    let bound_of = |d: &benchgate_gate::decision::Decision, id: &str| {
        d.benchmarks
            .iter()
            .find(|b| b.id == id)
            .unwrap()
            .bound
            .unwrap()
    };
    // Fixed rounds: a `pass` rests on a 96% bound (four fifths of the 5% spent).
    let fixed = look(&base, &head, 3, Plan::Fixed);
    assert_eq!(verdicts(&fixed)["q00"], Verdict::Pass);
    let confidence = bound_of(&fixed, "q00").confidence;
    assert!((confidence - 0.96).abs() < 1e-12, "{confidence}");
    // A stricter policy keeps the same margin: 1 − 0.01 × 0.8.
    let strict = benchgate_gate::decision::evaluate_with(
        &Input {
            mode: Mode::SameJobAb,
            base_rounds: &base,
            head_rounds: &head,
            history: &HashMap::new(),
        },
        &Policy {
            confidence: 0.99,
            ..Policy::default()
        },
        Plan::Fixed,
    );
    let confidence = bound_of(&strict, "q00").confidence;
    assert!(
        (confidence - (1.0 - 0.01 * FIXED_AB_PASS_SHARE)).abs() < 1e-12,
        "{confidence}"
    );
    // Adaptive looks spend their share of the whole 5%, no margin on top (their union bound
    // over overlapping looks holds one): at 3 rounds of 8, 1 − 0.05 × ((2/7)^¾ − (1/7)^¾).
    let adaptive = look(&base, &head, 3, Plan::adaptive(8));
    let share = (2.0f64 / 7.0).powf(0.75) - (1.0f64 / 7.0).powf(0.75);
    let confidence = bound_of(&adaptive, "q00").confidence;
    assert!(
        (confidence - (1.0 - 0.05 * share)).abs() < 1e-12,
        "{confidence}"
    );
    // A stored baseline's pass rests on its own construction at the full 95%.
    let history = calm_history(3);
    let one_run = |ns: f64| {
        vec![
            (0..12)
                .map(|j| measurement(&format!("b{j:02}"), ns, 0.01, None))
                .collect::<Vec<_>>(),
        ]
    };
    let stored = decide(&one_run(1000.0), &one_run(1001.0), &history);
    assert_eq!(verdicts(&stored)["b00"], Verdict::Pass, "{stored:?}");
    let confidence = bound_of(&stored, "b00").confidence;
    assert!((confidence - 0.95).abs() < 1e-12, "{confidence}");
}

/// A stored baseline's head run that a neighbour slowed for one benchmark leaves it undecided;
/// re-running only that benchmark on the head and pooling the runs decides it, the others keep
/// the verdicts of the first look, and one the re-run did not measure keeps its own.
/// One run of `b00`..`b11` at 1000 ns, each of `slowed` (index, factor) that much slower.
fn run(slowed: &[(usize, f64)]) -> Vec<Measurement> {
    (0..12)
        .map(|j| {
            let factor = slowed
                .iter()
                .find(|(k, _)| *k == j)
                .map_or(1.0, |(_, f)| *f);
            measurement(&format!("b{j:02}"), 1000.0 * factor, 0.002, None)
        })
        .collect()
}

#[test]
fn head_reruns_decide_what_one_interfered_head_run_left_open() {
    use benchgate_gate::decision::HeadReruns;
    let history = calm_history(11);
    let base = vec![run(&[])];
    // b03 read 13% slower in the first head run (a neighbour), b07 12%.
    let first = run(&[(3, 1.13), (7, 1.12)]);
    let policy = Policy::default();
    let mut reruns = HeadReruns::new(3);
    let look = reruns.look(
        &base,
        std::slice::from_ref(&first),
        &history,
        &policy,
        |_| true,
    );
    let one = result_of(&look.decision, "b03");
    assert_eq!(one.verdict, Verdict::Inconclusive, "{one:?}");
    assert_eq!(look.open, ["b03", "b07"], "{:?}", look.decision.benchmarks);
    assert_eq!(result_of(&look.decision, "b00").verdict, Verdict::Pass);
    // The same run judged once and for all (no re-runs) is no more decided.
    let fixed = HeadReruns::new(1).look(
        &base,
        std::slice::from_ref(&first),
        &history,
        &policy,
        |_| true,
    );
    assert!(fixed.open.is_empty());
    assert_eq!(
        result_of(&fixed.decision, "b03").verdict,
        Verdict::Inconclusive
    );

    // The re-run measures b03 only, clean this time (b07's bench did not run).
    let second: Vec<Measurement> = run(&[])
        .into_iter()
        .filter(|m| m.id.as_str() == "b03")
        .collect();
    let heads = [first.clone(), second.clone()];
    let look = reruns.look(&base, &heads, &history, &policy, |_| true);
    let decision = look.decision;
    // Decided at the second look: the median of two runs is their geometric mean, 6.3%
    // slower, significantly (`warn`) but with the limit excluded.
    let b03 = result_of(&decision, "b03");
    assert_eq!((b03.verdict, b03.rounds), (Verdict::Warn, 2), "{b03:?}");
    assert!(b03.bound.unwrap().upper.unwrap() < 1.15, "{b03:?}");
    let expected_head = (1130.0 * 1000.0_f64).sqrt();
    assert!(
        (b03.head_ns.unwrap() / expected_head - 1.0).abs() < 1e-9,
        "{b03:?}"
    );
    assert!(look.open.is_empty(), "{:?}", look.open);
    // b07 was open but not measured again: it keeps the first look's verdict and run count.
    let b07 = result_of(&decision, "b07");
    assert_eq!(
        (b07.verdict, b07.rounds),
        (Verdict::Inconclusive, 1),
        "{b07:?}"
    );
    // The others were decided at the first look and keep it.
    let b00 = result_of(&decision, "b00");
    assert_eq!((b00.verdict, b00.rounds), (Verdict::Pass, 1));
}

/// Pooling the head's runs shrinks the head's part of the noise, never the base's: against
/// one base run, three head runs narrow the band by at most √(1.4487/2), not by √3.
#[test]
fn pooled_head_runs_narrow_the_band_only_by_the_heads_share() {
    let mut noise = Noise(5);
    let history = HashMap::from([(
        "b".to_owned(),
        (0..30)
            .map(|_| 1000f64.ln() + 0.04 * noise.normal())
            .collect::<Vec<f64>>(),
    )]);
    let base = vec![vec![measurement("b", 1000.0, 0.001, None)]];
    let one = vec![vec![measurement("b", 1000.0, 0.001, None)]];
    let three = vec![one[0].clone(), one[0].clone(), one[0].clone()];
    let width = |head: &[Vec<Measurement>]| {
        let decision = decide(&base, head, &history);
        let b = result_of(&decision, "b");
        b.noise.unwrap().ln_1p()
    };
    let ratio = width(&three) / width(&one);
    let expected = (1.448_7_f64 / 2.0).sqrt();
    assert!((ratio - expected).abs() < 0.01, "{ratio} vs {expected}");
}

#[test]
fn a_stored_baseline_is_the_median_of_the_base_commits_newest_runs_unless_the_base_moved_it() {
    let policy = Policy::default();
    let statistic =
        |m: &Measurement| benchgate_gate::decision::round_statistic(m, policy.statistic).ln();
    let mut noise = Noise(41);
    let quiet_ids = ["q0", "q1", "q2", "q3", "q4", "q5"];
    // Twenty runs of the benchmark at 1000 ns, 3% from run to run; the quiet companions give
    // the others' floor. Every history ends at its base run, as the store's does.
    let target: Vec<f64> = (0..20)
        .map(|_| 1000f64.ln() + 0.03 * noise.normal())
        .collect();
    let jumpy: Vec<f64> = (0..20)
        .map(|i| 1000f64.ln() + 0.003 * noise.normal() + if i % 5 == 2 { 0.25 } else { 0.0 })
        .collect();
    // A benchmark with a faster mode 12% down, one run in four.
    let moded: Vec<f64> = (0..20)
        .map(|i| {
            let mode = if i % 4 == 0 { 880f64 } else { 1000.0 };
            mode.ln() + 0.01 * noise.normal()
        })
        .collect();
    let mut judge = |series: &[f64], base_ns: f64, head_ns: f64| {
        let side = |ns: f64| {
            let mut run: Vec<Measurement> = quiet_ids
                .iter()
                .map(|id| measurement(id, 1000.0, 0.001, None))
                .collect();
            run.push(measurement("t", ns, 0.001, None));
            vec![run]
        };
        let (base, head) = (side(base_ns), side(head_ns));
        let mut history: HashMap<String, Vec<f64>> = HashMap::new();
        for m in &base[0] {
            let mut runs: Vec<f64> = if m.id.as_str() == "t" {
                series.to_vec()
            } else {
                (0..20)
                    .map(|_| statistic(m) + 0.002 * noise.normal())
                    .collect()
            };
            runs.push(statistic(m));
            history.insert(m.id.as_str().to_owned(), runs);
        }
        let decision = decide(&base, &head, &history);
        let level = {
            let runs = &history["t"];
            let mut newest = runs[runs.len() - POOLED_BASE_RUNS..].to_vec();
            newest.sort_by(f64::total_cmp);
            newest[POOLED_BASE_RUNS / 2]
        };
        (
            result_of(&decision, "t"),
            level,
            statistic(&base[0][6]),
            statistic(&head[0][6]),
        )
    };

    // The base run 2.5% above 1000, within the noise of the runs before it and a quarter of
    // the limit: the base is the median of it and its newest runs before it, and the change is
    // the head's against that.
    let (at_level, level, _, head) = judge(&target, 1025.0, 1150.0);
    assert_eq!(at_level.base_runs, POOLED_BASE_RUNS, "{at_level:?}");
    assert!(
        (at_level.ratio.unwrap() - (head - level).exp()).abs() < 1e-9,
        "{at_level:?}"
    );
    assert!(
        (at_level.base_ns.unwrap() - level.exp()).abs() < 1e-6,
        "{at_level:?}"
    );

    // The base commit itself made the benchmark 13% slower: its run is compared alone, and
    // the head, the same code, is not blamed for it (the runs before would read +13%).
    let (moved, _, base, head) = judge(&target, 1130.0, 1130.0);
    assert_eq!(moved.base_runs, 1, "{moved:?}");
    assert!(
        (moved.ratio.unwrap() - (head - base).exp()).abs() < 1e-9,
        "{moved:?}"
    );
    assert_ne!(moved.verdict, Verdict::Regressed, "{moved:?}");

    // The base commit made the benchmark 13% faster, a level none of the runs before it
    // reached: its run is compared alone, and the head, the same code, is not `improved`.
    let (improved_base, _, _, _) = judge(&target, 870.0, 870.0);
    assert_eq!(improved_base.base_runs, 1, "{improved_base:?}");
    assert_eq!(improved_base.verdict, Verdict::Pass, "{improved_base:?}");

    // A benchmark with a faster mode 12% down, one run in four, and a base run in it: the base
    // is the level, the median of nine runs, against which a `regressed` can only understate.
    // A head at the level, 13.6% slower than the base run, does not pass: its bound counts from
    // the base run's own time.
    let (at_the_level, level, _, _) = judge(&moded, 880.0, 1000.0);
    assert!((level - 1000f64.ln()).abs() < 0.03, "{level}");
    assert_eq!(at_the_level.base_runs, POOLED_BASE_RUNS, "{at_the_level:?}");
    assert_ne!(at_the_level.verdict, Verdict::Pass, "{at_the_level:?}");
    assert_ne!(at_the_level.verdict, Verdict::Regressed, "{at_the_level:?}");

    // A benchmark whose runs jump by 25% one run in five (a hash seed): one head run 25%
    // slower may be that jump, and a base of nine runs does not make it less likely.
    let (jumps, _, _, _) = judge(&jumpy, 1000.0, 1250.0);
    assert_eq!(jumps.base_runs, POOLED_BASE_RUNS, "{jumps:?}");
    assert_eq!(jumps.verdict, Verdict::Inconclusive, "{jumps:?}");
}

/// Three head runs against a base of five: one run's jump moves neither median, so a jumpy
/// benchmark is judged on its clean spread. A slowdown in every head run is then `regressed`,
/// where one head run could not tell it from a jump; a jump in one head run is not, and a
/// regression the first look claimed is run again and given up when the runs decide it.
#[test]
fn three_head_runs_judge_a_jumpy_benchmark_on_its_clean_spread_and_confirm_a_regression() {
    use benchgate_gate::decision::HeadReruns;
    let policy = Policy::default();
    let statistic =
        |m: &Measurement| benchgate_gate::decision::round_statistic(m, policy.statistic).ln();
    let mut noise = Noise(43);
    let ids = ["q0", "q1", "q2", "q3", "q4", "q5", "jumpy"];
    let run = |jumpy_ns: f64| -> Vec<Measurement> {
        ids.iter()
            .map(|id| {
                measurement(
                    id,
                    if *id == "jumpy" { jumpy_ns } else { 1000.0 },
                    0.001,
                    None,
                )
            })
            .collect()
    };
    let base = vec![run(1000.0)];
    // Twenty runs, 0.3% apart, 25% up one run in five; every history ends at its base run.
    let history: HashMap<String, Vec<f64>> = base[0]
        .iter()
        .map(|m| {
            let mut runs: Vec<f64> = (0..20)
                .map(|i| {
                    let jump = if m.id.as_str() == "jumpy" && i % 5 == 2 {
                        0.25
                    } else {
                        0.0
                    };
                    statistic(m) + 0.003 * noise.normal() + jump
                })
                .collect();
            runs.push(statistic(m));
            (m.id.as_str().to_owned(), runs)
        })
        .collect();
    let only = |ns: f64| -> Vec<Measurement> {
        run(ns)
            .into_iter()
            .filter(|m| m.id.as_str() == "jumpy")
            .collect()
    };
    let looks = |heads: &[Vec<Measurement>]| {
        let mut reruns = HeadReruns::new(3);
        let mut so_far = vec![heads[0].clone()];
        loop {
            let look = reruns.look(&base, &so_far, &history, &policy, |_| true);
            if look.open.is_empty() {
                return result_of(&look.decision, "jumpy");
            }
            so_far.push(heads[so_far.len()].clone());
        }
    };
    // 30% slower in every head run: one run is inconclusive (it could be a jump), three are
    // `regressed`.
    let slower = looks(&[run(1300.0), only(1300.0), only(1300.0)]);
    assert_eq!(
        (slower.verdict, slower.rounds),
        (Verdict::Regressed, 3),
        "{slower:?}"
    );
    // The same code, one head run jumped 30%: the first look claims nothing it cannot hold,
    // and the median of two passes, 13.8% slower against the 0.3% its clean runs scatter
    // (a jump only adds time; read against the spread of runs with their jumps, it took a
    // third run).
    let jumped = looks(&[run(1300.0), only(1000.0), only(1002.0)]);
    assert_eq!(
        (jumped.verdict, jumped.rounds),
        (Verdict::Pass, 2),
        "{jumped:?}"
    );
    // A quiet benchmark 40% slower in the first head run is `regressed` at the first look,
    // run again, and given up when the next runs are its usual self: the median passes.
    let quiet_history: HashMap<String, Vec<f64>> = history
        .iter()
        .map(|(id, runs)| {
            let runs = if id == "jumpy" {
                runs.iter()
                    .map(|v| v.min(statistic(&base[0][6]) + 0.01))
                    .collect()
            } else {
                runs.clone()
            };
            (id.clone(), runs)
        })
        .collect();
    let mut reruns = HeadReruns::new(3);
    let first = reruns.look(&base, &[run(1400.0)], &quiet_history, &policy, |_| true);
    assert_eq!(
        result_of(&first.decision, "jumpy").verdict,
        Verdict::Regressed
    );
    assert_eq!(first.open, ["jumpy"]);
    let second = reruns.look(
        &base,
        &[run(1400.0), only(1001.0)],
        &quiet_history,
        &policy,
        |_| true,
    );
    assert_eq!(
        second.open,
        ["jumpy"],
        "{:?}",
        result_of(&second.decision, "jumpy")
    );
    let third = reruns.look(
        &base,
        &[run(1400.0), only(1001.0), only(999.0)],
        &quiet_history,
        &policy,
        |_| true,
    );
    let confirmed = result_of(&third.decision, "jumpy");
    assert_eq!(
        (confirmed.verdict, confirmed.rounds),
        (Verdict::Pass, 3),
        "{confirmed:?}"
    );
    // A real one stays: 40% slower in every run.
    let mut reruns = HeadReruns::new(3);
    let heads = [run(1400.0), only(1400.0), only(1400.0)];
    let mut last = None;
    for n in 1..=3 {
        last = Some(reruns.look(&base, &heads[..n], &quiet_history, &policy, |_| true));
    }
    let real = result_of(&last.unwrap().decision, "jumpy");
    assert_eq!(
        (real.verdict, real.rounds),
        (Verdict::Regressed, 3),
        "{real:?}"
    );
}

/// A benchmark with two levels, its faster mode 12% down one run in five, whose base run is in
/// that mode: the base is the level the runs before it show (the median of nine), so a
/// slowdown of 1.5 times the limit in three head runs is `regressed` against it, and a head the
/// same as the base run is not `improved` (that is claimed against the base run itself).
#[test]
fn a_base_run_in_its_faster_mode_is_judged_at_its_level_and_no_improvement_is_claimed_on_it() {
    use benchgate_gate::decision::HeadReruns;
    let policy = Policy::default();
    let mut noise = Noise(47);
    let ids = ["q0", "q1", "q2", "q3", "q4", "q5", "moded"];
    let run = |moded_ns: f64| -> Vec<Measurement> {
        ids.iter()
            .map(|id| {
                let ns = if *id == "moded" { moded_ns } else { 1000.0 };
                measurement(id, ns, 0.001, None)
            })
            .collect()
    };
    let base = vec![run(880.0)];
    // Twenty runs 0.5% apart, every fifth in the faster mode; each history ends at its base run.
    let history: HashMap<String, Vec<f64>> = base[0]
        .iter()
        .map(|m| {
            let moded = m.id.as_str() == "moded";
            let mut runs: Vec<f64> = (0..20)
                .map(|i| {
                    let ns = if moded && i % 5 == 0 { 880f64 } else { 1000.0 };
                    ns.ln() + 0.005 * noise.normal()
                })
                .collect();
            runs.push(if moded { 880f64.ln() } else { 1000f64.ln() });
            (m.id.as_str().to_owned(), runs)
        })
        .collect();
    let looks = |head_ns: f64| {
        let mut reruns = HeadReruns::new(3);
        let mut so_far = vec![run(head_ns)];
        loop {
            let look = reruns.look(&base, &so_far, &history, &policy, |_| true);
            if look.open.is_empty() {
                return result_of(&look.decision, "moded");
            }
            so_far.push(run(head_ns * (1.0 + 0.002 * so_far.len() as f64)));
        }
    };
    let same = looks(880.0);
    assert_eq!(same.base_runs, POOLED_BASE_RUNS, "{same:?}");
    assert!(
        (same.base_ns.unwrap() / 1000.0 - 1.0).abs() < 0.02,
        "{same:?}"
    );
    assert_eq!(same.verdict, Verdict::Pass, "{same:?}");
    let slower = looks(1225.0);
    assert_eq!(slower.verdict, Verdict::Regressed, "{slower:?}");
    // 9% faster than the base run, 20% faster than its level: not an improvement of the head's.
    let mode_faster = looks(800.0);
    assert_eq!(mode_faster.verdict, Verdict::Pass, "{mode_faster:?}");
    // 32% faster than the base run is.
    let faster = looks(600.0);
    assert_eq!(faster.verdict, Verdict::Improved, "{faster:?}");
}

/// `runs` runs of history for `b00`..`b11` at 1000 ns with 1% run-to-run noise, the last one
/// the base run (1000 ns exactly).
fn short_history(runs: usize, seed: u64) -> HashMap<String, Vec<f64>> {
    let mut noise = Noise(seed);
    (0..12)
        .map(|j| {
            let mut h: Vec<f64> = (1..runs)
                .map(|_| 1000f64.ln() + 0.01 * noise.normal())
                .collect();
            h.push(1000f64.ln());
            (format!("b{j:02}"), h)
        })
        .collect()
}

#[test]
fn a_short_history_passes_unchanged_code_claims_a_large_slowdown_and_confirms_it() {
    use benchgate_gate::decision::HeadReruns;
    use benchgate_gate::noise::{MIN_HISTORY, MIN_SHORT_HISTORY};
    let base = vec![run(&[])];
    // b00 50% slower, b01 18% (over its 15% limit), the other ten unchanged (±0.5%).
    let head = vec![run(&[
        (0, 1.5),
        (1, 1.18),
        (2, 1.005),
        (5, 0.995),
        (8, 1.003),
    ])];
    let policy = Policy::default();

    // Six runs of quiet history: calibrated, widened toward the assumed 5% a run.
    let six = short_history(6, 3);
    let decision = decide(&base, &head, &six);
    let v = verdicts(&decision);
    assert_eq!(v["b00"], Verdict::Regressed, "{decision:#?}");
    assert_eq!(
        v["b01"],
        Verdict::Inconclusive,
        "18% is no claim on six runs"
    );
    for j in 2..12 {
        assert_eq!(v[format!("b{j:02}").as_str()], Verdict::Pass, "b{j:02}");
    }
    let b02 = result_of(&decision, "b02");
    assert_eq!(b02.noise_source, Some(NoiseSource::History));
    assert!(!b02.uncalibrated);
    // The band is the prior's as much as the history's: ±1% runs alone would give a noise
    // near 3%, the prior (3 · 5%² + 5 · 1%²) / 8 gives √(2 · 0.0010) ≈ 4.5% a pair.
    let noise = b02.noise.unwrap();
    assert!((0.06..0.12).contains(&noise), "{b02:?}");

    // Under the short history's floor: uncalibrated, nothing passes.
    let four = short_history(MIN_SHORT_HISTORY - 1, 3);
    let decision = decide(&base, &head, &four);
    assert!(
        decision
            .benchmarks
            .iter()
            .all(|b| b.verdict != Verdict::Pass && b.uncalibrated),
        "{decision:#?}"
    );

    // With re-runs allowed, a short history's benchmarks are judged at the first look with
    // their whole error rates, as without re-runs, and only its claimed regression runs
    // again, to be confirmed; a full history's undecided benchmark runs again too.
    let mut mixed = six.clone();
    mixed.insert(
        "b01".to_owned(),
        short_history(MIN_HISTORY + 10, 4).remove("b01").unwrap(),
    );
    let first_look =
        |max: usize| HeadReruns::new(max).look(&base, &head, &mixed, &policy, |_| true);
    let look = first_look(3);
    assert_eq!(look.open, ["b00", "b01"], "{:#?}", look.decision);
    let once = first_look(1);
    for j in (0..12).filter(|j| *j != 1) {
        let id = format!("b{j:02}");
        assert_eq!(
            result_of(&look.decision, &id),
            result_of(&once.decision, &id),
            "{id}"
        );
    }

    // b00's 50% was one head run's: hex's `decode/hex` (6 runs of history) read 49.3% slower
    // in a head run whose process ran it at half speed, and `ab` of the same code 0.3% faster.
    // Its re-runs read it 2% and 1% slower, and the claim does not stand; a slowdown its
    // re-runs keep does.
    let confirmed = |again: [f64; 2]| {
        let mut reruns = HeadReruns::new(3);
        let mut heads = head.clone();
        let mut look = reruns.look(&base, &heads, &six, &policy, |_| true);
        for factor in again {
            heads.push(
                run(&[(0, factor)])
                    .into_iter()
                    .filter(|m| m.id.as_str() == "b00")
                    .collect(),
            );
            look = reruns.look(&base, &heads, &six, &policy, |_| true);
        }
        result_of(&look.decision, "b00").clone()
    };
    let jump = confirmed([1.02, 1.01]);
    assert_ne!(jump.verdict, Verdict::Regressed, "{jump:#?}");
    assert_eq!(jump.rounds, 3, "{jump:#?}");
    let slower = confirmed([1.48, 1.52]);
    assert_eq!(slower.verdict, Verdict::Regressed, "{slower:#?}");
}

#[test]
fn a_claim_the_head_runs_bring_back_under_the_limit_does_not_stand() {
    use benchgate_gate::decision::HeadReruns;
    // Twenty runs of history at 5% run-to-run noise: a band a 70% jump clears, a 10% change
    // does not.
    let mut noise = Noise(21);
    let history: HashMap<String, Vec<f64>> = (0..12)
        .map(|j| {
            let mut h: Vec<f64> = (0..19)
                .map(|_| 1000f64.ln() + 0.05 * noise.normal())
                .collect();
            h.push(1000f64.ln());
            (format!("b{j:02}"), h)
        })
        .collect();
    let base = vec![run(&[])];
    let policy = Policy::default();
    let mut reruns = HeadReruns::new(3);
    // The first head run: b03 70% slower (a neighbour hit it).
    let mut heads = vec![run(&[(3, 1.7)])];
    let look = reruns.look(&base, &heads, &history, &policy, |_| true);
    assert_eq!(result_of(&look.decision, "b03").verdict, Verdict::Regressed);
    assert!(
        look.open.iter().any(|id| id == "b03"),
        "a claim runs again, to be confirmed: {:?}",
        look.open
    );
    // The re-runs read it 10% and 8% slower: the median of three, 10%, is under the limit.
    let mut last = look;
    for factor in [1.10, 1.08] {
        heads.push(
            run(&[(3, factor)])
                .into_iter()
                .filter(|m| m.id.as_str() == "b03")
                .collect(),
        );
        last = reruns.look(&base, &heads, &history, &policy, |_| true);
    }
    let b03 = result_of(&last.decision, "b03");
    assert_eq!(
        (b03.verdict, b03.rounds),
        (Verdict::Inconclusive, 3),
        "{b03:?}"
    );
    assert!(b03.ratio.unwrap() < b03.limit, "{b03:?}");
    assert_eq!(last.decision.verdict, Overall::Inconclusive);
}

/// A busy machine: every stored run has a different two of twelve benchmarks 40% slower (a
/// neighbour), so the machine's record of how far whole runs move is large. That record guards
/// a `regressed`, not a `pass`: interference only adds time, so a head run at its benchmark's
/// level passes on the benchmark's own history, while a benchmark the head run's neighbour
/// slowed stays undecided. Where every recent base run was slowed (a neighbour that stayed), a
/// head faster than all of them does not pass on that history: the record is its floor again.
#[test]
fn on_a_busy_machine_an_undisturbed_head_passes_on_its_own_history() {
    let mut noise = Noise(47);
    let ids: Vec<String> = (0..12).map(|j| format!("b{j:02}")).collect();
    let mut history: HashMap<String, Vec<f64>> = ids
        .iter()
        .enumerate()
        .map(|(j, id)| {
            let series = (0..20)
                .map(|i| {
                    let slowed = (i * 7 + j * 5) % 12 < 2;
                    1000f64.ln() + 0.01 * noise.normal() + if slowed { 0.34 } else { 0.0 }
                })
                .collect();
            (id.clone(), series)
        })
        .collect();
    // The base run, clean, ends each history; b09's last six runs, the base among them, were
    // all slowed by a neighbour that stayed.
    for (id, series) in &mut history {
        series.push(1000f64.ln());
        if id == "b09" {
            let n = series.len();
            for v in &mut series[n - 6..] {
                *v = 1300f64.ln() + 0.002 * noise.normal();
            }
        }
    }
    let base_ns = |id: &str| (history[id].last().unwrap()).exp();
    let side = |ns: &dyn Fn(&str) -> f64| {
        vec![
            ids.iter()
                .map(|id| measurement(id, ns(id), 0.002, None))
                .collect::<Vec<_>>(),
        ]
    };
    let base = side(&|id| base_ns(id));
    // The head: the same code, at or a little above the base's clean level (a head faster than
    // all of the base's recent runs is the case below); b05 slowed 40% by a neighbour in this
    // run, b02 20% slower in code, b09 at its clean level but 20% slower in code than that.
    let clean: HashMap<&str, f64> = ids
        .iter()
        .map(|id| (id.as_str(), 1000.0 * (0.01 * noise.normal()).abs().exp()))
        .collect();
    let head = side(&|id| match id {
        "b05" => 1400.0,
        "b02" => 1200.0,
        "b09" => 1200.0,
        _ => clean[id],
    });
    let decision = decide(&base, &head, &history);
    for id in [
        "b00", "b01", "b03", "b04", "b06", "b07", "b08", "b10", "b11",
    ] {
        let b = result_of(&decision, id);
        assert_eq!(b.verdict, Verdict::Pass, "{b:?}");
        assert_eq!(b.noise_source, Some(NoiseSource::History));
        assert!(b.bound.unwrap().upper.unwrap() < 1.15, "{b:?}");
    }
    // The neighbour's 40% is no regression on this machine, and no pass either.
    assert_eq!(result_of(&decision, "b05").verdict, Verdict::Inconclusive);
    // Slowdowns beyond the limit are never let through.
    for id in ["b02", "b09"] {
        let b = result_of(&decision, id);
        assert!(
            !matches!(b.verdict, Verdict::Pass | Verdict::Warn),
            "{id}: {b:?}"
        );
    }
}

/// A run of twenty samples: the fastest at `fastest` ns, the rest at `rest` times it.
fn torn(id: &str, fastest: f64, rest: f64) -> Measurement {
    let times: Vec<f64> = (0..20)
        .map(|k| {
            if k == 0 {
                fastest
            } else {
                fastest * rest * (1.0 + 0.001 * k as f64)
            }
        })
        .collect();
    let mut m = measurement(id, times[10], 0.002, None);
    m.samples = benchgate_collector::Samples::new(vec![1.0; 20], times).unwrap();
    m
}

/// Twelve benchmarks `b00`…`b11` at 1000 ns with 20 runs of 1% history ending at 1000, and
/// one clean base run of them.
struct Quiet {
    ids: Vec<String>,
    history: HashMap<String, Vec<f64>>,
    base: Vec<Vec<Measurement>>,
}

fn twelve_quiet_benchmarks(noise: &mut Noise) -> Quiet {
    let ids: Vec<String> = (0..12).map(|j| format!("b{j:02}")).collect();
    let (history, base) = histories_and_base(&ids, noise, |_, _| 0.0);
    Quiet { ids, history, base }
}

/// Per benchmark, 20 runs of 1000 ns with 1% noise plus `jump(benchmark, run)` (a log), then
/// the base run at 1000 ns; and that base run, 0.5% wide.
fn histories_and_base(
    ids: &[String],
    noise: &mut Noise,
    jump: impl Fn(usize, usize) -> f64,
) -> (HashMap<String, Vec<f64>>, Vec<Vec<Measurement>>) {
    let history: HashMap<String, Vec<f64>> = ids
        .iter()
        .enumerate()
        .map(|(j, id)| {
            let mut series: Vec<f64> = (0..20)
                .map(|run| 1000f64.ln() + 0.01 * noise.normal() + jump(j, run))
                .collect();
            series.push(1000f64.ln());
            (id.clone(), series)
        })
        .collect();
    let base = vec![
        ids.iter()
            .map(|id| torn(id, 1000.0, 1.005))
            .collect::<Vec<_>>(),
    ];
    (history, base)
}

/// A head run that interference slowed in all but one of its twenty samples keeps its
/// minimum where its code puts it. The gap between its two fastest samples (40%) is the
/// interference's, which only adds time, so a stored baseline's `pass` does not take it as a
/// floor: the benchmark passes on its own history (it was `inconclusive`, its band widened by
/// that gap). The same torn run of code 20% slower is not let through.
#[test]
fn a_head_run_disturbed_in_all_but_one_sample_passes_on_its_own_history() {
    let mut noise = Noise(11);
    let Quiet { ids, history, base } = twelve_quiet_benchmarks(&mut noise);
    let head = vec![
        ids.iter()
            .map(|id| match id.as_str() {
                "b03" => torn(id, 1000.0, 1.4),
                "b07" => torn(id, 1200.0, 1.4),
                _ => torn(id, 1000.0 * (0.005 * noise.normal()).exp(), 1.005),
            })
            .collect::<Vec<_>>(),
    ];
    let decision = decide(&base, &head, &history);
    let b03 = result_of(&decision, "b03");
    assert_eq!(b03.verdict, Verdict::Pass, "{b03:?}");
    assert!(b03.bound.unwrap().upper.unwrap() < 1.1, "{b03:?}");
    let b07 = result_of(&decision, "b07");
    assert!(
        !matches!(b07.verdict, Verdict::Pass | Verdict::Warn),
        "{b07:?}"
    );
    for id in ["b00", "b05", "b11"] {
        assert_eq!(result_of(&decision, id).verdict, Verdict::Pass, "{id}");
    }
}

/// Every benchmark of a head run 12% faster than `base`, `slowed`'s code 25% slower: it reads
/// 10% slower, inside the 15% limit, and must not pass.
fn a_faster_host_hides_no_slowdown(
    ids: &[String],
    base: &[Vec<Measurement>],
    history: &HashMap<String, Vec<f64>>,
    noise: &mut Noise,
    slowed: &str,
) {
    let fast_host = vec![
        ids.iter()
            .map(|id| {
                if id == slowed {
                    torn(id, 1000.0 * 1.25 * 0.88, 1.005)
                } else {
                    torn(id, 1000.0 * 0.88 * (0.005 * noise.normal()).exp(), 1.005)
                }
            })
            .collect::<Vec<_>>(),
    ];
    let decision = decide(base, &fast_host, history);
    let hidden = result_of(&decision, slowed);
    assert!(
        !matches!(hidden.verdict, Verdict::Pass | Verdict::Warn),
        "{hidden:?}"
    );
}

/// A neighbour that stayed for the base run and its five newest runs, on a busy machine (every
/// run of the history has three of twelve benchmarks 40% slow): the head, clean, reads faster
/// than all six. Their floor no longer bounds the base's interference, but the fastest run of
/// the history does, and the benchmark passes on it (it was `inconclusive`, banded by the
/// machine's record of interference). The same head with code 20% slower is not let through,
/// nor is a head faster than every run the history shows.
#[test]
fn a_head_faster_than_its_recent_runs_is_read_against_the_fastest_of_its_history() {
    let mut noise = Noise(37);
    let ids: Vec<String> = (0..12).map(|j| format!("b{j:02}")).collect();
    let history: HashMap<String, Vec<f64>> = ids
        .iter()
        .enumerate()
        .map(|(j, id)| {
            let series: Vec<f64> = (0..21)
                .map(|run| {
                    let interfered = j > 0 && (0..3).any(|k| (run * 5 + k) % 11 + 1 == j);
                    let stayed = j == 0 && run >= 15;
                    1000f64.ln()
                        + 0.01 * noise.normal()
                        + if interfered { 0.4 } else { 0.0 }
                        + if stayed { 0.25 } else { 0.0 }
                })
                .collect();
            (id.clone(), series)
        })
        .collect();
    let base = vec![
        ids.iter()
            .map(|id| torn(id, history[id].last().unwrap().exp(), 1.005))
            .collect::<Vec<_>>(),
    ];
    let head = |b00: f64, noise: &mut Noise| {
        vec![
            ids.iter()
                .map(|id| match id.as_str() {
                    "b00" => torn(id, b00, 1.005),
                    _ => torn(id, 1000.0 * (0.005 * noise.normal().abs()).exp(), 1.005),
                })
                .collect::<Vec<_>>(),
        ]
    };
    let decision = decide(&base, &head(1000.0, &mut noise), &history);
    let clean = result_of(&decision, "b00");
    assert_eq!(clean.verdict, Verdict::Pass, "{clean:?}");
    let slower = decide(&base, &head(1200.0, &mut noise), &history);
    let slower = result_of(&slower, "b00");
    assert!(
        !matches!(slower.verdict, Verdict::Pass | Verdict::Warn),
        "{slower:?}"
    );
    // In a mode 30% faster than any run of its history (as the loopback handshake on the
    // noisy recording ran), its code 25% slower: it reads faster than every run.
    let fastest = history["b00"].iter().copied().fold(f64::INFINITY, f64::min);
    let unknown_mode = decide(
        &base,
        &head(fastest.exp() * 0.7 * 1.25, &mut noise),
        &history,
    );
    let unknown_mode = result_of(&unknown_mode, "b00");
    assert!(
        !matches!(unknown_mode.verdict, Verdict::Pass | Verdict::Warn),
        "{unknown_mode:?}"
    );
}

/// Interference on both sides of a stored-baseline comparison, as on the first busy
/// recording: the base run was slowed in three of twelve benchmarks (30–60%), which read that
/// much faster in a clean head, and the head run in three others. The three that read faster
/// are no faster host: each sits above its recent floor by as much. The six clean benchmarks
/// pass on their own history (they were `inconclusive`, banded by the three's gap below
/// zero). A head host 12% faster for every benchmark beside the same base still keeps a 25%
/// slowdown, which reads as 10% there, from passing.
#[test]
fn a_base_run_slowed_in_some_benchmarks_is_no_faster_host() {
    let mut noise = Noise(31);
    let Quiet {
        ids, mut history, ..
    } = twelve_quiet_benchmarks(&mut noise);
    let base_slowed = [1.3, 1.45, 1.6];
    let head_slowed = [1.3, 1.5, 1.4];
    let base = vec![
        ids.iter()
            .enumerate()
            .map(|(j, id)| match j {
                4..=6 => torn(id, 1000.0 * base_slowed[j - 4], 1.005),
                _ => torn(id, 1000.0, 1.005),
            })
            .collect::<Vec<_>>(),
    ];
    for (j, factor) in (4..=6).zip(base_slowed) {
        // The history ends at the base run.
        *history.get_mut(&ids[j]).unwrap().last_mut().unwrap() = (1000.0 * factor).ln();
    }
    let head = vec![
        ids.iter()
            .enumerate()
            .map(|(j, id)| match j {
                7..=9 => torn(id, 1000.0 * head_slowed[j - 7], 1.005),
                // At or above the base: a head faster than every recent run is judged on the
                // machine's record (`pass_floor`), which is not what this test is about.
                _ => torn(id, 1000.0 * (0.005 * noise.normal().abs()).exp(), 1.005),
            })
            .collect::<Vec<_>>(),
    ];
    let decision = decide(&base, &head, &history);
    for j in [0, 1, 2, 3, 10, 11] {
        let clean = result_of(&decision, &ids[j]);
        assert_eq!(clean.verdict, Verdict::Pass, "{clean:?}");
        assert!(clean.bound.unwrap().upper.unwrap() < 1.1, "{clean:?}");
    }
    a_faster_host_hides_no_slowdown(&ids, &base, &history, &mut noise, "b01");
}

/// A busy head run whose interference slowed most of the suite (eight of twelve benchmarks,
/// 15–60% in every sample, as the first busy recording's memory streamer did) centres the
/// others' moves among the slowed ones. Their spread is interference, which only adds time: it
/// says nothing against a `pass`, so a clean benchmark beside them passes on its own history
/// (it was `inconclusive`, banded by that spread). The same run of code 20% slower is not let
/// through, and a head host 12% faster for every benchmark still keeps a 25% slowdown, which
/// reads as 10% there (inside the 15% limit), from passing.
#[test]
fn a_run_slowed_in_most_benchmarks_leaves_the_clean_ones_to_pass_on_their_history() {
    let mut noise = Noise(29);
    let Quiet { ids, history, base } = twelve_quiet_benchmarks(&mut noise);
    let slowed = [1.15, 1.22, 1.3, 1.41, 1.6, 1.18, 1.35, 1.26];
    let head = vec![
        ids.iter()
            .enumerate()
            .map(|(j, id)| match j {
                1 => torn(id, 1000.0, 1.005),
                2 => torn(id, 1200.0, 1.005),
                4.. => torn(id, 1000.0 * slowed[j - 4], 1.005),
                _ => torn(id, 1000.0 * (0.005 * noise.normal()).exp(), 1.005),
            })
            .collect::<Vec<_>>(),
    ];
    let decision = decide(&base, &head, &history);
    let clean = result_of(&decision, "b01");
    assert_eq!(clean.verdict, Verdict::Pass, "{clean:?}");
    assert!(clean.bound.unwrap().upper.unwrap() < 1.1, "{clean:?}");
    let slower = result_of(&decision, "b02");
    assert!(
        !matches!(slower.verdict, Verdict::Pass | Verdict::Warn),
        "{slower:?}"
    );
    a_faster_host_hides_no_slowdown(&ids, &base, &history, &mut noise, "b05");
}

/// A benchmark a neighbour slowed by 50% in seven of its 21 runs (every third, as
/// `collections/HashMap::insert/100` on the first busy recording): the successive differences of
/// its history are mostly that gap, and a clean head read through them could not pass (it was
/// `inconclusive`, its band ±60%). Its clean runs scatter by 1%, and the head passes on them.
/// A head run slowed by as much again, or with code 20% slower, is not let through, and neither
/// is code 15% slower, at the limit.
#[test]
fn a_benchmark_a_neighbour_often_slows_passes_on_its_clean_runs() {
    let mut noise = Noise(43);
    let Quiet {
        ids,
        mut history,
        base,
    } = twelve_quiet_benchmarks(&mut noise);
    let often_slowed: Vec<f64> = (0..21)
        .map(|run| {
            let slowed = run % 3 == 1;
            1000f64.ln() + 0.01 * noise.normal() + if slowed { 0.5f64.ln_1p() } else { 0.0 }
        })
        .chain(std::iter::once(1000f64.ln()))
        .collect();
    history.insert("b00".to_owned(), often_slowed);
    let head = |b00: f64, noise: &mut Noise| {
        vec![
            ids.iter()
                .map(|id| match id.as_str() {
                    "b00" => torn(id, b00, 1.005),
                    _ => torn(id, 1000.0 * (0.005 * noise.normal()).exp(), 1.005),
                })
                .collect::<Vec<_>>(),
        ]
    };
    let clean = decide(&base, &head(1000.0, &mut noise), &history);
    let clean = result_of(&clean, "b00");
    assert_eq!(clean.verdict, Verdict::Pass, "{clean:?}");
    assert!(clean.bound.unwrap().upper.unwrap() < 1.06, "{clean:?}");
    for slower in [1500.0, 1200.0, 1150.0] {
        let decision = decide(&base, &head(slower, &mut noise), &history);
        let b00 = result_of(&decision, "b00");
        assert!(
            !matches!(b00.verdict, Verdict::Pass | Verdict::Warn),
            "{slower}: {b00:?}"
        );
    }
}

/// On a machine whose neighbour slows a different few benchmarks of each run by 40–60%, the
/// median of three head runs is read against the history's tails and the machine's record of
/// interference, which leave it unable to claim even a 25% slowdown. The best of the three
/// head runs is slowed only if all three were: a benchmark whose history shows that one run in
/// ten or fewer (two of its 21) is `regressed` on the best run against its clean spread, and
/// one whose history shows it in one run of three is not (three head runs could all have been
/// slowed). Identical code stays unclaimed either way.
#[test]
fn three_head_runs_claim_a_slowdown_on_their_best_run_where_the_history_is_rarely_slowed() {
    let mut noise = Noise(7);
    let ids: Vec<String> = (0..13).map(|j| format!("b{j:02}")).collect();
    // b00 slowed in runs 4 and 15, b12 in every third run, the others each in two runs of
    // their own: a different two or three benchmarks in most runs.
    let slowed = |j: usize, run: usize| match j {
        0 => run == 4 || run == 15,
        12 => run % 3 == 1,
        _ => run == j || run == j + 9,
    };
    let (history, base) = histories_and_base(&ids, &mut noise, |j, run| {
        if slowed(j, run) {
            (0.4 + 0.01 * j as f64).ln_1p()
        } else {
            0.0
        }
    });
    // Three head runs; in the second, b00's neighbour slowed it by half.
    let heads = |factor: f64, noise: &mut Noise| -> Vec<Vec<Measurement>> {
        (0..3)
            .map(|run| {
                ids.iter()
                    .map(|id| {
                        let clean = 1000.0 * (0.01 * noise.normal()).exp();
                        let ns = match id.as_str() {
                            "b00" | "b12" => clean * factor * if run == 1 { 1.5 } else { 1.0 },
                            _ => clean,
                        };
                        torn(id, ns, 1.005)
                    })
                    .collect()
            })
            .collect()
    };
    let slower = decide(&base, &heads(1.25, &mut noise), &history);
    let b00 = result_of(&slower, "b00");
    assert_eq!(b00.verdict, Verdict::Regressed, "{b00:?}");
    let lower = b00.bound.unwrap().lower.unwrap();
    assert!(lower > 1.15 && lower < 1.25, "{b00:?}");
    // Its report speaks of the claim it rests on: that claim calls any change at the limit
    // `regressed` (its bound sits 4% under the best run, the clean spread 1%), so it is not
    // "too noisy to gate"; the median's band, read from the history's tails, would have said
    // 2.6 times.
    assert_eq!(b00.detectable, Some(1.15), "{b00:?}");
    assert_eq!(b00.too_noisy, None, "{b00:?}");
    let b12 = result_of(&slower, "b12");
    assert_ne!(b12.verdict, Verdict::Regressed, "{b12:?}");
    assert!(
        !matches!(b12.verdict, Verdict::Pass | Verdict::Warn),
        "{b12:?}"
    );

    let identical = decide(&base, &heads(1.0, &mut noise), &history);
    for id in ["b00", "b12"] {
        let result = result_of(&identical, id);
        assert_ne!(result.verdict, Verdict::Regressed, "{result:?}");
    }
}

/// As unicode-segmentation's pull request did on a quiet machine: four benchmarks 38–68%
/// slower by the code, five 5–19% faster in the changed executable, six within −1% and +8%
/// (unchanged code, as the crate's were), and one 16% slower. The others' spread (11–12%) is then the change's, not the
/// machine's: its history never moved its benchmarks that far apart. Returns the history, the
/// base run and the head run.
fn half_the_suite_moved() -> (
    HashMap<String, Vec<f64>>,
    Vec<Measurement>,
    Vec<Measurement>,
) {
    let mut noise = Noise(46);
    let ids: Vec<String> = (0..16).map(|j| format!("b{j:02}")).collect();
    let history: HashMap<String, Vec<f64>> = ids
        .iter()
        .map(|id| {
            let mut runs: Vec<f64> = (0..19)
                .map(|_| 1000f64.ln() + 0.012 * noise.normal())
                .collect();
            runs.push(1000f64.ln());
            (id.clone(), runs)
        })
        .collect();
    let head_ratio = [
        1.68, 1.45, 1.39, 1.38, 0.80, 0.82, 0.92, 0.93, 0.95, 1.16, 1.02, 1.00, 1.04, 1.01, 0.99,
        1.08,
    ];
    let run = |ratio: &dyn Fn(usize) -> f64| {
        ids.iter()
            .enumerate()
            .map(|(j, id)| measurement(id, 1000.0 * ratio(j), 0.005, None))
            .collect::<Vec<_>>()
    };
    (history, run(&|_| 1.0), run(&|j| head_ratio[j]))
}

/// The unchanged benchmarks of [`half_the_suite_moved`].
const UNCHANGED_BESIDE: [&str; 6] = ["b10", "b11", "b12", "b13", "b14", "b15"];

#[test]
fn half_the_suite_moved_by_the_change_leaves_the_unchanged_beside_it_decided_from_one_head_run() {
    let (history, base, head) = half_the_suite_moved();
    let decision = decide(&[base], &[head], &history);
    let verdicts = verdicts(&decision);
    for id in UNCHANGED_BESIDE {
        assert_eq!(verdicts[id], Verdict::Pass, "{id}: {decision:#?}");
    }
    // A slowdown at the limit beside them is not let through, nor are the changed ones.
    for id in ["b00", "b01", "b02", "b03", "b09"] {
        assert_ne!(verdicts[id], Verdict::Pass, "{id}");
    }
}

#[test]
fn re_runs_judge_a_pass_that_rests_on_the_changes_floor_once_at_the_first_head_run() {
    use benchgate_gate::decision::HeadReruns;
    let (history, base, head) = half_the_suite_moved();
    let base = vec![base];
    let policy = Policy::default();
    // With re-runs to come, the first look passes what one head run alone does: more head
    // runs on the same host would not narrow a floor the change set, so the first look takes
    // the whole error rate of its `pass`.
    let mut reruns = HeadReruns::new(3);
    let look = reruns.look(
        &base,
        std::slice::from_ref(&head),
        &history,
        &policy,
        |_| true,
    );
    for id in UNCHANGED_BESIDE {
        let b = result_of(&look.decision, id);
        assert_eq!((b.verdict, b.rounds), (Verdict::Pass, 1), "{b:?}");
    }
    assert!(
        !look
            .open
            .iter()
            .any(|id| UNCHANGED_BESIDE.contains(&id.as_str()))
    );
    // b09, 16% slower, is run again; a later look may still claim its change, never pass it.
    assert!(look.open.iter().any(|id| id == "b09"), "{:?}", look.open);
    let faster: Vec<Measurement> = head
        .iter()
        .filter(|m| look.open.iter().any(|id| id == m.id.as_str()))
        .map(|m| {
            let ns = if m.id.as_str() == "b09" {
                1020.0
            } else {
                m.median.point
            };
            measurement(m.id.as_str(), ns, 0.005, None)
        })
        .collect();
    let heads = [head.clone(), faster.clone(), faster];
    let second = reruns.look(&base, &heads[..2], &history, &policy, |_| true);
    let third = reruns.look(&base, &heads, &history, &policy, |_| true);
    for look in [&second, &third] {
        let b09 = result_of(&look.decision, "b09");
        assert_ne!(b09.verdict, Verdict::Pass, "{b09:?}");
        assert_ne!(b09.verdict, Verdict::Warn, "{b09:?}");
    }
}

/// hex 0.4.3's benches take `src/lib.rs` as their input (`Throughput::Bytes(DATA.len())`); the
/// head that made `encode` faster grew that file from 16,274 to 17,671 bytes, so every
/// benchmark of the head does 8.6% more work an iteration, third-party code included. Compared
/// per iteration, `ab` read the unchanged decoders 4–9% slower. They are compared per byte.
#[test]
fn a_head_that_does_more_work_an_iteration_is_compared_per_unit_of_work() {
    let mut cases = quiet(12);
    cases.push(Case {
        id: "decode/data_encoding",
        slowdown: 0.0,
        round_noise: 0.01,
        throughput: true,
    });
    cases.push(Case {
        id: "decode/hex",
        slowdown: 0.3,
        round_noise: 0.01,
        throughput: true,
    });
    let (base, mut head) = rounds(&cases, 3, 46);
    let (base_work, head_work) = (16_274u64, 17_671u64);
    let grown = head_work as f64 / base_work as f64;
    let with_work = |rounds: &mut Vec<Vec<Measurement>>, amount: u64, scale: f64| {
        for m in rounds.iter_mut().flatten() {
            if m.throughput.is_some() {
                *m = measurement(
                    m.id.as_str(),
                    m.median.point * scale,
                    0.005,
                    Some(Throughput::Bytes(amount)),
                );
            }
        }
    };
    let mut base = base;
    with_work(&mut base, base_work, 1.0);
    // The head's time an iteration grows with its input: the same speed per byte.
    with_work(&mut head, head_work, grown);
    let decision = decide(&base, &head, &HashMap::new());
    let v = verdicts(&decision);
    assert_eq!(v["decode/data_encoding"], Verdict::Pass);
    assert_eq!(v["decode/hex"], Verdict::Regressed);
    let unchanged = summary_entry(&decision, "decode/data_encoding");
    let ratio = unchanged["ratio"].as_f64().unwrap();
    assert!(
        (ratio - 1.0).abs() < 0.02,
        "per byte, not per iteration: {ratio}"
    );
    assert_eq!(unchanged["throughput"]["amount"], base_work);
    assert_eq!(unchanged["head_amount"], head_work);
    let slower = summary_entry(&decision, "decode/hex");
    let slower_ratio = slower["ratio"].as_f64().unwrap();
    assert!((slower_ratio - 1.3).abs() < 0.03, "{slower_ratio}");
    // Each side's rate is its own work over its own time (the head's at its 17,671 bytes):
    // the two rates differ as the change says, not by the 8.6% more bytes.
    let row = comment_row(&decision, "decode/data_encoding");
    let cells: Vec<&str> = row.split(" | ").collect();
    let rate = |cell: &str| cell.trim_end_matches(" GiB/s").parse::<f64>().unwrap();
    let rates = rate(cells[2]) / rate(cells[1]);
    assert!((rates * ratio - 1.0).abs() < 0.002, "{row}");
    // The benchmarks whose work did not change keep their own and say nothing.
    assert_eq!(summary_entry(&decision, "q00").get("head_amount"), None);
    let context = benchgate_gate::report::Context::default();
    let comment = benchgate_gate::report::render_markdown(&decision, &context, &Policy::default());
    assert!(
        comment.contains(
            "Work per iteration changed: `decode/data_encoding` and `decode/hex` do 17,671 bytes an iteration in the head, 16,274 in the base (+8.6%). They are compared per unit of work, as throughput, so a bigger input is not read as a slowdown."
        ),
        "{comment}"
    );
    // perf-summary.json reads back to the same rows, the head's amount with them.
    let json = benchgate_gate::report::summary_json(&decision, &context, &Policy::default());
    let read = benchgate_gate::report::read_summary(
        std::path::Path::new("perf-summary.json"),
        &json.to_string(),
    )
    .unwrap();
    assert_eq!(
        benchgate_gate::report::render_markdown(&read.decision, &read.context, &read.policy),
        comment
    );
}
