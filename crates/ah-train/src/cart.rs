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
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
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
        Self {
            criterion: Criterion::Gini,
            max_depth: None,
            min_samples_leaf: MinSamplesLeaf::Count(1),
            seed: 42,
        }
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
            i = if row[f] <= n.threshold {
                n.left
            } else {
                n.right
            };
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

use std::collections::HashMap;
use std::rc::Rc;

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

#[derive(Debug, Clone, Copy)]
struct Best {
    feature: usize,
    threshold: f64,
    pos: usize,
}

/// The best split of one feature over one node's samples (independent of the random feature
/// order, so it is shared between the trees of a grid group).
#[derive(Debug, Clone, Copy)]
struct FeatResult {
    constant: bool,
    proxy: f64,
    /// Samples going left.
    n_left: u32,
    threshold: f64,
}

/// Per-node split results, keyed by the node's sample set (count and two order-independent
/// 64-bit hashes of the sample ids). Trees of one (criterion, min_samples_leaf) group differ
/// only in depth, so they share almost all nodes.
type NodeCache = HashMap<(u32, u64, u64), Rc<Vec<FeatResult>>>;

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

struct Builder<'a> {
    data: &'a CartData<'a>,
    criterion: Criterion,
    regression: bool,
    /// Per feature: sample indices; a node owns `[start, end)` of every feature's array, sorted
    /// by that feature (ties by sample index).
    sorted: Vec<Vec<u32>>,
    features: Vec<usize>,
    constant_features: Vec<usize>,
    rand_state: u32,
    min_samples_leaf: usize,
    min_samples_split: usize,
    goes_left: Vec<bool>,
    buf: Vec<u32>,
    nodes: Vec<CartNode>,
    w_total: f64,
    /// Per node id: segment, split, parent, whether its feature segments are up to date.
    info: Vec<NodeInfo>,
    /// Per node id: features known constant in it (for deferred partitions).
    constant_features_at: Vec<Vec<usize>>,
    /// Two-valued columns (see [`Presorted`]).
    two_valued: &'a [Option<(f32, f32)>],
    /// `c * log2(c)` for `c = 0..=n` when the criterion is entropy and all weights are 1.
    xlx: Option<Vec<f64>>,
    /// Every sample weight is 1.
    unit_weights: bool,
    /// Low-value bitsets of two-valued columns (see [`Presorted`]).
    lo_bits: &'a [Option<Vec<u64>>],
    /// Per class, the current node's samples as a bitset (`None`: count by visiting).
    class_masks: Option<Vec<Vec<u64>>>,
}

#[derive(Debug, Clone, Copy)]
struct NodeInfo {
    start: usize,
    end: usize,
    parent: Option<usize>,
    feature: Option<usize>,
    threshold: f64,
    /// Every feature's segment has been partitioned into the children's.
    partitioned: bool,
}

struct StackRecord {
    start: usize,
    end: usize,
    depth: usize,
    parent: Option<(usize, bool)>,
    impurity: f64,
    n_constant: usize,
}

type Totals = (Vec<f64>, f64, f64, f64);

impl<'a> Builder<'a> {
    fn node_stats(&self, start: usize, end: usize) -> Totals {
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
        match self.criterion {
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

    fn node_key(&self, start: usize, end: usize) -> (u32, u64, u64) {
        let (mut a, mut b) = (0u64, 0u64);
        for &s in &self.sorted[0][start..end] {
            let h = mix(u64::from(s));
            a = a.wrapping_add(h);
            b = b.wrapping_add(mix(h ^ 0x5555_5555_5555_5555));
        }
        ((end - start) as u32, a, b)
    }

    /// The scan of a column with two values `lo < hi`: its only candidate split puts the
    /// `lo` samples left (what the sorted scan finds, computed by counting).
    #[allow(clippy::too_many_arguments)]
    fn scan_two_valued(
        &self,
        feature: usize,
        lo: f32,
        hi: f32,
        start: usize,
        end: usize,
        totals: &Totals,
        left_counts: &mut [f64],
    ) -> FeatResult {
        let d = self.data;
        let col = &d.columns[feature];
        let n = end - start;
        let constant = FeatResult {
            constant: true,
            proxy: f64::NEG_INFINITY,
            n_left: 0,
            threshold: 0.0,
        };
        let (a, b) = (f64::from(lo), f64::from(hi));
        if b <= a + FEATURE_THRESHOLD {
            return constant;
        }
        left_counts.iter_mut().for_each(|c| *c = 0.0);
        let (mut n_left, mut wl, mut suml) = (0usize, 0.0f64, 0.0f64);
        if let (Some(masks), Some(bits)) = (&self.class_masks, &self.lo_bits[feature]) {
            // Unit weights: the counts are popcounts of the class masks and the low bits.
            for (c, m) in masks.iter().enumerate() {
                let k: u32 = m.iter().zip(bits).map(|(a, b)| (a & b).count_ones()).sum();
                left_counts[c] = f64::from(k);
                n_left += k as usize;
            }
            wl = n_left as f64;
        } else {
            for &s in &self.sorted[0][start..end] {
                let s = s as usize;
                if col[s] == lo {
                    n_left += 1;
                    let w = d.weights[s];
                    wl += w;
                    if self.regression {
                        suml += w * d.targets[s];
                    } else {
                        left_counts[d.classes[s] as usize] += w;
                    }
                }
            }
        }
        if n_left == 0 || n_left == n {
            return constant;
        }
        let mut res = FeatResult {
            constant: false,
            proxy: f64::NEG_INFINITY,
            n_left: 0,
            threshold: 0.0,
        };
        let msl = self.min_samples_leaf;
        if n_left < msl || n - n_left < msl {
            return res;
        }
        let proxy = self.proxy(totals, left_counts, wl, suml);
        res.proxy = proxy;
        let mut threshold = a / 2.0 + b / 2.0;
        if threshold == b || threshold.is_infinite() {
            threshold = a;
        }
        res.threshold = threshold;
        res.n_left = n_left as u32;
        res
    }

    /// scikit-learn's `proxy_impurity_improvement` for a left part with the given sums.
    #[inline]
    fn proxy(&self, totals: &Totals, left_counts: &[f64], wl: f64, suml: f64) -> f64 {
        let (ref tot_counts, tot_w, tot_sum, _) = *totals;
        let wr = tot_w - wl;
        match self.criterion {
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
        }
    }

    /// [`Builder::scan_feature`] for classification with unit weights: the same positions,
    /// the same formula at the positions that can win (the class counts are exact integers,
    /// so the left sums equal scikit-learn's whatever the order they are added in).
    fn scan_unit(
        &self,
        col: &[f32],
        order: &[u32],
        totals: &Totals,
        left_counts: &mut [f64],
    ) -> FeatResult {
        let d = self.data;
        let n = order.len();
        let msl = self.min_samples_leaf;
        let tot_counts = &totals.0;
        let tot_w = totals.1;
        let mut res = FeatResult {
            constant: false,
            proxy: f64::NEG_INFINITY,
            n_left: 0,
            threshold: 0.0,
        };
        left_counts.iter_mut().for_each(|c| *c = 0.0);
        let mut cur = f64::from(col[order[0] as usize]);
        for i in 0..n - 1 {
            left_counts[d.classes[order[i] as usize] as usize] += 1.0;
            let next = f64::from(col[order[i + 1] as usize]);
            if next <= cur + FEATURE_THRESHOLD {
                cur = next;
                continue;
            }
            let (v_prev, v_p) = (cur, next);
            cur = next;
            let p = i + 1;
            if p < msl || n - p < msl {
                continue;
            }
            let wl = p as f64;
            if let Some(xlx) = &self.xlx {
                let wr = tot_w - wl;
                let mut approx = -xlx[p] - xlx[wr as usize];
                for (c, &lc) in left_counts.iter().enumerate() {
                    approx += xlx[lc as usize] + xlx[(tot_counts[c] - lc) as usize];
                }
                if approx + 1e-7 * (1.0 + res.proxy.abs()) < res.proxy {
                    continue;
                }
            }
            let proxy = self.proxy(totals, left_counts, wl, 0.0);
            if proxy > res.proxy {
                res.proxy = proxy;
                let mut threshold = v_prev / 2.0 + v_p / 2.0;
                if threshold == v_p || threshold.is_infinite() {
                    threshold = v_prev;
                }
                res.threshold = threshold;
                res.n_left = p as u32;
            }
        }
        res
    }

    /// scikit-learn's scan of one feature: the first position of the best proxy.
    fn scan_feature(
        &self,
        feature: usize,
        start: usize,
        end: usize,
        totals: &Totals,
        left_counts: &mut [f64],
    ) -> FeatResult {
        if let Some((lo, hi)) = self.two_valued[feature] {
            return self.scan_two_valued(feature, lo, hi, start, end, totals, left_counts);
        }
        let d = self.data;
        let col = &d.columns[feature];
        let order = &self.sorted[feature][start..end];
        let n = end - start;
        let first = f64::from(col[order[0] as usize]);
        let last = f64::from(col[order[n - 1] as usize]);
        let mut res = FeatResult {
            constant: false,
            proxy: f64::NEG_INFINITY,
            n_left: 0,
            threshold: 0.0,
        };
        if last <= first + FEATURE_THRESHOLD {
            res.constant = true;
            return res;
        }
        if self.unit_weights && !self.regression {
            return self.scan_unit(col, order, totals, left_counts);
        }
        let msl = self.min_samples_leaf;
        left_counts.iter_mut().for_each(|c| *c = 0.0);
        let (mut wl, mut suml) = (0.0f64, 0.0f64);
        let mut p = 0usize;
        let mut added = 0usize;
        let mut cur = f64::from(col[order[0] as usize]);
        while p < n {
            while p + 1 < n {
                let next = f64::from(col[order[p + 1] as usize]);
                if next <= cur + FEATURE_THRESHOLD {
                    p += 1;
                    cur = next;
                } else {
                    break;
                }
            }
            let p_prev = p;
            p += 1;
            if p >= n {
                continue;
            }
            let v_p = f64::from(col[order[p] as usize]);
            let v_prev = cur;
            cur = v_p;
            if p < msl || n - p < msl {
                continue;
            }
            while added < p {
                let s = order[added] as usize;
                let w = d.weights[s];
                wl += w;
                if self.regression {
                    suml += w * d.targets[s];
                } else {
                    left_counts[d.classes[s] as usize] += w;
                }
                added += 1;
            }
            // Entropy with unit weights: a cheap exact-math bound (table of c*log2(c)) skips
            // positions that cannot beat this feature's best; the others get scikit-learn's
            // formula, so the chosen split is the same bit for bit.
            if let Some(xlx) = &self.xlx {
                let (ref tot_counts, tot_w, _, _) = *totals;
                let wr = tot_w - wl;
                let mut approx = -xlx[wl as usize] - xlx[wr as usize];
                for (c, &lc) in left_counts.iter().enumerate() {
                    approx += xlx[lc as usize] + xlx[(tot_counts[c] - lc) as usize];
                }
                if approx + 1e-7 * (1.0 + res.proxy.abs()) < res.proxy {
                    continue;
                }
            }
            let proxy = self.proxy(totals, left_counts, wl, suml);
            if proxy > res.proxy {
                res.proxy = proxy;
                let mut threshold = v_prev / 2.0 + v_p / 2.0;
                if threshold == v_p || threshold.is_infinite() {
                    threshold = v_prev;
                }
                res.threshold = threshold;
                res.n_left = p as u32;
            }
            let _ = p_prev;
        }
        res
    }

    /// scikit-learn's `node_split_best`: the random feature order picks, among the features'
    /// best splits, the first strictly best one.
    fn node_split(
        &mut self,
        start: usize,
        end: usize,
        n_known_constants: &mut usize,
        results: &[FeatResult],
    ) -> Option<Best> {
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
        while f_i > n_total_constants
            && (n_visited < max_features || n_visited <= n_found_constants + n_drawn_constants)
        {
            n_visited += 1;
            let mut f_j = rand_int(
                n_drawn_constants,
                f_i - n_found_constants,
                &mut self.rand_state,
            );
            if f_j < n_known {
                self.features.swap(n_drawn_constants, f_j);
                n_drawn_constants += 1;
                continue;
            }
            f_j += n_found_constants;
            let feature = self.features[f_j];
            let r = &results[feature];
            if r.constant {
                self.features.swap(f_j, n_total_constants);
                n_found_constants += 1;
                n_total_constants += 1;
                continue;
            }
            f_i -= 1;
            self.features.swap(f_i, f_j);
            if r.proxy > best_proxy {
                best_proxy = r.proxy;
                best = Some(Best {
                    feature,
                    threshold: r.threshold,
                    pos: start + r.n_left as usize,
                });
            }
        }
        let _ = end;
        // Constant-feature bookkeeping (keeps scikit-learn's random sequence).
        self.features[..n_known].copy_from_slice(&self.constant_features[..n_known]);
        let (src, dst) = (n_known, n_known + n_found_constants);
        let copy: Vec<usize> = self.features[src..dst].to_vec();
        self.constant_features[src..dst].copy_from_slice(&copy);
        *n_known_constants = n_total_constants;
        best
    }

    fn set_goes_left(&mut self, start: usize, end: usize, feature: usize, threshold: f64) {
        let col = &self.data.columns[feature];
        for &s in &self.sorted[0][start..end] {
            self.goes_left[s as usize] = f64::from(col[s as usize]) <= threshold;
        }
    }

    /// Builds the per-class bitsets of the node's samples when counting two-valued columns by
    /// popcount is cheaper than visiting the samples (unit weights, classification, large node).
    fn prepare_class_masks(&mut self, start: usize, end: usize) {
        let n_words = self.data.weights.len().div_ceil(64);
        let k = self.data.n_classes;
        let worth = self.unit_weights && !self.regression && (end - start) > 2 * k * n_words;
        if !worth {
            self.class_masks = None;
            return;
        }
        let mut masks = self.class_masks.take().unwrap_or_default();
        masks.resize_with(k, Vec::new);
        for m in masks.iter_mut() {
            m.clear();
            m.resize(n_words, 0);
        }
        for &s in &self.sorted[0][start..end] {
            let s = s as usize;
            masks[self.data.classes[s] as usize][s / 64] |= 1 << (s % 64);
        }
        self.class_masks = Some(masks);
    }

    /// Stable partition of feature `f`'s segment by `goes_left`.
    fn partition_feature(&mut self, f: usize, start: usize, end: usize) {
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
        seg[w..].copy_from_slice(&self.buf);
    }

    /// Makes every feature's segment of node `id` hold its samples in sorted order, applying
    /// the deferred partitions of its ancestors (feature 0 is always partitioned at once).
    fn materialize(&mut self, id: usize) {
        let Some(parent) = self.info[id].parent else {
            return;
        };
        if self.info[parent].partitioned {
            return;
        }
        self.materialize(parent);
        let p = self.info[parent];
        let (feature, threshold) = (p.feature.expect("split parent"), p.threshold);
        self.set_goes_left(p.start, p.end, feature, threshold);
        let mut skip = vec![false; self.sorted.len()];
        for &f in &self.constant_features_at[parent] {
            skip[f] = true;
        }
        for f in 1..self.sorted.len() {
            if !skip[f] && self.two_valued[f].is_none() {
                self.partition_feature(f, p.start, p.end);
            }
        }
        self.info[parent].partitioned = true;
    }

    /// Every feature's best split of the node `[start, end)` (id `id`), from the cache of
    /// nodes with the same samples when another depth of the group computed it.
    fn feature_results(
        &mut self,
        id: usize,
        (start, end): (usize, usize),
        n_constant: usize,
        totals: &Totals,
        left_counts: &mut [f64],
        cache: &mut NodeCache,
    ) -> Rc<Vec<FeatResult>> {
        let key = self.node_key(start, end);
        if let Some(r) = cache.get(&key) {
            return r.clone();
        }
        self.materialize(id);
        let mut known = vec![false; self.features.len()];
        for &f in &self.constant_features[..n_constant] {
            known[f] = true;
        }
        self.prepare_class_masks(start, end);
        let r: Vec<FeatResult> = (0..self.features.len())
            .map(|f| {
                if known[f] {
                    FeatResult {
                        constant: true,
                        proxy: f64::NEG_INFINITY,
                        n_left: 0,
                        threshold: 0.0,
                    }
                } else {
                    self.scan_feature(f, start, end, totals, left_counts)
                }
            })
            .collect();
        let r = Rc::new(r);
        cache.insert(key, r.clone());
        r
    }

    /// Impurities of the children of a split of `[start, end)` (over the node's samples, in
    /// feature-0 order) and the left child's weight: `(left, right, left weight)`.
    fn children_impurities(
        &self,
        start: usize,
        end: usize,
        best: &Best,
        totals: &Totals,
    ) -> (f64, f64, f64) {
        let (counts, wn, sum, sq) = totals;
        let d = self.data;
        let col = &d.columns[best.feature];
        let mut lc = vec![0.0; counts.len()];
        let (mut wl, mut sl, mut ql) = (0.0, 0.0, 0.0);
        for &s in &self.sorted[0][start..end] {
            let s = s as usize;
            if f64::from(col[s]) > best.threshold {
                continue;
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
        let imp_r = self.impurity_of(&rc, wn - wl, sum - sl, sq - ql);
        (imp_l, imp_r, wl)
    }

    /// A node of `n_node` samples with sums `totals`, as a leaf (a split sets its feature).
    fn leaf_node(&self, totals: &Totals, n_node: usize, impurity: f64) -> CartNode {
        let (counts, wn, sum, _) = totals;
        let value = if self.regression {
            vec![sum / wn]
        } else {
            counts.iter().map(|c| c / wn).collect()
        };
        CartNode {
            feature: None,
            threshold: -2.0,
            left: 0,
            right: 0,
            value,
            n_samples: n_node,
            weighted_n_samples: *wn,
            counts: counts.clone(),
            impurity,
        }
    }

    fn build(mut self, max_depth: Option<usize>, cache: &mut NodeCache) -> CartTree {
        let n = self.data.weights.len();
        let mut stack = vec![StackRecord {
            start: 0,
            end: n,
            depth: 0,
            parent: None,
            impurity: f64::INFINITY,
            n_constant: 0,
        }];
        let mut first = true;
        let max_depth = max_depth.unwrap_or(usize::MAX);
        let mut left_counts = vec![
            0.0;
            if self.regression {
                0
            } else {
                self.data.n_classes
            }
        ];
        while let Some(rec) = stack.pop() {
            let (start, end) = (rec.start, rec.end);
            let n_node = end - start;
            let totals = self.node_stats(start, end);
            let mut impurity = rec.impurity;
            let mut is_leaf = rec.depth >= max_depth
                || n_node < self.min_samples_split
                || n_node < 2 * self.min_samples_leaf;
            if first {
                impurity = self.impurity_of(&totals.0, totals.1, totals.2, totals.3);
                first = false;
            }
            is_leaf = is_leaf || impurity <= EPSILON;
            let mut n_constant = rec.n_constant;
            let mut split = None;
            let id = self.nodes.len();
            self.info.push(NodeInfo {
                start,
                end,
                parent: rec.parent.map(|p| p.0),
                feature: None,
                threshold: 0.0,
                partitioned: false,
            });
            self.constant_features_at.push(Vec::new());
            if !is_leaf {
                let results = self.feature_results(
                    id,
                    (start, end),
                    rec.n_constant,
                    &totals,
                    &mut left_counts,
                    cache,
                );
                split = self.node_split(start, end, &mut n_constant, &results);
                match &split {
                    None => is_leaf = true,
                    Some(b) if b.pos >= end => is_leaf = true,
                    _ => {}
                }
            }
            let node = self.leaf_node(&totals, n_node, impurity);
            self.nodes.push(node);
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
            let (imp_l, imp_r, wl) = self.children_impurities(start, end, &best, &totals);
            let wn = totals.1;
            let improvement =
                (wn / self.w_total) * (impurity - (wn - wl) / wn * imp_r - wl / wn * imp_l);
            if improvement + EPSILON < 0.0 {
                continue;
            }
            self.nodes[id].feature = Some(best.feature);
            self.nodes[id].threshold = best.threshold;
            self.info[id].feature = Some(best.feature);
            self.info[id].threshold = best.threshold;
            self.constant_features_at[id] = self.constant_features[..n_constant].to_vec();
            // Feature 0 now (stats and keys of the children read it); the others when needed.
            self.set_goes_left(start, end, best.feature, best.threshold);
            self.partition_feature(0, start, end);
            let _ = n_constant;
            stack.push(StackRecord {
                start: best.pos,
                end,
                depth: rec.depth + 1,
                parent: Some((id, false)),
                impurity: imp_r,
                n_constant,
            });
            stack.push(StackRecord {
                start,
                end: best.pos,
                depth: rec.depth + 1,
                parent: Some((id, true)),
                impurity: imp_l,
                n_constant,
            });
        }
        CartTree {
            nodes: self.nodes,
            n_features: self.data.columns.len(),
        }
    }
}

/// Per-feature sample order by value, shared by every fit on the same training data.
#[derive(Debug, Clone)]
pub struct Presorted {
    orders: Vec<Vec<u32>>,
    /// Per column: `Some((lo, hi))` when it takes at most two distinct values (one-hot
    /// columns); such columns are scanned by counting and never re-sorted.
    two_valued: Vec<Option<(f32, f32)>>,
    /// For two-valued columns: bit `i` set when sample `i` has the low value.
    lo_bits: Vec<Option<Vec<u64>>>,
}

impl Presorted {
    /// Sorts every column once.
    pub fn new(columns: &[Vec<f32>]) -> Self {
        use rayon::prelude::*;
        let two_valued: Vec<Option<(f32, f32)>> = columns
            .par_iter()
            .map(|col| {
                let (&first, rest) = col.split_first()?;
                let (mut lo, mut hi) = (first, first);
                for &v in rest {
                    if v < lo {
                        lo = v;
                    } else if v > hi {
                        hi = v;
                    }
                }
                col.iter().all(|&v| v == lo || v == hi).then_some((lo, hi))
            })
            .collect();
        // Two-valued columns are never scanned in order: their "order" is just the samples.
        let orders = columns
            .par_iter()
            .zip(&two_valued)
            .map(|(col, tv)| {
                let mut o: Vec<u32> = (0..col.len() as u32).collect();
                if tv.is_none() {
                    o.sort_by(|&a, &b| col[a as usize].total_cmp(&col[b as usize]).then(a.cmp(&b)));
                }
                o
            })
            .collect::<Vec<Vec<u32>>>();
        let lo_bits = columns
            .iter()
            .zip(&two_valued)
            .map(|(col, tv): (&Vec<f32>, &Option<(f32, f32)>)| {
                tv.map(|(lo, _)| {
                    let mut bits = vec![0u64; col.len().div_ceil(64)];
                    for (i, &v) in col.iter().enumerate() {
                        if v == lo {
                            bits[i / 64] |= 1 << (i % 64);
                        }
                    }
                    bits
                })
            })
            .collect();
        Self {
            orders,
            two_valued,
            lo_bits,
        }
    }
}

/// Fits a tree. `presorted` must come from the same `data.columns`.
pub fn fit(data: &CartData<'_>, presorted: &Presorted, params: CartParams) -> CartTree {
    fit_group(data, presorted, &[params])
        .pop()
        .expect("one tree")
}

/// Fits several trees that differ only in `max_depth` (same criterion, leaf size and seed),
/// sharing the split search of the nodes they have in common. Each tree equals [`fit`]'s.
pub fn fit_group(
    data: &CartData<'_>,
    presorted: &Presorted,
    params: &[CartParams],
) -> Vec<CartTree> {
    let mut cache = NodeCache::new();
    let mut out = Vec::with_capacity(params.len());
    for p in params {
        assert!(
            p.criterion == params[0].criterion
                && p.min_samples_leaf == params[0].min_samples_leaf
                && p.seed == params[0].seed,
            "a group shares criterion, min_samples_leaf and seed"
        );
        out.push(fit_cached(data, presorted, *p, &mut cache));
    }
    out
}

fn fit_cached(
    data: &CartData<'_>,
    presorted: &Presorted,
    params: CartParams,
    cache: &mut NodeCache,
) -> CartTree {
    let n = data.weights.len();
    let regression = params.criterion == Criterion::SquaredError;
    let min_samples_leaf = params.min_samples_leaf.resolve(n);
    let mut rs = crate::split::RandomState::new(params.seed);
    let rand_state = rs.randint(0, i64::from(RAND_R_MAX)) as u32;
    let n_features = data.columns.len();
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
            vec![
                data.targets
                    .iter()
                    .zip(data.weights)
                    .map(|(y, w)| y * w)
                    .sum::<f64>()
                    / wn,
            ]
        } else {
            counts.iter().map(|c| c / wn).collect()
        };
        return CartTree {
            nodes: vec![CartNode {
                feature: None,
                threshold: -2.0,
                left: 0,
                right: 0,
                value,
                n_samples: n,
                weighted_n_samples: wn,
                counts,
                impurity: 0.0,
            }],
            n_features,
        };
    }
    let builder = Builder {
        data,
        criterion: params.criterion,
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
        w_total: data.weights.iter().sum(),
        info: Vec::new(),
        constant_features_at: Vec::new(),
        two_valued: &presorted.two_valued,
        unit_weights: data.weights.iter().all(|&w| w == 1.0),
        lo_bits: &presorted.lo_bits,
        class_masks: None,
        xlx: (params.criterion == Criterion::Entropy && data.weights.iter().all(|&w| w == 1.0))
            .then(|| {
                (0..=n)
                    .map(|c| {
                        if c == 0 {
                            0.0
                        } else {
                            c as f64 * log2(c as f64)
                        }
                    })
                    .collect()
            }),
    };
    builder.build(params.max_depth, cache)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data<'a>(cols: &'a [Vec<f32>], y: &'a [u32], w: &'a [f64], k: usize) -> CartData<'a> {
        CartData {
            columns: cols,
            classes: y,
            n_classes: k,
            targets: &[],
            weights: w,
        }
    }

    #[test]
    fn hand_checked_small_tree() {
        // x0 separates perfectly at 2.5; x1 is noise.
        let cols = vec![
            vec![1.0, 2.0, 3.0, 4.0, 2.0, 3.0],
            vec![5.0, 5.0, 1.0, 1.0, 1.0, 5.0],
        ];
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
        let p = CartParams {
            min_samples_leaf: MinSamplesLeaf::Count(3),
            ..Default::default()
        };
        let t = fit(&d, &Presorted::new(&cols), p);
        for n in &t.nodes {
            assert!(n.n_samples >= 3, "{n:?}");
        }
        assert_eq!(MinSamplesLeaf::Fraction(0.01).resolve(6789), 68);
        assert_eq!(
            MinSamplesLeaf::parse("0.05"),
            Some(MinSamplesLeaf::Fraction(0.05))
        );
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
        let d = CartData {
            columns: &cols,
            classes: &[],
            n_classes: 0,
            targets: &[1.0, 1.0, 5.0, 5.0],
            weights: &[1.0; 4],
        };
        let p = CartParams {
            criterion: Criterion::SquaredError,
            ..Default::default()
        };
        let t = fit(&d, &Presorted::new(&cols), p);
        assert_eq!(t.nodes[0].threshold, 2.5);
        assert_eq!(t.nodes[1].value, vec![1.0]);
        assert_eq!(t.nodes[2].value, vec![5.0]);
    }

    #[test]
    fn deterministic_bit_for_bit() {
        let n = 500;
        let mut rs = crate::split::RandomState::new(7);
        let cols: Vec<Vec<f32>> = (0..6)
            .map(|_| (0..n).map(|_| (rs.next_u32() % 50) as f32).collect())
            .collect();
        let y: Vec<u32> = (0..n)
            .map(|i| u32::from(cols[0][i] + cols[1][i] > 50.0) + u32::from(cols[2][i] > 40.0))
            .collect();
        let w = vec![1.0; n];
        let d = data(&cols, &y, &w, 3);
        let ps = Presorted::new(&cols);
        for crit in [Criterion::Gini, Criterion::Entropy] {
            let p = CartParams {
                criterion: crit,
                max_depth: Some(6),
                ..Default::default()
            };
            let a = fit(&d, &ps, p);
            let b = fit(&d, &ps, p);
            assert_eq!(a, b);
            assert!(a.n_leaves() > 4);
        }
    }
}
