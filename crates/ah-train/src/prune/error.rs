//! Why training for cost failed.

use std::path::PathBuf;

/// Why training for cost failed.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    /// The log could not be read.
    #[error(transparent)]
    Log(ah_core::Error),
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A sidecar exists both plain and gzip-compressed (`ah_log::SidecarError`), or its
    /// compressed copy cannot be read.
    #[error(transparent)]
    Sidecar(#[from] ah_log::SidecarError),
    /// A line of an input file is not what it should be.
    #[error("{}:{line}: {message}", path.display())]
    Input {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong and what to do.
        message: String,
    },
    /// The parameters do not fit together.
    #[error("{0}")]
    Params(String),
}
