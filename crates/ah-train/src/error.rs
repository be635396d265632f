//! The training library's error type.

use std::path::{Path, PathBuf};

/// Errors of `ah-train`. Each names the file (and line) it concerns where there is one and
/// says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrainError {
    /// An error of the core crate (log format, operations).
    #[error(transparent)]
    Core(#[from] ah_core::Error),
    /// An error of the evaluation layer (building a table from a log).
    #[error(transparent)]
    Eval(#[from] ah_eval::EvalError),
    /// Reading or writing a file failed (with what to do about it, where there is a hint).
    #[error("{}", ah_core::error::io_text(path, source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The content of an input file cannot be trained on.
    #[error("{}: {message}", path.display())]
    Input {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// Inconsistent settings.
    #[error("{0}")]
    Config(String),
    /// Training options that cannot be used together ([`crate::train::TrainOptions::check`]).
    #[error(transparent)]
    Params(#[from] crate::train::TrainParamsError),
    /// No grid model satisfies the selection rule.
    #[error("{0}")]
    NoModel(String),
}

impl TrainError {
    /// Wraps an I/O error with its path.
    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        TrainError::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }
}

/// Result with [`TrainError`].
pub type Result<T, E = TrainError> = std::result::Result<T, E>;
