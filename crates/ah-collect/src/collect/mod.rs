//! The collection loop: draws sample inputs, measures them on one or more devices and appends
//! the rows to a PyTorch-format log, safely.
//!
//! - **Deterministic samples.** Sample `i` is drawn from a ChaCha8 stream `i` of the seed, so
//!   it is the same input whatever shard, device or resume produced it. `--shard I/N` takes the
//!   samples with `i % N == I`.
//! - **Rows.** Each input gives `reps x choices` rows, repetition-major (PyTorch's
//!   `--num-reps`: for each repetition, every choice); an input whose choices were all long in
//!   the first repetition gets `--long-reps` repetitions instead ([`Repetitions`]); feedback = the minimum of the timed
//!   calls in ms (`inf` when the choice failed). All rows of one input are written with one
//!   `write` and then `fsync`ed, so a kill loses at most the input in flight.
//! - **Sidecars.** `FILE.medians.txt` is the same log with the median of the timed calls as
//!   feedback (train on it for median labelling); `FILE.provenance.json` records the device,
//!   library versions, tool version, seed, command lines and timing method of every session.
//! - **Resume.** Re-running with the same output, seed and sample count skips inputs whose rows
//!   are all in the log; a torn last line, or an incomplete last input, is cut off first. The
//!   log's metadata line and header must be exactly the runner's (another column order would
//!   put values under other columns: refused); inputs the medians sidecar lacks are measured
//!   again for it. Samples are drawn one at a time as the workers take them, so memory does
//!   not grow with `--num-samples`.
//! - **Stop.** Setting [`CollectConfig::stop`] ends the collection early: no new input is
//!   started, the inputs being measured are finished and written, and the session is closed
//!   with its summary marked `interrupted`; running again resumes. The library installs no
//!   signal handler (the binary sets the token on SIGINT/SIGTERM).
//! - **Lock.** Every writer of a log (a collection, its repair, a merge onto it) holds the
//!   log's lock ([`lock_log`]): an exclusive `File::try_lock` on the log file itself (so two
//!   names of one file, hard or symbolic links, contend) and on the stable sidecar `FILE.lock`
//!   (never renamed, so a merge that replaces the log by a rename cannot orphan it); a merge
//!   holds shared locks on its inputs. A second writer is refused.
//!
//! By job: `select` (which samples, drawn as they are asked for), `todo` (which of them are
//! left to measure), `paths` (the log's default path and sidecars, checked before anything is
//! written),
//! `provenance` (the sidecar and the checks of a resume), `resume` (repairing a log after a
//! kill), `run` (the collection loop), `workers` (the measuring threads), `merge` (joining
//! shards). The log format itself is `ah_log`'s.

mod merge;
mod paths;
mod provenance;
mod resume;
mod run;
mod select;
mod todo;
mod workers;

#[cfg(test)]
mod reps_tests;
#[cfg(test)]
mod stop_tests;
#[cfg(test)]
mod test_runner;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use ah_log::{lock_log, lock_path, LogLock};
pub use merge::{merge, MergeSummary};
pub use paths::check_outputs;
pub use paths::{default_log_path, extras_path, medians_path, provenance_path};
pub use resume::{repair_log, Repair};
pub use run::{collect, open_backend};
pub use select::sample_rng;

use crate::backend::cuda::CudaInitError;
use crate::backend::{BackendInfo, CpuBackend, TimingConfig};
use crate::runner::Repetitions;

/// Errors of a collection or a merge.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// A file operation failed.
    #[error("{}", ah_core::error::io_text(path, source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The log format layer refused (e.g. PyTorch's InconsistentMetadata).
    #[error(transparent)]
    Core(#[from] ah_core::Error),
    /// The CUDA backend could not start.
    #[error(transparent)]
    Cuda(#[from] CudaInitError),
    /// A bad request (unknown runner, bad shard, ...), with what to do.
    #[error("{0}")]
    Invalid(String),
}

impl From<ah_core::fs::WriteError> for CollectError {
    fn from(e: ah_core::fs::WriteError) -> Self {
        CollectError::Io {
            path: e.path,
            source: e.source,
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CollectError + '_ {
    move |source| CollectError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Which devices to run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Devices {
    /// The CPU backend.
    Cpu,
    /// These CUDA device ordinals, one worker thread each.
    Cuda(Vec<usize>),
}

/// `--shard I/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, `0..count`.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
}

impl Shard {
    /// All samples.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Parses `I/N` with `I < N`.
    pub fn parse(text: &str) -> Result<Shard, CollectError> {
        let bad = || {
            CollectError::Invalid(format!(
                "--shard `{}`: expected I/N with 0 <= I < N, e.g. --shard 0/4 for the first of four shards",
                ah_core::error::clip_to(text, 60)
            ))
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// True when sample `i` belongs to this shard.
    pub fn contains(&self, i: u64) -> bool {
        i % self.count == self.index
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A collection request.
#[derive(Debug, Clone)]
pub struct CollectConfig {
    /// The log to append to.
    pub out: PathBuf,
    /// Samples in the whole sample space (all shards).
    pub num_samples: u64,
    /// Repetitions per input (PyTorch's `--num-reps`): the most an input gets.
    pub num_reps: usize,
    /// Repetitions of an input whose choices were all long in its first repetition
    /// (`--long-reps`, `1..=num_reps`; `num_reps`: every input the same).
    pub long_reps: usize,
    /// Seed of the sample space.
    pub seed: u64,
    /// This process's shard.
    pub shard: Shard,
    /// Devices.
    pub devices: Devices,
    /// Timing on the GPU (the CPU uses [`CpuBackend::TIMING`](crate::backend::CpuBackend::TIMING) unless `cpu_timing` is set).
    pub gpu_timing: TimingConfig,
    /// Timing override for the CPU.
    pub cpu_timing: Option<TimingConfig>,
    /// Draws per sample before giving up on the precondition.
    pub max_draws: usize,
    /// Distinct inputs only: a sample whose input (feature values) repeats an earlier
    /// sample's is skipped and further sample indices are drawn, so the log holds
    /// `num_samples` distinct inputs (`--distinct`).
    pub distinct: bool,
    /// Logs whose inputs are never drawn (e.g. the training log, for a fresh test set):
    /// such samples are skipped like repeats (`--exclude`).
    pub exclude: Vec<PathBuf>,
    /// The command line, for the provenance sidecar.
    pub command_line: String,
    /// Stops the collection early when set (by a signal handler of the binary, or by a library
    /// user): the workers take no new input, finish and write the ones in progress, and the
    /// session's summary is marked [`interrupted`](CollectSummary::interrupted).
    pub stop: Arc<AtomicBool>,
}

impl CollectConfig {
    /// The timing protocol of the requested devices.
    pub fn timing(&self) -> TimingConfig {
        match self.devices {
            Devices::Cpu => self.cpu_timing.unwrap_or(CpuBackend::TIMING),
            Devices::Cuda(_) => self.gpu_timing,
        }
    }

    /// The repetition policy: `num_reps`, or `long_reps` for an input whose choices are all
    /// long, when the protocol has a long rule ([`TimingConfig::long_run_ms`]); without one
    /// (the CPU, `--long-run-ms 0`) no input is long, so every input gets `num_reps`, and the
    /// log is repaired and recorded as such.
    pub fn repetitions(&self) -> Repetitions {
        let long = match self.timing().long_run_ms {
            Some(_) => self.long_reps,
            None => self.num_reps,
        };
        Repetitions {
            max: self.num_reps,
            long,
        }
    }
}

/// What happened to one sample, reported to the [`Observer`] as it finishes.
#[derive(Debug, Clone, PartialEq)]
pub struct InputReport {
    /// Sample index.
    pub index: u64,
    /// Device ordinal that measured it.
    pub device: usize,
    /// An input of the log measured again for its medians sidecar (which lacked it): its
    /// rows went to the sidecar only.
    pub medians_only: bool,
    /// Rows written.
    pub rows: usize,
    /// Repetitions measured (fewer than `num_reps` when every choice was long).
    pub reps: usize,
    /// Measurements that failed (logged as `inf`).
    pub failures: usize,
    /// First failure message, if any.
    pub first_error: Option<String>,
    /// Time the device spent running this input's benchmarks (warm-ups and timed runs), ms.
    pub busy_ms: f64,
}

/// Receives progress (the binary draws a progress bar with it).
pub trait Observer {
    /// Measuring starts: about `to_measure` inputs will be measured, `already_done` are in the
    /// log (exact for a new log or a rerun of the same request; with `--distinct` or
    /// `--exclude` an estimate: samples are drawn as they are measured, and the summary has
    /// the counts).
    fn start(&mut self, to_measure: u64, already_done: u64, devices: &[BackendInfo]) {
        let _ = (to_measure, already_done, devices);
    }
    /// One input was measured and written.
    fn input_done(&mut self, report: &InputReport) {
        let _ = report;
    }
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Silent;
impl Observer for Silent {}

/// Totals of one collection run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CollectSummary {
    /// Samples of this shard.
    pub shard_samples: u64,
    /// Inputs already complete in the log (skipped).
    pub already_done: u64,
    /// Inputs measured now.
    pub measured: u64,
    /// Of these, the inputs measured with fewer repetitions (`--long-reps`: every choice
    /// long in the first repetition).
    pub fewer_reps: u64,
    /// Inputs of the log measured again because its medians sidecar lacked them (it was cut
    /// or removed): their rows went to the sidecar only (recorded only when some were).
    #[serde(skip_serializing_if = "is_zero")]
    pub refilled: u64,
    /// Samples with no draw satisfying the precondition.
    pub no_precondition: u64,
    /// Sample indices skipped (all shards) as repeated inputs (`--distinct`) or inputs of an
    /// `--exclude` log.
    pub skipped: u64,
    /// Rows written to the log now.
    pub rows: u64,
    /// Measurements that failed (`inf` rows).
    pub failures: u64,
    /// Bytes cut from a torn tail, rows of an incomplete last input removed.
    pub repaired_bytes: u64,
    /// Wall time, seconds.
    pub wall_s: f64,
    /// Inputs measured per minute.
    pub inputs_per_minute: f64,
    /// Time the devices spent running benchmarks (warm-ups and timed runs; not L2 flushes,
    /// allocation or data fills), seconds, all devices together.
    pub device_busy_s: f64,
    /// `device_busy_s` over the wall time of all workers: how close collection ran to what
    /// the measurements themselves cost.
    pub device_busy_share: f64,
    /// Inputs measured per device ordinal.
    pub per_device: BTreeMap<usize, u64>,
    /// The log.
    pub out: PathBuf,
    /// The [`stop`](CollectConfig::stop) token ended the run with inputs left to measure
    /// (recorded in the provenance only when true, so an uninterrupted session's summary is as
    /// before).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}
