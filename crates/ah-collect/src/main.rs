//! `ah-collect`: collect AutoHeuristic training data on a GPU (or the CPU).
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use ah_collect::backend::CudaBackend;
use ah_collect::collect::{self, CollectConfig, Devices, Shard};
use ah_collect::runners::{self, RunnerOptions};
use ah_collect::TimingConfig;
use anyhow::{bail, Context as _};
use clap::Parser;

mod check;
mod cli;
mod pad_mm;
mod progress;
mod recorded;
mod signals;

use cli::{Cli, Command, DeviceArg, ShapesArg};
use progress::Progress;

fn main() -> ExitCode {
    ah_collect::backend::CudaBackend::prefer_eager_module_loading();
    // Errors to stderr with status 2; a closed stdout pipe (`| head`) ends quietly.
    ah_core::error::exit_code(run(Cli::parse()))
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(Command::Merge {
            ref inputs,
            ref out,
            quiet,
        }) => return merge(inputs, out, quiet),
        Some(Command::Check { device }) => return check::check(device),
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
        bail!(
            "no runner `{}`; runners: {} (see --list)",
            ah_core::error::clip_to(name, 60),
            runner_names(&options)
        );
    };
    runners::check_options(name, &options).map_err(anyhow::Error::msg)?;
    let devices = pick_devices(cli.device, &cli.devices, cli.quiet)?;
    let shard = match &cli.shard {
        Some(s) => Shard::parse(s)?,
        None => Shard::ALL,
    };
    let out = match &cli.out {
        Some(p) => p.clone(),
        None => default_out(&cli, name, &devices, shard)?,
    };
    // Before the log or a sidecar is opened, even read: a FIFO would block.
    collect::check_outputs(&out)?;
    if name == "pad_mm" {
        runner = Box::new(pad_mm::pad_mm_runner(&cli, &options, &out)?);
    } else if let (runners::inductor_mm::NAME, Some(mixture)) =
        (name, cli.shapes.and_then(ShapesArg::inductor_mixture))
    {
        runner = Box::new(runners::inductor_mm::InductorMmRunner::default().with_mixture(mixture));
    } else if let Some(s) = cli.shapes.filter(|s| *s != ShapesArg::Mix) {
        bail!(
            "--shapes {}: `{name}` does not draw it (pad_mm: pytorch, real or mix; inductor_mm: {})",
            s.name(),
            ShapesArg::inductor_values()
        );
    }
    if name != "pad_mm" && cli.catalogue.is_some() {
        bail!(
            "--catalogue is pad_mm's option (for --shapes real or mix); `{name}` has no catalogue"
        );
    }
    let mut cfg = config_for(&cli, out, shard, devices);
    if let (Some(r), None) = (runner.fixed_reps(), cli.num_reps) {
        cfg.num_reps = r;
        cfg.long_reps = cfg.long_reps.min(r);
    }
    // SIGINT/SIGTERM stop the collection cleanly once it measures (`Progress::start`); before,
    // they end the process at once, as nothing is measured yet.
    let mut progress = Progress::new(cli.quiet, Arc::clone(&cfg.stop));
    let summary = collect::collect(runner.as_ref(), &cfg, &mut progress)
        .with_context(|| format!("collecting {name}"))?;
    progress.finish();
    if !cli.quiet {
        eprintln!("{}", summary_line(&cfg.out, &summary));
    }
    if !summary.interrupted {
        return Ok(ExitCode::SUCCESS);
    }
    let signal = progress.signal() as i32;
    let signal_name = match signal {
        signal_hook::consts::SIGTERM => "SIGTERM",
        _ => "SIGINT",
    };
    eprintln!("interrupted by {signal_name}: run the same command again to resume");
    // The shell's convention for a process ended by a signal, 128 + its number (130 for
    // SIGINT, 143 for SIGTERM); errors exit 2, so a script tells "stopped, resume" apart.
    Ok(ExitCode::from(128 + signal.clamp(1, 127) as u8))
}

/// `ah-collect merge`: the logs into `out`, with a line saying what was merged.
fn merge(inputs: &[PathBuf], out: &Path, quiet: bool) -> anyhow::Result<ExitCode> {
    let s = collect::merge(inputs, out)?;
    if !quiet {
        eprintln!(
            "merged {} logs: {} rows into {}{}{}",
            inputs.len(),
            s.rows,
            ah_core::error::shown(out),
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
         {} already in the log, {} samples without a draw meeting the precondition{}{}{}{}",
        ah_core::error::shown(out),
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
        },
        if summary.refilled > 0 {
            format!(
                "; {} inputs of the log measured again for its medians sidecar, which lacked them",
                summary.refilled
            )
        } else {
            String::new()
        }
    )
}

fn config_for(cli: &Cli, out: PathBuf, shard: Shard, devices: Devices) -> CollectConfig {
    let recorded = recorded::recorded_provenance(&out);
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

/// Repetitions per input of a new log without `--num-reps`.
const DEFAULT_REPS: usize = 2;

/// Repetitions of an all-long input of a new log without `--long-reps`.
const DEFAULT_LONG_REPS: usize = 1;

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
