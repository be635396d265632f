//! Resuming a collection: the log is repaired after a kill (its format is `ah_log`'s),
//! its medians sidecar made to hold the same inputs, and its extras sidecar asked whether the
//! runner measures now as it measured then.

use std::collections::BTreeMap;
use std::path::Path;

use ah_core::error::shown;

use super::error::{io_err, CollectError};
use super::extras_path;
use crate::runner::Repetitions;

/// Result of [`repair_log`]: bytes removed and the complete inputs.
pub use ah_log::InputRepair as Repair;

/// Repairs a log after a kill and counts its complete inputs: cuts a torn last line (no
/// trailing newline) and then the rows of the last input if that input is incomplete (its
/// choices have unequal counts, or a count no input of `reps` has; the rule is
/// `ah_log`'s `repair` module's); complete equal inputs before it in the same run of
/// rows are kept. `reps`: a fixed count or a [`Repetitions`] policy. Inputs are runs of
/// consecutive rows with the same feature values. The caller
/// holds the log's lock ([`super::lock_log`]). A log that is not UTF-8 is an error naming the
/// line.
pub fn repair_log(path: &Path, reps: impl Into<Repetitions>) -> Result<Repair, CollectError> {
    Ok(ah_log::repair_inputs(path, reps)?)
}

/// Keeps in a sidecar log only the inputs that the main log has (after a kill between the two
/// writes the sidecar may hold one more); returns the complete inputs it keeps (fewer than the
/// log's when it was cut, or none when it is missing: those are measured again for it).
pub(super) fn reconcile_sidecar(
    path: &Path,
    reps: Repetitions,
    main: &BTreeMap<String, u64>,
) -> Result<BTreeMap<String, u64>, CollectError> {
    if !path.exists() {
        return Ok(BTreeMap::new());
    }
    Ok(ah_log::keep_inputs(path, reps, main)?)
}

/// Refuses to resume `out` when `conflict` (the runner's
/// [`crate::BenchmarkRunner::resume_conflict`]) objects to the last whole line of its extras
/// sidecar: the log was measured in a way this run would not measure. A log without the
/// sidecar, or without a whole line in it, passes. (A log whose extras sidecar is kept
/// compressed was refused before: [`super::check_outputs`].)
pub(super) fn check_extras(
    out: &Path,
    conflict: impl Fn(&serde_json::Value) -> Option<String>,
) -> Result<(), CollectError> {
    let path = extras_path(out);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(&path)(e)),
    };
    let text = String::from_utf8_lossy(&bytes);
    let last = text
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok());
    match last.and_then(|line| conflict(&line)) {
        None => Ok(()),
        Some(why) => Err(CollectError::Invalid(format!(
            "{}: {why} (the last line of {}); resume with the setting it was measured with, \
             or write to another --out",
            shown(out),
            shown(&path)
        ))),
    }
}
