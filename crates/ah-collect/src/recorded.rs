//! What an existing log's provenance sidecar records, for a resumed collection.

use std::path::Path;

use ah_collect::collect;
use anyhow::bail;

use crate::cli::ShapesArg;

/// The provenance sidecar of an existing log that some session wrote to, `None` for a new log
/// (an unreadable sidecar is reported by the collection itself).
pub(crate) fn recorded_provenance(out: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(collect::provenance_path(out)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["sessions"]
        .as_array()
        .is_some_and(|s| !s.is_empty())
        .then_some(v)
}

/// The `shapes` of an existing log's provenance sidecar (`pytorch` when absent), `None` for a
/// new log.
pub(crate) fn recorded_shapes(out: &Path) -> anyhow::Result<Option<ShapesArg>> {
    let Some(v) = recorded_provenance(out) else {
        return Ok(None);
    };
    let path = collect::provenance_path(out);
    match v["shapes"].as_str().unwrap_or("pytorch") {
        "pytorch" => Ok(Some(ShapesArg::Pytorch)),
        "real" => Ok(Some(ShapesArg::Real)),
        "mix" => Ok(Some(ShapesArg::Mix)),
        other => bail!(
            "{}: records an unknown `shapes` = `{}`; give --shapes, or write to another --out",
            ah_core::error::shown(&path),
            ah_core::error::clip(other)
        ),
    }
}
