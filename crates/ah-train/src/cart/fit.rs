//! The entry points: one tree, or a group of trees that differ only in depth.

use super::builder::{Builder, Scratch};
use super::data::CartData;
use super::grow::NodeCache;
use super::params::{CartParams, Criterion};
use super::presort::Presorted;
use super::tree::{CartNode, CartTree};

/// Fits a tree. `presorted` must come from the same `data.columns`.
pub fn fit(data: &CartData<'_>, presorted: &Presorted, params: CartParams) -> CartTree {
    fit_group(data, presorted, &[params])
        .pop()
        .expect("one tree")
}

/// Fits several trees that differ only in `max_depth` and `min_samples_leaf` (same criterion
/// and seed), sharing the split search of the nodes they have in common. Each tree equals
/// [`fit`]'s. Most is shared when the trees come by increasing `min_samples_leaf`, and by
/// decreasing depth within one `min_samples_leaf`.
pub fn fit_group(
    data: &CartData<'_>,
    presorted: &Presorted,
    params: &[CartParams],
) -> Vec<CartTree> {
    let mut cache = NodeCache::new();
    let mut scratch = Scratch::default();
    let mut out = Vec::with_capacity(params.len());
    for p in params {
        assert!(
            p.criterion == params[0].criterion && p.seed == params[0].seed,
            "a group shares criterion and seed"
        );
        out.push(fit_cached(data, presorted, *p, &mut cache, &mut scratch));
    }
    out
}

fn fit_cached(
    data: &CartData<'_>,
    presorted: &Presorted,
    params: CartParams,
    cache: &mut NodeCache,
    scratch: &mut Scratch,
) -> CartTree {
    let n = data.weights.len();
    let regression = params.criterion == Criterion::SquaredError;
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
    let (tree, rest) = Builder::new(data, presorted, params, std::mem::take(scratch))
        .build(params.max_depth, cache);
    *scratch = rest;
    tree
}
