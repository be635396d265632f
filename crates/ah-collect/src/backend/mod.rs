//! Where benchmarks run: the CUDA backend (cudarc, loaded at run time) or the CPU backend.
//!
//! Both time a closure the same way (PyTorch's `InductorBenchmarker.benchmark_gpu`, spec
//! section 9): one warm-up call, an L2 flush before every timed call, 5 estimation runs, then
//! `clamp(budget / estimate, 1, max_runs)` timed runs; the reported value is the minimum of all
//! timed calls (what PyTorch logs), the median is kept too.
//!
//! One exception, [`TimingConfig::long_run_ms`]: a call whose warm-up (or, without a warm-up,
//! first timed run) takes at least that long is measured by that run alone. PyTorch's protocol
//! spends at least 6 runs per benchmark so that short kernels are timed well above the
//! timer's resolution and launch noise; a kernel of tens of milliseconds is timed to about
//! 0.5 % by one run, and its first call costs what later calls cost (one-time work is
//! microseconds): the spread measured on the H100 is in docs/collection.md.

pub mod cpu;
pub mod cuda;

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
    };

    /// The collector's default on the GPU: PyTorch's protocol, except that a call whose first
    /// timed run takes 20 ms or more is measured by that run alone (see the module docs).
    pub const ADAPTIVE: TimingConfig = TimingConfig {
        long_run_ms: Some(20.0),
        ..Self::PYTORCH
    };

    /// True when a first run of `first_ms` ends the benchmark (see [`Self::long_run_ms`]).
    pub fn is_long(&self, first_ms: f64) -> bool {
        self.long_run_ms.is_some_and(|t| first_ms >= t)
    }

    /// Times one benchmark with this protocol. `timed(n)` makes `n` timed runs, each after an
    /// L2 flush, and returns their durations in ms; `settle` runs between the estimation and
    /// the timed runs (PyTorch's memory warm-up).
    pub fn measure(
        &self,
        warmup: bool,
        timed: &mut dyn FnMut(usize) -> Result<Vec<f64>, BenchError>,
        settle: &mut dyn FnMut() -> Result<(), BenchError>,
    ) -> Result<Measurement, BenchError> {
        let no_runs = || BenchError::Other("no timed runs".into());
        if warmup {
            let mut first = timed(1)?;
            let warmup_ms = *first.first().ok_or_else(no_runs)?;
            if self.is_long(warmup_ms) {
                return Measurement::from_samples(&mut first).ok_or_else(no_runs);
            }
            let mut m = self.measure(false, timed, settle)?;
            m.busy_ms += warmup_ms;
            return Ok(m);
        }
        let mut samples = timed(1)?;
        if !self.is_long(*samples.first().ok_or_else(no_runs)?) {
            let est_runs = self.estimation_runs.max(1) as usize;
            samples.extend(timed(est_runs - 1)?);
            let est = samples.iter().copied().fold(f64::INFINITY, f64::min);
            settle()?;
            samples.extend(timed(self.runs_for(est) as usize)?);
        }
        Measurement::from_samples(&mut samples).ok_or_else(no_runs)
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
    pub fn fingerprint(&self) -> ah_core::DeviceFingerprint {
        let name = match self.kind {
            BackendKind::Cuda => self.device_name.clone(),
            BackendKind::Cpu => "non_cuda_device".to_string(),
        };
        let mut f = ah_core::DeviceFingerprint::new(name, self.identity);
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

    /// Runs `measure` over fake calls that take `ms(i)` for the i-th call; returns the
    /// measurement and the number of calls made.
    fn fake(t: TimingConfig, warmup: bool, ms: impl Fn(usize) -> f64) -> (Measurement, usize) {
        let mut calls = 0;
        let m = t
            .measure(
                warmup,
                &mut |n| {
                    let out = (calls..calls + n).map(&ms).collect();
                    calls += n;
                    Ok(out)
                },
                &mut || Ok(()),
            )
            .unwrap();
        (m, calls)
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
        let t = TimingConfig::ADAPTIVE;
        // Warm-up of 300 ms: that call is the measurement.
        let (m, calls) = fake(t, true, |i| 300.0 + i as f64);
        assert_eq!((calls, m.runs, m.min_ms, m.busy_ms), (1, 1, 300.0, 300.0));
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
}
