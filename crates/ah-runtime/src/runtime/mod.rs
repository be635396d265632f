//! The runtime: PyTorch's `AutoHeuristic` (spec section 5.1) plus the guarded pick cache.
//!
//! An [`AutoHeuristic`] is built for one decision: an optimization name, the choices, a
//! fallback, the context, optionally a feedback closure (benchmarks a choice, returns ms), augment
//! operations and a precondition. Its mode comes from a [`Config`] (by default
//! [`Config::from_env`]):
//! - **collect** (`AUTOHEURISTIC_COLLECT` lists the name): building it benchmarks every choice
//!   through the feedback closure and appends one log row per choice;
//! - **use** (`AUTOHEURISTIC_USE` lists the name): [`AutoHeuristic::get_choice`] asks the
//!   [`Registry`]; unsure or unknown answers fall back;
//! - neither: [`AutoHeuristic::get_choice`] returns the fallback.
//!
//! [`AutoHeuristic::get_choice_or_autotune`] adds what PyTorch leaves to each call site: when
//! the heuristic gives no answer, benchmark once, cache the pick ([`crate::cache`]) and reuse it.
//!
//! No GPU code lives here: the device identity and name are given ([`DeviceInfo`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::cache::{CacheKey, DeviceFingerprint, Lookup, PickCache};
use ah_core::context::Context;
use ah_core::error::Result;
use ah_core::heuristic::{HeuristicMetadata, Registry};
use ah_core::metadata::{DeviceIdentity, Metadata};
use ah_core::model::{Decision, UnsureReason};
use ah_core::ops::{apply_operations, Operation};
use ah_log::LogWriter;

/// Runtime configuration (PyTorch's `autoheuristic_collect`, `autoheuristic_use`,
/// `autoheuristic_log_path`, plus the pick cache settings).
///
/// `collect` and `use_list` are comma-separated lists matched exactly as PyTorch does
/// (`name in value.split(",")`: no trimming of spaces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Names to collect data for (`AUTOHEURISTIC_COLLECT`, default empty).
    pub collect: String,
    /// Names to use learned heuristics for (`AUTOHEURISTIC_USE`, default `mixed_mm` as in
    /// PyTorch).
    pub use_list: String,
    /// Log path: `DEFAULT` for the per-device default path, else one file for every name
    /// (`AUTOHEURISTIC_LOG_PATH`).
    pub log_path: String,
    /// The user's cache folder (`$XDG_CACHE_HOME`, else `$HOME/.cache`, else the temp folder).
    pub cache_dir: PathBuf,
    /// Turns the pick cache off (`AUTOHEURISTIC_DISABLE_CACHE=1`).
    pub disable_cache: bool,
    /// The pick cache file (`AUTOHEURISTIC_CACHE_PATH`, default
    /// `{cache_dir}/autoheuristic/pick_cache.json`).
    pub cache_path: Option<PathBuf>,
}

impl Default for Config {
    /// PyTorch's defaults, with no environment read: collect nothing, use `mixed_mm`, default
    /// log path, cache in the temp folder.
    fn default() -> Self {
        Self::from_vars(|_| None)
    }
}

impl Config {
    /// Reads the process environment: `AUTOHEURISTIC_COLLECT`, `AUTOHEURISTIC_USE`,
    /// `AUTOHEURISTIC_LOG_PATH`, `AUTOHEURISTIC_DISABLE_CACHE`, `AUTOHEURISTIC_CACHE_PATH`, each
    /// falling back to its `TORCHINDUCTOR_`-prefixed name, and `XDG_CACHE_HOME` / `HOME`.
    pub fn from_env() -> Self {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// Like [`from_env`](Self::from_env) with variables from `var` (for tests and embedders).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Self {
        let get = |key: &str| {
            var(&format!("AUTOHEURISTIC_{key}"))
                .or_else(|| var(&format!("TORCHINDUCTOR_AUTOHEURISTIC_{key}")))
        };
        let cache_dir = var("XDG_CACHE_HOME")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                var("HOME")
                    .filter(|s| !s.is_empty())
                    .map(|h| PathBuf::from(h).join(".cache"))
            })
            .unwrap_or_else(std::env::temp_dir);
        Self {
            collect: get("COLLECT").unwrap_or_default(),
            use_list: get("USE").unwrap_or_else(|| "mixed_mm".to_string()),
            log_path: get("LOG_PATH").unwrap_or_else(|| "DEFAULT".to_string()),
            cache_dir,
            disable_cache: get("DISABLE_CACHE").as_deref() == Some("1"),
            cache_path: get("CACHE_PATH")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
        }
    }

    /// PyTorch's `collect_autoheuristic(name)`.
    pub fn collect_enabled(&self, name: &str) -> bool {
        self.collect.split(',').any(|n| n == name)
    }

    /// PyTorch's `use_autoheuristic(name)`.
    pub fn use_enabled(&self, name: &str) -> bool {
        self.use_list.split(',').any(|n| n == name)
    }

    /// PyTorch's `run_autoheuristic(name)`: collect or use.
    pub fn run_enabled(&self, name: &str) -> bool {
        self.collect_enabled(name) || self.use_enabled(name)
    }

    /// The log file for `name`: `{cache_dir}/autoheuristic/{device dir}/{name}.txt` when the
    /// log path is `DEFAULT` (or empty), else the configured path.
    pub fn log_path_for(&self, name: &str, device: &DeviceInfo) -> PathBuf {
        if self.log_path == "DEFAULT" || self.log_path.is_empty() {
            self.cache_dir
                .join("autoheuristic")
                .join(device.dir_name())
                .join(format!("{name}.txt"))
        } else {
            PathBuf::from(&self.log_path)
        }
    }

    /// The pick cache file.
    pub fn pick_cache_path(&self) -> PathBuf {
        self.cache_path
            .clone()
            .unwrap_or_else(|| self.cache_dir.join("autoheuristic").join("pick_cache.json"))
    }
}

/// The device a decision is made for, given by the caller (no GPU code in this crate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Identity heuristics are matched on.
    pub identity: DeviceIdentity,
    /// Device name (`torch.cuda.get_device_name()`), `None` without CUDA.
    pub name: Option<String>,
}

impl DeviceInfo {
    /// No CUDA device: identity `(0, (0, 0))`, folder `non_cuda_device`.
    pub fn none() -> Self {
        Self {
            identity: DeviceIdentity::NONE,
            name: None,
        }
    }

    /// A named device.
    pub fn new(identity: DeviceIdentity, name: impl Into<String>) -> Self {
        Self {
            identity,
            name: Some(name.into()),
        }
    }

    /// The log folder name: the device name with spaces replaced by `_`, or `non_cuda_device`.
    pub fn dir_name(&self) -> String {
        match &self.name {
            Some(n) => n.replace(' ', "_"),
            None => "non_cuda_device".to_string(),
        }
    }

    /// A fingerprint with this identity and name (driver and library versions empty).
    pub fn fingerprint(&self) -> DeviceFingerprint {
        DeviceFingerprint::new(
            self.name
                .clone()
                .unwrap_or_else(|| "non_cuda_device".into()),
            self.identity,
        )
    }
}

static GLOBAL_REGISTRY: OnceLock<Registry> = OnceLock::new();

/// Installs the process-wide registry that [`AutoHeuristic`]s use when none is given (for
/// example one filled by the generated crate's `register_all`). Only the first call succeeds;
/// later calls give the registry back.
pub fn install_global_registry(registry: Registry) -> std::result::Result<(), Registry> {
    GLOBAL_REGISTRY.set(registry)
}

/// The process-wide registry, if one was installed.
pub fn global_registry() -> Option<&'static Registry> {
    GLOBAL_REGISTRY.get()
}

type Fallback<'a> = Box<dyn Fn() -> String + 'a>;
type Feedback<'a> = Box<dyn FnMut(&str) -> f64 + 'a>;
type Precondition<'a> = Box<dyn Fn(&HeuristicMetadata<'_>, &Context) -> bool + 'a>;

/// Where a pick of [`AutoHeuristic::get_choice_or_autotune`] came from.
#[derive(Debug, Clone, PartialEq)]
pub enum PickSource {
    /// The learned heuristic answered.
    Heuristic,
    /// A cached autotuning pick made under the same guard.
    Cache,
    /// Benchmarked now (and cached unless the cache is disabled).
    Autotuned,
    /// No heuristic answer and no feedback to benchmark with: the fallback.
    Fallback,
}

/// A pick and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Pick {
    /// The chosen choice.
    pub choice: String,
    /// Where it came from.
    pub source: PickSource,
    /// Why the heuristic gave no answer (for everything but [`PickSource::Heuristic`]).
    pub unsure: Option<UnsureReason>,
}

/// Builder of an [`AutoHeuristic`].
pub struct AutoHeuristicBuilder<'a> {
    name: String,
    /// Set again by [`crate::select::SelectAlgorithmBuilder::build`] (deduplicated ids).
    pub(crate) choices: Vec<String>,
    /// Set again by [`crate::select::SelectAlgorithmBuilder::build`] (the fallback choice).
    pub(crate) fallback: Fallback<'a>,
    feedback: Option<Feedback<'a>>,
    context: Context,
    augment: Vec<Operation>,
    precondition: Option<Precondition<'a>>,
    config: Option<Config>,
    device: DeviceInfo,
    fingerprint: Option<DeviceFingerprint>,
    registry: Option<&'a Registry>,
}

impl<'a> AutoHeuristicBuilder<'a> {
    /// The feedback closure: benchmarks a choice and returns its time in ms (`inf` if it
    /// failed). PyTorch's `LocalFeedback`.
    pub fn feedback(mut self, f: impl FnMut(&str) -> f64 + 'a) -> Self {
        self.feedback = Some(Box::new(f));
        self
    }

    /// The decision's context (raw, logged features).
    pub fn context(mut self, context: Context) -> Self {
        self.context = context;
        self
    }

    /// Augment operations applied (to a copy of the context) before asking the heuristic.
    pub fn augment(mut self, ops: Vec<Operation>) -> Self {
        self.augment = ops;
        self
    }

    /// The precondition on metadata and raw context; false means AutoHeuristic stays out
    /// (no collection, fallback).
    pub fn precondition(
        mut self,
        p: impl Fn(&HeuristicMetadata<'_>, &Context) -> bool + 'a,
    ) -> Self {
        self.precondition = Some(Box::new(p));
        self
    }

    /// The configuration (default: [`Config::from_env`]).
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// The device (default: [`DeviceInfo::none`]).
    pub fn device(mut self, device: DeviceInfo) -> Self {
        self.device = device;
        self
    }

    /// The pick cache guard (default: [`DeviceInfo::fingerprint`] of the device).
    pub fn fingerprint(mut self, fingerprint: DeviceFingerprint) -> Self {
        self.fingerprint = Some(fingerprint);
        self
    }

    /// The registry to ask (default: the [`global_registry`], else none).
    pub fn registry(mut self, registry: &'a Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Builds it, as PyTorch's constructor does: if the precondition fails, nothing else
    /// happens; otherwise, in collect mode with a feedback closure, every choice is benchmarked
    /// now and one row per choice is appended to the log. Errors: the log cannot be written,
    /// or its metadata differs (InconsistentMetadata).
    pub fn build(self) -> Result<AutoHeuristic<'a>> {
        let config = self.config.unwrap_or_else(Config::from_env);
        let (num, cat) = self.context.numerical_and_categorical();
        let metadata = Metadata::new(self.device.identity, self.name.clone(), num, cat);
        let fingerprint = self
            .fingerprint
            .unwrap_or_else(|| self.device.fingerprint());
        let mut ah = AutoHeuristic {
            name: self.name,
            choices: self.choices,
            fallback: self.fallback,
            feedback: self.feedback,
            context: self.context,
            augment: self.augment,
            precondition: self.precondition,
            config,
            device: self.device,
            fingerprint,
            registry: match self.registry {
                Some(r) => Some(r),
                None => global_registry(),
            },
            metadata,
            collected_feedback: BTreeMap::new(),
            log_path: None,
            warnings: Vec::new(),
        };
        if !ah.satisfies_precondition() {
            return Ok(ah);
        }
        let log_path = ah.config.log_path_for(&ah.name, &ah.device);
        ah.log_path = Some(log_path.clone());
        let collect = ah.config.collect_enabled(&ah.name);
        if let (true, Some(feedback)) = (collect, ah.feedback.as_mut()) {
            let features: Vec<String> = ah
                .context
                .features()
                .iter()
                .map(|f| f.name.to_string())
                .collect();
            // The same lock as every other writer of the log: a collector writing to this file
            // makes this an error (Error::Locked), never interleaved rows.
            let _lock = ah_log::lock_log(&log_path, true)?;
            let mut writer = LogWriter::append(&log_path, &ah.metadata, &features)?;
            for choice in &ah.choices {
                let t = feedback(choice);
                ah.collected_feedback.insert(choice.clone(), t);
                writer.write_row(&ah.context, choice, t)?;
            }
        }
        Ok(ah)
    }
}

/// PyTorch's `AutoHeuristic`: one decision, collected, learned or fallen back.
pub struct AutoHeuristic<'a> {
    name: String,
    choices: Vec<String>,
    fallback: Fallback<'a>,
    feedback: Option<Feedback<'a>>,
    context: Context,
    augment: Vec<Operation>,
    precondition: Option<Precondition<'a>>,
    config: Config,
    device: DeviceInfo,
    fingerprint: DeviceFingerprint,
    registry: Option<&'a Registry>,
    metadata: Metadata,
    collected_feedback: BTreeMap<String, f64>,
    log_path: Option<PathBuf>,
    warnings: Vec<String>,
}

impl std::fmt::Debug for AutoHeuristic<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AutoHeuristic")
            .field("name", &self.name)
            .field("choices", &self.choices)
            .field("context", &self.context)
            .field("config", &self.config)
            .field("device", &self.device)
            .field("collected_feedback", &self.collected_feedback)
            .finish_non_exhaustive()
    }
}

impl<'a> AutoHeuristic<'a> {
    /// Starts a builder: optimization name, choices and the fallback (PyTorch's `fallback`, e.g.
    /// `|| "autotune".into()` for pad_mm).
    ///
    /// ```
    /// use ah_core::Context;
    /// use ah_runtime::{AutoHeuristic, Config, PickSource};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let mut config = Config::from_vars(|_| None); // no environment: tests stay hermetic
    /// config.collect = "test".into();
    /// config.cache_dir = dir.path().to_path_buf();
    /// let mut ctx = Context::new();
    /// ctx.add("fa", 5i64);
    /// let times = |choice: &str| if choice == "a" { 2.0 } else { 1.0 };
    /// let mut ah = AutoHeuristic::builder("test", vec!["a".into(), "b".into()], || "a".into())
    ///     .context(ctx)
    ///     .feedback(times)
    ///     .config(config)
    ///     .build()?; // collect mode: benchmarks a and b, appends two rows
    /// let log = std::fs::read_to_string(ah.log_path().unwrap())?;
    /// assert!(log.ends_with("fa,choice,feedback\n5,a,2.0\n5,b,1.0\n"));
    /// assert_eq!(ah.get_choice(), "a"); // not in use mode: the fallback
    /// let pick = ah.get_choice_or_autotune(); // no heuristic: reuse the times, cache the pick
    /// assert_eq!((pick.choice.as_str(), pick.source), ("b", PickSource::Autotuned));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder(
        name: impl Into<String>,
        choices: Vec<String>,
        fallback: impl Fn() -> String + 'a,
    ) -> AutoHeuristicBuilder<'a> {
        AutoHeuristicBuilder {
            name: name.into(),
            choices,
            fallback: Box::new(fallback),
            feedback: None,
            context: Context::new(),
            augment: Vec::new(),
            precondition: None,
            config: None,
            device: DeviceInfo::none(),
            fingerprint: None,
            registry: None,
        }
    }

    /// The optimization name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The choices.
    pub fn choices(&self) -> &[String] {
        &self.choices
    }

    /// The configuration in effect.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The log file (`None` when the precondition failed, as PyTorch never resolves it then).
    pub fn log_path(&self) -> Option<&std::path::Path> {
        self.log_path.as_deref()
    }

    fn heuristic_metadata(&self) -> HeuristicMetadata<'_> {
        HeuristicMetadata {
            device: self.device.identity,
            name: &self.name,
            choices: &self.choices,
        }
    }

    /// `precondition is None or precondition(metadata, context)` on the raw context.
    pub fn satisfies_precondition(&self) -> bool {
        match &self.precondition {
            None => true,
            Some(p) => p(&self.heuristic_metadata(), &self.context),
        }
    }

    /// True when building collected (or would collect) data: collect mode is on for the name
    /// and the precondition held.
    pub fn collecting(&self) -> bool {
        self.log_path.is_some() && self.config.collect_enabled(&self.name)
    }

    /// PyTorch's `save_data(choice, feedback)`: records the time and appends one row (the raw
    /// context, the choice, the time in ms) to the log. Errors when the precondition failed (no
    /// log is resolved then), the log cannot be written or its metadata differs.
    pub fn save_data(&mut self, choice: &str, feedback: f64) -> Result<()> {
        let Some(path) = self.log_path.clone() else {
            return Err(ah_core::Error::Other(format!(
                "`{}`: the precondition does not hold for this context, so nothing is logged",
                self.name
            )));
        };
        self.collected_feedback.insert(choice.to_string(), feedback);
        let features: Vec<String> = self
            .context
            .features()
            .iter()
            .map(|f| f.name.to_string())
            .collect();
        let _lock = ah_log::lock_log(&path, true)?;
        LogWriter::append(&path, &self.metadata, &features)?.write_row(
            &self.context,
            choice,
            feedback,
        )
    }

    /// The time collected for a choice in collect mode.
    pub fn get_collected_feedback(&self, choice: &str) -> Option<f64> {
        self.collected_feedback.get(choice).copied()
    }

    fn augmented(&self) -> std::result::Result<Context, UnsureReason> {
        let mut ctx = self.context.clone();
        apply_operations(&self.augment, &mut ctx).map_err(|e| match e {
            ah_core::Error::Operation { name, .. } => {
                UnsureReason::MissingFeature { feature: name }
            }
            _ => UnsureReason::NoHeuristic,
        })?;
        Ok(ctx)
    }

    /// The learned heuristic's answer, or why there is none: precondition, not in use mode
    /// (`NoHeuristic`), no matching heuristic, unsure, or an answer not among the choices.
    pub fn decision(&self) -> std::result::Result<String, UnsureReason> {
        if !self.satisfies_precondition() {
            return Err(UnsureReason::Precondition);
        }
        if !self.config.use_enabled(&self.name) {
            return Err(UnsureReason::NoHeuristic);
        }
        let ctx = self.augmented()?;
        let md = self.heuristic_metadata();
        let h = self
            .registry
            .and_then(|r| r.find(&md, &ctx))
            .ok_or(UnsureReason::NoHeuristic)?;
        match h.decide(&ctx) {
            Decision::Choice(i) => match h.choices().get(i) {
                Some(c) if self.choices.iter().any(|x| x == c) => Ok((*c).to_string()),
                _ => Err(UnsureReason::NotInChoices),
            },
            Decision::Unsure(r) => Err(r),
        }
    }

    /// PyTorch's `get_choice()`: the fallback unless the precondition holds, use mode is on and
    /// the heuristic answers with one of the choices.
    pub fn get_choice(&self) -> String {
        self.decision().unwrap_or_else(|_| (self.fallback)())
    }

    /// PyTorch's `get_top_k_choices(top_k, always_included)`: `None` unless the precondition
    /// holds, use mode is on and a heuristic matches and is not unsure; else the first
    /// heuristic's ranked choices that are among ours, cut to `top_k`, then every
    /// `always_included` choice not yet present appended (the result may exceed `top_k`).
    pub fn get_top_k_choices(
        &self,
        top_k: usize,
        always_included: &[String],
    ) -> Option<Vec<String>> {
        if !self.satisfies_precondition() || !self.config.use_enabled(&self.name) {
            return None;
        }
        let ctx = self.augmented().ok()?;
        let md = self.heuristic_metadata();
        let h = self.registry?.find(&md, &ctx)?;
        let ranked = h.ranked(&ctx)?;
        let mut out: Vec<String> = ranked
            .into_iter()
            .filter(|c| self.choices.iter().any(|x| x == c))
            .take(top_k)
            .map(str::to_string)
            .collect();
        for c in always_included {
            if !out.contains(c) {
                out.push(c.clone());
            }
        }
        Some(out)
    }

    /// The heuristic's answer if it has one; otherwise (unsure, precondition false, not in use
    /// mode) autotune once: look the input up in the pick cache, else benchmark every choice
    /// through the feedback closure (reusing times collected in collect mode), pick the fastest
    /// (ties: the first), store it in the cache and return it. Without a feedback closure, or
    /// when every choice failed (`inf`/NaN), the fallback. Cache problems never fail the pick:
    /// they become [`warnings`](Self::take_warnings).
    pub fn get_choice_or_autotune(&mut self) -> Pick {
        let unsure = match self.decision() {
            Ok(choice) => {
                return Pick {
                    choice,
                    source: PickSource::Heuristic,
                    unsure: None,
                }
            }
            Err(r) => r,
        };
        if self.feedback.is_none() {
            return Pick {
                choice: (self.fallback)(),
                source: PickSource::Fallback,
                unsure: Some(unsure),
            };
        }
        let key = CacheKey::new(&self.name, &self.context, &self.choices);
        let mut cache = open_pick_cache(
            &self.config,
            self.fingerprint.clone(),
            "deciding",
            &mut self.warnings,
        );
        if let Some(c) = &cache {
            if let Some(choice) =
                cached_pick(c, &key, &self.name, &self.choices, &mut self.warnings)
            {
                return Pick {
                    choice,
                    source: PickSource::Cache,
                    unsure: Some(unsure),
                };
            }
        }
        let times: Vec<f64> = self
            .choices
            .iter()
            .map(|choice| match self.collected_feedback.get(choice) {
                Some(t) => *t,
                None => (self.feedback.as_mut().expect("checked"))(choice),
            })
            .collect();
        let Some(best) = fastest(&times) else {
            return Pick {
                choice: (self.fallback)(),
                source: PickSource::Fallback,
                unsure: Some(unsure),
            };
        };
        let choice = self.choices[best].clone();
        if let Some(c) = cache.as_mut() {
            let timings = self.choices.iter().cloned().zip(times).collect();
            store_pick(c, &key, &choice, timings, &mut self.warnings);
        }
        Pick {
            choice,
            source: PickSource::Autotuned,
            unsure: Some(unsure),
        }
    }

    /// Warnings gathered so far (corrupt cache file, stale entries, failed cache writes).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

/// The pick cache of `config` (none when `config.disable_cache`), its warnings moved to
/// `warnings`; one that cannot be opened is a warning that `what` goes on without it.
pub(crate) fn open_pick_cache(
    config: &Config,
    fingerprint: DeviceFingerprint,
    what: &str,
    warnings: &mut Vec<String>,
) -> Option<PickCache> {
    if config.disable_cache {
        return None;
    }
    match PickCache::open(config.pick_cache_path(), fingerprint) {
        Ok(mut cache) => {
            warnings.extend(cache.take_warnings());
            Some(cache)
        }
        Err(e) => {
            warnings.push(format!("{e}; {what} without the pick cache"));
            None
        }
    }
}

/// The cached pick of `key` when it was made under the current guard and is one of `choices`;
/// a pick made under another guard is a warning.
pub(crate) fn cached_pick(
    cache: &PickCache,
    key: &CacheKey,
    name: &str,
    choices: &[String],
    warnings: &mut Vec<String>,
) -> Option<String> {
    match cache.lookup(key) {
        Lookup::Hit(choice) if choices.contains(&choice) => Some(choice),
        Lookup::Stale { reason } => {
            warnings.push(format!(
                "{}: ignoring a cached pick for `{name}` made under another guard ({reason})",
                cache.path().display(),
            ));
            None
        }
        _ => None,
    }
}

/// Index of the fastest finite time (ties: the first); `None` when every time is `inf` or NaN.
pub(crate) fn fastest(times: &[f64]) -> Option<usize> {
    let mut best: Option<(f64, usize)> = None;
    for (i, &t) in times.iter().enumerate() {
        if t.is_finite() && best.is_none_or(|(b, _)| t < b) {
            best = Some((t, i));
        }
    }
    best.map(|(_, i)| i)
}

/// Stores a pick with its times; a failed write and the cache's warnings go to `warnings`.
pub(crate) fn store_pick(
    cache: &mut PickCache,
    key: &CacheKey,
    choice: &str,
    timings: BTreeMap<String, f64>,
    warnings: &mut Vec<String>,
) {
    if let Err(e) = cache.put_with_timings(key, choice, timings) {
        warnings.push(format!("cannot store the pick: {e}"));
    }
    warnings.extend(cache.take_warnings());
}

#[cfg(test)]
mod tests;
