//! A collection request ([`CollectConfig`]): the log, the sample space and this shard of it
//! ([`Shard`]), the devices ([`Devices`], each started by [`open_backend`]), the timing and
//! the repetitions.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::error::CollectError;
use crate::backend::{Backend, CpuBackend, CudaBackend, TimingConfig};
use crate::runner::Repetitions;

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
    /// session's summary is marked [`interrupted`](super::CollectSummary::interrupted).
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

/// Starts the backend of one device.
pub fn open_backend(
    devices: &Devices,
    slot: usize,
    cfg: &CollectConfig,
) -> Result<Backend, CollectError> {
    Ok(match devices {
        Devices::Cpu => Backend::Cpu(CpuBackend::with_timing(cfg.timing())),
        Devices::Cuda(ords) => {
            Backend::Cuda(Box::new(CudaBackend::new(ords[slot], cfg.gpu_timing)?))
        }
    })
}
