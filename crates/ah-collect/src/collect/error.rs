//! [`CollectError`]: why a collection or a merge failed.

use std::path::{Path, PathBuf};

use crate::backend::cuda::CudaInitError;

/// Errors of a collection or a merge.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// A file operation failed.
    #[error("{}", ah_core::error::io_text(path, source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The log format layer refused (e.g. PyTorch's InconsistentMetadata).
    #[error(transparent)]
    Core(#[from] ah_core::Error),
    /// A sidecar is kept gzip-compressed where it would be written, or exists both plain and
    /// compressed where it is read (`ah_log::SidecarError`).
    #[error(transparent)]
    Sidecar(#[from] ah_log::SidecarError),
    /// The CUDA backend could not start.
    #[error(transparent)]
    Cuda(#[from] CudaInitError),
    /// A bad request (unknown runner, bad shard, ...), with what to do.
    #[error("{0}")]
    Invalid(String),
}

impl From<ah_core::fs::WriteError> for CollectError {
    fn from(e: ah_core::fs::WriteError) -> Self {
        CollectError::Io {
            path: e.path,
            source: e.source,
        }
    }
}

/// A file operation's error, naming the file.
pub(super) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CollectError + '_ {
    move |source| CollectError::Io {
        path: path.to_path_buf(),
        source,
    }
}
