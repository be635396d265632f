//! `ah-collect merge`: shards (and their medians sidecars) joined into one log, under the logs'
//! locks; the joining itself is `ah_log::join_logs`.

use std::path::{Path, PathBuf};

use ah_core::error::shown;
use ah_core::fs::write_atomic;
use ah_log::join_logs;

use super::error::{io_err, CollectError};
use super::{lock_log, medians_path, LogLock};

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
/// `.medians.txt` sidecar (plain or `.medians.txt.gz`), those are merged into
/// `OUT.medians.txt` too; an output whose medians sidecar is kept compressed is refused
/// (`ah_log::SidecarError::Compressed`): the merge would write a plain one beside it.
///
/// Safe next to collections: the output's lock is taken exclusively and every input's lock
/// shared (locks identify the file: another name of it contends), so a merge onto or from a
/// log being collected is refused (`ah_core::Error::Locked`) and a collection cannot start on
/// the output while it is written. An existing output that is not one of the inputs (by
/// identity), or whose medians sidecar would be left stale, is refused rather than replaced
/// (its rows would be lost). The rows kept are exactly those the reader reads
/// (`ah_log::join_logs`): a complete last row without its newline is kept.
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<MergeSummary, CollectError> {
    if inputs.is_empty() {
        return Err(CollectError::Invalid(
            "merge: give at least one log to merge".into(),
        ));
    }
    if out.extension().is_some_and(|e| e == "gz") {
        return Err(CollectError::Invalid(format!(
            "{}: merge writes a plain log; give an output without .gz and compress it afterwards (gzip OUT): the inputs may be .gz",
            shown(out)
        )));
    }
    // Every path checked before anything is created: the inputs exist (no lock sidecar is
    // left for a mistyped one), the outputs are regular files or new.
    for input in inputs {
        std::fs::metadata(input).map_err(io_err(input))?;
    }
    ah_core::fs::check_writable_path(out)?;
    ah_core::fs::check_writable_path(&medians_path(out))?;
    ah_log::check_appendable(&medians_path(out))?;
    let out_lock = lock_log(out, true)?;
    let mut held: Vec<LogLock> = Vec::new();
    let mut out_is_input = false;
    for input in inputs {
        // By the file's identity: another name of the output is the output.
        if out_lock.covers(input) {
            out_is_input = true;
        } else if !held.iter().any(|l| l.covers(input)) {
            held.push(lock_log(input, false)?);
        }
    }
    let out_has_rows = std::fs::metadata(out).is_ok_and(|m| m.len() > 0);
    if out_has_rows && !out_is_input {
        return Err(CollectError::Invalid(format!(
            "{}: the output exists and is not one of the inputs; merging would replace its rows: \
             list it among the inputs to keep them, or write to a new file",
            shown(out)
        )));
    }
    let joined = join_logs(inputs)?;
    let med_inputs = input_medians(inputs)?;
    let medians = med_inputs.is_some();
    let out_medians = medians_path(out);
    if !medians && out_medians.exists() {
        return Err(CollectError::Invalid(format!(
            "{}: exists, but not every input has a medians sidecar, so it would no longer match \
             the merged {}: give inputs that all have one, or move it aside",
            shown(&out_medians),
            shown(out)
        )));
    }
    let med = med_inputs.map(|paths| join_logs(&paths)).transpose()?;
    write_atomic(out, joined.text.as_bytes())?;
    if let Some(m) = med {
        write_atomic(&medians_path(out), m.text.as_bytes())?;
    }
    Ok(MergeSummary {
        rows: joined.rows,
        torn_lines_dropped: joined.torn,
        medians,
    })
}

/// The medians sidecar of every input, each plain or gzip-compressed
/// (`ah_log::sidecar_to_read`); `None` when an input has none.
fn input_medians(inputs: &[PathBuf]) -> Result<Option<Vec<PathBuf>>, CollectError> {
    let mut paths = Vec::with_capacity(inputs.len());
    for input in inputs {
        match ah_log::sidecar_to_read(&medians_path(input))? {
            Some(p) => paths.push(p),
            None => return Ok(None),
        }
    }
    Ok(Some(paths))
}
