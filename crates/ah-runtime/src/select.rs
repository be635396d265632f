//! The select-algorithm flavour (PyTorch's `AutoHeuristicSelectAlgorithm` followed by
//! `autotune_select_algorithm`, spec section 5.2): the timings are not measured by the
//! heuristic object itself but arrive from an autotuner that times the same choices for the
//! same inputs.
//!
//! 1. Build a [`SelectAlgorithm`] for the decision (name, choice ids, an *inputs key* describing
//!    the inputs, context, augment operations, precondition, optional fallback choice).
//! 2. In use mode, [`SelectAlgorithm::get_choice`] / [`SelectAlgorithm::get_top_k_choices`]
//!    answer from the learned heuristic (`"unsure"` / `None` otherwise), and the caller
//!    benchmarks only those choices.
//! 3. The caller autotunes [`SelectAlgorithm::request`] with an [`Autotuner`] (benchmark every
//!    choice, or reuse a pick from the guarded [`PickCache`]) and hands the result back with
//!    [`SelectAlgorithm::save_feedback`]; in collect mode it logs one row per timed choice.
//!
//! Where PyTorch matches timings to the right call through global feedback savers and silently
//! drops those whose inputs key differs, [`SelectAlgorithm::save_feedback`] checks that the
//! result is for the same name, inputs key and choice list and refuses a mismatch with an error
//! that says what differs.

use crate::cache::{CacheKey, DeviceFingerprint, PickCache};
use crate::runtime::{
    cached_pick, fastest, open_pick_cache, store_pick, AutoHeuristic, AutoHeuristicBuilder, Config,
    DeviceInfo, PickSource,
};
use ah_core::context::Context;
use ah_core::error::{Error, Result};
use ah_core::heuristic::{HeuristicMetadata, Registry};
use ah_core::model::UnsureReason;
use ah_core::ops::Operation;

/// PyTorch's fallback string when the select-algorithm call has no fallback choice.
pub const UNSURE: &str = "unsure";

/// What to autotune: the decision's name, inputs key and (deduplicated) choice ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutotuneRequest {
    /// Optimization name (`mm`).
    pub name: String,
    /// Description of the inputs (shapes, strides, dtypes), PyTorch's `inputs_key`.
    pub inputs_key: String,
    /// Choice ids, in order.
    pub choices: Vec<String>,
    /// Whether a cached pick may answer instead of benchmarking (off while collecting: logs
    /// hold measurements, never cached answers).
    pub use_cache: bool,
}

/// What an [`Autotuner`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct AutotuneResult {
    /// Optimization name it was run for.
    pub name: String,
    /// Inputs key it was run for.
    pub inputs_key: String,
    /// Choices it was run for.
    pub choices: Vec<String>,
    /// The fastest choice (ties: the first); `None` when every choice failed.
    pub choice: Option<String>,
    /// Times in ms, one per choice (`inf` for a failed choice); `None` when the pick came from
    /// the cache.
    pub timings: Option<Vec<f64>>,
    /// [`PickSource::Autotuned`] or [`PickSource::Cache`].
    pub source: PickSource,
}

/// A small autotuner: benchmarks the given choices and caches the winner in the guarded pick
/// cache (unless the cache is disabled or the request forbids it).
#[derive(Debug)]
pub struct Autotuner {
    cache: Option<PickCache>,
    warnings: Vec<String>,
}

impl Autotuner {
    /// An autotuner with the pick cache of `config` (none when `config.disable_cache`).
    pub fn new(config: &Config, fingerprint: DeviceFingerprint) -> Self {
        let mut warnings = Vec::new();
        let cache = open_pick_cache(config, fingerprint, "autotuning", &mut warnings);
        Self { cache, warnings }
    }

    /// An autotuner that always benchmarks.
    pub fn without_cache() -> Self {
        Self {
            cache: None,
            warnings: Vec::new(),
        }
    }

    /// Benchmarks every choice of the request with `bench` (ms; `inf` or NaN for a failure),
    /// or answers from the cache when allowed and a pick made under the current guard exists.
    pub fn autotune(
        &mut self,
        request: &AutotuneRequest,
        mut bench: impl FnMut(&str) -> f64,
    ) -> AutotuneResult {
        let key = CacheKey::for_inputs(&request.name, &request.inputs_key, &request.choices);
        let result = |choice, timings, source| AutotuneResult {
            name: request.name.clone(),
            inputs_key: request.inputs_key.clone(),
            choices: request.choices.clone(),
            choice,
            timings,
            source,
        };
        if request.use_cache {
            if let Some(cache) = &self.cache {
                let hit = cached_pick(
                    cache,
                    &key,
                    &request.name,
                    &request.choices,
                    &mut self.warnings,
                );
                if hit.is_some() {
                    return result(hit, None, PickSource::Cache);
                }
            }
        }
        let timings: Vec<f64> = request.choices.iter().map(|c| bench(c)).collect();
        let choice = fastest(&timings).map(|i| request.choices[i].clone());
        if let (Some(c), Some(cache)) = (&choice, self.cache.as_mut()) {
            let times = request
                .choices
                .iter()
                .cloned()
                .zip(timings.iter().copied())
                .collect();
            store_pick(cache, &key, c, times, &mut self.warnings);
        }
        result(choice, Some(timings), PickSource::Autotuned)
    }

    /// Warnings gathered so far (corrupt cache file, stale entries, failed writes).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

/// Builder of a [`SelectAlgorithm`]: the [`AutoHeuristicBuilder`] of the inner decision plus the
/// inputs key and the fallback choice.
pub struct SelectAlgorithmBuilder<'a> {
    inner: AutoHeuristicBuilder<'a>,
    inputs_key: String,
    fallback: Option<String>,
}

impl<'a> SelectAlgorithmBuilder<'a> {
    /// The fallback choice id (PyTorch: the fallback `ChoiceCaller`); without one the fallback is
    /// [`UNSURE`].
    pub fn fallback(mut self, choice: impl Into<String>) -> Self {
        self.fallback = Some(choice.into());
        self
    }

    /// The decision's context (raw, logged features).
    pub fn context(self, context: Context) -> Self {
        self.with_inner(|b| b.context(context))
    }

    /// Augment operations applied before asking the heuristic.
    pub fn augment(self, ops: Vec<Operation>) -> Self {
        self.with_inner(|b| b.augment(ops))
    }

    /// The precondition on metadata and raw context.
    pub fn precondition(self, p: impl Fn(&HeuristicMetadata<'_>, &Context) -> bool + 'a) -> Self {
        self.with_inner(|b| b.precondition(p))
    }

    /// The configuration (default: [`Config::from_env`]).
    pub fn config(self, config: Config) -> Self {
        self.with_inner(|b| b.config(config))
    }

    /// The device (default: [`DeviceInfo::none`]).
    pub fn device(self, device: DeviceInfo) -> Self {
        self.with_inner(|b| b.device(device))
    }

    /// The registry to ask (default: the global registry, else none).
    pub fn registry(self, registry: &'a Registry) -> Self {
        self.with_inner(|b| b.registry(registry))
    }

    fn with_inner(
        mut self,
        f: impl FnOnce(AutoHeuristicBuilder<'a>) -> AutoHeuristicBuilder<'a>,
    ) -> Self {
        self.inner = f(self.inner);
        self
    }

    /// Builds it. Duplicate choice ids collapse (first position kept, the last original index
    /// wins, as PyTorch's `choicestr2choice` dict). Nothing is benchmarked here.
    pub fn build(self) -> Result<SelectAlgorithm<'a>> {
        let mut inner = self.inner;
        let mut ids: Vec<String> = Vec::new();
        let mut last_index: Vec<usize> = Vec::new();
        for (i, c) in inner.choices.iter().enumerate() {
            match ids.iter().position(|x| x == c) {
                Some(j) => last_index[j] = i,
                None => {
                    ids.push(c.clone());
                    last_index.push(i);
                }
            }
        }
        let fallback = self.fallback.unwrap_or_else(|| UNSURE.to_string());
        let fb = fallback.clone();
        inner.choices = ids;
        inner.fallback = Box::new(move || fb.clone());
        Ok(SelectAlgorithm {
            inner: inner.build()?,
            inputs_key: self.inputs_key,
            last_index,
            fallback,
        })
    }
}

/// PyTorch's `AutoHeuristicSelectAlgorithm`: a decision among choice ids whose timings come from
/// an autotuner.
pub struct SelectAlgorithm<'a> {
    inner: AutoHeuristic<'a>,
    inputs_key: String,
    last_index: Vec<usize>,
    fallback: String,
}

impl std::fmt::Debug for SelectAlgorithm<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelectAlgorithm")
            .field("inner", &self.inner)
            .field("inputs_key", &self.inputs_key)
            .field("fallback", &self.fallback)
            .finish()
    }
}

impl<'a> SelectAlgorithm<'a> {
    /// Starts a builder: optimization name, choice ids (PyTorch's `autoheuristic_id()`s, e.g.
    /// `extern_mm`, `type=triton_BLOCK-M=...`) and the inputs key.
    pub fn builder(
        name: impl Into<String>,
        choices: Vec<String>,
        inputs_key: impl Into<String>,
    ) -> SelectAlgorithmBuilder<'a> {
        SelectAlgorithmBuilder {
            inner: AutoHeuristic::builder(name, choices, || UNSURE.to_string()),
            inputs_key: inputs_key.into(),
            fallback: None,
        }
    }

    /// The deduplicated choice ids.
    pub fn choices(&self) -> &[String] {
        self.inner.choices()
    }

    /// The inputs key.
    pub fn inputs_key(&self) -> &str {
        &self.inputs_key
    }

    /// The underlying [`AutoHeuristic`] (modes, log path, collected feedback).
    pub fn auto_heuristic(&self) -> &AutoHeuristic<'a> {
        &self.inner
    }

    /// What the autotuner should time: every choice; the cache may answer unless collecting.
    pub fn request(&self) -> AutotuneRequest {
        AutotuneRequest {
            name: self.inner.name().to_string(),
            inputs_key: self.inputs_key.clone(),
            choices: self.choices().to_vec(),
            use_cache: !self.inner.collecting(),
        }
    }

    /// The heuristic's choice id, or the fallback (`"unsure"` without a fallback choice).
    pub fn get_choice(&self) -> String {
        self.inner.get_choice()
    }

    /// The heuristic's answer or why there is none.
    pub fn decision(&self) -> std::result::Result<String, UnsureReason> {
        self.inner.decision()
    }

    /// PyTorch's `get_choice_caller()`: the index (into the caller's original, not deduplicated
    /// list; the last of duplicates) of [`get_choice`](Self::get_choice), `None` for `"unsure"`.
    pub fn get_choice_index(&self) -> Option<usize> {
        let c = self.get_choice();
        self.choices()
            .iter()
            .position(|x| *x == c)
            .map(|j| self.last_index[j])
    }

    /// PyTorch's `get_top_k_choices(top_k, always_included)` (see
    /// [`AutoHeuristic::get_top_k_choices`]).
    pub fn get_top_k_choices(
        &self,
        top_k: usize,
        always_included: &[String],
    ) -> Option<Vec<String>> {
        self.inner.get_top_k_choices(top_k, always_included)
    }

    /// Hands an autotuner's result back. In collect mode (and when the precondition held) one
    /// row per timed choice is appended, in choice order; returns the number of rows written
    /// (0 when not collecting or when the pick came from the cache).
    ///
    /// A result for another name, inputs key or choice list is refused with an error that says
    /// what differs; nothing is logged then.
    pub fn save_feedback(&mut self, result: &AutotuneResult) -> Result<usize> {
        let mut diffs = Vec::new();
        if result.name != self.inner.name() {
            diffs.push(format!("name `{}` vs `{}`", result.name, self.inner.name()));
        }
        if result.inputs_key != self.inputs_key {
            diffs.push(format!(
                "inputs key `{}` vs `{}`",
                result.inputs_key, self.inputs_key
            ));
        }
        if result.choices != self.choices() {
            let missing: Vec<&str> = self
                .choices()
                .iter()
                .filter(|c| !result.choices.contains(c))
                .map(String::as_str)
                .collect();
            let extra: Vec<&str> = result
                .choices
                .iter()
                .filter(|c| !self.choices().contains(c))
                .map(String::as_str)
                .collect();
            diffs.push(if missing.is_empty() && extra.is_empty() {
                "the same choices in another order".to_string()
            } else {
                format!(
                    "choices missing [{}], unexpected [{}]",
                    missing.join(", "),
                    extra.join(", ")
                )
            });
        }
        if !diffs.is_empty() {
            return Err(Error::Other(format!(
                "select-algorithm feedback does not belong to this call ({}); autotune the request of this call (`SelectAlgorithm::request`)",
                diffs.join("; ")
            )));
        }
        let Some(timings) = &result.timings else {
            return Ok(0);
        };
        if timings.len() != result.choices.len() {
            return Err(Error::Other(format!(
                "select-algorithm feedback for `{}` has {} timings for {} choices",
                result.name,
                timings.len(),
                result.choices.len()
            )));
        }
        if !self.inner.collecting() {
            return Ok(0);
        }
        for (c, t) in result.choices.iter().zip(timings) {
            self.inner.save_data(c, *t)?;
        }
        Ok(timings.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ah_core::heuristic::{LearnedHeuristic, Prediction};
    use ah_core::metadata::DeviceIdentity;
    use ah_core::value::Value;
    use ah_log::{Log, ReadOptions};
    use std::cell::Cell;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn config(dir: &std::path::Path, collect: &str, use_list: &str) -> Config {
        let mut c = Config::from_vars(|_| None);
        c.collect = collect.into();
        c.use_list = use_list.into();
        c.cache_dir = dir.to_path_buf();
        c
    }

    fn ctx(m: i64) -> Context {
        let mut c = Context::new();
        c.add("m", m)
            .add("k", 64i64)
            .add("n", 64i64)
            .add_categorical("mat1_dtype", "torch.float16");
        c
    }

    const CHOICES: [&str; 4] = ["extern_mm", "tile_a", "tile_b", "tile_a"];

    fn times(c: &str) -> f64 {
        match c {
            "extern_mm" => 1.0,
            "tile_a" => 0.5,
            _ => f64::INFINITY,
        }
    }

    #[test]
    fn collect_logs_the_autotuner_timings() {
        let dir = tempfile::tempdir().unwrap();
        let mut sel =
            SelectAlgorithm::builder("mm", ids(&CHOICES), "[(cuda, torch.float16, 8, 64)]")
                .context(ctx(8))
                .config(config(dir.path(), "mm", ""))
                .build()
                .unwrap();
        assert_eq!(sel.choices(), ids(&["extern_mm", "tile_a", "tile_b"]));
        let request = sel.request();
        assert!(
            !request.use_cache,
            "collecting never answers from the cache"
        );
        let mut tuner = Autotuner::new(
            &config(dir.path(), "mm", ""),
            DeviceInfo::none().fingerprint(),
        );
        let result = tuner.autotune(&request, times);
        assert_eq!(result.choice.as_deref(), Some("tile_a"));
        assert_eq!(sel.save_feedback(&result).unwrap(), 3);
        let log = Log::read(
            sel.auto_heuristic().log_path().unwrap(),
            ReadOptions { strict: true },
        )
        .unwrap();
        let rows: Vec<String> = log.rows.iter().map(|r| log.row_line(r)).collect();
        assert_eq!(
            rows,
            [
                "8,64,64,torch.float16,extern_mm,1.0",
                "8,64,64,torch.float16,tile_a,0.5",
                "8,64,64,torch.float16,tile_b,inf"
            ]
        );
        assert_eq!(
            sel.auto_heuristic().get_collected_feedback("tile_a"),
            Some(0.5)
        );
        assert_eq!(sel.get_choice(), "unsure");
        assert_eq!(sel.get_choice_index(), None);
    }

    #[test]
    fn mismatched_feedback_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path(), "mm", "");
        let mut sel = SelectAlgorithm::builder("mm", ids(&CHOICES), "key1")
            .context(ctx(8))
            .config(cfg.clone())
            .build()
            .unwrap();
        let mut tuner = Autotuner::without_cache();
        let mut other = sel.request();
        other.name = "mixed_mm".into();
        let err = sel
            .save_feedback(&tuner.autotune(&other, times))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("does not belong to this call (name `mixed_mm` vs `mm`)"),
            "{err}"
        );
        let mut other = sel.request();
        other.inputs_key = "key2".into();
        let err = sel
            .save_feedback(&tuner.autotune(&other, times))
            .unwrap_err()
            .to_string();
        assert!(err.contains("inputs key `key2` vs `key1`"), "{err}");
        let mut other = sel.request();
        other.choices = ids(&["extern_mm", "tile_c"]);
        let err = sel
            .save_feedback(&tuner.autotune(&other, times))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("choices missing [tile_a, tile_b], unexpected [tile_c]"),
            "{err}"
        );
        let mut other = sel.request();
        other.choices.reverse();
        let err = sel
            .save_feedback(&tuner.autotune(&other, times))
            .unwrap_err()
            .to_string();
        assert!(err.contains("the same choices in another order"), "{err}");
        assert!(
            !cfg.log_path_for("mm", &DeviceInfo::none()).exists(),
            "nothing logged"
        );
    }

    #[test]
    fn autotuner_caches_outside_collect_mode() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path(), "", "");
        let sel = SelectAlgorithm::builder("mm", ids(&CHOICES), "key1")
            .context(ctx(8))
            .config(cfg.clone())
            .build()
            .unwrap();
        let calls = Cell::new(0);
        let bench = |c: &str| {
            calls.set(calls.get() + 1);
            times(c)
        };
        let mut tuner = Autotuner::new(&cfg, DeviceInfo::none().fingerprint());
        let r = tuner.autotune(&sel.request(), bench);
        assert_eq!(
            (r.choice.as_deref(), &r.source),
            (Some("tile_a"), &PickSource::Autotuned)
        );
        assert_eq!(calls.get(), 3);
        let mut tuner = Autotuner::new(&cfg, DeviceInfo::none().fingerprint());
        let mut sel = sel;
        let r = tuner.autotune(&sel.request(), bench);
        assert_eq!(
            (r.choice.as_deref(), &r.source, &r.timings),
            (Some("tile_a"), &PickSource::Cache, &None)
        );
        assert_eq!(calls.get(), 3, "answered from the cache");
        assert_eq!(sel.save_feedback(&r).unwrap(), 0);
        // Another inputs key misses; a disabled cache always benchmarks.
        let mut req = sel.request();
        req.inputs_key = "key2".into();
        assert_eq!(tuner.autotune(&req, bench).source, PickSource::Autotuned);
        let mut off = cfg.clone();
        off.disable_cache = true;
        assert_eq!(
            Autotuner::new(&off, DeviceInfo::none().fingerprint())
                .autotune(&sel.request(), bench)
                .source,
            PickSource::Autotuned
        );
        assert_eq!(calls.get(), 9);
        // Every choice failing: no choice.
        let r = Autotuner::without_cache().autotune(&sel.request(), |_| f64::INFINITY);
        assert_eq!(r.choice, None);
    }

    struct Ranker;
    static RANKED: [(f64, u16); 3] = [(0.7, 2), (0.2, 0), (0.1, 1)];
    impl LearnedHeuristic for Ranker {
        fn name(&self) -> &'static str {
            "mm"
        }
        fn heuristic_name(&self) -> &'static str {
            "MMRankingTest"
        }
        fn choices(&self) -> &'static [&'static str] {
            &["extern_mm", "tile_a", "tile_b"]
        }
        fn device(&self) -> DeviceIdentity {
            DeviceIdentity::NONE
        }
        fn confidence_threshold(&self) -> f64 {
            0.0
        }
        fn predict(&self, context: &Context, _choice: Option<usize>) -> Prediction {
            match context.get("m*k") {
                Some(Value::Int(512)) => Prediction::Distribution(&RANKED),
                _ => Prediction::Distribution(&[]),
            }
        }
    }
    static RANKER: Ranker = Ranker;

    #[test]
    fn use_mode_answers_from_the_heuristic() {
        let dir = tempfile::tempdir().unwrap();
        let mut registry = Registry::new();
        registry.register(&RANKER);
        let build = |m: i64, fallback: Option<&str>| {
            let mut b = SelectAlgorithm::builder("mm", ids(&CHOICES), "k")
                .context(ctx(m))
                .augment(ah_core::ops::builtin_operations("mm"))
                .config(config(dir.path(), "", "mm"))
                .registry(&registry);
            if let Some(f) = fallback {
                b = b.fallback(f);
            }
            b.build().unwrap()
        };
        let sel = build(8, None);
        assert_eq!(sel.get_choice(), "tile_b");
        assert_eq!(sel.get_choice_index(), Some(2));
        let always = ids(&["extern_mm"]);
        assert_eq!(
            sel.get_top_k_choices(1, &always),
            Some(ids(&["tile_b", "extern_mm"]))
        );
        assert_eq!(
            sel.get_top_k_choices(5, &always),
            Some(ids(&["tile_b", "extern_mm", "tile_a"]))
        );
        // An empty leaf: unsure -> "unsure" (no fallback) or the fallback id; ranking is empty
        // plus the always-included choices, as PyTorch.
        let sel = build(9, None);
        assert_eq!(sel.get_choice(), "unsure");
        assert_eq!(sel.get_top_k_choices(3, &always), Some(ids(&["extern_mm"])));
        let sel = build(9, Some("tile_a"));
        assert_eq!(sel.get_choice(), "tile_a");
        assert_eq!(sel.get_choice_index(), Some(3), "the last of duplicate ids");
    }
}
