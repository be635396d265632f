//! Fitting one grid model: the training matrix of a table, the fitted tree with its class
//! names (pruned for ranking), the config's unsafe leaves, and the evaluation settings and
//! views every selection rule shares.

use crate::cart::{CartNode, CartTree};
use crate::config::UnsafeRule;
use crate::learner::TrainMatrix;
use ah_eval::metrics::{EvalSettings, LeafModel};
use ah_eval::table::Table;

use super::fitted::Fitted;
use super::params::{Mode, TrainOptions};
use super::prepare::Prepared;

pub(super) fn matrix_of<'t>(t: &'t Table, classes: &[String]) -> TrainMatrix<'t> {
    let labels: Vec<u32> = t
        .winner
        .iter()
        .map(|&w| {
            classes
                .binary_search(&t.choices[w as usize])
                .expect("class of a training row") as u32
        })
        .collect();
    TrainMatrix::new(
        &t.x[..],
        t.n_cols,
        labels,
        classes.len(),
        Vec::new(),
        t.weight.clone(),
    )
}

/// Leaves made unsafe by the config's rule (evaluated on the rows the tree was fitted on; a
/// pick that is unavailable for a row, see [`EvalSettings::unavailable`], is not slower).
pub(super) fn unsafe_leaves(
    f: &Fitted,
    t: &Table,
    rule: &UnsafeRule,
    es: &EvalSettings,
) -> Vec<bool> {
    unsafe_leaves_with(f, t, rule, es, None)
}

/// [`unsafe_leaves`] with the leaf of every row of `t` when the caller has routed them
/// already (`None`: route here).
pub(super) fn unsafe_leaves_with(
    f: &Fitted,
    t: &Table,
    rule: &UnsafeRule,
    es: &EvalSettings,
    leaves: Option<&[usize]>,
) -> Vec<bool> {
    let mut bad = vec![false; f.tree.nodes.len()];
    if let UnsafeRule::SlowerThan { choice, factor } = rule {
        let Some(rc) = t.choice_index(choice) else {
            return bad;
        };
        let routed;
        let leaves = match leaves {
            Some(l) => l,
            None => {
                routed = f.leaves(t);
                &routed
            }
        };
        debug_assert_eq!(leaves.len(), t.len());
        for (i, &leaf) in leaves.iter().enumerate() {
            let v = &f.tree.nodes[leaf].value;
            let pred = (0..v.len()).fold(0, |b, c| if v[c] > v[b] { c } else { b });
            if let Some(pc) = t.choice_index(&f.classes[pred]) {
                let tp = t.time(i, pc);
                let tr = t.time(i, rc);
                if !es.unavailable(tp) && factor * tr < tp {
                    bad[leaf] = true;
                }
            }
        }
    }
    bad
}

/// PyTorch's ranking prune: a node whose left or right child saw fewer than `k` distinct
/// winners in training becomes a leaf.
pub(super) fn prune(tree: &CartTree, k: usize) -> CartTree {
    fn distinct(n: &CartNode) -> usize {
        n.counts.iter().filter(|c| **c > 0.0).count()
    }
    fn go(t: &CartTree, i: usize, k: usize, out: &mut Vec<CartNode>) -> usize {
        let id = out.len();
        let mut n = t.nodes[i].clone();
        out.push(n.clone());
        if let Some(_f) = n.feature {
            let (l, r) = (n.left, n.right);
            if distinct(&t.nodes[l]) < k || distinct(&t.nodes[r]) < k {
                n.feature = None;
                n.threshold = -2.0;
                out[id] = n;
            } else {
                let li = go(t, l, k, out);
                let ri = go(t, r, k, out);
                out[id].left = li;
                out[id].right = ri;
            }
        }
        id
    }
    let mut nodes = Vec::new();
    go(tree, 0, k, &mut nodes);
    CartTree {
        nodes,
        n_features: tree.n_features,
    }
}

pub(super) fn eval_settings(p: &Prepared, opts: &TrainOptions) -> EvalSettings {
    EvalSettings {
        default_choice: p.settings.default_choice.clone(),
        top_k: opts.ranking.unwrap_or(5),
        always_included: p.settings.always_included.clone(),
        exempt_certain: opts.mode == Mode::Upstream,
        inf_unavailable: opts.inf_unavailable,
    }
}

/// Ranking evaluation keeps the rows whose copy is the true winner.
pub(super) fn eval_view(t: &Table, ranking: bool) -> std::borrow::Cow<'_, Table> {
    if !ranking {
        return std::borrow::Cow::Borrowed(t);
    }
    let pos: Vec<usize> = (0..t.len())
        .filter(|&i| t.winner[i] == t.actual_winner[i])
        .collect();
    std::borrow::Cow::Owned(t.take(&pos, &t.name))
}

pub(super) fn finish_fit(mut tree: CartTree, classes: &[String], ranking: Option<usize>) -> Fitted {
    if let Some(k) = ranking {
        tree = prune(&tree, k);
    }
    Fitted {
        tree,
        classes: classes.to_vec(),
    }
}

/// A node with the given class counts (tests of this folder).
#[cfg(test)]
pub(super) fn test_node(
    feature: Option<usize>,
    left: usize,
    right: usize,
    counts: Vec<f64>,
) -> CartNode {
    let w: f64 = counts.iter().sum();
    CartNode {
        feature,
        threshold: 0.5,
        left,
        right,
        value: counts.iter().map(|c| c / w).collect(),
        n_samples: w as usize,
        weighted_n_samples: w,
        counts,
        impurity: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_prune_collapses_nodes_with_too_few_winners_below() {
        // root -> (leaf with 1 winner, split -> (2 winners, 2 winners))
        let tree = CartTree {
            nodes: vec![
                test_node(Some(0), 1, 2, vec![4.0, 2.0, 2.0]),
                test_node(None, 0, 0, vec![3.0, 0.0, 0.0]),
                test_node(Some(1), 3, 4, vec![1.0, 2.0, 2.0]),
                test_node(None, 0, 0, vec![1.0, 2.0, 0.0]),
                test_node(None, 0, 0, vec![0.0, 0.0, 2.0]),
            ],
            n_features: 2,
        };
        // k = 1: nothing to prune.
        assert_eq!(prune(&tree, 1).nodes.len(), 5);
        // k = 2: the root's left child saw one winner: the root becomes a leaf.
        let p = prune(&tree, 2);
        assert_eq!(p.nodes.len(), 1);
        assert_eq!(p.nodes[0].value, tree.nodes[0].value);
    }
}
