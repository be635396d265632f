//! What a collection reports: each input as it finishes ([`InputReport`], to an [`Observer`])
//! and the run's totals ([`CollectSummary`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::backend::BackendInfo;

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
    /// The [`stop`](super::CollectConfig::stop) token ended the run with inputs left to measure
    /// (recorded in the provenance only when true, so an uninterrupted session's summary is as
    /// before).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
