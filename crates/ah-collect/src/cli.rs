//! The command line of `ah-collect` (clap derive): flags, values and subcommands. Only
//! definitions and value parsers; `main.rs` maps them onto a collection.

use std::path::PathBuf;

use ah_collect::runners;
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
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    /// Runner to collect for (see --list).
    #[arg(long, help = "Runner to collect for (see --list)")]
    pub(crate) name: Option<String>,
    /// `auto` uses the GPU when a CUDA driver and device are there, else the CPU.
    #[arg(long, value_enum, default_value_t = DeviceArg::Auto, help = "Where to measure")]
    pub(crate) device: DeviceArg,
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
    pub(crate) out: Option<PathBuf>,
    /// Samples in the whole sample space (all shards together).
    #[arg(
        long,
        default_value_t = 1000,
        help = "Number of samples (all shards together)"
    )]
    pub(crate) num_samples: u64,
    /// Repetitions of each input; each repetition logs one row per choice (training takes the
    /// median over repetitions). Default: the recorded count when resuming, else 2 (PyTorch's
    /// runner uses 3; on 4,200 H100 inputs the label from 2 repetitions was the label from 3 on
    /// 99.9 % of the inputs whose choices differ by more than 10 %: docs/collection.md).
    #[arg(
        long,
        value_parser = clap::value_parser!(u16).range(1..),
        help = "Repetitions per input [default: the log's recorded count, 2 for a new log]"
    )]
    pub(crate) num_reps: Option<u16>,
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
    pub(crate) long_reps: Option<u16>,
    /// Seed of the sample space: sample i is the same input on every machine and shard.
    #[arg(long, default_value_t = 0, help = "Seed of the sample space")]
    pub(crate) seed: u64,
    /// Take only the samples with index % N == I (for N machines or jobs; join with `merge`).
    #[arg(long, value_name = "I/N", help = "Collect shard I of N")]
    pub(crate) shard: Option<String>,
    /// One worker per listed GPU on this host, e.g. `--devices 0,1,2,3` (implies CUDA).
    #[arg(
        long,
        value_delimiter = ',',
        help = "GPU ordinals, one worker each (e.g. 0,1)"
    )]
    pub(crate) devices: Vec<usize>,
    /// Largest matrix dimension (a power of two); pad_mm defaults to PyTorch's 65536 on the
    /// GPU and 2048 on the CPU. pad_mm: PyTorch's generator only (real-model shapes are the
    /// models'). Refused for runners it does not scale (all but pad_mm and cublaslt_mm).
    #[arg(
        long,
        value_parser = runners::parse_max_dim,
        help = "Largest dimension, a power of two (pad_mm with --shapes pytorch, cublaslt_mm)"
    )]
    pub(crate) max_dim: Option<u32>,
    /// The input distribution. pad_mm: `pytorch`, `real` or `mix`; default `mix` for a new log,
    /// the recorded one when resuming (a log from before --shapes is `pytorch`). inductor_mm:
    /// `mix` (its default mixture), `decode` (inference decode steps only) or `attention`
    /// (attention bmms only). Resuming with another distribution is refused.
    #[arg(
        long,
        value_enum,
        help = "Inputs: pad_mm pytorch|real|mix [default: the log's, mix for a new log]; inductor_mm mix|decode|attention|tiny|tokens|windows|heads|pool|adapters|hires|serving|routers [default: mix]"
    )]
    pub(crate) shapes: Option<ShapesArg>,
    /// Real-model catalogue for `--shapes real|mix` (format: docs/collection.md); default: the
    /// built-in one (crates/ah-bench/catalogue/models.toml).
    #[arg(
        long,
        value_name = "FILE",
        help = "Real-model catalogue (default: the built-in one)"
    )]
    pub(crate) catalogue: Option<PathBuf>,
    /// Target duration of the timed runs of one benchmark on the GPU, in ms (PyTorch's
    /// InductorBenchmarker: 25). Smaller is faster and less converged.
    #[arg(
        long,
        default_value_t = 25.0,
        help = "Timed-run budget per GPU benchmark, ms"
    )]
    pub(crate) budget_ms: f64,
    /// A GPU benchmark whose first timed run takes at least this long is that one run: a long
    /// kernel is timed to well under 1 % by one run (docs/collection.md has the measured
    /// spread). 0 keeps PyTorch's protocol (at least 6 runs) for every kernel.
    #[arg(
        long,
        default_value_t = 20.0,
        value_parser = non_negative_ms,
        help = "One timed run for GPU kernels at least this long, ms (0: PyTorch's protocol)"
    )]
    pub(crate) long_run_ms: f64,
    /// The H100 slows the runs right after heavy work by up to 1.5x for 100 to 200 ms; a long
    /// kernel timed by one run must meet an idle device (docs/collection.md).
    #[arg(
        long,
        default_value_t = 150.0,
        value_parser = non_negative_ms,
        help = "Idle time before a long kernel's one timed run when heavy work came before, ms (0: none)"
    )]
    pub(crate) rest_ms: f64,
    /// Distinct inputs only: a sample whose input repeats an earlier one is skipped and the
    /// next sample index drawn, until --num-samples distinct inputs (still deterministic per
    /// seed, shard and resume).
    #[arg(long, help = "Only distinct inputs (skip repeated draws)")]
    pub(crate) distinct: bool,
    /// Never draw an input of this log (repeatable), e.g. the training log when collecting a
    /// fresh test set; such samples are skipped like repeats.
    #[arg(
        long,
        value_name = "LOG",
        help = "Skip inputs found in this log (repeatable)"
    )]
    pub(crate) exclude: Vec<PathBuf>,
    /// List the runners and their choices.
    #[arg(long, help = "List runners and their choices")]
    pub(crate) list: bool,
    /// No progress, summary or notes; warnings and errors are still printed (docs/cli.md).
    #[arg(
        long,
        short = 'q',
        help = "No progress, summaries or notes; warnings and errors still"
    )]
    pub(crate) quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DeviceArg {
    /// The GPU if there is one, else the CPU.
    Auto,
    /// A CUDA GPU (error without one).
    Cuda,
    /// The CPU.
    Cpu,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ShapesArg {
    /// PyTorch's random generator (gen_data_pad_mm.py), as every log before --shapes.
    Pytorch,
    /// GEMMs of real models' linear layers (forward, grad input, grad weight) from the catalogue.
    Real,
    /// pad_mm: per sample, real w.p. 0.6, else PyTorch's generator; inductor_mm: its default
    /// mixture of training, inference, attention and generator GEMMs.
    Mix,
    /// inductor_mm: inference decode steps only (linears over 1-64 tokens, LM heads, decode
    /// attention).
    Decode,
    /// inductor_mm: attention bmms only (scores, `p @ v` and backward layouts; encoders,
    /// diffusion, windows).
    Attention,
    /// inductor_mm: attention bmms over many sets of 2-64 tokens (molecules, graphs, points).
    Tiny,
    /// inductor_mm: narrow linear layers of a training step over 32768-1048576 tokens (graph
    /// edges, points, recommendation batches; weight gradients with a long k).
    Tokens,
    /// inductor_mm: attention bmms over many sets of 65-512 tokens (2D and 3D windows,
    /// time-series windows), head dimensions 8-80.
    Windows,
    /// inductor_mm: attention bmms with narrow heads (16-64) over sequences of 577-4096 tokens.
    Heads,
    /// inductor_mm: batched products summing over 2048-131072 tokens into a small output
    /// (cross-attention of few queries, linear attention's state, per-block weight gradients).
    Pool,
    /// inductor_mm: linear layers with one wide and one narrow side over 2048-131072 tokens
    /// (MoE routers, LoRA adapters, small task heads).
    Adapters,
    /// inductor_mm: attention bmms at high resolution, few batch x heads (1-20) over
    /// 4096-17776 tokens (diffusion latents, video).
    Hires,
    /// inductor_mm: batched decode, forward linears over 65-256 sequences in bf16 and fp16.
    Serving,
    /// inductor_mm: linears from a hidden size to 1-64 outputs (MoE routers, classifier and
    /// regression heads) over 1-16384 tokens, fp32 45 %; forward two thirds of the time.
    Routers,
}

impl ShapesArg {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ShapesArg::Pytorch => "pytorch",
            ShapesArg::Real => "real",
            ShapesArg::Mix => "mix",
            ShapesArg::Decode => "decode",
            ShapesArg::Attention => "attention",
            ShapesArg::Tiny => "tiny",
            ShapesArg::Tokens => "tokens",
            ShapesArg::Windows => "windows",
            ShapesArg::Heads => "heads",
            ShapesArg::Pool => "pool",
            ShapesArg::Adapters => "adapters",
            ShapesArg::Hires => "hires",
            ShapesArg::Serving => "serving",
            ShapesArg::Routers => "routers",
        }
    }

    /// The values inductor_mm draws, `mix` first, as an error message lists them.
    pub(crate) fn inductor_values() -> String {
        use clap::ValueEnum as _;
        let focused = ShapesArg::value_variants()
            .iter()
            .filter(|a| a.inductor_mixture().is_some())
            .map(|a| a.name());
        std::iter::once("mix")
            .chain(focused)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The inductor_mm mixture other than the default one (`mix`) that this value names.
    pub(crate) fn inductor_mixture(self) -> Option<ah_collect::runners::inductor_mm::Mixture> {
        use ah_collect::runners::inductor_mm::Mixture;
        match self {
            ShapesArg::Decode => Some(Mixture::Decode),
            ShapesArg::Attention => Some(Mixture::Attention),
            ShapesArg::Tiny => Some(Mixture::Tiny),
            ShapesArg::Tokens => Some(Mixture::Tokens),
            ShapesArg::Windows => Some(Mixture::Windows),
            ShapesArg::Heads => Some(Mixture::Heads),
            ShapesArg::Pool => Some(Mixture::Pool),
            ShapesArg::Adapters => Some(Mixture::Adapters),
            ShapesArg::Hires => Some(Mixture::Hires),
            ShapesArg::Serving => Some(Mixture::Serving),
            ShapesArg::Routers => Some(Mixture::Routers),
            _ => None,
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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

pub(crate) fn non_negative_ms(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        // clap quotes the value before this message: not again.
        _ => Err("not a duration in ms (a number >= 0)".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::ShapesArg;
    use clap::ValueEnum as _;

    /// A log records inductor_mm's mixture by `Mixture::name`, and a resume that names another
    /// one is told the `--shapes` value to give, read back from that name (`inductor_` and the
    /// value): the two spellings must stay in step.
    #[test]
    fn every_inductor_mixture_is_recorded_as_inductor_and_its_shapes_value() {
        for arg in ShapesArg::value_variants() {
            let value = arg.to_possible_value().unwrap();
            assert_eq!(value.get_name(), arg.name());
            if let Some(mixture) = arg.inductor_mixture() {
                assert_eq!(mixture.name(), format!("inductor_{}", arg.name()));
            }
        }
    }
}
