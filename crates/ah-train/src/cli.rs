//! Command line of `ah-train`.

use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};

use ah_train::guard::GuardPolicy;
use anyhow::{bail, Context as _, Result};
use clap::{Parser, ValueEnum};

use ah_train::config::Overrides;
use ah_train::learner::Learner;
use ah_train::report;
use ah_train::train::{self, CostAwareParams, Mode, TrainOptions, TrainOutput};

/// Learner choice on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LearnerArg {
    /// The project's CART (scikit-learn's algorithm and tie-breaking; default).
    Cart,
    /// linfa-trees, leaf distributions recovered by routing the training rows.
    LinfaTrees,
}

/// Leaf score of the default mode.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ConfidenceArg {
    /// Wilson lower bound of the leaf's majority share (default).
    Wilson,
    /// Minus the leaf's expected time lost, shrunk toward the mean.
    Loss,
}

/// Learn a heuristic from an AutoHeuristic log: PyTorch's algorithm (`--upstream`) or the
/// cross-validated, cost-aware default; writes NAME.model.json, NAME.metrics.json,
/// NAME.report.md (with SVG plots) and NAME.dot.
#[derive(Debug, Parser)]
#[command(name = "ah-train", version, about, max_term_width = 100)]
pub struct Args {
    /// The training log (PyTorch's train.txt format, optionally .gz).
    pub file: PathBuf,
    /// Name of the heuristic (class/module name), e.g. PadMMH100.
    #[arg(
        help_heading = "Inputs and outputs",
        long,
        long_help,
        help = "Heuristic name, e.g. PadMMH100"
    )]
    pub heuristic_name: String,
    /// Folder for the outputs (created if missing).
    #[arg(
        help_heading = "Inputs and outputs",
        long,
        default_value = ".",
        long_help,
        help = "Folder for the outputs"
    )]
    pub output_dir: PathBuf,
    /// Extra evaluation set: a name and a log (repeatable). mm's `train_timm` and `train_hf`
    /// are also added three times to the training set, as PyTorch does.
    #[arg(help_heading = "Inputs and outputs", long, num_args = 2, value_names = ["SETNAME", "FILE"], action = clap::ArgAction::Append, long_help, help = "Extra evaluation set (repeatable)")]
    pub data: Vec<String>,
    /// Tree learner.
    #[arg(
        help_heading = "Model",
        long,
        value_enum,
        default_value = "cart",
        long_help,
        help = "Tree learner"
    )]
    pub learner: LearnerArg,
    /// Ranking: learn from near-best copies and report top-K metrics (PyTorch's --ranking).
    #[arg(
        help_heading = "Model",
        long,
        value_name = "K",
        long_help,
        help = "Train a ranking heuristic returning the top K"
    )]
    pub ranking: Option<usize>,
    /// The regression variant: learn each choice's time and pick the fastest (docs/training.md).
    #[arg(
        help_heading = "Model",
        long,
        long_help,
        conflicts_with = "ranking",
        help = "Regression variant (PyTorch's train_regression.py rule)"
    )]
    pub regression: bool,
    /// Default choice (for speedup-over-default metrics).
    #[arg(
        help_heading = "Model",
        long,
        value_name = "CHOICE",
        long_help,
        help = "Default choice for the metrics"
    )]
    pub default_choice: Option<String>,
    /// Seed of the split (and of the trees' feature order).
    #[arg(
        help_heading = "Model",
        long,
        default_value_t = 42,
        long_help,
        help = "Seed of the split and the trees"
    )]
    pub seed: u32,
    /// A split file ({"features", "train", "val", "test"}, as the Python reference's
    /// --write-split writes) naming each input's set.
    #[arg(
        help_heading = "Inputs and outputs",
        long,
        value_name = "FILE",
        long_help,
        help = "Take the train/val/test assignment from FILE"
    )]
    pub split: Option<PathBuf>,
    /// Write the split used to FILE (same format as --split).
    #[arg(
        help_heading = "Inputs and outputs",
        long,
        value_name = "FILE",
        long_help,
        help = "Write the split used to FILE"
    )]
    pub write_split: Option<PathBuf>,
    /// PyTorch's selection rule exactly (safe probability on val, most correct on val).
    #[arg(
        help_heading = "Selection",
        long,
        long_help,
        help = "Use PyTorch's selection rule exactly"
    )]
    pub upstream: bool,
    /// A JSON training config overriding the name's defaults (see docs/training.md).
    #[arg(
        help_heading = "Inputs and outputs",
        long,
        value_name = "FILE",
        long_help,
        help = "JSON training config"
    )]
    pub config: Option<PathBuf>,
    /// Extra augment operations (`NAME = EXPR` per line, `NAME :cat = EXPR` for categorical).
    #[arg(
        help_heading = "Inputs and outputs",
        long,
        value_name = "FILE",
        long_help,
        help = "Extra augment operations file"
    )]
    pub operations: Option<PathBuf>,
    /// Cost of one unsure input (an autotune) in units of ln(t_pick / t_best) (default mode).
    #[arg(
        help_heading = "Selection",
        long,
        default_value_t = 0.01,
        value_parser = non_negative,
        long_help,
        help = "Cost of an autotune (default mode)"
    )]
    pub autotune_cost: f64,
    /// Bound on the share of harmful wrong picks (more than 10% slower than the best): the
    /// one-sided 84% (z = 1) upper confidence bound of the cross-validated share must not exceed it
    /// (default mode).
    #[arg(
        help_heading = "Selection",
        long,
        default_value_t = 0.005,
        value_parser = share,
        long_help,
        help = "Bound on the share of harmful wrong picks (default mode)"
    )]
    pub max_harmful: f64,
    /// Cross-validation folds (default mode).
    #[arg(
        help_heading = "Selection",
        long,
        default_value_t = 5,
        value_parser = clap::value_parser!(u16).range(2..),
        long_help,
        help = "Cross-validation folds (default mode)"
    )]
    pub folds: u16,
    /// Store the range guard in the model: at run time a numeric feature (logged or augmented)
    /// outside the range seen in training makes the heuristic unsure; the final metrics apply
    /// it too (the grid table does not). On by default; off with `--upstream` and
    /// `--regression` (PyTorch has no range guard) unless asked for.
    #[arg(
        help_heading = "Range guard",
        long,
        help = "Unsure outside the ranges seen in training (default, not with --upstream or --regression)"
    )]
    pub range_guard: bool,
    /// Do not store the range guard: the heuristic also decides for inputs unlike any seen in
    /// training.
    #[arg(
        help_heading = "Range guard",
        long,
        conflicts_with = "range_guard",
        help = "No range guard"
    )]
    pub no_range_guard: bool,
    /// Which numeric features the range guard checks, with an optional log-space margin `:F`
    /// (a range widens to [min / F, max * F]): `box`, every feature (logged and augmented,
    /// strides included); `tested`, only the features the tree tests; `logged`, only the logged
    /// ones. docs/training.md compares them.
    #[arg(
        help_heading = "Range guard",
        long,
        value_name = "POLICY",
        default_value = "box",
        value_parser = clap::value_parser!(GuardPolicy),
        help = "Guarded features: box, tested or logged, with an optional margin (tested:2)"
    )]
    pub guard: GuardPolicy,
    /// Categorical features (logged or augmented, comma-separated) the category guard checks:
    /// after the model is chosen, a deciding leaf becomes unsure for a category of one of them
    /// that none of its training rows had (its answer there is an extrapolation the numeric
    /// range guard does not see). Stored as ordinary splits to unsafe leaves, so the runtime
    /// and the generated code need nothing new. Not with `--regression`. docs/training.md.
    #[arg(
        help_heading = "Range guard",
        long,
        value_name = "FEATURES",
        value_delimiter = ',',
        conflicts_with = "regression",
        help = "Unsure for a category a leaf never saw, of these categorical features"
    )]
    pub category_guard: Vec<String>,
    /// A choice timed `inf` for an input cannot be offered for it at run time: picking it counts
    /// as unsure (the runtime falls back to autotuning), not as an infinitely slow pick. For
    /// multi-kernels that leave out the variants that cannot run an input (reduction:
    /// persistent variants beyond their row length), whose log records those as `inf`. It
    /// applies to every metric, the unsafe-leaf rule and the cross-validated threshold, and is
    /// recorded in the model (`training.extra.inf_unavailable`, read by `ah-use replay`).
    /// Without it a failed pick is a real failure (PyTorch's semantics; pad_mm, mm). Not with
    /// --upstream (PyTorch's rule, reproduced exactly, counts a pick timed inf as a failed,
    /// wrong pick) or --regression (which already drops every failed measurement, so a failed
    /// choice is never picked).
    #[arg(
        help_heading = "Selection",
        long,
        long_help,
        conflicts_with_all = ["upstream", "regression"],
        help = "A choice timed inf for an input is never offered for it: picking it is unsure, not a failure"
    )]
    pub inf_unavailable: bool,
    /// How the default mode scores a leaf before thresholding it.
    #[arg(
        help_heading = "Selection",
        long,
        value_enum,
        default_value = "wilson",
        long_help,
        help = "Leaf score (default mode)"
    )]
    pub confidence: ConfidenceArg,
    /// Do not generate code after training (by default the PyTorch artifact `_NAME.py` is
    /// written to the output folder, and the Rust module too when --rust-crate is given).
    #[arg(
        help_heading = "Code generation",
        long,
        long_help,
        help = "Skip code generation"
    )]
    pub no_codegen: bool,
    /// Also generate the Rust module into this generated-heuristics crate
    /// (e.g. generated/ah-heuristics).
    #[arg(
        help_heading = "Code generation",
        long,
        value_name = "DIR",
        long_help,
        conflicts_with = "no_codegen",
        help = "Generated heuristics crate for the Rust module"
    )]
    pub rust_crate: Option<PathBuf>,
    /// Worker threads for the grid (default: all cores).
    #[arg(help_heading = "Run", long, long_help, help = "Worker threads")]
    pub threads: Option<usize>,
    /// Print the wall time of the training phases on stderr.
    #[arg(
        help_heading = "Run",
        long,
        long_help,
        help = "Print phase timings on stderr"
    )]
    pub timings: bool,
    /// No progress bar, tables, list of the files written or notes; warnings, errors and what
    /// a flag asks for (--timings) are still printed (docs/cli.md).
    #[arg(
        help_heading = "Run",
        long,
        short,
        long_help,
        help = "No progress, tables or notes; warnings and errors still"
    )]
    pub quiet: bool,
}

/// A cost: a number >= 0.
fn non_negative(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v >= 0.0 => Ok(v),
        _ => Err("give a number >= 0".into()),
    }
}

/// A share: a number in [0, 1].
fn share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err("give a number between 0 and 1".into()),
    }
}

/// Number of progress steps of a run (0 when the log's metadata cannot be read; the training
/// then reports the error).
fn expected_fits(args: &Args, opts: &TrainOptions) -> u64 {
    let Ok(line) = ah_log::metadata_line(&args.file) else {
        return 0;
    };
    let Ok(md) = ah_log::parse_metadata_line(&line) else {
        return 0;
    };
    let Ok(settings) =
        ah_train::config::Settings::resolve(&md.name, &opts.overrides, &opts.config_dir)
    else {
        return 0;
    };
    let grid = settings.grid.configs().len() as u64;
    if args.regression {
        12
    } else if Mode::for_flags(args.upstream, args.ranking) == Mode::Upstream {
        grid
    } else {
        2 * grid * (opts.cost.folds as u64 + 1)
    }
}

/// Runs the command.
pub fn run(args: Args) -> Result<()> {
    if let Some(n) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .context("setting up threads")?;
    }
    // Checked before training: the name must be one every tool (ah-codegen included) accepts.
    if let Err(e) = ah_core::model::check_heuristic_name(&args.heuristic_name) {
        bail!("--heuristic-name: {e}\nhint: use UpperCamelCase letters and digits, starting with a capital letter, like `PadMMH100`");
    }
    if let (Some(krate), false) = (&args.rust_crate, args.no_codegen) {
        ah_codegen::check_rust_crate(krate).context("--rust-crate")?;
    }
    let opts = options(&args)?;
    let bar = if std::io::stderr().is_terminal() && !args.quiet {
        indicatif::ProgressBar::new(expected_fits(&args, &opts))
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} training [{bar:30}] {pos}/{len} fits {elapsed}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    // Errors name their file themselves: no extra context.
    let out = if args.regression {
        ah_train::regression::train_regression(&opts, &|n| bar.inc(n))?
    } else {
        train::train(&opts, &|n| bar.inc(n))?
    };
    bar.finish_and_clear();
    if args.timings {
        let t: Vec<String> = out
            .timings
            .iter()
            .map(|(k, v)| format!("{k} {v:.3}s"))
            .collect();
        eprintln!("timings: {}", t.join(", "));
    }
    for w in &out.warnings {
        eprintln!("warning: {w}");
    }
    // The code is rendered (the Python artifact checked) while the outputs are written, and
    // written only once they are: a failed write leaves no generated file behind.
    let rendered = std::thread::scope(|s| {
        let codegen = (!args.no_codegen).then(|| s.spawn(|| render(&args, &out)));
        let written = write_outputs(&args, &out);
        let rendered = codegen.map(|h| h.join().expect("rendering does not panic"));
        written.and_then(|()| rendered.transpose())
    })?;
    if let Some((options, files)) = rendered {
        let outcome = ah_codegen::apply(files, options.mode).with_context(|| {
            format!(
                "writing the code of {} (the model is written; retry with ah-codegen)",
                args.heuristic_name
            )
        })?;
        if !args.quiet {
            for f in &outcome.files {
                eprintln!("generated {}", f.path.display());
            }
        }
    }
    // The process ends here: its exit returns the memory at once, where dropping the output
    // would free each input's key strings one by one (milliseconds on a large log).
    std::mem::forget(out);
    Ok(())
}

/// Renders the heuristic's code from the trained model (the Python artifact next to the
/// outputs, the Rust module with --rust-crate), without writing it.
fn render(
    args: &Args,
    out: &TrainOutput,
) -> Result<(ah_codegen::Options, Vec<ah_codegen::GeneratedFile>)> {
    let options = ah_codegen::Options {
        rust_crate: args.rust_crate.clone(),
        python_dir: Some(args.output_dir.clone()),
        dot_file: None,
        mode: ah_codegen::Mode::Write,
        command: None,
    };
    let files = ah_codegen::render(&out.model, &options).with_context(|| {
        format!(
            "generating code for {} (the model is written; retry with ah-codegen)",
            args.heuristic_name
        )
    })?;
    Ok((options, files))
}

/// The training options of the command line (checked).
fn options(args: &Args) -> Result<TrainOptions> {
    let data: Vec<(String, PathBuf)> = args
        .data
        .chunks(2)
        .map(|c| (c[0].clone(), PathBuf::from(&c[1])))
        .collect();
    let (overrides, config_dir) = match &args.config {
        Some(p) => (
            Overrides::read(p)?,
            p.parent().map(Path::to_path_buf).unwrap_or_default(),
        ),
        None => (Overrides::default(), PathBuf::from(".")),
    };
    let extra_operations = match &args.operations {
        Some(p) => ah_core::ops::parse_operations_file(p)?,
        None => Vec::new(),
    };
    let command = std::iter::once("ah-train".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    if args.ranking.is_some() && !args.upstream && !args.quiet {
        eprintln!("note: --ranking trains with PyTorch's selection rule (as --upstream): the cost-aware rule decides single choices");
    }
    Ok(TrainOptions {
        log: args.file.clone(),
        heuristic_name: args.heuristic_name.clone(),
        data,
        learner: match args.learner {
            LearnerArg::Cart => Learner::Cart,
            LearnerArg::LinfaTrees => Learner::LinfaTrees,
        },
        ranking: args.ranking,
        default_choice: args.default_choice.clone(),
        seed: args.seed,
        split_file: args.split.clone(),
        // Ranking heuristics are PyTorch's: the cost-aware rule gates single decisions by
        // marking leaves unsafe, which would leave nothing to rank.
        mode: Mode::for_flags(args.upstream, args.ranking),
        cost: CostAwareParams {
            autotune_cost: args.autotune_cost,
            max_harmful: args.max_harmful,
            folds: usize::from(args.folds),
            confidence: match args.confidence {
                ConfidenceArg::Loss => train::Confidence::Loss,
                ConfidenceArg::Wilson => train::Confidence::Wilson,
            },
            ..CostAwareParams::default()
        },
        overrides,
        config_dir,
        extra_operations,
        command,
        range_guard: match (args.range_guard, args.no_range_guard) {
            (true, _) => true,
            (_, true) => false,
            _ => TrainOptions::range_guard_default(args.upstream, args.regression),
        },
        guard: args.guard,
        category_guard: args.category_guard.clone(),
        inf_unavailable: args.inf_unavailable,
    })
}

/// Writes the model, metrics, tree, plots, report (and the split when asked), and prints the
/// tables unless quiet.
fn write_outputs(args: &Args, out: &TrainOutput) -> Result<()> {
    let name = &args.heuristic_name;
    let dir = &args.output_dir;
    let model_json = out.model.to_json();
    let metrics_json = serde_json::to_string_pretty(&out.metrics)? + "\n";
    let dot = ah_codegen::render_dot(&out.model)?;
    let test_rows = out.rows.get("test").cloned().unwrap_or_default();
    let speedup_svg = report::histogram_svg(
        "Speedup over the default choice (decided test inputs)",
        "log2(default time / picked time)",
        &test_rows.speedup_over_default,
        true,
    );
    let lost: Vec<f64> = test_rows
        .regret_ratio
        .iter()
        .copied()
        .filter(|r| *r > 1.0)
        .collect();
    let regret_svg = report::histogram_svg(
        &format!(
            "Regret: {} test inputs picked slower than the best ({} lose nothing)",
            lost.len(),
            test_rows.regret_ratio.len() - lost.len()
        ),
        "log2(picked time / best time)",
        &lost,
        true,
    );
    let (sp, rg, dt) = (
        format!("{name}.speedup.svg"),
        format!("{name}.regret.svg"),
        format!("{name}.dot"),
    );
    let md = report::markdown(out, &sp, &rg, &dt);
    let mut files = vec![
        (
            dir.join(format!("{name}.model.json")),
            model_json.into_bytes(),
        ),
        (
            dir.join(format!("{name}.metrics.json")),
            metrics_json.into_bytes(),
        ),
        (dir.join(&dt), dot.into_bytes()),
        (dir.join(&sp), speedup_svg.into_bytes()),
        (dir.join(&rg), regret_svg.into_bytes()),
        (dir.join(format!("{name}.report.md")), md.into_bytes()),
    ];
    if let Some(p) = &args.write_split {
        files.push((
            p.clone(),
            (serde_json::to_string(&out.split_file())? + "\n").into_bytes(),
        ));
    }
    // All or nothing: a failure leaves the previous outputs as they were.
    // The error names the file or folder (once) and what to do.
    ah_core::fs::write_all_atomic(&files).context("writing the outputs")?;
    if !args.quiet {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{}", report::grid_table(&out.grid, out.best))?;
        writeln!(stdout, "{}", report::metrics_table(&out.metrics))?;
        for (p, _) in &files {
            eprintln!("wrote {}", p.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Args::command().debug_assert();
        let a = Args::try_parse_from([
            "ah-train",
            "t.txt",
            "--heuristic-name",
            "X",
            "--data",
            "a",
            "a.txt",
            "--data",
            "b",
            "b.txt",
        ])
        .unwrap();
        assert_eq!(a.data, ["a", "a.txt", "b", "b.txt"]);
        assert!(!a.upstream);
        assert_eq!(a.autotune_cost, 0.01);
        assert!(Args::try_parse_from(["ah-train", "t.txt"]).is_err());
    }

    /// Names ah-codegen would refuse, and a `--rust-crate` that is no crate, stop the run
    /// before the log is even read (the log here does not exist).
    #[test]
    fn names_and_crates_codegen_refuses_are_refused_before_training() {
        for name in ["Pad_MM", "pad_mm", "Self", "Type", "PadMM\nimport os"] {
            let a = Args::try_parse_from([
                "ah-train",
                "/nonexistent/log.txt",
                "--heuristic-name",
                name,
            ])
            .unwrap();
            let err = format!("{:#}", run(a).unwrap_err());
            assert!(
                err.contains("--heuristic-name") && !err.contains("log.txt"),
                "{err}"
            );
        }
        let a = Args::try_parse_from([
            "ah-train",
            "/nonexistent/log.txt",
            "--heuristic-name",
            "PadMM",
            "--rust-crate",
            "/nonexistent/crate",
        ])
        .unwrap();
        let err = format!("{:#}", run(a).unwrap_err());
        assert!(err.contains("not a generated heuristics crate"), "{err}");
    }
}
