//! Where a collection writes: the runtime's default log path and the sidecars of a log, and
//! the check of them all before anything is written ([`check_outputs`]).

use std::path::{Path, PathBuf};

use super::CollectError;

/// The runtime's default log path (`ah_runtime::Config::log_path_for`, PyTorch's layout):
/// `$AUTOHEURISTIC_LOG_PATH` (or `$TORCHINDUCTOR_AUTOHEURISTIC_LOG_PATH`) when set to a file,
/// else `{cache_dir}/autoheuristic/{device_name}/{name}.txt` with spaces in the device name
/// replaced by `_` (`non_cuda_device` without CUDA).
pub fn default_log_path(device: Option<(&str, ah_core::DeviceIdentity)>, name: &str) -> PathBuf {
    let info = match device {
        Some((dev, identity)) => ah_runtime::DeviceInfo::new(identity, dev),
        None => ah_runtime::DeviceInfo::none(),
    };
    ah_runtime::Config::from_env().log_path_for(name, &info)
}

/// The medians sidecar of a log: `FILE.medians.txt`.
pub fn medians_path(out: &Path) -> PathBuf {
    sidecar(out, "medians.txt")
}

/// The extras sidecar of a log: `FILE.extras.jsonl`, one JSON object per measured input of a
/// runner that reports more than times ([`crate::runner::BenchmarkRunner::extras`]).
pub fn extras_path(out: &Path) -> PathBuf {
    sidecar(out, "extras.jsonl")
}

/// The provenance sidecar of a log: `FILE.provenance.json`.
pub fn provenance_path(out: &Path) -> PathBuf {
    sidecar(out, "provenance.json")
}

/// Refuses a log whose path, or a sidecar's, is not a regular file (a FIFO would hang the
/// collection; a folder, a device) or has a name too long for its file system
/// ([`ah_core::fs::check_writable_path`]): called before anything is read or written, so that
/// a refusal leaves no partial log and no log without its sidecars.
pub fn check_outputs(out: &Path) -> Result<(), CollectError> {
    for path in [
        out.to_path_buf(),
        ah_log::lock_path(out),
        medians_path(out),
        provenance_path(out),
        extras_path(out),
    ] {
        ah_core::fs::check_writable_path(&path)?;
    }
    Ok(())
}

fn sidecar(out: &Path, suffix: &str) -> PathBuf {
    let mut s = out.as_os_str().to_os_string();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}
