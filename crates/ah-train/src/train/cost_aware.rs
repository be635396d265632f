//! The cost-aware selection rule ([`super::Mode::CostAware`], the default): K-fold
//! cross-validation over train+val gives out-of-fold predictions of every candidate (each grid
//! configuration with uniform and with regret weights); each candidate's cut on the leaf
//! confidence minimises its cross-validated cost ([`choose_threshold`]); the candidate of
//! lowest cost wins, refitted on train+val, where the cut is transferred as the share of inputs
//! decided and leaves at or below it are stored as unsafe.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::cart::CartTree;
use crate::config::GridConfig;
use crate::error::Result;
use crate::split::RandomState;
use ah_eval::table::Table;

use super::confidence::{
    choose_threshold, leaf_scores, oof_rows, transfer_threshold, CvThreshold, OofRow,
};
use super::fit::{eval_view, finish_fit, matrix_of, unsafe_leaves};
use super::grid::{GridFit, GridInput, Selection};
use super::params::Confidence;
use super::prepare::concat;
use super::results::GridRow;

/// One candidate's cross-validation: its cut, the share of inputs the cut decides (what
/// transfers to the refitted model), and its out-of-fold picks of a choice timed `inf`.
#[derive(Debug, Clone, Copy)]
struct CvResult {
    cut: CvThreshold,
    share: f64,
    inf_picks: usize,
}

/// One candidate: a (weighting, grid configuration) pair, in grid order per weighting.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    weighting: Weighting,
    cv: CvResult,
}

/// The rows of one fold: fitted on `train`, predicted on `test`.
struct Fold {
    train: Table,
    test: Table,
    classes: Vec<String>,
}

/// Cross-validates every candidate, refits each on train+val, and keeps the cheapest.
pub(super) fn select<'a>(g: &GridInput<'a>) -> Result<Selection<'a>> {
    // Fit set = train + val; test stays out.
    let base = concat(&g.p.sets[0].1, &g.p.sets[1].1);
    let n = base.len();
    let k = g.opts.cost.folds.clamp(2, n.max(2));
    let perm = RandomState::new(g.opts.seed).permutation(n);
    let mut fold_of = vec![0usize; n];
    for (pos, &i) in perm.iter().enumerate() {
        fold_of[i] = pos % k;
    }
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut refits: Vec<GridFit> = Vec::new();
    let mut fit_tables = Vec::new();
    for weighting in [Weighting::Uniform, Weighting::Regret] {
        let fit_t = weighting.apply(&base);
        let cv = cross_validate(g, &fit_t, &fold_of, k);
        candidates.extend(cv.iter().map(|&cv| Candidate { weighting, cv }));
        refits.extend(refit(g, weighting, &fit_t, &cv));
        fit_tables.push(fit_t);
    }
    // Lowest cross-validated cost; ties go to the earlier candidate.
    let mut best = 0;
    for (i, c) in candidates.iter().enumerate() {
        if c.cv.cut.cost < candidates[best].cv.cut.cost {
            best = i;
        }
    }
    let mut warnings = Vec::new();
    let inf_picks = candidates[best].cv.inf_picks;
    if inf_picks > 0 && !g.es.inf_unavailable {
        warnings.push(format!(
            "cross-validating the chosen candidate picked a choice timed `inf` (failed) for {inf_picks} input(s); each such pick is infinitely slow, so no threshold decides the leaves they fall in. If such a choice is never offered at run time for those inputs (like a persistent reduction on a row it cannot hold), train with --inf-unavailable"
        ));
    }
    let fit_table =
        fit_tables.swap_remove(usize::from(candidates[best].weighting == Weighting::Regret));
    let grid: Vec<GridRow> = refits.iter().map(|r| r.row.clone()).collect();
    let chosen = refits.into_iter().nth(best).expect("best exists");
    let nodes = &chosen.fitted.tree.nodes;
    if (0..nodes.len()).all(|i| nodes[i].feature.is_some() || chosen.unsafe_leaf[i]) {
        warnings.push(format!(
            "no candidate decides any input within the harm bound (cross-validated share of picks more than 10% slower <= {}): the heuristic always answers unsure; collect more inputs, or raise --max-harmful / --autotune-cost",
            g.opts.cost.max_harmful
        ));
    }
    let extra = extra_of(g, &chosen.row, k);
    Ok(Selection {
        grid,
        best,
        chosen,
        threshold: 0.0,
        fit_table: std::borrow::Cow::Owned(fit_table),
        extra,
        warnings,
    })
}

/// The cost-aware entries of `training.extra`.
fn extra_of(g: &GridInput<'_>, row: &GridRow, k: usize) -> BTreeMap<String, serde_json::Value> {
    let c = &g.opts.cost;
    let confidence = match c.confidence {
        Confidence::Wilson => "wilson_lower_bound",
        Confidence::Loss => "minus_expected_loss",
    };
    BTreeMap::from([
        ("confidence".into(), serde_json::json!(confidence)),
        (
            "confidence_threshold".into(),
            serde_json::json!(row.threshold),
        ),
        ("wilson_z".into(), serde_json::json!(c.wilson_z)),
        ("autotune_cost".into(), serde_json::json!(c.autotune_cost)),
        ("max_harmful".into(), serde_json::json!(c.max_harmful)),
        ("folds".into(), serde_json::json!(k)),
        ("weighting".into(), serde_json::json!(row.weighting)),
        ("cv_cost_per_input".into(), serde_json::json!(row.cv_cost)),
    ])
}

/// Per configuration of the grid: the cross-validated cut of the candidate fitted on
/// `fit_t`'s folds (`fold_of` gives each row's fold).
fn cross_validate(g: &GridInput<'_>, fit_t: &Table, fold_of: &[usize], k: usize) -> Vec<CvResult> {
    let n = fit_t.len();
    let folds: Vec<Fold> = (0..k)
        .map(|f| {
            let tr: Vec<usize> = (0..n).filter(|&i| fold_of[i] != f).collect();
            let te: Vec<usize> = (0..n).filter(|&i| fold_of[i] == f).collect();
            let train = fit_t.take(&tr, "cv_train");
            let classes = g.p.classes_of(&train);
            Fold {
                test: fit_t.take(&te, "cv_test"),
                train,
                classes,
            }
        })
        .collect();
    let params = g.params();
    let fold_trees: Vec<Vec<CartTree>> = folds
        .par_iter()
        .map(|f| matrix_of(&f.train, &f.classes).fit_many(g.opts.learner, &params))
        .collect();
    let jobs: Vec<(usize, usize)> = (0..g.configs.len())
        .flat_map(|c| (0..k).map(move |f| (c, f)))
        .collect();
    let oof: Vec<Vec<OofRow>> = jobs
        .par_iter()
        .map(|&(c, f)| fold_rows(g, &folds[f], fold_trees[f][c].clone()))
        .collect();
    (0..g.configs.len())
        .map(|c| {
            let rows: Vec<OofRow> = (0..k)
                .flat_map(|f| oof[c * k + f].iter().copied())
                .collect();
            let cut = choose_threshold(&rows, &g.opts.cost);
            let decided = rows
                .iter()
                .filter(|r| r.decidable && r.confidence > cut.threshold)
                .count();
            CvResult {
                cut,
                share: decided as f64 / rows.len().max(1) as f64,
                inf_picks: rows
                    .iter()
                    .filter(|r| r.decidable && r.loss.is_infinite())
                    .count(),
            }
        })
        .collect()
}

/// The out-of-fold rows of one fold model.
fn fold_rows(g: &GridInput<'_>, fold: &Fold, tree: CartTree) -> Vec<OofRow> {
    let fitted = finish_fit(tree, &fold.classes, g.opts.ranking);
    let bad = unsafe_leaves(&fitted, &fold.train, &g.p.settings.unsafe_rule, &g.es);
    let te = eval_view(&fold.test, g.opts.ranking.is_some());
    (g.progress)(1);
    let scores = leaf_scores(&fitted, &fold.train, &g.opts.cost, &g.es);
    oof_rows(&fitted, &bad, &te, &scores, &g.es)
}

/// Every configuration refitted on the fit set `fit_t`, with its transferred cut.
fn refit(g: &GridInput<'_>, weighting: Weighting, fit_t: &Table, cv: &[CvResult]) -> Vec<GridFit> {
    let classes = g.p.classes_of(fit_t);
    let trees = matrix_of(fit_t, &classes).fit_many(g.opts.learner, &g.params());
    g.configs
        .par_iter()
        .zip(trees.into_par_iter())
        .zip(cv.par_iter())
        .map(|((&cfg, tree), cv)| refit_one(g, weighting, fit_t, &classes, cfg, tree, cv))
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn refit_one(
    g: &GridInput<'_>,
    weighting: Weighting,
    fit_t: &Table,
    classes: &[String],
    cfg: GridConfig,
    tree: CartTree,
    cv: &CvResult,
) -> GridFit {
    let f = finish_fit(tree, classes, g.opts.ranking);
    let mut bad = unsafe_leaves(&f, fit_t, &g.p.settings.unsafe_rule, &g.es);
    let scores = leaf_scores(&f, fit_t, &g.opts.cost, &g.es);
    let thr = transfer_threshold(&f, fit_t, &scores, cv.share);
    for (i, nd) in f.tree.nodes.iter().enumerate() {
        if nd.feature.is_none() && scores[i] <= thr {
            bad[i] = true;
        }
    }
    let metrics = g.metrics(&f, &g.predictions(&f), 0.0, &bad);
    (g.progress)(1);
    let n_unsafe = (0..bad.len())
        .filter(|&i| bad[i] && f.tree.nodes[i].feature.is_none())
        .count();
    let row = GridRow {
        criterion: cfg.criterion,
        max_depth: cfg.max_depth,
        min_samples_leaf: cfg.min_samples_leaf,
        weighting: weighting.name(),
        threshold: thr,
        n_leaves: f.tree.n_leaves(),
        n_unsafe,
        cv_cost: Some(cv.cut.cost),
        metrics,
    };
    GridFit {
        fitted: f,
        unsafe_leaf: bad,
        row,
    }
}

/// Sample weighting of the cost-aware mode's candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weighting {
    /// Every input counts once.
    Uniform,
    /// An input counts by what a wrong pick would lose: `speedup - 1` (second best over best,
    /// minus one), clamped to `[0.01, 1]`.
    Regret,
}

impl Weighting {
    /// Name in tables and the model.
    pub fn name(self) -> &'static str {
        match self {
            Weighting::Uniform => "uniform",
            Weighting::Regret => "regret",
        }
    }

    /// The table with this weighting.
    pub fn apply(self, t: &Table) -> Table {
        let mut t = t.clone();
        if self == Weighting::Regret {
            for i in 0..t.len() {
                t.weight[i] *= (t.speedup[i] - 1.0).clamp(0.01, 1.0);
            }
        }
        t
    }
}
