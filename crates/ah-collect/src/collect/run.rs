//! [`collect`]: the request checked, the devices opened, the log locked, repaired and
//! counted, the provenance session opened, the measuring threads run (`workers`), the
//! session closed with its summary (also when the stop token ended it early).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Instant;

use ah_core::fs::write_atomic;
use ah_core::Metadata;
use ah_log::LogWriter;
use serde_json::json;

use super::provenance::{
    check_distribution, check_reps, corrupt_provenance, fill_provenance_head, now_unix,
    read_provenance,
};
use super::resume::{reconcile_sidecar, repair_log, Repair};
use super::select::{sample_rng, select_samples, Selection};
use super::workers::{run_workers, ExtrasWriter, Totals, Writers};
use super::{
    extras_path, io_err, lock_log, medians_path, provenance_path, CollectConfig, CollectError,
    CollectSummary, Devices, LogLock, Observer,
};
use crate::backend::{Backend, BackendInfo, BackendKind, CpuBackend, CudaBackend};
use crate::runner::{DynRunner, Target};

/// Starts the backend of one device.
pub fn open_backend(
    devices: &Devices,
    slot: usize,
    cfg: &CollectConfig,
) -> Result<Backend, CollectError> {
    Ok(match devices {
        Devices::Cpu => Backend::Cpu(CpuBackend::with_timing(cfg.timing())),
        Devices::Cuda(ords) => {
            Backend::Cuda(Box::new(CudaBackend::new(ords[slot], cfg.gpu_timing)?))
        }
    })
}

/// Runs a collection. See the module documentation.
pub fn collect(
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    observer: &mut dyn Observer,
) -> Result<CollectSummary, CollectError> {
    let started = Instant::now();
    let started_unix = now_unix();
    let (slots, kind) = check_request(runner, cfg)?;
    let (infos, target) = open_devices(cfg, slots, kind)?;

    // Draw this shard's samples (cheap, host only); keep only their keys: workers draw again.
    let selection = select_samples(runner, cfg, &target)?;
    let shard_samples = selection.drawn.len() as u64 + selection.no_precondition;
    let (metadata, header) = log_head(runner, cfg, &target, &selection)?;
    let mut session = open_log(runner, cfg, &metadata, &header, selection.drawn)?;
    let session_index = open_session(&mut session, runner, cfg, &metadata, &infos, started_unix)?;

    observer.start(session.todo.len() as u64, session.already_done, &infos);
    let todo = std::mem::take(&mut session.todo);
    let (totals, first_error) = run_workers(
        runner,
        cfg,
        slots,
        &target,
        todo,
        session.writers.take().expect("opened above"),
        observer,
    );
    let summary = summarize(
        &session,
        [shard_samples, selection.no_precondition, selection.skipped],
        totals,
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
/// drew none, sample 0 drawn with more tries).
fn log_head(
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    target: &Target,
    selection: &Selection,
) -> Result<(Metadata, Vec<String>), CollectError> {
    let features = match &selection.first {
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

/// A collection's hold on its log: the lock, the writers, the provenance and what is left.
struct Session {
    lock: LogLock,
    writers: Option<Writers>,
    provenance: serde_json::Value,
    repair: Repair,
    todo: VecDeque<u64>,
    already_done: u64,
}

/// Locks the log, checks its metadata and provenance, repairs it and its medians sidecar, and
/// sorts the drawn samples into those already complete and those to measure.
fn open_log(
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    metadata: &Metadata,
    header: &[String],
    drawn: Vec<(u64, String)>,
) -> Result<Session, CollectError> {
    if let Some(dir) = cfg.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    let lock = lock_log(&cfg.out, true)?;
    let mut log = LogWriter::append(&cfg.out, metadata, header)?;
    let prov_path = provenance_path(&cfg.out);
    let provenance = read_provenance(&prov_path)?;
    check_reps(&cfg.out, &prov_path, &provenance, cfg.repetitions())?;
    check_distribution(&provenance, runner, &cfg.out, &prov_path)?;
    let repair = repair_log(&cfg.out, cfg.repetitions())?;
    let med_path = medians_path(&cfg.out);
    reconcile_sidecar(&med_path, cfg.repetitions(), &repair.complete)?;
    let medians = LogWriter::append(&med_path, metadata, header)?;
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
    Ok(Session {
        lock,
        writers: Some(Writers {
            log,
            medians,
            extras: ExtrasWriter::new(extras_path(&cfg.out)),
        }),
        provenance,
        repair,
        todo,
        already_done,
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
        "resumed_inputs": session.already_done,
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

/// The run's totals; `counts` are the selection's (shard samples, samples without a draw
/// meeting the precondition, samples skipped).
fn summarize(
    session: &Session,
    [shard_samples, no_precondition, skipped]: [u64; 3],
    t: Totals,
    started: Instant,
    slots: usize,
    out: &std::path::Path,
) -> CollectSummary {
    let wall_s = started.elapsed().as_secs_f64();
    CollectSummary {
        shard_samples,
        already_done: session.already_done,
        measured: t.measured,
        fewer_reps: t.fewer_reps,
        no_precondition,
        skipped,
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
        interrupted: t.interrupted,
    }
}
