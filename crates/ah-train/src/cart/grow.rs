//! Growing a tree depth first ([`Builder::build`]): each node's best split, from the split
//! cache shared by the trees of a grid group ([`NodeCache`]) or searched again, and the
//! children it makes.

use std::collections::HashMap;
use std::rc::Rc;

use super::builder::{Builder, NodeInfo, Scratch, Totals};
use super::node_split::Best;
use super::scan::FeatResult;
use super::sklearn::EPSILON;
use super::tree::{CartNode, CartTree};

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

struct StackRecord {
    start: usize,
    end: usize,
    depth: usize,
    parent: Option<(usize, bool)>,
    impurity: f64,
    n_constant: usize,
}

impl Builder<'_> {
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
