//! Learners behind linfa's traits: the project's CART ([`CartClassifier`], implementing
//! linfa's `Fit` and `PredictInplace` over a linfa `Dataset`) and linfa-trees as a second
//! backend ([`fit_linfa_trees`]), whose leaf class distributions are recovered by routing the
//! training rows (linfa-trees keeps only the majority label per leaf).

use std::borrow::Cow;

use linfa::dataset::{AsSingleTargets, DatasetBase};
use linfa::traits::{Fit, PredictInplace};
use ndarray::{Array1, ArrayBase, Data, Ix1, Ix2};

use crate::cart::{self, CartData, CartNode, CartParams, CartTree, Criterion, Presorted};

/// Which learner fits the trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Learner {
    /// The project's CART (scikit-learn's algorithm and tie-breaking).
    #[default]
    Cart,
    /// linfa-trees (its own split search; leaf distributions recovered by routing).
    LinfaTrees,
}

impl Learner {
    /// Name as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Learner::Cart => "cart",
            Learner::LinfaTrees => "linfa-trees",
        }
    }
}

/// Training data of one fit, in the form both learners take.
#[derive(Debug, Clone)]
pub struct TrainMatrix<'a> {
    /// Column-major `f32` features (scikit-learn's cast).
    pub columns: Vec<Vec<f32>>,
    /// Row-major exact features (linfa-trees fits on them), borrowed from the caller's table
    /// where it has one: a copy was 3.8 MB of the trainer's peak on pad_mm_a100.
    pub rows: Cow<'a, [f64]>,
    /// Number of columns.
    pub n_cols: usize,
    /// Class per row.
    pub classes: Vec<u32>,
    /// Number of classes.
    pub n_classes: usize,
    /// Regression target per row (empty for classification).
    pub targets: Vec<f64>,
    /// Sample weights.
    pub weights: Vec<f64>,
    /// Presorted columns.
    pub presorted: Presorted,
}

impl<'a> TrainMatrix<'a> {
    /// Builds the matrix from row-major `f64` values.
    pub fn new(
        rows: impl Into<Cow<'a, [f64]>>,
        n_cols: usize,
        classes: Vec<u32>,
        n_classes: usize,
        targets: Vec<f64>,
        weights: Vec<f64>,
    ) -> Self {
        let rows = rows.into();
        let n = weights.len();
        let columns: Vec<Vec<f32>> = (0..n_cols)
            .map(|c| (0..n).map(|i| rows[i * n_cols + c] as f32).collect())
            .collect();
        let presorted = Presorted::new(&columns);
        Self {
            columns,
            rows,
            n_cols,
            classes,
            n_classes,
            targets,
            weights,
            presorted,
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// The matrix as the CART learner reads it.
    fn cart_data(&self) -> CartData<'_> {
        CartData {
            columns: &self.columns,
            classes: &self.classes,
            n_classes: self.n_classes,
            targets: &self.targets,
            weights: &self.weights,
        }
    }

    /// Fits several configurations, returning trees in the given order. CART shares the split
    /// search between configurations that differ only in depth (same trees as one by one).
    pub fn fit_many(&self, learner: Learner, params: &[CartParams]) -> Vec<CartTree> {
        if learner != Learner::Cart {
            use rayon::prelude::*;
            return params.par_iter().map(|p| self.fit(learner, *p)).collect();
        }
        let d = self.cart_data();
        let groups = fit_groups(params, self.len(), rayon::current_num_threads());
        let fitted: Vec<Vec<(usize, CartTree)>> = {
            use rayon::prelude::*;
            groups
                .into_par_iter()
                .map(|g| {
                    let ps: Vec<CartParams> = g.iter().map(|&i| params[i]).collect();
                    g.into_iter()
                        .zip(cart::fit_group(&d, &self.presorted, &ps))
                        .collect()
                })
                .collect()
        };
        let mut out: Vec<Option<CartTree>> = vec![None; params.len()];
        for (i, t) in fitted.into_iter().flatten() {
            out[i] = Some(t);
        }
        out.into_iter()
            .map(|t| t.expect("every configuration fitted"))
            .collect()
    }

    /// Fits with the chosen learner.
    pub fn fit(&self, learner: Learner, params: CartParams) -> CartTree {
        match learner {
            Learner::Cart => cart::fit(&self.cart_data(), &self.presorted, params),
            Learner::LinfaTrees => fit_linfa_trees(self, params),
        }
    }
}

/// The groups [`TrainMatrix::fit_many`] fits with [`cart::fit_group`], as indices into
/// `params` (`n` training rows): configurations of equal criterion and seed, in the order
/// that shares the most (increasing leaf size, then deepest first), each split between leaf
/// sizes into as many parts as it takes to give `threads` workers a group each (the trees are
/// the same however they are grouped; only the sharing changes).
fn fit_groups(params: &[CartParams], n: usize, threads: usize) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, p) in params.iter().enumerate() {
        match groups.iter_mut().find(|g| {
            let q = &params[g[0]];
            q.criterion == p.criterion && q.seed == p.seed
        }) {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    let leaf = |i: usize| params[i].min_samples_leaf.resolve(n);
    let parts = threads.div_ceil(groups.len().max(1)).max(1);
    let mut out = Vec::new();
    for mut g in groups {
        g.sort_by_key(|&i| {
            let depth = params[i].max_depth.unwrap_or(usize::MAX);
            (leaf(i), std::cmp::Reverse(depth))
        });
        // Runs of one leaf size, dealt out in order to `parts` groups.
        let mut runs: Vec<Vec<usize>> = Vec::new();
        for i in g {
            match runs.last_mut() {
                Some(r) if leaf(r[0]) == leaf(i) => r.push(i),
                _ => runs.push(vec![i]),
            }
        }
        let k = parts.min(runs.len());
        let n_runs = runs.len();
        let mut runs = runs.into_iter();
        for part in 0..k {
            let take = (part + 1) * n_runs / k - part * n_runs / k;
            out.push(runs.by_ref().take(take).flatten().collect());
        }
    }
    out
}

/// linfa-trees as a backend: fits `linfa_trees::DecisionTree` (same criterion, depth and
/// minimum leaf weight) and converts it, recovering each leaf's weighted class counts by
/// routing the training rows. linfa-trees partitions its training rows with
/// `x <= split_value` but its own `predict` goes left on `x < split_value`; the two differ
/// when a split value equals a data value (it takes the midpoint with the next presorted
/// value, which may be equal). The converted tree keeps the training semantics
/// (`x <= split_value`), so the recovered leaf distributions are exactly the rows linfa
/// grew each leaf from.
pub fn fit_linfa_trees(m: &TrainMatrix, params: CartParams) -> CartTree {
    use linfa_trees::{DecisionTree, SplitQuality};
    let n = m.len();
    let x = ndarray::Array2::from_shape_vec((n, m.n_cols), m.rows.to_vec()).expect("shape");
    let y: Array1<usize> = m.classes.iter().map(|&c| c as usize).collect();
    let w: Array1<f32> = m.weights.iter().map(|&w| w as f32).collect();
    let ds = DatasetBase::new(x, y).with_weights(w);
    let quality = match params.criterion {
        Criterion::Entropy => SplitQuality::Entropy,
        _ => SplitQuality::Gini,
    };
    let min_leaf = params.min_samples_leaf.resolve(n) as f32;
    let fitted = DecisionTree::params()
        .split_quality(quality)
        .max_depth(params.max_depth)
        .min_weight_leaf(min_leaf)
        .min_weight_split(2.0 * min_leaf)
        .fit(&ds)
        .expect("linfa-trees fit on a non-empty dataset");
    // Convert, depth-first, left first.
    let mut nodes: Vec<CartNode> = Vec::new();
    fn conv(
        node: &linfa_trees::TreeNode<f64, usize>,
        nodes: &mut Vec<CartNode>,
        k: usize,
    ) -> usize {
        let id = nodes.len();
        nodes.push(CartNode {
            feature: None,
            threshold: -2.0,
            left: 0,
            right: 0,
            value: vec![0.0; k],
            n_samples: 0,
            weighted_n_samples: 0.0,
            counts: vec![0.0; k],
            impurity: 0.0,
        });
        if !node.is_leaf() {
            let (f, v, _) = node.split();
            let ch = node.children();
            if let (Some(l), Some(r)) = (ch[0].as_deref(), ch[1].as_deref()) {
                let li = conv(l, nodes, k);
                let ri = conv(r, nodes, k);
                nodes[id].feature = Some(f);
                nodes[id].threshold = v;
                nodes[id].left = li;
                nodes[id].right = ri;
            }
        }
        id
    }
    conv(fitted.root_node(), &mut nodes, m.n_classes);
    let mut tree = CartTree {
        nodes,
        n_features: m.n_cols,
    };
    // Route the training rows through every node on their path.
    for i in 0..n {
        let row = &m.rows[i * m.n_cols..(i + 1) * m.n_cols];
        let mut j = 0;
        loop {
            let nd = &mut tree.nodes[j];
            nd.n_samples += 1;
            nd.weighted_n_samples += m.weights[i];
            nd.counts[m.classes[i] as usize] += m.weights[i];
            match nd.feature {
                Some(f) => {
                    j = if row[f] <= nd.threshold {
                        nd.left
                    } else {
                        nd.right
                    }
                }
                None => break,
            }
        }
    }
    for nd in &mut tree.nodes {
        if nd.weighted_n_samples > 0.0 {
            nd.value = nd
                .counts
                .iter()
                .map(|c| c / nd.weighted_n_samples)
                .collect();
        }
    }
    tree
}

/// The largest `f64` below `v` (`f64::next_down`).
pub fn next_down(v: f64) -> f64 {
    if v.is_nan() || v == f64::NEG_INFINITY {
        return v;
    }
    if v == 0.0 {
        return -f64::from_bits(1);
    }
    let b = v.to_bits();
    f64::from_bits(if v > 0.0 { b - 1 } else { b + 1 })
}

/// The project's CART as a linfa estimator: parameters that `Fit` a linfa `Dataset` of `f64`
/// records and `usize` class targets into a [`FittedCart`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CartClassifier(pub CartParams);

/// A fitted [`CartClassifier`]: predicts the majority class of the leaf; [`FittedCart::proba`]
/// gives the leaf's class fractions.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedCart {
    /// The tree.
    pub tree: CartTree,
}

impl FittedCart {
    /// Class fractions for one row.
    pub fn proba(&self, row: &[f64]) -> &[f64] {
        &self.tree.nodes[self.tree.apply(row)].value
    }
}

impl<D, T> Fit<ArrayBase<D, Ix2>, T, linfa::Error> for CartClassifier
where
    D: Data<Elem = f64>,
    T: AsSingleTargets<Elem = usize>,
{
    type Object = FittedCart;

    fn fit(&self, dataset: &DatasetBase<ArrayBase<D, Ix2>, T>) -> Result<FittedCart, linfa::Error> {
        let x = dataset.records();
        let (n, d) = (x.nrows(), x.ncols());
        if n == 0 {
            return Err(linfa::Error::NotEnoughSamples);
        }
        let y = dataset.as_single_targets();
        let classes: Vec<u32> = y.iter().map(|&c| c as u32).collect();
        let n_classes = classes.iter().max().map_or(0, |m| *m as usize + 1);
        let weights: Vec<f64> = if dataset.weights().is_some() {
            (0..n).map(|i| f64::from(dataset.weight_for(i))).collect()
        } else {
            vec![1.0; n]
        };
        let rows: Vec<f64> = x.rows().into_iter().flat_map(|r| r.to_vec()).collect();
        let m = TrainMatrix::new(rows, d, classes, n_classes, Vec::new(), weights);
        Ok(FittedCart {
            tree: m.fit(Learner::Cart, self.0),
        })
    }
}

impl<D: Data<Elem = f64>> PredictInplace<ArrayBase<D, Ix2>, Array1<usize>> for FittedCart {
    fn predict_inplace(&self, x: &ArrayBase<D, Ix2>, y: &mut Array1<usize>) {
        assert_eq!(x.nrows(), y.len(), "one target per record");
        for (row, out) in x.rows().into_iter().zip(y.iter_mut()) {
            *out = argmax(self.proba(&row.to_vec()));
        }
    }

    fn default_target(&self, x: &ArrayBase<D, Ix2>) -> Array1<usize> {
        Array1::zeros(x.nrows())
    }
}

fn argmax(v: &[f64]) -> usize {
    let mut b = 0;
    for (i, &p) in v.iter().enumerate() {
        if p > v[b] {
            b = i;
        }
    }
    b
}

/// Predicts one record (helper for 1-D rows).
pub fn predict_row<D: Data<Elem = f64>>(m: &FittedCart, row: &ArrayBase<D, Ix1>) -> usize {
    argmax(m.proba(&row.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use linfa::traits::Predict;

    fn easy() -> (ndarray::Array2<f64>, Array1<usize>) {
        let mut x = Vec::new();
        let mut y = Vec::new();
        for i in 0..200 {
            let a = f64::from(i % 20);
            let b = f64::from((i * 7) % 13);
            x.extend([a, b]);
            y.push(usize::from(a >= 10.0));
        }
        (
            ndarray::Array2::from_shape_vec((200, 2), x).unwrap(),
            Array1::from(y),
        )
    }

    #[test]
    fn fit_groups_share_criterion_and_seed_and_spread_over_the_threads() {
        let grid = crate::config::Grid::upstream_default();
        let params: Vec<CartParams> = grid.configs().iter().map(|c| c.params(42)).collect();
        let n = 6789;
        for (threads, want) in [(1, 2), (2, 2), (3, 4), (8, 8), (64, 12)] {
            let groups = fit_groups(&params, n, threads);
            assert_eq!(groups.len(), want, "{threads} threads");
            let mut seen: Vec<usize> = groups.iter().flatten().copied().collect();
            seen.sort();
            assert_eq!(seen, (0..params.len()).collect::<Vec<_>>());
            for g in &groups {
                let key = |i: usize| {
                    let p = &params[i];
                    let depth = p.max_depth.unwrap_or(usize::MAX);
                    (p.min_samples_leaf.resolve(n), std::cmp::Reverse(depth))
                };
                assert!(g
                    .iter()
                    .all(|&i| params[i].criterion == params[g[0]].criterion));
                assert!(g.windows(2).all(|w| key(w[0]) < key(w[1])), "{g:?}");
            }
        }
    }

    #[test]
    fn cart_and_linfa_trees_agree_on_easy_data() {
        let (x, y) = easy();
        let ds = DatasetBase::new(x.clone(), y.clone());
        let p = CartParams {
            max_depth: Some(4),
            ..Default::default()
        };
        let ours = CartClassifier(p).fit(&ds).unwrap();
        let pred: Array1<usize> = ours.predict(&x);
        assert_eq!(pred, y);
        let classes: Vec<u32> = y.iter().map(|&c| c as u32).collect();
        let m = TrainMatrix::new(
            x.iter().copied().collect::<Vec<f64>>(),
            2,
            classes,
            2,
            Vec::new(),
            vec![1.0; 200],
        );
        let lt = fit_linfa_trees(&m, p);
        for i in 0..200 {
            let row = [x[[i, 0]], x[[i, 1]]];
            assert_eq!(argmax(&lt.nodes[lt.apply(&row)].value), y[i]);
            assert_eq!(ours.proba(&row)[y[i]], 1.0);
        }
        // Leaf distributions recovered by routing: every training row is counted once.
        let routed: f64 = lt
            .nodes
            .iter()
            .filter(|n| n.feature.is_none())
            .map(|n| n.weighted_n_samples)
            .sum();
        assert_eq!(routed, 200.0);
        assert_eq!(next_down(1.0), 0.9999999999999999);
    }
}
