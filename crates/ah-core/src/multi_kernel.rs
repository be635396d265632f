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
//! 1. a forced choice ([`MultiKernelConfig::forced`], `AUTOHEURISTIC_MULTI_KERNEL=2` takes
//!    sub-kernel 0, `3` sub-kernel 1, ... like `TORCHINDUCTOR_MULTI_KERNEL`; a choice name is
//!    accepted too);
//! 2. in use mode (`AUTOHEURISTIC_USE` lists the operation's name), the first heuristic of
//!    the [`Registry`] whose precondition holds: a sure answer that names one of the
//!    sub-kernels is taken as it is, with no file access and no benchmark;
//! 3. the pick cache ([`PickStore`]), keyed by [`pick_key`]: the operation's name, every
//!    sub-kernel's name and source hash, the size hints (the context's feature values) and
//!    the device fingerprint, so an edited kernel, another shape or another device never
//!    reuses a pick;
//! 4. benchmarking every sub-kernel (a failing one counts as `inf`), taking the fastest and
//!    storing it in the cache.
//!
//! `AUTOHEURISTIC_DISABLE_CACHE=1` skips step 3 and the store of step 4.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::context::Context;
use crate::heuristic::{HeuristicMetadata, Registry};
use crate::metadata::DeviceIdentity;
use crate::model::{Decision, UnsureReason};

/// An error a sub-kernel's closures report (launch failure, row too long, ...).
pub type KernelFailure = Box<dyn std::error::Error + Send + Sync>;

/// Environment variable that forces a sub-kernel: `2` is the first, `3` the second, ...
/// (`TORCHINDUCTOR_MULTI_KERNEL`'s debug values), or a sub-kernel's name; `0`, `1` or unset
/// decide normally.
pub const ENV_FORCE: &str = "AUTOHEURISTIC_MULTI_KERNEL";
/// Environment variable that turns the pick cache off when it is `1`.
pub const ENV_DISABLE_CACHE: &str = "AUTOHEURISTIC_DISABLE_CACHE";
/// Environment variable listing (comma-separated, exact names) the operations whose learned
/// heuristic is asked.
pub const ENV_USE: &str = "AUTOHEURISTIC_USE";
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
        "{ENV_FORCE}={value}: multi-kernel `{name}` has {count} sub-kernels ({choices}); \
         use 2..={max} or one of the names"
    )]
    ForcedOutOfRange {
        /// The operation.
        name: String,
        /// The setting as given.
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
    /// Writing the pick cache failed (reading problems are misses, never errors).
    #[error("multi-kernel pick cache: {0}")]
    Cache(String),
}

/// One way to compute the operation, supplied by the caller.
pub struct SubKernel<'a> {
    name: String,
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
    /// `rep` ms).
    pub fn new(
        name: impl Into<String>,
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
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The cache key of a decision: sha256 (hex) over the operation's name, every sub-kernel's
/// name and source hash (in order), the size hints (the context's feature names and values)
/// and the device fingerprint (any text that names the device, driver and library versions).
pub fn pick_key(
    name: &str,
    kernels: &[(&str, &str)],
    context: &Context,
    device_fingerprint: &str,
) -> String {
    let mut parts: Vec<String> = vec!["multi_kernel/1".into(), name.into()];
    for (k, h) in kernels {
        parts.push(format!("kernel {k} {h}"));
    }
    for f in context.features() {
        parts.push(format!("hint {}={}", f.name, f.value));
    }
    parts.push(format!("device {device_fingerprint}"));
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    source_hash(&refs)
}

/// Where picks are kept between calls and processes. A read problem is a miss (`None`),
/// never an error; an entry whose guard does not match is a miss too.
pub trait PickStore {
    /// The choice name stored under `key`, if any.
    fn get(&self, key: &str) -> Option<String>;
    /// Stores `choice` under `key` (atomically for files).
    fn put(&self, key: &str, choice: &str) -> Result<(), MultiKernelError>;
}

/// A [`PickStore`] in memory (tests, or one process that needs no persistence).
#[derive(Debug, Default)]
pub struct MemoryPickStore {
    picks: Mutex<BTreeMap<String, String>>,
}

impl MemoryPickStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of stored picks.
    pub fn len(&self) -> usize {
        self.picks.lock().map(|p| p.len()).unwrap_or(0)
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PickStore for MemoryPickStore {
    fn get(&self, key: &str) -> Option<String> {
        self.picks.lock().ok()?.get(key).cloned()
    }
    fn put(&self, key: &str, choice: &str) -> Result<(), MultiKernelError> {
        self.picks
            .lock()
            .map_err(|_| MultiKernelError::Cache("poisoned lock".into()))?
            .insert(key.to_string(), choice.to_string());
        Ok(())
    }
}

/// A forced sub-kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forced {
    /// By position (the setting minus 2).
    Index(usize),
    /// By name.
    Name(String),
}

/// How the runtime decides, usually read from the environment ([`MultiKernelConfig::from_env`]).
#[derive(Debug, Clone, PartialEq)]
pub struct MultiKernelConfig {
    /// A forced sub-kernel, and the setting as given (for messages).
    pub forced: Option<(Forced, String)>,
    /// Read and write the pick cache.
    pub cache: bool,
    /// Operation names whose learned heuristic is asked (use mode).
    pub use_names: Vec<String>,
    /// Benchmark budget per sub-kernel, ms.
    pub rep_ms: f64,
}

impl Default for MultiKernelConfig {
    fn default() -> Self {
        Self {
            forced: None,
            cache: true,
            use_names: Vec::new(),
            rep_ms: DEFAULT_REP_MS,
        }
    }
}

impl MultiKernelConfig {
    /// The configuration from the process environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// The configuration from a variable lookup (tests pass a map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let forced = lookup(ENV_FORCE).and_then(|v| {
            let t = v.trim();
            match t.parse::<usize>() {
                Ok(0 | 1) => None,
                Ok(n) => Some((Forced::Index(n - 2), v.clone())),
                Err(_) if t.is_empty() => None,
                Err(_) => Some((Forced::Name(t.to_string()), v.clone())),
            }
        });
        let cache = lookup(ENV_DISABLE_CACHE).as_deref() != Some("1");
        let use_names = lookup(ENV_USE)
            .map(|v| {
                v.split(',')
                    .map(str::to_string)
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        Self {
            forced,
            cache,
            use_names,
            rep_ms: DEFAULT_REP_MS,
        }
    }

    /// True when `name`'s heuristic is asked (PyTorch's exact-match comma list).
    pub fn use_heuristic(&self, name: &str) -> bool {
        self.use_names.iter().any(|n| n == name)
    }
}

/// Where a pick came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickSource {
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
pub struct Pick {
    /// Index of the picked sub-kernel.
    pub index: usize,
    /// Its name.
    pub choice: String,
    /// How it was decided.
    pub source: PickSource,
    /// Per sub-kernel time in ms (`inf` for a failure), when benchmarked.
    pub timings_ms: Option<Vec<f64>>,
    /// Why the heuristic gave no usable answer, when it was asked and did not decide.
    pub heuristic_unsure: Option<UnsureReason>,
}

/// Where a [`MultiKernel`] looks for its decision.
#[derive(Clone, Copy, Default)]
pub struct Deciders<'r> {
    /// Learned heuristics (asked in use mode).
    pub registry: Option<&'r Registry>,
    /// The pick cache.
    pub store: Option<&'r dyn PickStore>,
}

impl fmt::Debug for Deciders<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deciders")
            .field("registry", &self.registry)
            .field("store", &self.store.is_some())
            .finish()
    }
}

/// One operation with several sub-kernels, for one set of size hints.
pub struct MultiKernel<'a> {
    name: String,
    kernels: Vec<SubKernel<'a>>,
    context: Context,
    device: DeviceIdentity,
    fingerprint: String,
    picked: Option<Pick>,
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
    /// A multi-kernel for operation `name` (the heuristic's name, e.g. `reduction`), with
    /// the decision's context (size hints: the features the heuristic reads), the device
    /// identity heuristics are matched on and a device fingerprint for the cache key.
    pub fn new(
        name: impl Into<String>,
        kernels: Vec<SubKernel<'a>>,
        context: Context,
        device: DeviceIdentity,
        fingerprint: impl Into<String>,
    ) -> Result<Self, MultiKernelError> {
        let name = name.into();
        if kernels.is_empty() {
            return Err(MultiKernelError::NoSubKernels(name));
        }
        for (i, k) in kernels.iter().enumerate() {
            if kernels[..i].iter().any(|o| o.name == k.name) {
                return Err(MultiKernelError::DuplicateName {
                    name,
                    choice: k.name.clone(),
                });
            }
        }
        Ok(Self {
            name,
            kernels,
            context,
            device,
            fingerprint: fingerprint.into(),
            picked: None,
        })
    }

    /// The sub-kernels' names, in order.
    pub fn choices(&self) -> Vec<String> {
        self.kernels.iter().map(|k| k.name.clone()).collect()
    }

    /// This decision's cache key (see [`pick_key`]).
    pub fn key(&self) -> String {
        let kernels: Vec<(&str, &str)> = self
            .kernels
            .iter()
            .map(|k| (k.name.as_str(), k.source_hash.as_str()))
            .collect();
        pick_key(&self.name, &kernels, &self.context, &self.fingerprint)
    }

    /// The pick made so far, if any.
    pub fn picked(&self) -> Option<&Pick> {
        self.picked.as_ref()
    }

    fn index_of(&self, choice: &str) -> Option<usize> {
        self.kernels.iter().position(|k| k.name == choice)
    }

    /// Asks the registry's heuristic: the index of a sure answer among the sub-kernels, or
    /// why there is none.
    pub fn ask_heuristic(&self, registry: &Registry) -> Result<usize, UnsureReason> {
        let choices = self.choices();
        let md = HeuristicMetadata {
            device: self.device,
            name: &self.name,
            choices: &choices,
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

    /// Decides (once; later calls return the same pick).
    pub fn pick(
        &mut self,
        config: &MultiKernelConfig,
        deciders: Deciders<'_>,
    ) -> Result<&Pick, MultiKernelError> {
        if self.picked.is_none() {
            let pick = self.decide(config, deciders)?;
            self.picked = Some(pick);
        }
        Ok(self.picked.as_ref().expect("set above"))
    }

    fn decide(
        &mut self,
        config: &MultiKernelConfig,
        deciders: Deciders<'_>,
    ) -> Result<Pick, MultiKernelError> {
        let pick = |index: usize, this: &Self, source| Pick {
            index,
            choice: this.kernels[index].name.clone(),
            source,
            timings_ms: None,
            heuristic_unsure: None,
        };
        if let Some((forced, value)) = &config.forced {
            let index = match forced {
                Forced::Index(i) => Some(*i).filter(|&i| i < self.kernels.len()),
                Forced::Name(n) => self.index_of(n),
            };
            return match index {
                Some(i) => Ok(pick(i, self, PickSource::Forced)),
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
        if let (Some(registry), true) = (deciders.registry, config.use_heuristic(&self.name)) {
            match self.ask_heuristic(registry) {
                Ok(i) => return Ok(pick(i, self, PickSource::Heuristic)),
                Err(r) => unsure = Some(r),
            }
        }
        let store = deciders.store.filter(|_| config.cache);
        let key = self.key();
        if let Some(i) = store
            .and_then(|s| s.get(&key))
            .and_then(|c| self.index_of(&c))
        {
            return Ok(Pick {
                heuristic_unsure: unsure,
                ..pick(i, self, PickSource::Cache)
            });
        }
        let (index, timings) = self.benchmark_all(config.rep_ms)?;
        if let Some(s) = store {
            s.put(&key, &self.kernels[index].name)?;
        }
        Ok(Pick {
            timings_ms: Some(timings),
            heuristic_unsure: unsure,
            ..pick(index, self, PickSource::Benchmark)
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
        deciders: Deciders<'_>,
    ) -> Result<&Pick, MultiKernelError> {
        let index = self.pick(config, deciders)?.index;
        let k = &mut self.kernels[index];
        (k.run)().map_err(|source| MultiKernelError::Run {
            name: self.name.clone(),
            choice: k.name.clone(),
            source,
        })?;
        Ok(self.picked.as_ref().expect("picked above"))
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::collections::HashMap;

    use super::*;
    use crate::heuristic::{LearnedHeuristic, Prediction};

    /// Fake sub-kernels: fixed benchmark times, counters of runs and benchmarks.
    struct Fake {
        runs: Vec<Cell<u32>>,
        benches: Vec<Cell<u32>>,
    }

    impl Fake {
        fn new(n: usize) -> Self {
            Self {
                runs: (0..n).map(|_| Cell::new(0)).collect(),
                benches: (0..n).map(|_| Cell::new(0)).collect(),
            }
        }

        fn kernels<'a>(&'a self, times: &[f64], source: &str) -> Vec<SubKernel<'a>> {
            times
                .iter()
                .enumerate()
                .map(|(i, &t)| {
                    let (runs, benches) = (&self.runs[i], &self.benches[i]);
                    SubKernel::new(
                        format!("k{i}"),
                        source_hash(&[source, &format!("k{i}")]),
                        move || {
                            runs.set(runs.get() + 1);
                            Ok(())
                        },
                        move |rep| {
                            assert_eq!(rep, DEFAULT_REP_MS);
                            benches.set(benches.get() + 1);
                            if t.is_nan() {
                                Err("launch failed".into())
                            } else {
                                Ok(t)
                            }
                        },
                    )
                })
                .collect()
        }

        fn total_benches(&self) -> u32 {
            self.benches.iter().map(Cell::get).sum()
        }
    }

    fn ctx(rows: i64, cols: i64) -> Context {
        let mut c = Context::new();
        c.add("rows", rows)
            .add("cols", cols)
            .add_categorical("op", "sum");
        c
    }

    fn mk<'a>(fake: &'a Fake, times: &[f64], source: &str, c: Context) -> MultiKernel<'a> {
        MultiKernel::new(
            "reduction",
            fake.kernels(times, source),
            c,
            DeviceIdentity::H100,
            "H100",
        )
        .unwrap()
    }

    fn config(vars: &[(&str, &str)]) -> MultiKernelConfig {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        MultiKernelConfig::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn benchmarks_once_then_reuses_the_pick_and_the_cache() {
        let store = MemoryPickStore::new();
        let deciders = Deciders {
            registry: None,
            store: Some(&store),
        };
        let cfg = config(&[]);
        let fake = Fake::new(3);
        let mut mk1 = mk(&fake, &[2.0, 1.0, 3.0], "src", ctx(4, 100));
        let p = mk1.run(&cfg, deciders).unwrap().clone();
        assert_eq!(
            (p.index, p.choice.as_str(), p.source),
            (1, "k1", PickSource::Benchmark)
        );
        assert_eq!(p.timings_ms, Some(vec![2.0, 1.0, 3.0]));
        mk1.run(&cfg, deciders).unwrap();
        assert_eq!(
            fake.total_benches(),
            3,
            "benchmarked on the first call only"
        );
        assert_eq!(fake.runs[1].get(), 2);
        assert_eq!(store.len(), 1);

        // A new call object (another process, as far as the cache knows): no benchmark.
        let fake2 = Fake::new(3);
        let mut mk2 = mk(&fake2, &[2.0, 1.0, 3.0], "src", ctx(4, 100));
        let p2 = mk2.run(&cfg, deciders).unwrap();
        assert_eq!((p2.index, p2.source), (1, PickSource::Cache));
        assert_eq!(fake2.total_benches(), 0);
    }

    #[test]
    fn key_changes_with_source_size_hints_device_and_names() {
        let fake = Fake::new(2);
        let base = mk(&fake, &[1.0, 2.0], "src", ctx(4, 100)).key();
        assert_eq!(
            base,
            mk(&fake, &[1.0, 2.0], "src", ctx(4, 100)).key(),
            "deterministic"
        );
        assert_eq!(base.len(), 64);
        assert_ne!(
            base,
            mk(&fake, &[1.0, 2.0], "src v2", ctx(4, 100)).key(),
            "source"
        );
        assert_ne!(
            base,
            mk(&fake, &[1.0, 2.0], "src", ctx(4, 101)).key(),
            "size hints"
        );
        let other_device = MultiKernel::new(
            "reduction",
            fake.kernels(&[1.0, 2.0], "src"),
            ctx(4, 100),
            DeviceIdentity::H100,
            "H100 driver 581",
        )
        .unwrap();
        assert_ne!(base, other_device.key(), "device fingerprint");
        let mut ks = fake.kernels(&[1.0, 2.0], "src");
        ks.swap(0, 1);
        let swapped =
            MultiKernel::new("reduction", ks, ctx(4, 100), DeviceIdentity::H100, "H100").unwrap();
        assert_ne!(base, swapped.key(), "order of sub-kernels");
    }

    #[test]
    fn edited_source_misses_the_cache_and_benchmarks_again() {
        let store = MemoryPickStore::new();
        let deciders = Deciders {
            registry: None,
            store: Some(&store),
        };
        let cfg = config(&[]);
        let fake = Fake::new(2);
        mk(&fake, &[1.0, 2.0], "src", ctx(8, 8))
            .pick(&cfg, deciders)
            .unwrap();
        let fake2 = Fake::new(2);
        let mut edited = mk(&fake2, &[3.0, 2.0], "src // edited", ctx(8, 8));
        let p = edited.pick(&cfg, deciders).unwrap();
        assert_eq!((p.index, p.source), (1, PickSource::Benchmark));
        assert_eq!(fake2.total_benches(), 2);
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn disabled_cache_neither_reads_nor_writes() {
        let store = MemoryPickStore::new();
        let deciders = Deciders {
            registry: None,
            store: Some(&store),
        };
        let cfg = config(&[(ENV_DISABLE_CACHE, "1")]);
        assert!(!cfg.cache);
        let fake = Fake::new(2);
        mk(&fake, &[1.0, 2.0], "src", ctx(1, 1))
            .pick(&cfg, deciders)
            .unwrap();
        assert!(store.is_empty());
        store
            .put(&mk(&fake, &[1.0, 2.0], "src", ctx(1, 1)).key(), "k1")
            .unwrap();
        let p = mk(&fake, &[1.0, 2.0], "src", ctx(1, 1))
            .pick(&cfg, deciders)
            .unwrap()
            .clone();
        assert_eq!(
            (p.index, p.source),
            (0, PickSource::Benchmark),
            "cache not read"
        );
        assert!(config(&[(ENV_DISABLE_CACHE, "0")]).cache);
    }

    #[test]
    fn forced_choice_by_number_and_name() {
        let fake = Fake::new(2);
        let d = Deciders::default();
        for (v, want) in [("2", 0), ("3", 1), ("k1", 1)] {
            let cfg = config(&[(ENV_FORCE, v)]);
            let p = mk(&fake, &[1.0, 2.0], "s", ctx(1, 1))
                .pick(&cfg, d)
                .unwrap()
                .clone();
            assert_eq!((p.index, p.source), (want, PickSource::Forced), "{v}");
        }
        assert_eq!(fake.total_benches(), 0);
        for v in ["0", "1", ""] {
            assert_eq!(config(&[(ENV_FORCE, v)]).forced, None, "{v}");
        }
        let err = mk(&fake, &[1.0, 2.0], "s", ctx(1, 1))
            .pick(&config(&[(ENV_FORCE, "4")]), d)
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("AUTOHEURISTIC_MULTI_KERNEL=4") && msg.contains("k0, k1"),
            "{msg}"
        );
        assert!(matches!(
            mk(&fake, &[1.0], "s", ctx(1, 1)).pick(&config(&[(ENV_FORCE, "nope")]), d),
            Err(MultiKernelError::ForcedOutOfRange { .. })
        ));
    }

    #[test]
    fn failing_sub_kernels_are_inf_and_all_failing_is_an_error() {
        let fake = Fake::new(3);
        let d = Deciders::default();
        let cfg = config(&[]);
        let p = mk(&fake, &[f64::NAN, 5.0, 4.0], "s", ctx(1, 1))
            .pick(&cfg, d)
            .unwrap()
            .clone();
        assert_eq!(p.index, 2);
        assert_eq!(p.timings_ms.unwrap()[0], f64::INFINITY);
        let err = mk(&fake, &[f64::NAN, f64::NAN], "s", ctx(1, 1))
            .pick(&cfg, d)
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("k0: launch failed; k1: launch failed"),
            "{err}"
        );
        assert!(matches!(
            MultiKernel::new("r", vec![], ctx(1, 1), DeviceIdentity::H100, ""),
            Err(MultiKernelError::NoSubKernels(_))
        ));
        let dup = vec![
            SubKernel::new("a", "h", || Ok(()), |_| Ok(1.0)),
            SubKernel::new("a", "h", || Ok(()), |_| Ok(1.0)),
        ];
        assert!(matches!(
            MultiKernel::new("r", dup, ctx(1, 1), DeviceIdentity::H100, ""),
            Err(MultiKernelError::DuplicateName { .. })
        ));
    }

    #[test]
    fn run_reports_the_sub_kernels_error() {
        let mut mk1 = MultiKernel::new(
            "reduction",
            vec![SubKernel::new(
                "only",
                "h",
                || Err("boom".into()),
                |_| Ok(1.0),
            )],
            ctx(1, 1),
            DeviceIdentity::H100,
            "",
        )
        .unwrap();
        let err = mk1.run(&config(&[]), Deciders::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "multi-kernel `reduction`: sub-kernel `only` failed: boom"
        );
    }

    /// A heuristic that picks by `cols`: k1 below 1000, unsure at 1000 and above.
    struct ByCols;
    static CHOICES: [&str; 3] = ["k0", "k1", "k9"];
    impl LearnedHeuristic for ByCols {
        fn name(&self) -> &'static str {
            "reduction"
        }
        fn heuristic_name(&self) -> &'static str {
            "ReductionTest"
        }
        fn choices(&self) -> &'static [&'static str] {
            &CHOICES
        }
        fn device(&self) -> DeviceIdentity {
            DeviceIdentity::H100
        }
        fn confidence_threshold(&self) -> f64 {
            0.5
        }
        fn predict(&self, context: &Context, _choice: Option<usize>) -> Prediction {
            match context.get("cols").and_then(|v| v.as_f64()) {
                None => Prediction::Unsure(crate::heuristic::UnsureKind::MissingFeature("cols")),
                Some(c) if c < 1000.0 => Prediction::Distribution(&[(0.9, 1), (0.1, 0)]),
                Some(c) if c < 5000.0 => Prediction::Distribution(&[(0.95, 2)]),
                Some(_) => Prediction::Distribution(&[(0.5, 0), (0.5, 1)]),
            }
        }
    }
    static BY_COLS: ByCols = ByCols;

    #[test]
    fn use_mode_asks_the_heuristic_and_falls_back_when_unsure() {
        let mut registry = Registry::new();
        registry.register(&BY_COLS);
        let store = MemoryPickStore::new();
        let deciders = Deciders {
            registry: Some(&registry),
            store: Some(&store),
        };
        let use_cfg = config(&[(ENV_USE, "pad_mm,reduction")]);
        assert!(use_cfg.use_heuristic("reduction") && !use_cfg.use_heuristic("pad"));
        let fake = Fake::new(2);

        // Sure: no benchmark, nothing stored.
        let p = mk(&fake, &[1.0, 2.0], "s", ctx(4, 100))
            .run(&use_cfg, deciders)
            .unwrap()
            .clone();
        assert_eq!((p.index, p.source), (1, PickSource::Heuristic));
        assert_eq!((fake.total_benches(), store.len()), (0, 0));

        // Unsure (low confidence): benchmark, store, and say why.
        let p = mk(&fake, &[1.0, 2.0], "s", ctx(4, 9000))
            .run(&use_cfg, deciders)
            .unwrap()
            .clone();
        assert_eq!((p.index, p.source), (0, PickSource::Benchmark));
        assert_eq!(
            p.heuristic_unsure,
            Some(UnsureReason::LowConfidence { confidence: 0.5 })
        );
        assert_eq!(store.len(), 1);

        // A sure answer that is not one of the sub-kernels ("k9") falls back too.
        let p = mk(&fake, &[1.0, 2.0], "s", ctx(4, 2000))
            .pick(&use_cfg, deciders)
            .unwrap()
            .clone();
        assert_eq!(p.heuristic_unsure, Some(UnsureReason::NotInChoices));
        assert_eq!(p.source, PickSource::Benchmark);

        // Not in use mode, or another device: the heuristic is not asked.
        let p = mk(&fake, &[1.0, 2.0], "s", ctx(4, 100))
            .pick(&config(&[]), deciders)
            .unwrap()
            .clone();
        assert_eq!(
            (p.source, p.heuristic_unsure),
            (PickSource::Benchmark, None)
        );
        let a100 = MultiKernel::new(
            "reduction",
            fake.kernels(&[1.0, 2.0], "s"),
            ctx(4, 100),
            DeviceIdentity::A100,
            "A100",
        )
        .unwrap();
        assert_eq!(
            a100.ask_heuristic(&registry),
            Err(UnsureReason::NoHeuristic)
        );
    }
}
