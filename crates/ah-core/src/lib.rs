//! Core types of autoheuristic-rs.
//!
//! Everything the tools and the generated heuristics share:
//! - feature [`Value`]s that print as Python does, the decision [`Context`] and its shared
//!   layout [`Schema`], log [`Metadata`] and the [`DeviceIdentity`];
//! - PyTorch's AutoHeuristic [`log`] format, reader and writer, byte for byte;
//! - augment operations ([`ops`]): a small expression language with Python's semantics,
//!   PyTorch's built-in operations and user operation files;
//! - the registry of optimisations ([`optimization`]): per name (`pad_mm`, `mm`, `mixed_mm`,
//!   a generic fallback) the default choice, the training defaults and the built-in operations;
//! - the [`model`] schema that `ah-train` writes and `ah-codegen` reads, its one loader and
//!   consistency check ([`model_file`]: [`Model::load`], [`Model::check`]), and its in-memory
//!   evaluation ([`ModelEvaluator`]), which decides exactly as generated code does;
//! - the [`LearnedHeuristic`] interface that generated code implements and the [`Registry`]
//!   it registers into;
//! - the [`runtime`] ([`AutoHeuristic`], [`Config`] from `AUTOHEURISTIC_*` variables), the
//!   select-algorithm flavour ([`select`]), the multi-kernel runtime ([`multi_kernel`]) and the
//!   guarded pick [`cache`];
//! - atomic file writes ([`fs::write_atomic`]), the one way the tools write their outputs.
//!
//! This crate prints nothing and has no GPU code; errors are typed ([`Error`]).
#![deny(missing_docs)]

pub mod cache;
pub mod context;
pub mod error;
pub mod fs;
pub mod generated;
pub mod heuristic;
pub mod log;
pub mod metadata;
pub mod model;
pub mod model_file;
pub mod multi_kernel;
pub mod ops;
pub mod optimization;
pub mod runtime;
pub mod schema;
pub mod select;
pub mod stats;
#[doc(hidden)]
pub mod test_support;
pub mod value;

pub use cache::{CacheKey, DeviceFingerprint, PickCache};
pub use context::{Context, Feature};
pub use error::{Error, Result};
pub use heuristic::{HeuristicMetadata, LearnedHeuristic, Prediction, Registry, UnsureKind};
pub use log::{Log, LogRow, LogWriter, ReadOptions};
pub use metadata::{DeviceIdentity, Metadata};
pub use model::{Decision, Model, ModelEvaluator, UnsureReason};
pub use model_file::ModelFileError;
pub use ops::{apply_operations, builtin_operations, check_operations, Operation};
pub use runtime::{AutoHeuristic, Config, DeviceInfo, Pick, PickSource};
pub use schema::{Schema, SchemaError};
pub use value::Value;

/// Version of the autoheuristic-rs tools, recorded in models, logs' sidecars and generated code.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
