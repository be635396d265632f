//! Leaf confidence and the cost-aware mode's threshold: how far a leaf is trusted (the Wilson
//! lower bound of its majority share, or minus its expected time lost), which cut on that
//! confidence minimises the cross-validated cost per input within the harm bound
//! ([`choose_threshold`]), and how that cut transfers to the refitted model
//! ([`transfer_threshold`]).

use crate::cart::CartTree;
use ah_eval::metrics::{self as eval, EvalSettings, Outcome};
use ah_eval::table::Table;

use super::fitted::Fitted;
use super::params::{Confidence, CostAwareParams};

/// Wilson score lower bound of `k` successes in `n` trials.
pub fn wilson_lower(k: f64, n: f64, z: f64) -> f64 {
    if n <= 0.0 {
        return 0.0;
    }
    let p = k / n;
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let margin = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - margin) / (1.0 + z2 / n)).max(0.0)
}

/// Pseudo-inputs of the prior of [`Confidence::Loss`].
pub const LOSS_PRIOR_WEIGHT: f64 = 4.0;

/// Score of every node (leaves only are meaningful) for the rows of `t` the tree was fitted
/// on.
pub(super) fn leaf_scores(
    f: &Fitted,
    t: &Table,
    p: &CostAwareParams,
    es: &EvalSettings,
) -> Vec<f64> {
    let size = 1.0;
    let n = f.tree.nodes.len();
    match p.confidence {
        Confidence::Wilson => (0..n)
            .map(|i| leaf_confidence(&f.tree, i, p.wilson_z, size))
            .collect(),
        Confidence::Loss => {
            let pred: Vec<Option<usize>> = f
                .tree
                .nodes
                .iter()
                .map(|nd| {
                    let v = &nd.value;
                    let c = (0..v.len()).fold(0, |b, c| if v[c] > v[b] { c } else { b });
                    f.classes.get(c).and_then(|name| t.choice_index(name))
                })
                .collect();
            let (mut sum, mut cnt) = (vec![0.0; n], vec![0.0; n]);
            let (mut prior_sum, mut prior_n) = (0.0, 0.0);
            for i in 0..t.len() {
                if t.speedup[i].is_finite() {
                    prior_sum += t.speedup[i].ln();
                    prior_n += 1.0;
                }
                let leaf = f.tree.apply(t.row(i));
                let Some(c) = pred[leaf] else { continue };
                let tp = t.time(i, c);
                let best = t.best_time(i);
                if es.unavailable(tp) || !best.is_finite() {
                    continue;
                }
                let loss = if tp.is_finite() {
                    (tp / best).ln()
                } else {
                    10.0
                };
                sum[leaf] += loss;
                cnt[leaf] += 1.0;
            }
            let mu = if prior_n > 0.0 {
                prior_sum / prior_n
            } else {
                0.0
            };
            (0..n)
                .map(|i| {
                    -(sum[i] * size + LOSS_PRIOR_WEIGHT * mu) / (cnt[i] * size + LOSS_PRIOR_WEIGHT)
                })
                .collect()
        }
    }
}

/// Wilson score upper bound of `k` successes in `n` trials.
pub fn wilson_upper(k: f64, n: f64, z: f64) -> f64 {
    if n <= 0.0 {
        return 1.0;
    }
    let p = k / n;
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let margin = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre + margin) / (1.0 + z2 / n)).min(1.0)
}

/// z of the one-sided (84%) upper bound on the harmful share.
pub const HARM_Z: f64 = 1.0;

/// Leaf confidence of node `i`: Wilson lower bound of its majority share, with the leaf's
/// sample count multiplied by `size`.
fn leaf_confidence(tree: &CartTree, i: usize, z: f64, size: f64) -> f64 {
    let nd = &tree.nodes[i];
    let top = nd.counts.iter().copied().fold(0.0, f64::max);
    // Majority share of the weights; effective sample size from the sample count.
    let share = if nd.weighted_n_samples > 0.0 {
        top / nd.weighted_n_samples
    } else {
        0.0
    };
    let n = nd.n_samples as f64 * size;
    wilson_lower(share * n, n, z)
}

/// One out-of-fold input of a fold model, what [`choose_threshold`] weighs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OofRow {
    /// Score of the input's leaf (decided when above the threshold).
    pub confidence: f64,
    /// `ln(t_pick / t_best)` of a wrong pick, 0 otherwise.
    pub loss: f64,
    /// A wrong pick more than [`eval::HARM_FACTOR`] slower than the best.
    pub harmful: bool,
    /// The pick is available (not unsure at every threshold).
    pub decidable: bool,
}

/// Out-of-fold rows of a fitted fold model. A row whose pick is unavailable
/// ([`EvalSettings::unavailable`]: not measured, or `inf` with `inf_unavailable`) is not
/// decidable: at any threshold it costs an autotune.
pub(super) fn oof_rows(
    fitted: &Fitted,
    bad: &[bool],
    te: &Table,
    scores: &[f64],
    es: &EvalSettings,
) -> Vec<OofRow> {
    let rp = eval::predict_rows(fitted, te);
    let out = eval::outcomes(&rp, te, -1.0, &|l| bad[l], es);
    (0..te.len())
        .map(|i| {
            let best = te.best_time(i);
            let (loss, harmful) = match out[i] {
                Outcome::Wrong => {
                    let tp = te.time(i, rp.class_col[rp.pred[i]].expect("decided"));
                    ((tp / best).ln(), tp > eval::HARM_FACTOR * best)
                }
                _ => (0.0, false),
            };
            OofRow {
                confidence: scores[rp.leaf[i]],
                loss,
                harmful,
                decidable: out[i] != Outcome::Unsure,
            }
        })
        .collect()
}

/// A cut on the leaf confidence and its cross-validated cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CvThreshold {
    /// Inputs whose confidence is above it are decided.
    pub threshold: f64,
    /// Cost per input at it.
    pub cost: f64,
}

/// Chooses the confidence threshold on out-of-fold rows: rows with confidence above it are
/// decided. Minimises `(sum of decided losses + autotune_cost * unsure) / n` subject to
/// `harmful decided / n <= max_harmful`.
pub fn choose_threshold(rows: &[OofRow], p: &CostAwareParams) -> CvThreshold {
    let n = rows.len() as f64;
    if rows.is_empty() {
        return CvThreshold {
            threshold: 1.0,
            cost: p.autotune_cost,
        };
    }
    let mut r: Vec<OofRow> = rows.to_vec();
    r.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    // Decide nothing: every row unsure.
    let mut best = CvThreshold {
        threshold: f64::INFINITY,
        cost: p.autotune_cost,
    };
    let mut loss = 0.0;
    let mut harm = 0usize;
    let mut unsure = rows.len() as f64;
    let mut i = 0;
    while i < r.len() {
        let c = r[i].confidence;
        // Add the whole group of equal confidence.
        while i < r.len() && r[i].confidence == c {
            if r[i].decidable {
                loss += r[i].loss;
                unsure -= 1.0;
                if r[i].harmful {
                    harm += 1;
                }
            }
            i += 1;
        }
        let cost = (loss + p.autotune_cost * unsure) / n;
        // Midway between the last decided and the first unsure confidence, so that it
        // transfers to the refitted model's slightly different leaves.
        let threshold = if i < r.len() {
            (c + r[i].confidence) / 2.0
        } else {
            c.min(0.0) - 1.0
        };
        if wilson_upper(harm as f64, n, HARM_Z) <= p.max_harmful && cost < best.cost {
            best = CvThreshold { threshold, cost };
        }
    }
    if best.threshold == f64::INFINITY {
        best.threshold = 1.0;
    }
    best
}

/// The refitted model's threshold: the cut between its leaves (ranked by score over the rows
/// it was fitted on) whose decided share of those rows is closest to `share`, the share the
/// cross-validated threshold decides, deciding at least the most trusted leaf group when that
/// share is positive. A share transfers between the fold models and the refitted model where
/// an absolute score does not (larger leaves have higher scores). Returns a score between two
/// leaf groups (`1e300`: decide nothing; below every score: all).
pub(super) fn transfer_threshold(f: &Fitted, t: &Table, scores: &[f64], share: f64) -> f64 {
    if share <= 0.0 || t.is_empty() {
        return 1.0e300;
    }
    let mut s: Vec<f64> = (0..t.len())
        .map(|i| scores[f.tree.apply(t.row(i))])
        .collect();
    s.sort_by(|a, b| b.total_cmp(a));
    let n = s.len() as f64;
    // At least the most trusted leaf group: cross-validation found deciding worth it.
    let (mut best_cut, mut best_gap) = (0usize, f64::INFINITY);
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        while i < s.len() && s[i] == c {
            i += 1;
        }
        let gap = (i as f64 / n - share).abs();
        if gap < best_gap {
            best_gap = gap;
            best_cut = i;
        }
    }
    if best_cut == 0 {
        1.0e300
    } else if best_cut == s.len() {
        s[s.len() - 1] - 1.0
    } else {
        (s[best_cut - 1] + s[best_cut]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::super::fit::test_node;
    use super::*;

    #[test]
    fn wilson_bounds() {
        assert!((wilson_lower(1.0, 1.0, 1.96) - 0.2065).abs() < 1e-3);
        assert!(wilson_lower(100.0, 100.0, 1.96) > 0.96);
        assert_eq!(wilson_lower(0.0, 0.0, 1.96), 0.0);
    }

    #[test]
    fn threshold_trades_loss_against_autotune_cost() {
        let p = CostAwareParams {
            autotune_cost: 0.01,
            max_harmful: 1.0,
            folds: 5,
            wilson_z: crate::train::WILSON_Z,
            confidence: Confidence::Loss,
        };
        // Confident rows are right, unconfident ones lose 50%.
        let row = |confidence, loss, harmful| OofRow {
            confidence,
            loss,
            harmful,
            decidable: true,
        };
        let rows = vec![
            row(0.9, 0.0, false),
            row(0.8, 0.0, false),
            row(0.3, 0.4, true),
            row(0.2, 0.4, true),
        ];
        let cut = choose_threshold(&rows, &p);
        assert_eq!(cut.threshold, 0.55);
        assert!((cut.cost - 0.005).abs() < 1e-12);
        // A harm bound of zero is never met by an upper confidence bound: decide nothing.
        let p0 = CostAwareParams {
            max_harmful: 0.0,
            ..p
        };
        assert_eq!(
            choose_threshold(&rows, &p0),
            CvThreshold {
                threshold: 1.0,
                cost: 0.01
            }
        );
    }

    #[test]
    fn one_inf_pick_blocks_the_cost_aware_threshold_unless_inf_is_unavailable() {
        // x <= 0.5 -> `a` (confidence 0.9), else `b` (0.8). Out of fold: 10 inputs with x = 0
        // where `a` wins, 9 with x = 1 where `b` wins, and one with x = 0 where `a` failed
        // (`inf`, as a reduction log records a persistent variant that cannot hold the row).
        let fitted = Fitted {
            tree: CartTree {
                nodes: vec![
                    test_node(Some(0), 1, 2, vec![10.0, 10.0]),
                    test_node(None, 0, 0, vec![10.0, 0.0]),
                    test_node(None, 0, 0, vec![0.0, 10.0]),
                ],
                n_features: 1,
            },
            classes: vec!["a".into(), "b".into()],
        };
        let scores = [0.0, 0.9, 0.8];
        let bad = [false; 3];
        let mut times = Vec::new();
        let mut x = Vec::new();
        let mut winner = Vec::new();
        for i in 0..20 {
            let (xi, ta, tb, w) = match i {
                0..=9 => (0.0, 1.0, 2.0, 0),
                10..=18 => (1.0, 2.0, 1.0, 1),
                _ => (0.0, f64::INFINITY, 1.0, 1),
            };
            x.push(xi);
            times.extend([ta, tb]);
            winner.push(w);
        }
        let te = Table {
            name: "cv_test".into(),
            choices: vec!["a".into(), "b".into()],
            x,
            n_cols: 1,
            times,
            actual_winner: winner.clone(),
            winner,
            weight: vec![1.0; 20],
            speedup: vec![2.0; 20],
            keys: (0..20)
                .map(|i| ah_eval::table::Key::new([i.to_string()]))
                .collect(),
            input: (0..20).collect(),
        };
        let es = |inf_unavailable| EvalSettings {
            default_choice: Some("a".into()),
            top_k: 1,
            always_included: Vec::new(),
            exempt_certain: false,
            inf_unavailable,
        };
        let p = CostAwareParams {
            autotune_cost: 0.1,
            max_harmful: 0.2,
            folds: 5,
            wilson_z: crate::train::WILSON_Z,
            confidence: Confidence::Wilson,
        };
        // Default: the failed pick is an infinite, harmful loss in the most trusted leaf, so
        // no cut decides it or anything below it: every input stays unsure.
        let rows = oof_rows(&fitted, &bad, &te, &scores, &es(false));
        let row = |loss, harmful, decidable| OofRow {
            confidence: 0.9,
            loss,
            harmful,
            decidable,
        };
        assert_eq!(rows[19], row(f64::INFINITY, true, true));
        assert_eq!(
            choose_threshold(&rows, &p),
            CvThreshold {
                threshold: 1.0,
                cost: 0.1
            }
        );
        // --inf-unavailable: the runtime never offers `a` for that input and autotunes it
        // (costing one autotune whatever the cut), so deciding every other input is best.
        let rows = oof_rows(&fitted, &bad, &te, &scores, &es(true));
        assert_eq!(rows[19], row(0.0, false, false));
        let cut = choose_threshold(&rows, &p);
        assert!(cut.threshold < 0.8, "{cut:?}");
        assert!((cut.cost - 0.1 / 20.0).abs() < 1e-12, "{cut:?}");
    }
}
