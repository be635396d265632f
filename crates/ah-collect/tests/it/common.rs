//! What several modules of this test binary share: the binary, its refusals, and a log's
//! inputs (runs of rows with equal feature values).

use std::path::Path;
use std::process::{Command, Output};

use ah_log::{Log, ReadOptions};

pub(crate) fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ah-collect"))
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts that the binary refused (exit 2) with a message containing `needle`.
pub(crate) fn assert_exit_2(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "wanted {needle:?} in: {err}");
}

/// The inputs of a log file as its text has them, in file order: each input's feature values
/// and its number of rows (a run of rows with equal values).
pub(crate) fn inputs(path: &Path) -> Vec<(String, usize)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut v: Vec<(String, usize)> = Vec::new();
    for l in text.lines().skip(2) {
        let (rest, _) = l.rsplit_once(',').unwrap();
        let (values, _) = rest.rsplit_once(',').unwrap();
        match v.last_mut() {
            Some((k, n)) if k == values => *n += 1,
            _ => v.push((values.to_string(), 1)),
        }
    }
    v
}

/// The inputs of a log as the reader reads it, in file order: each input's feature values
/// (joined by commas) and its number of rows.
pub(crate) fn log_inputs(log: &Log) -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = Vec::new();
    for r in &log.rows {
        let key: Vec<String> = r.values.iter().map(ToString::to_string).collect();
        let key = key.join(",");
        match v.last_mut() {
            Some((k, n)) if *k == key => *n += 1,
            _ => v.push((key, 1)),
        }
    }
    v
}

/// [`log_inputs`] of the log file at `path`, read with `options`.
pub(crate) fn read_inputs(path: &Path, options: ReadOptions) -> Vec<(String, usize)> {
    log_inputs(&Log::read(path, options).unwrap())
}
