//! `ah-use`: the use step of the pipeline (see the crate docs).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use ah_bench::backend::cpu::CpuBackend;
use ah_bench::backend::cuda::CudaBackend;
use ah_bench::runners::{self, RunnerOptions};
use ah_bench::DynRunner;
use ah_bench::{Backend, TimingConfig};
use ah_runtime::runtime::Config;
use ah_use::workload::{run_workload, DecisionRecord, WorkloadConfig, WorkloadReport};
use anyhow::{bail, Context as _};
use clap::{Parser, Subcommand, ValueEnum};

/// Use learned heuristics: run a workload through the runtime, or replay a heuristic on a log.
#[derive(Parser, Debug)]
#[command(name = "ah-use", version, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Draw a fresh workload, decide each input with the generated heuristics (AUTOHEURISTIC_USE),
    /// autotune and cache the pick when unsure, and report the time against always-default and
    /// the oracle.
    Run(RunArgs),
    /// Evaluate a trained heuristic on a log (ours or PyTorch's), no GPU needed: decisions, unsure
    /// rate, speedup over the default, share of the oracle, regret, the worst inputs.
    Replay(ReplayArgs),
}

#[derive(Parser, Debug)]
struct ReplayArgs {
    /// The log to replay (plain or .gz).
    log: PathBuf,
    /// The trained model (NAME.model.json written by ah-train).
    #[arg(
        long,
        conflicts_with = "heuristic",
        required_unless_present = "heuristic"
    )]
    model: Option<PathBuf>,
    /// A heuristic by name: one shipped in the generated crate (compiled into ah-use, found
    /// from any folder), or NAME.model.json in --models.
    #[arg(long)]
    heuristic: Option<String>,
    /// Folder of model JSONs to look --heuristic up in, instead of the heuristics compiled
    /// into ah-use.
    #[arg(long, value_name = "DIR", requires = "heuristic")]
    models: Option<PathBuf>,
    /// How many of the worst wrong picks to list.
    #[arg(long, default_value_t = 10)]
    worst: usize,
    /// Write the report as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write every input's decision as CSV: the logged features, the fastest choice, each
    /// choice's median time (`<choice>_ms`), the pick (empty when unsure), why it is unsure,
    /// the pick's time over the best, the tree's leaf.
    #[arg(long, value_name = "FILE")]
    decisions: Option<PathBuf>,
    /// No report, progress or notes; warnings and errors are still printed and --json is
    /// still written (docs/cli.md).
    #[arg(
        long,
        short,
        help = "No progress, summaries or notes; warnings and errors still"
    )]
    quiet: bool,
}

#[derive(Parser, Debug)]
struct RunArgs {
    /// Optimization (runner) name, e.g. pad_mm.
    #[arg(long, default_value = "pad_mm")]
    name: String,
    /// Where to run the choices: the GPU when one is found, else the CPU.
    #[arg(long, value_enum, default_value_t = DeviceArg::Auto)]
    device: DeviceArg,
    /// Inputs in the workload.
    #[arg(long, default_value_t = 40)]
    num_samples: u64,
    /// Seed of the workload; use one that was not used to collect the training data.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Repetitions per choice (median of the per-repetition minima).
    #[arg(long, default_value_t = 1)]
    reps: usize,
    /// The choice a program takes without a heuristic (default: PyTorch's for the name).
    #[arg(long)]
    default_choice: Option<String>,
    /// Pick cache file (default: the runtime's, under the user's cache folder).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Turn the pick cache off (same as AUTOHEURISTIC_DISABLE_CACHE=1).
    #[arg(long)]
    no_cache: bool,
    /// Decide with this model JSON (written by ah-train) instead of the heuristics compiled
    /// into ah-use: try a heuristic before shipping it.
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// Use the heuristic even if AUTOHEURISTIC_USE does not list the name.
    #[arg(long)]
    force_use: bool,
    /// Largest dimension (a power of two) for the runner's shapes (pad_mm and cublaslt_mm;
    /// refused for the others).
    #[arg(long, value_parser = runners::parse_max_dim)]
    max_dim: Option<u32>,
    /// Write the whole report (every decision and the totals) as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// No report, progress or notes; warnings and errors are still printed and --json is
    /// still written (docs/cli.md).
    #[arg(
        long,
        short,
        help = "No progress, summaries or notes; warnings and errors still"
    )]
    quiet: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum DeviceArg {
    /// The GPU if a CUDA driver and device are found, else the CPU (always the CPU in a build
    /// without the `cuda` feature).
    Auto,
    /// CUDA device 0 (needs a build with `--features cuda`, as `make build` and the pipeline
    /// make).
    Cuda,
    /// The CPU backend.
    Cpu,
}

fn main() -> ExitCode {
    CudaBackend::prefer_eager_module_loading();
    // Errors to stderr with status 2; a closed stdout pipe (`| head`) ends quietly.
    ah_core::error::exit_code(run(Cli::parse()))
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run_cmd(args),
        Command::Replay(args) => replay_cmd(args),
    }
}

fn open_backend(device: DeviceArg, quiet: bool) -> anyhow::Result<Backend> {
    let cuda = match device {
        DeviceArg::Cpu => false,
        DeviceArg::Cuda => true,
        DeviceArg::Auto => {
            let found = CudaBackend::driver_present() && CudaBackend::device_count() > 0;
            if !found && !quiet {
                eprintln!("no CUDA device found: running the workload on the CPU");
            }
            found
        }
    };
    Ok(if cuda {
        Backend::Cuda(Box::new(
            CudaBackend::new(0, TimingConfig::PYTORCH).context("cannot start CUDA device 0")?,
        ))
    } else {
        Backend::Cpu(CpuBackend::new())
    })
}

/// The runner called `name`, with its options checked; an error names the runners there are
/// (or says that `name` needs a build with CUDA).
fn find_runner(name: &str, options: &RunnerOptions) -> anyhow::Result<Box<dyn DynRunner>> {
    let Some(runner) = runners::find(name, options) else {
        if runners::CUDA_ONLY.contains(&name) {
            bail!(
                "runner `{name}` runs on a CUDA GPU only, and this ah-use was built without CUDA\nhint: build it with `--features cuda` (make build does)"
            );
        }
        let names: Vec<_> = runners::registry(options)
            .iter()
            .map(|r| r.name())
            .collect();
        bail!("no runner called `{name}`; known: {}", names.join(", "));
    };
    runners::check_options(name, options).map_err(anyhow::Error::msg)?;
    Ok(runner)
}

/// The runtime configuration of `ah-use run`: the environment's (`AUTOHEURISTIC_USE`, ...),
/// with `--force-use` and `--no-cache` applied; a note when the heuristic will not be asked.
fn use_config(args: &RunArgs) -> Config {
    let mut config = Config::from_env();
    if args.force_use && !config.use_enabled(&args.name) {
        config.use_list = format!("{},{}", config.use_list, args.name);
    }
    if args.no_cache {
        config.disable_cache = true;
    }
    if !config.use_enabled(&args.name) && !args.quiet {
        eprintln!(
            "note: AUTOHEURISTIC_USE does not list `{}`: every input is autotuned (set AUTOHEURISTIC_USE={} or pass --force-use)",
            args.name, args.name
        );
    }
    config
}

/// The heuristics `ah-use run` asks: the `--model` file's alone (it must decide `--name`), or
/// every generated one.
fn heuristics(args: &RunArgs) -> anyhow::Result<ah_core::Registry> {
    let Some(path) = &args.model else {
        return Ok(ah_use::generated_registry());
    };
    let model = load_model(path)?;
    if model.name != args.name {
        bail!(
            "{}: the model decides `{}`, not `{}`; pass --name {}",
            path.display(),
            model.name,
            args.name,
            model.name
        );
    }
    let mut registry = ah_core::Registry::new();
    registry.register(ah_use::model_heuristic::leak(model));
    Ok(registry)
}

fn run_cmd(args: RunArgs) -> anyhow::Result<ExitCode> {
    let options = RunnerOptions {
        max_power2: args.max_dim,
    };
    let runner = find_runner(&args.name, &options)?;
    let mut backend = open_backend(args.device, args.quiet)?;
    if !runner.supports(backend.kind()) {
        bail!(
            "runner `{}` does not run on the {} backend{}",
            args.name,
            backend.kind(),
            if args.device == DeviceArg::Auto {
                " (no CUDA device was found); run it on a machine with a GPU"
            } else {
                "; pick another --device"
            }
        );
    }
    let default_choice = match args.default_choice.clone().or_else(|| {
        ah_core::optimization::lookup(&args.name)
            .default_choice
            .map(str::to_string)
    }) {
        Some(d) => d,
        None => bail!(
            "`{}` has no known default choice; pass --default-choice",
            args.name
        ),
    };
    let config = use_config(&args);
    let registry = heuristics(&args)?;
    let cfg = WorkloadConfig {
        num_samples: args.num_samples,
        seed: args.seed,
        reps: args.reps,
        default_choice,
        cache: args.cache.clone(),
        config,
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if !args.quiet {
        writeln!(
            out,
            "{:>5}  {:<10}  {:<9}  {:>10}  {:>10}  {:>10}  input",
            "#", "source", "choice", "time ms", "default", "best"
        )?;
    }
    let mut print = |d: &DecisionRecord| {
        if !args.quiet {
            let _ = writeln!(
                out,
                "{:>5}  {:<10}  {:<9}  {:>10.4}  {:>10.4}  {:>10.4}  {}",
                d.index, d.source, d.choice, d.time_ms, d.default_ms, d.best_ms, d.input
            );
        }
    };
    let report = run_workload(runner.as_ref(), &mut backend, &registry, &cfg, &mut print)?;
    if report.summary.inputs == 0 && report.summary.skipped > 0 {
        bail!(
            "every input of the workload was skipped, nothing was decided: {}",
            report.summary.skip_reasons.join("; ")
        );
    }
    if !args.quiet {
        print_summary(&report)?;
    }
    for w in &report.summary.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(path) = &args.json {
        write_json(path, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_summary(r: &WorkloadReport) -> anyhow::Result<()> {
    let s = &r.summary;
    let mut out = std::io::stdout().lock();
    writeln!(out)?;
    writeln!(
        out,
        "use step: {} on {} ({} inputs, {} skipped)",
        r.name, r.device, s.inputs, s.skipped
    )?;
    for reason in &s.skip_reasons {
        writeln!(out, "  skipped: {reason}")?;
    }
    writeln!(
        out,
        "  heuristic       {}",
        r.heuristic
            .as_deref()
            .unwrap_or("none matches this device: every input autotunes")
    )?;
    let pct = |n: usize| {
        if s.inputs == 0 {
            0.0
        } else {
            100.0 * n as f64 / s.inputs as f64
        }
    };
    writeln!(
        out,
        "  decided         {:>5} ({:.1}%), {} of them the fastest choice",
        s.heuristic,
        pct(s.heuristic),
        s.heuristic_correct
    )?;
    writeln!(
        out,
        "  unsure, cached  {:>5} ({:.1}%)",
        s.cache_hits,
        pct(s.cache_hits)
    )?;
    writeln!(
        out,
        "  unsure, tuned   {:>5} ({:.1}%)",
        s.autotuned,
        pct(s.autotuned)
    )?;
    if s.fallback > 0 {
        writeln!(
            out,
            "  fallback        {:>5} ({:.1}%)",
            s.fallback,
            pct(s.fallback)
        )?;
    }
    writeln!(
        out,
        "  total time      {:.3} ms (always-default {:.3} ms, oracle {:.3} ms)",
        s.total_ms, s.default_total_ms, s.oracle_total_ms
    )?;
    writeln!(
        out,
        "  speedup over default  {:.3}x total, {:.3}x geomean",
        s.speedup_over_default, s.gmean_speedup_over_default
    )?;
    writeln!(
        out,
        "  total time share      {:.2}% (oracle's total over the picks')",
        100.0 * s.total_time_share
    )?;
    Ok(())
}

fn json_bytes(report: &impl serde::Serialize) -> anyhow::Result<Vec<u8>> {
    Ok((serde_json::to_string_pretty(report)? + "\n").into_bytes())
}

fn write_json(path: &std::path::Path, report: &impl serde::Serialize) -> anyhow::Result<()> {
    ah_core::fs::write_atomic(path, &json_bytes(report)?)
        .context("cannot write the JSON report")?;
    Ok(())
}

/// Reads a model JSON; a file that cannot be opened is named once, with a hint.
fn load_model(path: &std::path::Path) -> anyhow::Result<ah_core::Model> {
    match ah_core::Model::load(path) {
        Err(ah_core::ModelFileError::Io { path, source }) => bail!(
            "{}: {source}\nhint: give a NAME.model.json written by ah-train (--model), or the name of a shipped heuristic (--heuristic)",
            path.display()
        ),
        other => Ok(other?),
    }
}

fn replay_cmd(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    // Refused before the evaluation: a folder can never be written over.
    for (flag, path) in [("--json", &args.json), ("--decisions", &args.decisions)] {
        if let Some(p) = path.as_deref().filter(|p| p.is_dir()) {
            bail!(
                "{flag} {}: is a folder; give the path of a file",
                p.display()
            );
        }
    }
    let model = match (&args.model, &args.heuristic, &args.models) {
        (Some(m), _, _) => load_model(m)?,
        (None, Some(h), Some(dir)) => {
            let path = dir.join(format!("{h}.model.json"));
            if !path.is_file() {
                let known = ah_use::names::models_in(dir);
                bail!(
                    "{}: no model JSON of that name{}",
                    path.display(),
                    ah_use::names::unknown_hint(h, &known, "in that folder")
                );
            }
            load_model(&path)?
        }
        (None, Some(h), None) => match ah_heuristics::model_json(h) {
            Some(json) => {
                let label = format!("generated/ah-heuristics/models/{h}.model.json");
                ah_core::Model::from_json(std::path::Path::new(&label), json)?
            }
            None => {
                let mut known: Vec<String> = ah_use::generated_registry()
                    .heuristics()
                    .iter()
                    .map(|h| h.heuristic_name().to_string())
                    .collect();
                known.sort();
                bail!(
                    "no heuristic called `{h}` is compiled into this ah-use{}\nhint: pass --models DIR for a folder of model JSONs, or --model FILE",
                    ah_use::names::unknown_hint(h, &known, "compiled in")
                );
            }
        },
        (None, None, _) => bail!("give --model FILE or --heuristic NAME"),
    };
    // Its errors name the file and the line.
    let log = ah_log::Log::read(&args.log, ah_log::ReadOptions::default())?;
    let registry = ah_use::generated_registry();
    let generated = registry
        .heuristics()
        .iter()
        .copied()
        .find(|h| h.heuristic_name() == model.heuristic_name);
    if args.heuristic.is_some() && generated.is_none() {
        bail!(
            "the heuristic `{}` is not linked into this build of ah-use; ship it into the generated crate and rebuild (make ship MODEL=...), or pass --model",
            model.heuristic_name
        );
    }
    let (report, decisions) =
        ah_use::replay::replay_with_decisions(&model, &log, generated, args.worst)?;
    for w in &report.warnings {
        eprintln!("warning: {}: {w}", args.log.display());
    }
    if !args.quiet {
        print_replay(&report)?;
    }
    // The report and the decisions are written together, all or nothing.
    let mut files: Vec<(&std::path::Path, Vec<u8>)> = Vec::new();
    if let Some(path) = &args.json {
        files.push((path, json_bytes(&report)?));
    }
    if let Some(path) = &args.decisions {
        let csv = decisions
            .to_csv()
            .context("cannot format the decisions CSV")?;
        files.push((path, csv));
    }
    ah_core::fs::write_all_atomic(&files).context("cannot write the replay's output")?;
    Ok(if report.generated_mismatches.unwrap_or(0) > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_replay(r: &ah_use::replay::ReplayReport) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let m = &r.metrics;
    let decided = m.correct + m.wrong;
    let total = (m.total as f64).max(1.0);
    writeln!(
        out,
        "replay of {} on {} ({} inputs)",
        r.heuristic, r.log, r.inputs
    )?;
    writeln!(
        out,
        "  decided          {:>6} ({:.1}%)",
        decided,
        100.0 * decided as f64 / total
    )?;
    writeln!(out, "    correct        {:>6}", m.correct)?;
    writeln!(
        out,
        "    wrong          {:>6} ({} lose more than 10%)",
        m.wrong, m.harmful_wrong
    )?;
    writeln!(
        out,
        "  unsure           {:>6} ({:.1}%; {} outside the training range)",
        m.unsure,
        100.0 * m.unsure as f64 / total,
        r.out_of_range
    )?;
    writeln!(
        out,
        "  gmean speedup over default  {:.4} (oracle {:.4})",
        m.gmean_speedup_over_default, m.oracle_gmean_speedup_over_default
    )?;
    writeln!(
        out,
        "  share of oracle  {:.2}% unsure as default, {:.2}% unsure autotuned",
        m.pct_of_oracle, m.pct_of_oracle_autotune
    )?;
    writeln!(
        out,
        "  regret           {:.4}% of the best time",
        100.0 * m.regret
    )?;
    match r.generated_mismatches {
        Some(0) => writeln!(
            out,
            "  generated code   decides like the model on every input"
        )?,
        Some(n) => writeln!(
            out,
            "  generated code   DIFFERS from the model on {n} inputs: regenerate it"
        )?,
        None => writeln!(
            out,
            "  generated code   not linked into this build (model only)"
        )?,
    }
    if !r.worst.is_empty() {
        writeln!(out, "  worst wrong picks:")?;
        for w in &r.worst {
            writeln!(
                out,
                "    {:>7.3}x  {} instead of {}  {}",
                w.slowdown, w.picked, w.best, w.input
            )?;
        }
    }
    Ok(())
}
