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
mod error;
mod info;
mod timing;

use std::fmt;

pub use cpu::CpuBackend;
pub use cuda::CudaBackend;
pub use error::BenchError;
pub use info::{BackendInfo, BackendKind};
pub use timing::{BenchCalls, Measurement, TimingConfig};

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
