//! Collects AutoHeuristic training data, the way PyTorch's `BenchmarkRunner` scripts do, but
//! without Inductor in the loop: faster, resumable and safe to run on many machines.
//!
//! [`collect`] is the collection loop: seeded per-sample inputs, repetitions, PyTorch's log
//! format through `ah_log::LogWriter`, resume, torn-tail repair, file lock, sharding, several
//! devices, the provenance and medians sidecars; [`collect::merge`] joins shards.
//!
//! What is measured and how (runners, backends, the timing protocol, the real-model
//! catalogue) is the benchmarking library `ah-bench`; its modules are re-exported here under
//! their old paths (`ah_collect::runners`, ...).
//!
//! This library prints nothing; the `ah-collect` binary reports progress.
#![deny(missing_docs)]

pub mod collect;

pub use ah_bench::{backend, catalogue, dtype, runner, runners};
pub use ah_bench::{Backend, BackendKind, BenchError, Measurement, TimingConfig};
pub use ah_bench::{BenchmarkRunner, DynRunner, Feedback, SampleRng, Target};
