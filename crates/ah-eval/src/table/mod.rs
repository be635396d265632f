//! From a log to the classification table (spec 7.1, PyTorch's `AHTrainDecisionTree.get_df`).
//!
//! Steps: per (input, choice) the median feedback over repetitions (`inf` if any repetition is
//! `±inf`); inputs with at least two choices; the winner (fastest, first in choice-name order on
//! exact ties), the speedup (second best over best) and the choice-to-time map; augment
//! operations; one-hot columns for categorical features with categories in order of
//! appearance. Inputs are ordered as pandas' `groupby(features, sort=True)` orders them, so that
//! row positions, and hence the seeded split, are the reference's.
//!
//! The one evaluation table of the workspace: `ah-train` trains and evaluates on it, and
//! `ah-use replay` evaluates a trained model on it, so both report the same rows.
//!
//! The module by job: `frame.rs` holds [`Table`], the rows and their columns; `key.rs` holds
//! [`Key`], an input's feature text; `options.rs` holds [`BuildOptions`]; `build.rs` builds a table
//! from a log ([`build_table`]) by calling, in order, `group.rs` (rows grouped by input, pandas'
//! `groupby` order), `label.rs` (median times, winner, speedup per input), `slots.rs` (augment
//! operations, feature text, column values) and `encoding.rs` ([`Encoding`], the encoding learned
//! from a training table); `values.rs` types and prints logged values as pandas does; `report.rs`
//! holds [`BuildReport`], what was dropped or odd.

mod build;
mod encoding;
mod frame;
mod group;
mod key;
mod label;
mod options;
mod report;
mod slots;
mod values;

#[cfg(test)]
mod tests;

pub use build::build_table;
pub use encoding::Encoding;
pub use frame::Table;
pub use key::Key;
pub use options::BuildOptions;
pub use report::BuildReport;
