//! Where benchmarks run: the CUDA backend (cudarc, loaded at run time) or the CPU backend.
//!
//! Both time a closure the same way (PyTorch's `InductorBenchmarker.benchmark_gpu`, spec
//! section 9): one warm-up call, an L2 flush before every timed call, 5 estimation runs, then
//! `clamp(budget / estimate, 1, max_runs)` timed runs; the reported value is the minimum of all
//! timed calls (what PyTorch logs), the median is kept too.
//!
//! One exception, [`TimingConfig::long_run_ms`]: a call whose warm-up (or, without a warm-up,
//! first timed run) takes at least that long is measured by that run alone, a warm-up with
//! one more run that confirms it (a first call can carry one-time work). PyTorch's protocol
//! spends at least 6 runs per benchmark so that short kernels are timed well above the
//! timer's resolution and launch noise; a kernel of tens of milliseconds is timed to about
//! 0.5 % by one run, and its first call costs what later calls cost once the driver has loaded
//! its kernel (the collector asks for eager loading:
//! [`CudaBackend::prefer_eager_module_loading`]); the spread measured on the H100 is in
//! docs/collection.md.
//!
//! That one run must not follow heavy work: the H100's power management slows the runs right
//! after a burst of heavy kernels by up to 1.5x and recovers within 100 to 200 ms of idleness
//! (docs/collection.md, `scripts/probe_run_spread.py`). PyTorch's minimum over 6 runs hides
//! this; one run does not. So a benchmark that follows a long call starts after
//! [`TimingConfig::rest_ms`] of idleness, and a long call that was not preceded by a rest
//! rests and runs once more, keeping the faster run.

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
/// The CUDA backend of a build without the `cuda` feature: it never starts.
#[cfg(not(feature = "cuda"))]
#[path = "cuda_off.rs"]
pub mod cuda;
mod cuda_types;

use std::fmt;

use ah_core::DeviceIdentity;
use serde::Serialize;

pub use cpu::CpuBackend;
pub use cuda::CudaBackend;

/// The kind of backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// An NVIDIA GPU through the CUDA driver, cuBLAS and NVRTC.
    Cuda,
    /// The host CPU.
    Cpu,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Cuda => "cuda",
            BackendKind::Cpu => "cpu",
        })
    }
}

/// Why one measurement failed. The collection logs `inf` for it and goes on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BenchError {
    /// The device ran out of memory.
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// A CUDA driver, cuBLAS or NVRTC call failed.
    #[error("cuda: {0}")]
    Cuda(String),
    /// The CUDA context is unusable (illegal address, launch failure, ...): every later call
    /// would fail too. The collection stops without logging the input; re-running resumes.
    #[error("CUDA context lost: {0}")]
    ContextLost(String),
    /// The runner does not support this backend.
    #[error("{0}")]
    Unsupported(String),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

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

/// What the provenance sidecar records about a backend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackendInfo {
    /// `cuda` or `cpu`.
    pub kind: BackendKind,
    /// Device name (`NVIDIA H100 80GB HBM3`, or the CPU model).
    pub device_name: String,
    /// Device ordinal (GPU) or 0.
    pub ordinal: usize,
    /// Compute capability, `(0, 0)` on the CPU.
    pub capability: (u32, u32),
    /// The identity written into the log's metadata.
    pub identity: DeviceIdentity,
    /// Total memory in bytes.
    pub total_memory: u64,
    /// L2 cache size in bytes (the flush buffer's size); 0 when unknown.
    pub l2_bytes: u64,
    /// Library versions (`driver`, `cublas`, `nvrtc`, `cpu_gemm`, ...).
    pub versions: std::collections::BTreeMap<String, String>,
}

impl BackendInfo {
    /// The runtime's device fingerprint (what a cached pick is guarded by): device name
    /// (`non_cuda_device` on the CPU, as PyTorch), identity, driver and library versions (not
    /// the number of available CPUs).
    pub fn fingerprint(&self) -> ah_runtime::DeviceFingerprint {
        let name = match self.kind {
            BackendKind::Cuda => self.device_name.clone(),
            BackendKind::Cpu => "non_cuda_device".to_string(),
        };
        let mut f = ah_runtime::DeviceFingerprint::new(name, self.identity);
        f.driver_version = self
            .versions
            .get("nvidia_driver")
            .cloned()
            .unwrap_or_default();
        f.library_versions = self.versions.clone();
        // The CPU count (`taskset`, containers) changes no pick: not part of the guard.
        f.library_versions.remove("available_parallelism");
        f
    }
}

/// A backend instance (one device).
pub enum Backend {
    /// A CUDA device.
    Cuda(Box<CudaBackend>),
    /// The CPU.
    Cpu(CpuBackend),
}

impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Backend").field(&self.kind()).finish()
    }
}

impl Backend {
    /// The kind.
    pub fn kind(&self) -> BackendKind {
        match self {
            Backend::Cuda(_) => BackendKind::Cuda,
            Backend::Cpu(_) => BackendKind::Cpu,
        }
    }

    /// Device facts for the provenance sidecar and the log metadata.
    pub fn info(&self) -> &BackendInfo {
        match self {
            Backend::Cuda(b) => b.info(),
            Backend::Cpu(b) => b.info(),
        }
    }

    /// How this device times a benchmark (its [`TimingConfig::long_run_ms`] decides which
    /// measurements are long).
    pub fn timing(&self) -> &TimingConfig {
        match self {
            Backend::Cuda(b) => b.timing(),
            Backend::Cpu(b) => b.timing(),
        }
    }

    /// The CUDA backend, or an [`BenchError::Unsupported`].
    pub fn cuda(&mut self) -> Result<&mut CudaBackend, BenchError> {
        match self {
            Backend::Cuda(b) => Ok(b),
            Backend::Cpu(_) => Err(BenchError::Unsupported("needs the CUDA backend".into())),
        }
    }

    /// The CPU backend, or an [`BenchError::Unsupported`].
    pub fn cpu(&mut self) -> Result<&mut CpuBackend, BenchError> {
        match self {
            Backend::Cpu(b) => Ok(b),
            Backend::Cuda(_) => Err(BenchError::Unsupported("needs the CPU backend".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_follow_pytorch_rule() {
        let t = TimingConfig::PYTORCH;
        assert_eq!(t.runs_for(0.1), 100);
        assert_eq!(t.runs_for(1.0), 25);
        assert_eq!(t.runs_for(24.0), 1);
        assert_eq!(t.runs_for(300.0), 1);
        assert_eq!(t.runs_for(0.0), 100);
    }

    #[test]
    fn measurement_min_and_median() {
        let m = Measurement::from_samples(&mut [3.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!((m.min_ms, m.median_ms, m.runs), (1.0, 2.5, 4));
        let m = Measurement::from_samples(&mut [3.0, 1.0, 2.0]).unwrap();
        assert_eq!(m.median_ms, 2.0);
        assert!(Measurement::from_samples(&mut []).is_none());
    }

    /// Fake device calls: the i-th run takes `ms(i, rested)` where `rested` says whether a
    /// rest came since the previous run; records runs and rests.
    struct Fake<F: Fn(usize, bool) -> f64> {
        ms: F,
        calls: usize,
        rests: Vec<f64>,
        rested: bool,
    }

    impl<F: Fn(usize, bool) -> f64> BenchCalls for Fake<F> {
        fn timed(&mut self, n: usize) -> Result<Vec<f64>, BenchError> {
            let out = (self.calls..self.calls + n)
                .map(|i| {
                    let ms = (self.ms)(i, self.rested);
                    self.rested = false;
                    ms
                })
                .collect();
            self.calls += n;
            Ok(out)
        }
        fn settle(&mut self) -> Result<(), BenchError> {
            Ok(())
        }
        fn rest(&mut self, ms: f64) -> Result<(), BenchError> {
            self.rests.push(ms);
            self.rested = true;
            Ok(())
        }
    }

    /// Runs `measure` (no long call before) over fake calls that take `ms(i)` for the i-th
    /// call; returns the measurement and the number of calls made.
    fn fake(t: TimingConfig, warmup: bool, ms: impl Fn(usize) -> f64) -> (Measurement, usize) {
        let (m, calls, _) = fake_rest(t, warmup, false, move |i, _| ms(i));
        (m, calls)
    }

    /// [`fake`] with the rest state before the benchmark, and run times that may depend on a
    /// rest; also returns the rests taken.
    fn fake_rest(
        t: TimingConfig,
        warmup: bool,
        mut after_long: bool,
        ms: impl Fn(usize, bool) -> f64,
    ) -> (Measurement, usize, Vec<f64>) {
        let mut dev = Fake {
            ms,
            calls: 0,
            rests: vec![],
            rested: false,
        };
        let m = t.measure(warmup, &mut after_long, &mut dev).unwrap();
        (m, dev.calls, dev.rests)
    }

    #[test]
    fn pytorch_protocol_runs_warmup_estimation_and_budget() {
        // 1 ms calls: warm-up, 5 estimation runs, then 25 ms / 1 ms = 25 timed runs.
        let (m, calls) = fake(TimingConfig::PYTORCH, true, |_| 1.0);
        assert_eq!((calls, m.runs), (31, 30));
        assert_eq!(m.busy_ms, 31.0);
        // A 300 ms kernel still costs 7 calls under PyTorch's protocol.
        let (m, calls) = fake(TimingConfig::PYTORCH, true, |_| 300.0);
        assert_eq!((calls, m.runs), (7, 6));
    }

    #[test]
    fn long_kernels_are_one_run_and_the_warmup_counts() {
        // Rests are tested below; here the device never needs one.
        let t = TimingConfig {
            rest_ms: None,
            ..TimingConfig::ADAPTIVE
        };
        // Warm-up of 300 ms, confirmed by one more run: the two are the measurement.
        let (m, calls) = fake(t, true, |i| 300.0 + i as f64);
        assert_eq!((calls, m.runs, m.min_ms, m.busy_ms), (2, 2, 300.0, 601.0));
        // A warm-up slowed by one-time work: the faster second run counts.
        let (m, calls) = fake(t, true, |i| if i == 0 { 80.0 } else { 25.0 });
        assert_eq!((calls, m.runs, m.min_ms), (2, 2, 25.0));
        // A long warm-up of a short kernel (one-time work): PyTorch's protocol after all,
        // the two first calls as warm-up.
        let (m, calls) = fake(t, true, |i| if i == 0 { 155.0 } else { 9.0 });
        assert_eq!(
            (calls, m.runs, m.min_ms, m.busy_ms),
            (9, 7, 9.0, 155.0 + 8.0 * 9.0)
        );
        // The same when the second call is the rested rerun of an unrested warm-up.
        let slow_first = |i: usize, _: bool| if i == 0 { 155.0 } else { 9.0 };
        let (m, calls, rests) = fake_rest(TimingConfig::ADAPTIVE, true, false, slow_first);
        assert_eq!((calls, m.runs, m.min_ms, rests.len()), (9, 7, 9.0, 1));
        // Without a warm-up (later repetitions): the first timed run.
        let (m, calls) = fake(t, false, |i| 300.0 + i as f64);
        assert_eq!((calls, m.min_ms), (1, 300.0));
        // A short kernel keeps PyTorch's protocol exactly.
        let (m, calls) = fake(t, true, |_| 1.0);
        assert_eq!((calls, m.runs), (31, 30));
        // Just below the threshold: not long.
        let (_, calls) = fake(t, false, |_| 19.9);
        assert_eq!(calls, 6);
        // The warm-up is short but the first timed run is long (a slow first call): one run.
        let (m, calls) = fake(t, true, |i| if i == 0 { 5.0 } else { 25.0 });
        assert_eq!((calls, m.runs, m.min_ms, m.busy_ms), (2, 1, 25.0, 30.0));
    }

    #[test]
    fn long_calls_run_once_after_a_rest() {
        let t = TimingConfig::ADAPTIVE;
        // A rested device runs a 100 ms call in 100 ms, a busy one in 140 ms.
        let run = |_: usize, rested: bool| if rested { 100.0 } else { 140.0 };
        // After a long call: rest first, then the warm-up and a confirming run right after it
        // (not rested: slower here) are the measurement.
        let (m, calls, rests) = fake_rest(t, true, true, run);
        assert_eq!((calls, m.min_ms, rests), (2, 100.0, vec![150.0]));
        // Later repetitions (no warm-up): one rested run.
        let (m, calls, rests) = fake_rest(t, false, true, run);
        assert_eq!((calls, m.min_ms, rests), (1, 100.0, vec![150.0]));
        // After a short call: the warm-up is long and followed no rest, so the device rests
        // and runs again; the faster run is kept and both count as busy.
        let (m, calls, rests) = fake_rest(t, true, false, run);
        assert_eq!(
            (calls, m.min_ms, m.busy_ms, rests),
            (2, 100.0, 240.0, vec![150.0])
        );
        // A short call after a long one rests once, then follows PyTorch's protocol.
        let (m, calls, rests) = fake_rest(t, true, true, |_, _| 1.0);
        assert_eq!((calls, m.runs, rests), (31, 30, vec![150.0]));
        // No rest configured: the warm-up and its confirming run, whatever came before.
        let no_rest = TimingConfig { rest_ms: None, ..t };
        let (m, calls, rests) = fake_rest(no_rest, true, true, run);
        assert_eq!((calls, m.min_ms, rests.len()), (2, 140.0, 0));
    }
}
