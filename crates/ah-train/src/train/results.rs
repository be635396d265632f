//! What a training run gives ([`TrainOutput`]): the model, every grid model's results
//! ([`GridRow`]), the chosen model's per-row results ([`SetRows`]) and the split
//! ([`SplitSets`]).

use std::collections::BTreeMap;

use ah_core::model::Model;
use ah_eval::metrics::Metrics;
use ah_eval::table::Key;

use crate::cart::{Criterion, MinSamplesLeaf};
use crate::split::SplitFile;

/// One grid model's results.
#[derive(Debug, Clone)]
pub struct GridRow {
    /// Criterion.
    pub criterion: Criterion,
    /// Depth.
    pub max_depth: Option<usize>,
    /// Leaf size.
    pub min_samples_leaf: MinSamplesLeaf,
    /// Sample weighting (`uniform`, or `regret` in cost-aware mode).
    pub weighting: &'static str,
    /// Threshold chosen for it (probability, or Wilson bound in cost-aware mode).
    pub threshold: f64,
    /// Leaves.
    pub n_leaves: usize,
    /// Unsafe leaves.
    pub n_unsafe: usize,
    /// Cross-validated cost per input (cost-aware mode).
    pub cv_cost: Option<f64>,
    /// Metrics per set.
    pub metrics: BTreeMap<String, Metrics>,
}

/// Per-row results of the chosen model on one set (for plots).
#[derive(Debug, Clone, Default)]
pub struct SetRows {
    /// Speedup over the default of each decided input (default time / picked time).
    pub speedup_over_default: Vec<f64>,
    /// Regret of each input: picked (unsure: best) time over best time.
    pub regret_ratio: Vec<f64>,
}

/// The result of a training run.
#[derive(Debug, Clone)]
pub struct TrainOutput {
    /// The model (with metrics).
    pub model: Model,
    /// Metrics per set of the chosen model.
    pub metrics: BTreeMap<String, Metrics>,
    /// Every grid model.
    pub grid: Vec<GridRow>,
    /// Index of the chosen model in `grid`.
    pub best: usize,
    /// Warnings worth printing.
    pub warnings: Vec<String>,
    /// Per-row results of the chosen model.
    pub rows: BTreeMap<String, SetRows>,
    /// Set sizes.
    pub sizes: BTreeMap<String, usize>,
    /// The split (see [`TrainOutput::split_file`]).
    pub split_sets: SplitSets,
    /// Wall time of the phases, seconds (`prepare`, `grid`, `final`); never serialized.
    pub timings: Vec<(&'static str, f64)>,
}

/// The split of a run: the logged features and each set's inputs (shared keys).
#[derive(Debug, Clone)]
pub struct SplitSets {
    /// Logged features, in the log's order.
    pub features: Vec<String>,
    /// Training inputs.
    pub train: Vec<Key>,
    /// Validation inputs.
    pub val: Vec<Key>,
    /// Test inputs.
    pub test: Vec<Key>,
}

impl TrainOutput {
    /// The split as a split file (the `--split` / `--write-split` format).
    pub fn split_file(&self) -> SplitFile {
        let s = &self.split_sets;
        let rows = |s: &[Key]| s.iter().map(|k| k.to_vec()).collect();
        SplitFile {
            features: s.features.clone(),
            train: rows(&s.train),
            val: rows(&s.val),
            test: rows(&s.test),
        }
    }
}
