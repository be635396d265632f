//! The CPU backend: wall-clock timing of host code, with the same warm-up / estimation /
//! timed-runs structure as the CUDA backend (no L2 flush: CPU runner inputs are larger than
//! the last-level cache slice a single GEMM reuses, and a flush would dominate small inputs).
//!
//! GEMMs use `matrixmultiply` (threaded; `MATMUL_NUM_THREADS` caps the threads), chosen over
//! the `gemm` crate by measured speed on unaligned shapes (docs/collection.md).

use std::collections::BTreeMap;
use std::time::Instant;

use ah_core::DeviceIdentity;

use super::{BackendInfo, BackendKind, BenchCalls, BenchError, Measurement, TimingConfig};

/// The CPU backend.
#[derive(Debug)]
pub struct CpuBackend {
    info: BackendInfo,
    timing: TimingConfig,
}

impl CpuBackend {
    /// Timing for CPU runners: 3 estimation runs, then up to 20 runs within 10 ms.
    pub const TIMING: TimingConfig = TimingConfig {
        estimation_runs: 3,
        max_runs: 20,
        budget_ms: 10.0,
        memory_warmup: 0,
        long_run_ms: None,
        rest_ms: None,
    };

    /// A CPU backend with the default CPU timing.
    pub fn new() -> Self {
        Self::with_timing(Self::TIMING)
    }

    /// A CPU backend with the given timing.
    pub fn with_timing(timing: TimingConfig) -> Self {
        let mut versions = BTreeMap::new();
        versions.insert("cpu_gemm".to_string(), "matrixmultiply 0.3".to_string());
        if let Ok(t) = std::env::var("MATMUL_NUM_THREADS") {
            versions.insert("MATMUL_NUM_THREADS".to_string(), t);
        }
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        versions.insert("available_parallelism".to_string(), threads.to_string());
        let info = BackendInfo {
            kind: BackendKind::Cpu,
            device_name: cpu_model_name(),
            ordinal: 0,
            capability: (0, 0),
            identity: DeviceIdentity::NONE,
            total_memory: total_memory_bytes(),
            l2_bytes: 0,
            versions,
        };
        Self { info, timing }
    }

    /// Device facts.
    pub fn info(&self) -> &BackendInfo {
        &self.info
    }

    /// How this backend times a benchmark.
    pub fn timing(&self) -> &TimingConfig {
        &self.timing
    }

    /// Times `f`: optional warm-up call, estimation runs, then timed runs within the budget.
    pub fn bench(
        &mut self,
        warmup: bool,
        f: &mut dyn FnMut() -> Result<(), BenchError>,
    ) -> Result<Measurement, BenchError> {
        let mut after_long = false;
        self.timing
            .measure(warmup, &mut after_long, &mut CpuCalls(f))
    }
}

/// One CPU benchmark's calls: wall-clock timed, nothing to settle, no rest (a CPU's clocks
/// are not what [`TimingConfig::rest_ms`] is about).
struct CpuCalls<'a>(&'a mut dyn FnMut() -> Result<(), BenchError>);

impl BenchCalls for CpuCalls<'_> {
    fn timed(&mut self, n: usize) -> Result<Vec<f64>, BenchError> {
        (0..n)
            .map(|_| {
                let t = Instant::now();
                (self.0)().map(|()| t.elapsed().as_secs_f64() * 1e3)
            })
            .collect()
    }
    fn settle(&mut self) -> Result<(), BenchError> {
        Ok(())
    }
    fn rest(&mut self, _ms: f64) -> Result<(), BenchError> {
        Ok(())
    }
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self::new()
    }
}

/// `C[m, n] = A @ B` in f32 with arbitrary element strides (row stride, column stride) for A
/// and B; C is row-major with `ldc` columns.
#[allow(clippy::too_many_arguments)]
pub fn sgemm(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    a_strides: (usize, usize),
    b: &[f32],
    b_strides: (usize, usize),
    c: &mut [f32],
    ldc: usize,
) {
    let span = |rows: usize, cols: usize, (s0, s1): (usize, usize)| {
        if rows == 0 || cols == 0 {
            0
        } else {
            (rows - 1) * s0 + (cols - 1) * s1 + 1
        }
    };
    assert!(a.len() >= span(m, k, a_strides), "A too small");
    assert!(b.len() >= span(k, n, b_strides), "B too small");
    assert!(c.len() >= span(m, n, (ldc, 1)), "C too small");
    // SAFETY: the asserts above show every addressed element lies inside the slices.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            a_strides.0 as isize,
            a_strides.1 as isize,
            b.as_ptr(),
            b_strides.0 as isize,
            b_strides.1 as isize,
            0.0,
            c.as_mut_ptr(),
            ldc as isize,
            1,
        );
    }
}

fn cpu_model_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

fn total_memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .and_then(|kb| kb.parse::<u64>().ok())
                        .map(|kb| kb * 1024)
                })
        })
        .unwrap_or(8 << 30)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sgemm_handles_transposed_operands() {
        // A = [[1, 2, 3], [4, 5, 6]] (2x3), B = [[1, 0], [0, 1], [1, 1]] (3x2)
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let a_t = [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]; // stored as A^T row-major: strides (1, 2)
        let b = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let want = [4.0, 5.0, 10.0, 11.0];
        let mut c = [0.0f32; 4];
        sgemm(2, 3, 2, &a, (3, 1), &b, (2, 1), &mut c, 2);
        assert_eq!(c, want);
        let mut c = [0.0f32; 4];
        sgemm(2, 3, 2, &a_t, (1, 2), &b, (2, 1), &mut c, 2);
        assert_eq!(c, want);
    }

    #[test]
    fn bench_reports_min_and_median() {
        let mut cpu = CpuBackend::new();
        let mut calls = 0;
        let m = cpu
            .bench(true, &mut || {
                calls += 1;
                std::hint::black_box((0..1000).sum::<u64>());
                Ok(())
            })
            .unwrap();
        assert!(m.min_ms <= m.median_ms);
        assert_eq!(calls as u32, 1 + m.runs);
        let err = cpu
            .bench(false, &mut || Err(BenchError::Other("boom".into())))
            .unwrap_err();
        assert_eq!(err, BenchError::Other("boom".into()));
        assert_eq!(cpu.info().identity, DeviceIdentity::NONE);
    }
}
