//! How a cross-validation splits the training GEMMs into folds: one GEMM at a time, or every
//! GEMM of one weight shape together ([`CvSplit`]).
//!
//! The catalogue draws the same layer at several token counts, so most training GEMMs have a
//! sibling of the same op, `k`, `n`, dtype and layout (787 of the 1314 logged by 2026-11-25,
//! in 759 shapes). Split one GEMM at a time, a held-out GEMM's siblings train the tree that
//! decides it, which is not how a new architecture meets the handler: a kept list of Triton
//! configs learned on the siblings looks safer than it is (on held-out sets 15 and 16, 5 of
//! the shipped handler's 8 kept lists ran more than 3 % over the bound; docs/results.md).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::data::Sample;

/// How GEMMs are split into folds (`ah-prune --cv-split`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CvSplit {
    /// Each GEMM on its own (the trainer before 2026-11-25's thirteenth session).
    #[default]
    Gemm,
    /// The GEMMs of one shape ([`SHAPE_FEATURES`]) in one fold.
    Shape,
}

impl CvSplit {
    /// Its name on the command line and in a model file.
    pub fn name(self) -> &'static str {
        match self {
            CvSplit::Gemm => "gemm",
            CvSplit::Shape => "shape",
        }
    }
}

/// The logged features that make a GEMM's shape for [`CvSplit::Shape`]: a layer's weight
/// (`k` x `n`) at any token count `m` or batch, in one dtype, layout and TF32 setting.
pub const SHAPE_FEATURES: [&str; 8] = [
    "op",
    "k",
    "n",
    "mat1_dtype",
    "mat2_dtype",
    "mat1_iscontig",
    "mat2_iscontig",
    "using_tf32",
];

/// The folds of `samples` for repeat `repeat` of a `k`-fold cross-validation split as `split`
/// says (see [`of_groups`]).
pub fn folds(
    samples: &[Sample],
    features: &[String],
    split: CvSplit,
    k: usize,
    repeat: usize,
) -> Vec<Vec<usize>> {
    match split {
        CvSplit::Gemm => of_groups(&(0..samples.len()).collect::<Vec<_>>(), k, repeat),
        CvSplit::Shape => of_groups(&shape_groups(samples, features), k, repeat),
    }
}

/// Each GEMM's shape group: 0, 1, ... in order of first appearance, GEMMs with equal
/// [`SHAPE_FEATURES`] (those the log has) in one group.
pub fn shape_groups(samples: &[Sample], features: &[String]) -> Vec<usize> {
    let columns: Vec<usize> = SHAPE_FEATURES
        .iter()
        .filter_map(|f| features.iter().position(|g| g == f))
        .collect();
    // Values are compared as logged (`Value` has floats, so no `Hash`): by their debug text.
    let mut ids: HashMap<Vec<String>, usize> = HashMap::new();
    samples
        .iter()
        .map(|s| {
            let key: Vec<String> = columns
                .iter()
                .map(|&c| format!("{:?}", s.values[c]))
                .collect();
            let next = ids.len();
            *ids.entry(key).or_insert(next)
        })
        .collect()
}

/// The folds of GEMMs whose groups are `groups` (0, 1, ... in order of first appearance), a
/// group never split. In repeat 0, group `g` is in fold `g % k`: with one GEMM a group, GEMM
/// `i` is in fold `i % k` (the log's order is the sampler's, already random). A later repeat
/// first orders the groups by a fixed hash of the group and the repeat: with another split
/// into folds, the harmful count of one setting moved by up to 11 of 635 GEMMs, more than
/// separated the best settings of a grid, so the grid compares settings over several repeats.
pub fn of_groups(groups: &[usize], k: usize, repeat: usize) -> Vec<Vec<usize>> {
    let n_groups = groups.iter().max().map_or(0, |g| g + 1);
    let k = k.clamp(1, n_groups.max(1));
    let mut order: Vec<usize> = (0..n_groups).collect();
    if repeat > 0 {
        order.sort_by_key(|&g| splitmix64(((repeat as u64) << 32) ^ g as u64));
    }
    let mut fold_of = vec![0; n_groups];
    for (position, &g) in order.iter().enumerate() {
        fold_of[g] = position % k;
    }
    let mut out = vec![Vec::new(); k];
    for (i, &g) in groups.iter().enumerate() {
        out[fold_of[g]].push(i);
    }
    out
}

/// SplitMix64's output function: a fixed, well-mixed hash of `x`.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
