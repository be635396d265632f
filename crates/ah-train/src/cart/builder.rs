//! The depth-first builder: node statistics, the deferred per-feature partitions, the split
//! cache shared by the trees of a grid group, and the growing loop.

use std::collections::HashMap;
use std::rc::Rc;

use super::impurity::log2;
use super::node_split::{Best, RAND_R_MAX};
use super::params::{CartParams, Criterion};
use super::presort::Presorted;
use super::scan::FeatResult;
use super::tree::{CartNode, CartTree};
use super::{CartData, EPSILON};

/// Per-node split results, keyed by the node's sample set (count and two order-independent
/// 64-bit hashes of the sample ids). Trees of one criterion differ only in depth and
/// `min_samples_leaf`, so they share most nodes near the root (and almost all between depths).
pub(super) type NodeCache = HashMap<(u32, u64, u64), CachedSplits>;

/// Every feature's best split of one node, searched with `min_samples_leaf`.
///
/// They hold for a larger `min_samples_leaf` too wherever the best position leaves that many
/// samples on both sides (or there was none): the positions it allows are a subset of those
/// searched, so the first best position, when it is allowed, is still the first best one.
#[derive(Debug, Clone)]
pub(super) struct CachedSplits {
    min_samples_leaf: usize,
    results: Rc<Vec<FeatResult>>,
}

impl CachedSplits {
    /// Whether feature result `r` of a node of `n` samples holds for `min_samples_leaf`.
    fn holds_for(&self, r: &FeatResult, n: usize, min_samples_leaf: usize) -> bool {
        if min_samples_leaf < self.min_samples_leaf {
            return false;
        }
        let left = r.n_left as usize;
        r.constant
            || r.proxy == f64::NEG_INFINITY
            || (left >= min_samples_leaf && n - left >= min_samples_leaf)
    }
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub(super) struct Builder<'a> {
    pub(super) data: &'a CartData<'a>,
    pub(super) criterion: Criterion,
    pub(super) regression: bool,
    /// Per feature: sample indices; a node owns `[start, end)` of every feature's array, sorted
    /// by that feature (ties by sample index); empty where [`Presorted`]'s order is (two-valued
    /// columns, scanned by counting).
    pub(super) sorted: Vec<Vec<u32>>,
    pub(super) features: Vec<usize>,
    pub(super) constant_features: Vec<usize>,
    pub(super) rand_state: u32,
    pub(super) min_samples_leaf: usize,
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
    pub(super) two_valued: &'a [Option<(f32, f32)>],
    /// `c * log2(c)` for `c = 0..=n` when the criterion is entropy and all weights are 1.
    pub(super) xlx: Option<Vec<f64>>,
    /// Every sample weight is 1.
    pub(super) unit_weights: bool,
    /// Low-value bitsets of two-valued columns (see [`Presorted`]).
    pub(super) lo_bits: &'a [Option<Vec<u64>>],
    /// Per class, the current node's samples as a bitset (`None`: count by visiting).
    pub(super) class_masks: Option<Vec<Vec<u64>>>,
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

pub(super) type Totals = (Vec<f64>, f64, f64, f64);

/// Buffers a builder hands to the next tree of its group (same data), so that consecutive
/// fits reuse their memory instead of allocating (and the OS zeroing) fresh pages.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    sorted: Vec<Vec<u32>>,
    goes_left: Vec<bool>,
    buf: Vec<u32>,
    class_masks: Option<Vec<Vec<u64>>>,
    /// The `c * log2(c)` table of the previous tree (it depends only on the sample count).
    xlx: Option<Vec<f64>>,
}

/// `c * log2(c)` for `c = 0..=n`.
fn xlx_table(n: usize) -> Vec<f64> {
    (0..=n)
        .map(|c| {
            if c == 0 {
                0.0
            } else {
                c as f64 * log2(c as f64)
            }
        })
        .collect()
}

impl<'a> Builder<'a> {
    /// A builder for one tree of `params` on `data` (`presorted` from the same columns), with
    /// the buffers of the previous tree fitted on the same data (or empty ones).
    pub(super) fn new(
        data: &'a CartData<'a>,
        presorted: &'a Presorted,
        params: CartParams,
        scratch: Scratch,
    ) -> Self {
        let n = data.weights.len();
        let n_features = data.columns.len();
        let regression = params.criterion == Criterion::SquaredError;
        let min_samples_leaf = params.min_samples_leaf.resolve(n);
        let mut rs = crate::split::RandomState::new(params.seed);
        let rand_state = rs.randint(0, i64::from(RAND_R_MAX)) as u32;
        let Scratch {
            mut sorted,
            mut goes_left,
            mut buf,
            class_masks,
            xlx,
        } = scratch;
        sorted.clone_from(&presorted.orders);
        goes_left.clear();
        goes_left.resize(n, false);
        buf.clear();
        buf.reserve(n);
        let unit_weights = data.weights.iter().all(|&w| w == 1.0);
        let xlx = (params.criterion == Criterion::Entropy && unit_weights).then(|| match xlx {
            Some(t) if t.len() == n + 1 => t,
            _ => xlx_table(n),
        });
        Builder {
            data,
            criterion: params.criterion,
            regression,
            sorted,
            features: (0..n_features).collect(),
            constant_features: (0..n_features).collect(),
            rand_state,
            min_samples_leaf,
            min_samples_split: 2usize.max(2 * min_samples_leaf),
            goes_left,
            buf,
            nodes: Vec::new(),
            w_total: data.weights.iter().sum(),
            info: Vec::new(),
            constant_features_at: Vec::new(),
            two_valued: &presorted.two_valued,
            unit_weights,
            lo_bits: &presorted.lo_bits,
            class_masks,
            xlx,
        }
    }

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

    fn node_key(&self, start: usize, end: usize) -> (u32, u64, u64) {
        let (mut a, mut b) = (0u64, 0u64);
        for &s in &self.sorted[0][start..end] {
            let h = mix(u64::from(s));
            a = a.wrapping_add(h);
            b = b.wrapping_add(mix(h ^ 0x5555_5555_5555_5555));
        }
        ((end - start) as u32, a, b)
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
    /// nodes with the same samples when another tree of the group searched them (another
    /// depth, or a smaller `min_samples_leaf` whose best splits still hold, see
    /// [`CachedSplits`]); only the features whose split does not hold are searched again.
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
        let (msl, n) = (self.min_samples_leaf, end - start);
        let cached = cache.get(&key).cloned();
        if let Some(c) = &cached {
            if c.min_samples_leaf == msl {
                return c.results.clone();
            }
        }
        let mut rescan = vec![true; self.features.len()];
        if let Some(c) = &cached {
            for (f, r) in c.results.iter().enumerate() {
                rescan[f] = !c.holds_for(r, n, msl);
            }
        }
        if rescan.iter().any(|&r| r) {
            self.materialize(id);
            self.prepare_class_masks(start, end);
        }
        let mut known = vec![false; self.features.len()];
        for &f in &self.constant_features[..n_constant] {
            known[f] = true;
        }
        let r: Vec<FeatResult> = (0..self.features.len())
            .map(|f| match &cached {
                Some(c) if !rescan[f] => c.results[f],
                _ if known[f] => FeatResult {
                    constant: true,
                    proxy: f64::NEG_INFINITY,
                    n_left: 0,
                    threshold: 0.0,
                },
                _ => self.scan_feature(f, start, end, totals, left_counts),
            })
            .collect();
        let r = Rc::new(r);
        // The smaller `min_samples_leaf` is kept: its splits hold for more trees.
        if cached.is_none_or(|c| c.min_samples_leaf > msl) {
            let entry = CachedSplits {
                min_samples_leaf: msl,
                results: r.clone(),
            };
            cache.insert(key, entry);
        }
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

    /// Records the node of `rec` (sums `totals`) as a leaf, linked to its parent; a split
    /// then sets its feature. Returns its id.
    fn push_node(&mut self, rec: &StackRecord, totals: &Totals) -> usize {
        let id = self.nodes.len();
        self.info.push(NodeInfo {
            start: rec.start,
            end: rec.end,
            parent: rec.parent.map(|p| p.0),
            feature: None,
            threshold: 0.0,
            partitioned: false,
        });
        self.constant_features_at.push(Vec::new());
        let node = self.leaf_node(totals, rec.end - rec.start, rec.impurity);
        self.nodes.push(node);
        if let Some((parent, is_left)) = rec.parent {
            if is_left {
                self.nodes[parent].left = id;
            } else {
                self.nodes[parent].right = id;
            }
        }
        id
    }

    /// Splits node `id` (of `rec`, sums `totals`) at `best` unless that makes it less pure,
    /// and pushes its children, the left one last (grown first). `n_constant` is the number
    /// of features known constant in the children.
    fn split_node(
        &mut self,
        id: usize,
        rec: &StackRecord,
        best: Best,
        n_constant: usize,
        totals: &Totals,
        stack: &mut Vec<StackRecord>,
    ) {
        let (start, end) = (rec.start, rec.end);
        let (imp_l, imp_r, wl) = self.children_impurities(start, end, &best, totals);
        let wn = totals.1;
        let improvement =
            (wn / self.w_total) * (rec.impurity - (wn - wl) / wn * imp_r - wl / wn * imp_l);
        if improvement + EPSILON < 0.0 {
            return;
        }
        self.nodes[id].feature = Some(best.feature);
        self.nodes[id].threshold = best.threshold;
        self.info[id].feature = Some(best.feature);
        self.info[id].threshold = best.threshold;
        self.constant_features_at[id] = self.constant_features[..n_constant].to_vec();
        // Feature 0 now (stats and keys of the children read it); the others when needed.
        self.set_goes_left(start, end, best.feature, best.threshold);
        self.partition_feature(0, start, end);
        let child = |(start, end): (usize, usize), is_left: bool, impurity: f64| StackRecord {
            start,
            end,
            depth: rec.depth + 1,
            parent: Some((id, is_left)),
            impurity,
            n_constant,
        };
        stack.push(child((best.pos, end), false, imp_r));
        stack.push(child((start, best.pos), true, imp_l));
    }

    /// Grows the tree; returns it with the buffers for the next tree of the group.
    pub(super) fn build(
        mut self,
        max_depth: Option<usize>,
        cache: &mut NodeCache,
    ) -> (CartTree, Scratch) {
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
        while let Some(mut rec) = stack.pop() {
            let (start, end) = (rec.start, rec.end);
            let n_node = end - start;
            let totals = self.node_stats(start, end);
            if first {
                rec.impurity = self.impurity_of(&totals.0, totals.1, totals.2, totals.3);
                first = false;
            }
            let is_leaf = rec.depth >= max_depth
                || n_node < self.min_samples_split
                || n_node < 2 * self.min_samples_leaf
                || rec.impurity <= EPSILON;
            let id = self.push_node(&rec, &totals);
            if is_leaf {
                continue;
            }
            let results = self.feature_results(
                id,
                (start, end),
                rec.n_constant,
                &totals,
                &mut left_counts,
                cache,
            );
            let mut n_constant = rec.n_constant;
            let split = self.node_split(start, end, &mut n_constant, &results);
            if let Some(best) = split.filter(|b| b.pos < end) {
                self.split_node(id, &rec, best, n_constant, &totals, &mut stack);
            }
        }
        let tree = CartTree {
            nodes: self.nodes,
            n_features: self.data.columns.len(),
        };
        let scratch = Scratch {
            sorted: self.sorted,
            goes_left: self.goes_left,
            buf: self.buf,
            class_masks: self.class_masks,
            xlx: self.xlx,
        };
        (tree, scratch)
    }
}
