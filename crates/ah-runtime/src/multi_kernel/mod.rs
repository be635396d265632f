//! The multi-kernel runtime: several sub-kernels compute one operation, and the first call
//! picks one (Inductor's `MultiKernelCall`, spec section 13), by asking a learned heuristic or
//! by benchmarking them all.
//!
//! This crate has no GPU code: a [`SubKernel`] is what the caller supplies, a choice name, a
//! hash of its source (and compile options), a `run` closure and a `benchmark` closure that
//! returns milliseconds for a repetition budget (`rep`, 40 ms as Inductor's benchmark of
//! sub-kernels uses).
//!
//! [`MultiKernel::pick`] decides once per call object, in this order:
//! 1. a forced choice ([`MultiKernelConfig::forced`]: `AUTOHEURISTIC_MULTI_KERNEL=2` takes
//!    sub-kernel 0, `3` sub-kernel 1, ... like `TORCHINDUCTOR_MULTI_KERNEL`; a sub-kernel's
//!    name is accepted too);
//! 2. in use mode (`AUTOHEURISTIC_USE` lists the operation's name), the first heuristic of
//!    the [`Registry`] whose precondition holds: a sure answer that names one of the
//!    sub-kernels is taken as it is, with no file access and no benchmark;
//! 3. the guarded [`PickCache`], under [`MultiKernel::cache_key`]: the operation's name, every
//!    sub-kernel's name and source hash, and the size hints (the context's feature values);
//!    the cache's [`DeviceFingerprint`](crate::cache::DeviceFingerprint) guards the entry, so
//!    an edited kernel, another shape or another device, driver or library never reuses a pick;
//! 4. benchmarking every sub-kernel (a failing one counts as `inf`), taking the fastest
//!    (ties: the first) and storing it in the cache.
//!
//! `AUTOHEURISTIC_DISABLE_CACHE=1` skips step 3 and the store of step 4. Cache problems
//! (corrupt file, stale entry, failed write) never fail a pick: they become
//! [`KernelPick::warnings`].

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use sha2::{Digest, Sha256};

use crate::cache::{CacheKey, Lookup, PickCache};
use crate::runtime::Config;
use ah_core::context::Context;
use ah_core::heuristic::{HeuristicMetadata, Registry};
use ah_core::metadata::DeviceIdentity;
use ah_core::model::{Decision, UnsureReason};

/// An error a sub-kernel's closures report (launch failure, row too long, ...).
pub type KernelFailure = Box<dyn std::error::Error + Send + Sync>;

/// Environment variable that forces a sub-kernel: `2` is the first, `3` the second, ...
/// (`TORCHINDUCTOR_MULTI_KERNEL`'s debug values), or a sub-kernel's name; `0`, `1` or unset
/// decide normally. When it is unset, [`ENV_FORCE_INDUCTOR`] is read instead.
pub const ENV_FORCE: &str = "AUTOHEURISTIC_MULTI_KERNEL";
/// Inductor's own setting, read when [`ENV_FORCE`] is unset (same values).
pub const ENV_FORCE_INDUCTOR: &str = "TORCHINDUCTOR_MULTI_KERNEL";
/// Inductor's benchmark budget for sub-kernels, ms (`benchmarker.benchmark(fn, rep=40)`).
pub const DEFAULT_REP_MS: f64 = 40.0;

/// Errors of the multi-kernel runtime.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MultiKernelError {
    /// A multi-kernel needs at least one sub-kernel.
    #[error("multi-kernel `{0}` has no sub-kernels")]
    NoSubKernels(String),
    /// Two sub-kernels share a name.
    #[error("multi-kernel `{name}`: two sub-kernels are called `{choice}`; names must be unique")]
    DuplicateName {
        /// The operation.
        name: String,
        /// The repeated sub-kernel name.
        choice: String,
    },
    /// The forced choice names no sub-kernel.
    #[error(
        "{value}: multi-kernel `{name}` has {count} sub-kernels ({choices}); \
         use 2..={max} or one of the names"
    )]
    ForcedOutOfRange {
        /// The operation.
        name: String,
        /// The setting as given (`AUTOHEURISTIC_MULTI_KERNEL=4`).
        value: String,
        /// Number of sub-kernels.
        count: usize,
        /// Largest valid number (`count + 1`).
        max: usize,
        /// The sub-kernels' names, comma-separated.
        choices: String,
    },
    /// Every sub-kernel failed to benchmark.
    #[error("multi-kernel `{name}`: every sub-kernel failed to benchmark: {failures}")]
    AllFailed {
        /// The operation.
        name: String,
        /// `choice: error` for each, `; `-separated.
        failures: String,
    },
    /// The picked sub-kernel failed to run.
    #[error("multi-kernel `{name}`: sub-kernel `{choice}` failed: {source}")]
    Run {
        /// The operation.
        name: String,
        /// The picked sub-kernel.
        choice: String,
        /// Its error.
        #[source]
        source: KernelFailure,
    },
}

/// One way to compute the operation, supplied by the caller.
pub struct SubKernel<'a> {
    name: Cow<'static, str>,
    source_hash: String,
    run: Box<dyn FnMut() -> Result<(), KernelFailure> + 'a>,
    benchmark: Box<dyn FnMut(f64) -> Result<f64, KernelFailure> + 'a>,
}

impl fmt::Debug for SubKernel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubKernel")
            .field("name", &self.name)
            .field("source_hash", &self.source_hash)
            .finish_non_exhaustive()
    }
}

impl<'a> SubKernel<'a> {
    /// A sub-kernel: its choice name (as the heuristic names it, e.g. `persistent-256`), a
    /// hash of everything that makes its code (see [`source_hash`]), `run` (one call of the
    /// operation) and `benchmark` (the time of one call in ms, measured within a budget of
    /// `rep` ms). A `&'static str` name is kept without a copy, so a pick allocates nothing.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        source_hash: impl Into<String>,
        run: impl FnMut() -> Result<(), KernelFailure> + 'a,
        benchmark: impl FnMut(f64) -> Result<f64, KernelFailure> + 'a,
    ) -> Self {
        Self {
            name: name.into(),
            source_hash: source_hash.into(),
            run: Box::new(run),
            benchmark: Box::new(benchmark),
        }
    }

    /// The choice name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The source hash.
    pub fn source_hash(&self) -> &str {
        &self.source_hash
    }
}

/// The sha256 (hex) of a kernel's source text and anything else that changes its code
/// (compile options, the kernel's name in the module); for [`SubKernel::new`].
pub fn source_hash(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A forced sub-kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forced {
    /// By position (the setting minus 2).
    Index(usize),
    /// By name.
    Name(String),
}

/// How the runtime decides: the core runtime's [`Config`] (use list, cache switch) plus the
/// forced choice and the benchmark budget.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiKernelConfig {
    /// Use list and pick cache settings.
    pub runtime: Config,
    /// A forced sub-kernel, with the setting as given, `NAME=value` (for messages).
    pub forced: Option<(Forced, String)>,
    /// Benchmark budget per sub-kernel, ms.
    pub rep_ms: f64,
}

impl Default for MultiKernelConfig {
    fn default() -> Self {
        Self::from_vars(|_| None)
    }
}

impl MultiKernelConfig {
    /// The configuration from the process environment ([`Config::from_env`] and
    /// [`ENV_FORCE`]).
    pub fn from_env() -> Self {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// The configuration from a variable lookup (tests and embedders pass a map).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Self {
        let forced = [ENV_FORCE, ENV_FORCE_INDUCTOR]
            .into_iter()
            .find_map(|name| var(name).map(|v| (name, v)))
            .and_then(|(name, v)| {
                let t = v.trim();
                let setting = format!("{name}={v}");
                match t.parse::<usize>() {
                    Ok(0 | 1) => None,
                    Ok(n) => Some((Forced::Index(n - 2), setting)),
                    Err(_) if t.is_empty() => None,
                    Err(_) => Some((Forced::Name(t.to_string()), setting)),
                }
            });
        Self {
            runtime: Config::from_vars(var),
            forced,
            rep_ms: DEFAULT_REP_MS,
        }
    }
}

/// How a pick was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickedBy {
    /// The forced setting.
    Forced,
    /// The learned heuristic.
    Heuristic,
    /// The pick cache (an earlier benchmark, maybe in another process).
    Cache,
    /// Benchmarking every sub-kernel now.
    Benchmark,
}

/// A decision.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelPick {
    /// Index of the picked sub-kernel.
    pub index: usize,
    /// Its name (borrowed from the sub-kernel's when that is a `&'static str`).
    pub choice: Cow<'static, str>,
    /// How it was decided.
    pub by: PickedBy,
    /// Per sub-kernel time in ms (`inf` for a failure), when benchmarked.
    pub timings_ms: Option<Vec<f64>>,
    /// Why the heuristic gave no usable answer, when it was asked and did not decide.
    pub unsure: Option<UnsureReason>,
    /// Cache problems met (stale entry ignored, write failed).
    pub warnings: Vec<String>,
}

/// One operation with several sub-kernels, for one set of size hints.
pub struct MultiKernel<'a> {
    name: String,
    kernels: Vec<SubKernel<'a>>,
    context: Context,
    device: DeviceIdentity,
    picked: Option<KernelPick>,
}

impl fmt::Debug for MultiKernel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MultiKernel")
            .field("name", &self.name)
            .field("kernels", &self.kernels)
            .field("picked", &self.picked)
            .finish_non_exhaustive()
    }
}

impl<'a> MultiKernel<'a> {
    /// A multi-kernel for operation `name` (the heuristic's name, e.g. `reduction`), with the
    /// decision's context (size hints: the features the heuristic reads) and the device
    /// identity heuristics are matched on.
    pub fn new(
        name: impl Into<String>,
        kernels: Vec<SubKernel<'a>>,
        context: Context,
        device: DeviceIdentity,
    ) -> Result<Self, MultiKernelError> {
        let name = name.into();
        if kernels.is_empty() {
            return Err(MultiKernelError::NoSubKernels(name));
        }
        for (i, k) in kernels.iter().enumerate() {
            if kernels[..i].iter().any(|o| o.name == k.name) {
                return Err(MultiKernelError::DuplicateName {
                    name,
                    choice: k.name.to_string(),
                });
            }
        }
        Ok(Self {
            name,
            kernels,
            context,
            device,
            picked: None,
        })
    }

    /// The sub-kernels' names, in order.
    pub fn choices(&self) -> Vec<String> {
        self.kernels.iter().map(|k| k.name.to_string()).collect()
    }

    /// The decision's pick-cache key: name `multi_kernel/{name}`, the context (size hints) and
    /// one `{choice}#{source hash}` per sub-kernel, in order. The device fingerprint is the
    /// cache's guard.
    pub fn cache_key(&self) -> CacheKey {
        let kernels: Vec<String> = self
            .kernels
            .iter()
            .map(|k| format!("{}#{}", k.name, k.source_hash))
            .collect();
        CacheKey::new(
            &format!("multi_kernel/{}", self.name),
            &self.context,
            &kernels,
        )
    }

    /// The pick made so far, if any.
    pub fn picked(&self) -> Option<&KernelPick> {
        self.picked.as_ref()
    }

    fn index_of(&self, choice: &str) -> Option<usize> {
        self.kernels.iter().position(|k| k.name == choice)
    }

    /// Asks the registry's heuristic: the index of a sure answer among the sub-kernels, or
    /// why there is none. Allocation-free when the heuristic is sure.
    pub fn ask_heuristic(&self, registry: &Registry) -> Result<usize, UnsureReason> {
        let md = HeuristicMetadata {
            device: self.device,
            name: &self.name,
            choices: &[],
        };
        let h = registry
            .find(&md, &self.context)
            .ok_or(UnsureReason::NoHeuristic)?;
        match h.decide(&self.context) {
            Decision::Choice(i) => {
                let name = h.choices().get(i).ok_or(UnsureReason::NotInChoices)?;
                self.index_of(name).ok_or(UnsureReason::NotInChoices)
            }
            Decision::Unsure(r) => Err(r),
        }
    }

    /// Decides (once; later calls return the same pick). `registry` is asked in use mode;
    /// `cache` is read and written unless the cache is disabled.
    pub fn pick(
        &mut self,
        config: &MultiKernelConfig,
        registry: Option<&Registry>,
        cache: Option<&mut PickCache>,
    ) -> Result<&KernelPick, MultiKernelError> {
        if self.picked.is_none() {
            let pick = self.decide(config, registry, cache)?;
            self.picked = Some(pick);
        }
        Ok(self.picked.as_ref().expect("set above"))
    }

    fn decide(
        &mut self,
        config: &MultiKernelConfig,
        registry: Option<&Registry>,
        cache: Option<&mut PickCache>,
    ) -> Result<KernelPick, MultiKernelError> {
        let pick = |index: usize, this: &Self, by| KernelPick {
            index,
            choice: this.kernels[index].name.clone(),
            by,
            timings_ms: None,
            unsure: None,
            warnings: Vec::new(),
        };
        if let Some((forced, value)) = &config.forced {
            let index = match forced {
                Forced::Index(i) => Some(*i).filter(|&i| i < self.kernels.len()),
                Forced::Name(n) => self.index_of(n),
            };
            return match index {
                Some(i) => Ok(pick(i, self, PickedBy::Forced)),
                None => Err(MultiKernelError::ForcedOutOfRange {
                    name: self.name.clone(),
                    value: value.clone(),
                    count: self.kernels.len(),
                    max: self.kernels.len() + 1,
                    choices: self.choices().join(", "),
                }),
            };
        }
        let mut unsure = None;
        if let (Some(registry), true) = (registry, config.runtime.use_enabled(&self.name)) {
            match self.ask_heuristic(registry) {
                Ok(i) => return Ok(pick(i, self, PickedBy::Heuristic)),
                Err(r) => unsure = Some(r),
            }
        }
        let mut cache = cache.filter(|_| !config.runtime.disable_cache);
        let key = self.cache_key();
        let mut warnings = Vec::new();
        if let Some(c) = cache.as_deref_mut() {
            warnings.extend(c.take_warnings());
            match c.lookup(&key) {
                Lookup::Hit(choice) => {
                    if let Some(i) = self.index_of(&choice) {
                        return Ok(KernelPick {
                            unsure,
                            warnings,
                            ..pick(i, self, PickedBy::Cache)
                        });
                    }
                }
                Lookup::Stale { reason } => warnings.push(format!(
                    "{}: ignoring a cached pick for `{}` made under another guard ({reason})",
                    c.path().display(),
                    self.name
                )),
                Lookup::Miss => {}
            }
        }
        let (index, timings) = self.benchmark_all(config.rep_ms)?;
        if let Some(c) = cache {
            let named: BTreeMap<String, f64> = self
                .kernels
                .iter()
                .map(|k| k.name.to_string())
                .zip(timings.iter().copied())
                .collect();
            if let Err(e) = c.put_with_timings(&key, &self.kernels[index].name, named) {
                warnings.push(format!("cannot store the pick: {e}"));
            }
            warnings.extend(c.take_warnings());
        }
        Ok(KernelPick {
            timings_ms: Some(timings),
            unsure,
            warnings,
            ..pick(index, self, PickedBy::Benchmark)
        })
    }

    /// Benchmarks every sub-kernel (`rep_ms` budget each): the fastest index and all times
    /// (`inf` where a sub-kernel failed). Ties go to the earlier sub-kernel.
    pub fn benchmark_all(&mut self, rep_ms: f64) -> Result<(usize, Vec<f64>), MultiKernelError> {
        let mut timings = Vec::with_capacity(self.kernels.len());
        let mut failures = Vec::new();
        for k in &mut self.kernels {
            match (k.benchmark)(rep_ms) {
                Ok(ms) if ms.is_finite() && ms >= 0.0 => timings.push(ms),
                Ok(ms) => {
                    failures.push(format!("{}: time {ms}", k.name));
                    timings.push(f64::INFINITY);
                }
                Err(e) => {
                    failures.push(format!("{}: {e}", k.name));
                    timings.push(f64::INFINITY);
                }
            }
        }
        let best = timings
            .iter()
            .enumerate()
            .filter(|(_, t)| t.is_finite())
            .min_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| i);
        match best {
            Some(i) => Ok((i, timings)),
            None => Err(MultiKernelError::AllFailed {
                name: self.name.clone(),
                failures: failures.join("; "),
            }),
        }
    }

    /// Runs the operation with the picked sub-kernel, deciding first if needed.
    pub fn run(
        &mut self,
        config: &MultiKernelConfig,
        registry: Option<&Registry>,
        cache: Option<&mut PickCache>,
    ) -> Result<&KernelPick, MultiKernelError> {
        let index = self.pick(config, registry, cache)?.index;
        let k = &mut self.kernels[index];
        (k.run)().map_err(|source| MultiKernelError::Run {
            name: self.name.clone(),
            choice: k.name.to_string(),
            source,
        })?;
        Ok(self.picked.as_ref().expect("picked above"))
    }
}

#[cfg(test)]
mod tests;
