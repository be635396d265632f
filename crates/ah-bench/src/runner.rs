//! The [`BenchmarkRunner`] trait: one optimization's inputs, features, choices and benchmarks.
//!
//! A runner is PyTorch's `BenchmarkRunner` (`create_input` / `run_benchmark`) made explicit:
//! it draws an input from a seeded RNG, builds the decision [`Context`] exactly as PyTorch's
//! call site does, says whether the device precondition holds, lists the choices for that input
//! and measures each choice through a [`Backend`]. The collection loop
//! (`ah-collect`'s `collect`) does everything else: logging, resume, sharding; how many
//! repetitions an input gets is [`Repetitions`]'s rule, applied by [`DynRunner::measure`].
//!
//! Runners are registered in [`crate::runners::registry`]; the object-safe [`DynRunner`] is
//! implemented for every runner, so the registry holds `Box<dyn DynRunner>`.

use std::fmt::Debug;

use ah_core::{Context, DeviceIdentity};
pub use ah_log::Repetitions;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::backend::{Backend, BackendKind, BenchError, Measurement, TimingConfig};

/// The RNG every runner draws its inputs from: one independent stream per sample index, so
/// sample `i` is the same whatever shard, device or resume point produced it.
pub type SampleRng = ChaCha8Rng;

/// The RNG of sample `index` of a collection seeded with `seed`: one ChaCha8 stream per
/// sample, so a sample's input does not depend on which other samples are drawn.
pub fn sample_rng(seed: u64, index: u64) -> SampleRng {
    let mut rng = SampleRng::seed_from_u64(seed);
    rng.set_stream(index);
    rng
}

/// What a runner's logged feedback is, as the provenance sidecar records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feedback {
    /// Timed through the [`Backend`]'s protocol: the minimum over the timed calls, their median
    /// in the log's medians sidecar.
    Timed,
    /// One number per choice that the runner reports from elsewhere (Inductor's own benchmark
    /// while it autotunes): `label` says what it is and `method` how it was measured. Such a
    /// log gets no medians sidecar, which would copy it byte for byte.
    Reported {
        /// What the feedback is (the provenance's `label`).
        label: &'static str,
        /// How it was measured (the provenance's `timing_method`).
        method: &'static str,
    },
}

/// What a runner may know about the target when it draws an input (memory limits, scale).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// Which backend will run the input.
    pub kind: BackendKind,
    /// Total memory of the device in bytes (PyTorch's `fits_in_memory` uses a quarter of it).
    pub total_memory: u64,
    /// The device identity logged in the metadata and used by preconditions.
    pub identity: DeviceIdentity,
}

/// One optimization's data collection.
///
/// Required: [`name`](Self::name), [`create_input`](Self::create_input),
/// [`context`](Self::context), [`prepare`](Self::prepare) and [`run`](Self::run). Choices
/// default to the static list [`choices`](Self::choices); a runner whose choices depend on
/// the input (e.g. cuBLASLt algorithms found per shape) overrides
/// [`input_choices`](Self::input_choices).
pub trait BenchmarkRunner: Send + Sync + 'static {
    /// A drawn input (shapes, dtypes, layouts): cheap to clone, no device memory.
    type Input: Clone + Debug + Send;
    /// Per-input device state (buffers, plans), created once and reused by every choice and
    /// repetition of that input.
    type Prepared;

    /// The optimization name, as in the log's metadata (`pad_mm`).
    fn name(&self) -> &'static str;

    /// One line for `--list`.
    fn description(&self) -> &'static str;

    /// The choices for `--list`; for input-dependent choices a representative or empty list.
    fn choices(&self) -> Vec<String>;

    /// Whether the runner can measure on this backend kind.
    fn supports(&self, kind: BackendKind) -> bool;

    /// Draws one input. Must depend only on `rng` and `target`.
    fn create_input(&self, rng: &mut SampleRng, target: &Target) -> Self::Input;

    /// The input distribution when the runner has a choice of them (pad_mm's `--shapes`):
    /// recorded in the provenance sidecar, and resuming a log drawn from another is refused.
    fn input_distribution(&self) -> Option<InputDistribution> {
        None
    }

    /// The logged features of an input, in PyTorch's order, kinds and spelling.
    fn context(&self, input: &Self::Input) -> Context;

    /// PyTorch's precondition: inputs for which it is false are not logged (the collection
    /// loop draws again).
    fn precondition(&self, _device: DeviceIdentity, _input: &Self::Input) -> bool {
        true
    }

    /// Allocates and fills the input's buffers on the backend.
    fn prepare(
        &self,
        input: &Self::Input,
        backend: &mut Backend,
    ) -> Result<Self::Prepared, BenchError>;

    /// The choices to measure for this input, in logging order.
    fn input_choices(
        &self,
        _input: &Self::Input,
        _prepared: &mut Self::Prepared,
        _backend: &mut Backend,
    ) -> Result<Vec<String>, BenchError> {
        Ok(self.choices())
    }

    /// Measures one choice once (one repetition). `warmup` is true for the first repetition of
    /// each choice. An error is logged as `inf` and the collection goes on.
    fn run(
        &self,
        input: &Self::Input,
        prepared: &mut Self::Prepared,
        choice: &str,
        warmup: bool,
        backend: &mut Backend,
    ) -> Result<Measurement, BenchError>;

    /// Whether the runner can measure at all on this backend kind, checked once before a
    /// collection starts (e.g. the Python and PyTorch it drives are there); the error says
    /// what is missing and how to get it.
    fn ready(&self, _kind: BackendKind) -> Result<(), String> {
        Ok(())
    }

    /// The repetitions this runner's inputs always get, when a repetition is not a benchmark
    /// the runner can repeat (Inductor's autotuning of one compile): `--num-reps` defaults to
    /// it and any other value is refused. `None`: any number.
    fn fixed_reps(&self) -> Option<usize> {
        None
    }

    /// What the logged feedback is: [`Feedback::Timed`] unless the runner reports numbers it
    /// did not time through the backend.
    fn feedback(&self) -> Feedback {
        Feedback::Timed
    }

    /// What the runner measured of an input beyond the log's rows (compile-time costs,
    /// compiled truth, ...): one JSON object appended to the log's extras sidecar
    /// (`FILE.extras.jsonl`, `ah_collect::collect`) before the input's rows. `None`: nothing.
    fn extras(
        &self,
        _input: &Self::Input,
        _prepared: &Self::Prepared,
    ) -> Option<serde_json::Value> {
        None
    }

    /// Why a log whose extras sidecar ends with `last_extras` (its last whole line, from
    /// [`Self::extras`]) must not be resumed by this runner as it is set up now, or `None`:
    /// for a setting that changes what a measurement means and is recorded only there (e.g.
    /// `inductor_mm`'s `AH_INDUCTOR_PTXAS`), so that one log never mixes two kinds.
    fn resume_conflict(&self, _last_extras: &serde_json::Value) -> Option<String> {
        None
    }
}

/// A runner's choice of input distribution (see [`BenchmarkRunner::input_distribution`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputDistribution {
    /// Its name (pad_mm: `pytorch`, `real` or `mix`).
    pub shapes: &'static str,
    /// sha256 of the catalogue it draws from, if any.
    pub catalogue_sha256: Option<String>,
    /// Version of what its draws and their timing mean; a log is resumed only with the same
    /// version (absent from a provenance sidecar: 1).
    pub version: u64,
}

/// A measured input: its features and, per repetition and choice, the measurement
/// (`Err` when the choice failed).
#[derive(Debug)]
pub struct MeasuredInput {
    /// The logged features.
    pub context: Context,
    /// Human-readable input description (for messages).
    pub description: String,
    /// Choices in logging order.
    pub choices: Vec<String>,
    /// `results[rep][choice]`.
    pub results: Vec<Vec<Result<Measurement, BenchError>>>,
    /// See [`BenchmarkRunner::extras`].
    pub extras: Option<serde_json::Value>,
}

/// Object-safe view of a runner, implemented for every [`BenchmarkRunner`].
pub trait DynRunner: Send + Sync {
    /// See [`BenchmarkRunner::name`].
    fn name(&self) -> &'static str;
    /// See [`BenchmarkRunner::description`].
    fn description(&self) -> &'static str;
    /// See [`BenchmarkRunner::choices`].
    fn choices(&self) -> Vec<String>;
    /// See [`BenchmarkRunner::supports`].
    fn supports(&self, kind: BackendKind) -> bool;
    /// See [`BenchmarkRunner::input_distribution`].
    fn input_distribution(&self) -> Option<InputDistribution>;
    /// See [`BenchmarkRunner::ready`].
    fn ready(&self, kind: BackendKind) -> Result<(), String>;
    /// See [`BenchmarkRunner::fixed_reps`].
    fn fixed_reps(&self) -> Option<usize>;
    /// See [`BenchmarkRunner::feedback`].
    fn feedback(&self) -> Feedback;
    /// See [`BenchmarkRunner::resume_conflict`].
    fn resume_conflict(&self, last_extras: &serde_json::Value) -> Option<String>;
    /// Draws the input of a sample (redrawing until the precondition holds, at most
    /// `max_draws` times) and returns its context and a description; `None` if no draw
    /// satisfied the precondition.
    fn draw(&self, rng: &mut SampleRng, target: &Target, max_draws: usize) -> Option<DrawnInput>;
    /// Measures a drawn input: `reps.max` repetitions of every choice (repetition-major order,
    /// as PyTorch's `--num-reps` logs them), or `reps.long` when the first repetition of every
    /// choice was long ([`first_rep_is_long`]). Fails only when the input cannot be prepared
    /// at all, in which case every choice is `inf` `reps.max` times.
    fn measure(
        &self,
        drawn: &DrawnInput,
        reps: Repetitions,
        backend: &mut Backend,
    ) -> MeasuredInput;
}

/// A drawn input, type-erased.
pub struct DrawnInput {
    /// The logged features.
    pub context: Context,
    /// Human-readable description.
    pub description: String,
    input: Box<dyn std::any::Any + Send>,
}

impl Debug for DrawnInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DrawnInput")
            .field("description", &self.description)
            .finish()
    }
}

impl<R: BenchmarkRunner> DynRunner for R {
    fn name(&self) -> &'static str {
        BenchmarkRunner::name(self)
    }
    fn description(&self) -> &'static str {
        BenchmarkRunner::description(self)
    }
    fn choices(&self) -> Vec<String> {
        BenchmarkRunner::choices(self)
    }
    fn supports(&self, kind: BackendKind) -> bool {
        BenchmarkRunner::supports(self, kind)
    }
    fn input_distribution(&self) -> Option<InputDistribution> {
        BenchmarkRunner::input_distribution(self)
    }
    fn ready(&self, kind: BackendKind) -> Result<(), String> {
        BenchmarkRunner::ready(self, kind)
    }
    fn fixed_reps(&self) -> Option<usize> {
        BenchmarkRunner::fixed_reps(self)
    }
    fn feedback(&self) -> Feedback {
        BenchmarkRunner::feedback(self)
    }
    fn resume_conflict(&self, last_extras: &serde_json::Value) -> Option<String> {
        BenchmarkRunner::resume_conflict(self, last_extras)
    }

    fn draw(&self, rng: &mut SampleRng, target: &Target, max_draws: usize) -> Option<DrawnInput> {
        for _ in 0..max_draws.max(1) {
            let input = self.create_input(rng, target);
            if self.precondition(target.identity, &input) {
                return Some(DrawnInput {
                    context: self.context(&input),
                    description: format!("{input:?}"),
                    input: Box::new(input),
                });
            }
        }
        None
    }

    fn measure(
        &self,
        drawn: &DrawnInput,
        reps: Repetitions,
        backend: &mut Backend,
    ) -> MeasuredInput {
        let input = drawn
            .input
            .downcast_ref::<R::Input>()
            .expect("a DrawnInput is measured by the runner that drew it");
        let static_choices = BenchmarkRunner::choices(self);
        let fail_all = |choices: Vec<String>, e: BenchError| MeasuredInput {
            context: drawn.context.clone(),
            description: drawn.description.clone(),
            results: (0..reps.max)
                .map(|_| choices.iter().map(|_| Err(e.clone())).collect())
                .collect(),
            choices,
            extras: None,
        };
        let mut prepared = match self.prepare(input, backend) {
            Ok(p) => p,
            Err(e) => return fail_all(static_choices, e),
        };
        let choices = match self.input_choices(input, &mut prepared, backend) {
            Ok(c) => c,
            Err(e) => return fail_all(static_choices, e),
        };
        let mut results: Vec<Vec<_>> = Vec::with_capacity(reps.max);
        for rep in 0..reps.max {
            if rep == reps.long && first_rep_is_long(&results[0], backend.timing()) {
                break;
            }
            let row = choices
                .iter()
                .map(|c| self.run(input, &mut prepared, c, rep == 0, backend))
                .collect();
            results.push(row);
        }
        MeasuredInput {
            context: drawn.context.clone(),
            description: drawn.description.clone(),
            extras: self.extras(input, &prepared),
            choices,
            results,
        }
    }
}

/// The rule of [`Repetitions::long`]: every choice of an input's first repetition measured
/// (no failure) with a minimum of at least the protocol's [`TimingConfig::long_run_ms`]. Such
/// kernels are timed to about 0.5 % by one run, and on six H100 logs the first repetition
/// alone picked the winner of both on 2548 of 2549 inputs whose choices differ by over 10 %
/// (docs/collection.md). Without a long rule (`--long-run-ms 0`, the CPU) nothing is long.
pub fn first_rep_is_long(first: &[Result<Measurement, BenchError>], timing: &TimingConfig) -> bool {
    !first.is_empty()
        && first
            .iter()
            .all(|r| r.as_ref().is_ok_and(|m| timing.is_long(m.min_ms)))
}
