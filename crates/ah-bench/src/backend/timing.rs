//! The timing protocol ([`TimingConfig::measure`], see the [backend module docs](super)): how
//! many calls a benchmark makes, over a device's [`BenchCalls`], and its [`Measurement`].

use serde::Serialize;

use super::error::BenchError;

/// One benchmark of one choice: the minimum (logged, PyTorch's current benchmarker) and the
/// median of the timed calls, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Measurement {
    /// Minimum over all timed calls, ms.
    pub min_ms: f64,
    /// Median over all timed calls, ms.
    pub median_ms: f64,
    /// Number of timed calls.
    pub runs: u32,
    /// Time the device spent in this benchmark's calls, warm-up included (not the L2
    /// flushes), ms: what the collector sums to report how busy the device was.
    pub busy_ms: f64,
}

impl Measurement {
    /// Builds a measurement from timed calls (ms); `None` when there are none.
    pub fn from_samples(samples: &mut [f64]) -> Option<Measurement> {
        if samples.is_empty() {
            return None;
        }
        let busy_ms = samples.iter().sum();
        let median = ah_core::stats::median(samples);
        let n = samples.len();
        Some(Measurement {
            min_ms: samples[0],
            median_ms: median,
            runs: n as u32,
            busy_ms,
        })
    }
}

/// How many calls a benchmark makes (defaults: PyTorch's `InductorBenchmarker`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TimingConfig {
    /// Estimation runs (each timed, each after an L2 flush).
    pub estimation_runs: u32,
    /// Upper bound of further timed runs.
    pub max_runs: u32,
    /// Target duration of the further timed runs, ms.
    pub budget_ms: f64,
    /// L2 flushes before the timed runs (PyTorch's `memory_warmup_iters`), GPU only.
    pub memory_warmup: u32,
    /// A call whose first timed run takes at least this many ms is measured by that run alone
    /// (no further estimation or timed runs); `None`: PyTorch's protocol for every call.
    pub long_run_ms: Option<f64>,
    /// Idleness before the one run of a long call, ms (see the module docs); `None`: none.
    /// Only used with [`Self::long_run_ms`].
    pub rest_ms: Option<f64>,
}

/// The device side of one benchmark, as [`TimingConfig::measure`] drives it.
pub trait BenchCalls {
    /// Makes `n` timed runs, each after an L2 flush, and returns their durations in ms.
    fn timed(&mut self, n: usize) -> Result<Vec<f64>, BenchError>;
    /// Runs between the estimation and the timed runs (PyTorch's memory warm-up).
    fn settle(&mut self) -> Result<(), BenchError>;
    /// Leaves the device idle for `ms` once its queued work is done.
    fn rest(&mut self, ms: f64) -> Result<(), BenchError>;
}

impl TimingConfig {
    /// PyTorch's `InductorBenchmarker.benchmark_gpu` defaults: 5 estimation runs, up to 100
    /// timed runs within 25 ms, 100 memory warm-up flushes.
    pub const PYTORCH: TimingConfig = TimingConfig {
        estimation_runs: 5,
        max_runs: 100,
        budget_ms: 25.0,
        memory_warmup: 100,
        long_run_ms: None,
        rest_ms: None,
    };

    /// The collector's default on the GPU: PyTorch's protocol, except that a call whose first
    /// timed run takes 20 ms or more is measured by that run alone, after 150 ms of rest when
    /// heavy work came before (see the module docs).
    pub const ADAPTIVE: TimingConfig = TimingConfig {
        long_run_ms: Some(20.0),
        rest_ms: Some(150.0),
        ..Self::PYTORCH
    };

    /// True when a first run of `first_ms` ends the benchmark (see [`Self::long_run_ms`]).
    pub fn is_long(&self, first_ms: f64) -> bool {
        self.long_run_ms.is_some_and(|t| first_ms >= t)
    }

    /// Times one benchmark with this protocol. `after_long` says whether the device's previous
    /// benchmark ended with a long call (the device may be slowed by it); it is updated for the
    /// next benchmark.
    pub fn measure(
        &self,
        warmup: bool,
        after_long: &mut bool,
        dev: &mut dyn BenchCalls,
    ) -> Result<Measurement, BenchError> {
        let mut warmup_ms = 0.0;
        if warmup {
            let (mut runs, long) = self.first_run(after_long, dev)?;
            if long && self.confirm_long_warmup(&mut runs, after_long, dev)? {
                return Measurement::from_samples(&mut runs).ok_or_else(no_runs);
            }
            warmup_ms = runs.iter().sum();
        }
        let (mut samples, long) = self.first_run(after_long, dev)?;
        if !long {
            let est_runs = self.estimation_runs.max(1) as usize;
            samples.extend(dev.timed(est_runs - 1)?);
            let est = samples.iter().copied().fold(f64::INFINITY, f64::min);
            dev.settle()?;
            samples.extend(dev.timed(self.runs_for(est) as usize)?);
        }
        let mut m = Measurement::from_samples(&mut samples).ok_or_else(no_runs)?;
        m.busy_ms += warmup_ms;
        Ok(m)
    }

    /// A long warm-up is the measurement only when a second run confirms it: a first call can
    /// carry one-time work (on the H100, up to 150 ms on a 9 ms GEMM; docs/collection.md), and
    /// one confirming run is far cheaper than a second repetition. Runs it right away, with no
    /// rest (a heavy call just ran, so it may run up to 1.5x slow; the minimum of the two is
    /// kept, which is never above the warm-up) unless `runs` holds a rested second run
    /// already, which then confirms. Returns false when the second run is not long: the
    /// warm-up was one-time work, and the benchmark goes on under PyTorch's protocol (`runs`
    /// then counts as warm-up).
    fn confirm_long_warmup(
        &self,
        runs: &mut Vec<f64>,
        after_long: &mut bool,
        dev: &mut dyn BenchCalls,
    ) -> Result<bool, BenchError> {
        if runs.len() == 1 {
            runs.extend(dev.timed(1)?);
        }
        let long = self.is_long(*runs.last().ok_or_else(no_runs)?);
        *after_long = long;
        Ok(long)
    }

    /// The first run of a benchmark (the warm-up, or the first timed run), and whether it is
    /// long. It follows a rest when the previous call was long; a long run that followed
    /// none is run again after one, so that one of its runs meets an idle device.
    fn first_run(
        &self,
        after_long: &mut bool,
        dev: &mut dyn BenchCalls,
    ) -> Result<(Vec<f64>, bool), BenchError> {
        let rest = self.long_run_ms.and(self.rest_ms);
        let rested = match rest {
            Some(ms) if *after_long => {
                dev.rest(ms)?;
                true
            }
            _ => false,
        };
        let mut runs = dev.timed(1)?;
        let long = self.is_long(*runs.first().ok_or_else(no_runs)?);
        if let Some(ms) = rest.filter(|_| long && !rested) {
            dev.rest(ms)?;
            runs.extend(dev.timed(1)?);
        }
        *after_long = long;
        Ok((runs, long))
    }

    /// Number of timed runs after the estimation: `max(min(max_runs, budget // est), 1)`.
    pub fn runs_for(&self, estimate_ms: f64) -> u32 {
        if estimate_ms.is_nan() || estimate_ms <= 0.0 {
            return self.max_runs.max(1);
        }
        let n = (self.budget_ms / estimate_ms).floor();
        (n.min(f64::from(self.max_runs)) as u32).max(1)
    }
}

fn no_runs() -> BenchError {
    BenchError::Other("no timed runs".into())
}

impl Default for TimingConfig {
    fn default() -> Self {
        Self::PYTORCH
    }
}
