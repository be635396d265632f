//! A test runner over `u64` inputs (context `x`, choices `a` and `b`) whose measurement is a
//! function of the input and the choice: the collection tests' one fake runner.

use std::path::Path;

use super::{CollectConfig, Devices, Shard};
use crate::backend::{Backend, BackendKind, BenchError};
use crate::runner::{Feedback, SampleRng, Target};
use crate::Measurement;
use crate::TimingConfig;

/// A measurement as a plain function (a runner that needs no state).
pub(super) type MeasureFn = fn(u64, &str) -> Result<Measurement, BenchError>;

/// Draws `x` in `0..1_000_000` and measures choice `c` of input `x` as `measure(x, c)`.
pub(super) struct FnRunner<F> {
    /// The runner's name (the log's metadata `name`).
    pub(super) name: &'static str,
    /// What its feedback is (`Timed`, or `Reported` as Inductor's runner reports its own).
    pub(super) feedback: Feedback,
    pub(super) measure: F,
}

impl<F> crate::BenchmarkRunner for FnRunner<F>
where
    F: Fn(u64, &str) -> Result<Measurement, BenchError> + Send + Sync + 'static,
{
    type Input = u64;
    type Prepared = ();
    fn name(&self) -> &'static str {
        self.name
    }
    fn description(&self) -> &'static str {
        "test runner"
    }
    fn choices(&self) -> Vec<String> {
        vec!["a".into(), "b".into()]
    }
    fn supports(&self, _kind: BackendKind) -> bool {
        true
    }
    fn feedback(&self) -> Feedback {
        self.feedback
    }
    fn create_input(&self, rng: &mut SampleRng, _target: &Target) -> u64 {
        rand::Rng::random_range(rng, 0..1_000_000)
    }
    fn context(&self, input: &u64) -> ah_core::Context {
        let mut c = ah_core::Context::new();
        c.add("x", *input as i64);
        c
    }
    fn prepare(&self, _i: &u64, _b: &mut Backend) -> Result<(), BenchError> {
        Ok(())
    }
    /// An extras line `{"refuse": WHY}` (written by a test: this runner writes none) is a log
    /// it must not resume.
    fn resume_conflict(&self, last_extras: &serde_json::Value) -> Option<String> {
        last_extras["refuse"].as_str().map(str::to_string)
    }
    fn run(
        &self,
        input: &u64,
        _p: &mut (),
        choice: &str,
        _warmup: bool,
        _b: &mut Backend,
    ) -> Result<Measurement, BenchError> {
        (self.measure)(*input, choice)
    }
}

/// The collection tests' base configuration: `n` samples into `out` on the CPU at `--num-reps
/// 2`, no long rule, seed 7, with the fastest CPU timing (one run, no budget, no warm-up).
/// Each test module changes what it tests (`CollectConfig { seed: 11, ..test_config(out, n) }`).
pub(super) fn test_config(out: &Path, n: u64) -> CollectConfig {
    CollectConfig {
        out: out.to_path_buf(),
        num_samples: n,
        num_reps: 2,
        long_reps: 1,
        seed: 7,
        shard: Shard::ALL,
        devices: Devices::Cpu,
        gpu_timing: TimingConfig::PYTORCH,
        cpu_timing: Some(TimingConfig {
            estimation_runs: 1,
            max_runs: 1,
            budget_ms: 0.0,
            memory_warmup: 0,
            long_run_ms: None,
            rest_ms: None,
        }),
        max_draws: 100,
        distinct: false,
        exclude: Vec::new(),
        command_line: "test".into(),
        stop: Default::default(),
    }
}
