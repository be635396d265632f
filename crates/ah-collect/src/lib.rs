//! Collects AutoHeuristic training data, the way PyTorch's `BenchmarkRunner` scripts do, but
//! without Inductor in the loop: faster, resumable and safe to run on many machines.
//!
//! - [`runner`]: the [`runner::BenchmarkRunner`] trait (draw an input, build its context,
//!   measure each choice) and [`runners`], the registry (`pad_mm`, ...).
//! - [`backend`]: where measurements run: CUDA (cudarc, loaded at run time; cuBLAS, NVRTC,
//!   CUDA events, L2 flush) or the CPU (`matrixmultiply`).
//! - [`collect`]: the collection loop: seeded per-sample inputs, repetitions, PyTorch's log
//!   format through `ah_log::LogWriter`, resume, torn-tail repair, file lock, sharding,
//!   several devices, the provenance and medians sidecars; [`collect::merge`] joins shards.
//! - [`catalogue`]: the real-model catalogue pad_mm's `--shapes real|mix` draws GEMMs from.
//!
//! This library prints nothing; the `ah-collect` binary reports progress.
#![deny(missing_docs)]

pub mod backend;
pub mod catalogue;
pub mod collect;
pub mod dtype;
pub mod runner;
pub mod runners;

pub use backend::{Backend, BackendKind, BenchError, Measurement, TimingConfig};
pub use runner::{BenchmarkRunner, DynRunner, SampleRng, Target};
