//! A fitted tree: nodes in scikit-learn's order, and routing a row to its leaf (one row, or
//! many through the packed [`Router`]).

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

    /// The tree's splits packed for routing many rows (24 bytes a node instead of a whole
    /// [`CartNode`]); [`Router::apply`] gives [`CartTree::apply`]'s leaf.
    pub fn router(&self) -> Router {
        Router {
            nodes: self
                .nodes
                .iter()
                .map(|n| RouteNode {
                    threshold: n.threshold,
                    feature: n.feature.map_or(LEAF, |f| f as u32),
                    left: n.left as u32,
                    right: n.right as u32,
                })
                .collect(),
        }
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

/// [`RouteNode::feature`] of a leaf.
const LEAF: u32 = u32::MAX;

/// A node of a [`Router`].
#[derive(Debug, Clone, Copy)]
struct RouteNode {
    threshold: f64,
    feature: u32,
    left: u32,
    right: u32,
}

/// A tree's splits, packed for routing many rows ([`CartTree::router`]).
#[derive(Debug, Clone)]
pub struct Router {
    nodes: Vec<RouteNode>,
}

impl Router {
    /// The leaf a row (exact `f64` values) reaches: [`CartTree::apply`]'s.
    #[inline]
    pub fn apply(&self, row: &[f64]) -> usize {
        let mut n = self.nodes[0];
        let mut i = 0;
        while n.feature != LEAF {
            i = if row[n.feature as usize] <= n.threshold {
                n.left
            } else {
                n.right
            } as usize;
            n = self.nodes[i];
        }
        i
    }

    /// The leaf of every row of a column-major matrix (`columns[f][i]`: feature `f` of row
    /// `i`, `n_rows` rows): [`Router::apply`]'s, row after row. Each column is read in row
    /// order, so a cache line serves several rows (a row-major row spans several lines, of
    /// which a route reads a few).
    pub fn leaves_of_columns(&self, columns: &[Vec<f64>], n_rows: usize) -> Vec<usize> {
        (0..n_rows)
            .map(|r| {
                let mut n = self.nodes[0];
                let mut i = 0;
                while n.feature != LEAF {
                    i = if columns[n.feature as usize][r] <= n.threshold {
                        n.left
                    } else {
                        n.right
                    } as usize;
                    n = self.nodes[i];
                }
                i
            })
            .collect()
    }
}
