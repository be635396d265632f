//! `ah-codegen`: generate a learned heuristic's Rust module, PyTorch artifact and Graphviz tree
//! from model JSONs written by `ah-train`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ah_codegen::{CodegenError, FileStatus, Mode, Options, SvgOutcome};
use ah_core::error::shown;
use anyhow::{bail, Context as _};
use clap::Parser;

/// Generate learned heuristics (Rust, Python, Graphviz) from model JSONs.
#[derive(Debug, Parser)]
#[command(
    name = "ah-codegen",
    version,
    about,
    after_long_help = "Exit codes: 0 done (or up to date), 1 --check found stale files, 2 error.\n\nExamples:\n  ah-codegen out/pad_mm/PadMMH100.model.json\n  ah-codegen out/pad_mm/PadMMH100.model.json --python out/pad_mm --dot out/pad_mm/tree.dot --svg\n  ah-codegen generated/ah-heuristics/models --check"
)]
struct Cli {
    /// Model JSON files written by `ah-train`, or folders of `*.model.json` / `*.json` files.
    #[arg(required = true, value_name = "MODEL")]
    models: Vec<PathBuf>,

    /// The generated heuristics crate to write the Rust module into.
    #[arg(long, value_name = "DIR", default_value = ah_codegen::DEFAULT_RUST_CRATE)]
    rust: PathBuf,

    /// Do not write Rust code.
    #[arg(long, help = "Do not write Rust code")]
    no_rust: bool,

    /// Folder to write the PyTorch artifact `_NAME.py` into (droppable into
    /// `torch/_inductor/autoheuristic/artifacts/`).
    #[arg(long, value_name = "DIR")]
    python: Option<PathBuf>,

    /// Graphviz file to write the tree to (one model only).
    #[arg(long, value_name = "FILE")]
    dot: Option<PathBuf>,

    /// Also render the `.dot` file to SVG next to it, when Graphviz `dot` is installed.
    #[arg(long, requires = "dot")]
    svg: bool,

    /// Write nothing; exit 1 with a diff summary when a file on disk is stale.
    #[arg(long, conflicts_with = "dry_run")]
    check: bool,

    /// Write nothing; print the generated files to stdout.
    #[arg(long)]
    dry_run: bool,

    /// No list of the files updated, up to date or stale; warnings, errors and --dry-run's
    /// files are still printed (docs/cli.md).
    #[arg(
        long,
        short,
        help = "No progress, summaries or notes; warnings and errors still"
    )]
    quiet: bool,
}

fn main() -> ExitCode {
    // Errors to stderr with status 2; a closed stdout pipe (`| head`) ends quietly.
    ah_core::error::exit_code(run(&Cli::parse()))
}

fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    let models = expand(&cli.models)?;
    if cli.dot.is_some() && models.len() > 1 {
        bail!("--dot takes one model, {} given", models.len());
    }
    let mode = if cli.check {
        Mode::Check
    } else if cli.dry_run {
        Mode::DryRun
    } else {
        Mode::Write
    };
    // Load and validate everything first: a bad model means no file is written at all.
    let mut loaded = Vec::new();
    for path in &models {
        loaded.push((path, ah_core::Model::load(path)?));
    }
    let mut stale = Vec::new();
    for (path, model) in &loaded {
        let options = Options {
            rust_crate: (!cli.no_rust).then(|| cli.rust.clone()),
            python_dir: cli.python.clone(),
            dot_file: cli.dot.clone(),
            mode,
            command: None,
        };
        let outcome = ah_codegen::generate(model, &options)
            .with_context(|| format!("generating from {}", shown(path)))?;
        for f in &outcome.files {
            match &f.status {
                FileStatus::Written if !cli.quiet => eprintln!("Updated: {}", f.path.display()),
                FileStatus::UpToDate if !cli.quiet => {
                    eprintln!("Up-to-date: {}", f.path.display())
                }
                FileStatus::Written | FileStatus::UpToDate => {}
                FileStatus::Stale { diff } => {
                    if !cli.quiet {
                        eprintln!("Stale: {}", f.path.display());
                    }
                    stale.push(format!("{}:\n{diff}", f.path.display()));
                }
                FileStatus::DryRun => {
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "==> {} <==", f.path.display())
                        .and_then(|()| out.write_all(f.contents.as_bytes()))
                        .map_err(|e| CodegenError::io("stdout", e))?;
                }
            }
        }
    }
    if mode == Mode::Check {
        stale.extend(orphaned_modules(cli, &loaded)?);
    }
    if cli.svg {
        if let (Some(dot), Mode::Write) = (&cli.dot, mode) {
            let svg = dot.with_extension("svg");
            match ah_codegen::render_svg(dot, &svg)? {
                SvgOutcome::Written if cli.quiet => {}
                SvgOutcome::Written => eprintln!("Rendered: {}", svg.display()),
                SvgOutcome::DotNotFound => eprintln!(
                    "note: Graphviz `dot` is not installed; skipped {} (install graphviz, e.g. `make deps`)",
                    svg.display()
                ),
            }
        }
    }
    if !stale.is_empty() {
        let mut args: Vec<String> = cli.models.iter().map(|p| p.display().to_string()).collect();
        // The suggested command must write into the crate that was checked.
        if !cli.no_rust && cli.rust != Path::new(ah_codegen::DEFAULT_RUST_CRATE) {
            args.push(format!("--rust {}", cli.rust.display()));
        }
        eprintln!(
            "error: {} generated file(s) are stale, run `ah-codegen {}` to regenerate:\n{}",
            stale.len(),
            args.join(" "),
            stale.join("\n")
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// With `--check` over a crate's whole `models/` folder: every generated module must have its
/// model. One stale entry for each module that no model of `loaded` generates.
fn orphaned_modules(
    cli: &Cli,
    loaded: &[(&PathBuf, ah_core::Model)],
) -> anyhow::Result<Vec<String>> {
    let mut stale = Vec::new();
    let whole_folder = cli
        .models
        .iter()
        .any(|m| same_dir(m, &cli.rust.join("models")));
    if cli.no_rust || !whole_folder {
        return Ok(stale);
    }
    let expected: Vec<String> = loaded
        .iter()
        .map(|(_, m)| ah_codegen::module_name(&m.heuristic_name))
        .collect();
    for module in ah_codegen::generated_modules(&cli.rust.join("src"))? {
        if !expected.contains(&module) {
            let path = cli.rust.join("src").join(format!("{module}.rs"));
            if !cli.quiet {
                eprintln!("Stale: {}", path.display());
            }
            stale.push(format!(
                "{}:
no model in {} generates this module: delete it, or add its model JSON
",
                path.display(),
                cli.rust.join("models").display()
            ));
        }
    }
    Ok(stale)
}

/// Model files from the arguments: files as given, folders expanded to their `*.json` files
/// (sorted).
fn expand(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| CodegenError::io(p, e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| is_json(f))
                .collect();
            if found.is_empty() {
                bail!(
                    "{}: no model JSON files (*.json) in this folder\nhint: give the folder that holds the `*.model.json` files ah-train wrote, or the files themselves",
                    shown(p)
                );
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn is_json(p: &Path) -> bool {
    p.is_file() && p.extension().is_some_and(|e| e == "json")
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_valid() {
        super::Cli::command().debug_assert();
    }
}
