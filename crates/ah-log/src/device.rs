//! How two logs' devices differ: their metadata's device identity (`shared_memory`,
//! `device_capa`), field by field.

use ah_core::metadata::Metadata;

/// Differences of device identity (`shared_memory`, `device_capa`) between two logs' metadata,
/// one line, or `None` when they were collected on the same kind of device. Tools that combine
/// logs (training with `--data`, replay) warn with it: a heuristic learned on one device is
/// matched on that device's identity.
pub fn device_difference(reference: &Metadata, other: &Metadata) -> Option<String> {
    let diffs = device_differences(reference, other);
    (!diffs.is_empty()).then(|| diffs.join(", "))
}

/// The device identity fields (`shared_memory`, `device_capa`) that differ, one phrase each.
pub(crate) fn device_differences(reference: &Metadata, other: &Metadata) -> Vec<String> {
    let mut diffs = Vec::new();
    push_difference(
        &mut diffs,
        "shared_memory",
        &reference.shared_memory,
        &other.shared_memory,
    );
    push_difference(
        &mut diffs,
        "device_capa",
        &reference.device_capa,
        &other.device_capa,
    );
    diffs
}

/// Appends `{field} {a:?} vs {b:?}` to `diffs` when `a` and `b` differ.
pub(crate) fn push_difference<T: PartialEq + std::fmt::Debug>(
    diffs: &mut Vec<String>,
    field: &str,
    a: &T,
    b: &T,
) {
    if a != b {
        diffs.push(format!("{field} {a:?} vs {b:?}"));
    }
}
