//! The measuring threads of a collection: one per device, taking samples one at a time from
//! the shared [`Todo`], measuring each input and appending its rows (medians sidecar first,
//! then the log, synced; the sidecar alone for an input it lacks), reporting to the
//! collecting thread, which tells the [`Observer`]. A worker checks the stop token before
//! taking each input, so a stop never tears one.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};

use ah_log::push_row;
use ah_log::LogWriter;

use super::config::open_backend;
use super::config::CollectConfig;
use super::error::CollectError;
use super::report::{InputReport, Observer};
use super::todo::{Todo, Work};
use crate::backend::{Backend, BenchError};
use crate::runner::{DynRunner, MeasuredInput};

/// The log and its sidecars, written under one mutex.
pub(super) struct Writers {
    pub(super) log: LogWriter,
    /// The medians sidecar, unless the log has rows and none (it then gets none).
    pub(super) medians: Option<LogWriter>,
    pub(super) extras: ExtrasWriter,
}

/// The extras sidecar (`FILE.extras.jsonl`), opened for appending on its first line. A line
/// is written before the input's rows: an input cut after its line and before its rows is
/// measured again on resume and gets a second line, so readers keep the last line of a
/// sample (`"sample"`) whose features (`"features"`, the rows' CSV values) are in the log.
pub(super) struct ExtrasWriter {
    path: std::path::PathBuf,
    file: Option<std::fs::File>,
}

impl ExtrasWriter {
    pub(super) fn new(path: std::path::PathBuf) -> Self {
        ExtrasWriter { path, file: None }
    }

    fn append(&mut self, index: u64, m: &MeasuredInput) -> Result<(), CollectError> {
        let Some(extras) = &m.extras else {
            return Ok(());
        };
        let mut line = serde_json::json!({
            "sample": index,
            "features": m.context.feature_values_csv(),
        });
        if let (Some(obj), Some(more)) = (line.as_object_mut(), extras.as_object()) {
            obj.extend(more.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let path = &self.path;
        if self.file.is_none() {
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(super::error::io_err(path))?;
            self.file = Some(f);
        }
        let f = self.file.as_mut().expect("opened above");
        use std::io::Write;
        writeln!(f, "{line}")
            .and_then(|()| f.sync_data())
            .map_err(super::error::io_err(path))
    }
}

/// What the workers did.
#[derive(Debug, Default)]
pub(super) struct Totals {
    pub(super) rows: u64,
    pub(super) failures: u64,
    pub(super) measured: u64,
    pub(super) fewer_reps: u64,
    /// Inputs of the log measured again for its medians sidecar.
    pub(super) refilled: u64,
    pub(super) per_device: BTreeMap<usize, u64>,
    pub(super) busy_ms: f64,
}

/// Measures the samples of `todo` on `slots` devices; returns the totals and the first error
/// (after which every worker stops). When `cfg.stop` is set the workers take no further
/// sample.
pub(super) fn run_workers(
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    slots: usize,
    todo: &Mutex<Todo<'_>>,
    writers: Writers,
    observer: &mut dyn Observer,
) -> (Totals, Option<CollectError>) {
    let halt = AtomicBool::new(false);
    let writers = Mutex::new(writers);
    let (tx, rx) = mpsc::channel::<Result<InputReport, CollectError>>();
    let mut totals = Totals::default();
    let mut first_error: Option<CollectError> = None;
    std::thread::scope(|scope| {
        for slot in 0..slots {
            let tx = tx.clone();
            let queue = Queue {
                todo,
                halt: &halt,
                writers: &writers,
            };
            scope.spawn(move || worker(runner, cfg, slot, queue, tx));
        }
        drop(tx);
        for msg in rx {
            match msg {
                Ok(r) => {
                    totals.rows += r.rows as u64;
                    totals.failures += r.failures as u64;
                    if r.medians_only {
                        totals.refilled += 1;
                    } else {
                        totals.measured += 1;
                        totals.fewer_reps += u64::from(r.reps < cfg.num_reps);
                    }
                    totals.busy_ms += r.busy_ms;
                    *totals.per_device.entry(r.device).or_insert(0) += 1;
                    observer.input_done(&r);
                }
                Err(e) => {
                    if first_error.is_none() {
                        first_error = Some(e);
                    }
                    // Stop the other workers.
                    halt.store(true, Ordering::SeqCst);
                }
            }
        }
    });
    (totals, first_error)
}

/// What a worker shares with the others: the samples, the halt flag (set on an error), the
/// writers.
#[derive(Clone, Copy)]
struct Queue<'q, 'a> {
    todo: &'q Mutex<Todo<'a>>,
    halt: &'q AtomicBool,
    writers: &'q Mutex<Writers>,
}

impl Queue<'_, '_> {
    /// The next sample, unless the run stops.
    fn next(&self, cfg: &CollectConfig) -> Result<Option<Work>, CollectError> {
        if cfg.stop.load(Ordering::SeqCst) || self.halt.load(Ordering::SeqCst) {
            return Ok(None);
        }
        match self.todo.lock() {
            Ok(mut t) => t.next(),
            Err(_) => Ok(None),
        }
    }
}

/// One device's thread: measures samples until none is left, the stop token is set or
/// something fails.
fn worker(
    runner: &dyn DynRunner,
    cfg: &CollectConfig,
    slot: usize,
    queue: Queue<'_, '_>,
    tx: mpsc::Sender<Result<InputReport, CollectError>>,
) {
    let mut backend = match open_backend(&cfg.devices, slot, cfg) {
        Ok(b) => b,
        Err(e) => {
            let _ = tx.send(Err(e));
            return;
        }
    };
    loop {
        let work = match queue.next(cfg) {
            Ok(Some(w)) => w,
            Ok(None) => break,
            Err(e) => {
                let _ = tx.send(Err(e));
                break;
            }
        };
        let m = runner.measure(&work.drawn, cfg.repetitions(), &mut backend);
        let report = write_input(&m, &work, &backend, queue.writers);
        let stop = report.is_err();
        if tx.send(report).is_err() || stop {
            break;
        }
    }
}

/// Appends the rows of one measured input (medians sidecar first: the main log decides what
/// is complete on resume; the sidecar alone for an input of the log it lacks) and reports it.
/// A lost CUDA context is an error and nothing is logged: a fresh process measures the input
/// on resume.
fn write_input(
    m: &MeasuredInput,
    work: &Work,
    backend: &Backend,
    writers: &Mutex<Writers>,
) -> Result<InputReport, CollectError> {
    let index = work.index;
    let device = backend.info().ordinal;
    let lost = m.results.iter().flatten().find_map(|r| match r {
        Err(BenchError::ContextLost(e)) => Some(e.clone()),
        _ => None,
    });
    if let Some(e) = lost {
        return Err(CollectError::Invalid(format!(
            "sample {index} on device {device}: CUDA context lost ({e}); \
             run the same command again to resume"
        )));
    }
    let (main_rows, n, fails) = render_rows(m, false);
    let (med_rows, _, _) = render_rows(m, true);
    let first_error = m
        .results
        .iter()
        .flatten()
        .find_map(|r| r.as_ref().err().map(|e| e.to_string()));
    {
        let mut w = writers
            .lock()
            .map_err(|_| CollectError::Invalid("writer poisoned".into()))?;
        if let Some(medians) = &mut w.medians {
            medians.write_line(&med_rows)?;
            if work.medians_only {
                medians.sync()?;
            }
        }
        if !work.medians_only {
            w.extras.append(index, m)?;
            w.log.write_line(&main_rows)?;
            w.log.sync()?;
        }
    }
    let busy_ms = m
        .results
        .iter()
        .flatten()
        .flatten()
        .map(|r| r.busy_ms)
        .sum();
    Ok(InputReport {
        index,
        device,
        medians_only: work.medians_only,
        rows: if work.medians_only { 0 } else { n },
        reps: m.results.len(),
        failures: fails,
        first_error,
        busy_ms,
    })
}

/// Renders the rows of one measured input: feedback = min (`median == false`) or median.
/// Returns the lines (joined by `\n`, without the last one's), the row count and the failures.
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
            push_row(&mut s, &values, choice, v);
            rows += 1;
        }
    }
    (s, rows, failures)
}
