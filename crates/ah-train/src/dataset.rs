//! Reading the logs `ah-train` trains on: the parallel reader of large logs ([`read_log`]),
//! the dataset hash recorded in models, warnings about `--data` logs and the regression
//! variant's filter of inconsistent measurements (`filter_log`). The table built from a log
//! lives in the evaluation layer ([`ah_eval::table`]).

use std::collections::HashMap;
use std::path::Path;

use ah_log::Log;

use crate::error::{Result, TrainError};

/// Warnings about a `--data` log next to the training log: another runner name, or another
/// device identity (a heuristic learned on one device is matched on that device's identity, so
/// rows of another device mislabel it).
pub fn data_log_warnings(train: &Log, data: &Log) -> Vec<String> {
    let mut w = Vec::new();
    if data.metadata.name != train.metadata.name {
        w.push(format!(
            "log name `{}` differs from the training log's `{}`",
            data.metadata.name, train.metadata.name
        ));
    }
    if let Some(d) = ah_log::device_difference(&train.metadata, &data.metadata) {
        w.push(format!(
            "{} was collected on another device than the training log {} ({d})",
            data.path.display(),
            train.path.display()
        ));
    }
    w
}

/// sha256 of a file's uncompressed bytes, hex.
pub fn dataset_hash(path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut r = ah_log::open_maybe_gz(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = r.read(&mut buf).map_err(|e| TrainError::io(path, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Reads a log like [`Log::read`] (same result, same messages), the two halves of a large
/// file parsed at once ([`Log::read_parallel`]).
///
/// The metadata's name is the optimisation the log stands for
/// ([`ah_core::optimization::log_name`]): a log of the cuBLASLt runner written under its former
/// name `mm` trains as `cublaslt_mm`.
pub fn read_log(path: &Path) -> Result<Log> {
    let mut log = Log::read_parallel(path, ah_log::ReadOptions::default())?;
    let name =
        ah_core::optimization::log_name(&log.metadata.name, log.choices.iter().map(String::as_str))
            .to_string();
    log.metadata.name = name;
    Ok(log)
}

/// Minimum repetitions per (input, choice) of the regression variant.
pub const MIN_COUNT: usize = 3;
/// Maximum relative standard deviation (%) per (input, choice) of the regression variant.
pub const MAX_REL_STD: f64 = 5.0;

/// The regression variant's filters: drops the rows of (input, choice) pairs measured fewer than [`MIN_COUNT`] times or with a
/// relative standard deviation above [`MAX_REL_STD`]%. Returns the filtered log and the
/// number of pairs dropped.
pub(crate) fn filter_log(log: &Log) -> (Log, usize) {
    let md = &log.metadata;
    let cols: Vec<usize> = md
        .features()
        .map(|f| log.column(f).expect("checked by the reader"))
        .collect();
    let mut groups: HashMap<(String, u32), Vec<f64>> = HashMap::new();
    let key_of = |r: &ah_log::LogRow| {
        cols.iter()
            .map(|&c| r.values[c].to_string())
            .collect::<Vec<_>>()
            .join("\u{1f}")
    };
    for r in &log.rows {
        groups
            .entry((key_of(r), r.choice))
            .or_default()
            .push(r.feedback);
    }
    let keep: HashMap<&(String, u32), bool> = groups
        .iter()
        .map(|(k, v)| {
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            let ok = if v.len() < MIN_COUNT || v.iter().any(|x| !x.is_finite()) || mean == 0.0 {
                false
            } else {
                let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
                var.sqrt() / mean * 100.0 <= MAX_REL_STD
            };
            (k, ok)
        })
        .collect();
    let dropped = keep.values().filter(|k| !**k).count();
    let mut out = log.clone();
    out.rows = log
        .rows
        .iter()
        .filter(|r| keep[&(key_of(r), r.choice)])
        .cloned()
        .collect();
    (out, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ah_log::ReadOptions;

    fn log_of(text: &str) -> Log {
        Log::from_reader(Path::new("t.txt"), text.as_bytes(), ReadOptions::default()).unwrap()
    }

    const MD: &str = r#"{"shared_memory": 0, "device_capa": [0, 0], "name": "t", "numerical_features": ["m"], "categorical_features": ["d"]}"#;

    #[test]
    fn data_logs_of_another_device_are_warned() {
        let a = log_of(&format!("{MD}\nm,d,choice,feedback\n1,x,a,1.0\n"));
        let other = MD.replace(
            "\"shared_memory\": 0, \"device_capa\": [0, 0]",
            "\"shared_memory\": 232448, \"device_capa\": [9, 0]",
        );
        let b = log_of(&format!("{other}\nm,d,choice,feedback\n1,x,a,1.0\n"));
        assert!(data_log_warnings(&a, &a).is_empty());
        let w = data_log_warnings(&a, &b).join("\n");
        assert!(w.contains("another device"), "{w}");
        assert!(
            w.contains("shared_memory 0 vs 232448, device_capa (0, 0) vs (9, 0)"),
            "{w}"
        );
    }
}
