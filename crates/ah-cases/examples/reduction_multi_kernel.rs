//! The reduction multi-kernel on the GPU: the core's `MultiKernel` runtime over the persistent
//! and looped NVRTC kernels, deciding by the learned heuristic (`ah-heuristics`) or by
//! benchmarking, with the guarded pick cache.
//!
//! ```text
//! reduction_multi_kernel measure --shapes LOG [--limit N] [--out FILE]
//!     per shape of LOG: first-call pick by benchmarking every variant (rep = 40 ms, cache off)
//!     and by asking the heuristic, both timed; the decision alone timed in a loop; a summary
//!     (speedups, share of the oracle, learned pick vs benchmark pick) on stdout
//! reduction_multi_kernel cache --shapes LOG --cache FILE [--limit N] [--edit-source]
//!     pick every shape through the pick cache (benchmark mode) and say how each was decided;
//!     run it twice to see the second process reuse the picks, with --edit-source (a comment
//!     appended to the kernel source: new source hashes) to see them invalidated
//! reduction_multi_kernel eval --shapes LOG
//!     no GPU: scores the heuristic on a log's measured times and times `decide`
//! ```
//! Every command prints one JSON summary line last.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use ah_bench::backend::{CudaBackend, TimingConfig};
use ah_bench::dtype::DType;
use ah_bench::runners::reduction::kernels::{
    Family, ReductionKernels, Variant, BLOCK_SIZES, REDUCTION_SOURCE,
};
use ah_bench::runners::reduction::reduction_context;
use ah_cases::reduction_eval::{self as eval, InputTimes};
use ah_core::{Context, DeviceIdentity, HeuristicMetadata, LearnedHeuristic, Registry};
use ah_log::Log;
use ah_runtime::cache::DeviceFingerprint;
use ah_runtime::multi_kernel::{
    source_hash, KernelPick, MultiKernel, MultiKernelConfig, PickedBy, SubKernel,
};
use ah_runtime::PickCache;
use anyhow::{anyhow, bail, Context as _};
use clap::{Parser, Subcommand};
use serde_json::json;

/// The reduction multi-kernel on the GPU (see the file's docs).
#[derive(Debug, Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Time first-call decisions (benchmark vs heuristic) on the shapes of a log.
    Measure {
        /// A reduction log whose inputs are the shapes (e.g. one collected with another seed).
        #[arg(long)]
        shapes: PathBuf,
        /// Use the first N inputs.
        #[arg(long, default_value_t = 100)]
        limit: usize,
        /// Benchmark budget per sub-kernel, ms (Inductor's multi-kernel: 40).
        #[arg(long, default_value_t = 40.0)]
        rep_ms: f64,
        /// Per-shape results, one JSON object a line.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Leave out shapes that also appear in this log (the training log).
        #[arg(long)]
        exclude: Option<PathBuf>,
    },
    /// Pick every shape through the guarded pick cache (benchmark mode).
    Cache {
        /// A reduction log whose inputs are the shapes.
        #[arg(long)]
        shapes: PathBuf,
        /// The pick cache file.
        #[arg(long)]
        cache: PathBuf,
        /// Use the first N inputs.
        #[arg(long, default_value_t = 30)]
        limit: usize,
        /// Append a comment to the kernel source (changes every source hash).
        #[arg(long)]
        edit_source: bool,
        /// Picks, one JSON object a line.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Score the heuristic on a log's measured times and time `decide` (no GPU).
    Eval {
        /// A reduction log (e.g. one collected with another seed).
        #[arg(long)]
        shapes: PathBuf,
        /// Leave out shapes that also appear in this log (the training log).
        #[arg(long)]
        exclude: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Measure {
            shapes,
            limit,
            rep_ms,
            out,
            exclude,
        } => measure(&read_inputs(&shapes, limit, exclude.as_ref())?, rep_ms, out),
        Command::Cache {
            shapes,
            cache,
            limit,
            edit_source,
            out,
        } => cache_run(
            &read_inputs(&shapes, limit, None)?,
            &cache,
            edit_source,
            out,
        ),
        Command::Eval { shapes, exclude } => eval_log(
            &shapes,
            &read_inputs(&shapes, usize::MAX, exclude.as_ref())?,
        ),
    }
}

fn registry() -> Registry {
    let mut r = Registry::new();
    ah_heuristics::register_all(&mut r);
    r
}

fn read_inputs(
    path: &PathBuf,
    limit: usize,
    exclude: Option<&PathBuf>,
) -> anyhow::Result<Vec<InputTimes>> {
    let log = Log::read(path, Default::default())?;
    let mut inputs = eval::inputs_from_log(&log).map_err(|e| anyhow!(e))?;
    if let Some(ex) = exclude {
        let seen: std::collections::HashSet<String> =
            eval::inputs_from_log(&Log::read(ex, Default::default())?)
                .map_err(|e| anyhow!(e))?
                .iter()
                .map(describe)
                .collect();
        let before = inputs.len();
        inputs.retain(|i| !seen.contains(&describe(i)));
        eprintln!(
            "{}: {} of {before} inputs also in {}, left out",
            path.display(),
            before - inputs.len(),
            ex.display()
        );
    }
    inputs.truncate(limit);
    if inputs.is_empty() {
        bail!("{}: no inputs", path.display());
    }
    Ok(inputs)
}

/// The reduction heuristic for a device, if the registry has one.
fn heuristic(reg: &Registry, device: DeviceIdentity) -> Option<&'static dyn LearnedHeuristic> {
    let md = HeuristicMetadata {
        device,
        name: "reduction",
        choices: &[],
    };
    reg.find(&md, &Context::new())
}

/// The GPU: backend, compiled kernels per dtype, the source they came from.
struct Gpu {
    cuda: RefCell<CudaBackend>,
    kernels: BTreeMap<&'static str, ReductionKernels>,
    source: String,
    /// Source hashes by (dtype, kernel name), computed once (at compile time in Inductor).
    hashes: RefCell<BTreeMap<(&'static str, String), String>>,
}

impl Gpu {
    fn new(rep_ms: f64, source: String) -> anyhow::Result<Self> {
        let timing = TimingConfig {
            budget_ms: rep_ms,
            ..TimingConfig::PYTORCH
        };
        let cuda = CudaBackend::new(0, timing)?;
        let mut kernels = BTreeMap::new();
        for dtype in [DType::F32, DType::F16, DType::BF16] {
            let k = ReductionKernels::compile_source(cuda.context(), dtype, &source)?;
            kernels.insert(dtype.torch_name(), k);
        }
        Ok(Self {
            cuda: RefCell::new(cuda),
            kernels,
            source,
            hashes: RefCell::new(BTreeMap::new()),
        })
    }

    /// The source hash of one compiled kernel (computed on first use, then remembered).
    fn source_hash(&self, dtype: &'static str, kernel: String) -> String {
        self.hashes
            .borrow_mut()
            .entry((dtype, kernel))
            .or_insert_with_key(|(d, k)| source_hash(&[&self.source, d, k]))
            .clone()
    }

    fn fingerprint(&self) -> DeviceFingerprint {
        let cuda = self.cuda.borrow();
        let info = cuda.info();
        let mut f = DeviceFingerprint::new(info.device_name.clone(), info.identity);
        let mut libs = info.versions.clone();
        f.driver_version = libs.remove("nvidia_driver").unwrap_or_default();
        f.library_versions = libs;
        f
    }

    fn identity(&self) -> DeviceIdentity {
        self.cuda.borrow().info().identity
    }
}

/// Device buffers of one shape.
struct Shape {
    input: InputTimes,
    x: ah_bench::backend::cuda::DeviceBuffer,
    y: ah_bench::backend::cuda::DeviceBuffer,
}

impl Shape {
    fn new(gpu: &Gpu, input: &InputTimes) -> anyhow::Result<Self> {
        let mut cuda = gpu.cuda.borrow_mut();
        let n = input.rows * input.cols;
        let x = cuda.alloc(n * input.dtype.itemsize())?;
        let y = cuda.alloc(input.op.output_len(input.rows, input.cols) * input.dtype.itemsize())?;
        cuda.fill_random(x.ptr(), n, input.dtype)?;
        cuda.synchronize()?;
        Ok(Self {
            input: input.clone(),
            x,
            y,
        })
    }

    /// The sub-kernels for this shape: every variant whose row fits.
    fn sub_kernels<'a>(&'a self, gpu: &'a Gpu) -> Vec<SubKernel<'a>> {
        let i = &self.input;
        let (rows, cols, op, x, y) = (i.rows, i.cols, i.op, self.x.ptr(), self.y.ptr());
        let kernels = &gpu.kernels[i.dtype.torch_name()];
        Variant::all()
            .into_iter()
            .filter(|v| v.fits(cols))
            .map(|v| {
                let kernel = v.kernel_name(op, cols).unwrap_or_default();
                let hash = gpu.source_hash(i.dtype.torch_name(), kernel);
                SubKernel::new(
                    v.name(),
                    hash,
                    move || {
                        let mut cuda = gpu.cuda.borrow_mut();
                        kernels.launch(cuda.stream(), v, op, x, y, rows, cols)?;
                        cuda.synchronize()?;
                        Ok(())
                    },
                    move |_rep_ms| {
                        // The backend was built with budget = rep_ms.
                        let mut cuda = gpu.cuda.borrow_mut();
                        let m = cuda.bench(true, &mut |b| {
                            kernels
                                .launch(b.stream(), v, op, x, y, rows, cols)
                                .map_err(|e| ah_bench::BenchError::Cuda(e.to_string()))
                        })?;
                        Ok(m.min_ms)
                    },
                )
            })
            .collect()
    }

    fn multi_kernel<'a>(&'a self, gpu: &'a Gpu) -> anyhow::Result<MultiKernel<'a>> {
        let i = &self.input;
        let ctx = reduction_context(i.rows, i.cols, i.dtype, i.op);
        Ok(MultiKernel::new(
            "reduction",
            self.sub_kernels(gpu),
            ctx,
            gpu.identity(),
        )?)
    }
}

fn config(use_heuristic: bool, cache: bool, rep_ms: f64) -> MultiKernelConfig {
    let mut c = MultiKernelConfig::from_env();
    c.runtime.use_list = if use_heuristic {
        "reduction".into()
    } else {
        String::new()
    };
    c.runtime.disable_cache = !cache;
    c.rep_ms = rep_ms;
    c
}

fn describe(i: &InputTimes) -> String {
    format!(
        "{}x{} {} {}",
        i.rows,
        i.cols,
        i.dtype.torch_name(),
        i.op.name()
    )
}

fn geomean(v: &[f64]) -> f64 {
    ah_eval::gmean(v).unwrap_or(f64::NAN)
}

fn percentile(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    s[((s.len() - 1) as f64 * p).round() as usize]
}

/// ns per `decide` over the contexts, in a loop long enough to time.
fn time_decide(h: &dyn LearnedHeuristic, contexts: &[Context]) -> (f64, usize) {
    let mut sure = 0;
    for c in contexts {
        sure += usize::from(h.decide(c).choice().is_some());
    }
    let reps = (2_000_000 / contexts.len().max(1)).max(1);
    let t = Instant::now();
    for _ in 0..reps {
        for c in contexts {
            black_box(h.decide(black_box(c)));
        }
    }
    (
        t.elapsed().as_nanos() as f64 / (reps * contexts.len()) as f64,
        sure,
    )
}

/// The runtime's whole first-call decision in use mode, warm, without a GPU: for each input a
/// new `MultiKernel` over stand-in sub-kernels (every variant that fits, nothing to run) is
/// built untimed, then `pick` is timed (registry lookup, precondition, `decide`, mapping the
/// answer to a sub-kernel). Unsure inputs would benchmark; their times are left out. Repeated
/// 20 times per input; returns ns per pick.
fn time_runtime_pick(
    reg: &Registry,
    inputs: &[InputTimes],
    cold: bool,
) -> anyhow::Result<Vec<f64>> {
    let cfg = config(true, false, ah_runtime::multi_kernel::DEFAULT_REP_MS);
    let mut out = Vec::new();
    let mut thrash = if cold {
        vec![0u64; 8 << 20]
    } else {
        Vec::new()
    };
    for round in 0..if cold { 2 } else { 20 } {
        for i in inputs {
            let kernels = Variant::all()
                .into_iter()
                .filter(|v| v.fits(i.cols))
                .map(|v| {
                    SubKernel::new(
                        v.name(),
                        v.name(),
                        || Ok(()),
                        |_| Err("stand-in sub-kernel: not benchmarked".into()),
                    )
                })
                .collect();
            let mut mk = MultiKernel::new("reduction", kernels, i.context(), DeviceIdentity::H100)?;
            if cold {
                for (k, x) in thrash.iter_mut().enumerate() {
                    *x = x.wrapping_add(k as u64 ^ round);
                }
                black_box(&thrash);
            }
            let t = Instant::now();
            let by = mk.pick(&cfg, Some(reg), None).map(|p| p.by);
            let dt = t.elapsed().as_nanos() as f64;
            if matches!(by, Ok(PickedBy::Heuristic)) {
                out.push(dt);
            }
        }
    }
    Ok(out)
}

fn measure(inputs: &[InputTimes], rep_ms: f64, out: Option<PathBuf>) -> anyhow::Result<()> {
    let gpu = Gpu::new(rep_ms, REDUCTION_SOURCE.to_string())?;
    let reg = registry();
    let h = heuristic(&reg, gpu.identity());
    eprintln!(
        "{} shapes; heuristic: {}",
        inputs.len(),
        h.map_or("none (benchmark only)".to_string(), |h| h
            .heuristic_name()
            .to_string())
    );
    let bench_cfg = config(false, false, rep_ms);
    let use_cfg = config(true, false, rep_ms);
    let program = h
        .map(|_| in_a_program(&gpu, &reg, inputs, &use_cfg))
        .transpose()?;
    let mut lines = Vec::new();
    let mut live: Vec<InputTimes> = Vec::new();
    let mut runtime_picks: Vec<Variant> = Vec::new();
    let mut tally = Tally::default();
    for input in inputs {
        let (line, measured, picked) =
            measure_shape(&gpu, &reg, input, &bench_cfg, &use_cfg, rep_ms, &mut tally)?;
        lines.push(line);
        runtime_picks.push(picked);
        live.push(measured);
    }
    if let Some(path) = &out {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        ah_core::fs::write_atomic(path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let mut k = 0;
    let learned_score = eval::score(&live, |_| {
        k += 1;
        runtime_picks[k - 1]
    });
    let baselines = speedups_over_fixed(&live, &runtime_picks);
    let decide = h.map(|h| {
        let contexts: Vec<Context> = inputs.iter().map(InputTimes::context).collect();
        time_decide(h, &contexts)
    });
    let Tally {
        bench_ms,
        use_us,
        use_bench_ms,
        sure,
        same,
        within10,
        over10,
        over10_rechecked,
    } = tally;
    let summary = json!({
        "command": "measure", "device": gpu.cuda.borrow().info().device_name, "shapes": live.len(),
        "rep_ms": rep_ms,
        "heuristic": h.map(|h| h.heuristic_name()),
        "first_call_benchmark_ms": {"median": percentile(&bench_ms, 0.5), "p90": percentile(&bench_ms, 0.9),
            "geomean": geomean(&bench_ms)},
        "first_call_heuristic_us": {"n": use_us.len(), "median": percentile(&use_us, 0.5),
            "p90": percentile(&use_us, 0.9)},
        "first_call_heuristic_in_a_program_us": program,
        "first_call_unsure_benchmark_ms": {"n": use_bench_ms.len(), "median": percentile(&use_bench_ms, 0.5)},
        "decide_ns": decide.map(|d| d.0), "decide_sure": decide.map(|d| d.1),
        "learned_runtime_share_of_oracle": learned_score.share_of_oracle,
        "learned_runtime_over_10pct": learned_score.over_10pct,
        "learned_speedup_over_fixed": baselines,
        "heuristic_sure": sure, "same_as_benchmark": same, "different_within_10pct": within10,
        "different_over_10pct": over10,
        "over_10pct_after_best_of_3": over10_rechecked,
    });
    println!("{summary}");
    Ok(())
}

/// What `measure` gathers over the shapes for its summary: first-call times and how the
/// heuristic's picks compare with the benchmark's.
#[derive(Default)]
struct Tally {
    bench_ms: Vec<f64>,
    use_us: Vec<f64>,
    use_bench_ms: Vec<f64>,
    sure: usize,
    same: usize,
    within10: usize,
    over10: usize,
    over10_rechecked: usize,
}

/// One shape of `measure`: its first call in benchmark mode (every variant timed), then in use
/// mode (the heuristic, a benchmark when it is unsure), counted in `tally`. Returns the shape's
/// JSON line, its measured times and the runtime's pick.
fn measure_shape(
    gpu: &Gpu,
    reg: &Registry,
    input: &InputTimes,
    bench_cfg: &MultiKernelConfig,
    use_cfg: &MultiKernelConfig,
    rep_ms: f64,
    tally: &mut Tally,
) -> anyhow::Result<(serde_json::Value, InputTimes, Variant)> {
    let shape = Shape::new(gpu, input)?;
    // 1. First call, benchmark mode: every variant timed (rep budget each).
    let mut mk = shape.multi_kernel(gpu)?;
    let t = Instant::now();
    let bench = mk.run(bench_cfg, None, None)?.clone();
    tally.bench_ms.push(t.elapsed().as_secs_f64() * 1e3);
    let timings = bench.timings_ms.clone().unwrap_or_default();
    let names = mk.choices();
    let mut times = BTreeMap::new();
    for (n, t) in names.iter().zip(&timings) {
        times.insert(Variant::parse(n).expect("our names"), *t);
    }
    let measured = InputTimes {
        times,
        ..input.clone()
    };
    // 2. First call, use mode: the heuristic (a benchmark when it is unsure).
    let mut mk = shape.multi_kernel(gpu)?;
    let t = Instant::now();
    let learned: KernelPick = mk.pick(use_cfg, Some(reg), None)?.clone();
    let dt = t.elapsed().as_secs_f64();
    let picked = Variant::parse(&learned.choice).expect("our names");
    let (best, best_t) = measured.best();
    let mut recheck: Option<f64> = None;
    let ratio = measured.time(picked) / best_t;
    if learned.by == PickedBy::Heuristic {
        tally.use_us.push(dt * 1e6);
        tally.sure += 1;
        if picked == best {
            tally.same += 1;
        } else if ratio <= ah_eval::HARM_FACTOR {
            tally.within10 += 1;
        } else {
            tally.over10 += 1;
            let r = best_of_3_ratio(&shape, gpu, &timings, &names, &learned.choice, rep_ms)?;
            recheck = Some(r);
            if r > ah_eval::HARM_FACTOR {
                tally.over10_rechecked += 1;
            }
            eprintln!(
                "  {}: learned {picked} is {ratio:.2}x the benchmark's {best}; best of 3 \
                 benchmarks: {r:.2}x the fastest",
                describe(input)
            );
        }
    } else {
        tally.use_bench_ms.push(dt * 1e3);
    }
    let line = json!({
        "rows": input.rows, "cols": input.cols, "dtype": input.dtype.torch_name(),
        "op": input.op.name(), "timings_ms": names.iter().zip(&timings)
            .map(|(n, t)| (n.clone(), if t.is_finite() { json!(t) } else { json!(null) }))
            .collect::<serde_json::Map<_, _>>(),
        "benchmark_pick": bench.choice, "first_call_benchmark_ms": tally.bench_ms.last(),
        "learned_pick": learned.choice, "learned_by": format!("{:?}", learned.by),
        "learned_unsure": learned.unsure.map(|u| format!("{u:?}")),
        "first_call_learned_us": dt * 1e6, "learned_over_best": ratio,
        "learned_over_best_of_3": recheck,
    });
    Ok((line, measured, picked))
}

/// A benchmark is one noisy sample: measures every variant twice more and keeps each one's
/// best (of `timings` and the two), to tell a wrong pick from a mis-measured variant. Returns
/// `choice`'s best time over the fastest.
fn best_of_3_ratio(
    shape: &Shape,
    gpu: &Gpu,
    timings: &[f64],
    names: &[String],
    choice: &str,
    rep_ms: f64,
) -> anyhow::Result<f64> {
    let mut again = shape.multi_kernel(gpu)?;
    let mut best_of = timings.to_vec();
    for _ in 0..2 {
        let (_, t2) = again.benchmark_all(rep_ms)?;
        for (b, t) in best_of.iter_mut().zip(t2) {
            *b = b.min(t);
        }
    }
    let at = |name: &str| names.iter().position(|n| n == name).map(|i| best_of[i]);
    let min = best_of.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(at(choice).unwrap_or(f64::NAN) / min)
}

/// The runtime's geomean speedup over each fixed variant (family and block size).
fn speedups_over_fixed(
    live: &[InputTimes],
    runtime_picks: &[Variant],
) -> serde_json::Map<String, serde_json::Value> {
    let mut baselines = serde_json::Map::new();
    for family in [Family::Persistent, Family::Looped] {
        for block in BLOCK_SIZES {
            let mut k = 0;
            let s = eval::geomean_speedup(
                live,
                |i| eval::fixed_pick(family, block, i.cols),
                |_| {
                    k += 1;
                    runtime_picks[k - 1]
                },
            );
            baselines.insert(format!("{}-{block}", family.name()), json!(s));
        }
    }
    baselines
}

/// First calls as a program makes them (Inductor's first forward pass): one new multi-kernel
/// per shape, its first call timed (`pick`, use mode) and then run; between two first calls
/// only the GPU work of a program (allocate and fill the input, run the picked kernel, free).
/// No benchmark-mode calls in this pass, which comes first in the process: the runtime's and
/// the heuristic's code are as warm as the program's own first calls leave them. Shapes the
/// heuristic is unsure of are benchmarked by the pick (left out of the times, and the
/// following shape's pick then comes right after that benchmark).
fn in_a_program(
    gpu: &Gpu,
    reg: &Registry,
    inputs: &[InputTimes],
    use_cfg: &MultiKernelConfig,
) -> anyhow::Result<serde_json::Value> {
    let (mut sure_us, mut after_bench_us) = (Vec::new(), Vec::new());
    let mut benchmarked = 0;
    let mut previous_benchmarked = false;
    for input in inputs {
        let shape = Shape::new(gpu, input)?;
        let mut mk = shape.multi_kernel(gpu)?;
        let t = Instant::now();
        let by = mk.pick(use_cfg, Some(reg), None)?.by;
        let us = t.elapsed().as_secs_f64() * 1e6;
        mk.run(use_cfg, Some(reg), None)?;
        if by == PickedBy::Heuristic {
            if previous_benchmarked {
                after_bench_us.push(us);
            } else {
                sure_us.push(us);
            }
        } else {
            benchmarked += 1;
        }
        previous_benchmarked = by != PickedBy::Heuristic;
    }
    Ok(json!({
        "n": sure_us.len(), "median": percentile(&sure_us, 0.5), "p90": percentile(&sure_us, 0.9),
        "max": percentile(&sure_us, 1.0), "benchmarked_unsure": benchmarked,
        "right_after_an_unsure_benchmark": {"n": after_bench_us.len(),
            "median": percentile(&after_bench_us, 0.5)},
    }))
}

fn cache_run(
    inputs: &[InputTimes],
    cache_path: &PathBuf,
    edit_source: bool,
    out: Option<PathBuf>,
) -> anyhow::Result<()> {
    let mut source = REDUCTION_SOURCE.to_string();
    if edit_source {
        source.push_str("\n// edited: any change to the source changes its hash\n");
    }
    let cfg = config(false, true, ah_runtime::multi_kernel::DEFAULT_REP_MS);
    let gpu = Gpu::new(cfg.rep_ms, source)?;
    let mut cache = PickCache::open(cache_path, gpu.fingerprint())?;
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    let mut lines = Vec::new();
    let mut warnings = Vec::new();
    let t = Instant::now();
    for input in inputs {
        let shape = Shape::new(&gpu, input)?;
        let mut mk = shape.multi_kernel(&gpu)?;
        let key = mk.cache_key().hash;
        let p = mk.run(&cfg, None, Some(&mut cache))?.clone();
        *by.entry(format!("{:?}", p.by)).or_default() += 1;
        warnings.extend(p.warnings.iter().cloned());
        lines.push(json!({"shape": describe(input), "pick": p.choice, "by": format!("{:?}", p.by), "key": key}));
    }
    let wall = t.elapsed().as_secs_f64();
    if let Some(path) = &out {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        ah_core::fs::write_atomic(path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "{}",
        json!({"command": "cache", "edit_source": edit_source, "shapes": inputs.len(),
            "picked_by": by, "wall_s": wall, "cache_entries": cache.len(),
            "warnings": warnings})
    );
    Ok(())
}

fn eval_log(shapes: &std::path::Path, inputs: &[InputTimes]) -> anyhow::Result<()> {
    let reg = registry();
    let h = heuristic(&reg, DeviceIdentity::H100)
        .ok_or_else(|| anyhow!("no reduction heuristic for the H100 in ah-heuristics"))?;
    let contexts: Vec<Context> = inputs.iter().map(InputTimes::context).collect();
    // The heuristic alone (top class even when unsure); and the runtime: heuristic when sure,
    // else the benchmark's pick (the oracle on these measured times).
    let top = |i: &InputTimes| -> Variant {
        h.ranked(&i.context())
            .and_then(|r| r.into_iter().find_map(Variant::parse))
            .unwrap_or(eval::fixed_pick(Family::Looped, 1024, i.cols))
    };
    let runtime = |i: &InputTimes| -> Variant {
        match h.decide(&i.context()).choice() {
            Some(c) => Variant::parse(h.choices()[c]).unwrap_or(i.best().0),
            None => i.best().0,
        }
    };
    let sure: Vec<InputTimes> = inputs
        .iter()
        .filter(|i| h.decide(&i.context()).choice().is_some())
        .cloned()
        .collect();
    let mut table = serde_json::Map::new();
    for (name, family) in [
        ("persistent", Family::Persistent),
        ("looped", Family::Looped),
    ] {
        for block in BLOCK_SIZES {
            let base = |i: &InputTimes| eval::fixed_pick(family, block, i.cols);
            table.insert(
                format!("{name}-{block}"),
                json!({
                    "runtime_speedup": eval::geomean_speedup(inputs, base, runtime),
                    "heuristic_only_speedup": eval::geomean_speedup(inputs, base, top),
                    "share_of_oracle": eval::score(inputs, base).share_of_oracle,
                }),
            );
        }
    }
    let s_top = eval::score(inputs, top);
    let s_rt = eval::score(inputs, runtime);
    let s_sure = eval::score(&sure, runtime);
    let (ns, n_sure) = time_decide(h, &contexts);
    let pick_ns = time_runtime_pick(&reg, inputs, false)?;
    let cold_ns = time_runtime_pick(&reg, inputs, true)?;
    println!(
        "{}",
        json!({
            "command": "eval", "log": shapes.display().to_string(), "inputs": inputs.len(),
            "heuristic": h.heuristic_name(), "sure": n_sure,
            "heuristic_only": {"share_of_oracle": s_top.share_of_oracle, "total_time_share": s_top.total_time_share,
                "exact": s_top.exact, "over_10pct": s_top.over_10pct},
            "runtime": {"share_of_oracle": s_rt.share_of_oracle, "total_time_share": s_rt.total_time_share,
                "exact": s_rt.exact, "over_10pct": s_rt.over_10pct},
            "sure_only": {"n": s_sure.n, "share_of_oracle": s_sure.share_of_oracle, "exact": s_sure.exact,
                "over_10pct": s_sure.over_10pct},
            "fixed_baselines": table, "decide_ns": ns,
            "runtime_pick_ns": {"median": percentile(&pick_ns, 0.5), "p90": percentile(&pick_ns, 0.9),
                "max": percentile(&pick_ns, 1.0)},
            "runtime_pick_cold_ns": {"median": percentile(&cold_ns, 0.5), "p90": percentile(&cold_ns, 0.9),
                "max": percentile(&cold_ns, 1.0)},
        })
    );
    Ok(())
}
