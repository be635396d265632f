//! Train AutoHeuristic decision trees from autotuning logs.
//!
//! The pipeline ([`train::train`]) reads a log in PyTorch's format, builds the classification
//! table exactly as PyTorch's `torchgen/_autoheuristic` does (the evaluation layer
//! [`ah_eval::table`]: median over repetitions, winners, augment operations, one-hot
//! categories; [`dataset`] reads the logs), splits it with scikit-learn's
//! `train_test_split` reproduced bit for bit ([`split`]), grows a grid of CART trees that are
//! scikit-learn's trees split for split ([`cart`], behind linfa's traits in [`learner`], with
//! linfa-trees as a second backend), and selects a model and threshold either by PyTorch's rule
//! (`Mode::Upstream`) or by a cross-validated, cost-aware rule (`Mode::CostAware`, the
//! default). [`ah_eval::metrics`] computes PyTorch's metrics plus ours; [`report`] renders the markdown
//! report, SVG plots and the Graphviz tree. [`config`] resolves the training settings: the
//! defaults of the optimisation registry ([`ah_core::optimization`]) with `--config` overrides.
//!
//! ```no_run
//! use ah_train::train::{train, TrainOptions};
//! # fn options() -> TrainOptions { unimplemented!() }
//! let out = train(&options(), &|_| {})?;
//! println!("{} leaves, test metrics {:?}", out.model.tree.leaves(), out.metrics["test"]);
//! # Ok::<(), ah_train::error::TrainError>(())
//! ```
//!
//! This library prints nothing; errors are typed ([`error::TrainError`]).
#![deny(missing_docs)]
// Index loops over parallel arrays (rows, classes, nodes) read better than zipped iterators.
#![allow(clippy::needless_range_loop)]

pub mod cart;
pub mod category_guard;
pub mod config;
pub mod dataset;
pub mod defaults;
pub mod error;
pub mod guard;
pub mod learner;
pub mod prune;
pub mod regression;
pub mod report;
pub mod split;
pub mod train;
