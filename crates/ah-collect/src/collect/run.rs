//! [`collect`]: the request and every path checked, the devices opened, the log locked, its
//! head checked, repaired and counted, the provenance session opened, the measuring threads
//! run (`workers`) over the samples left (`todo`), the session closed with its summary (also
//! when the stop token ended it early).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Instant;

use ah_core::fs::write_atomic;
use ah_core::Metadata;
use ah_log::LogWriter;
use serde_json::json;

use super::config::{open_backend, CollectConfig, Devices};
use super::error::{io_err, CollectError};
use super::provenance::{
    check_device, check_distribution, check_reps, corrupt_provenance, fill_provenance_head,
    now_unix, read_provenance,
};
use super::report::{CollectSummary, Observer};
use super::resume::{check_extras, reconcile_sidecar, repair_log, Repair};
use super::select::{sample_rng, SampleCounts, Samples};
use super::todo::Todo;
use super::workers::{run_workers, ExtrasWriter, Totals, Writers};
use super::{check_outputs, extras_path, lock_log, medians_path, provenance_path, LogLock};
use crate::backend::{BackendInfo, BackendKind, CudaBackend};
use crate::runner::{DrawnInput, DynRunner, Feedback, Target};

/// Runs a collection. See the module documentation.
pub fn collect(
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    observer: &mut dyn Observer,
) -> Result<CollectSummary, CollectError> {
    let started = Instant::now();
    let started_unix = now_unix();
    let (slots, kind) = check_request(runner, cfg)?;
    check_outputs(&cfg.out)?;
    let (infos, target) = open_devices(cfg, slots, kind)?;

    // This shard's samples, drawn as the workers take them (cheap, host only).
    let mut samples = Samples::new(runner, cfg, &target)?;
    let (metadata, header) = log_head(runner, cfg, &target, samples.first()?)?;
    let mut session = open_log(runner, cfg, &infos, (&metadata, &header))?;
    let medians_done = std::mem::take(&mut session.medians_done);
    let todo = Todo::new(samples, session.repair.complete.clone(), medians_done);
    let session_index = open_session(&mut session, runner, cfg, &metadata, &infos, started_unix)?;

    let (to_measure, in_log) = todo.estimate();
    observer.start(to_measure, in_log, &infos);
    let todo = Mutex::new(todo);
    let (totals, first_error) = run_workers(
        runner,
        cfg,
        slots,
        &todo,
        session.writers.take().expect("opened above"),
        observer,
    );
    let mut todo = todo.into_inner().unwrap_or_else(|e| e.into_inner());
    // Stopped: interrupted when a sample was left to measure (walking on to find one counts
    // the samples already in the log on the way).
    let interrupted = first_error.is_none()
        && cfg.stop.load(Ordering::SeqCst)
        && !matches!(todo.next(), Ok(None));
    let summary = summarize(
        &session,
        (todo.counts(), todo.already_done),
        (totals, interrupted),
        started,
        slots,
        &cfg.out,
    );
    let prov_path = provenance_path(&cfg.out);
    if let Some(s) = session.provenance["sessions"].get_mut(session_index) {
        // `finished`: the session measured every input it was to measure (false while it runs,
        // after an error, and after a stop, whose summary says `interrupted`).
        s["finished"] = json!(first_error.is_none() && !summary.interrupted);
        s["finished_unix"] = json!(now_unix());
        s["resumed_inputs"] = json!(summary.already_done);
        s["summary"] = serde_json::to_value(&summary).unwrap_or_default();
    }
    write_provenance(&prov_path, &session.provenance)?;
    drop(session.lock);
    match first_error {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

/// The number of devices and their kind; refuses a request that cannot run.
fn check_request(
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
) -> Result<(usize, BackendKind), CollectError> {
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
        let needs = match kind {
            BackendKind::Cpu => "a CUDA GPU (none was found, or --device cpu was given)",
            BackendKind::Cuda => "the CPU: give --device cpu",
        };
        return Err(CollectError::Invalid(format!(
            "runner `{}` does not run on the {kind} backend: it needs {needs}",
            runner.name()
        )));
    }
    runner.ready(kind).map_err(CollectError::Invalid)?;
    if let Some(r) = runner.fixed_reps().filter(|r| *r != cfg.num_reps) {
        return Err(CollectError::Invalid(format!(
            "runner `{}` measures each input {r} time(s) (one repetition is a whole \
             compile); leave out --num-reps or give --num-reps {r}",
            runner.name()
        )));
    }
    if cfg.num_reps == 0 {
        return Err(CollectError::Invalid(
            "--num-reps must be at least 1".into(),
        ));
    }
    if !(1..=cfg.num_reps).contains(&cfg.long_reps) {
        return Err(CollectError::Invalid(format!(
            "--long-reps {} must be between 1 and --num-reps ({}): the repetitions of an input \
             whose choices are all long, at most those of any input",
            cfg.long_reps, cfg.num_reps
        )));
    }
    Ok((slots, kind))
}

/// Device facts of every device (all must share the identity) and the target samples are
/// drawn for (device 0's).
fn open_devices(
    cfg: &CollectConfig,
    slots: usize,
    kind: BackendKind,
) -> Result<(Vec<BackendInfo>, Target), CollectError> {
    let mut infos = Vec::new();
    for slot in 0..slots {
        infos.push(open_backend(&cfg.devices, slot, cfg)?.info().clone());
    }
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
    Ok((infos, target))
}

/// The log's metadata and header features, from the first drawn input (or, when this shard
/// draws none, sample 0 drawn with more tries).
fn log_head(
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    target: &Target,
    first: Option<&DrawnInput>,
) -> Result<(Metadata, Vec<String>), CollectError> {
    let features = match first {
        Some(d) => d.context.clone(),
        None => {
            let mut rng = sample_rng(cfg.seed, 0);
            match runner.draw(&mut rng, target, cfg.max_draws.max(1000)) {
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
    let name = log_name_for(&cfg.out, runner.name());
    let metadata = Metadata::new(target.identity, &name, num, cat);
    let header: Vec<String> = features
        .features()
        .iter()
        .map(|f| f.name.to_string())
        .collect();
    Ok((metadata, header))
}

/// The name a collection by `runner` writes in the metadata of `out`: the runner's, except
/// when `out` is a log the runner wrote under its former name (`mm` for `cublaslt_mm`), which is
/// resumed under that name (the metadata line of a log never changes).
pub(crate) fn log_name_for(out: &std::path::Path, runner: &str) -> String {
    match ah_log::metadata_line(out)
        .ok()
        .and_then(|line| ah_log::parse_metadata_line(&line).ok())
    {
        Some(md) if ah_core::optimization::is_former_name(&md.name, runner) => md.name,
        _ => runner.to_string(),
    }
}

/// A collection's hold on its log: the lock, the writers, the provenance, what the repair
/// found, and the complete inputs of the medians sidecar.
struct Session {
    lock: LogLock,
    writers: Option<Writers>,
    provenance: serde_json::Value,
    repair: Repair,
    /// The complete inputs of the medians sidecar; `None` when the log has rows and no
    /// sidecar, which it then does not get.
    medians_done: Option<BTreeMap<String, u64>>,
}

/// Locks the log; checks its head and its medians sidecar's against the runner's (before
/// anything is changed), its provenance, and that it reads back; repairs it and its medians
/// sidecar; opens both for appending.
fn open_log(
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    infos: &[BackendInfo],
    (metadata, header): (&Metadata, &[String]),
) -> Result<Session, CollectError> {
    if let Some(dir) = cfg.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    let mut lock = lock_log(&cfg.out, true)?;
    let med_path = medians_path(&cfg.out);
    ah_log::check_head(&cfg.out, metadata, header)?;
    ah_log::check_head(&med_path, metadata, header)?;
    let prov_path = provenance_path(&cfg.out);
    let provenance = read_provenance(&prov_path)?;
    check_reps(&cfg.out, &prov_path, &provenance, cfg.repetitions())?;
    check_distribution(&provenance, runner, &cfg.out, &prov_path)?;
    check_device(&provenance, infos, &cfg.out, &prov_path)?;
    check_extras(&cfg.out, |line| runner.resume_conflict(line))?;
    let repair = if cfg.out.exists() {
        repair_log(&cfg.out, cfg.repetitions())?
    } else {
        Repair::default()
    };
    // A log with rows and no sidecar (PyTorch's, or one whose sidecar was not kept) gets none:
    // it would hold only the inputs measured from now on. A sidecar that exists is kept whole.
    // A runner that reports one number per choice starts none: it would copy the log.
    let starts = repair.complete.is_empty() && runner.feedback() == Feedback::Timed;
    let medians_done = if med_path.exists() || starts {
        Some(reconcile_sidecar(
            &med_path,
            cfg.repetitions(),
            &repair.complete,
        )?)
    } else {
        None
    };
    let medians = match medians_done {
        Some(_) => Some(LogWriter::append(&med_path, metadata, header)?),
        None => None,
    };
    let mut log = LogWriter::append(&cfg.out, metadata, header)?;
    // The log exists now: hold the file itself too (another name of it contends).
    lock.hold_file(&cfg.out)?;
    log.sync()?;
    Ok(Session {
        lock,
        writers: Some(Writers {
            log,
            medians,
            extras: ExtrasWriter::new(extras_path(&cfg.out)),
        }),
        provenance,
        repair,
        medians_done,
    })
}

/// Records this session in the provenance sidecar (unfinished) and writes it; returns the
/// session's index.
fn open_session(
    session: &mut Session,
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    metadata: &Metadata,
    infos: &[BackendInfo],
    started_unix: u64,
) -> Result<usize, CollectError> {
    let prov_path = provenance_path(&cfg.out);
    let sessions = session.provenance["sessions"]
        .as_array_mut()
        .ok_or_else(|| corrupt_provenance(&prov_path, "`sessions` is not a list"))?;
    sessions.push(json!({
        "started_unix": started_unix,
        "command_line": cfg.command_line,
        "seed": cfg.seed,
        "num_samples": cfg.num_samples,
        "num_reps": cfg.num_reps,
        "long_reps": cfg.repetitions().long,
        "shard": format!("{}/{}", cfg.shard.index, cfg.shard.count),
        "devices": infos,
        "gpu_timing": cfg.gpu_timing,
        "resumed_inputs": 0,
        "repaired_bytes": session.repair.removed_bytes,
        "finished": false,
    }));
    let index = sessions.len() - 1;
    if matches!(cfg.devices, Devices::Cuda(_)) {
        sessions[index]["cuda_module_loading"] = json!(CudaBackend::module_loading());
    }
    fill_provenance_head(&mut session.provenance, runner, cfg, metadata, infos);
    write_provenance(&prov_path, &session.provenance)?;
    Ok(index)
}

fn write_provenance(path: &std::path::Path, v: &serde_json::Value) -> Result<(), CollectError> {
    write_atomic(
        path,
        serde_json::to_string_pretty(v)
            .unwrap_or_default()
            .as_bytes(),
    )?;
    Ok(())
}

/// The run's totals; `counts` are the walk's over the samples (this shard's samples drawn,
/// without a draw meeting the precondition, skipped) and the samples found in the log.
fn summarize(
    session: &Session,
    (counts, already_done): (SampleCounts, u64),
    (t, interrupted): (Totals, bool),
    started: Instant,
    slots: usize,
    out: &std::path::Path,
) -> CollectSummary {
    let wall_s = started.elapsed().as_secs_f64();
    CollectSummary {
        shard_samples: counts.drawn + counts.no_precondition,
        already_done,
        measured: t.measured,
        fewer_reps: t.fewer_reps,
        refilled: t.refilled,
        no_precondition: counts.no_precondition,
        skipped: counts.skipped,
        rows: t.rows,
        failures: t.failures,
        repaired_bytes: session.repair.removed_bytes,
        wall_s,
        per_device: t.per_device,
        inputs_per_minute: if wall_s > 0.0 {
            t.measured as f64 * 60.0 / wall_s
        } else {
            0.0
        },
        device_busy_s: t.busy_ms / 1e3,
        device_busy_share: if wall_s > 0.0 {
            t.busy_ms / 1e3 / (wall_s * slots as f64)
        } else {
            0.0
        },
        out: PathBuf::from(out),
        interrupted,
    }
}
