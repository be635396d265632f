//! Where a collection writes: the runtime's default log path and the sidecars of a log, and
//! the check of them all before anything is written ([`check_outputs`]).

use std::path::{Path, PathBuf};

use super::error::CollectError;

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

// The sidecars' names are ah-log's, shared with the trainers that read them.
pub use ah_log::{extras_path, medians_path, provenance_path};

/// Refuses a log whose path, or a sidecar's, is not a regular file (a FIFO would hang the
/// collection; a folder, a device) or has a name too long for its file system
/// ([`ah_core::fs::check_writable_path`]), and a log whose medians or extras sidecar is kept
/// gzip-compressed (`ah_log::check_appendable`: the collection appends to the plain file):
/// called before anything is read or written, so that a refusal leaves no partial log and no
/// log without its sidecars.
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
    ah_log::check_appendable(&medians_path(out))?;
    ah_log::check_appendable(&extras_path(out))?;
    Ok(())
}
