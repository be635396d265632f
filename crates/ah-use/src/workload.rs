//! The use step: draw a fresh workload, decide each input through the runtime with the
//! generated heuristics, and account for the time of every pick.
//!
//! For each input the runner measures every choice once (that measurement is both the
//! accounting — the time of the pick, of always-default and of the oracle — and the feedback
//! the runtime benchmarks with when the heuristic is unsure). The runtime then decides:
//! the heuristic answers, or it is unsure and the pick comes from the guarded pick cache, or
//! it autotunes (benchmarks the choices) and caches the pick.

use std::path::PathBuf;

use ah_bench::backend::BackendInfo;
use ah_bench::runner::sample_rng;
use ah_bench::runner::{DrawnInput, DynRunner, MeasuredInput, Repetitions, Target};
use ah_bench::Backend;
use ah_core::ops::builtin_operations;
use ah_core::{HeuristicMetadata, Registry, UnsureReason};
use ah_eval::score::{PickSummary, PickTimes};
use ah_runtime::cache::{CacheError, DeviceFingerprint, PickCache};
use ah_runtime::runtime::{AutoHeuristic, Config, DeviceInfo, PickSource};
use serde::Serialize;

/// What to run.
#[derive(Debug, Clone)]
pub struct WorkloadConfig {
    /// Inputs to draw.
    pub num_samples: u64,
    /// Seed of the workload (use one not used for training).
    pub seed: u64,
    /// Repetitions per choice (the median of the per-repetition minima is the choice's time).
    pub reps: usize,
    /// The choice a program would take without any heuristic (PyTorch's default for the name).
    pub default_choice: String,
    /// The pick cache file (`None`: the runtime's default from its config).
    pub cache: Option<PathBuf>,
    /// Runtime configuration (modes, cache switch).
    pub config: Config,
}

/// One decision of the workload.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionRecord {
    /// Sample index.
    pub index: u64,
    /// The input, in words.
    pub input: String,
    /// `heuristic`, `cache`, `autotuned` or `fallback`.
    pub source: &'static str,
    /// Why the heuristic did not answer, when it did not.
    pub unsure: Option<UnsureReason>,
    /// The pick.
    pub choice: String,
    /// Time of the pick, ms.
    pub time_ms: f64,
    /// Time of the default choice, ms.
    pub default_ms: f64,
    /// Time of the fastest choice, ms.
    pub best_ms: f64,
    /// The fastest choice.
    pub best: String,
}

/// Totals of a workload.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WorkloadSummary {
    /// Inputs decided.
    pub inputs: usize,
    /// Inputs skipped: no draw met the precondition, or every choice failed.
    pub skipped: usize,
    /// Why inputs were skipped, each reason once (the first input it happened to is named).
    pub skip_reasons: Vec<String>,
    /// Decided by the heuristic.
    pub heuristic: usize,
    /// Unsure, answered from the pick cache.
    pub cache_hits: usize,
    /// Unsure, benchmarked now.
    pub autotuned: usize,
    /// Unsure with nothing to benchmark: the fallback.
    pub fallback: usize,
    /// Heuristic decisions that picked the fastest choice.
    pub heuristic_correct: usize,
    /// Sum of the picks' times, ms.
    pub total_ms: f64,
    /// Sum of the default choice's times, ms.
    pub default_total_ms: f64,
    /// Sum of the fastest choices' times, ms.
    pub oracle_total_ms: f64,
    /// `default_total_ms / total_ms`.
    pub speedup_over_default: f64,
    /// `oracle_total_ms / total_ms` (1.0 = every pick was the fastest): ah-eval's
    /// `total_time_share` (not its `share_of_oracle`, a geometric mean).
    pub total_time_share: f64,
    /// Geometric mean over inputs of `default / pick`.
    pub gmean_speedup_over_default: f64,
    /// Warnings from the runtime (cache problems), deduplicated.
    pub warnings: Vec<String>,
}

impl WorkloadSummary {
    /// Counts a skipped input; its reason is kept unless one of the same kind (the text after
    /// the input's number) is kept already.
    fn skip(&mut self, reason: String) {
        self.skipped += 1;
        // The kind: the words after the input's number, up to the error's own message.
        let kind = |r: &str| {
            let after = r.split_once(": ").map_or(r, |(_, k)| k);
            after.split(" (").next().unwrap_or(after).to_string()
        };
        if !self.skip_reasons.iter().any(|r| kind(r) == kind(&reason)) {
            self.skip_reasons.push(reason);
        }
    }
}

/// Draws of one sample before it counts as skipped (its precondition never held).
const MAX_DRAWS: usize = 1000;

/// The first failed measurement of an input, in words.
fn first_failure(measured: &MeasuredInput) -> String {
    measured
        .results
        .iter()
        .flatten()
        .find_map(|r| r.as_ref().err())
        .map_or_else(|| "no measurement".to_string(), ToString::to_string)
}

/// A workload's result.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadReport {
    /// Optimization name.
    pub name: String,
    /// Device the workload ran on.
    pub device: String,
    /// The heuristic that matched the device, if any.
    pub heuristic: Option<String>,
    /// Every decision.
    pub decisions: Vec<DecisionRecord>,
    /// Totals.
    pub summary: WorkloadSummary,
}

/// Errors of the use step.
#[derive(Debug, thiserror::Error)]
pub enum UseError {
    /// The runner's choices do not include the default.
    #[error("the default choice `{default}` is not one of the runner's choices {choices:?}; pass --default-choice")]
    UnknownDefault {
        /// The default asked for.
        default: String,
        /// The runner's choices.
        choices: Vec<String>,
    },
    /// A core error (log).
    #[error(transparent)]
    Core(#[from] ah_core::Error),
    /// The pick cache file cannot be used (not a pick cache, a newer version, unreadable).
    #[error(transparent)]
    Cache(#[from] CacheError),
}

/// The pick cache's guard for a backend: its fingerprint (driver and library versions, no CPU
/// count) under the device's own name (the CPU model on the CPU, so that picks made on one
/// CPU model are not reused on another).
pub fn pick_cache_guard(info: &BackendInfo) -> DeviceFingerprint {
    let mut fingerprint = info.fingerprint();
    fingerprint.name = info.device_name.clone();
    fingerprint
}

/// Runs the workload: every input is drawn with `sample_rng(seed, i)`, measured, and decided
/// through an [`AutoHeuristic`] in use mode with `registry`. `on_decision` sees each decision
/// as it is made (for progress or a live table).
pub fn run_workload(
    runner: &dyn DynRunner,
    backend: &mut Backend,
    registry: &Registry,
    cfg: &WorkloadConfig,
    mut on_decision: impl FnMut(&DecisionRecord),
) -> Result<WorkloadReport, UseError> {
    let info = backend.info().clone();
    let target = Target {
        kind: backend.kind(),
        total_memory: info.total_memory,
        identity: info.identity,
    };
    let session = Session::new(runner, registry, cfg, backend.kind(), &info);
    let mut decisions = Vec::new();
    let mut summary = WorkloadSummary::default();
    if !session.config.disable_cache {
        // Refuse a file that is not a pick cache before measuring anything; the process
        // keeps the file loaded, so the runtime's opens below only look for new lines.
        // A FIFO (whose open blocks) or a device is refused here, as every tool refuses one.
        let path = session.config.pick_cache_path();
        ah_core::fs::check_writable_path(&path).map_err(ah_core::Error::from)?;
        let mut cache = PickCache::open(path, session.fingerprint.clone())?;
        summary.warnings = cache.take_warnings();
    }
    let mut heuristic_name = None;
    let mut scores = Vec::new();
    for index in 0..cfg.num_samples {
        let mut rng = sample_rng(cfg.seed, index);
        let Some(drawn) = runner.draw(&mut rng, &target, MAX_DRAWS) else {
            summary.skip(format!(
                "input {index}: no draw met the runner's precondition in {MAX_DRAWS} tries"
            ));
            continue;
        };
        let measured = runner.measure(&drawn, Repetitions::fixed(cfg.reps.max(1)), backend);
        let Some(record) =
            session.decide(index, &drawn, &measured, &mut summary, &mut heuristic_name)?
        else {
            summary.skip(format!(
                "input {index}: every choice failed ({})",
                first_failure(&measured)
            ));
            continue;
        };
        scores.push(PickTimes {
            picked_ms: record.time_ms,
            best_ms: record.best_ms,
            default_ms: record.default_ms,
        });
        on_decision(&record);
        decisions.push(record);
    }
    let scored = PickSummary::of(&scores);
    summary.inputs = scored.n;
    if scored.n > 0 {
        summary.total_ms = scored.picked_total_ms;
        summary.default_total_ms = scored.default_total_ms;
        summary.oracle_total_ms = scored.best_total_ms;
        summary.speedup_over_default = scored.speedup_over_default;
        summary.total_time_share = scored.total_time_share;
        summary.gmean_speedup_over_default = scored.gmean_speedup_over_default;
    }
    Ok(WorkloadReport {
        name: runner.name().to_string(),
        device: info.device_name,
        heuristic: heuristic_name,
        decisions,
        summary,
    })
}

/// What every input of a workload is decided with: the runner, the registry, the runtime's
/// configuration and the device with its pick cache guard.
struct Session<'a> {
    runner: &'a dyn DynRunner,
    registry: &'a Registry,
    default_choice: &'a str,
    config: Config,
    device: DeviceInfo,
    fingerprint: DeviceFingerprint,
    ops: Vec<ah_core::ops::Operation>,
}

impl<'a> Session<'a> {
    fn new(
        runner: &'a dyn DynRunner,
        registry: &'a Registry,
        cfg: &'a WorkloadConfig,
        kind: ah_bench::BackendKind,
        info: &BackendInfo,
    ) -> Self {
        let device = match kind {
            ah_bench::BackendKind::Cuda => DeviceInfo::new(info.identity, info.device_name.clone()),
            ah_bench::BackendKind::Cpu => DeviceInfo::none(),
        };
        let mut config = cfg.config.clone();
        if let Some(path) = &cfg.cache {
            config.cache_path = Some(path.clone());
        }
        Self {
            runner,
            registry,
            default_choice: &cfg.default_choice,
            config,
            device,
            fingerprint: pick_cache_guard(info),
            ops: builtin_operations(runner.name()),
        }
    }

    /// Decides one measured input through the runtime and counts its source and warnings in
    /// `summary`; `None` when every choice failed. Names the matching heuristic in
    /// `heuristic_name` on the first input.
    fn decide(
        &self,
        index: u64,
        drawn: &DrawnInput,
        measured: &MeasuredInput,
        summary: &mut WorkloadSummary,
        heuristic_name: &mut Option<String>,
    ) -> Result<Option<DecisionRecord>, UseError> {
        let times = median_times(measured);
        let choices = measured.choices.clone();
        let Some(default_idx) = choices.iter().position(|c| c == self.default_choice) else {
            return Err(UseError::UnknownDefault {
                default: self.default_choice.to_string(),
                choices,
            });
        };
        let (best_idx, best_ms) = times
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, t)| t.is_finite())
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or((default_idx, f64::INFINITY));
        if !best_ms.is_finite() {
            return Ok(None);
        }
        let time_of = |choice: &str| {
            choices
                .iter()
                .position(|c| c == choice)
                .map_or(f64::INFINITY, |i| times[i])
        };
        let name = self.runner.name();
        let mut ah = AutoHeuristic::builder(name, choices.clone(), || "autotune".into())
            .context(drawn.context.clone())
            .augment(self.ops.clone())
            .feedback(time_of)
            .config(self.config.clone())
            .device(self.device.clone())
            .fingerprint(self.fingerprint.clone())
            .registry(self.registry)
            .build()?;
        if heuristic_name.is_none() {
            let md = HeuristicMetadata {
                device: self.device.identity,
                name,
                choices: &choices,
            };
            *heuristic_name = self
                .registry
                .find(&md, &drawn.context)
                .map(|h| h.heuristic_name().to_string());
        }
        let pick = ah.get_choice_or_autotune();
        for w in ah.take_warnings() {
            if !summary.warnings.contains(&w) {
                summary.warnings.push(w);
            }
        }
        let source = count_source(summary, pick.source);
        // The fallback "autotune" of pad_mm is not a choice: a program would benchmark, so
        // it gets the best time; any other unknown pick runs the default.
        let time_ms = match choices.iter().position(|c| *c == pick.choice) {
            Some(i) => times[i],
            None if pick.choice == "autotune" => best_ms,
            None => times[default_idx],
        };
        if source == "heuristic" && time_ms <= best_ms {
            summary.heuristic_correct += 1;
        }
        Ok(Some(DecisionRecord {
            index,
            input: drawn.description.clone(),
            source,
            unsure: pick.unsure,
            choice: pick.choice,
            time_ms,
            default_ms: times[default_idx],
            best_ms,
            best: choices[best_idx].clone(),
        }))
    }
}

/// Each choice's time: the median over repetitions of the per-repetition minimum (`inf` where
/// a repetition failed); the workspace's one median (the mean of the two middle values for an
/// even count, as training takes it).
fn median_times(measured: &MeasuredInput) -> Vec<f64> {
    (0..measured.choices.len())
        .map(|c| {
            let mut t: Vec<f64> = measured
                .results
                .iter()
                .map(|rep| rep[c].as_ref().map_or(f64::INFINITY, |m| m.min_ms))
                .collect();
            ah_core::stats::median(&mut t)
        })
        .collect()
}

/// Counts a pick's source in `summary`; its name in the decision record.
fn count_source(summary: &mut WorkloadSummary, source: PickSource) -> &'static str {
    match source {
        PickSource::Heuristic => {
            summary.heuristic += 1;
            "heuristic"
        }
        PickSource::Cache => {
            summary.cache_hits += 1;
            "cache"
        }
        PickSource::Autotuned => {
            summary.autotuned += 1;
            "autotuned"
        }
        PickSource::Fallback => {
            summary.fallback += 1;
            "fallback"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ah_bench::backend::cpu::CpuBackend;
    use ah_bench::{BackendKind, BenchError, BenchmarkRunner, Measurement, SampleRng};
    use ah_core::Context;

    /// A CPU runner whose choices all fail, and whose precondition never holds when `picky`.
    struct Failing {
        picky: bool,
    }

    impl BenchmarkRunner for Failing {
        type Input = u64;
        type Prepared = ();
        fn name(&self) -> &'static str {
            "failing"
        }
        fn description(&self) -> &'static str {
            "fails"
        }
        fn choices(&self) -> Vec<String> {
            vec!["a".into(), "b".into()]
        }
        fn supports(&self, kind: BackendKind) -> bool {
            kind == BackendKind::Cpu
        }
        fn create_input(&self, _rng: &mut SampleRng, _target: &Target) -> u64 {
            7
        }
        fn context(&self, input: &u64) -> Context {
            let mut c = Context::new();
            c.add("x", *input as i64);
            c
        }
        fn precondition(&self, _device: ah_core::DeviceIdentity, _input: &u64) -> bool {
            !self.picky
        }
        fn prepare(&self, _input: &u64, _backend: &mut Backend) -> Result<(), BenchError> {
            Ok(())
        }
        fn run(
            &self,
            _input: &u64,
            _prepared: &mut (),
            choice: &str,
            _warmup: bool,
            _backend: &mut Backend,
        ) -> Result<Measurement, BenchError> {
            Err(BenchError::Other(format!("{choice} broke")))
        }
    }

    /// Skipped inputs are counted with their reason, each kind once, naming the first input
    /// and the first failure.
    #[test]
    fn skipped_inputs_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = WorkloadConfig {
            num_samples: 3,
            seed: 0,
            reps: 1,
            default_choice: "a".into(),
            cache: Some(dir.path().join("picks.json")),
            config: Config::default(),
        };
        let mut backend = Backend::Cpu(CpuBackend::new());
        let registry = Registry::new();
        for (picky, want) in [
            (false, "input 0: every choice failed (a broke)"),
            (
                true,
                "input 0: no draw met the runner's precondition in 1000 tries",
            ),
        ] {
            let runner = Failing { picky };
            let r = run_workload(&runner, &mut backend, &registry, &cfg, |_| {}).unwrap();
            assert_eq!((r.summary.inputs, r.summary.skipped), (0, 3));
            assert_eq!(r.summary.skip_reasons, [want]);
        }
    }

    /// The same machine under `taskset` (fewer available CPUs) keeps the same guard, so its
    /// cached picks stay valid; another CPU model or library version does not.
    #[test]
    fn the_guard_ignores_the_cpu_count() {
        let info = CpuBackend::new().info().clone();
        assert!(info.versions.contains_key("available_parallelism"));
        let mut pinned = info.clone();
        pinned
            .versions
            .insert("available_parallelism".into(), "1".into());
        assert_eq!(pick_cache_guard(&pinned), pick_cache_guard(&info));
        let guard = pick_cache_guard(&info);
        assert_eq!(guard.name, info.device_name);
        assert!(!guard.library_versions.contains_key("available_parallelism"));
        let mut other = info.clone();
        other.device_name = "another CPU".into();
        assert_ne!(pick_cache_guard(&other), guard);
        let mut other = info;
        other
            .versions
            .insert("cpu_gemm".into(), "matrixmultiply 0.4".into());
        assert_ne!(pick_cache_guard(&other), guard);
    }
}
