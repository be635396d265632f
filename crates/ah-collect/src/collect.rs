//! The collection loop: draws sample inputs, measures them on one or more devices and appends
//! the rows to a PyTorch-format log, safely.
//!
//! - **Deterministic samples.** Sample `i` is drawn from a ChaCha8 stream `i` of the seed, so
//!   it is the same input whatever shard, device or resume produced it. `--shard I/N` takes the
//!   samples with `i % N == I`.
//! - **Rows.** Each input gives `reps x choices` rows, repetition-major (PyTorch's
//!   `--num-reps`: for each repetition, every choice), feedback = the minimum of the timed
//!   calls in ms (`inf` when the choice failed). All rows of one input are written with one
//!   `write` and then `fsync`ed, so a kill loses at most the input in flight.
//! - **Sidecars.** `FILE.medians.txt` is the same log with the median of the timed calls as
//!   feedback (train on it for median labelling); `FILE.provenance.json` records the device,
//!   library versions, tool version, seed, command lines and timing method of every session.
//! - **Resume.** Re-running with the same output, seed and sample count skips inputs whose rows
//!   are all in the log; a torn last line, or an incomplete last input, is cut off first.
//! - **Lock.** Every writer of a log (a collection, its repair, a merge onto it) holds the
//!   log's lock, an exclusive `File::try_lock` on the stable sidecar `FILE.lock` (never renamed,
//!   so a merge that replaces the log by a rename cannot orphan it); a merge holds shared locks
//!   on its inputs. A second writer is refused.

pub use ah_core::log::{lock_log, lock_path, LogLock};
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use ah_core::{Log, LogWriter, Metadata, ReadOptions};
use rand::SeedableRng;
use serde_json::json;

use crate::backend::cuda::CudaInitError;
use crate::backend::{
    Backend, BackendInfo, BackendKind, BenchError, CpuBackend, CudaBackend, TimingConfig,
};
use crate::runner::{DrawnInput, DynRunner, MeasuredInput, SampleRng, Target};

/// Errors of a collection or a merge.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// A file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The log format layer refused (e.g. PyTorch's InconsistentMetadata).
    #[error(transparent)]
    Core(#[from] ah_core::Error),
    /// The CUDA backend could not start.
    #[error(transparent)]
    Cuda(#[from] CudaInitError),
    /// A bad request (unknown runner, bad shard, ...), with what to do.
    #[error("{0}")]
    Invalid(String),
    /// Logs to merge differ in their first two lines.
    #[error("{}: {what} differs from {}'s; merge only logs of the same runner, device and features\n  {}: {first}\n  {}: {other}", path.display(), first_path.display(), first_path.display(), path.display())]
    MergeMismatch {
        /// The differing file.
        path: PathBuf,
        /// The reference file (the first one).
        first_path: PathBuf,
        /// `metadata line` or `header`.
        what: &'static str,
        /// The reference line.
        first: String,
        /// The differing line.
        other: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CollectError + '_ {
    move |source| CollectError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Which devices to run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Devices {
    /// The CPU backend.
    Cpu,
    /// These CUDA device ordinals, one worker thread each.
    Cuda(Vec<usize>),
}

/// `--shard I/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, `0..count`.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
}

impl Shard {
    /// All samples.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Parses `I/N` with `I < N`.
    pub fn parse(text: &str) -> Result<Shard, CollectError> {
        let bad = || {
            CollectError::Invalid(format!(
                "--shard `{text}`: expected I/N with 0 <= I < N, e.g. --shard 0/4 for the first of four shards"
            ))
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// True when sample `i` belongs to this shard.
    pub fn contains(&self, i: u64) -> bool {
        i % self.count == self.index
    }
}

/// The samples a collection measures (this shard's), before resume is taken into account.
struct Selection {
    /// `(sample index, feature values)` of this shard's samples, in index order.
    drawn: Vec<(u64, String)>,
    /// The first drawn input (its context names the log's features).
    first: Option<DrawnInput>,
    /// This shard's samples without a draw meeting the precondition.
    no_precondition: u64,
    /// Sample indices skipped as repeats or excluded inputs (all shards).
    skipped: u64,
}

/// Input keys (feature values as logged, comma-joined) of the logs in `paths`, which must be
/// logs of `runner` with the features `features` (else nothing would ever match).
fn excluded_keys(
    paths: &[PathBuf],
    runner: &str,
    features: Option<Vec<String>>,
) -> Result<HashSet<String>, CollectError> {
    let mut keys = HashSet::new();
    for path in paths {
        let log = Log::read(path, ReadOptions::default())?;
        if log.metadata.name != runner {
            return Err(CollectError::Invalid(format!(
                "{}: a `{}` log; --exclude takes logs of the runner being collected (`{runner}`)",
                path.display(),
                log.metadata.name
            )));
        }
        if let Some(f) = features.as_ref().filter(|f| **f != log.features) {
            return Err(CollectError::Invalid(format!(
                "{}: its features ({}) are not the `{runner}` runner's ({}), so none of its \
                 inputs could match; give a log this version of the runner wrote",
                path.display(),
                log.features.join(", "),
                f.join(", ")
            )));
        }
        for row in &log.rows {
            let key: Vec<String> = row.values.iter().map(ToString::to_string).collect();
            keys.insert(key.join(","));
        }
    }
    Ok(keys)
}

/// Sample indices to measure (this shard's part of them). Indices are walked in order over
/// the whole sample space (drawing is cheap, host only) until `num_samples` were taken: plainly
/// `0..num_samples`; with `--distinct` or `--exclude`, indices whose input repeats an earlier
/// one or is excluded are skipped. The same indices on every shard, machine and resume.
fn select_samples(
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    target: &Target,
) -> Result<Selection, CollectError> {
    let mut sel = Selection {
        drawn: Vec::new(),
        first: None,
        no_precondition: 0,
        skipped: 0,
    };
    let excluded = if cfg.exclude.is_empty() {
        HashSet::new()
    } else {
        let features = runner
            .draw(&mut sample_rng(cfg.seed, 0), target, cfg.max_draws)
            .map(|d| {
                d.context
                    .features()
                    .iter()
                    .map(|f| f.name.to_string())
                    .collect()
            });
        excluded_keys(&cfg.exclude, runner.name(), features)?
    };
    let mut seen: HashSet<String> = HashSet::new();
    // A sample space too small for the request ends the walk instead of looping forever.
    const MAX_SKIPS_IN_A_ROW: u64 = 100_000;
    let (mut taken, mut i, mut in_a_row) = (0u64, 0u64, 0u64);
    while taken < cfg.num_samples {
        if in_a_row >= MAX_SKIPS_IN_A_ROW {
            return Err(CollectError::Invalid(format!(
                "only {taken} of {} distinct{} inputs found ({MAX_SKIPS_IN_A_ROW} draws in a row \
                 gave nothing new, seed {}): the runner's sample space is too small; ask for \
                 fewer --num-samples",
                cfg.num_samples,
                if excluded.is_empty() {
                    ""
                } else {
                    ", not excluded,"
                },
                cfg.seed
            )));
        }
        let mut rng = sample_rng(cfg.seed, i);
        match runner.draw(&mut rng, target, cfg.max_draws) {
            Some(d) => {
                let key = d.context.feature_values_csv();
                if excluded.contains(&key) || (cfg.distinct && !seen.insert(key.clone())) {
                    sel.skipped += 1;
                    in_a_row += 1;
                } else {
                    taken += 1;
                    in_a_row = 0;
                    if cfg.shard.contains(i) {
                        sel.drawn.push((i, key));
                        sel.first.get_or_insert(d);
                    }
                }
            }
            None => {
                taken += 1;
                in_a_row = 0;
                if cfg.shard.contains(i) {
                    sel.no_precondition += 1;
                }
            }
        }
        i += 1;
    }
    Ok(sel)
}

/// A collection request.
#[derive(Debug, Clone)]
pub struct CollectConfig {
    /// The log to append to.
    pub out: PathBuf,
    /// Samples in the whole sample space (all shards).
    pub num_samples: u64,
    /// Repetitions per input (PyTorch's `--num-reps`).
    pub num_reps: usize,
    /// Seed of the sample space.
    pub seed: u64,
    /// This process's shard.
    pub shard: Shard,
    /// Devices.
    pub devices: Devices,
    /// Timing on the GPU (the CPU uses [`CpuBackend::TIMING`] unless `cpu_timing` is set).
    pub gpu_timing: TimingConfig,
    /// Timing override for the CPU.
    pub cpu_timing: Option<TimingConfig>,
    /// Draws per sample before giving up on the precondition.
    pub max_draws: usize,
    /// Distinct inputs only: a sample whose input (feature values) repeats an earlier
    /// sample's is skipped and further sample indices are drawn, so the log holds
    /// `num_samples` distinct inputs (`--distinct`).
    pub distinct: bool,
    /// Logs whose inputs are never drawn (e.g. the training log, for a fresh test set):
    /// such samples are skipped like repeats (`--exclude`).
    pub exclude: Vec<PathBuf>,
    /// The command line, for the provenance sidecar.
    pub command_line: String,
}

/// What happened to one sample, reported to the [`Observer`] as it finishes.
#[derive(Debug, Clone, PartialEq)]
pub struct InputReport {
    /// Sample index.
    pub index: u64,
    /// Device ordinal that measured it.
    pub device: usize,
    /// Rows written.
    pub rows: usize,
    /// Measurements that failed (logged as `inf`).
    pub failures: usize,
    /// First failure message, if any.
    pub first_error: Option<String>,
    /// Time the device spent running this input's benchmarks (warm-ups and timed runs), ms.
    pub busy_ms: f64,
}

/// Receives progress (the binary draws a progress bar with it).
pub trait Observer {
    /// Work is known: `to_measure` inputs will be measured, `already_done` were in the log.
    fn start(&mut self, to_measure: u64, already_done: u64, devices: &[BackendInfo]) {
        let _ = (to_measure, already_done, devices);
    }
    /// One input was measured and written.
    fn input_done(&mut self, report: &InputReport) {
        let _ = report;
    }
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Silent;
impl Observer for Silent {}

/// Totals of one collection run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CollectSummary {
    /// Samples of this shard.
    pub shard_samples: u64,
    /// Inputs already complete in the log (skipped).
    pub already_done: u64,
    /// Inputs measured now.
    pub measured: u64,
    /// Samples with no draw satisfying the precondition.
    pub no_precondition: u64,
    /// Sample indices skipped (all shards) as repeated inputs (`--distinct`) or inputs of an
    /// `--exclude` log.
    pub skipped: u64,
    /// Rows written now.
    pub rows: u64,
    /// Measurements that failed (`inf` rows).
    pub failures: u64,
    /// Bytes cut from a torn tail, rows of an incomplete last input removed.
    pub repaired_bytes: u64,
    /// Wall time, seconds.
    pub wall_s: f64,
    /// Inputs measured per minute.
    pub inputs_per_minute: f64,
    /// Time the devices spent running benchmarks (warm-ups and timed runs; not L2 flushes,
    /// allocation or data fills), seconds, all devices together.
    pub device_busy_s: f64,
    /// `device_busy_s` over the wall time of all workers: how close collection ran to what
    /// the measurements themselves cost.
    pub device_busy_share: f64,
    /// Inputs measured per device ordinal.
    pub per_device: BTreeMap<usize, u64>,
    /// The log.
    pub out: PathBuf,
}

/// The runtime's default log path (`ah_core::Config::log_path_for`, PyTorch's layout):
/// `$AUTOHEURISTIC_LOG_PATH` (or `$TORCHINDUCTOR_AUTOHEURISTIC_LOG_PATH`) when set to a file,
/// else `{cache_dir}/autoheuristic/{device_name}/{name}.txt` with spaces in the device name
/// replaced by `_` (`non_cuda_device` without CUDA).
pub fn default_log_path(device: Option<(&str, ah_core::DeviceIdentity)>, name: &str) -> PathBuf {
    let info = match device {
        Some((dev, identity)) => ah_core::DeviceInfo::new(identity, dev),
        None => ah_core::DeviceInfo::none(),
    };
    ah_core::Config::from_env().log_path_for(name, &info)
}

/// The medians sidecar of a log: `FILE.medians.txt`.
pub fn medians_path(out: &Path) -> PathBuf {
    sidecar(out, "medians.txt")
}

/// The provenance sidecar of a log: `FILE.provenance.json`.
pub fn provenance_path(out: &Path) -> PathBuf {
    sidecar(out, "provenance.json")
}

/// The text of a log or sidecar read as bytes: an error naming the file and the line when it
/// is not UTF-8 (never a lossy decode, which would shift byte offsets).
fn log_text<'b>(path: &Path, bytes: &'b [u8]) -> Result<&'b str, CollectError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = good.iter().filter(|b| **b == b'\n').count() + 1;
        CollectError::Core(ah_core::Error::LogFormat {
            path: path.to_path_buf(),
            line,
            message: "not UTF-8 text; is this an AutoHeuristic log (a gzip log must be \
                      decompressed first)?"
                .into(),
        })
    })
}

fn sidecar(out: &Path, suffix: &str) -> PathBuf {
    let mut s = out.as_os_str().to_os_string();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}

/// The RNG of sample `index`.
pub fn sample_rng(seed: u64, index: u64) -> SampleRng {
    let mut rng = SampleRng::seed_from_u64(seed);
    rng.set_stream(index);
    rng
}

/// Starts the backend of one device.
pub fn open_backend(
    devices: &Devices,
    slot: usize,
    cfg: &CollectConfig,
) -> Result<Backend, CollectError> {
    Ok(match devices {
        Devices::Cpu => Backend::Cpu(CpuBackend::with_timing(
            cfg.cpu_timing.unwrap_or(CpuBackend::TIMING),
        )),
        Devices::Cuda(ords) => {
            Backend::Cuda(Box::new(CudaBackend::new(ords[slot], cfg.gpu_timing)?))
        }
    })
}

/// Result of [`repair_log`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Repair {
    /// Bytes removed at the end of the file.
    pub removed_bytes: u64,
    /// Complete inputs in the log: feature-values CSV -> how many times.
    pub complete: BTreeMap<String, u64>,
}

/// Splits a data line into (feature values, choice).
fn split_row(line: &str) -> Option<(&str, &str)> {
    let (rest, _feedback) = line.rsplit_once(',')?;
    let (values, choice) = rest.rsplit_once(',')?;
    Some((values, choice))
}

/// Consecutive data rows with the same feature values: one input, or equal inputs drawn in a
/// row.
struct Group<'t> {
    /// Feature values as logged.
    key: &'t str,
    /// Byte offset of the group's first line.
    start: usize,
    /// Choice and end offset (after the newline) of each row.
    rows: Vec<(&'t str, usize)>,
}

/// The data rows of a log's text (from line 3), grouped into inputs.
fn groups_of(text: &str) -> Vec<Group<'_>> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        let Some((key, choice)) = split_row(line.trim_end_matches(['\n', '\r'])).filter(|_| i >= 2)
        else {
            continue;
        };
        match groups.last_mut() {
            Some(g) if g.key == key => g.rows.push((choice, offset)),
            _ => groups.push(Group {
                key,
                start,
                rows: vec![(choice, offset)],
            }),
        }
    }
    groups
}

/// Rows per choice when every choice of `rows` has the same count, else `None`.
fn common_count(rows: &[(&str, usize)]) -> Option<usize> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (choice, _) in rows {
        *counts.entry(choice).or_insert(0) += 1;
    }
    let first = *counts.values().next()?;
    counts.values().all(|&c| c == first).then_some(first)
}

/// Complete inputs in `rows` (equal inputs drawn in a row share a group): every choice has
/// the same number of rows, a multiple of `reps`.
fn complete_inputs(rows: &[(&str, usize)], reps: usize) -> Option<usize> {
    common_count(rows)
        .filter(|c| c % reps == 0)
        .map(|c| c / reps)
}

/// The repetitions per input of a log's rows, inferred from the text when no provenance
/// records them: the greatest common divisor of the rows per choice of its inputs (the last
/// input, which may be cut, only when it is the only one). `None` without data rows.
fn infer_reps(text: &str) -> Option<usize> {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let groups = groups_of(text);
    let whole = match groups.len() {
        0 => return None,
        1 => &groups[..],
        n => &groups[..n - 1],
    };
    let r = whole
        .iter()
        .filter_map(|g| common_count(&g.rows))
        .fold(0, gcd);
    (r > 0).then_some(r)
}

/// Repairs a log after a kill and counts its complete inputs: cuts a torn last line (no
/// trailing newline) and then the rows of the last input if that input is incomplete (some
/// choice has fewer than `reps` rows); complete equal inputs before it in the same run of rows
/// are kept. Inputs are runs of consecutive rows with the same feature values. The caller
/// holds the log's lock ([`lock_log`]). A log that is not UTF-8 is an error naming the line.
pub fn repair_log(path: &Path, reps: usize) -> Result<Repair, CollectError> {
    // The torn line: the core crate's helper.
    let torn = ah_core::Log::repair_torn_tail(path)?.map_or(0, |t| t.len() as u64);
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    let text = log_text(path, &bytes)?;
    let mut groups = groups_of(text);
    let mut keep = text.len();
    if let Some(last) = groups.last_mut() {
        if complete_inputs(&last.rows, reps).is_none() {
            // Rows of one input: `reps` rows of each of its `k` choices.
            let k = last.rows.iter().map(|r| r.0).collect::<HashSet<_>>().len();
            let per_input = reps * k;
            let whole = (1..=last.rows.len() / per_input)
                .rev()
                .map(|m| m * per_input)
                .find(|&n| complete_inputs(&last.rows[..n], reps).is_some())
                .unwrap_or(0);
            keep = if whole == 0 {
                last.start
            } else {
                last.rows[whole - 1].1
            };
            last.rows.truncate(whole);
        }
    }
    let removed = bytes.len() - keep;
    if removed > 0 {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(io_err(path))?;
        file.set_len(keep as u64).map_err(io_err(path))?;
        file.sync_all().map_err(io_err(path))?;
    }
    let mut complete = BTreeMap::new();
    for g in &groups {
        if let Some(m) = complete_inputs(&g.rows, reps).filter(|&m| m > 0) {
            *complete.entry(g.key.to_string()).or_insert(0) += m as u64;
        }
    }
    Ok(Repair {
        removed_bytes: removed as u64 + torn,
        complete,
    })
}

/// Keeps in a sidecar log only the inputs that the main log has (after a kill between the two
/// writes the sidecar may hold one more).
fn reconcile_sidecar(
    path: &Path,
    reps: usize,
    main: &BTreeMap<String, u64>,
) -> Result<(), CollectError> {
    if !path.exists() {
        return Ok(());
    }
    repair_log(path, reps)?;
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    let text = log_text(path, &bytes)?;
    let mut lines = text.lines();
    let (Some(l1), Some(l2)) = (lines.next(), lines.next()) else {
        return Ok(());
    };
    let mut budget = main.clone();
    let mut out = format!("{l1}\n{l2}\n");
    let mut current: Option<(String, bool)> = None;
    let mut changed = false;
    for l in lines {
        let Some((values, _)) = split_row(l) else {
            continue;
        };
        let keep = match &current {
            Some((k, keep)) if k == values => *keep,
            _ => {
                let left = budget.get_mut(values);
                let keep = match left {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        true
                    }
                    _ => false,
                };
                current = Some((values.to_string(), keep));
                keep
            }
        };
        if keep {
            out.push_str(l);
            out.push('\n');
        } else {
            changed = true;
        }
    }
    if changed {
        write_atomic(path, out.as_bytes())?;
    }
    Ok(())
}

/// Writes a file through a temporary file in the same folder and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CollectError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let mut f = File::create(&tmp).map_err(io_err(&tmp))?;
    f.write_all(bytes).map_err(io_err(&tmp))?;
    f.sync_all().map_err(io_err(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io_err(path))
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Renders the rows of one measured input: feedback = min (`median == false`) or median.
fn render_rows(m: &MeasuredInput, median: bool) -> (String, usize, usize) {
    let values = m.context.feature_values_csv();
    let mut s = String::new();
    let (mut rows, mut failures) = (0, 0);
    for rep in &m.results {
        for (choice, r) in m.choices.iter().zip(rep) {
            let v = match r {
                Ok(x) if median => x.median_ms,
                Ok(x) => x.min_ms,
                Err(_) => {
                    failures += 1;
                    f64::INFINITY
                }
            };
            if !s.is_empty() {
                s.push('\n');
            }
            s.push_str(&values);
            s.push(',');
            s.push_str(choice);
            s.push(',');
            s.push_str(&ah_core::value::python_float_repr(v));
            rows += 1;
        }
    }
    (s, rows, failures)
}

struct Writers {
    log: LogWriter,
    medians: LogWriter,
}

/// Runs a collection. See the module documentation.
pub fn collect(
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    observer: &mut dyn Observer,
) -> Result<CollectSummary, CollectError> {
    let started = Instant::now();
    let started_unix = now_unix();
    let slots = match &cfg.devices {
        Devices::Cpu => 1,
        Devices::Cuda(o) if o.is_empty() => {
            return Err(CollectError::Invalid("--devices: no device given".into()))
        }
        Devices::Cuda(o) => o.len(),
    };
    let kind = match cfg.devices {
        Devices::Cpu => BackendKind::Cpu,
        Devices::Cuda(_) => BackendKind::Cuda,
    };
    if !runner.supports(kind) {
        return Err(CollectError::Invalid(format!(
            "runner `{}` does not run on the {kind} backend",
            runner.name()
        )));
    }
    if cfg.num_reps == 0 {
        return Err(CollectError::Invalid(
            "--num-reps must be at least 1".into(),
        ));
    }
    // Device facts (from device 0; all devices must share the identity).
    let infos: Vec<BackendInfo> = {
        let mut v = Vec::new();
        for slot in 0..slots {
            v.push(open_backend(&cfg.devices, slot, cfg)?.info().clone());
        }
        v
    };
    if let Some(other) = infos.iter().find(|i| i.identity != infos[0].identity) {
        return Err(CollectError::Invalid(format!(
            "--devices: {} ({:?}) and {} ({:?}) have different identities; collect each kind of GPU into its own log",
            infos[0].device_name, infos[0].identity, other.device_name, other.identity
        )));
    }
    let target = Target {
        kind,
        total_memory: infos[0].total_memory,
        identity: infos[0].identity,
    };

    // Draw this shard's samples (cheap, host only); keep only their keys: workers draw again.
    let Selection {
        drawn,
        first,
        no_precondition,
        skipped,
    } = select_samples(runner, cfg, &target)?;
    let shard_samples = drawn.len() as u64 + no_precondition;
    let features = match first {
        Some(d) => d.context,
        None => {
            let mut rng = sample_rng(cfg.seed, 0);
            match runner.draw(&mut rng, &target, cfg.max_draws.max(1000)) {
                Some(d) => d.context,
                None => {
                    return Err(CollectError::Invalid(
                        "no input satisfies the precondition".into(),
                    ))
                }
            }
        }
    };
    let (num, cat) = features.numerical_and_categorical();
    let metadata = Metadata::new(target.identity, runner.name(), num, cat);
    let header: Vec<String> = features
        .features()
        .iter()
        .map(|f| f.name.to_string())
        .collect();

    // Lock, check metadata, repair, count what is done.
    if let Some(dir) = cfg.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    let lock = lock_log(&cfg.out, true)?;
    let mut log = LogWriter::append(&cfg.out, &metadata, &header)?;
    let prov_path = provenance_path(&cfg.out);
    let mut provenance = read_provenance(&prov_path)?;
    check_reps(&cfg.out, &prov_path, &provenance, cfg.num_reps)?;
    check_distribution(&provenance, runner, &cfg.out, &prov_path)?;
    let repair = repair_log(&cfg.out, cfg.num_reps)?;
    let med_path = medians_path(&cfg.out);
    reconcile_sidecar(&med_path, cfg.num_reps, &repair.complete)?;
    let medians = LogWriter::append(&med_path, &metadata, &header)?;
    log.sync()?;
    let mut done = repair.complete.clone();
    let mut todo: VecDeque<u64> = VecDeque::new();
    let mut already_done = 0;
    for (i, key) in drawn {
        match done.get_mut(&key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                already_done += 1;
            }
            _ => todo.push_back(i),
        }
    }

    let session_index = {
        let sessions = provenance["sessions"]
            .as_array_mut()
            .ok_or_else(|| corrupt_provenance(&prov_path, "`sessions` is not a list"))?;
        sessions.push(json!({
            "started_unix": started_unix,
            "command_line": cfg.command_line,
            "seed": cfg.seed,
            "num_samples": cfg.num_samples,
            "num_reps": cfg.num_reps,
            "shard": format!("{}/{}", cfg.shard.index, cfg.shard.count),
            "devices": infos,
            "gpu_timing": cfg.gpu_timing,
            "resumed_inputs": already_done,
            "repaired_bytes": repair.removed_bytes,
            "finished": false,
        }));
        sessions.len() - 1
    };
    fill_provenance_head(&mut provenance, runner, cfg, &metadata, &infos);
    write_atomic(
        &prov_path,
        serde_json::to_string_pretty(&provenance)
            .unwrap_or_default()
            .as_bytes(),
    )?;

    observer.start(todo.len() as u64, already_done, &infos);
    let queue = Mutex::new(todo);
    let writers = Mutex::new(Writers { log, medians });
    let (tx, rx) = mpsc::channel::<Result<InputReport, CollectError>>();
    let mut rows = 0u64;
    let mut failures = 0u64;
    let mut measured = 0u64;
    let mut per_device: BTreeMap<usize, u64> = BTreeMap::new();
    let mut busy_ms = 0.0;
    let mut first_error: Option<CollectError> = None;
    std::thread::scope(|scope| {
        for slot in 0..slots {
            let tx = tx.clone();
            let queue = &queue;
            let writers = &writers;
            let target = &target;
            scope.spawn(move || {
                let mut backend = match open_backend(&cfg.devices, slot, cfg) {
                    Ok(b) => b,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                let device = backend.info().ordinal;
                loop {
                    let next = queue.lock().map(|mut q| q.pop_front()).unwrap_or(None);
                    let Some(index) = next else { break };
                    let mut rng = sample_rng(cfg.seed, index);
                    let Some(d) = runner.draw(&mut rng, target, cfg.max_draws) else {
                        continue; // drawn before, so never reached
                    };
                    let m = runner.measure(&d, cfg.num_reps, &mut backend);
                    let lost = m.results.iter().flatten().find_map(|r| match r {
                        Err(BenchError::ContextLost(e)) => Some(e.clone()),
                        _ => None,
                    });
                    if let Some(e) = lost {
                        // Do not log this input: a fresh process measures it on resume.
                        let _ = tx.send(Err(CollectError::Invalid(format!(
                            "sample {index} on device {device}: CUDA context lost ({e}); \
                             run the same command again to resume"
                        ))));
                        break;
                    }
                    let (main_rows, n, fails) = render_rows(&m, false);
                    let (med_rows, _, _) = render_rows(&m, true);
                    let first_error = m
                        .results
                        .iter()
                        .flatten()
                        .find_map(|r| r.as_ref().err().map(|e| e.to_string()));
                    let written = (|| -> Result<(), CollectError> {
                        let mut w = writers
                            .lock()
                            .map_err(|_| CollectError::Invalid("writer poisoned".into()))?;
                        // Medians first: the main log decides what is complete on resume.
                        w.medians.write_line(&med_rows)?;
                        w.log.write_line(&main_rows)?;
                        w.log.sync()?;
                        Ok(())
                    })();
                    let busy_ms = m
                        .results
                        .iter()
                        .flatten()
                        .flatten()
                        .map(|r| r.busy_ms)
                        .sum();
                    let report = written.map(|()| InputReport {
                        index,
                        device,
                        rows: n,
                        failures: fails,
                        first_error,
                        busy_ms,
                    });
                    let stop = report.is_err();
                    if tx.send(report).is_err() || stop {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for msg in rx {
            match msg {
                Ok(r) => {
                    rows += r.rows as u64;
                    failures += r.failures as u64;
                    measured += 1;
                    busy_ms += r.busy_ms;
                    *per_device.entry(r.device).or_insert(0) += 1;
                    observer.input_done(&r);
                }
                Err(e) => {
                    if first_error.is_none() {
                        first_error = Some(e);
                    }
                    // Stop the other workers: empty the queue.
                    if let Ok(mut q) = queue.lock() {
                        q.clear();
                    }
                }
            }
        }
    });
    let wall_s = started.elapsed().as_secs_f64();
    let summary = CollectSummary {
        shard_samples,
        already_done,
        measured,
        no_precondition,
        skipped,
        rows,
        failures,
        repaired_bytes: repair.removed_bytes,
        wall_s,
        per_device,
        inputs_per_minute: if wall_s > 0.0 {
            measured as f64 * 60.0 / wall_s
        } else {
            0.0
        },
        device_busy_s: busy_ms / 1e3,
        device_busy_share: if wall_s > 0.0 {
            busy_ms / 1e3 / (wall_s * slots as f64)
        } else {
            0.0
        },
        out: cfg.out.clone(),
    };
    if let Some(s) = provenance["sessions"].get_mut(session_index) {
        s["finished"] = json!(first_error.is_none());
        s["finished_unix"] = json!(now_unix());
        s["summary"] = serde_json::to_value(&summary).unwrap_or_default();
    }
    write_atomic(
        &prov_path,
        serde_json::to_string_pretty(&provenance)
            .unwrap_or_default()
            .as_bytes(),
    )?;
    drop(lock);
    match first_error {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

/// The provenance sidecar, or a fresh one when there is none. A sidecar that is not a JSON
/// object with a `sessions` list is refused, never replaced: it holds the session history.
fn read_provenance(path: &Path) -> Result<serde_json::Value, CollectError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(json!({ "sessions": [] })),
        Err(e) => return Err(io_err(path)(e)),
    };
    let parsed = serde_json::from_slice::<serde_json::Value>(&bytes).map_err(|e| e.to_string());
    let mut v = match parsed {
        Ok(v) if v.is_object() && (v["sessions"].is_array() || v.get("sessions").is_none()) => v,
        Ok(_) => {
            return Err(corrupt_provenance(
                path,
                "not a JSON object with a `sessions` list",
            ))
        }
        Err(m) => return Err(corrupt_provenance(path, &m)),
    };
    if v.get("sessions").is_none() {
        v["sessions"] = json!([]);
    }
    Ok(v)
}

fn corrupt_provenance(path: &Path, why: &str) -> CollectError {
    CollectError::Invalid(format!(
        "{}: the provenance sidecar is damaged ({why}); it holds the log's session history, so \
         it is not replaced: repair it, or move it aside (e.g. `mv {0} {0}.corrupt`) and run \
         again",
        path.display()
    ))
}

/// Refuses a resume whose `--num-reps` differs from the log's: the one the provenance records,
/// or without one the count inferred from the rows (a different count would cut valid rows
/// as "incomplete" and measure every input again).
fn check_reps(
    out: &Path,
    prov_path: &Path,
    provenance: &serde_json::Value,
    reps: usize,
) -> Result<(), CollectError> {
    if let Some(prev) = provenance["num_reps"].as_u64() {
        if prev != reps as u64 {
            return Err(CollectError::Invalid(format!(
                "{}: was collected with --num-reps {prev} (see {}); resume with the same --num-reps, or write to another --out",
                out.display(),
                prov_path.display()
            )));
        }
        return Ok(());
    }
    let bytes = std::fs::read(out).map_err(io_err(out))?;
    let complete = match bytes.iter().rposition(|b| *b == b'\n') {
        Some(i) => &bytes[..=i],
        None => return Ok(()),
    };
    match infer_reps(log_text(out, complete)?) {
        Some(r) if r != reps => Err(CollectError::Invalid(format!(
            "{}: its rows hold {r} repetition(s) per input, but --num-reps is {reps}, and no \
             provenance sidecar ({}) records the count: resume with --num-reps {r}, or write to \
             another --out (another count would cut or duplicate inputs)",
            out.display(),
            prov_path.display()
        ))),
        _ => Ok(()),
    }
}

/// Refuses to resume a log drawn from another input distribution or catalogue; a sidecar
/// without `shapes` is PyTorch's generator (logs collected before pad_mm's `--shapes`).
fn check_distribution(
    provenance: &serde_json::Value,
    runner: &dyn DynRunner,
    out: &Path,
    prov_path: &Path,
) -> Result<(), CollectError> {
    let resumed = provenance["sessions"]
        .as_array()
        .is_some_and(|s| !s.is_empty());
    let Some(now) = runner.input_distribution().filter(|_| resumed) else {
        return Ok(());
    };
    let prev = provenance["shapes"].as_str().unwrap_or("pytorch");
    let prev_sha = provenance["catalogue_sha256"].as_str();
    let prev_version = provenance["distribution_version"].as_u64().unwrap_or(1);
    let what = if prev != now.shapes {
        format!("--shapes {prev}; resume with --shapes {prev}")
    } else if prev_version != now.version {
        format!(
            "version {prev_version} of the --shapes {prev} draws, which this build times differently (version {}); collect anew",
            now.version
        )
    } else if now.catalogue_sha256.is_some() && prev_sha != now.catalogue_sha256.as_deref() {
        format!(
            "a catalogue of sha256 {}; resume with that --catalogue",
            prev_sha.unwrap_or("(none recorded)")
        )
    } else {
        return Ok(());
    };
    Err(CollectError::Invalid(format!(
        "{}: was collected with {what} (see {}), or write to another --out",
        out.display(),
        prov_path.display()
    )))
}

fn fill_provenance_head(
    v: &mut serde_json::Value,
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    metadata: &Metadata,
    infos: &[BackendInfo],
) {
    v["tool"] = json!("ah-collect");
    v["tool_version"] = json!(ah_core::TOOL_VERSION);
    v["runner"] = json!(runner.name());
    v["log"] = json!(cfg.out.file_name().map(|n| n.to_string_lossy().to_string()));
    v["metadata_line"] = json!(metadata.to_json_line());
    v["device_name"] = json!(infos[0].device_name);
    v["capability"] = json!(infos[0].capability);
    v["versions"] = json!(infos[0].versions);
    v["fingerprint"] = json!(infos[0].fingerprint());
    v["seed"] = json!(cfg.seed);
    v["num_samples"] = json!(cfg.num_samples);
    v["num_reps"] = json!(cfg.num_reps);
    v["distinct"] = json!(cfg.distinct);
    if let Some(d) = runner.input_distribution() {
        v["shapes"] = json!(d.shapes);
        v["catalogue_sha256"] = json!(d.catalogue_sha256);
        v["distribution_version"] = json!(d.version);
    }
    v["exclude"] = json!(cfg
        .exclude
        .iter()
        .map(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
        .collect::<Vec<_>>());
    v["label"] = json!(
        "feedback = min over the timed calls of one benchmark (PyTorch's InductorBenchmarker); \
         FILE.medians.txt holds the median over the same calls"
    );
    v["timing_method"] = json!(match infos[0].kind {
        BackendKind::Cuda =>
            "CUDA events around each call on one stream; 1 warm-up call per choice (first repetition); \
             L2 flush (memset of an L2-sized buffer) before every timed call; 5 estimation runs, \
             100 flushes, then max(min(100, 25 ms // estimate), 1) timed runs; min and median over all timed runs",
        BackendKind::Cpu =>
            "wall clock (std::time::Instant) around each call; 1 warm-up call per choice; 3 estimation runs, \
             then max(min(20, 10 ms // estimate), 1) timed runs; no cache flush; min and median over all timed runs",
    });
}

/// Totals of a merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeSummary {
    /// Data rows written.
    pub rows: u64,
    /// Torn (incomplete) last lines dropped from inputs.
    pub torn_lines_dropped: u64,
    /// True when the medians sidecars were merged too.
    pub medians: bool,
}

/// Joins logs of the same runner, device and features (identical first two lines, as
/// PyTorch's `merge_data.py` requires): the first file's head, then every file's rows in
/// order. Written through a temporary file and a rename. When every input has a
/// `.medians.txt` sidecar, those are merged into `OUT.medians.txt` too.
///
/// Safe next to collections: the output's lock is taken exclusively and every input's lock
/// shared, so a merge onto or from a log being collected is refused (`ah_core::Error::Locked`)
/// and a collection cannot start on the output while it is written. An existing output that
/// is not one of the inputs, or whose medians sidecar would be left stale, is refused rather
/// than replaced (its rows would be lost).
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<MergeSummary, CollectError> {
    if inputs.is_empty() {
        return Err(CollectError::Invalid(
            "merge: give at least one log to merge".into(),
        ));
    }
    if out.extension().is_some_and(|e| e == "gz") {
        return Err(CollectError::Invalid(format!(
            "{}: merge writes a plain log; give an output without .gz and compress it afterwards (gzip OUT): the inputs may be .gz",
            out.display()
        )));
    }
    let out_lock = lock_log(out, true)?;
    let mut held: Vec<LogLock> = Vec::new();
    let mut out_is_input = false;
    for input in inputs {
        if lock_path(input) == out_lock.path() {
            out_is_input = true;
        } else if !held.iter().any(|l| l.path() == lock_path(input)) {
            held.push(lock_log(input, false)?);
        }
    }
    let out_has_rows = std::fs::metadata(out).is_ok_and(|m| m.len() > 0);
    if out_has_rows && !out_is_input {
        return Err(CollectError::Invalid(format!(
            "{}: the output exists and is not one of the inputs; merging would replace its rows: \
             list it among the inputs to keep them, or write to a new file",
            out.display()
        )));
    }
    let (text, rows, torn) = merge_texts(inputs)?;
    let med_inputs: Vec<PathBuf> = inputs.iter().map(|p| medians_path(p)).collect();
    let medians = med_inputs.iter().all(|p| p.exists());
    let out_medians = medians_path(out);
    if !medians && out_medians.exists() {
        return Err(CollectError::Invalid(format!(
            "{}: exists, but not every input has a medians sidecar, so it would no longer match \
             the merged {}: give inputs that all have one, or move it aside",
            out_medians.display(),
            out.display()
        )));
    }
    let med = if medians {
        Some(merge_texts(&med_inputs)?)
    } else {
        None
    };
    write_atomic(out, text.as_bytes())?;
    if let Some((t, _, _)) = med {
        write_atomic(&medians_path(out), t.as_bytes())?;
    }
    Ok(MergeSummary {
        rows,
        torn_lines_dropped: torn,
        medians,
    })
}

fn merge_texts(inputs: &[PathBuf]) -> Result<(String, u64, u64), CollectError> {
    let mut out = String::new();
    let mut head: Option<(String, String)> = None;
    let (mut rows, mut torn) = (0u64, 0u64);
    for path in inputs {
        // Plain or gzip-compressed, like every reader of logs (ah-train reads both).
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut ah_core::log::open_maybe_gz(path)?, &mut bytes)
            .map_err(io_err(path))?;
        let text = log_text(path, &bytes)?;
        let complete = match text.rfind('\n') {
            Some(i) => &text[..=i],
            None => "",
        };
        if complete.len() < text.len() {
            torn += 1;
        }
        let mut lines = complete.lines();
        let (Some(l1), Some(l2)) = (lines.next(), lines.next()) else {
            return Err(CollectError::Invalid(format!(
                "{}: not an AutoHeuristic log (needs a metadata line and a header)",
                path.display()
            )));
        };
        match &head {
            None => {
                head = Some((l1.to_string(), l2.to_string()));
                out.push_str(l1);
                out.push('\n');
                out.push_str(l2);
                out.push('\n');
            }
            Some((h1, h2)) => {
                let first_path = inputs[0].clone();
                if h1 != l1 {
                    return Err(CollectError::MergeMismatch {
                        path: path.clone(),
                        first_path,
                        what: "metadata line",
                        first: h1.clone(),
                        other: l1.to_string(),
                    });
                }
                if h2 != l2 {
                    return Err(CollectError::MergeMismatch {
                        path: path.clone(),
                        first_path,
                        what: "header",
                        first: h2.clone(),
                        other: l2.to_string(),
                    });
                }
            }
        }
        for l in lines.filter(|l| !l.is_empty()) {
            out.push_str(l);
            out.push('\n');
            rows += 1;
        }
    }
    Ok((out, rows, torn))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runners::{find, RunnerOptions};

    fn cfg(out: &Path, n: u64, shard: Shard) -> CollectConfig {
        CollectConfig {
            out: out.to_path_buf(),
            num_samples: n,
            num_reps: 2,
            seed: 7,
            shard,
            devices: Devices::Cpu,
            gpu_timing: TimingConfig::PYTORCH,
            // Fast CPU timing for tests.
            cpu_timing: Some(TimingConfig {
                estimation_runs: 1,
                max_runs: 1,
                budget_ms: 0.0,
                memory_warmup: 0,
                long_run_ms: None,
            }),
            max_draws: 100,
            distinct: false,
            exclude: Vec::new(),
            command_line: "test".into(),
        }
    }

    fn small_runner() -> Box<dyn DynRunner> {
        find(
            "pad_mm",
            &RunnerOptions {
                max_power2: Some(6),
            },
        )
        .unwrap()
    }

    fn keys(path: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(path).unwrap();
        let mut v: Vec<String> = text
            .lines()
            .skip(2)
            .map(|l| split_row(l).unwrap().0.to_string())
            .collect();
        v.dedup();
        v
    }

    #[test]
    fn collects_resumes_and_skips_complete_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("sub").join("pad_mm.txt");
        let r = small_runner();
        let s = collect(r.as_ref(), &cfg(&out, 6, Shard::ALL), &mut Silent).unwrap();
        assert_eq!((s.measured, s.already_done, s.rows), (6, 0, 24));
        let text = std::fs::read_to_string(&out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2 + 24);
        assert!(lines[0].starts_with(r#"{"shared_memory": 0, "device_capa": [0, 0], "name": "pad_mm", "numerical_features": ["m", "k", "n", "#));
        assert!(lines[1].ends_with(",prepadded_mat1,prepadded_mat2,using_tf32,choice,feedback"));
        let log = ah_core::Log::read(&out, ah_core::ReadOptions { strict: true }).unwrap();
        assert_eq!(log.choices, ["orig", "pad"]);
        assert!(log
            .rows
            .iter()
            .all(|r| r.feedback.is_finite() && r.feedback >= 0.0));
        let med =
            ah_core::Log::read(medians_path(&out), ah_core::ReadOptions { strict: true }).unwrap();
        assert_eq!(med.rows.len(), 24);
        // Same request again: nothing to do.
        let s2 = collect(r.as_ref(), &cfg(&out, 6, Shard::ALL), &mut Silent).unwrap();
        assert_eq!((s2.measured, s2.already_done), (0, 6));
        // More samples: only the new ones are measured, nothing duplicated.
        let s3 = collect(r.as_ref(), &cfg(&out, 9, Shard::ALL), &mut Silent).unwrap();
        assert_eq!((s3.measured, s3.already_done), (3, 6));
        let k = keys(&out);
        assert_eq!(k.len(), 9);
        let prov: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(provenance_path(&out)).unwrap()).unwrap();
        assert_eq!(prov["sessions"].as_array().unwrap().len(), 3);
        assert_eq!(prov["seed"], 7);
        assert_eq!(prov["fingerprint"]["name"], "non_cuda_device");
        assert_eq!(prov["fingerprint"]["device_capa"], json!([0, 0]));
        assert_eq!(prov["sessions"][2]["summary"]["measured"], 3);
    }

    /// Sample keys (feature values) a request selects, without measuring anything.
    fn selected(c: &CollectConfig) -> Vec<String> {
        let r = small_runner();
        let t = Target {
            kind: BackendKind::Cpu,
            total_memory: 1 << 34,
            identity: ah_core::DeviceIdentity::NONE,
        };
        select_samples(r.as_ref(), c, &t)
            .unwrap()
            .drawn
            .into_iter()
            .map(|(_, k)| k)
            .collect()
    }

    #[test]
    fn distinct_draws_skip_repeats_deterministically_on_every_shard() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.txt");
        let plain = selected(&cfg(&out, 300, Shard::ALL));
        let unique: HashSet<&String> = plain.iter().collect();
        assert!(unique.len() < 300, "the small space repeats inputs");
        let mut c = cfg(&out, 300, Shard::ALL);
        c.distinct = true;
        let all = selected(&c);
        assert_eq!(all.len(), 300);
        assert_eq!(all.iter().collect::<HashSet<_>>().len(), 300);
        // The plain draw's first occurrences come first, in order.
        let mut seen = HashSet::new();
        let firsts: Vec<&String> = plain.iter().filter(|k| seen.insert(*k)).collect();
        assert_eq!(all[..firsts.len()].iter().collect::<Vec<_>>(), firsts);
        // Shards split the same selection.
        let mut parts = Vec::new();
        for index in 0..3 {
            let mut c = c.clone();
            c.shard = Shard { index, count: 3 };
            parts.extend(selected(&c));
        }
        parts.sort();
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(parts, sorted);
    }

    #[test]
    fn excluded_logs_are_never_drawn_and_a_small_space_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let train = dir.path().join("train.txt");
        let r = small_runner();
        let mut c = cfg(&train, 8, Shard::ALL);
        c.distinct = true;
        collect(r.as_ref(), &c, &mut Silent).unwrap();
        let trained: HashSet<String> = keys(&train).into_iter().collect();
        assert_eq!(trained.len(), 8);
        let fresh = dir.path().join("fresh.txt");
        let mut c = cfg(&fresh, 8, Shard::ALL);
        c.exclude = vec![train.clone()];
        let s = collect(r.as_ref(), &c, &mut Silent).unwrap();
        assert_eq!(s.measured, 8);
        assert!(
            s.skipped >= 8,
            "the same seed draws the training inputs first"
        );
        assert!(keys(&fresh).iter().all(|k| !trained.contains(k)));
        // A missing exclude log is an error naming it.
        c.exclude = vec![dir.path().join("missing.txt")];
        let e = collect(r.as_ref(), &c, &mut Silent)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.txt"), "{e}");
        // More distinct inputs than the space holds: an error, not an endless loop.
        let mut c = cfg(&dir.path().join("big.txt"), 2_000, Shard::ALL);
        c.distinct = true;
        let t = Target {
            kind: BackendKind::Cpu,
            total_memory: 1 << 34,
            identity: ah_core::DeviceIdentity::NONE,
        };
        let tiny = find(
            "pad_mm",
            &RunnerOptions {
                max_power2: Some(1),
            },
        )
        .unwrap();
        let e = select_samples(tiny.as_ref(), &c, &t)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("sample space is too small"), "{e}");
    }

    #[test]
    fn torn_tail_and_incomplete_input_are_repaired_then_redone() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("pad_mm.txt");
        let r = small_runner();
        collect(r.as_ref(), &cfg(&out, 4, Shard::ALL), &mut Silent).unwrap();
        let full = std::fs::read_to_string(&out).unwrap();
        // Simulate a kill in the middle of the last input: keep 1.5 of its 4 rows.
        let lines: Vec<&str> = full.lines().collect();
        let mut cut = lines[..lines.len() - 3].join("\n");
        cut.push('\n');
        cut.push_str(&lines[lines.len() - 3][..10]);
        std::fs::write(&out, &cut).unwrap();
        let rep = repair_log(&out, 2).unwrap();
        assert_eq!(rep.complete.values().sum::<u64>(), 3);
        assert!(rep.removed_bytes > 10);
        assert!(std::fs::read_to_string(&out).unwrap().ends_with('\n'));
        let s = collect(r.as_ref(), &cfg(&out, 4, Shard::ALL), &mut Silent).unwrap();
        assert_eq!((s.measured, s.already_done), (1, 3));
        assert_eq!(keys(&out), keys_of_text(&full));
        // The medians sidecar holds exactly the same inputs.
        assert_eq!(keys(&medians_path(&out)), keys(&out));
    }

    fn keys_of_text(text: &str) -> Vec<String> {
        let mut v: Vec<String> = text
            .lines()
            .skip(2)
            .map(|l| split_row(l).unwrap().0.to_string())
            .collect();
        v.dedup();
        v
    }

    #[test]
    fn shards_partition_the_samples_and_merge_joins_them() {
        let dir = tempfile::tempdir().unwrap();
        let r = small_runner();
        let whole = dir.path().join("whole.txt");
        collect(r.as_ref(), &cfg(&whole, 7, Shard::ALL), &mut Silent).unwrap();
        let mut parts = Vec::new();
        for i in 0..3 {
            let p = dir.path().join(format!("shard{i}.txt"));
            let s = collect(
                r.as_ref(),
                &cfg(&p, 7, Shard { index: i, count: 3 }),
                &mut Silent,
            )
            .unwrap();
            assert_eq!(s.shard_samples, [3, 2, 2][i as usize]);
            parts.push(p);
        }
        let merged = dir.path().join("merged.txt");
        let m = merge(&parts, &merged).unwrap();
        assert_eq!(m.rows, 28);
        assert!(m.medians);
        let mut a = keys(&whole);
        let mut b = keys(&merged);
        a.sort();
        b.sort();
        assert_eq!(
            a, b,
            "the shards together are exactly the whole sample space"
        );
        assert!(medians_path(&merged).exists());
    }

    #[test]
    fn merge_refuses_different_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let b = dir.path().join("b.txt");
        std::fs::write(&a, "{\"name\": \"x\"}\nm,choice,feedback\n1,a,1.0\n").unwrap();
        std::fs::write(&b, "{\"name\": \"y\"}\nm,choice,feedback\n1,a,1.0\n").unwrap();
        let out = dir.path().join("o.txt");
        let err = merge(&[a, b], &out).unwrap_err().to_string();
        assert!(err.contains("b.txt: metadata line differs from"), "{err}");
        assert!(!out.exists(), "no half-written output");
    }

    #[test]
    fn merge_reads_gzip_logs_and_writes_plain_text_only() {
        let dir = tempfile::tempdir().unwrap();
        let text_a = "{\"name\": \"x\"}\nm,choice,feedback\n1,a,1.0\n1,b,2.0\n";
        let a = dir.path().join("a.txt.gz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, text_a.as_bytes()).unwrap();
        std::fs::write(&a, gz.finish().unwrap()).unwrap();
        let b = dir.path().join("b.txt");
        std::fs::write(
            &b,
            "{\"name\": \"x\"}\nm,choice,feedback\n2,a,3.0\n2,b,4.0\n",
        )
        .unwrap();
        let out = dir.path().join("o.txt");
        let summary = merge(&[a.clone(), b.clone()], &out).unwrap();
        assert_eq!(summary.rows, 4);
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "{\"name\": \"x\"}\nm,choice,feedback\n1,a,1.0\n1,b,2.0\n2,a,3.0\n2,b,4.0\n"
        );
        let gz_out = dir.path().join("o2.txt.gz");
        let err = merge(&[a, b], &gz_out).unwrap_err().to_string();
        assert!(err.contains("merge writes a plain log"), "{err}");
        assert!(!gz_out.exists());
    }

    #[test]
    fn a_second_writer_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("pad_mm.txt");
        let held = lock_log(&out, true).unwrap();
        let r = small_runner();
        let err = collect(r.as_ref(), &cfg(&out, 2, Shard::ALL), &mut Silent).unwrap_err();
        assert!(
            matches!(err, CollectError::Core(ah_core::Error::Locked { .. })),
            "{err}"
        );
        assert!(err.to_string().contains("another process is collecting"));
        assert!(err.to_string().contains("pad_mm.txt.lock"), "{err}");
        // A merge onto it, or from it, is refused too, and leaves it alone.
        let other = dir.path().join("other.txt");
        let e = merge(std::slice::from_ref(&out), &out).unwrap_err();
        assert!(
            matches!(e, CollectError::Core(ah_core::Error::Locked { .. })),
            "{e}"
        );
        let e = merge(std::slice::from_ref(&out), &other).unwrap_err();
        assert!(
            matches!(e, CollectError::Core(ah_core::Error::Locked { .. })),
            "{e}"
        );
        assert!(!other.exists());
        drop(held);
        collect(r.as_ref(), &cfg(&out, 2, Shard::ALL), &mut Silent).unwrap();
        // After a merge onto itself (a rename), the lock still protects the log.
        merge(std::slice::from_ref(&out), &out).unwrap();
        let _held = lock_log(&out, true).unwrap();
        let err = collect(r.as_ref(), &cfg(&out, 3, Shard::ALL), &mut Silent).unwrap_err();
        assert!(
            matches!(err, CollectError::Core(ah_core::Error::Locked { .. })),
            "{err}"
        );
    }

    const HEAD: &str = "{\"name\": \"x\"}\nm,choice,feedback\n";

    #[test]
    fn repair_keeps_equal_inputs_drawn_in_a_row_and_cuts_only_the_partial_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.txt");
        // reps 2, choices a, b: input 1 complete, then input 2 twice complete and once cut.
        let whole2 = "2,a,1.0\n2,b,1.0\n2,a,1.0\n2,b,1.0\n";
        let text =
            format!("{HEAD}1,a,1.0\n1,b,1.0\n1,a,1.0\n1,b,1.0\n{whole2}{whole2}2,a,1.0\n2,b,1");
        std::fs::write(&p, &text).unwrap();
        let rep = repair_log(&p, 2).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!("{HEAD}1,a,1.0\n1,b,1.0\n1,a,1.0\n1,b,1.0\n{whole2}{whole2}")
        );
        assert_eq!(rep.complete.get("1"), Some(&1));
        assert_eq!(
            rep.complete.get("2"),
            Some(&2),
            "both equal inputs are complete"
        );
        // Nothing to cut: unchanged, and counted the same.
        assert_eq!(
            repair_log(&p, 2).unwrap(),
            Repair {
                removed_bytes: 0,
                ..rep
            }
        );
    }

    #[test]
    fn reps_are_inferred_from_the_rows() {
        let three = format!("{HEAD}1,a,1.0\n1,b,1.0\n1,a,1.0\n1,b,1.0\n1,a,1.0\n1,b,1.0\n");
        assert_eq!(infer_reps(&three), Some(3));
        let cut = format!("{three}2,a,1.0\n2,b,1.0\n");
        assert_eq!(infer_reps(&cut), Some(3), "the last input may be cut");
        assert_eq!(infer_reps(HEAD), None);
    }

    #[test]
    fn a_resume_without_provenance_and_other_reps_is_refused_without_cutting() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("pad_mm.txt");
        let r = small_runner();
        collect(r.as_ref(), &cfg(&out, 3, Shard::ALL), &mut Silent).unwrap();
        let before = std::fs::read(&out).unwrap();
        std::fs::remove_file(provenance_path(&out)).unwrap();
        let mut c = cfg(&out, 5, Shard::ALL);
        c.num_reps = 1;
        let e = collect(r.as_ref(), &c, &mut Silent)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("hold 2 repetition(s) per input, but --num-reps is 1"),
            "{e}"
        );
        assert_eq!(std::fs::read(&out).unwrap(), before, "no row cut");
        // With the inferred count it resumes: no input measured twice.
        let s = collect(r.as_ref(), &cfg(&out, 5, Shard::ALL), &mut Silent).unwrap();
        assert_eq!((s.already_done, s.measured), (3, 2));
    }

    #[test]
    fn a_damaged_provenance_sidecar_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("pad_mm.txt");
        let r = small_runner();
        collect(r.as_ref(), &cfg(&out, 2, Shard::ALL), &mut Silent).unwrap();
        let prov = provenance_path(&out);
        for damaged in [
            "{\"sessions\": [1, 2",
            "[1]",
            "{\"sessions\": 3}",
            "\u{fffd}",
        ] {
            std::fs::write(&prov, damaged).unwrap();
            let e = collect(r.as_ref(), &cfg(&out, 3, Shard::ALL), &mut Silent)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("provenance.json: the provenance sidecar is damaged"),
                "{e}"
            );
            assert_eq!(
                std::fs::read_to_string(&prov).unwrap(),
                damaged,
                "kept as it was"
            );
        }
    }

    #[test]
    fn merge_never_replaces_rows_it_does_not_merge() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let out = dir.path().join("o.txt");
        std::fs::write(&a, format!("{HEAD}1,a,1.0\n")).unwrap();
        std::fs::write(&out, format!("{HEAD}2,a,1.0\n")).unwrap();
        let e = merge(std::slice::from_ref(&a), &out)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("o.txt: the output exists and is not one of the inputs"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            format!("{HEAD}2,a,1.0\n")
        );
        // Listed among the inputs, its rows are kept.
        let m = merge(&[out.clone(), a.clone()], &out).unwrap();
        assert_eq!(m.rows, 2);
        // A stale medians sidecar of the output is refused, not left behind.
        std::fs::write(medians_path(&out), format!("{HEAD}2,a,1.0\n")).unwrap();
        let e = merge(&[out.clone(), a.clone()], &out)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("o.txt.medians.txt: exists, but not every input"),
            "{e}"
        );
        // Not UTF-8: the file and the line.
        std::fs::write(&a, [HEAD.as_bytes(), b"1,\xff,1.0\n"].concat()).unwrap();
        let e = merge(std::slice::from_ref(&a), &dir.path().join("n.txt"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a.txt:3: not UTF-8"), "{e}");
    }

    /// A runner whose measurements fail with a lost context on one input.
    struct Flaky {
        fail_on: Option<u64>,
    }

    impl crate::BenchmarkRunner for Flaky {
        type Input = u64;
        type Prepared = ();
        fn name(&self) -> &'static str {
            "flaky"
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
        ) -> Result<crate::Measurement, BenchError> {
            match (self.fail_on == Some(*input), choice) {
                (true, "b") => Err(BenchError::ContextLost("CUDA_ERROR_ILLEGAL_ADDRESS".into())),
                (false, "b") => Err(BenchError::OutOfMemory("too big".into())),
                _ => Ok(crate::Measurement {
                    min_ms: 1.0,
                    median_ms: 2.0,
                    runs: 3,
                    busy_ms: 6.0,
                }),
            }
        }
    }

    #[test]
    fn a_lost_context_stops_without_logging_and_a_rerun_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("flaky.txt");
        let t = Target {
            kind: BackendKind::Cpu,
            total_memory: 1 << 30,
            identity: ah_core::DeviceIdentity::NONE,
        };
        let third = Flaky { fail_on: None }
            .draw(&mut sample_rng(7, 2), &t, 1)
            .unwrap();
        let x = third.context.get("x").unwrap().as_f64().unwrap() as u64;
        let err = collect(
            &Flaky { fail_on: Some(x) },
            &cfg(&out, 5, Shard::ALL),
            &mut Silent,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("sample 2") && err.contains("context lost"),
            "{err}"
        );
        assert_eq!(
            keys(&out).len(),
            2,
            "inputs before the failure are kept, the failed one is not"
        );
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(
            text.lines()
                .skip(2)
                .all(|l| l.ends_with(",a,1.0") || l.ends_with(",b,inf")),
            "{text}"
        );
        let s = collect(
            &Flaky { fail_on: None },
            &cfg(&out, 5, Shard::ALL),
            &mut Silent,
        )
        .unwrap();
        assert_eq!((s.already_done, s.measured, s.failures), (2, 3, 6));
        let med = std::fs::read_to_string(medians_path(&out)).unwrap();
        assert!(med
            .lines()
            .skip(2)
            .all(|l| l.ends_with(",a,2.0") || l.ends_with(",b,inf")));
    }

    #[test]
    fn shard_parsing() {
        assert_eq!(Shard::parse("1/4").unwrap(), Shard { index: 1, count: 4 });
        assert!(Shard::parse("4/4").is_err());
        assert!(Shard::parse("x")
            .unwrap_err()
            .to_string()
            .contains("--shard `x`"));
        assert!(Shard { index: 1, count: 3 }.contains(4));
    }

    #[test]
    fn samples_do_not_depend_on_the_shard() {
        let r = small_runner();
        let t = Target {
            kind: BackendKind::Cpu,
            total_memory: 1 << 30,
            identity: ah_core::DeviceIdentity::NONE,
        };
        let a = r.draw(&mut sample_rng(3, 5), &t, 10).unwrap();
        let b = r.draw(&mut sample_rng(3, 5), &t, 10).unwrap();
        let c = r.draw(&mut sample_rng(3, 6), &t, 10).unwrap();
        assert_eq!(a.context, b.context);
        assert_ne!(a.context, c.context);
    }

    #[test]
    fn default_path_is_the_runtimes() {
        if [
            "AUTOHEURISTIC_LOG_PATH",
            "TORCHINDUCTOR_AUTOHEURISTIC_LOG_PATH",
        ]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
        {
            eprintln!("skipped: a log path is set in the environment");
            return;
        }
        let p = default_log_path(
            Some(("NVIDIA H100 80GB HBM3", ah_core::DeviceIdentity::H100)),
            "pad_mm",
        );
        assert!(
            p.ends_with("autoheuristic/NVIDIA_H100_80GB_HBM3/pad_mm.txt"),
            "{}",
            p.display()
        );
        assert!(
            default_log_path(None, "pad_mm").ends_with("autoheuristic/non_cuda_device/pad_mm.txt")
        );
    }
}
