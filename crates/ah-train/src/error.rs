//! The training library's error types: [`TrainError`], and [`TrainParamsError`] for options
//! that cannot be used together.

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
    Params(#[from] TrainParamsError),
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

/// Why training options cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TrainParamsError {
    /// `--ranking 0`.
    #[error("--ranking needs K >= 1")]
    RankingZero,
    /// A ranking with the cost-aware selection rule.
    #[error("a ranking heuristic is selected by PyTorch's rule (`Mode::Upstream`): the cost-aware rule decides single choices")]
    RankingNeedsUpstream,
    /// Fewer than two cross-validation folds.
    #[error("--folds {0}: cross-validation needs at least 2 folds")]
    Folds(usize),
    /// A negative or non-finite autotune cost.
    #[error("--autotune-cost {0}: give a number >= 0")]
    AutotuneCost(f64),
    /// A harmful share outside [0, 1].
    #[error("--max-harmful {0}: give a number between 0 and 1")]
    MaxHarmful(f64),
    /// A non-positive or non-finite Wilson z.
    #[error("wilson_z {0}: give a number > 0")]
    WilsonZ(f64),
}

/// Result with [`TrainError`].
pub type Result<T, E = TrainError> = std::result::Result<T, E>;
