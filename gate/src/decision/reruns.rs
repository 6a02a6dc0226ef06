//! A stored baseline's head re-run: after the first head run, the benchmarks left
//! `inconclusive`, and those `regressed` (to be confirmed), run again on the head, the head's
//! runs are pooled (their median), and the comparison is decided again, up to a plan's last
//! look. Each look spends its share of the error rates ([`Plan::Reruns`]); a benchmark keeps
//! the verdict of the look that decided it, and a claimed regression stands unless a later
//! look decides it otherwise or brings the head's median back under the limit, so every
//! verdict is one some look reached and stopping whenever the runner likes cannot raise
//! either error rate.

use std::collections::HashMap;

use benchgate_core::Measurement;

use super::{Input, Mode, NoiseSource, evaluate_with};
use crate::noise::is_short_history;
use crate::policy::Policy;
use crate::sequential::Plan;
use crate::verdict::{BenchmarkResult, Decision, Verdict, overall};

/// The looks of one stored-baseline comparison with head re-runs.
#[derive(Debug, Clone)]
pub struct HeadReruns {
    max: usize,
    decided: HashMap<String, BenchmarkResult>,
    /// The benchmarks the last look left open, as it judged them: one its re-run did not
    /// measure keeps that result (judging it again at the same look would spend its share
    /// twice).
    open: HashMap<String, BenchmarkResult>,
    /// Regressions claimed at a look and run again to be confirmed, each as its newest look
    /// claimed it: it stands unless a later look decides the benchmark otherwise, or leaves it
    /// undecided under the limit.
    claimed: HashMap<String, BenchmarkResult>,
    /// The budgets as the first head run, the whole suite's, met them.
    budgets: Option<Vec<crate::budget::BudgetResult>>,
    /// Benchmarks whose `pass` was judged once, at the first look, with all its error rate
    /// (it rested on the others' floor, which head runs in the same job cannot narrow), and
    /// not passed there: a later look may still claim a change, never a `pass` or `warn`.
    pass_judged: std::collections::HashSet<String>,
}

/// One look: the decision so far, and the benchmarks another head run could still decide.
#[derive(Debug, Clone)]
pub struct Look {
    /// Every benchmark, each with the verdict of the look that decided it.
    pub decision: Decision,
    /// The ids to run again: `inconclusive` or `regressed` (to be confirmed) at this look with
    /// noise calibrated by history, in its newest head run, and allowed by the caller; empty at
    /// the last look. In `decision`, a regression some look claimed reads `regressed` until a
    /// look decides it otherwise.
    pub open: Vec<String>,
}

impl HeadReruns {
    /// Looks after each head run, up to `max` head runs (at least 1).
    pub fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            decided: HashMap::new(),
            open: HashMap::new(),
            claimed: HashMap::new(),
            budgets: None,
            pass_judged: std::collections::HashSet::new(),
        }
    }

    /// The plan every look is judged with.
    pub fn plan(&self) -> Plan {
        if self.max == 1 {
            Plan::Fixed
        } else {
            Plan::Reruns { max: self.max }
        }
    }

    /// Decides the base run (`base`, its one round) against the head runs so far (the first
    /// run whole, each later one the benchmarks the look before left open). `rerunnable` says which benchmarks another head
    /// run can measure (the bench command's own, not a custom metric's file); the others are
    /// decided at this look.
    pub fn look(
        &mut self,
        base: &[Vec<Measurement>],
        heads: &[Vec<Measurement>],
        history: &HashMap<String, Vec<f64>>,
        policy: &Policy,
        rerunnable: impl Fn(&BenchmarkResult) -> bool,
    ) -> Look {
        let input = Input {
            mode: Mode::StoredBaseline,
            base_rounds: base,
            head_rounds: heads,
            history,
        };
        let mut decision = evaluate_with(&input, policy, self.plan());
        let runs = heads.len();
        // A benchmark with a short history (`MIN_SHORT_HISTORY` to `MIN_HISTORY` runs) is
        // judged once, at the first look, with all its error rates: its band is the assumed
        // level's as much as its own, and more head runs narrow only the head's part of it
        // (on the idle recordings they decided 3–4% of throughput comparisons with 2.95 head
        // runs, against 76–83% at one). Known before any look, so no look is chosen by the data.
        let short = |id: &str| history.get(id).is_some_and(|h| is_short_history(h.len()));
        // A benchmark whose `pass` rests on the others' floor (`pass_on_floor`: how far the
        // others moved in this job, which its re-runs on the same host do not change) cannot
        // be passed by more head runs that one could not pass: spread over the looks, its
        // share only widened the bound (docs/accuracy.md, "Half the suite moved by the
        // change"). Its `pass` is judged once, here, with all its error rate; a change is
        // still claimed look by look. Read from its history and the others' moves (its own
        // head only says which floor applies: a head faster than its whole history takes the
        // machine's), never from how near its change is to the limit.
        let floor_bound = |b: &BenchmarkResult| b.pass_on_floor && !short(&b.id);
        let first = runs == 1 && self.max > 1;
        let once = (first
            && decision
                .benchmarks
                .iter()
                .any(|b| short(&b.id) || floor_bound(b)))
        .then(|| evaluate_with(&input, policy, Plan::Fixed));
        let mut open = Vec::new();
        let last_open = std::mem::take(&mut self.open);
        for b in &mut decision.benchmarks {
            if let Some(frozen) = self.decided.get(&b.id) {
                *b = frozen.clone();
                continue;
            }
            let at_once = once
                .as_ref()
                .and_then(|d| d.benchmarks.iter().find(|o| o.id == b.id));
            if let Some(at_once) = at_once.filter(|_| short(&b.id)) {
                *b = at_once.clone();
            } else if first && floor_bound(b) && b.verdict == Verdict::Inconclusive {
                match at_once.filter(|o| o.verdict == Verdict::Pass) {
                    Some(passed) => *b = passed.clone(),
                    None => {
                        self.pass_judged.insert(b.id.clone());
                    }
                }
            }
            if b.rounds != runs
                && let Some(before) = last_open.get(&b.id)
            {
                *b = before.clone();
            }
            // Its `pass` was judged at the first look: the look before stands.
            if matches!(b.verdict, Verdict::Pass | Verdict::Warn)
                && self.pass_judged.contains(&b.id)
                && let Some(before) = last_open.get(&b.id)
            {
                *b = before.clone();
            }
            // A regression runs again too, to be confirmed: one head run's jump (a neighbour,
            // a hash seed) reads as a regression at the first look, and the median of three
            // does not. The claim stands unless a later look decides otherwise (`pass`,
            // `warn`, `improved`) or brings it back under the limit (below): every verdict
            // left is one some look reached, so the union bound over the looks holds both
            // error rates.
            if b.verdict == Verdict::Regressed {
                self.claimed.insert(b.id.clone(), b.clone());
            }
            // An uncalibrated benchmark never passes, however many head runs it gets (its
            // assumed noise is its floor): only history's can be decided by another run. One
            // with a short history is judged once, but a regression it claims there runs
            // again to be confirmed like any other: hex's `decode/hex`, 6 runs of history,
            // read 49.3% slower in one head run whose process ran it at half speed, where
            // `ab` of the same code read it 0.3% faster. Every later look is reached only
            // through that claim, made with all the error rate, so no claim is added.
            let again = matches!(b.verdict, Verdict::Inconclusive | Verdict::Regressed)
                && b.noise_source == Some(NoiseSource::History)
                && b.ratio.is_some()
                && b.rounds == runs
                && runs < self.max
                && (!short(&b.id)
                    || b.verdict == Verdict::Regressed
                    || self.claimed.contains_key(&b.id))
                && rerunnable(b);
            if again {
                open.push(b.id.clone());
                self.open.insert(b.id.clone(), b.clone());
            }
            // A claim stands while later looks leave the benchmark undecided and its pooled
            // change still beyond the limit, and should the runner stop here. Once the median
            // of the head's runs is back under the limit, the claim was one run's jump, and the
            // newest look's `inconclusive` is the verdict: it neither passes nor claims, so
            // neither error rate can grow.
            if b.verdict == Verdict::Inconclusive
                && let Some(claim) = self.claimed.get(&b.id)
                && b.ratio.is_none_or(|r| r >= b.limit)
            {
                *b = claim.clone();
            }
            if !again {
                self.decided.insert(b.id.clone(), b.clone());
            }
        }
        // Budgets are absolute limits on the head, judged on its whole first run; a re-run
        // measures only some benchmarks.
        decision.budgets = self
            .budgets
            .get_or_insert_with(|| decision.budgets.clone())
            .clone();
        decision.verdict = overall(&decision.benchmarks);
        decision.rounds = runs;
        Look { decision, open }
    }
}
