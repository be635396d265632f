//! Timing on the GPU: [`CudaBackend::bench`] drives [`TimingConfig::measure`] with calls
//! bracketed by CUDA events, each after an L2 flush.
//!
//! [`TimingConfig::measure`]: crate::backend::TimingConfig::measure

use cudarc::driver::sys as drv;

use super::device::CudaBackend;
use super::error::{check, drv_err};
use crate::backend::{BenchCalls, BenchError, Measurement};

/// One GPU benchmark's calls, for [`TimingConfig::measure`]: each timed call brackets `f`
/// with its own pair of events.
///
/// [`TimingConfig::measure`]: crate::backend::TimingConfig::measure
struct CudaCalls<'a, 'f> {
    backend: &'a mut CudaBackend,
    f: &'f mut dyn FnMut(&mut CudaBackend) -> Result<(), BenchError>,
    /// Events used so far.
    used: usize,
}

impl BenchCalls for CudaCalls<'_, '_> {
    fn timed(&mut self, n: usize) -> Result<Vec<f64>, BenchError> {
        let runs = self.backend.timed_runs(self.used, n, self.f)?;
        self.used += runs.len();
        Ok(runs)
    }

    fn settle(&mut self) -> Result<(), BenchError> {
        let warmups = self.backend.timing.memory_warmup;
        (0..warmups).try_for_each(|_| self.backend.flush_l2())
    }

    fn rest(&mut self, ms: f64) -> Result<(), BenchError> {
        self.backend.synchronize()?;
        std::thread::sleep(std::time::Duration::from_secs_f64(ms / 1e3));
        Ok(())
    }
}

impl CudaBackend {
    fn flush_l2(&mut self) -> Result<(), BenchError> {
        // PyTorch: `buffer.zero_()` on an int32 buffer of the L2 size.
        let n = self.flush.bytes / 4;
        // SAFETY: the flush buffer is owned by the backend.
        check(unsafe { drv::cuMemsetD32Async(self.flush.ptr, 0, n, self.stream.cu_stream()) })
    }

    /// Times `f` (which enqueues work on [`Self::stream`]) the way PyTorch's
    /// `InductorBenchmarker` does and returns the minimum and median of all timed calls.
    pub fn bench(
        &mut self,
        warmup: bool,
        f: &mut dyn FnMut(&mut CudaBackend) -> Result<(), BenchError>,
    ) -> Result<Measurement, BenchError> {
        let timing = self.timing;
        let mut after_long = self.after_long;
        let mut calls = CudaCalls {
            backend: self,
            f,
            used: 0,
        };
        let m = timing.measure(warmup, &mut after_long, &mut calls);
        self.after_long = after_long;
        m
    }

    fn timed_runs(
        &mut self,
        first_event: usize,
        n: usize,
        f: &mut dyn FnMut(&mut CudaBackend) -> Result<(), BenchError>,
    ) -> Result<Vec<f64>, BenchError> {
        let n = n.min(self.events.len() - first_event);
        for i in 0..n {
            self.flush_l2()?;
            self.events[first_event + i]
                .0
                .record(&self.stream)
                .map_err(drv_err)?;
            f(self)?;
            self.events[first_event + i]
                .1
                .record(&self.stream)
                .map_err(drv_err)?;
        }
        self.synchronize()?;
        let mut out = Vec::with_capacity(n);
        for (start, end) in &self.events[first_event..first_event + n] {
            out.push(f64::from(start.elapsed_ms(end).map_err(drv_err)?));
        }
        Ok(out)
    }
}
