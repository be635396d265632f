//! A GEMM of an `inductor_mm` log: its features and Inductor's benchmark times from the log,
//! the compile-time prices and compiled truth from the extras sidecar (`FILE.extras.jsonl`).

use std::collections::HashMap;
use std::path::Path;

use ah_core::Value;
use ah_log::Log;
use ah_log::ReadOptions;
use serde_json::Value as Json;

use super::error::PruneError;
use super::family;
use super::seen::{seen_values, FeatureSource};
use super::sizing;

/// cuBLAS choices the handler keeps first when Inductor offers several (`ATEN_FIRST` in
/// `python/ah_inductor/choices.py`): `bias_addmm` is addmm with the 1-D bias, the call Inductor
/// makes without max-autotune; Inductor's `addmm` choice copies the expanded bias first. For
/// fp32 addmm whose k is long for the size of its output, and for bf16 and fp16 addmm of at
/// least 32 rows whose k is long and not a multiple of 8, the handler keeps `addmm` instead
/// (`expanded_bias_call` there); its compiled truth is not logged, so a pruned list is scored
/// with the 1-D call's (`truth_default_ms`), which measured slower there on average.
pub const PREFERRED_EXTERN: &[&str] = &["extern_bias_addmm"];

/// Triton's `bmm` template is `mm`'s kernel with a batch grid and is offered the same configs:
/// a leaf keeps a config whichever of the two a GEMM offers, so a `triton_bmm_` choice is read
/// under its `triton_mm_` name (`config_name` in `python/ah_inductor/naming.py`, which the
/// handler applies before matching). Without this, a leaf learned mostly on mm GEMMs kept no
/// Triton choice of a bmm at all.
const SAME_CONFIGS: &[(&str, &str)] = &[("triton_bmm_", "triton_mm_")];

/// The name a policy keeps for the logged choice `name`: its family's for a member of one
/// ([`super::family`]), the `mm` config's for a `bmm` config, else `name`.
pub fn config_name(name: &str) -> String {
    if let Some(family) = family::family_of(name) {
        return family.to_string();
    }
    SAME_CONFIGS
        .iter()
        .find_map(|(prefix, canonical)| {
            name.strip_prefix(prefix)
                .map(|rest| format!("{canonical}{rest}"))
        })
        .unwrap_or_else(|| name.to_string())
}

/// One benchmarked choice of a GEMM, made by [`Choice::new`] (which keys its name) and held
/// unchanged by its [`Sample`].
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// Its name (`extern_mm`, `triton_mm_BLOCK-M=...`), read by [`config_name`].
    pub name: String,
    /// Inductor's benchmark time, ms (`inf` when it failed).
    pub bench_ms: f64,
    /// What keeping it costs at compile time, s, whatever else is kept. As logged: code
    /// generation, precompilation and benchmarking, scaled so that the GEMM's prices add up to
    /// its measured autotuning time ([`super::pricing`] prices it otherwise).
    pub price_s: f64,
    /// Its compile seconds, paid in parallel with the other kept choices' (a kept list pays the
    /// slowest) and once more when Inductor picks it: 0 as logged ([`super::pricing::list_s`]).
    pub compile_s: f64,
    /// Its logged code generation and precompile seconds: what
    /// [`super::pricing::Pricing::OnePtxas`] prices it from.
    parts: (f64, f64),
    /// For a family's choice ([`Choice::family`]), its members other than the fastest: how
    /// many, and the sum of their finite benchmark times, ms; (0, 0) for one choice.
    others: (u32, f64),
    /// [`name_key`] of the name: a grid scores outcomes millions of times, and comparing
    /// names as strings took most of its time.
    key: u64,
    /// The name a ranking credits this choice to: its own, or the larger config Inductor sized
    /// it from ([`super::sizing::representative`]), set by [`Samples::size_offers`].
    ranked_as: String,
    ranked_key: u64,
    is_extern: bool,
    /// A `triton_mm` config whose pipeline needs more shared memory than the device has at
    /// this GEMM's operand widths ([`Samples::mark_unfit`]).
    unfit: bool,
}

impl Choice {
    /// A choice named `name` (read by [`config_name`] already).
    pub fn new(name: String, bench_ms: f64, price_s: f64) -> Choice {
        Choice {
            key: name_key(&name),
            ranked_key: name_key(&name),
            ranked_as: name.clone(),
            is_extern: name.starts_with("extern_"),
            name,
            bench_ms,
            price_s,
            compile_s: 0.0,
            parts: (0.0, 0.0),
            others: (0, 0.0),
            unfit: false,
        }
    }

    /// With its logged code generation and precompile seconds.
    pub fn with_parts(mut self, gen_s: f64, precompile_s: f64) -> Choice {
        self.parts = (gen_s, precompile_s);
        self
    }

    /// One choice for a family's `members` (at least one; [`super::family`]): the fastest
    /// member's benchmark time (Inductor picks it), the members' prices and code generation
    /// summed, the slowest member's precompile (they precompile in parallel), and the others'
    /// benchmark times ([`Choice::others`]).
    pub fn family(members: &[Choice]) -> Choice {
        let fastest = (0..members.len())
            .min_by(|&a, &b| members[a].bench_ms.total_cmp(&members[b].bench_ms))
            .unwrap_or(0);
        let finite_ms = members
            .iter()
            .enumerate()
            .filter(|&(i, c)| i != fastest && c.bench_ms.is_finite())
            .map(|(_, c)| c.bench_ms)
            .sum();
        let gen_s = members.iter().map(Choice::gen_s).sum();
        let precompile_s = members.iter().map(Choice::precompile_s).fold(0.0, f64::max);
        let price_s = members.iter().map(|c| c.price_s).sum();
        let mut c = Choice::new(
            members[fastest].name.clone(),
            members[fastest].bench_ms,
            price_s,
        )
        .with_parts(gen_s, precompile_s);
        let others = members.len().saturating_sub(1);
        c.others = (u32::try_from(others).unwrap_or(u32::MAX), finite_ms);
        c
    }

    /// A family's members other than the fastest, which keeping it also benchmarks: how many,
    /// and the sum of their finite benchmark times, ms; (0, 0) for one choice.
    pub fn others(&self) -> (u32, f64) {
        self.others
    }

    /// Its logged code generation seconds.
    pub fn gen_s(&self) -> f64 {
        self.parts.0
    }

    /// Its logged precompile seconds (0 for a cuBLAS choice).
    pub fn precompile_s(&self) -> f64 {
        self.parts.1
    }

    /// ATen (cuBLAS) choices, which a pruned list always keeps.
    pub fn is_extern(&self) -> bool {
        self.is_extern
    }

    /// Whether it is a `triton_mm` config that cannot run on the GEMM's device at its operand
    /// widths ([`Samples::mark_unfit`]).
    pub fn is_unfit(&self) -> bool {
        self.unfit
    }

    pub(super) fn set_unfit(&mut self, unfit: bool) {
        self.unfit = unfit;
    }

    /// [`name_key`] of its own name.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The name a ranking credits this choice to, with its [`name_key`].
    pub fn ranked_as(&self) -> (u64, &str) {
        (self.ranked_key, &self.ranked_as)
    }
}

/// A 64-bit hash of a choice name, fixed for the process (a [`Choice`] keys its name with it once).
pub fn name_key(name: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(name)
}

/// The ATen op of a GEMM, as its `op` feature logs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GemmOp {
    /// `mm`.
    Mm,
    /// `addmm` (a linear with bias).
    Addmm,
    /// `bmm`.
    Bmm,
}

impl GemmOp {
    /// Every op, in the order of [`GemmOp::index`].
    pub const ALL: [GemmOp; 3] = [GemmOp::Mm, GemmOp::Addmm, GemmOp::Bmm];

    /// Its name as logged.
    pub fn name(self) -> &'static str {
        match self {
            GemmOp::Mm => "mm",
            GemmOp::Addmm => "addmm",
            GemmOp::Bmm => "bmm",
        }
    }

    /// The op logged as `name`, if it is one of [`GemmOp::ALL`].
    pub fn parse(name: &str) -> Option<GemmOp> {
        GemmOp::ALL.into_iter().find(|o| o.name() == name)
    }

    /// Its position in [`GemmOp::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One measured GEMM. Its choices are fixed once made: which of them is the kept cuBLAS choice
/// and which Inductor picks are found once, in [`Sample::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The logged feature values, header order.
    pub values: Vec<Value>,
    /// The same features of the GEMM as Inductor handed it to the choices handler (the extras
    /// line's `seen`, [`super::seen`]), where the line has them.
    pub seen: Option<Vec<Value>>,
    choices: Vec<Choice>,
    /// Compiled truth without max-autotune (cuBLAS), ms per call.
    pub truth_default_ms: f64,
    /// Compiled truth of Inductor's max-autotune pick, ms per call.
    pub truth_autotune_ms: f64,
    /// Compile time under max-autotune minus without it, s.
    pub autotune_s: f64,
    /// Its op, where the log has an `op` feature ([`Samples::read_ops`]).
    pub op: Option<GemmOp>,
    /// The file name of the log it was read from ([`load`]; empty for GEMMs made in code), so
    /// that a report can score each log's GEMMs apart: a log is one region of GEMMs (the
    /// default mixture, decode, attention, tiny products, many tokens).
    pub log: String,
    /// Whether it was measured with one ptxas (`AH_INDUCTOR_PTXAS=align`, the extras line's
    /// `worker.settings.ah_ptxas`), as users of the handler compile; else as PyTorch leaves it.
    pub one_ptxas: bool,
    /// Searches whose fastest benchmark is under this many ms are scored as the handler's
    /// re-timing picks ([`super::retime`]; set by [`Samples::model_retime`]); `None`: as
    /// Inductor's benchmark picks.
    pub retime_below_ms: Option<f64>,
    kept_extern: Option<usize>,
    winner: Option<usize>,
    /// Which choice a kept name keeps: ([`name_key`] of the name, choice index), sorted by
    /// key. A template choice is kept by its own name and, once [`Samples::size_offers`] ran,
    /// by every name Inductor sizes to it for this GEMM ([`super::sizing`]).
    offers: Vec<(u64, usize)>,
}

impl Sample {
    /// A GEMM with its choices (log order), compiled truths (ms per call) and autotuning
    /// time (s).
    pub fn new(
        values: Vec<Value>,
        choices: Vec<Choice>,
        truth_default_ms: f64,
        truth_autotune_ms: f64,
        autotune_s: f64,
    ) -> Sample {
        let winner = fastest(choices.iter().enumerate()).map(|(i, _)| i);
        let kept_extern = kept_extern(&choices);
        let offers = own_offers(&choices);
        Sample {
            values,
            seen: None,
            choices,
            truth_default_ms,
            truth_autotune_ms,
            autotune_s,
            op: None,
            log: String::new(),
            one_ptxas: false,
            retime_below_ms: None,
            kept_extern,
            winner,
            offers,
        }
    }

    /// The index of the template choice that a kept name whose [`name_key`] is `key` keeps,
    /// if any. (Keys are 64-bit hashes of a few hundred names: a collision is a 1e-15 chance.)
    pub fn offered(&self, key: u64) -> Option<usize> {
        self.offers
            .binary_search_by_key(&key, |&(k, _)| k)
            .ok()
            .map(|i| self.offers[i].1)
    }

    /// Sets which choice each name of `universe` keeps on this GEMM of `dims` (m, n, k) as
    /// Inductor sizes configs ([`super::sizing`]), and what a ranking credits each choice to.
    fn size_offers(&mut self, universe: &[String], dims: (i64, i64, i64)) {
        let names: Vec<&str> = self.choices.iter().map(|c| c.name.as_str()).collect();
        let sized = sizing::sized_offers(universe, &names, dims);
        for c in self.choices.iter_mut() {
            c.ranked_as = c.name.clone();
        }
        for &(u, i) in &sized {
            let c = &mut self.choices[i];
            c.ranked_as = sizing::representative(&c.ranked_as, u).to_string();
        }
        for c in self.choices.iter_mut() {
            c.ranked_key = name_key(&c.ranked_as);
        }
        let mut offers = own_offers(&self.choices);
        offers.extend(sized.iter().map(|&(u, i)| (name_key(u), i)));
        self.offers = sorted_offers(offers);
    }

    /// Its choices, log order.
    pub fn choices(&self) -> &[Choice] {
        &self.choices
    }

    /// Its choices, to price them ([`super::pricing`]); names and benchmark times stay.
    pub(super) fn choices_mut(&mut self) -> impl Iterator<Item = &mut Choice> {
        self.choices.iter_mut()
    }

    /// The faster of cuBLAS and Inductor's pick in compiled truth.
    pub fn best_truth_ms(&self) -> f64 {
        self.truth_default_ms.min(self.truth_autotune_ms)
    }

    /// Inductor's pick among all choices (fastest benchmark, first on ties).
    pub fn winner(&self) -> Option<&Choice> {
        self.winner.map(|i| &self.choices[i])
    }

    /// The index of [`Sample::winner`].
    pub fn winner_index(&self) -> Option<usize> {
        self.winner
    }

    /// The one cuBLAS choice a pruned list keeps: the first of [`PREFERRED_EXTERN`] logged,
    /// else the first cuBLAS choice. Its compiled truth is `truth_default_ms`.
    pub fn kept_extern(&self) -> Option<&Choice> {
        self.kept_extern.map(|i| &self.choices[i])
    }

    /// The index of [`Sample::kept_extern`].
    pub fn kept_extern_index(&self) -> Option<usize> {
        self.kept_extern
    }
}

/// Each template choice kept by its own name, sorted.
fn own_offers(choices: &[Choice]) -> Vec<(u64, usize)> {
    let own = choices.iter().enumerate().filter(|(_, c)| !c.is_extern());
    sorted_offers(own.map(|(i, c)| (c.key, i)).collect())
}

/// The template names of `samples` (read by [`config_name`]), sorted, each once:
/// the names a kept list can hold.
pub fn universe<'a>(samples: impl Iterator<Item = &'a Sample>) -> Vec<String> {
    let mut names: Vec<String> = samples
        .flat_map(|s| s.choices().iter())
        .filter(|c| !c.is_extern())
        .map(|c| c.name.clone())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// `offers` sorted by key, each key once.
fn sorted_offers(mut offers: Vec<(u64, usize)>) -> Vec<(u64, usize)> {
    offers.sort_unstable();
    offers.dedup_by_key(|&mut (k, _)| k);
    offers
}

/// The index of the cuBLAS choice a pruned list keeps (see [`Sample::kept_extern`]).
fn kept_extern(choices: &[Choice]) -> Option<usize> {
    let externs = || choices.iter().enumerate().filter(|(_, c)| c.is_extern());
    PREFERRED_EXTERN
        .iter()
        .find_map(|name| externs().find(|(_, c)| c.name == *name))
        .or_else(|| externs().next())
        .map(|(i, _)| i)
}

/// The fastest finite choice of `choices` with its index (first on ties).
fn fastest<'a>(choices: impl Iterator<Item = (usize, &'a Choice)>) -> Option<(usize, &'a Choice)> {
    choices.fold(None, faster)
}

/// One step of `fastest`: `c` when it is finite and faster than `best` so far.
pub fn faster<'a>(
    best: Option<(usize, &'a Choice)>,
    c: (usize, &'a Choice),
) -> Option<(usize, &'a Choice)> {
    match best {
        _ if !c.1.bench_ms.is_finite() => best,
        Some(b) if b.1.bench_ms <= c.1.bench_ms => Some(b),
        _ => Some(c),
    }
}

/// A GEMM's (choice, benchmark ms) pairs, log order.
type ChoiceTimes = Vec<(String, f64)>;

/// A log's GEMMs with their extras, and its feature names.
#[derive(Debug, Clone)]
pub struct Samples {
    /// The log's metadata (device identity, which features are categorical).
    pub metadata: ah_core::Metadata,
    /// Logged feature names, header order.
    pub features: Vec<String>,
    /// The GEMMs, in log order.
    pub samples: Vec<Sample>,
    /// GEMMs of the log without a usable extras line (skipped).
    pub without_extras: usize,
    /// GEMMs logged after the ones trained on (`--first`), scored as held out.
    pub later: Vec<Sample>,
}

impl Samples {
    /// Puts each GEMM's [`Sample::seen`] features in place of its logged ones, where it has
    /// them (`ah-prune --features seen`); returns how many GEMMs changed.
    pub fn use_seen(&mut self) -> usize {
        let mut changed = 0;
        for s in self.samples.iter_mut().chain(self.later.iter_mut()) {
            if let Some(seen) = s.seen.take() {
                changed += usize::from(seen != s.values);
                s.values = seen;
            }
        }
        changed
    }

    /// Sets every GEMM's [`Sample::op`] from its `op` feature (nothing without one).
    pub fn read_ops(&mut self) {
        let Some(at) = self.features.iter().position(|f| f == "op") else {
            return;
        };
        for s in self.samples.iter_mut().chain(self.later.iter_mut()) {
            s.op = match &s.values[at] {
                Value::Str(name) => GemmOp::parse(name),
                _ => None,
            };
        }
    }

    /// Sets, on every GEMM (later ones included), which choice each template name of the
    /// training GEMMs keeps there as Inductor sizes configs to the GEMM ([`super::sizing`]).
    /// Only the training GEMMs' names count, so GEMMs logged later change nothing of a tree
    /// trained with `--first`. A log without `m`, `n` and `k` features keeps every choice by its
    /// own name only.
    pub fn size_offers(&mut self) {
        let at = |name: &str| self.features.iter().position(|f| f == name);
        let (Some(m), Some(n), Some(k)) = (at("m"), at("n"), at("k")) else {
            return;
        };
        let universe = universe(self.samples.iter());
        for s in self.samples.iter_mut().chain(self.later.iter_mut()) {
            let dim = |i: usize| match s.values[i] {
                Value::Int(v) => Some(v),
                Value::Float(v) if v.fract() == 0.0 => Some(v as i64),
                _ => None,
            };
            if let (Some(m), Some(n), Some(k)) = (dim(m), dim(n), dim(k)) {
                s.size_offers(&universe, (m, n, k));
            }
        }
    }
}

/// Reads `logs` (each with its extras sidecar, `ah_log::extras_path`) as one set of GEMMs, in the
/// order given. The logs must be of one runner and device with the same features (e.g. the
/// default and the decode mixture of `inductor_mm`); a GEMM in two logs counts once, first.
pub fn load_logs(
    logs: &[std::path::PathBuf],
    source: FeatureSource,
) -> Result<Samples, PruneError> {
    let mut parts = read_logs(logs, source)?.into_iter();
    let mut all = parts.next().expect("read_logs reads at least one log");
    for more in parts {
        all.without_extras += more.without_extras;
        push_new(&mut all.samples, more.samples, &[]);
    }
    all.size_offers();
    Ok(all)
}

/// Refuses `--first n` for `logs` that hold only `len` GEMMs with compiled truth: the command
/// would take GEMMs logged later as the logs grow, and train on other GEMMs than the ones it
/// names (a shipped command said 400 of an attention log of 383, and trained on 400 once the
/// log grew).
pub fn check_first(logs: &str, n: usize, len: usize) -> Result<(), PruneError> {
    if n <= len {
        return Ok(());
    }
    Err(PruneError::Params(format!(
        "{logs}: --first {n}, but only {len} GEMMs have compiled truth: give {len}, the count the report names (a larger count takes GEMMs logged later once the log grows)"
    )))
}

/// [`load_logs`], training on the first `counts[i]` GEMMs of `logs[i]` only and holding the
/// rest of each log out (`later`): a command stays reproducible however much each of its logs
/// grows, where one count over the logs in a row (`--first N`) shifts when an earlier log grows.
pub fn load_logs_first(
    logs: &[std::path::PathBuf],
    counts: &[usize],
    source: FeatureSource,
) -> Result<Samples, PruneError> {
    if counts.len() != logs.len() {
        return Err(PruneError::Params(format!(
            "--first gives {} counts for {} logs: give one count, or one per log in the order of the logs",
            counts.len(),
            logs.len()
        )));
    }
    let mut parts = read_logs(logs, source)?;
    let mut later = Vec::new();
    for ((part, &n), log) in parts.iter_mut().zip(counts).zip(logs) {
        check_first(&log.display().to_string(), n, part.samples.len())?;
        later.push(part.samples.split_off(n));
    }
    let mut parts = parts.into_iter();
    let mut all = parts.next().expect("read_logs reads at least one log");
    for more in parts {
        all.without_extras += more.without_extras;
        push_new(&mut all.samples, more.samples, &[]);
    }
    for rest in later {
        push_new(&mut all.later, rest, &all.samples);
    }
    all.size_offers();
    Ok(all)
}

/// Each of `logs`, read alone, its GEMMs with the features of `source`; an error where one's
/// metadata or features differ from the first's.
fn read_logs(
    logs: &[std::path::PathBuf],
    source: FeatureSource,
) -> Result<Vec<Samples>, PruneError> {
    let first = logs
        .first()
        .ok_or_else(|| PruneError::Params("give at least one inductor_mm log".into()))?;
    let mut parts: Vec<Samples> = Vec::with_capacity(logs.len());
    for log in logs {
        let mut part = load(log, &ah_log::extras_path(log))?;
        if source == FeatureSource::Seen {
            part.use_seen();
        }
        if let Some(head) = parts.first() {
            if part.metadata != head.metadata || part.features != head.features {
                return Err(PruneError::Input {
                    path: log.clone(),
                    line: 1,
                    message: format!(
                        "its metadata or features differ from {}'s: train on logs of one runner and device",
                        first.display()
                    ),
                });
            }
        }
        parts.push(part);
    }
    Ok(parts)
}

/// Appends to `to` the GEMMs of `more` that neither `to` nor `also` holds yet.
fn push_new(to: &mut Vec<Sample>, more: Vec<Sample>, also: &[Sample]) {
    for s in more {
        let known = |xs: &[Sample]| xs.iter().any(|t| t.values == s.values);
        if !known(to) && !known(also) {
            to.push(s);
        }
    }
}

/// Reads `log` and its extras sidecar `extras` (or `extras.gz`). Its GEMMs keep each choice
/// by its own name until [`Samples::size_offers`] runs ([`load_logs`] runs it).
pub fn load(log: &Path, extras: &Path) -> Result<Samples, PruneError> {
    let file_name = log.file_name().map_or_else(
        || log.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    let log = Log::read(log, ReadOptions::default()).map_err(PruneError::Log)?;
    let by_key = read_extras(extras)?;
    let mut order: Vec<String> = Vec::new();
    let mut rows: HashMap<String, (Vec<Value>, ChoiceTimes)> = HashMap::new();
    // A GEMM drawn twice is logged twice (four GEMMs of the main H100 log, seven of the
    // attention log): its first run of rows counts, as its first extras line does, so that a
    // log grown by appending never changes the GEMMs a `--first` command trained on.
    let mut current: Option<String> = None;
    for row in &log.rows {
        let key = row
            .values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(",");
        if current.as_ref() != Some(&key) && rows.contains_key(&key) {
            continue;
        }
        current = Some(key.clone());
        let entry = rows.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            (row.values.to_vec(), Vec::new())
        });
        let name = log.choice_name(row);
        match entry.1.iter_mut().find(|(n, _)| n == name) {
            Some(known) => known.1 = row.feedback,
            None => entry.1.push((name.to_string(), row.feedback)),
        }
    }
    let mut samples = Vec::new();
    let mut without_extras = 0;
    for key in order {
        let (values, times) = rows.remove(&key).expect("grouped above");
        match by_key
            .get(&key)
            .and_then(|x| sample(values, &times, x, &log.features))
        {
            Some(s) => samples.push(Sample {
                log: file_name.clone(),
                ..s
            }),
            None => without_extras += 1,
        }
    }
    let mut samples = Samples {
        metadata: log.metadata.clone(),
        features: log.features.clone(),
        samples,
        without_extras,
        later: Vec::new(),
    };
    samples.read_ops();
    Ok(samples)
}

/// The extras lines by their `features` text; the first line of a GEMM wins (see [`load`]).
/// `extras` is the sidecar's name: it is read from it, or from `extras.gz`
/// (`ah_log::read_sidecar`), and a line's error names the file read.
fn read_extras(extras: &Path) -> Result<HashMap<String, Json>, PruneError> {
    let (path, text) = extras_text(extras)?;
    let path = path.as_path();
    let mut map = HashMap::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: Json = serde_json::from_str(line).map_err(|e| PruneError::Input {
            path: path.to_path_buf(),
            line: i + 1,
            message: format!(
                "not a JSON object ({e}); a line cut by a crash is the last one: delete it"
            ),
        })?;
        let Some(key) = v["features"].as_str() else {
            return Err(PruneError::Input {
                path: path.to_path_buf(),
                line: i + 1,
                message: "no \"features\" text: this is not an ah-collect extras sidecar".into(),
            });
        };
        map.entry(key.to_string()).or_insert(v);
    }
    Ok(map)
}

/// The file the extras sidecar `extras` is read from, and its text; an error when there is
/// none (neither `extras` nor `extras.gz`) or it is not UTF-8.
fn extras_text(extras: &Path) -> Result<(std::path::PathBuf, String), PruneError> {
    let io = |path: &Path, source| PruneError::Io {
        path: path.to_path_buf(),
        source,
    };
    let Some((path, bytes)) = ah_log::read_sidecar(extras)? else {
        let missing = std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such file, nor a gzip-compressed one (.gz)",
        );
        return Err(io(extras, missing));
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        io(
            &path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    })?;
    Ok((path, text))
}

/// A sample from a GEMM's log times and its extras line; `None` when the extras lack truth.
fn sample(
    values: Vec<Value>,
    times: &[(String, f64)],
    x: &Json,
    features: &[String],
) -> Option<Sample> {
    let truth_default_ms = positive(&x["truth_ms"]["default"])?;
    let truth_autotune_ms = positive(&x["truth_ms"]["max_autotune"])?;
    let autotune_s =
        (x["compile_s"]["max_autotune"].as_f64()? - x["compile_s"]["default"].as_f64()?).max(0.0);
    let logged = logged(x);
    let raw = raw_prices(x, &logged);
    let parts: HashMap<&str, Logged> = logged.iter().map(|(n, l)| (n.as_str(), *l)).collect();
    let total: f64 = times
        .iter()
        .map(|(n, _)| raw.get(n).copied().unwrap_or(0.0))
        .sum();
    let scale = if total > 0.0 { autotune_s / total } else { 0.0 };
    let choices = times
        .iter()
        .map(|(name, t)| {
            let price_s = raw.get(name).copied().unwrap_or(0.0) * scale;
            let l = parts.get(name.as_str()).copied().unwrap_or_default();
            Choice::new(config_name(name), *t, price_s).with_parts(l.gen_s, l.precompile_s)
        })
        .collect();
    let choices = family::merge(choices, |c| c.name.as_str(), Choice::family);
    let mut s = Sample::new(
        values,
        choices,
        truth_default_ms,
        truth_autotune_ms,
        autotune_s,
    );
    s.one_ptxas = x["worker"]["settings"]["ah_ptxas"].as_str() == Some("align");
    s.seen = seen_values(&s.values, features, &x["seen"]);
    Some(s)
}

/// A choice's logged seconds: code generation, benchmarking, precompilation.
#[derive(Debug, Clone, Copy, Default)]
struct Logged {
    gen_s: f64,
    bench_s: f64,
    precompile_s: f64,
}

/// Each named choice's logged seconds, in the extras line's order.
fn logged(x: &Json) -> Vec<(String, Logged)> {
    let f = |c: &Json, k: &str| c[k].as_f64().unwrap_or(0.0).max(0.0);
    let list = x["choices"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    list.iter()
        .filter_map(|c| {
            let name = c["name"].as_str()?.to_string();
            let seconds = Logged {
                gen_s: f(c, "gen_s"),
                bench_s: f(c, "bench_s"),
                precompile_s: f(c, "precompile_s"),
            };
            Some((name, seconds))
        })
        .collect()
}

/// Unscaled price per choice: generation + benchmarking + its share of the precompile
/// phase's wall time (precompilation runs in parallel: each choice's precompile seconds are
/// scaled by the phase's wall time over their sum).
fn raw_prices(x: &Json, logged: &[(String, Logged)]) -> HashMap<String, f64> {
    let pre_sum: f64 = logged.iter().map(|(_, l)| l.precompile_s).sum();
    let pre_wall = x["autotune_phases_s"]["precompile"]
        .as_f64()
        .unwrap_or(pre_sum);
    let pre_scale = if pre_sum > 0.0 {
        pre_wall / pre_sum
    } else {
        0.0
    };
    logged
        .iter()
        .map(|(name, l)| {
            let price = l.gen_s + l.bench_s + l.precompile_s * pre_scale;
            (name.clone(), price)
        })
        .collect()
}

fn positive(v: &Json) -> Option<f64> {
    v.as_f64().filter(|t| t.is_finite() && *t > 0.0)
}
