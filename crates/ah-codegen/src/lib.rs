//! Turns a trained model (`ah_core::model::Model`, the JSON `ah-train` writes) into code that
//! ships:
//!
//! - a Rust module in the generated heuristics crate (default `generated/ah-heuristics/`), one
//!   per heuristic, implementing [`ah_core::LearnedHeuristic`], plus the crate's `lib.rs`
//!   with a registry of every heuristic present, and the model JSON next to it (`models/`) so
//!   that `--check` can be run on the committed crate;
//! - a PyTorch artifact `_NAME.py` in the format of PyTorch's trainer (spec section 8), with
//!   probabilities printed exactly so that it decides like the model;
//! - a Graphviz `.dot` of the tree ([`render_svg`] renders it when `dot` is installed).
//!
//! Every file starts with a header (generated, do not edit, tool version, dataset hash, the
//! command to regenerate, headline metrics); output is deterministic. [`Mode::Check`]
//! reports stale files with a diff instead of writing; [`Mode::Write`] writes all files or
//! none (temporary files, then renames).
//!
//! ```no_run
//! use std::path::PathBuf;
//! let model = ah_core::Model::load("out/pad_mm/PadMMH100.model.json".as_ref())?;
//! let options = ah_codegen::Options {
//!     rust_crate: Some(PathBuf::from("generated/ah-heuristics")),
//!     python_dir: Some(PathBuf::from("out/pad_mm")),
//!     dot_file: None,
//!     mode: ah_codegen::Mode::Write,
//!     command: None,
//! };
//! let outcome = ah_codegen::generate(&model, &options)?;
//! assert!(!outcome.is_stale());
//! # Ok::<(), ah_codegen::CodegenError>(())
//! ```
#![deny(missing_docs)]

mod dot;
mod error;
pub mod escape;
mod header;
pub mod inductor;
pub mod inductor_artifact;
pub mod inductor_rust;
mod names;
mod output;
mod plan;
pub mod prune_tree;
mod python;
mod python_check;
mod rust;
mod rust_columns;
mod rust_expr;
mod rust_fast;
mod rust_gen;
mod rust_tree;
mod rustfmt;
mod templates;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ah_core::model::Model;
use rustfmt::{rustfmt, rustfmt_toml};

pub use dot::{render_svg, SvgOutcome};
pub use error::CodegenError;
pub use names::{module_name, python_file_name};
pub use output::{apply, diff_summary, FileOutcome, FileStatus, GeneratedFile, Mode, Outcome};
pub use python_check::{check_compiles, MAX_INDENT_LEVELS, MAX_NESTED_BRACKETS, MAX_SYNTAX_DEPTH};

/// The default location of the generated heuristics crate, relative to the workspace root.
pub const DEFAULT_RUST_CRATE: &str = "generated/ah-heuristics";

/// What to generate and how.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The generated heuristics crate to put the Rust module in (`None`: no Rust output).
    pub rust_crate: Option<PathBuf>,
    /// Folder for the PyTorch artifact `_NAME.py` (`None`: no Python output).
    pub python_dir: Option<PathBuf>,
    /// The `.dot` file to write (`None`: none).
    pub dot_file: Option<PathBuf>,
    /// Write, check or dry run.
    pub mode: Mode,
    /// The regenerate command for the headers. `None`: the canonical
    /// `ah-codegen CRATE/models/NAME.model.json` (plus `--rust CRATE` when the crate is not
    /// [`DEFAULT_RUST_CRATE`], and `--python`/`--dot` for those files), CRATE being the Rust
    /// crate's path in its workspace, so that files made by `ah-train` and by `ah-codegen` are
    /// identical.
    pub command: Option<String>,
}

/// Renders every requested file for `model` and writes, checks or returns them
/// (see [`Mode`]). Nothing is written in check and dry-run modes; in write mode either every
/// changed file is written or none is.
pub fn generate(model: &Model, options: &Options) -> Result<Outcome, CodegenError> {
    let files = render(model, options)?;
    output::apply(files, options.mode)
}

/// Renders the files [`generate`] would write, without touching the disk (except to list
/// the modules already in the Rust crate). The Python artifact is checked to compile
/// (in-process, see `python_check`): one that would not is an error.
pub fn render(model: &Model, options: &Options) -> Result<Vec<GeneratedFile>, CodegenError> {
    model.check()?;
    let plan = plan::Plan::new(model)?;
    let name = &model.heuristic_name;
    let crate_label = match &options.rust_crate {
        Some(krate) => {
            check_rust_crate(krate)?;
            crate_label(krate)?
        }
        None => DEFAULT_RUST_CRATE.to_string(),
    };
    let rust_flag = if crate_label == DEFAULT_RUST_CRATE {
        String::new()
    } else {
        format!(" --rust {crate_label}")
    };
    let canonical = format!("ah-codegen {crate_label}/models/{name}.model.json{rust_flag}");
    let mut files = Vec::new();
    if let Some(krate) = &options.rust_crate {
        let command = options.command.clone().unwrap_or_else(|| canonical.clone());
        let header = header::header_lines(model, &command);
        let module = module_name(name);
        let src = krate.join("src");
        let module_path = src.join(format!("{module}.rs"));
        if let Some(other) = module_owner(&module_path)? {
            if other != *name {
                return Err(CodegenError::Output {
                    path: module_path,
                    message: format!(
                        "this module holds the heuristic `{other}`, and `{name}` maps to the same module name; rename one of them"
                    ),
                });
            }
        }
        let raw = rust::render_module(&plan, &header)?;
        files.push(GeneratedFile {
            path: src.join(format!("{module}.rs")),
            contents: rustfmt(&raw)?,
        });
        let mut modules = existing_modules(&src)?;
        modules.insert(module);
        let lib_command = format!("ah-codegen {crate_label}/models/{rust_flag}");
        files.push(GeneratedFile {
            path: src.join("lib.rs"),
            contents: rustfmt(&rust::render_lib(&modules, &lib_command)?)?,
        });
        files.push(GeneratedFile {
            path: krate.join("rustfmt.toml"),
            contents: rustfmt_toml(),
        });
        files.push(GeneratedFile {
            path: krate.join("models").join(format!("{name}.model.json")),
            contents: model.to_json(),
        });
    }
    if let Some(dir) = &options.python_dir {
        check_pytorch_hook(model)?;
        let command = options
            .command
            .clone()
            .unwrap_or_else(|| format!("{canonical} --python <artifacts dir>"));
        let header = header::header_lines(model, &command);
        files.push(GeneratedFile {
            path: dir.join(python::file_name(model)),
            contents: python::render(&plan, &header)?,
        });
    }
    if let Some(path) = &options.dot_file {
        let command = options
            .command
            .clone()
            .unwrap_or_else(|| format!("{canonical} --dot {name}.dot"));
        files.push(GeneratedFile {
            path: path.clone(),
            contents: dot::render(&plan, &header::header_lines(model, &command))?,
        });
    }
    Ok(files)
}

/// Refuses a model whose name is one of PyTorch's AutoHeuristic hooks but whose choices cannot
/// be that hook's (the Python artifact would claim the hook and switch its choices off).
pub fn check_pytorch_hook(model: &Model) -> Result<(), CodegenError> {
    let foreign: Vec<String> = model
        .choices
        .iter()
        .filter(|c| ah_core::optimization::pytorch_hook_accepts(&model.name, c) == Some(false))
        .map(|c| format!("`{c}`"))
        .collect();
    if foreign.is_empty() {
        return Ok(());
    }
    Err(CodegenError::NotThePyTorchHook {
        heuristic: model.heuristic_name.clone(),
        name: model.name.clone(),
        choices: foreign.join(", "),
    })
}

/// The Graphviz `.dot` of `model`'s tree, exactly as `ah-codegen --dot NAME.dot` writes it:
/// the one tree renderer of the workspace (`ah-train` writes its `NAME.dot` with it).
pub fn render_dot(model: &Model) -> Result<String, CodegenError> {
    model.check()?;
    let plan = plan::Plan::new(model)?;
    let name = &model.heuristic_name;
    let command =
        format!("ah-codegen {DEFAULT_RUST_CRATE}/models/{name}.model.json --dot {name}.dot");
    dot::render(&plan, &header::header_lines(model, &command))
}

/// Checks that `krate` is a crate the Rust module can go into: a folder with a `Cargo.toml`
/// (the generator writes `src/` itself). `ah-train --rust-crate` calls it before training.
pub fn check_rust_crate(krate: &Path) -> Result<(), CodegenError> {
    if krate.join("Cargo.toml").is_file() {
        Ok(())
    } else {
        Err(CodegenError::NotACrate {
            path: krate.to_path_buf(),
        })
    }
}

/// The crate path the headers' regenerate commands name: `krate` relative to the root of the
/// Cargo workspace holding it (the nearest ancestor folder whose `Cargo.toml` has a
/// `[workspace]` table), with `/` separators, so that the headers do not depend on the working
/// directory or on how the path was spelled. [`DEFAULT_RUST_CRATE`] when `krate` is in no
/// workspace (a crate in a temporary folder).
fn crate_label(krate: &Path) -> Result<String, CodegenError> {
    let canonical = krate
        .canonicalize()
        .map_err(|e| CodegenError::io(krate, e))?;
    for root in canonical.ancestors().skip(1) {
        let manifest = root.join("Cargo.toml");
        let text = match std::fs::read_to_string(&manifest) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(CodegenError::io(&manifest, e)),
        };
        if text.lines().any(|l| l.trim() == "[workspace]") {
            let relative = canonical.strip_prefix(root).unwrap_or(&canonical);
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            return Ok(parts.join("/"));
        }
    }
    Ok(DEFAULT_RUST_CRATE.to_string())
}

/// Module names of the generated heuristics in a crate's `src` folder (files whose header
/// says ah-codegen made them), sorted.
pub fn generated_modules(src: &Path) -> Result<BTreeSet<String>, CodegenError> {
    existing_modules(src)
}

/// Module names of the generated heuristics already in `src` (files whose header says
/// ah-codegen made them), so that `lib.rs` registers all of them.
fn existing_modules(src: &Path) -> Result<BTreeSet<String>, CodegenError> {
    let mut out = BTreeSet::new();
    let entries = match std::fs::read_dir(src) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(CodegenError::io(src, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| CodegenError::io(src, e))?;
        let path = entry.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().and_then(|e| e.to_str()) != Some("rs") || stem == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| CodegenError::io(&path, e))?;
        if text.starts_with("//! Generated by ah-codegen") {
            out.insert(stem.to_string());
        }
    }
    Ok(out)
}

/// The heuristic a generated module file was made for (its header's ``Heuristic `NAME` ``).
fn module_owner(path: &Path) -> Result<Option<String>, CodegenError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(CodegenError::io(path, e)),
    };
    Ok(text
        .lines()
        .take(10)
        .find_map(|l| l.strip_prefix("//! Heuristic `"))
        .and_then(|rest| rest.split('`').next())
        .map(str::to_string))
}
