//! What both selection rules share: the grid's configurations and evaluation views
//! ([`GridInput`]), a grid model fitted with its grid-table row ([`GridFit`]), and the chosen
//! model handed to the output step ([`Selection`]).

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::cart::CartParams;
use crate::config::GridConfig;
use ah_eval::metrics::{self as eval, EvalSettings, LeafModel, Metrics, RowPredictions};
use ah_eval::table::Table;

use super::fit::{eval_settings, eval_view};
use super::fitted::Fitted;
use super::params::TrainOptions;
use super::prepare::Prepared;
use super::results::GridRow;

/// The inputs of a selection rule.
pub(super) struct GridInput<'a> {
    /// The run's options.
    pub(super) opts: &'a TrainOptions,
    /// The prepared sets.
    pub(super) p: &'a Prepared,
    /// Evaluation settings.
    pub(super) es: EvalSettings,
    /// Each set as evaluated (ranking: the rows whose copy is the true winner).
    pub(super) views: Vec<(String, Cow<'a, Table>)>,
    /// The feature columns of each view (column-major), for routing them through every
    /// grid model.
    columns: Vec<Vec<Vec<f64>>>,
    /// The grid, in order.
    pub(super) configs: Vec<GridConfig>,
    /// Called once per fitted grid model (and fold).
    pub(super) progress: &'a (dyn Fn(u64) + Sync),
}

impl<'a> GridInput<'a> {
    pub(super) fn new(
        opts: &'a TrainOptions,
        p: &'a Prepared,
        progress: &'a (dyn Fn(u64) + Sync),
    ) -> Self {
        let ranking = opts.ranking.is_some();
        let views: Vec<(String, Cow<'a, Table>)> = p
            .sets
            .iter()
            .map(|(n, t)| (n.clone(), eval_view(t, ranking)))
            .collect();
        GridInput {
            opts,
            p,
            es: eval_settings(p, opts),
            columns: views.iter().map(|(_, t)| columns_of(t)).collect(),
            views,
            configs: p.settings.grid.configs(),
            progress,
        }
    }

    /// The tree parameters of every configuration.
    pub(super) fn params(&self) -> Vec<CartParams> {
        self.configs
            .iter()
            .map(|c| c.params(self.opts.seed))
            .collect()
    }

    /// The validation set's view.
    pub(super) fn val(&self) -> &Table {
        &self.views[1].1
    }

    /// The predictions of `f` on every set, in the order of `views`.
    pub(super) fn predictions(&self, f: &Fitted) -> Vec<RowPredictions> {
        self.views
            .iter()
            .zip(&self.columns)
            .map(|((_, t), columns)| {
                let model = ColumnRouted { fitted: f, columns };
                eval::predict_rows(&model, t)
            })
            .collect()
    }

    /// Metrics of `f` on every set at threshold `thr` with unsafe leaves `bad`, from its
    /// predictions `rps` ([`GridInput::predictions`]).
    pub(super) fn metrics(
        &self,
        f: &Fitted,
        rps: &[RowPredictions],
        thr: f64,
        bad: &[bool],
    ) -> BTreeMap<String, Metrics> {
        self.views
            .iter()
            .zip(rps)
            .map(|((name, t), rp)| {
                let m = eval::evaluate(f, rp, t, thr, &|l| bad[l], &self.es);
                (name.clone(), m)
            })
            .collect()
    }
}

/// The feature columns of `t`: `columns[f][i]` is feature `f` of row `i`.
fn columns_of(t: &Table) -> Vec<Vec<f64>> {
    (0..t.n_cols)
        .map(|c| (0..t.len()).map(|i| t.row(i)[c]).collect())
        .collect()
}

/// A fitted tree routing the rows of one table from its columns ([`columns_of`]): the same
/// leaves as [`Fitted`]'s, faster when many trees route the same table.
struct ColumnRouted<'a> {
    fitted: &'a Fitted,
    columns: &'a [Vec<f64>],
}

impl LeafModel for ColumnRouted<'_> {
    fn leaf(&self, row: &[f64]) -> usize {
        self.fitted.leaf(row)
    }
    fn leaf_value(&self, leaf: usize) -> &[f64] {
        self.fitted.leaf_value(leaf)
    }
    fn classes(&self) -> &[String] {
        self.fitted.classes()
    }
    fn leaves(&self, table: &Table) -> Vec<usize> {
        let n = table.len();
        assert!(
            self.columns.iter().all(|c| c.len() == n),
            "the columns of this table"
        );
        self.fitted.tree.router().leaves_of_columns(self.columns, n)
    }
}

/// A grid model fitted on the fit set, with its unsafe leaves and grid-table row.
pub(super) struct GridFit {
    /// The tree.
    pub(super) fitted: Fitted,
    /// Unsafe leaves, by node.
    pub(super) unsafe_leaf: Vec<bool>,
    /// Its row of the grid table.
    pub(super) row: GridRow,
}

/// The chosen model, as a selection rule hands it to the output step.
pub(super) struct Selection<'a> {
    /// Every grid model's row.
    pub(super) grid: Vec<GridRow>,
    /// Index of the chosen one.
    pub(super) best: usize,
    /// The chosen model.
    pub(super) chosen: GridFit,
    /// The model's threshold (cost-aware: 0, its cut is in the unsafe leaves).
    pub(super) threshold: f64,
    /// The rows the chosen model was fitted on (its guarded ranges come from them).
    pub(super) fit_table: Cow<'a, Table>,
    /// Rule-specific `training.extra` entries.
    pub(super) extra: BTreeMap<String, serde_json::Value>,
    /// Warnings about the choice.
    pub(super) warnings: Vec<String>,
}
