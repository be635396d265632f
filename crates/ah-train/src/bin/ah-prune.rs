//! `ah-prune`: trains which of Inductor's max-autotune GEMM choices to keep, for compile time
//! at equal or better run time, from an `inductor_mm` log and its extras sidecar; writes the
//! model, a report, and (unless `--no-codegen`) the `InductorChoices` handler module.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use ah_train::prune::{report, train, PruneParams};

/// Train a max-autotune pruning heuristic (see docs/inductor.md).
#[derive(Parser, Debug)]
#[command(
    version,
    about = "Train which of Inductor's max-autotune GEMM choices to keep (compile time at equal or \
             better run time) from an inductor_mm log: writes the model, a report, and the \
             InductorChoices handler module (docs/inductor.md)"
)]
struct Cli {
    /// The `inductor_mm` log (`ah-collect --name inductor_mm`); its extras sidecar is
    /// `LOG.extras.jsonl`.
    log: PathBuf,
    /// The heuristic's name (letters and digits, starting with a capital letter).
    #[arg(long, default_value = "InductorMMH100")]
    heuristic_name: String,
    /// Where the model (`NAME.model.json`) and report (`NAME.report.md`) go.
    #[arg(long, default_value = "out/inductor_mm")]
    output_dir: PathBuf,
    /// Where the handler module goes (`inductor_mm_h100_choices.py` for the default name);
    /// default: the output folder.
    #[arg(long)]
    python_dir: Option<PathBuf>,
    /// Do not write the handler module.
    #[arg(long, conflicts_with = "python_dir")]
    no_codegen: bool,
    /// Calls of a GEMM a job makes: a run-time loss counts this many times.
    #[arg(long, default_value_t = PruneParams::default().horizon)]
    horizon: f64,
    /// A pick more than this fraction slower than the faster of cuBLAS and Inductor's pick
    /// (compiled truth) is harmful; leaves avoid harmful picks first.
    #[arg(long, default_value_t = PruneParams::default().harm)]
    harm: f64,
    /// Fewest training GEMMs in a leaf.
    #[arg(long, default_value_t = PruneParams::default().min_leaf)]
    min_leaf: usize,
    /// Deepest split level.
    #[arg(long, default_value_t = PruneParams::default().max_depth)]
    max_depth: usize,
    /// Folds of the cross-validation.
    #[arg(long, default_value_t = PruneParams::default().folds)]
    folds: usize,
    /// Train on the log's first N GEMMs only (the log grows as its collection resumes).
    #[arg(long, value_name = "N")]
    first: Option<usize>,
    /// Write nothing; exit 1 when the handler module on disk differs from what this command
    /// generates (stale generated code).
    #[arg(long)]
    check: bool,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Trains, writes; false when `--check` found stale code.
fn run(cli: Cli) -> anyhow::Result<bool> {
    if !valid_name(&cli.heuristic_name) {
        anyhow::bail!("--heuristic-name {:?}: use letters and digits, starting with a capital letter (e.g. InductorMMH100)", cli.heuristic_name);
    }
    let params = PruneParams {
        horizon: cli.horizon,
        harm: cli.harm,
        min_leaf: cli.min_leaf,
        max_depth: cli.max_depth,
        folds: cli.folds,
        first: cli.first,
        ..PruneParams::default()
    };
    let extras = PathBuf::from(format!("{}.extras.jsonl", cli.log.display()));
    let (model, data) = train(&cli.log, &extras, &cli.heuristic_name, &params)?;
    let text = report(&model, &data);
    let module = (!cli.no_codegen)
        .then(|| -> anyhow::Result<(PathBuf, String)> {
            let dir = cli
                .python_dir
                .clone()
                .unwrap_or_else(|| cli.output_dir.clone());
            let path = dir.join(ah_codegen::inductor::file_name(&cli.heuristic_name));
            let header = header(&model, &text);
            Ok((
                path,
                ah_codegen::inductor::render_module(&serde_json::to_value(&model)?, &header)?,
            ))
        })
        .transpose()?;
    if cli.check {
        return check(module);
    }
    print!("{text}");
    std::fs::create_dir_all(&cli.output_dir)
        .with_context(|| format!("creating {}", cli.output_dir.display()))?;
    let json = serde_json::to_string_pretty(&model)? + "\n";
    let model_path = cli
        .output_dir
        .join(format!("{}.model.json", cli.heuristic_name));
    ah_core::fs::write_atomic(&model_path, json.as_bytes())
        .with_context(|| format!("writing {}", model_path.display()))?;
    let report_path = cli
        .output_dir
        .join(format!("{}.report.md", cli.heuristic_name));
    ah_core::fs::write_atomic(&report_path, text.as_bytes())
        .with_context(|| format!("writing {}", report_path.display()))?;
    eprintln!(
        "wrote {} and {}",
        model_path.display(),
        report_path.display()
    );
    if let Some((path, code)) = module {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        ah_core::fs::write_atomic(&path, code.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!(
            "wrote {}: import it and call install() before torch.compile (docs/inductor.md)",
            path.display()
        );
    }
    Ok(true)
}

/// `--check`: whether the module on disk is what this command generates.
fn check(module: Option<(PathBuf, String)>) -> anyhow::Result<bool> {
    let Some((path, code)) = module else {
        anyhow::bail!("--check compares the handler module: leave out --no-codegen");
    };
    let on_disk =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    if on_disk == code {
        eprintln!("{}: up to date", path.display());
        return Ok(true);
    }
    eprintln!(
        "{}: stale; regenerate it with the command in its header",
        path.display()
    );
    Ok(false)
}

/// The module's header: what made it, from what, and how well it does.
fn header(model: &ah_train::prune::PruneModel, report: &str) -> String {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--check")
        .collect();
    let cv: Vec<String> = report
        .lines()
        .skip_while(|l| !l.starts_with("## Cross-validated"))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| !l.is_empty())
        .map(|l| format!("#   {l}"))
        .collect();
    format!(
        "# {name}: prunes Inductor's max-autotune GEMM choices before template code is generated.\n\
         # Generated by ah-prune {version}; do not edit. Regenerate with:\n\
         #   ah-prune {args}\n\
         # Trained on {gemms} GEMMs (horizon {horizon} calls, harm bound {harm} %). Cross-validated:\n\
         {cv}\n\
         # Use: import this file as a module and call install() before torch.compile (see\n\
         # docs/inductor.md in autoheuristic-rs).\n",
        name = model.name,
        version = env!("CARGO_PKG_VERSION"),
        args = args.join(" ").replace(['\n', '\r'], " "),
        gemms = model.gemms,
        horizon = model.horizon,
        harm = model.harm * 100.0,
        cv = cv.join("\n"),
    )
}

fn valid_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric())
}
