//! The category guard (`--category-guard`): a leaf decides only for the categories of the
//! guarded categorical features that its training rows had.
//!
//! A tree splits on a feature only where its training rows differ in it. A leaf whose rows all
//! share one category of a feature (every row's second operand has an aligned innermost
//! dimension, say) answers with the same confidence for an input of another category, although
//! it never saw one: the range guard checks numeric ranges, and a category seen elsewhere in
//! training is in range. The category guard closes that gap after the model is chosen: for
//! each deciding leaf and each guarded feature whose value the path to it does not fix, it
//! inserts a split on that feature's one-hot column whose unseen side is an unsafe leaf.
//!
//! - A feature constant over the leaf's rows (category `v`): one split on the column of `v`;
//!   `<= 0.5` (any other category, or one never seen in training) is unsure. None when the
//!   path to the leaf already requires `v`.
//! - Otherwise one split per one-hot column no row of the leaf has: `> 0.5` is unsure. None
//!   for a column the path already tests (a path split on it leaves it at 0 here).
//!
//! A feature with one category in all of training is not guarded (a leaf cannot have seen
//! less of it than the training table).
//!
//! The guard changes the tree, not the model's format: the runtime, the generated Rust and
//! Python code and their parity tests see ordinary splits and unsafe leaves, and the final
//! metrics route through the guarded tree, as the runtime does. The guard is applied to the
//! chosen model only (the selection and its cross-validation do not see it), so the grid
//! table is unchanged; a guard leaf stores the guarded leaf's value with 0 samples.

use std::collections::BTreeSet;

use ah_core::model::Column;
use ah_eval::table::{Encoding, Table};

use crate::cart::{CartNode, CartTree};
use crate::error::{Result, TrainError};

/// One inserted split: the column, and whether its unseen side is `> 0.5` (a category no
/// row had) or `<= 0.5` (any category but the one every row had).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Guard {
    column: usize,
    unseen_above: bool,
}

/// The one-hot columns of each guarded feature, checked against the encoding: every name must
/// be a categorical feature, logged or augmented.
pub fn guarded_columns(encoding: &Encoding, features: &[String]) -> Result<Vec<Vec<usize>>> {
    features
        .iter()
        .map(|f| {
            if !encoding.categories.iter().any(|(name, _)| name == f) {
                let known: Vec<&str> = encoding
                    .categories
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect();
                return Err(TrainError::Config(format!(
                    "--category-guard: `{f}` is not a categorical feature of this log or its \
                     operations (categorical features: {})",
                    known.join(", ")
                )));
            }
            Ok(encoding
                .columns
                .iter()
                .enumerate()
                .filter_map(|(c, col)| match col {
                    Column::OneHot { feature, .. } if feature == f => Some(c),
                    _ => None,
                })
                .collect())
        })
        .collect()
}

/// Guards `tree` (with its unsafe leaves, by node) by the rows it was fitted on (`fit`):
/// returns the guarded tree, its unsafe leaves and the number of splits inserted.
pub fn apply(
    tree: &CartTree,
    unsafe_leaf: &[bool],
    fit: &Table,
    guarded: &[Vec<usize>],
) -> (CartTree, Vec<bool>, usize) {
    let router = tree.router();
    let mut rows_at: Vec<Vec<usize>> = vec![Vec::new(); tree.nodes.len()];
    for i in 0..fit.len() {
        rows_at[router.apply(fit.row(i))].push(i);
    }
    let mut b = Builder {
        tree,
        unsafe_leaf,
        fit,
        guarded,
        rows_at: &rows_at,
        nodes: Vec::with_capacity(tree.nodes.len()),
        unsafe_out: Vec::with_capacity(tree.nodes.len()),
        inserted: 0,
    };
    b.copy(0, &mut BTreeSet::new());
    let inserted = b.inserted;
    let (nodes, unsafe_out) = (b.nodes, b.unsafe_out);
    (
        CartTree {
            nodes,
            n_features: tree.n_features,
        },
        unsafe_out,
        inserted,
    )
}

/// Rebuilds the tree in preorder (a child after its parent, as the model requires).
struct Builder<'a> {
    tree: &'a CartTree,
    unsafe_leaf: &'a [bool],
    fit: &'a Table,
    guarded: &'a [Vec<usize>],
    rows_at: &'a [Vec<usize>],
    nodes: Vec<CartNode>,
    unsafe_out: Vec<bool>,
    inserted: usize,
}

impl Builder<'_> {
    /// Copies node `i` (and its subtree) and returns its new index; `path` holds the columns
    /// split on above it.
    fn copy(&mut self, i: usize, path: &mut BTreeSet<usize>) -> usize {
        let n = &self.tree.nodes[i];
        match n.feature {
            Some(c) => {
                let at = self.push(n.clone(), false);
                let fresh = path.insert(c);
                let left = self.copy(n.left, path);
                let right = self.copy(n.right, path);
                if fresh {
                    path.remove(&c);
                }
                self.nodes[at].left = left;
                self.nodes[at].right = right;
                at
            }
            None if self.unsafe_leaf[i] => self.push(n.clone(), true),
            None => {
                let guards = self.guards(i, path);
                self.inserted += guards.len();
                self.chain(n, &guards)
            }
        }
    }

    /// The splits that guard leaf `i`.
    fn guards(&self, i: usize, path: &BTreeSet<usize>) -> Vec<Guard> {
        let rows = &self.rows_at[i];
        let mut out = Vec::new();
        if rows.is_empty() {
            return out;
        }
        for cols in self.guarded {
            if cols.len() < 2 {
                // One category in all of training: no leaf saw less than the whole table.
                continue;
            }
            let has = |c: usize| rows.iter().any(|&r| self.fit.row(r)[c] > 0.5);
            let all = |c: usize| rows.iter().all(|&r| self.fit.row(r)[c] > 0.5);
            if let Some(&v) = cols.iter().find(|&&c| all(c)) {
                // One category: any other is unsure (none needed when the path fixes it).
                if !path.contains(&v) {
                    out.push(Guard {
                        column: v,
                        unseen_above: false,
                    });
                }
                continue;
            }
            // Several: each category no row had is unsure, unless the path excludes it.
            out.extend(
                cols.iter()
                    .filter(|&&c| !path.contains(&c) && !has(c))
                    .map(|&c| Guard {
                        column: c,
                        unseen_above: true,
                    }),
            );
        }
        out
    }

    /// Leaf `leaf` behind `guards`, each a split whose unseen side is an unsafe leaf.
    fn chain(&mut self, leaf: &CartNode, guards: &[Guard]) -> usize {
        let Some((g, rest)) = guards.split_first() else {
            return self.push(leaf.clone(), false);
        };
        let at = self.push(
            CartNode {
                feature: Some(g.column),
                threshold: 0.5,
                ..leaf.clone()
            },
            false,
        );
        let unseen = CartNode {
            feature: None,
            n_samples: 0,
            weighted_n_samples: 0.0,
            counts: vec![0.0; leaf.counts.len()],
            impurity: 0.0,
            ..leaf.clone()
        };
        let (left, right) = if g.unseen_above {
            let l = self.chain(leaf, rest);
            (l, self.push(unseen, true))
        } else {
            let l = self.push(unseen, true);
            (l, self.chain(leaf, rest))
        };
        self.nodes[at].left = left;
        self.nodes[at].right = right;
        at
    }

    fn push(&mut self, n: CartNode, unsafe_leaf: bool) -> usize {
        self.nodes.push(n);
        self.unsafe_out.push(unsafe_leaf);
        self.nodes.len() - 1
    }
}
