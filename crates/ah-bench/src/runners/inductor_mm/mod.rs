//! `inductor_mm`: which GEMM kernels Inductor's max-autotune should consider, measured by
//! Inductor itself.
//!
//! Each input is one GEMM (mm, addmm with bias, or bmm; [`shapes`] says which) compiled by a
//! Python worker ([`worker`]) under `max_autotune_gemm=True` with caches disabled. The log gets
//! one row per choice Inductor benchmarked, named as `python/ah_inductor/naming.py` names them
//! (`extern_mm`, `triton_mm_BLOCK-M=64_..._numwarps=4`, ...), with Inductor's benchmark time as
//! feedback: PyTorch's `mm` log format plus the op and batch. The extras sidecar
//! (`FILE.extras.jsonl`) gets what the log cannot hold: each choice's compile-time cost
//! (code generation, precompilation, benchmarking), the compile time with and without
//! max-autotune, and compiled truth of Inductor's pick and of cuBLAS (CUDA-graph replay,
//! alternated, median). One compile is one repetition: `--num-reps` is 1.
//!
//! Needs PyTorch (2.8 or newer) with Triton and a CUDA GPU in `python3` (or `$AH_PYTHON`);
//! `--devices 0,1,...` runs one worker per GPU.

mod dims;
pub mod gemm;
pub mod shapes;
pub mod worker;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ah_core::Context;
use serde_json::{json, Value};

use crate::backend::{Backend, BackendKind, BenchError, Measurement};
use crate::catalogue::Catalogue;
use crate::dtype::DType;
use crate::runner::{BenchmarkRunner, Feedback, InputDistribution, SampleRng, Target};
use crate::runners::add_mm_layout_features;
pub use gemm::{Gemm, Op, Source};
pub use shapes::Mixture;
pub use worker::{Engine, Ptxas, Worker, WorkerError};

/// The runner's name.
pub const NAME: &str = "inductor_mm";

/// The `inductor_mm` runner (see the module documentation).
pub struct InductorMmRunner {
    catalogue: Arc<Catalogue>,
    mixture: Mixture,
    engine: Engine,
    /// How its workers key Triton's cache ([`Ptxas::from_env`] unless set; an invalid
    /// `AH_INDUCTOR_PTXAS` is reported by `ready`).
    ptxas: Result<Ptxas, String>,
    /// One worker per device ordinal, started on the device's first input.
    workers: Mutex<HashMap<usize, Arc<Mutex<Option<Worker>>>>>,
}

impl Default for InductorMmRunner {
    fn default() -> Self {
        Self::new(Engine::Torch)
    }
}

impl InductorMmRunner {
    /// A runner whose workers run `engine`, drawing from the built-in catalogue.
    pub fn new(engine: Engine) -> Self {
        let catalogue = Catalogue::builtin().expect("the built-in catalogue is valid (tested)");
        InductorMmRunner {
            catalogue: Arc::new(catalogue),
            mixture: Mixture::All,
            engine,
            ptxas: Ptxas::from_env(),
            workers: Mutex::new(HashMap::new()),
        }
    }

    /// The same runner with its workers keying Triton's cache as `ptxas` says.
    pub fn with_ptxas(self, ptxas: Ptxas) -> Self {
        InductorMmRunner {
            ptxas: Ok(ptxas),
            ..self
        }
    }

    /// The same runner drawing real-model GEMMs from `catalogue`.
    pub fn with_catalogue(self, catalogue: Arc<Catalogue>) -> Self {
        InductorMmRunner { catalogue, ..self }
    }

    /// The same runner drawing `mixture`.
    pub fn with_mixture(self, mixture: Mixture) -> Self {
        InductorMmRunner { mixture, ..self }
    }

    fn slot(&self, device: usize) -> Arc<Mutex<Option<Worker>>> {
        let mut map = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(map.entry(device).or_default())
    }

    /// Asks the device's worker (started, or restarted after it died) to measure `gemm`.
    fn ask(&self, device: usize, gemm: &Value) -> Result<Value, BenchError> {
        let slot = self.slot(device);
        let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
        if guard.as_mut().is_some_and(Worker::exited) {
            *guard = None;
        }
        if guard.is_none() {
            let ptxas = self.ptxas.clone().map_err(BenchError::Other)?;
            let w = Worker::spawn(self.engine, ptxas, Some(device))
                .map_err(|e| BenchError::Other(e.to_string()))?;
            *guard = Some(w);
        }
        let w = guard.as_mut().expect("started above");
        let hello = w.hello().clone();
        match w.measure(gemm) {
            Ok(mut answer) => {
                answer["worker"] = hello;
                Ok(answer)
            }
            Err(e @ WorkerError::Failed(_)) => Err(BenchError::Other(e.to_string())),
            Err(e) => {
                *guard = None;
                Err(BenchError::Other(e.to_string()))
            }
        }
    }
}

/// The worker's request for `g`.
pub fn request(g: &Gemm) -> Value {
    json!({
        "op": g.op.name(),
        "batch": g.batch,
        "m": g.m,
        "k": g.k,
        "n": g.n,
        "dtype": match g.dtype {
            DType::BF16 => "bfloat16",
            DType::F16 => "float16",
            DType::F32 => "float32",
        },
        "tf32": g.tf32,
        "trans_a": g.trans_a,
        "trans_b": g.trans_b,
    })
}

/// One benchmarked choice of a worker's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceTime {
    /// The choice's name.
    pub name: String,
    /// Inductor's benchmark time, ms (`None`: the choice failed).
    pub bench_ms: Option<f64>,
    /// Seconds Inductor spent benchmarking it.
    pub bench_s: f64,
}

/// A measured GEMM: the worker's whole answer and its choices.
#[derive(Debug, Clone)]
pub struct Measured {
    answer: Value,
    choices: Vec<ChoiceTime>,
}

/// Reads the choices of a worker's answer.
pub fn choices_of(answer: &Value) -> Result<Vec<ChoiceTime>, BenchError> {
    let bad = |what: &str| BenchError::Other(format!("the worker's answer has {what}"));
    let list = answer["choices"]
        .as_array()
        .ok_or_else(|| bad("no choices"))?;
    let choices: Vec<ChoiceTime> = list
        .iter()
        .map(|c| {
            Ok(ChoiceTime {
                name: c["name"]
                    .as_str()
                    .ok_or_else(|| bad("a choice without a name"))?
                    .to_string(),
                bench_ms: c["bench_ms"]
                    .as_f64()
                    .filter(|t| t.is_finite() && *t >= 0.0),
                bench_s: c["bench_s"].as_f64().unwrap_or(0.0),
            })
        })
        .collect::<Result<_, BenchError>>()?;
    if choices.is_empty() {
        return Err(bad("an empty choice list"));
    }
    let mut names: Vec<&str> = choices.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return Err(bad("two choices of one name"));
    }
    if let Some(c) = choices.iter().find(|c| !valid_choice_name(&c.name)) {
        return Err(bad(&format!(
            "a choice name the log cannot hold: {:?}",
            c.name
        )));
    }
    Ok(choices)
}

/// Names that go unquoted into PyTorch's CSV log: `[A-Za-z0-9_=.-]`, not empty.
pub fn valid_choice_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'=' | b'.' | b'-'))
}

impl BenchmarkRunner for InductorMmRunner {
    type Input = Gemm;
    type Prepared = Measured;

    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "which GEMM kernels Inductor's max-autotune should keep: every choice's benchmark, \
         compile-time cost and compiled truth, measured by Inductor (needs PyTorch)"
    }

    fn choices(&self) -> Vec<String> {
        vec![
            "extern_mm".into(),
            "triton_mm_BLOCK-M=..._numwarps=...".into(),
        ]
    }

    fn supports(&self, kind: BackendKind) -> bool {
        kind == BackendKind::Cuda
    }

    fn ready(&self, kind: BackendKind) -> Result<(), String> {
        self.ptxas.as_ref().map_err(Clone::clone)?;
        if kind != BackendKind::Cuda || self.engine == Engine::Fake {
            return Ok(());
        }
        check_python()
    }

    fn fixed_reps(&self) -> Option<usize> {
        Some(1)
    }

    fn feedback(&self) -> Feedback {
        Feedback::Reported {
            label: "feedback = Inductor's own benchmark of each choice while it autotunes the \
                    GEMM under max_autotune_gemm (select_algorithm's feedback saver), one number \
                    per choice: no medians sidecar",
            method: "Inductor's autotuning benchmark (its benchmarker, in the worker's one \
                     compile with caches disabled); compiled truth of the pick and of cuBLAS in \
                     the extras sidecar: CUDA-graph replay after warming the clocks, alternated, \
                     median",
        }
    }

    fn create_input(&self, rng: &mut SampleRng, target: &Target) -> Gemm {
        shapes::draw_from(self.mixture, rng, &self.catalogue, target)
    }

    fn input_distribution(&self) -> Option<InputDistribution> {
        Some(InputDistribution {
            shapes: self.mixture.name(),
            catalogue_sha256: Some(self.catalogue.sha256.clone()),
            version: 1,
        })
    }

    fn context(&self, g: &Gemm) -> Context {
        context(g)
    }

    fn prepare(&self, g: &Gemm, backend: &mut Backend) -> Result<Measured, BenchError> {
        let answer = self.ask(backend.info().ordinal, &request(g))?;
        let choices = choices_of(&answer)?;
        Ok(Measured { answer, choices })
    }

    fn input_choices(
        &self,
        _g: &Gemm,
        prepared: &mut Measured,
        _backend: &mut Backend,
    ) -> Result<Vec<String>, BenchError> {
        Ok(prepared.choices.iter().map(|c| c.name.clone()).collect())
    }

    fn run(
        &self,
        _g: &Gemm,
        prepared: &mut Measured,
        choice: &str,
        _warmup: bool,
        _backend: &mut Backend,
    ) -> Result<Measurement, BenchError> {
        let c = prepared
            .choices
            .iter()
            .find(|c| c.name == choice)
            .ok_or_else(|| BenchError::Other(format!("no choice {choice}")))?;
        let ms = c
            .bench_ms
            .ok_or_else(|| BenchError::Other(format!("Inductor's benchmark of {choice} failed")))?;
        Ok(Measurement {
            min_ms: ms,
            median_ms: ms,
            runs: 1,
            busy_ms: c.bench_s * 1e3,
        })
    }

    /// A log measured with the other [`Ptxas`] mode (an extras line without `ah_ptxas` was
    /// measured as PyTorch leaves it): its compile-time prices are of another kind.
    fn resume_conflict(&self, last_extras: &Value) -> Option<String> {
        let now = self.ptxas.as_ref().ok()?.name();
        let before = last_extras["worker"]["settings"]["ah_ptxas"]
            .as_str()
            .unwrap_or(Ptxas::AsIs.name());
        (before != now).then(|| {
            format!(
                "measured with {var}={before}, and this run would measure with {var}={now}: \
                 compile-time prices of the two kinds do not mix in one log",
                var = Ptxas::VAR
            )
        })
    }

    fn extras(&self, g: &Gemm, prepared: &Measured) -> Option<Value> {
        let mut x = prepared.answer.clone();
        if let Some(obj) = x.as_object_mut() {
            obj.remove("id");
            obj.remove("ok");
            obj.insert("gemm".into(), request(g));
            obj.insert("source".into(), json!(format!("{:?}", g.source)));
        }
        Some(x)
    }
}

/// The logged features: PyTorch's `mm` features (m, k, n, strides, dtypes, contiguity,
/// TF32) with the batch and the op, which PyTorch's `mm` hook does not see but an
/// `InductorChoices` handler does.
pub fn context(g: &Gemm) -> Context {
    let mut c = Context::with_capacity(14);
    c.add("m", g.m)
        .add("k", g.k)
        .add("n", g.n)
        .add("batch", g.batch);
    c.add_categorical("op", g.op.name());
    add_mm_layout_features(
        &mut c,
        (g.m, g.k, g.n),
        (g.trans_a, g.trans_b),
        g.dtype,
        g.tf32,
    );
    c
}

/// Checks that the interpreter has PyTorch with Inductor and Triton and sees a CUDA GPU.
fn check_python() -> Result<(), String> {
    let python = worker::python();
    let probe = "import torch, triton, torch._inductor.choices as c; \
                 assert torch.cuda.is_available(), 'PyTorch sees no CUDA device'; \
                 assert hasattr(c.InductorChoices, 'get_template_configs'), \
                 'this PyTorch has no InductorChoices.get_template_configs (need 2.8 or newer)'";
    let need = format!(
        "runner `{NAME}` drives PyTorch's Inductor through `{}` (set AH_PYTHON to use another \
         interpreter) and needs PyTorch 2.8 or newer with Triton and a CUDA GPU",
        python.to_string_lossy()
    );
    match std::process::Command::new(&python)
        .args(["-c", probe])
        .output()
    {
        Err(e) => Err(format!("{need}: could not run it: {e}")),
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => {
            let err = String::from_utf8_lossy(&out.stderr);
            let last = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            Err(format!("{need}: {}", last.trim()))
        }
    }
}

#[cfg(test)]
mod tests;
