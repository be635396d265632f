//! The depth-first builder's state ([`Builder`]): the samples of each node in every feature's
//! order, node statistics and the deferred per-feature partitions. Growing the tree is
//! `grow.rs`'s; the split search, `scan.rs`'s, `node_split.rs`'s and `impurity.rs`'s.

use super::data::CartData;
use super::params::{CartParams, Criterion};
use super::presort::Presorted;
use super::sklearn::{log2, RAND_R_MAX};
use super::tree::CartNode;

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
    pub(super) min_samples_split: usize,
    pub(super) goes_left: Vec<bool>,
    pub(super) buf: Vec<u32>,
    pub(super) nodes: Vec<CartNode>,
    pub(super) w_total: f64,
    /// Per node id: segment, split, parent, whether its feature segments are up to date.
    pub(super) info: Vec<NodeInfo>,
    /// Per node id: features known constant in it (for deferred partitions).
    pub(super) constant_features_at: Vec<Vec<usize>>,
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
pub(super) struct NodeInfo {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) parent: Option<usize>,
    pub(super) feature: Option<usize>,
    pub(super) threshold: f64,
    /// Every feature's segment has been partitioned into the children's.
    pub(super) partitioned: bool,
}

pub(super) type Totals = (Vec<f64>, f64, f64, f64);

/// Buffers a builder hands to the next tree of its group (same data), so that consecutive
/// fits reuse their memory instead of allocating (and the OS zeroing) fresh pages.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    pub(super) sorted: Vec<Vec<u32>>,
    pub(super) goes_left: Vec<bool>,
    pub(super) buf: Vec<u32>,
    pub(super) class_masks: Option<Vec<Vec<u64>>>,
    /// The `c * log2(c)` table of the previous tree (it depends only on the sample count).
    pub(super) xlx: Option<Vec<f64>>,
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

    pub(super) fn node_stats(&self, start: usize, end: usize) -> Totals {
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

    pub(super) fn node_key(&self, start: usize, end: usize) -> (u32, u64, u64) {
        let (mut a, mut b) = (0u64, 0u64);
        for &s in &self.sorted[0][start..end] {
            let h = mix(u64::from(s));
            a = a.wrapping_add(h);
            b = b.wrapping_add(mix(h ^ 0x5555_5555_5555_5555));
        }
        ((end - start) as u32, a, b)
    }

    pub(super) fn set_goes_left(
        &mut self,
        start: usize,
        end: usize,
        feature: usize,
        threshold: f64,
    ) {
        let col = &self.data.columns[feature];
        for &s in &self.sorted[0][start..end] {
            self.goes_left[s as usize] = f64::from(col[s as usize]) <= threshold;
        }
    }

    /// Builds the per-class bitsets of the node's samples when counting two-valued columns by
    /// popcount is cheaper than visiting the samples (unit weights, classification, large node).
    pub(super) fn prepare_class_masks(&mut self, start: usize, end: usize) {
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
    pub(super) fn partition_feature(&mut self, f: usize, start: usize, end: usize) {
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
    pub(super) fn materialize(&mut self, id: usize) {
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
}
