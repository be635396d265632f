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
//!
//! # Layout
//! `data` holds the training data of a fit, `params` the hyper-parameters, `tree` the fitted
//! tree, `presort` the per-feature sample orders shared by a grid's fits, `sklearn`
//! scikit-learn's tolerances, `log2` and `rand_r`, `builder` the depth-first builder's state
//! (node bookkeeping, deferred partitions), `grow` the growing loop and the split cache of a
//! grid group, `scan` the search for one feature's best split, `impurity` the criteria,
//! `node_split` scikit-learn's random feature order, and `fit` the entry points.

mod builder;
mod data;
mod fit;
mod grow;
mod impurity;
mod node_split;
mod params;
mod presort;
mod scan;
mod sklearn;
#[cfg(test)]
mod tests;
mod tree;

pub use data::CartData;
pub use fit::{fit, fit_group};
pub use params::{CartParams, Criterion, MinSamplesLeaf};
pub use presort::Presorted;
pub use tree::{CartNode, CartTree, Router};
