//! `ah-prune`: trains which of Inductor's max-autotune GEMM choices to keep, for compile time
//! at equal or better run time, from an `inductor_mm` log and its extras sidecar; writes the
//! model, a report, and (unless `--no-codegen`) the `InductorChoices` handler module.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use ah_train::prune::{
    guard_words, report, train, CvSplit, FeatureSource, GemmOp, Pricing, PruneParams,
};

/// `--prices` (the library's [`Pricing`], which has no clap derive).
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Prices {
    Logged,
    OnePtxas,
}

/// `--features` (the library's [`FeatureSource`], which has no clap derive).
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Features {
    Logged,
    Seen,
}

/// `--cv-split` (the library's [`CvSplit`], which has no clap derive).
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Split {
    Gemm,
    Shape,
}

/// Train a max-autotune pruning heuristic (see docs/inductor.md).
#[derive(Parser, Debug)]
#[command(
    version,
    about = "Train which of Inductor's max-autotune GEMM choices to keep (compile time at equal or \
             better run time) from an inductor_mm log: writes the model, a report, and the \
             InductorChoices handler module (docs/inductor.md)"
)]
struct Cli {
    /// The `inductor_mm` logs (`ah-collect --name inductor_mm`, e.g. the default mixture and
    /// `--shapes decode`), their GEMMs in this order; each log's extras sidecar is
    /// `LOG.extras.jsonl`, or `LOG.extras.jsonl.gz` where only that exists.
    #[arg(required = true, value_name = "LOG")]
    logs: Vec<PathBuf>,
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
    /// Also write the tree as a dependency-free Rust module (`inductor_mmh100.rs` for the
    /// default name) into this folder, e.g. `generated/ah-inductor-choices/src`.
    #[arg(long)]
    rust_dir: Option<PathBuf>,
    /// Also write the `mm` AutoHeuristic artifact (`_InductorMMH100.py` for the default name)
    /// into this folder, for PyTorch's `autoheuristic_use="mm"` (docs/inductor.md).
    #[arg(long)]
    artifact_dir: Option<PathBuf>,
    /// Do not write the handler module (nor the Rust module or the artifact).
    #[arg(long, conflicts_with_all = ["python_dir", "rust_dir", "artifact_dir"])]
    no_codegen: bool,
    /// Calls of a GEMM a job makes: a run-time loss counts this many times.
    #[arg(long, default_value_t = PruneParams::default().horizon)]
    horizon: f64,
    /// A pick more than this fraction slower than the faster of cuBLAS and Inductor's pick
    /// (compiled truth) is harmful; leaves avoid harmful picks first.
    #[arg(long, default_value_t = PruneParams::default().harm)]
    harm: f64,
    /// Seconds of autotuning one harmful pick is worth avoiding: leaves then minimise their
    /// autotuning and run-time loss plus this price per harmful pick, so they spend autotuning
    /// where it avoids most harm. Default: inf (avoid harmful picks first, at any cost).
    #[arg(long, value_name = "S", default_value_t = PruneParams::default().harm_price_s)]
    harm_price: f64,
    /// A price for one op's harmful picks instead of --harm-price, e.g. `bmm=30` (repeat for
    /// several ops; OP is mm, addmm or bmm, S seconds or inf).
    #[arg(long, value_name = "OP=S", value_parser = op_price)]
    op_harm_price: Vec<(GemmOp, f64)>,
    /// Fewest training GEMMs in a leaf.
    #[arg(long, default_value_t = PruneParams::default().min_leaf)]
    min_leaf: usize,
    /// Deepest split level.
    #[arg(long, default_value_t = PruneParams::default().max_depth)]
    max_depth: usize,
    /// Fewest GEMMs of a leaf on which the template choices it keeps beat cuBLAS alone by more
    /// than --harm; with fewer, the leaf keeps cuBLAS only or the full list.
    #[arg(long, default_value_t = PruneParams::default().min_support)]
    min_support: usize,
    /// Fewest GEMMs of a leaf on which cuBLAS alone is within --harm of the best for the leaf
    /// to decide cuBLAS only; with fewer, it keeps templates or the full list (0: no bound).
    #[arg(long, default_value_t = PruneParams::default().min_extern_support)]
    min_extern_support: usize,
    /// Never leave a GEMM to Inductor's full list (default max-autotune): a leaf keeps at most
    /// --max-keep template choices, which bounds the autotuning time.
    #[arg(long)]
    no_full_list: bool,
    /// The most template choices a leaf keeps (each is generated, compiled and benchmarked).
    #[arg(long, default_value_t = PruneParams::default().max_keep)]
    max_keep: usize,
    /// Leaves choose among the top-k prefixes of their ranking only, not also among lists grown
    /// one choice at a time (the trainer before 2026-11-24's third session).
    #[arg(long)]
    no_grown_lists: bool,
    /// The tree's first split separates the GEMMs with a leading dimension below 16-byte
    /// alignment, which cuBLAS cannot run on its fast path, from the rest, so that each side
    /// learns its own rule (docs/inductor.md)
    #[arg(long)]
    alignment_first: bool,
    /// The tree may also split on k over the larger of m and n: how long the contraction is
    /// against the output (a Gram matrix, linear attention's state, a weight gradient over many
    /// tokens), where fp32 cuBLAS without TF32 loses most (docs/inductor.md)
    #[arg(long)]
    k_ratio: bool,
    /// The tree may also split on a GEMM's narrowest side, the smallest of m, k and n: what
    /// tells an MoE router, a LoRA adapter or a small head (a side of 4-64 over many tokens)
    /// from an ordinary linear (docs/inductor.md)
    #[arg(long)]
    min_side: bool,
    /// fp32 GEMMs without TF32 of more than MACS multiply-adds (batch*m*k*n) are never decided
    /// cuBLAS only: where the tree would, they keep Inductor's full list. Without TF32, cuBLAS
    /// and Triton's fp32 templates race on even terms, and held-out GEMMs of this kind missed
    /// most where the tree trusted cuBLAS (docs/inductor.md)
    #[arg(long, value_name = "MACS")]
    fp32_full_list_above: Option<f64>,
    /// With --fp32-full-list-above: the guarded GEMMs keep the list of templates the trainer
    /// learns on all of them together (or the full list, where that scores better) instead of
    /// the full list, which costs less autotuning (docs/inductor.md)
    #[arg(long, requires = "fp32_full_list_above")]
    fp32_guard_list: bool,
    /// With --fp32-guard-list: seconds of autotuning one harmful pick is worth when that list is
    /// weighed against the full list, instead of --harm-price. Blind set 33 judged the list
    /// learned at 40 s against the full list: as many misses, half the autotuning; a tree
    /// priced higher would otherwise give the guarded GEMMs the full list (docs/inductor.md)
    #[arg(long, value_name = "S", requires = "fp32_guard_list")]
    fp32_guard_price: Option<f64>,
    /// fp32 GEMMs without TF32 that the tree leaves to Inductor's full list go without the
    /// template configs offered on at least SEEN strict-fp32 training GEMMs that never
    /// benchmarked within --harm of the best choice of any: they change no pick the logs saw and
    /// include the slowest configs to compile (docs/inductor.md)
    #[arg(long, value_name = "SEEN")]
    fp32_drop_never_near: Option<usize>,
    /// Score searches whose fastest benchmark is under MS milliseconds as the handler's
    /// re-timing picks them (install()'s default, python/ah_inductor/retime.py uses 0.2): the
    /// kept choice fastest in compiled truth, instead of the one Inductor's benchmark reads
    /// fastest (cuBLAS's CPU submit time inflates its benchmark on small GEMMs)
    #[arg(long, value_name = "MS")]
    retime_below_ms: Option<f64>,
    /// Score a kept list whose Triton configs all need more shared memory than the device has
    /// (the log's shared_memory) at a GEMM's operand widths as the handler runs it: Inductor's
    /// full list. The handler applies that rule whether or not the tree was grown with it
    #[arg(long)]
    model_unfit: bool,
    /// Folds of the cross-validation.
    #[arg(long, default_value_t = PruneParams::default().folds)]
    folds: usize,
    /// Run the cross-validation this many times, each over another split into folds, and report
    /// the means: the harmful count of one setting moves by several GEMMs with the split, so
    /// comparing settings (scripts/inductor_prune_grid.sh) takes several.
    #[arg(long, value_name = "R", default_value_t = PruneParams::default().cv_repeats)]
    cv_repeats: usize,
    /// How the cross-validation splits GEMMs into folds: `gemm`, one at a time, or `shape`,
    /// the GEMMs of one op, k, n, dtype, layout and TF32 setting together (a layer's weight at
    /// every token count), so that a GEMM is decided by a tree that saw none of its shape, as a
    /// new architecture's are (docs/inductor.md).
    #[arg(long, value_enum, default_value_t = Split::Gemm)]
    cv_split: Split,
    /// Train on the first N GEMMs of the logs only (a log grows as its collection resumes); the
    /// rest are scored as held out. N counts GEMMs with compiled truth, not extras lines: give
    /// the count the report names, or a grown log adds GEMMs to the training ones. One count is over the logs in a row; one per log
    /// (`--first 436,139,267`) keeps the training GEMMs fixed however each log grows.
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',')]
    first: Vec<usize>,
    /// How a kept list's compile-time price is reckoned: `logged` (as the logs measured
    /// max-autotune as PyTorch 2.11 leaves it, each template compiled twice; prices add up) or
    /// `one-ptxas` (as users of the handler pay it: templates precompile in parallel, the
    /// slowest sets the wall, benchmarks take hundredths of a second; docs/inductor.md).
    #[arg(long, value_enum, default_value_t = Prices::Logged)]
    prices: Prices,
    /// Which features a GEMM is trained on: `logged` (the log's, as the collection wrote the
    /// GEMM) or `seen` (as Inductor handed it to the choices handler, where the extras line
    /// recorded it: Inductor's pad_mm pass pads a misaligned width first, which 19 of the 1514
    /// logged H100 GEMMs met; a shipped handler decides on these; docs/inductor.md).
    #[arg(long, value_enum, default_value_t = Features::Logged)]
    features: Features,
    /// Write nothing; exit 1 when the handler module on disk differs from what this command
    /// generates (stale generated code).
    #[arg(long)]
    check: bool,
    /// Worker threads: the tree and each fold's tree of the cross-validation grow side by side
    /// (default: all cores; the result does not depend on it).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
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

/// The training parameters `cli` asks for.
fn params(cli: &Cli) -> anyhow::Result<PruneParams> {
    Ok(PruneParams {
        horizon: cli.horizon,
        harm: cli.harm,
        harm_price_s: cli.harm_price,
        op_harm_price_s: op_prices(&cli.op_harm_price)?,
        min_leaf: cli.min_leaf,
        max_depth: cli.max_depth,
        min_support: cli.min_support,
        min_extern_support: cli.min_extern_support,
        full_list: !cli.no_full_list,
        max_keep: cli.max_keep,
        grown_lists: !cli.no_grown_lists,
        alignment_first: cli.alignment_first,
        k_ratio: cli.k_ratio,
        min_side: cli.min_side,
        fp32_full_list_above: cli.fp32_full_list_above,
        fp32_guard_list: cli.fp32_guard_list,
        fp32_guard_price_s: cli.fp32_guard_price,
        fp32_drop_never_near: cli.fp32_drop_never_near,
        retime_below_ms: cli.retime_below_ms,
        model_unfit: cli.model_unfit,
        folds: cli.folds,
        cv_repeats: cli.cv_repeats,
        cv_split: match cli.cv_split {
            Split::Gemm => CvSplit::Gemm,
            Split::Shape => CvSplit::Shape,
        },
        pricing: match cli.prices {
            Prices::Logged => Pricing::Logged,
            Prices::OnePtxas => Pricing::OnePtxas,
        },
        features: match cli.features {
            Features::Logged => FeatureSource::Logged,
            Features::Seen => FeatureSource::Seen,
        },
        first: cli.first.clone(),
        ..PruneParams::default()
    })
}

/// Trains, writes; false when `--check` found stale code.
fn run(cli: Cli) -> anyhow::Result<bool> {
    if let Some(n) = cli.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.into())
            .build_global()
            .context("setting up threads")?;
    }
    if !valid_name(&cli.heuristic_name) {
        anyhow::bail!("--heuristic-name {:?}: use letters and digits, starting with a capital letter (e.g. InductorMMH100)", cli.heuristic_name);
    }
    let params = params(&cli)?;
    let bar = if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new(params.trees())
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} growing trees (the model, then the cross-validation's) [{bar:30}] {pos}/{len} {elapsed}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let trained = train(&cli.logs, &cli.heuristic_name, &params, &|n| bar.inc(n));
    bar.finish_and_clear();
    let (model, data) = trained?;
    let text = report(&model, &data);
    let modules = if cli.no_codegen {
        Vec::new()
    } else {
        modules(&cli, &model, &text)?
    };
    if cli.check {
        return check(&modules);
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
    for (path, code) in &modules {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        ah_core::fs::write_atomic(path, code.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if !modules.is_empty() {
        eprintln!(
            "the handler: import it and call install() before torch.compile (docs/inductor.md)"
        );
    }
    Ok(true)
}

/// The generated files: the handler module, the Rust module with `--rust-dir`, the artifact
/// with `--artifact-dir`.
fn modules(
    cli: &Cli,
    model: &ah_train::prune::PruneModel,
    report: &str,
) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let json = serde_json::to_value(model)?;
    let name = &cli.heuristic_name;
    let dir = cli.python_dir.as_ref().unwrap_or(&cli.output_dir);
    let mut out = vec![(
        dir.join(ah_codegen::inductor::file_name(name)),
        ah_codegen::inductor::render_module(&json, &header(model, report, "#", PRUNES, PY_USE))?,
    )];
    if let Some(dir) = &cli.rust_dir {
        out.push((
            dir.join(ah_codegen::inductor_rust::file_name(name)),
            ah_codegen::inductor_rust::render_module(
                &json,
                &header(model, report, "//!", PRUNES, RS_USE),
            )?,
        ));
    }
    if let Some(dir) = &cli.artifact_dir {
        out.push((
            dir.join(ah_codegen::inductor_artifact::file_name(name)),
            ah_codegen::inductor_artifact::render_artifact(
                &json,
                &header(model, report, "#", RANKS, ARTIFACT_USE),
            )?,
        ));
    }
    Ok(out)
}

/// `--check`: whether the modules on disk are what this command generates.
fn check(modules: &[(PathBuf, String)]) -> anyhow::Result<bool> {
    if modules.is_empty() {
        anyhow::bail!("--check compares the generated modules: leave out --no-codegen");
    }
    let mut fresh = true;
    for (path, code) in modules {
        let on_disk =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        if on_disk == *code {
            eprintln!("{}: up to date", path.display());
        } else {
            eprintln!(
                "{}: stale; regenerate it with the command in its header",
                path.display()
            );
            fresh = false;
        }
    }
    Ok(fresh)
}

const PRUNES: &str =
    "prunes Inductor's max-autotune GEMM choices before template code is generated.";
const RANKS: &str =
    "the same tree as PyTorch's `mm` AutoHeuristic hook asks it (after generation).";
const ARTIFACT_USE: &str = "Use: copy into torch/_inductor/autoheuristic/artifacts/ and set
torch._inductor.config.autoheuristic_use = \"mm\" (see docs/inductor.md in autoheuristic-rs).";
const PY_USE: &str =
    "Use: import this file as a module and call install() before torch.compile (see
docs/inductor.md in autoheuristic-rs).";
const RS_USE: &str =
    "The same tree as the InductorChoices handler module generated with it (docs/inductor.md);
`decide` answers what to keep of Inductor's max-autotune choices for a GEMM.";

/// A module's header in comment syntax `c`: what made it, from what, and how well it does.
fn header(
    model: &ah_train::prune::PruneModel,
    report: &str,
    c: &str,
    what: &str,
    usage: &str,
) -> String {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--check")
        .collect();
    let cv = cv_lines(report);
    let lines = [
        format!("{}: {what}", model.name),
        format!(
            "Generated by ah-prune {}; do not edit. Regenerate with:",
            env!("CARGO_PKG_VERSION")
        ),
        format!("  ah-prune {}", args.join(" ").replace(['\n', '\r'], " ")),
        format!(
            "Trained on {} GEMMs (horizon {} calls, harm bound {} %{}{}). Cross-validated:",
            model.gemms,
            model.horizon,
            model.harm * 100.0,
            match model.prices {
                Pricing::Logged => "",
                Pricing::OnePtxas => "; autotuning seconds as with one ptxas, modelled",
            },
            guard_words(model).map_or(String::new(), |g| format!("; {g}")),
        ),
    ]
    .into_iter()
    .chain(cv)
    .chain(usage.lines().map(str::to_string));
    lines.map(|l| format!("{c} {l}\n")).collect()
}

/// The report's cross-validated section as header lines, each one line of comment whatever the
/// logged values in it hold (a GEMM's op or dtype in the worst picks comes from the log: a bare
/// carriage return there would end a Python comment).
fn cv_lines(report: &str) -> Vec<String> {
    report
        .lines()
        .skip_while(|l| !l.starts_with("## Cross-validated"))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| !l.is_empty())
        .map(|l| format!("  {}", ah_codegen::escape::comment(l)))
        .collect()
}

fn valid_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric())
}

/// `--op-harm-price OP=S`.
fn op_price(text: &str) -> Result<(GemmOp, f64), String> {
    let (op, price) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: write OP=S, e.g. bmm=30"))?;
    let op =
        GemmOp::parse(op).ok_or_else(|| format!("{op:?} is not an op: use mm, addmm or bmm"))?;
    let price: f64 = price
        .parse()
        .map_err(|_| format!("{price:?} is not a number of seconds (or inf)"))?;
    Ok((op, price))
}

/// The prices of `--op-harm-price`, by op; an op given twice is refused.
fn op_prices(given: &[(GemmOp, f64)]) -> anyhow::Result<[Option<f64>; 3]> {
    let mut prices = [None; 3];
    for &(op, price) in given {
        if prices[op.index()].replace(price).is_some() {
            anyhow::bail!(
                "--op-harm-price names {} twice: give each op one price",
                op.name()
            );
        }
    }
    Ok(prices)
}

#[cfg(test)]
mod tests {
    use super::cv_lines;

    #[test]
    fn header_lines_of_the_report_stay_comments() {
        let report = "# T\n\n## Cross-validated\n\n| mm\r\u{2028}x | 1 |\n\n## On the training GEMMs\n| no |\n";
        let lines = cv_lines(report);
        assert_eq!(lines, ["  | mm\\r\\u{2028}x | 1 |"]);
    }
}
