//! A CART decision tree that grows scikit-learn's `DecisionTreeClassifier` /
//! `DecisionTreeRegressor` (best splitter, depth-first builder) split for split.
//!
//! # Semantics (documented and tested)
//! - **Floats.** Like scikit-learn, features are cast to `f32` for fitting; a threshold is the
//!   midpoint `a/2 + b/2` of two neighbouring distinct `f32` values computed in `f64` (or `a`
//!   when the midpoint rounds to `b`), and training rows are partitioned by
//!   `f64::from(x_f32) <= threshold`. Two values closer than `1e-7` are one value.
//!   Prediction routes with the exact `f64` feature values (`value <= threshold` goes left), as
//!   PyTorch's generated code and [`ah_core::model::Tree::route`] do.
//! - **Tie-breaking.** scikit-learn with `random_state` visits features in a random order
//!   drawn per node from its own generator (seeded by `RandomState(seed).randint(0, 2^31-1)`)
//!   and keeps the first strictly better split. This implementation draws the same sequence
//!   (same generator, same Fisher-Yates bookkeeping of constant features), so equally good
//!   splits are broken as scikit-learn breaks them; within a feature the lowest threshold wins.
//!   With unit weights the class counts are exact, so trees equal scikit-learn's; with
//!   fractional sample weights sums may differ from scikit-learn's in the last bit (it adds in
//!   its own sample order), which can only matter for exactly tied splits.
//! - **Leaves** hold weighted class fractions (`count / weighted samples`, scikit-learn >= 1.4),
//!   or the weighted mean for regression.
//! - `min_samples_leaf` is a count or a fraction (`ceil(fraction * n_samples)`);
//!   `min_samples_split = max(2, 2 * min_samples_leaf)`.
//! - Fully deterministic: the same data and parameters give the same tree, bit for bit.

/// Split quality measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Criterion {
    /// Gini impurity.
    Gini,
    /// Shannon entropy (log base 2).
    Entropy,
    /// Variance (regression).
    SquaredError,
}

impl Criterion {
    /// scikit-learn's name.
    pub fn name(self) -> &'static str {
        match self {
            Criterion::Gini => "gini",
            Criterion::Entropy => "entropy",
            Criterion::SquaredError => "squared_error",
        }
    }
}

/// `min_samples_leaf` as scikit-learn takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MinSamplesLeaf {
    /// At least this many samples per leaf.
    Count(usize),
    /// At least `ceil(fraction * n_samples)` samples per leaf.
    Fraction(f64),
}

impl MinSamplesLeaf {
    /// The count for `n` training samples.
    pub fn resolve(self, n: usize) -> usize {
        match self {
            MinSamplesLeaf::Count(c) => c.max(1),
            MinSamplesLeaf::Fraction(f) => ((f * n as f64).ceil() as usize).max(1),
        }
    }

    /// The value as given (`10` or `0.01`).
    pub fn as_f64(self) -> f64 {
        match self {
            MinSamplesLeaf::Count(c) => c as f64,
            MinSamplesLeaf::Fraction(f) => f,
        }
    }

    /// Parses `10` (a count) or `0.01` (a fraction in (0, 1)).
    pub fn parse(text: &str) -> Option<Self> {
        if let Ok(c) = text.parse::<usize>() {
            return (c >= 1).then_some(MinSamplesLeaf::Count(c));
        }
        let f: f64 = text.parse().ok()?;
        (f > 0.0 && f < 1.0).then_some(MinSamplesLeaf::Fraction(f))
    }
}

impl std::fmt::Display for MinSamplesLeaf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MinSamplesLeaf::Count(c) => write!(f, "{c}"),
            MinSamplesLeaf::Fraction(x) => write!(f, "{x}"),
        }
    }
}

/// Hyper-parameters of one tree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CartParams {
    /// Split criterion.
    pub criterion: Criterion,
    /// Maximum depth (`None`: unlimited).
    pub max_depth: Option<usize>,
    /// Minimum samples per leaf.
    pub min_samples_leaf: MinSamplesLeaf,
    /// scikit-learn's `random_state` (feature visiting order).
    pub seed: u32,
}

impl Default for CartParams {
    fn default() -> Self {
        Self { criterion: Criterion::Gini, max_depth: None, min_samples_leaf: MinSamplesLeaf::Count(1), seed: 42 }
    }
}

/// The training data of one fit, column-major.
#[derive(Debug, Clone)]
pub struct CartData<'a> {
    /// `columns[f][i]`: feature `f` of sample `i`, as `f32`.
    pub columns: &'a [Vec<f32>],
    /// Class index per sample (classification) — ignored for regression.
    pub classes: &'a [u32],
    /// Number of classes.
    pub n_classes: usize,
    /// Target per sample (regression) — ignored for classification.
    pub targets: &'a [f64],
    /// Sample weights.
    pub weights: &'a [f64],
}

/// A node of a fitted tree, in scikit-learn's node order (depth-first, left first).
#[derive(Debug, Clone, PartialEq)]
pub struct CartNode {
    /// Split feature (`None` for a leaf).
    pub feature: Option<usize>,
    /// Threshold: left when `x <= threshold`.
    pub threshold: f64,
    /// Left child.
    pub left: usize,
    /// Right child.
    pub right: usize,
    /// Class fractions (classification) or `[mean]` (regression).
    pub value: Vec<f64>,
    /// Training samples in the node.
    pub n_samples: usize,
    /// Weighted training samples in the node.
    pub weighted_n_samples: f64,
    /// Weighted class counts (classification), for confidence estimates.
    pub counts: Vec<f64>,
    /// Impurity.
    pub impurity: f64,
}

/// A fitted tree.
#[derive(Debug, Clone, PartialEq)]
pub struct CartTree {
    /// Nodes, root first.
    pub nodes: Vec<CartNode>,
    /// Number of features it was fitted on.
    pub n_features: usize,
}

impl CartTree {
    /// The leaf a row (exact `f64` values) reaches.
    #[inline]
    pub fn apply(&self, row: &[f64]) -> usize {
        let mut i = 0;
        while let Some(f) = self.nodes[i].feature {
            let n = &self.nodes[i];
            i = if row[f] <= n.threshold { n.left } else { n.right };
        }
        i
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.nodes.iter().filter(|n| n.feature.is_none()).count()
    }

    /// Depth (a single leaf is 0).
    pub fn depth(&self) -> usize {
        fn go(t: &CartTree, i: usize) -> usize {
            match t.nodes[i].feature {
                Some(_) => 1 + go(t, t.nodes[i].left).max(go(t, t.nodes[i].right)),
                None => 0,
            }
        }
        go(self, 0)
    }
}

const FEATURE_THRESHOLD: f64 = 1e-7;
const EPSILON: f64 = f64::EPSILON;
const RAND_R_MAX: u32 = 0x7FFF_FFFF;

#[inline]
fn our_rand_r(seed: &mut u32) -> u32 {
    if *seed == 0 {
        *seed = 1;
    }
    *seed ^= *seed << 13;
    *seed ^= *seed >> 17;
    *seed ^= *seed << 5;
    *seed % (RAND_R_MAX + 1)
}

#[inline]
fn rand_int(low: usize, high: usize, seed: &mut u32) -> usize {
    low + (our_rand_r(seed) as usize) % (high - low)
}

#[inline]
fn log2(x: f64) -> f64 {
    x.ln() / std::f64::consts::LN_2
}

struct Best {
    feature: usize,
    threshold: f64,
    pos: usize,
    proxy: f64,
}

struct Builder<'a> {
    data: &'a CartData<'a>,
    params: CartParams,
    regression: bool,
    /// Per feature: sample indices; a node owns `[start, end)` of every feature's array, sorted
    /// by that feature.
    sorted: Vec<Vec<u32>>,
    features: Vec<usize>,
    constant_features: Vec<usize>,
    rand_state: u32,
    min_samples_leaf: usize,
    min_samples_split: usize,
    goes_left: Vec<bool>,
    buf: Vec<u32>,
    nodes: Vec<CartNode>,
}

struct StackRecord {
    start: usize,
    end: usize,
    depth: usize,
    parent: Option<(usize, bool)>,
    impurity: f64,
    n_constant: usize,
}

impl<'a> Builder<'a> {
    fn node_stats(&self, start: usize, end: usize) -> (Vec<f64>, f64, f64, f64) {
        // (class counts, weighted n, sum y, sum w*y*y) over the node's samples.
        let d = self.data;
        let mut counts = vec![0.0; if self.regression { 0 } else { d.n_classes }];
        let (mut wn, mut sum, mut sq) = (0.0, 0.0, 0.0);
        for &s in &self.sorted[0][start..end] {
            let s = s as usize;
            let w = d.weights[s];
            wn += w;
            if self.regression {
                let y = d.targets[s];
                sum += w * y;
                sq += w * y * y;
            } else {
                counts[d.classes[s] as usize] += w;
            }
        }
        (counts, wn, sum, sq)
    }

    fn impurity_of(&self, counts: &[f64], wn: f64, sum: f64, sq: f64) -> f64 {
        match self.params.criterion {
            Criterion::Gini => {
                let mut sqc = 0.0;
                for &c in counts {
                    sqc += c * c;
                }
                1.0 - sqc / (wn * wn)
            }
            Criterion::Entropy => {
                let mut e = 0.0;
                for &c in counts {
                    if c > 0.0 {
                        let p = c / wn;
                        e -= p * log2(p);
                    }
                }
                e
            }
            Criterion::SquaredError => {
                let m = sum / wn;
                sq / wn - m * m
            }
        }
    }

    /// scikit-learn's `node_split_best`.
    fn node_split(&mut self, start: usize, end: usize, n_known_constants: &mut usize, totals: &(Vec<f64>, f64, f64, f64)) -> Option<Best> {
        let n_features = self.features.len();
        let mut f_i = n_features;
        let mut n_visited = 0usize;
        let mut n_found_constants = 0usize;
        let mut n_drawn_constants = 0usize;
        let n_known = *n_known_constants;
        let mut n_total_constants = n_known;
        let mut best: Option<Best> = None;
        let mut best_proxy = f64::NEG_INFINITY;
        let max_features = n_features;
        let msl = self.min_samples_leaf;
        let d = self.data;
        let (ref tot_counts, tot_w, tot_sum, _) = *totals;
        let mut left_counts = vec![0.0; tot_counts.len()];
        while f_i > n_total_constants
            && (n_visited < max_features || n_visited <= n_found_constants + n_drawn_constants)
        {
            n_visited += 1;
            let mut f_j = rand_int(n_drawn_constants, f_i - n_found_constants, &mut self.rand_state);
            if f_j < n_known {
                self.features.swap(n_drawn_constants, f_j);
                n_drawn_constants += 1;
                continue;
            }
            f_j += n_found_constants;
            let feature = self.features[f_j];
            let col = &d.columns[feature];
            let order = &self.sorted[feature][start..end];
            let first = f64::from(col[order[0] as usize]);
            let last = f64::from(col[order[order.len() - 1] as usize]);
            if last <= first + FEATURE_THRESHOLD {
                self.features.swap(f_j, n_total_constants);
                n_found_constants += 1;
                n_total_constants += 1;
                continue;
            }
            f_i -= 1;
            self.features.swap(f_i, f_j);
            // Scan the sorted samples.
            left_counts.iter_mut().for_each(|c| *c = 0.0);
            let (mut wl, mut suml, mut sql) = (0.0f64, 0.0f64, 0.0f64);
            let n = end - start;
            let mut p = 0usize; // relative position
            let mut added = 0usize; // samples [0, added) are in the left sums
            while p < n {
                while p + 1 < n
                    && f64::from(col[order[p + 1] as usize]) <= f64::from(col[order[p] as usize]) + FEATURE_THRESHOLD
                {
                    p += 1;
                }
                let p_prev = p;
                p += 1;
                if p >= n {
                    continue;
                }
                if p < msl || n - p < msl {
                    continue;
                }
                // update(p)
                while added < p {
                    let s = order[added] as usize;
                    let w = d.weights[s];
                    wl += w;
                    if self.regression {
                        let y = d.targets[s];
                        suml += w * y;
                        sql += w * y * y;
                    } else {
                        left_counts[d.classes[s] as usize] += w;
                    }
                    added += 1;
                }
                let wr = tot_w - wl;
                let proxy = match self.params.criterion {
                    Criterion::SquaredError => {
                        let sumr = tot_sum - suml;
                        suml * suml / wl + sumr * sumr / wr
                    }
                    Criterion::Gini => {
                        let (mut sl, mut sr) = (0.0, 0.0);
                        for (c, &lc) in left_counts.iter().enumerate() {
                            let rc = tot_counts[c] - lc;
                            sl += lc * lc;
                            sr += rc * rc;
                        }
                        let gl = 1.0 - sl / (wl * wl);
                        let gr = 1.0 - sr / (wr * wr);
                        -wr * gr - wl * gl
                    }
                    Criterion::Entropy => {
                        let (mut el, mut er) = (0.0, 0.0);
                        for (c, &lc) in left_counts.iter().enumerate() {
                            if lc > 0.0 {
                                let q = lc / wl;
                                el -= q * log2(q);
                            }
                            let rc = tot_counts[c] - lc;
                            if rc > 0.0 {
                                let q = rc / wr;
                                er -= q * log2(q);
                            }
                        }
                        -wr * er - wl * el
                    }
                };
                let _ = sql;
                if proxy > best_proxy {
                    best_proxy = proxy;
                    let a = f64::from(col[order[p_prev] as usize]);
                    let b = f64::from(col[order[p] as usize]);
                    let mut threshold = a / 2.0 + b / 2.0;
                    if threshold == b || threshold.is_infinite() {
                        threshold = a;
                    }
                    best = Some(Best { feature, threshold, pos: start + p, proxy });
                }
            }
        }
        // Constant-feature bookkeeping (keeps scikit-learn's random sequence).
        self.features[..n_known].copy_from_slice(&self.constant_features[..n_known]);
        let (src, dst) = (n_known, n_known + n_found_constants);
        let copy: Vec<usize> = self.features[src..dst].to_vec();
        self.constant_features[src..dst].copy_from_slice(&copy);
        *n_known_constants = n_total_constants;
        best
    }

    /// Stable partition of every (non-constant) feature's segment by the split.
    fn partition(&mut self, start: usize, end: usize, best: &Best, n_constant: usize) {
        let col = &self.data.columns[best.feature];
        for &s in &self.sorted[0][start..end] {
            self.goes_left[s as usize] = f64::from(col[s as usize]) <= best.threshold;
        }
        // Features known constant in this node are never read again below it.
        let skip: Vec<usize> = self.constant_features[..n_constant].to_vec();
        for f in 0..self.sorted.len() {
            if f != 0 && skip.contains(&f) {
                continue;
            }
            let seg = &mut self.sorted[f][start..end];
            self.buf.clear();
            let mut w = 0;
            for i in 0..seg.len() {
                let s = seg[i];
                if self.goes_left[s as usize] {
                    seg[w] = s;
                    w += 1;
                } else {
                    self.buf.push(s);
                }
            }
            debug_assert_eq!(start + w, best.pos);
            seg[w..].copy_from_slice(&self.buf);
        }
    }

    fn build(mut self) -> CartTree {
        let n = self.data.weights.len();
        let mut stack = vec![StackRecord { start: 0, end: n, depth: 0, parent: None, impurity: f64::INFINITY, n_constant: 0 }];
        let mut first = true;
        let max_depth = self.params.max_depth.unwrap_or(usize::MAX);
        while let Some(rec) = stack.pop() {
            let (start, end) = (rec.start, rec.end);
            let n_node = end - start;
            let totals = self.node_stats(start, end);
            let mut impurity = rec.impurity;
            let mut is_leaf = rec.depth >= max_depth || n_node < self.min_samples_split || n_node < 2 * self.min_samples_leaf;
            if first {
                impurity = self.impurity_of(&totals.0, totals.1, totals.2, totals.3);
                first = false;
            }
            is_leaf = is_leaf || impurity <= EPSILON;
            let mut n_constant = rec.n_constant;
            let mut split = None;
            if !is_leaf {
                split = self.node_split(start, end, &mut n_constant, &totals);
                match &split {
                    None => is_leaf = true,
                    Some(b) if b.pos >= end => is_leaf = true,
                    _ => {}
                }
            }
            let (counts, wn, sum, _) = &totals;
            let value = if self.regression { vec![sum / wn] } else { counts.iter().map(|c| c / wn).collect() };
            let id = self.nodes.len();
            self.nodes.push(CartNode {
                feature: None,
                threshold: -2.0,
                left: 0,
                right: 0,
                value,
                n_samples: n_node,
                weighted_n_samples: *wn,
                counts: counts.clone(),
                impurity,
            });
            if let Some((parent, is_left)) = rec.parent {
                if is_left {
                    self.nodes[parent].left = id;
                } else {
                    self.nodes[parent].right = id;
                }
            }
            if is_leaf {
                continue;
            }
            let best = split.expect("not a leaf");
            let _ = best.proxy;
            // Children impurities.
            let d = self.data;
            let order = &self.sorted[best.feature][start..end];
            let col = &d.columns[best.feature];
            let mut lc = vec![0.0; counts.len()];
            let (mut wl, mut sl, mut ql) = (0.0, 0.0, 0.0);
            for &s in order {
                let s = s as usize;
                if f64::from(col[s]) > best.threshold {
                    break;
                }
                let w = d.weights[s];
                wl += w;
                if self.regression {
                    sl += w * d.targets[s];
                    ql += w * d.targets[s] * d.targets[s];
                } else {
                    lc[d.classes[s] as usize] += w;
                }
            }
            let rc: Vec<f64> = counts.iter().zip(&lc).map(|(t, l)| t - l).collect();
            let imp_l = self.impurity_of(&lc, wl, sl, ql);
            let imp_r = self.impurity_of(&rc, wn - wl, sum - sl, totals.3 - ql);
            let w_total: f64 = self.data.weights.iter().sum();
            let improvement = (wn / w_total) * (impurity - (wn - wl) / wn * imp_r - wl / wn * imp_l);
            if improvement + EPSILON < 0.0 {
                continue;
            }
            self.nodes[id].feature = Some(best.feature);
            self.nodes[id].threshold = best.threshold;
            self.partition(start, end, &best, n_constant);
            stack.push(StackRecord { start: best.pos, end, depth: rec.depth + 1, parent: Some((id, false)), impurity: imp_r, n_constant });
            stack.push(StackRecord { start, end: best.pos, depth: rec.depth + 1, parent: Some((id, true)), impurity: imp_l, n_constant });
        }
        CartTree { nodes: self.nodes, n_features: self.data.columns.len() }
    }
}

/// Per-feature sample order by value, shared by every fit on the same training data.
#[derive(Debug, Clone)]
pub struct Presorted {
    orders: Vec<Vec<u32>>,
}

impl Presorted {
    /// Sorts every column once.
    pub fn new(columns: &[Vec<f32>]) -> Self {
        let orders = columns
            .iter()
            .map(|col| {
                let mut o: Vec<u32> = (0..col.len() as u32).collect();
                o.sort_by(|&a, &b| col[a as usize].total_cmp(&col[b as usize]).then(a.cmp(&b)));
                o
            })
            .collect();
        Self { orders }
    }
}

/// Fits a tree. `presorted` must come from the same `data.columns`.
pub fn fit(data: &CartData<'_>, presorted: &Presorted, params: CartParams) -> CartTree {
    let n = data.weights.len();
    let regression = params.criterion == Criterion::SquaredError;
    let min_samples_leaf = params.min_samples_leaf.resolve(n);
    let mut rs = crate::split::RandomState::new(params.seed);
    let rand_state = rs.randint(0, i64::from(RAND_R_MAX)) as u32;
    let n_features = data.columns.len();
    let builder = Builder {
        data,
        params,
        regression,
        sorted: presorted.orders.clone(),
        features: (0..n_features).collect(),
        constant_features: (0..n_features).collect(),
        rand_state,
        min_samples_leaf,
        min_samples_split: 2usize.max(2 * min_samples_leaf),
        goes_left: vec![false; n],
        buf: Vec::with_capacity(n),
        nodes: Vec::new(),
    };
    if n == 0 || n_features == 0 {
        // A single leaf.
        let mut counts = vec![0.0; data.n_classes];
        let mut wn = 0.0;
        for i in 0..n {
            wn += data.weights[i];
            if !regression {
                counts[data.classes[i] as usize] += data.weights[i];
            }
        }
        let value = if regression {
            vec![data.targets.iter().zip(data.weights).map(|(y, w)| y * w).sum::<f64>() / wn]
        } else {
            counts.iter().map(|c| c / wn).collect()
        };
        return CartTree {
            nodes: vec![CartNode { feature: None, threshold: -2.0, left: 0, right: 0, value, n_samples: n, weighted_n_samples: wn, counts, impurity: 0.0 }],
            n_features,
        };
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data<'a>(cols: &'a [Vec<f32>], y: &'a [u32], w: &'a [f64], k: usize) -> CartData<'a> {
        CartData { columns: cols, classes: y, n_classes: k, targets: &[], weights: w }
    }

    #[test]
    fn hand_checked_small_tree() {
        // x0 separates perfectly at 2.5; x1 is noise.
        let cols = vec![vec![1.0, 2.0, 3.0, 4.0, 2.0, 3.0], vec![5.0, 5.0, 1.0, 1.0, 1.0, 5.0]];
        let y = [0, 0, 1, 1, 0, 1];
        let w = [1.0; 6];
        let d = data(&cols, &y, &w, 2);
        let t = fit(&d, &Presorted::new(&cols), CartParams::default());
        assert_eq!(t.nodes.len(), 3);
        assert_eq!(t.nodes[0].feature, Some(0));
        assert_eq!(t.nodes[0].threshold, 2.5);
        assert_eq!(t.nodes[1].value, vec![1.0, 0.0]);
        assert_eq!(t.nodes[2].value, vec![0.0, 1.0]);
        assert_eq!(t.apply(&[2.5, 0.0]), 1);
        assert_eq!(t.apply(&[2.50001, 0.0]), 2);
    }

    #[test]
    fn min_samples_leaf_and_fractions() {
        let cols = vec![vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]];
        let y = [0, 1, 0, 0, 1, 1, 1, 1];
        let w = [1.0; 8];
        let d = data(&cols, &y, &w, 2);
        let p = CartParams { min_samples_leaf: MinSamplesLeaf::Count(3), ..Default::default() };
        let t = fit(&d, &Presorted::new(&cols), p);
        for n in &t.nodes {
            assert!(n.n_samples >= 3, "{n:?}");
        }
        assert_eq!(MinSamplesLeaf::Fraction(0.01).resolve(6789), 68);
        assert_eq!(MinSamplesLeaf::parse("0.05"), Some(MinSamplesLeaf::Fraction(0.05)));
        assert_eq!(MinSamplesLeaf::parse("10"), Some(MinSamplesLeaf::Count(10)));
        assert_eq!(MinSamplesLeaf::parse("0"), None);
    }

    #[test]
    fn weights_move_the_leaf_distribution() {
        let cols = vec![vec![1.0, 1.0, 1.0]];
        let y = [0, 1, 1];
        let w = [2.0, 1.0, 1.0];
        let d = data(&cols, &y, &w, 2);
        let t = fit(&d, &Presorted::new(&cols), CartParams::default());
        assert_eq!(t.nodes.len(), 1);
        assert_eq!(t.nodes[0].value, vec![0.5, 0.5]);
    }

    #[test]
    fn regression_tree_means() {
        let cols = vec![vec![1.0, 2.0, 3.0, 4.0]];
        let d = CartData { columns: &cols, classes: &[], n_classes: 0, targets: &[1.0, 1.0, 5.0, 5.0], weights: &[1.0; 4] };
        let p = CartParams { criterion: Criterion::SquaredError, ..Default::default() };
        let t = fit(&d, &Presorted::new(&cols), p);
        assert_eq!(t.nodes[0].threshold, 2.5);
        assert_eq!(t.nodes[1].value, vec![1.0]);
        assert_eq!(t.nodes[2].value, vec![5.0]);
    }

    #[test]
    fn deterministic_bit_for_bit() {
        let n = 500;
        let mut rs = crate::split::RandomState::new(7);
        let cols: Vec<Vec<f32>> = (0..6).map(|_| (0..n).map(|_| (rs.next_u32() % 50) as f32).collect()).collect();
        let y: Vec<u32> = (0..n).map(|i| u32::from(cols[0][i] + cols[1][i] > 50.0) + u32::from(cols[2][i] > 40.0)).collect();
        let w = vec![1.0; n];
        let d = data(&cols, &y, &w, 3);
        let ps = Presorted::new(&cols);
        for crit in [Criterion::Gini, Criterion::Entropy] {
            let p = CartParams { criterion: crit, max_depth: Some(6), ..Default::default() };
            let a = fit(&d, &ps, p);
            let b = fit(&d, &ps, p);
            assert_eq!(a, b);
            assert!(a.n_leaves() > 4);
        }
    }
}
