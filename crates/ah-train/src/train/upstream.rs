//! PyTorch's selection rule ([`super::Mode::Upstream`]): every grid model is fitted on the
//! training set; its threshold is the safe probability on the validation set (`wrong_pct`);
//! every set is evaluated at it; best = most correct on validation with
//! `wrong <= total * wrong_pct`.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::cart::CartTree;
use crate::config::GridConfig;
use crate::error::{Result, TrainError};
use ah_eval::metrics as eval;

use super::fit::{finish_fit, matrix_of, unsafe_leaves_with};
use super::grid::{GridFit, GridInput, Selection};
use super::results::GridRow;

/// Fits the grid on the training set and chooses by PyTorch's rule.
pub(super) fn select<'a>(g: &GridInput<'a>) -> Result<Selection<'a>> {
    let train_t = &g.p.sets[0].1;
    let wrong_pct = g.p.settings.allowed_wrong_pct;
    let trees = matrix_of(train_t, &g.p.classes).fit_many(g.opts.learner, &g.params());
    let results: Vec<GridFit> = g
        .configs
        .par_iter()
        .zip(trees.into_par_iter())
        .map(|(&cfg, tree)| fit_one(g, cfg, tree, wrong_pct))
        .collect();
    let mut best = None;
    let mut best_correct = 0;
    for (i, r) in results.iter().enumerate() {
        let v = &r.row.metrics["val"];
        if v.wrong as f64 <= v.total as f64 * wrong_pct && v.correct > best_correct {
            best = Some(i);
            best_correct = v.correct;
        }
    }
    let grid: Vec<GridRow> = results.iter().map(|r| r.row.clone()).collect();
    let Some(best) = best else {
        let n = g.val().len();
        return Err(TrainError::NoModel(format!(
            "All learned models have too many wrong predictions, so no heuristic was generated (upstream rule: at most {:.0}% wrong on the {} validation inputs, i.e. {} mistakes; try the default mode, which cross-validates instead)",
            wrong_pct * 100.0,
            n,
            (n as f64 * wrong_pct) as usize
        )));
    };
    let chosen = results.into_iter().nth(best).expect("best exists");
    let threshold = chosen.row.threshold;
    let mut warnings = Vec::new();
    if threshold >= 1.0 {
        warnings.push(format!(
            "the chosen threshold is {threshold}: PyTorch's evaluation (reproduced in the metrics) counts leaves of probability 1.0 as decided, but its runtime rule `probability <= threshold` (and the generated code) answers unsure for every input; consider the default mode"
        ));
    }
    let mut extra = BTreeMap::new();
    extra.insert("allowed_wrong_pct".into(), serde_json::json!(wrong_pct));
    Ok(Selection {
        grid,
        best,
        chosen,
        threshold,
        fit_table: std::borrow::Cow::Borrowed(train_t),
        extra,
        warnings,
    })
}

/// One grid model: unsafe leaves, the safe probability on validation, every set's metrics.
fn fit_one(g: &GridInput<'_>, cfg: GridConfig, tree: CartTree, wrong_pct: f64) -> GridFit {
    let train_t = &g.p.sets[0].1;
    let f = finish_fit(tree, &g.p.classes, g.opts.ranking);
    let rps = g.predictions(&f);
    // The training view is the training table itself unless ranking filtered it: reuse its
    // routing.
    let train_leaves = match &g.views[0].1 {
        std::borrow::Cow::Borrowed(t) if std::ptr::eq(*t, train_t) => Some(&rps[0].leaf[..]),
        _ => None,
    };
    let bad = unsafe_leaves_with(&f, train_t, &g.p.settings.unsafe_rule, &g.es, train_leaves);
    let thr = eval::safe_proba(&rps[1], g.val(), &|l| bad[l], wrong_pct, &g.es);
    let metrics = g.metrics(&f, &rps, thr, &bad);
    (g.progress)(1);
    let row = GridRow {
        criterion: cfg.criterion,
        max_depth: cfg.max_depth,
        min_samples_leaf: cfg.min_samples_leaf,
        weighting: "uniform",
        threshold: thr,
        n_leaves: f.tree.n_leaves(),
        n_unsafe: bad.iter().filter(|b| **b).count(),
        cv_cost: None,
        metrics,
    };
    GridFit {
        fitted: f,
        unsafe_leaf: bad,
        row,
    }
}
