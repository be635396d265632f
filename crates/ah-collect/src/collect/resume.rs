//! Resuming a collection: the log is repaired after a kill (its format is `ah_log`'s),
//! and its medians sidecar made to hold the same inputs.

use std::collections::BTreeMap;
use std::path::Path;

use super::error::CollectError;
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
