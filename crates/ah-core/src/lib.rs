//! The small core of autoheuristic-rs: what the generated heuristics link.
//!
//! - feature [`Value`]s that print as Python does, the decision [`Context`] and its shared
//!   layout [`Schema`], log [`Metadata`] (the type; the log format itself is `ah-log`'s) and
//!   the [`DeviceIdentity`];
//! - augment operations ([`ops`]): a small expression language with Python's semantics,
//!   PyTorch's built-in operations and user operation files;
//! - the registry of optimisations ([`optimization`]): per name (`pad_mm`, `mm`, `mixed_mm`,
//!   a generic fallback) the default choice and the built-in operations (the training
//!   defaults are the trainer's);
//! - the [`model`] schema that `ah-train` writes and `ah-codegen` reads, its consistency check
//!   ([`Model::check`]), its loader ([`model_file`], `Model::load`, with the `json` feature)
//!   and its in-memory evaluation ([`ModelEvaluator`]), which decides exactly as generated
//!   code does;
//! - the [`LearnedHeuristic`] interface that generated code implements, the [`Registry`] it
//!   registers into, and the typed helpers generated code calls ([`generated`]);
//! - the one median ([`stats`]) and, with the `fs` feature, atomic file writes
//!   (`fs::write_atomic`), the one way the tools write their outputs.
//!
//! Elsewhere: the log format is `ah-log`, the runtime (AutoHeuristic, select, multi-kernel,
//! the pick cache) `ah-runtime`.
//!
//! serde is the only outside dependency (serde_json too with the `json` feature, which the
//! tools turn on, like `fs`): a generated heuristics crate links nine crates. This crate prints nothing
//! and has no GPU code; errors are typed ([`Error`]), their `Display` written by hand.
#![deny(missing_docs)]

pub mod context;
mod duplicates;
pub mod error;
#[cfg(feature = "fs")]
pub mod fs;
pub mod generated;
pub mod heuristic;
pub mod metadata;
pub mod model;
pub mod model_file;
pub mod ops;
pub mod optimization;
pub mod schema;
pub mod stats;
pub mod value;

pub use context::{Context, Feature};
pub use error::{Error, Result};
pub use heuristic::{HeuristicMetadata, LearnedHeuristic, Prediction, Registry, UnsureKind};
pub use metadata::{DeviceIdentity, Metadata};
pub use model::{Decision, Model, ModelEvaluator, UnsureReason};
pub use model_file::ModelFileError;
pub use ops::{apply_operations, builtin_operations, check_operations, Operation};
pub use schema::{Schema, SchemaError};
pub use value::Value;

/// Version of the autoheuristic-rs tools, recorded in models, logs' sidecars and generated code.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
