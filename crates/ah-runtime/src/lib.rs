//! The use step inside a program: PyTorch's AutoHeuristic at run time.
//!
//! - [`runtime`]: [`AutoHeuristic`] (collect, use or neither, from a [`Config`] read from the
//!   `AUTOHEURISTIC_*` variables), with autotune-once as the fallback when the heuristic is
//!   unsure;
//! - [`select`]: the select-algorithm flavour, where an autotuner times the choices;
//! - [`multi_kernel`]: the multi-kernel runtime (a heuristic or a benchmark picks the
//!   sub-kernel on the first call);
//! - [`cache`]: the guarded pick cache, a journal several processes share.
//!
//! The decisions themselves come from the generated heuristics through the core's
//! [`Registry`](ah_core::Registry); rows are logged through [`ah_log::LogWriter`]. This crate
//! prints nothing and has no GPU code; errors are typed.
#![deny(missing_docs)]

pub mod cache;
pub mod multi_kernel;
pub mod runtime;
pub mod select;

pub use cache::{CacheKey, DeviceFingerprint, PickCache};
pub use runtime::{AutoHeuristic, Config, DeviceInfo, Pick, PickSource};
