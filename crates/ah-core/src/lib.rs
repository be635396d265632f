//! Core types of autoheuristic-rs.
//!
//! Everything the tools and the generated heuristics share: feature [`Value`]s that print as
//! Python does, the decision [`Context`], log [`Metadata`] and the device identity, PyTorch's
//! AutoHeuristic [`log`] format (reader and writer, byte for byte), augment [`ops`], the [`model`] schema that
//! `ah-train` writes and `ah-codegen` reads, and the [`LearnedHeuristic`] interface that
//! generated code implements, the [`runtime`] `AutoHeuristic` and the guarded pick [`cache`].
//!
//! This crate prints nothing; errors are typed ([`Error`]).
#![deny(missing_docs)]

pub mod cache;
pub mod context;
pub mod error;
pub mod heuristic;
pub mod log;
pub mod metadata;
pub mod model;
pub mod multi_kernel;
pub mod ops;
pub mod runtime;
pub mod select;
pub mod value;

pub use cache::{CacheKey, DeviceFingerprint, PickCache};
pub use context::{Context, Feature};
pub use error::{Error, Result};
pub use heuristic::{HeuristicMetadata, LearnedHeuristic, Prediction, Registry, UnsureKind};
pub use log::{Log, LogRow, LogWriter, ReadOptions};
pub use metadata::{DeviceIdentity, Metadata};
pub use model::{Decision, Model, ModelEvaluator, UnsureReason};
pub use ops::{apply_operations, builtin_operations, check_operations, Operation};
pub use runtime::{AutoHeuristic, Config, DeviceInfo, Pick, PickSource};
pub use value::Value;

/// Version of the autoheuristic-rs tools, recorded in models, logs' sidecars and generated code.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
