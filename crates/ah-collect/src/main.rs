//! `ah-collect`: collect AutoHeuristic training data on a GPU (or the CPU).
use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use ah_collect::backend::{BackendInfo, CudaBackend};
use ah_collect::catalogue::Catalogue;
use ah_collect::collect::{self, CollectConfig, Devices, InputReport, Observer, Shard};
use ah_collect::runners::pad_mm::{PadMmRunner, ShapeDistribution};
use ah_collect::runners::{self, RunnerOptions};
use ah_collect::TimingConfig;
use anyhow::{bail, Context as _};
use clap::{Parser, Subcommand, ValueEnum};

/// Collect autotuning data for AutoHeuristic in PyTorch's log format.
///
/// Draws seeded inputs from a runner's distribution (PyTorch's generator for pad_mm), measures
/// every choice on the GPU (cuBLAS, CUDA events, L2 flush) or the CPU, and appends the rows to
/// a log PyTorch's trainer reads. Re-running the same command resumes; `--shard I/N` splits the
/// work over machines and `merge` joins the shards. SIGINT or SIGTERM (Ctrl-C, `timeout -s INT`)
/// stops after the inputs being measured, records the session and exits 130 / 143; a second
/// signal kills at once.
#[derive(Debug, Parser)]
#[command(
    name = "ah-collect",
    version,
    args_conflicts_with_subcommands = true,
    max_term_width = 100
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Runner to collect for (see --list).
    #[arg(long, help = "Runner to collect for (see --list)")]
    name: Option<String>,
    /// `auto` uses the GPU when a CUDA driver and device are there, else the CPU.
    #[arg(long, value_enum, default_value_t = DeviceArg::Auto, help = "Where to measure")]
    device: DeviceArg,
    /// Log to append to. Default: PyTorch's default log path,
    /// `{cache_dir}/autoheuristic/{device_name}/{name}.txt`, where `{cache_dir}` is
    /// `$XDG_CACHE_HOME`, else `~/.cache`, and `{device_name}` the device's name (e.g.
    /// `~/.cache/autoheuristic/NVIDIA_H100_80GB_HBM3/pad_mm.txt`; `non_cuda_device` on the
    /// CPU); `AUTOHEURISTIC_LOG_PATH`
    /// replaces it, as in PyTorch.
    #[arg(
        long,
        short = 'o',
        help = "Log to append to (default: PyTorch's, ~/.cache/autoheuristic/DEVICE/NAME.txt)"
    )]
    out: Option<PathBuf>,
    /// Samples in the whole sample space (all shards together).
    #[arg(
        long,
        default_value_t = 1000,
        help = "Number of samples (all shards together)"
    )]
    num_samples: u64,
    /// Repetitions of each input; each repetition logs one row per choice (training takes the
    /// median over repetitions). Default: the recorded count when resuming, else 2 (PyTorch's
    /// runner uses 3; on 4,200 H100 inputs the label from 2 repetitions was the label from 3 on
    /// 99.9 % of the inputs whose choices differ by more than 10 %: docs/collection.md).
    #[arg(
        long,
        value_parser = clap::value_parser!(u16).range(1..),
        help = "Repetitions per input [default: the log's recorded count, 2 for a new log]"
    )]
    num_reps: Option<u16>,
    /// Repetitions of an input whose choices all measured long (at least --long-run-ms) in
    /// its first repetition; other inputs get --num-reps. Default: the recorded count when
    /// resuming (a log from before --long-reps: its --num-reps), else 1: on six H100 logs the
    /// first repetition alone picked the same winner on 2548 of 2549 inputs whose choices
    /// differ by more than 10 % (docs/collection.md).
    #[arg(
        long,
        value_parser = clap::value_parser!(u16).range(1..),
        help = "Repetitions of an input whose choices all took >= --long-run-ms in its first repetition, <= --num-reps [default: the log's recorded count, 1 for a new log]"
    )]
    long_reps: Option<u16>,
    /// Seed of the sample space: sample i is the same input on every machine and shard.
    #[arg(long, default_value_t = 0, help = "Seed of the sample space")]
    seed: u64,
    /// Take only the samples with index % N == I (for N machines or jobs; join with `merge`).
    #[arg(long, value_name = "I/N", help = "Collect shard I of N")]
    shard: Option<String>,
    /// One worker per listed GPU on this host, e.g. `--devices 0,1,2,3` (implies CUDA).
    #[arg(
        long,
        value_delimiter = ',',
        help = "GPU ordinals, one worker each (e.g. 0,1)"
    )]
    devices: Vec<usize>,
    /// Largest matrix dimension (a power of two); pad_mm defaults to PyTorch's 65536 on the
    /// GPU and 2048 on the CPU. pad_mm: PyTorch's generator only (real-model shapes are the
    /// models').
    #[arg(
        long,
        value_parser = runners::parse_max_dim,
        help = "Largest dimension, a power of two (scales the runner; pad_mm: --shapes pytorch draws only)"
    )]
    max_dim: Option<u32>,
    /// pad_mm's input distribution. Default: `mix` for a new log, the recorded one when
    /// resuming (a log from before --shapes is `pytorch`); resuming with another is refused.
    #[arg(
        long,
        value_enum,
        help = "pad_mm inputs [default: the log's recorded one, mix for a new log]"
    )]
    shapes: Option<ShapesArg>,
    /// Real-model catalogue for `--shapes real|mix` (format: docs/collection.md); default: the
    /// built-in one (crates/ah-collect/catalogue/models.toml).
    #[arg(
        long,
        value_name = "FILE",
        help = "Real-model catalogue (default: the built-in one)"
    )]
    catalogue: Option<PathBuf>,
    /// Target duration of the timed runs of one benchmark on the GPU, in ms (PyTorch's
    /// InductorBenchmarker: 25). Smaller is faster and less converged.
    #[arg(
        long,
        default_value_t = 25.0,
        help = "Timed-run budget per GPU benchmark, ms"
    )]
    budget_ms: f64,
    /// A GPU benchmark whose first timed run takes at least this long is that one run: a long
    /// kernel is timed to well under 1 % by one run (docs/collection.md has the measured
    /// spread). 0 keeps PyTorch's protocol (at least 6 runs) for every kernel.
    #[arg(
        long,
        default_value_t = 20.0,
        value_parser = non_negative_ms,
        help = "One timed run for GPU kernels at least this long, ms (0: PyTorch's protocol)"
    )]
    long_run_ms: f64,
    /// The H100 slows the runs right after heavy work by up to 1.5x for 100 to 200 ms; a long
    /// kernel timed by one run must meet an idle device (docs/collection.md).
    #[arg(
        long,
        default_value_t = 150.0,
        value_parser = non_negative_ms,
        help = "Idle time before a long kernel's one timed run when heavy work came before, ms (0: none)"
    )]
    rest_ms: f64,
    /// Distinct inputs only: a sample whose input repeats an earlier one is skipped and the
    /// next sample index drawn, until --num-samples distinct inputs (still deterministic per
    /// seed, shard and resume).
    #[arg(long, help = "Only distinct inputs (skip repeated draws)")]
    distinct: bool,
    /// Never draw an input of this log (repeatable), e.g. the training log when collecting a
    /// fresh test set; such samples are skipped like repeats.
    #[arg(
        long,
        value_name = "LOG",
        help = "Skip inputs found in this log (repeatable)"
    )]
    exclude: Vec<PathBuf>,
    /// List the runners and their choices.
    #[arg(long, help = "List runners and their choices")]
    list: bool,
    /// No progress, summary or notes; warnings and errors are still printed (docs/cli.md).
    #[arg(
        long,
        short = 'q',
        help = "No progress, summaries or notes; warnings and errors still"
    )]
    quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DeviceArg {
    /// The GPU if there is one, else the CPU.
    Auto,
    /// A CUDA GPU (error without one).
    Cuda,
    /// The CPU.
    Cpu,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ShapesArg {
    /// PyTorch's random generator (gen_data_pad_mm.py), as every log before --shapes.
    Pytorch,
    /// GEMMs of real models' linear layers (forward, grad input, grad weight) from the catalogue.
    Real,
    /// Per sample: real w.p. 0.6, else PyTorch's generator.
    Mix,
}

impl ShapesArg {
    fn name(self) -> &'static str {
        match self {
            ShapesArg::Pytorch => "pytorch",
            ShapesArg::Real => "real",
            ShapesArg::Mix => "mix",
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Join logs of one runner and device (e.g. shards) into one; refuses differing metadata.
    Merge {
        /// Logs to join, in order.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The merged log (written through a temporary file).
        #[arg(long, short = 'o')]
        out: PathBuf,
        /// No summary; warnings and errors are still printed (docs/cli.md).
        #[arg(
            long,
            short = 'q',
            help = "No progress, summaries or notes; warnings and errors still"
        )]
        quiet: bool,
    },
    /// On the GPU: run pad_mm's `orig` and `pad` once for every dtype, layout and padding case
    /// and compare both with a host reference.
    Check {
        /// GPU ordinal.
        #[arg(long, default_value_t = 0)]
        device: usize,
    },
}

fn main() -> ExitCode {
    ah_collect::backend::CudaBackend::prefer_eager_module_loading();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        // A closed stdout pipe (`| head`) ends the output, quietly and successfully.
        Err(e) if ah_core::error::is_broken_pipe(&*e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", ah_core::error::report(e.as_ref()));
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(Command::Merge {
            ref inputs,
            ref out,
            quiet,
        }) => return merge(inputs, out, quiet),
        Some(Command::Check { device }) => return check(device),
        None => {}
    }
    let options = RunnerOptions {
        max_power2: cli.max_dim,
    };
    if cli.list {
        return list(&options);
    }
    let Some(name) = cli.name.as_deref() else {
        bail!(
            "give the runner with --name (one of: {}); see --list",
            runner_names(&options)
        );
    };
    let Some(mut runner) = runners::find(name, &options) else {
        bail!("no runner `{name}`; runners: {}", runner_names(&options));
    };
    let devices = pick_devices(cli.device, &cli.devices, cli.quiet)?;
    let shard = match &cli.shard {
        Some(s) => Shard::parse(s)?,
        None => Shard::ALL,
    };
    let out = match &cli.out {
        Some(p) => p.clone(),
        None => default_out(&cli, name, &devices, shard)?,
    };
    if name == "pad_mm" {
        runner = Box::new(pad_mm_runner(&cli, &options, &out)?);
    } else if let Some(s) = cli.shapes.filter(|s| *s != ShapesArg::Mix) {
        bail!(
            "--shapes {} is pad_mm's option; `{name}` has one input distribution",
            s.name()
        );
    } else if cli.catalogue.is_some() {
        bail!(
            "--catalogue is pad_mm's option (for --shapes real or mix); `{name}` has no catalogue"
        );
    }
    let mut cfg = config_for(&cli, out, shard, devices);
    if let (Some(r), None) = (runner.fixed_reps(), cli.num_reps) {
        cfg.num_reps = r;
        cfg.long_reps = cfg.long_reps.min(r);
    }
    let signal = stop_on_signals(&cfg.stop)?;
    let mut progress = Progress::new(cli.quiet);
    let summary = collect::collect(runner.as_ref(), &cfg, &mut progress)
        .with_context(|| format!("collecting {name} into {}", cfg.out.display()))?;
    progress.finish();
    if !cli.quiet {
        eprintln!("{}", summary_line(&cfg.out, &summary));
    }
    if !summary.interrupted {
        return Ok(ExitCode::SUCCESS);
    }
    let signal = signal.load(Ordering::SeqCst) as i32;
    let signal_name = match signal {
        signal_hook::consts::SIGTERM => "SIGTERM",
        _ => "SIGINT",
    };
    eprintln!("interrupted by {signal_name}: run the same command again to resume");
    // The shell's convention for a process ended by a signal, 128 + its number (130 for
    // SIGINT, 143 for SIGTERM); errors exit 2, so a script tells "stopped, resume" apart.
    Ok(ExitCode::from(128 + signal.clamp(1, 127) as u8))
}

/// Makes SIGINT and SIGTERM set `stop` (the collection takes no new input, writes the ones in
/// progress and closes its session, interrupted) and returns the number of the signal that
/// came; a second signal gets the default action (the process dies at once, as before), so a
/// stuck device call can still be killed; the next run repairs the log. signal-hook rather
/// than ctrlc: it tells the two signals apart and restores the default action for the second.
fn stop_on_signals(stop: &Arc<AtomicBool>) -> anyhow::Result<Arc<AtomicUsize>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag;
    let which = Arc::new(AtomicUsize::new(SIGINT as usize));
    for signal in [SIGINT, SIGTERM] {
        // Actions run in the order registered: the check of a signal already received first.
        flag::register_conditional_default(signal, Arc::clone(stop))
            .and_then(|_| flag::register_usize(signal, Arc::clone(&which), signal as usize))
            .and_then(|_| flag::register(signal, Arc::clone(stop)))
            .context("installing the SIGINT/SIGTERM handler")?;
    }
    Ok(which)
}

/// `ah-collect merge`: the logs into `out`, with a line saying what was merged.
fn merge(inputs: &[PathBuf], out: &Path, quiet: bool) -> anyhow::Result<ExitCode> {
    let s = collect::merge(inputs, out)?;
    if !quiet {
        eprintln!(
            "merged {} logs: {} rows into {}{}{}",
            inputs.len(),
            s.rows,
            out.display(),
            if s.medians {
                " (and the medians sidecars)"
            } else {
                ""
            },
            if s.torn_lines_dropped > 0 {
                format!("; {} torn last line(s) dropped", s.torn_lines_dropped)
            } else {
                String::new()
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `ah-collect --list`: one line per runner, its name, choices and description.
fn list(options: &RunnerOptions) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    for r in runners::registry(options) {
        writeln!(
            out,
            "{}\t{}\t{}",
            r.name(),
            r.choices().join(","),
            r.description()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The runtime's log path for `name` on the first device (when `--out` is not given).
fn default_out(cli: &Cli, name: &str, devices: &Devices, shard: Shard) -> anyhow::Result<PathBuf> {
    let device = match devices {
        Devices::Cpu => None,
        Devices::Cuda(o) => Some(
            collect::open_backend(
                devices,
                0,
                &config_for(cli, PathBuf::new(), shard, devices.clone()),
            )
            .map(|b| (b.info().device_name.clone(), b.info().identity))
            .with_context(|| format!("starting CUDA device {}", o[0]))?,
        ),
    };
    Ok(collect::default_log_path(
        device.as_ref().map(|(n, i)| (n.as_str(), *i)),
        name,
    ))
}

/// The line that closes a collection: counts, speed, and what was skipped or repaired.
fn summary_line(out: &Path, summary: &collect::CollectSummary) -> String {
    format!(
        "{}: {} inputs measured ({} rows, {} failed measurements logged as inf{}) in {:.1} s = {:.1} inputs/min, \
         the device busy {:.0} % of the wall time; \
         {} already in the log, {} samples without a draw meeting the precondition{}{}{}",
        out.display(),
        summary.measured,
        summary.rows,
        summary.failures,
        if summary.fewer_reps > 0 {
            format!(
                "; {} with every choice long, measured fewer times (--long-reps)",
                summary.fewer_reps
            )
        } else {
            String::new()
        },
        summary.wall_s,
        summary.inputs_per_minute,
        100.0 * summary.device_busy_share,
        summary.already_done,
        summary.no_precondition,
        if summary.skipped > 0 {
            format!(", {} repeated or excluded draws skipped", summary.skipped)
        } else {
            String::new()
        },
        if summary.per_device.len() > 1 {
            let parts: Vec<String> =
                summary.per_device.iter().map(|(d, n)| format!("GPU {d}: {n}")).collect();
            format!("; per device: {}", parts.join(", "))
        } else {
            String::new()
        },
        if summary.repaired_bytes > 0 {
            format!("; repaired: {} bytes of an interrupted input cut", summary.repaired_bytes)
        } else {
            String::new()
        }
    )
}

fn config_for(cli: &Cli, out: PathBuf, shard: Shard, devices: Devices) -> CollectConfig {
    let recorded = recorded_provenance(&out);
    let recorded_reps = recorded.as_ref().and_then(|v| v["num_reps"].as_u64());
    let num_reps = cli
        .num_reps
        .map(usize::from)
        .unwrap_or_else(|| recorded_reps.map_or(DEFAULT_REPS, |r| r as usize));
    // A log recorded before --long-reps, or with rows and no sidecar, measured every input
    // --num-reps times.
    let long_reps = cli.long_reps.map(usize::from).unwrap_or_else(|| {
        match recorded.as_ref().map(|v| v["long_reps"].as_u64()) {
            Some(Some(r)) => r as usize,
            Some(None) => recorded_reps.map_or(num_reps, |r| r as usize),
            None if std::fs::metadata(&out).is_ok_and(|m| m.len() > 0) => num_reps,
            None => DEFAULT_LONG_REPS,
        }
    });
    CollectConfig {
        out,
        num_samples: cli.num_samples,
        num_reps,
        long_reps,
        seed: cli.seed,
        shard,
        devices,
        gpu_timing: TimingConfig {
            budget_ms: cli.budget_ms,
            long_run_ms: (cli.long_run_ms > 0.0).then_some(cli.long_run_ms),
            rest_ms: (cli.rest_ms > 0.0).then_some(cli.rest_ms),
            ..TimingConfig::PYTORCH
        },
        cpu_timing: None,
        max_draws: 10_000,
        distinct: cli.distinct,
        exclude: cli.exclude.clone(),
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
        stop: Arc::default(),
    }
}

fn non_negative_ms(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a duration in ms (a number >= 0)")),
    }
}

/// The pad_mm runner with `--shapes` and `--catalogue`; without `--shapes`, the distribution
/// the log's provenance sidecar records (none: `pytorch`), or `mix` for a new log.
fn pad_mm_runner(cli: &Cli, options: &RunnerOptions, out: &Path) -> anyhow::Result<PadMmRunner> {
    let shapes = match cli.shapes {
        Some(s) => s,
        None => recorded_shapes(out)?.unwrap_or(ShapesArg::Mix),
    };
    if shapes == ShapesArg::Pytorch && cli.catalogue.is_some() {
        bail!("--catalogue is used by --shapes real and mix, not pytorch");
    }
    if let (Some(power), false) = (cli.max_dim, shapes == ShapesArg::Pytorch) {
        let dim = 1u64 << power;
        bail!(
            "--max-dim {dim} bounds PyTorch's generator only, but the inputs are drawn with --shapes {}{}, whose real-model dimensions it cannot bound\nhint: add --shapes pytorch for inputs of at most {dim} in every dimension",
            shapes.name(),
            if cli.shapes.is_none() { " (the default)" } else { "" }
        );
    }
    let catalogue = || -> anyhow::Result<Arc<Catalogue>> {
        Ok(Arc::new(match &cli.catalogue {
            Some(p) => Catalogue::from_file(p)?,
            None => Catalogue::builtin()?,
        }))
    };
    let mut r = PadMmRunner::default();
    if let Some(p) = options.max_power2 {
        r.max_power2_gpu = p;
        r.max_power2_cpu = p;
    }
    Ok(r.with_shapes(match shapes {
        ShapesArg::Pytorch => ShapeDistribution::Pytorch,
        ShapesArg::Real => ShapeDistribution::Real(catalogue()?),
        ShapesArg::Mix => ShapeDistribution::Mix(catalogue()?),
    }))
}

/// The `shapes` of an existing log's provenance sidecar (`pytorch` when absent), `None` for a
/// new log.
fn recorded_shapes(out: &Path) -> anyhow::Result<Option<ShapesArg>> {
    let Some(v) = recorded_provenance(out) else {
        return Ok(None);
    };
    let path = collect::provenance_path(out);
    match v["shapes"].as_str().unwrap_or("pytorch") {
        "pytorch" => Ok(Some(ShapesArg::Pytorch)),
        "real" => Ok(Some(ShapesArg::Real)),
        "mix" => Ok(Some(ShapesArg::Mix)),
        other => bail!(
            "{}: records an unknown `shapes` = `{other}`; give --shapes, or write to another --out",
            path.display()
        ),
    }
}

/// Repetitions per input of a new log without `--num-reps`.
const DEFAULT_REPS: usize = 2;

/// Repetitions of an all-long input of a new log without `--long-reps`.
const DEFAULT_LONG_REPS: usize = 1;

/// The provenance sidecar of an existing log that some session wrote to, `None` for a new log
/// (an unreadable sidecar is reported by the collection itself).
fn recorded_provenance(out: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(collect::provenance_path(out)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["sessions"]
        .as_array()
        .is_some_and(|s| !s.is_empty())
        .then_some(v)
}

fn runner_names(options: &RunnerOptions) -> String {
    runners::registry(options)
        .iter()
        .map(|r| r.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn pick_devices(device: DeviceArg, ordinals: &[usize], quiet: bool) -> anyhow::Result<Devices> {
    let want_cuda = device == DeviceArg::Cuda || !ordinals.is_empty();
    if device == DeviceArg::Cpu {
        if !ordinals.is_empty() {
            bail!("--devices lists GPUs; it cannot be combined with --device cpu");
        }
        return Ok(Devices::Cpu);
    }
    let ords = if ordinals.is_empty() {
        vec![0]
    } else {
        ordinals.to_vec()
    };
    if want_cuda {
        return Ok(Devices::Cuda(ords));
    }
    // auto
    if !CudaBackend::driver_present() {
        if !quiet {
            eprintln!("no CUDA driver found (libcuda could not be loaded): collecting on the CPU");
        }
        return Ok(Devices::Cpu);
    }
    if CudaBackend::device_count() == 0 {
        if !quiet {
            eprintln!("the CUDA driver sees no GPU: collecting on the CPU");
        }
        return Ok(Devices::Cpu);
    }
    Ok(Devices::Cuda(ords))
}

/// Progress bar on a terminal; a line every 5 % otherwise (logs of batch jobs).
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
    tty: bool,
    total: u64,
    done: u64,
    failures: u64,
    started: std::time::Instant,
}

impl Progress {
    fn new(quiet: bool) -> Self {
        Self {
            bar: None,
            quiet,
            tty: std::io::stderr().is_terminal(),
            total: 0,
            done: 0,
            failures: 0,
            started: std::time::Instant::now(),
        }
    }
    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Observer for Progress {
    fn start(&mut self, to_measure: u64, already_done: u64, devices: &[BackendInfo]) {
        self.total = to_measure;
        self.started = std::time::Instant::now();
        if self.quiet {
            return;
        }
        let names: Vec<String> = devices
            .iter()
            .map(|d| format!("{} #{} ({})", d.device_name, d.ordinal, d.kind))
            .collect();
        eprintln!(
            "measuring {to_measure} inputs on {} ({already_done} already in the log)",
            names.join(", ")
        );
        if self.tty {
            let bar = indicatif::ProgressBar::new(to_measure);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{wide_bar}] {pos}/{len} inputs  {per_sec}  ETA {eta}  {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            self.bar = Some(bar);
        }
    }

    fn input_done(&mut self, r: &InputReport) {
        self.done += 1;
        self.failures += r.failures as u64;
        if self.quiet {
            return;
        }
        if let Some(b) = &self.bar {
            b.inc(1);
            if self.failures > 0 {
                b.set_message(format!("{} inf", self.failures));
            }
            if let Some(e) = &r.first_error {
                b.println(format!(
                    "sample {}: a choice failed (logged as inf): {e}",
                    r.index
                ));
            }
            return;
        }
        if let Some(e) = &r.first_error {
            eprintln!("sample {}: a choice failed (logged as inf): {e}", r.index);
        }
        let step = (self.total / 20).max(1);
        if self.done.is_multiple_of(step) || self.done == self.total {
            let secs = self.started.elapsed().as_secs_f64();
            let rate = self.done as f64 / secs.max(1e-9) * 60.0;
            let eta = (self.total - self.done) as f64 / (self.done as f64 / secs.max(1e-9));
            eprintln!(
                "{}/{} inputs, {:.0} s, {rate:.1} inputs/min, ETA {eta:.0} s",
                self.done, self.total, secs
            );
        }
    }
}

/// `ah-collect check`: pad and orig against a host reference on every case.
fn check(device: usize) -> anyhow::Result<ExitCode> {
    use ah_collect::dtype::DType;
    use ah_collect::runners::pad_mm::{check_pad_equals_orig, check_tolerance, PadMmInput};
    let mut cuda = CudaBackend::new(device, TimingConfig::PYTORCH)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "device: {} ({:?})",
        cuda.info().device_name,
        cuda.info().identity
    )?;
    writeln!(
        out,
        "dtype           tf32  m    k    n    tl tr pl pr  orig_vs_ref  pad_vs_orig  ok"
    )?;
    let mut bad = 0;
    for dtype in [DType::F16, DType::BF16, DType::F32] {
        for tf32 in [false, true] {
            if dtype != DType::F32 && !tf32 {
                continue;
            }
            for (tl, tr, pl, pr) in [
                (false, false, false, false),
                (true, false, false, false),
                (false, true, false, false),
                (true, true, false, false),
                (false, false, true, false),
                (false, false, false, true),
                (false, false, true, true),
                (true, false, false, true),
            ] {
                for (m, k, n) in [
                    (37, 45, 29),
                    (64, 45, 32),
                    (40, 48, 33),
                    (129, 96, 96),
                    (40, 1030, 1027),
                ] {
                    let i = PadMmInput {
                        m,
                        k,
                        n,
                        dtype,
                        allow_tf32: tf32,
                        transpose_left: tl,
                        transpose_right: tr,
                        prepadded_left: pl,
                        prepadded_right: pr,
                        fuse_mat1_pad: false,
                    };
                    let r = check_pad_equals_orig(&i, &mut cuda)?;
                    let tol = check_tolerance(&i);
                    let ok = r.orig_vs_reference <= tol && r.pad_vs_orig <= tol;
                    if !ok {
                        bad += 1;
                    }
                    writeln!(
                        out,
                        "{:15} {:5} {m:4} {k:4} {n:4} {} {} {} {}   {:.2e}     {:.2e}     {}",
                        dtype.torch_name(),
                        tf32,
                        tl as u8,
                        tr as u8,
                        pl as u8,
                        pr as u8,
                        r.orig_vs_reference,
                        r.pad_vs_orig,
                        if ok { "ok" } else { "FAIL" }
                    )?;
                }
            }
        }
    }
    if bad > 0 {
        eprintln!("error: {bad} case(s) out of tolerance");
        return Ok(ExitCode::from(2));
    }
    writeln!(out, "all cases within tolerance")?;
    Ok(ExitCode::SUCCESS)
}
