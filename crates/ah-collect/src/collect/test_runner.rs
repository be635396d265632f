//! A test runner over `u64` inputs (context `x`, choices `a` and `b`) whose measurement is a
//! function of the input and the choice: the collection tests' one fake runner.

use crate::backend::{Backend, BackendKind, BenchError};
use crate::runner::{SampleRng, Target};
use crate::Measurement;

/// A measurement as a plain function (a runner that needs no state).
pub(super) type MeasureFn = fn(u64, &str) -> Result<Measurement, BenchError>;

/// Draws `x` in `0..1_000_000` and measures choice `c` of input `x` as `measure(x, c)`.
pub(super) struct FnRunner<F> {
    /// The runner's name (the log's metadata `name`).
    pub(super) name: &'static str,
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
