//! The benchmarking library of autoheuristic-rs: how a decision's choices are measured.
//!
//! - [`runner`]: the [`runner::BenchmarkRunner`] trait (draw an input, build its context,
//!   measure each choice), the per-sample RNG ([`runner::sample_rng`]) and [`runners`], the
//!   registry (`pad_mm`, `mm`, `reduction`, ...);
//! - [`backend`]: where measurements run, and the timing protocol (PyTorch's benchmarker:
//!   warm-up, L2 flush, several timed runs, min and median): CUDA (cudarc, loaded at run
//!   time; cuBLAS, NVRTC, CUDA events) or the CPU (`matrixmultiply`);
//! - [`catalogue`]: the real-model catalogue pad_mm's `--shapes real|mix` draws GEMMs from;
//! - [`dtype`]: the element types and their host encodings.
//!
//! Features: `cuda` (off unless asked for) adds the CUDA backend and the GPU-only runners
//! (`mm`, `reduction`) through cudarc; without it [`backend::CudaBackend::new`] says the build
//! has no CUDA and the library links no CUDA library.
//!
//! The collection tool (`ah-collect`: loop, resume, shards, devices, CLI) and the use step
//! (`ah-use run`) drive it. This library prints nothing; errors are typed.
#![deny(missing_docs)]

pub mod backend;
pub mod catalogue;
pub mod dtype;
pub mod runner;
pub mod runners;

pub use backend::{Backend, BackendKind, BenchError, Measurement, TimingConfig};
pub use runner::{BenchmarkRunner, DynRunner, Feedback, SampleRng, Target};
