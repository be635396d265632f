//! The evaluation layer's error type.

use std::path::PathBuf;

/// Errors of building an evaluation table. Each names the log it concerns and says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// An error of the core crate (an augment operation, the log format).
    #[error(transparent)]
    Core(#[from] ah_core::Error),
    /// The log cannot be turned into a table (no data rows, no input with two choices, a
    /// non-numeric numerical feature, ...).
    #[error("{}: {message}", path.display())]
    Input {
        /// The log.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
}

/// Result with [`EvalError`].
pub type Result<T, E = EvalError> = std::result::Result<T, E>;
