//! The evaluation layer of autoheuristic-rs: how a heuristic is judged on a log.
//!
//! - [`table`]: from a log to the evaluation table (PyTorch's `get_df`: median over
//!   repetitions, winners, augment operations, one-hot categories), one row per input;
//! - [`metrics`]: per-row outcomes (correct, wrong, unsure) and PyTorch's metrics plus ours,
//!   as a typed [`Metrics`];
//! - [`score`]: the one geometric mean, the harm threshold and the per-input score of a pick
//!   ([`PickTimes`], summarised by [`PickSummary`]) that `ah-use run` and the case studies
//!   use; the module docs name each quantity once.
//!
//! `ah-train` trains and selects on these tables and reports these metrics; `ah-use replay`
//! evaluates a trained model on any log with the same code, so both print the same numbers
//! for the same rows.
//!
//! Why a crate of its own rather than a module of `ah-core`: `ah-core` is what generated
//! heuristics link at run time (inside PyTorch-like programs), and it stays small and free of
//! thread pools; building a table needs rayon and the evaluation is offline work. Why not a
//! module of `ah-train`: `ah-use` evaluates models too, and must not depend on the trainer
//! (its learners, plotting, code generation).
//!
//! This library prints nothing; errors are typed ([`EvalError`]).
#![deny(missing_docs)]
// Index loops over parallel arrays (rows, choices, columns) read better than zipped iterators.
#![allow(clippy::needless_range_loop)]

pub mod error;
pub mod metrics;
pub mod score;
pub mod table;

pub use error::{EvalError, Result};
pub use metrics::Metrics;
pub use score::{gmean, PickSummary, PickTimes, HARM_FACTOR};
pub use table::{build_table, BuildOptions, BuildReport, Encoding, Table};
