//! Evaluation of a heuristic on a table (spec 7.2, PyTorch's `DecisionEvaluator`), with the
//! metric names PyTorch prints plus ours, as one typed [`Metrics`] per set.
//!
//! Per row: the leaf's class fractions `p`, `pred = argmax p` (first on ties), `max_prob`.
//! The row is **unsure** when its leaf is unsafe, `pred` was not measured for the input (or,
//! with [`EvalSettings::inf_unavailable`], failed for it: timed `inf`), or
//! `max_prob <= threshold` (PyTorch exempts `max_prob == 1.0` in evaluation only; we keep that
//! in `--upstream` mode and drop it otherwise, where the runtime rule is the truth);
//! otherwise **correct** when `pred` is the winner, else **wrong**.
//!
//! Our metrics: `oracle_gmean_speedup_over_default` (always picking the best), `pct_of_oracle`
//! (the heuristic's geomean speedup over the default with unsure rows taking the default, in %
//! of the oracle's), `pct_of_oracle_autotune` (unsure rows autotuned, i.e. take the best),
//! `regret` (time lost to wrong picks over the sum of best times, unsure autotuned),
//! `harmful_wrong` (wrong picks more than 10% slower than the best), `decided_share`.

use std::collections::BTreeMap;

use serde::ser::{Serialize, SerializeMap, Serializer};

pub use crate::score::{gmean, pairwise_sum};
use crate::table::Table;

/// A metric's value as the metric files write it: counts and ratios are all JSON numbers of
/// type `f64`.
trait MetricValue: Copy {
    fn as_f64(self) -> f64;
}

impl MetricValue for usize {
    fn as_f64(self) -> f64 {
        self as f64
    }
}

impl MetricValue for f64 {
    fn as_f64(self) -> f64 {
        self
    }
}

/// Declares [`Metrics`] and its by-name view from one list, so that a field and its name in
/// the files can never disagree.
macro_rules! metrics_struct {
    ($( $(#[doc = $doc:literal])* $field:ident: $ty:ty, )*) => {
        /// Every metric of one heuristic on one set, named as in `NAME.metrics.json` and the
        /// model's `metrics`: PyTorch's ([`UPSTREAM_METRICS`], in its order) and ours
        /// ([`EXTRA_METRICS`]). Counts are numbers of rows; ratios are finite (see
        /// [`metrics_from`]). Serialized as an object of `f64`s with keys sorted by name.
        #[derive(Debug, Clone, Copy, PartialEq, Default)]
        pub struct Metrics {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl Metrics {
            /// Every metric as `(name, value)`, PyTorch's first, in [`UPSTREAM_METRICS`] then
            /// [`EXTRA_METRICS`] order.
            pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64)> {
                [$( (stringify!($field), MetricValue::as_f64(self.$field)) ),*].into_iter()
            }
        }
    };
}

metrics_struct! {
    /// Rows where the heuristic picked the winner.
    correct: usize,
    /// Rows where it picked another choice.
    wrong: usize,
    /// Rows where it gave no answer.
    unsure: usize,
    /// Rows of the set.
    total: usize,
    /// Largest `time(pick) / time(best)` of a wrong pick (0: none).
    wrong_max_speedup: f64,
    /// Geomean of `time(pick) / time(best)` over wrong picks (0: none).
    wrong_gmean_speedup: f64,
    /// Rows whose winner is in the top-k list (or always included).
    top_k_correct: usize,
    /// Rows whose top-k list misses the winner but holds a measured choice.
    top_k_wrong: usize,
    /// Largest `time(best of the list) / time(best)` of a top-k miss.
    wrong_max_speedup_k: f64,
    /// Geomean of `time(best of the list) / time(best)` over top-k misses.
    wrong_gmean_speedup_k: f64,
    /// Rows whose top-k list holds no measured choice.
    top_k_unsure: usize,
    /// Largest speedup over the default (unsure rows count 1).
    max_speedup_over_default: f64,
    /// Geomean speedup over the default (unsure rows count 1).
    gmean_speedup_over_default: f64,
    /// Smallest speedup over the default: how much the default beats the heuristic at worst.
    max_speedup_default_over_heuristic: f64,
    /// Decided rows whose pick is not the default.
    non_default_predictions: usize,
    /// Decided rows where the default is faster than the pick.
    default_better: usize,
    /// Geomean speedup over the default of always picking the best (1: no comparable row).
    oracle_gmean_speedup_over_default: f64,
    /// Geomean speedup over the default, unsure rows taking the default, in % of the oracle's.
    pct_of_oracle: f64,
    /// The same with unsure rows autotuned (taking the best).
    pct_of_oracle_autotune: f64,
    /// Time lost to wrong picks over the sum of best times.
    regret: f64,
    /// Wrong picks more than [`HARM_FACTOR`] slower than the best.
    harmful_wrong: usize,
    /// Share of rows decided (correct or wrong).
    decided_share: f64,
}

impl Metrics {
    /// One metric by its name in the files (`None`: no metric of that name).
    pub fn get(&self, name: &str) -> Option<f64> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The metrics as the name-to-value map the model schema stores
    /// (`ah_core::model::Model::metrics`).
    pub fn to_map(&self) -> BTreeMap<String, f64> {
        self.iter().map(|(n, v)| (n.to_string(), v)).collect()
    }
}

/// Metrics per set (`train`, `val`, `test`, extra sets) as the model schema stores them
/// (`ah_core::model::Model::metrics`): name-to-value maps, the same numbers as the metrics file.
pub fn model_metrics(sets: &BTreeMap<String, Metrics>) -> BTreeMap<String, BTreeMap<String, f64>> {
    sets.iter()
        .map(|(set, m)| (set.clone(), m.to_map()))
        .collect()
}

impl Serialize for Metrics {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let sorted: BTreeMap<&str, f64> = self.iter().collect();
        let mut map = serializer.serialize_map(Some(sorted.len()))?;
        for (k, v) in sorted {
            map.serialize_entry(k, &v)?;
        }
        map.end()
    }
}

/// PyTorch's metric names, in its order.
pub const UPSTREAM_METRICS: [&str; 16] = [
    "correct",
    "wrong",
    "unsure",
    "total",
    "wrong_max_speedup",
    "wrong_gmean_speedup",
    "top_k_correct",
    "top_k_wrong",
    "wrong_max_speedup_k",
    "wrong_gmean_speedup_k",
    "top_k_unsure",
    "max_speedup_over_default",
    "gmean_speedup_over_default",
    "max_speedup_default_over_heuristic",
    "non_default_predictions",
    "default_better",
];

/// Our metric names.
pub const EXTRA_METRICS: [&str; 6] = [
    "oracle_gmean_speedup_over_default",
    "pct_of_oracle",
    "pct_of_oracle_autotune",
    "regret",
    "harmful_wrong",
    "decided_share",
];

pub use crate::score::HARM_FACTOR;

/// What evaluation needs besides the tree.
#[derive(Debug, Clone)]
pub struct EvalSettings {
    /// Default choice (speedup-over-default metrics).
    pub default_choice: Option<String>,
    /// `k` of the top-k metrics.
    pub top_k: usize,
    /// Choices always added to the top-k list.
    pub always_included: Vec<String>,
    /// PyTorch's evaluation exemption: `max_prob == 1.0` is never unsure.
    pub exempt_certain: bool,
    /// A choice timed `inf` for an input cannot be offered for it at run time (a multi-kernel
    /// leaves out variants that cannot run the input): picking it makes the row unsure (the
    /// runtime answers "not in choices" and autotunes), as a choice not measured for it does.
    /// Off (the default, PyTorch's semantics): picking it is a wrong, infinitely slow pick.
    pub inf_unavailable: bool,
}

impl EvalSettings {
    /// Whether a choice timed `t` for an input is not available for it: not measured (`NaN`),
    /// or failed (`inf`) with [`EvalSettings::inf_unavailable`].
    pub fn unavailable(&self, t: f64) -> bool {
        t.is_nan() || (self.inf_unavailable && t == f64::INFINITY)
    }
}

/// A tree's view for evaluation: per node, class fractions for leaves.
pub trait LeafModel {
    /// The leaf node a row reaches.
    fn leaf(&self, row: &[f64]) -> usize;
    /// Class fractions of a leaf (over [`LeafModel::classes`]).
    fn leaf_value(&self, leaf: usize) -> &[f64];
    /// Class names in index order.
    fn classes(&self) -> &[String];
    /// The leaf of every row of `table`, in order ([`LeafModel::leaf`] of each; a model can
    /// route many rows faster than one at a time).
    fn leaves(&self, table: &Table) -> Vec<usize> {
        (0..table.len()).map(|i| self.leaf(table.row(i))).collect()
    }
}

/// Per-row predictions, computed once per (model, table).
#[derive(Debug, Clone)]
pub struct RowPredictions {
    /// Leaf per row.
    pub leaf: Vec<usize>,
    /// Predicted class per row.
    pub pred: Vec<usize>,
    /// Its probability.
    pub max_prob: Vec<f64>,
    /// Table choice column of each class (`None`: not a choice of this table).
    pub class_col: Vec<Option<usize>>,
    /// Rows that are unsure whatever their leaf says (the range guard); empty: none.
    pub forced_unsure: Vec<bool>,
}

/// Routes every row.
pub fn predict_rows(model: &dyn LeafModel, table: &Table) -> RowPredictions {
    let leaf = model.leaves(table);
    let n = leaf.len();
    let mut pred = Vec::with_capacity(n);
    let mut max_prob = Vec::with_capacity(n);
    for &l in &leaf {
        let v = model.leaf_value(l);
        let (mut bi, mut bp) = (0, f64::NEG_INFINITY);
        for (c, &p) in v.iter().enumerate() {
            if p > bp {
                bi = c;
                bp = p;
            }
        }
        pred.push(bi);
        max_prob.push(bp);
    }
    let class_col = model
        .classes()
        .iter()
        .map(|c| table.choice_index(c))
        .collect();
    RowPredictions {
        leaf,
        pred,
        max_prob,
        class_col,
        forced_unsure: Vec::new(),
    }
}

/// Outcome of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The heuristic picked the winner.
    Correct,
    /// It picked another choice.
    Wrong,
    /// It gave no answer.
    Unsure,
}

/// Why a row is [`Outcome::Unsure`]: the first cause that holds, in the order the runtime
/// meets them (the row's guard, the leaf, the leaf's confidence, then whether the pick can be
/// offered for the input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsureCause {
    /// [`RowPredictions::forced_unsure`] (the range guard, for a model that uses it).
    Forced,
    /// The row's leaf is unsafe.
    UnsafeLeaf,
    /// `max_prob <= threshold` (less the [`EvalSettings::exempt_certain`] exemption).
    LowConfidence,
    /// The pick was not measured for the input, or failed for it with
    /// [`EvalSettings::inf_unavailable`] (the runtime: not among the choices).
    Unavailable,
}

/// Why row `i` is unsure at a threshold, `None` when it is decided ([`outcomes`] in detail).
pub fn unsure_cause(
    rp: &RowPredictions,
    table: &Table,
    i: usize,
    threshold: f64,
    unsafe_leaf: &dyn Fn(usize) -> bool,
    s: &EvalSettings,
) -> Option<UnsureCause> {
    let col = rp.class_col[rp.pred[i]];
    let avail = col.is_some_and(|c| !s.unavailable(table.time(i, c)));
    let p = rp.max_prob[i];
    let low = p <= threshold && !(s.exempt_certain && p == 1.0);
    if rp.forced_unsure.get(i).copied().unwrap_or(false) {
        Some(UnsureCause::Forced)
    } else if unsafe_leaf(rp.leaf[i]) {
        Some(UnsureCause::UnsafeLeaf)
    } else if low {
        Some(UnsureCause::LowConfidence)
    } else if !avail {
        Some(UnsureCause::Unavailable)
    } else {
        None
    }
}

/// Row outcomes at a threshold (`s`: [`EvalSettings::exempt_certain`] and
/// [`EvalSettings::inf_unavailable`]); [`unsure_cause`] says why a row is unsure.
pub fn outcomes(
    rp: &RowPredictions,
    table: &Table,
    threshold: f64,
    unsafe_leaf: &dyn Fn(usize) -> bool,
    s: &EvalSettings,
) -> Vec<Outcome> {
    (0..table.len())
        .map(|i| {
            if unsure_cause(rp, table, i, threshold, unsafe_leaf, s).is_some() {
                Outcome::Unsure
            } else if rp.class_col[rp.pred[i]] == Some(table.actual_winner[i] as usize) {
                Outcome::Correct
            } else {
                Outcome::Wrong
            }
        })
        .collect()
}

/// PyTorch's `get_safe_proba` on the validation set (threshold 0): the probability of the
/// `(n_wrong - allowed)`-th wrong prediction, or 0 when few enough are wrong.
pub fn safe_proba(
    rp: &RowPredictions,
    table: &Table,
    unsafe_leaf: &dyn Fn(usize) -> bool,
    wrong_pct: f64,
    s: &EvalSettings,
) -> f64 {
    let out = outcomes(rp, table, 0.0, unsafe_leaf, s);
    let mut wrong: Vec<f64> = out
        .iter()
        .zip(&rp.max_prob)
        .filter(|(o, _)| **o == Outcome::Wrong)
        .map(|(_, p)| *p)
        .collect();
    wrong.sort_by(f64::total_cmp);
    let allowed = (table.len() as f64 * wrong_pct) as usize;
    if allowed >= wrong.len() {
        return 0.0;
    }
    wrong[(wrong.len() - allowed).min(wrong.len() - 1)]
}

/// [`gmean`], 0 for an empty list, as PyTorch's evaluator reports it.
fn gmean_or_zero(a: &[f64]) -> f64 {
    gmean(a).unwrap_or(0.0)
}

fn max_or_zero(a: &[f64]) -> f64 {
    a.iter()
        .copied()
        .fold(None, |m: Option<f64>, x| {
            Some(m.map_or(x, |m| if x > m { x } else { m }))
        })
        .unwrap_or(0.0)
}

fn min_or_zero(a: &[f64]) -> f64 {
    a.iter()
        .copied()
        .fold(None, |m: Option<f64>, x| {
            Some(m.map_or(x, |m| if x < m { x } else { m }))
        })
        .unwrap_or(0.0)
}

/// One row's answer, for [`metrics_from`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowAnswer {
    /// Correct, wrong or unsure.
    pub outcome: Outcome,
    /// Table column of the predicted choice (`None`: not a choice of this table).
    pub pred_col: Option<usize>,
}

/// Every metric for one set of a decision tree.
pub fn evaluate(
    model: &dyn LeafModel,
    rp: &RowPredictions,
    table: &Table,
    threshold: f64,
    unsafe_leaf: &dyn Fn(usize) -> bool,
    s: &EvalSettings,
) -> Metrics {
    let out = outcomes(rp, table, threshold, unsafe_leaf, s);
    let answers: Vec<RowAnswer> = (0..table.len())
        .map(|i| RowAnswer {
            outcome: out[i],
            pred_col: rp.class_col[rp.pred[i]],
        })
        .collect();
    let mut order: Vec<usize> = (0..model.classes().len()).collect();
    let top_k = |i: usize, sel: &mut Vec<usize>| {
        // Classes by probability (ties by index), positive and measured, first k.
        let v = model.leaf_value(rp.leaf[i]);
        order.sort_by(|&a, &b| v[b].total_cmp(&v[a]).then(a.cmp(&b)));
        for &c in order.iter() {
            if sel.len() >= s.top_k {
                break;
            }
            if v[c] > 0.0 {
                if let Some(col) = rp.class_col[c] {
                    if !s.unavailable(table.time(i, col)) {
                        sel.push(col);
                    }
                }
            }
        }
    };
    metrics_from(table, &answers, top_k, s)
}

/// Every metric from per-row answers; `top_k(i, sel)` pushes row `i`'s top-k table columns
/// (before the always-included choices).
pub fn metrics_from(
    table: &Table,
    answers: &[RowAnswer],
    mut top_k: impl FnMut(usize, &mut Vec<usize>),
    s: &EvalSettings,
) -> Metrics {
    let dc = s
        .default_choice
        .as_deref()
        .and_then(|d| table.choice_index(d));
    let always: Vec<usize> = s
        .always_included
        .iter()
        .filter_map(|c| table.choice_index(c))
        .collect();
    let mut tally = Tally::new(table.len());
    let mut sel: Vec<usize> = Vec::with_capacity(s.top_k);
    for i in 0..table.len() {
        let row = RowTimes::of(table, i, answers[i], dc);
        tally.outcome(&row, s.default_choice.is_some(), dc);
        sel.clear();
        top_k(i, &mut sel);
        tally.top_k(table, i, &row, &sel, &always, s);
        tally.oracle(&row);
    }
    tally.finish(table.len())
}

/// One row's times as [`metrics_from`] compares them.
struct RowTimes {
    outcome: Outcome,
    /// Table column of the pick.
    pick: Option<usize>,
    /// Best time.
    best: f64,
    /// Time of the pick (`NaN`: no pick of this table).
    picked: f64,
    /// Time of the default (`NaN`: no default, or not measured).
    default: f64,
}

impl RowTimes {
    fn of(table: &Table, i: usize, answer: RowAnswer, dc: Option<usize>) -> Self {
        RowTimes {
            outcome: answer.outcome,
            pick: answer.pred_col,
            best: table.best_time(i),
            picked: answer.pred_col.map_or(f64::NAN, |c| table.time(i, c)),
            default: dc.map_or(f64::NAN, |d| table.time(i, d)),
        }
    }
}

/// The running sums and lists of [`metrics_from`], one row at a time.
#[derive(Default)]
struct Tally {
    correct: usize,
    wrong: usize,
    unsure: usize,
    speedups_wrong: Vec<f64>,
    /// Speedup over the default per comparable row (unsure rows count 1).
    sod: Vec<f64>,
    non_default: usize,
    default_better: usize,
    harmful: usize,
    tk_correct: usize,
    tk_wrong: usize,
    tk_unsure: usize,
    wrong_k: Vec<f64>,
    /// Oracle comparison: default over best, over the pick (unsure: default), over the pick
    /// (unsure: best), on rows whose default and best are finite (`n_ok` of them).
    lsum_best: Vec<f64>,
    lsum_def: Vec<f64>,
    lsum_auto: Vec<f64>,
    n_ok: usize,
    /// Time lost to wrong picks and the sum of best times.
    lost: f64,
    best_sum: f64,
}

impl Tally {
    fn new(n: usize) -> Self {
        Tally {
            sod: Vec::with_capacity(n),
            ..Tally::default()
        }
    }

    /// Correct / wrong / unsure and the speedup over the default.
    fn outcome(&mut self, r: &RowTimes, has_default: bool, dc: Option<usize>) {
        match r.outcome {
            Outcome::Correct => self.correct += 1,
            Outcome::Wrong => {
                self.wrong += 1;
                self.speedups_wrong.push(r.picked / r.best);
                if r.picked > HARM_FACTOR * r.best {
                    self.harmful += 1;
                }
            }
            Outcome::Unsure => self.unsure += 1,
        }
        if r.outcome == Outcome::Unsure {
            self.sod.push(1.0);
            return;
        }
        if has_default && (r.pick.is_none() || r.pick != dc) {
            self.non_default += 1;
        }
        if dc.is_some() {
            let td = r.default;
            if !td.is_nan() && !td.is_infinite() {
                let sp = td / r.picked;
                self.sod.push(sp);
                if sp < 1.0 {
                    self.default_better += 1;
                }
            }
        }
    }

    /// Whether the top-k list `sel` (plus `always`) holds the winner.
    fn top_k(
        &mut self,
        table: &Table,
        i: usize,
        r: &RowTimes,
        sel: &[usize],
        always: &[usize],
        s: &EvalSettings,
    ) {
        let win = table.actual_winner[i] as usize;
        if sel.contains(&win) || always.contains(&win) {
            self.tk_correct += 1;
            return;
        }
        let mut min_t = f64::INFINITY;
        let mut has = false;
        for &c in sel.iter().chain(always) {
            let t = table.time(i, c);
            if !s.unavailable(t) {
                has = true;
                min_t = min_t.min(t);
            }
        }
        if has {
            self.tk_wrong += 1;
            self.wrong_k.push(min_t / r.best);
        } else {
            self.tk_unsure += 1;
        }
    }

    /// Oracle rows (default and best finite) and the regret's sums.
    fn oracle(&mut self, r: &RowTimes) {
        let (td, t_true, t_pred) = (r.default, r.best, r.picked);
        let unsure = r.outcome == Outcome::Unsure;
        if td.is_finite() && t_true.is_finite() && t_true > 0.0 {
            self.n_ok += 1;
            let chosen_default = if unsure { td } else { t_pred };
            let chosen_auto = if unsure { t_true } else { t_pred };
            self.lsum_best.push(td / t_true);
            self.lsum_def.push(td / chosen_default);
            self.lsum_auto.push(td / chosen_auto);
        }
        if t_true.is_finite() {
            self.best_sum += t_true;
            if r.outcome == Outcome::Wrong {
                self.lost += if t_pred.is_finite() {
                    t_pred - t_true
                } else {
                    f64::INFINITY
                };
            }
        }
    }

    /// The metrics of the `n` rows tallied.
    fn finish(self, n: usize) -> Metrics {
        let oracle = gmean_or_zero(&self.lsum_best);
        let n_ok = self.n_ok;
        let pct = |a: &[f64]| {
            if n_ok == 0 {
                100.0
            } else {
                100.0 * gmean_or_zero(a) / oracle
            }
        };
        let (correct, wrong) = (self.correct, self.wrong);
        Metrics {
            correct,
            wrong,
            unsure: self.unsure,
            total: n,
            wrong_max_speedup: finite(max_or_zero(&self.speedups_wrong)),
            wrong_gmean_speedup: finite(gmean_or_zero(&self.speedups_wrong)),
            top_k_correct: self.tk_correct,
            top_k_wrong: self.tk_wrong,
            wrong_max_speedup_k: finite(max_or_zero(&self.wrong_k)),
            wrong_gmean_speedup_k: finite(gmean_or_zero(&self.wrong_k)),
            top_k_unsure: self.tk_unsure,
            max_speedup_over_default: finite(max_or_zero(&self.sod)),
            gmean_speedup_over_default: finite(gmean_or_zero(&self.sod)),
            max_speedup_default_over_heuristic: finite(min_or_zero(&self.sod)),
            non_default_predictions: self.non_default,
            default_better: self.default_better,
            oracle_gmean_speedup_over_default: finite(if n_ok == 0 { 1.0 } else { oracle }),
            pct_of_oracle: finite(pct(&self.lsum_def)),
            pct_of_oracle_autotune: finite(pct(&self.lsum_auto)),
            regret: finite(if self.best_sum > 0.0 {
                self.lost / self.best_sum
            } else {
                0.0
            }),
            harmful_wrong: self.harmful,
            decided_share: finite(if n == 0 {
                0.0
            } else {
                (correct + wrong) as f64 / n as f64
            }),
        }
    }
}

/// JSON has no inf or NaN (serde_json would write `null`, which the model schema cannot read
/// back): an infinite ratio (a pick that failed) is written as the largest `f64`, an undefined
/// one (an input whose every choice failed, kept by --upstream) as 0.
fn finite(v: f64) -> f64 {
    if v.is_nan() {
        0.0
    } else if v.is_infinite() {
        if v > 0.0 {
            f64::MAX
        } else {
            f64::MIN
        }
    } else {
        v
    }
}

#[cfg(test)]
mod tests;
