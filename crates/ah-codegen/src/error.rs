//! The codegen library's error type.

use std::path::PathBuf;

/// Errors of `ah-codegen`. Every variant that concerns a file names it and says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodegenError {
    /// Reading or writing a file failed (with what to do about it, where there is a hint).
    #[error("{}", ah_core::error::io_text(path, source))]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The model file cannot be read, or the model is inconsistent ([`ah_core::Model::load`],
    /// [`ah_core::Model::check`]).
    #[error(transparent)]
    Model(#[from] ah_core::ModelFileError),
    /// The model cannot be serialized (a bug in ah-codegen or serde).
    #[error("model `{heuristic}` is invalid: {message}")]
    InvalidModel {
        /// The heuristic name.
        heuristic: String,
        /// What is wrong.
        message: String,
    },
    /// An augment operation's expression cannot be compiled.
    #[error("model `{heuristic}`: operation `{operation}`: {message}")]
    Operation {
        /// The heuristic name.
        heuristic: String,
        /// The operation's name.
        operation: String,
        /// What is wrong.
        message: String,
    },
    /// A template failed to render (a bug in ah-codegen).
    #[error("template `{template}` failed to render: {message}")]
    Template {
        /// The template's name.
        template: String,
        /// tera's error chain.
        message: String,
    },
    /// The output folder cannot be used.
    #[error("{}: {message}", ah_core::error::shown(path))]
    Output {
        /// The folder or file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// A PyTorch artifact would take the name of a PyTorch AutoHeuristic hook whose choices
    /// its choices cannot be ([`ah_core::optimization::pytorch_hook_accepts`]).
    #[error("model `{heuristic}` decides `{name}`, PyTorch's `{name}` hook, but its choices {choices} are not that hook's: installed into PyTorch, Inductor would drop them; no Python artifact written\nhint: a heuristic of your own runner needs a name of its own (the log's metadata `name`, e.g. `cublaslt_mm`); or generate only the Rust module (ah-codegen without --python)")]
    NotThePyTorchHook {
        /// The heuristic name.
        heuristic: String,
        /// The optimization (hook) name.
        name: String,
        /// The choices the hook does not know, quoted and comma-separated.
        choices: String,
    },
    /// CPython would not compile the generated Python artifact (nothing is written); checked
    /// in-process, without `python3`.
    #[error("the generated Python artifact {file} does not compile, so nothing was written (PyTorch imports every artifact of its folder: this one would break the others):\n{file}, line {line}: {message}\nhint: this is a bug of ah-codegen or a model beyond CPython's limits; report it with the model file, and generate without --python meanwhile")]
    ArtifactDoesNotCompile {
        /// The artifact's file name.
        file: String,
        /// The line (1-based) where CPython would report the error.
        line: usize,
        /// What CPython would refuse, in its words (`SyntaxError: ...`).
        message: String,
    },
    /// The Rust output folder is not a generated heuristics crate.
    #[error("{}: not a generated heuristics crate (it has no Cargo.toml)\nhint: point --rust (ah-train: --rust-crate) at the crate, e.g. generated/ah-heuristics; to start a new one, create it with a Cargo.toml depending on ah-core first", ah_core::error::shown(path))]
    NotACrate {
        /// The folder given.
        path: PathBuf,
    },
    /// Graphviz `dot` failed on a file.
    #[error(
        "rendering {} with graphviz `dot` failed: {message}",
        ah_core::error::shown(path)
    )]
    Graphviz {
        /// The `.dot` file.
        path: PathBuf,
        /// `dot`'s standard error.
        message: String,
    },
}

impl CodegenError {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        CodegenError::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn template(template: &str, err: &tera::Error) -> Self {
        let mut message = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(s) = source {
            message.push_str(": ");
            message.push_str(&s.to_string());
            source = s.source();
        }
        CodegenError::Template {
            template: template.to_string(),
            message,
        }
    }
}
