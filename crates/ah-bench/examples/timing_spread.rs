//! Run-to-run spread of GPU benchmarks by kernel length: the measurement behind the
//! collector's long-kernel rule (`--long-run-ms`, docs/collection.md).
//!
//! For seeded pad_mm inputs of PyTorch's full-range generator, every choice is run once as a
//! warm-up and then `--runs` times, each run alone after an L2 flush. One JSON line per
//! (input, choice) goes to `--out`; a table on stdout gives, per kernel length, how far one
//! run lies from the median of the runs and how much slower the warm-up (first) call was.
//!
//! ```text
//! cargo run --release -p ah-collect --example timing_spread -- --samples 60 --out spread.jsonl
//! ```

use ah_core::stats::median;
use std::io::Write;
use std::time::Instant;

use ah_bench::backend::CudaBackend;
use ah_bench::runner::sample_rng;
use ah_bench::runner::{Repetitions, Target};
use ah_bench::runners::{registry, RunnerOptions};
use ah_bench::{Backend, TimingConfig};
use anyhow::{bail, Context};

struct Args {
    samples: u64,
    seed: u64,
    runs: usize,
    out: std::path::PathBuf,
    time_limit_s: f64,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut a = Args {
        samples: 60,
        seed: 7,
        runs: 6,
        out: "timing_spread.jsonl".into(),
        time_limit_s: f64::INFINITY,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--samples" => a.samples = value.parse()?,
            "--seed" => a.seed = value.parse()?,
            "--runs" => a.runs = value.parse()?,
            "--out" => a.out = value.into(),
            "--time-limit" => a.time_limit_s = value.parse()?,
            _ => bail!(
                "unknown flag {flag} (--samples N --seed S --runs R --out FILE --time-limit S)"
            ),
        }
    }
    if a.runs < 2 {
        bail!("--runs must be at least 2");
    }
    Ok(a)
}

/// One (input, choice): the warm-up call and `runs` single flushed runs, ms.
struct Sample {
    first_ms: f64,
    runs_ms: Vec<f64>,
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    // Every benchmark is exactly one timed run (every run counts as "long"): repetition 0 is
    // the warm-up (the first call of each choice), the others one flushed run each.
    let timing = TimingConfig {
        long_run_ms: Some(0.0),
        ..TimingConfig::PYTORCH
    };
    let cuda = CudaBackend::new(0, timing).context("this example needs a CUDA GPU")?;
    let info = cuda.info().clone();
    let mut backend = Backend::Cuda(Box::new(cuda));
    let runners = registry(&RunnerOptions::default());
    let runner = runners
        .iter()
        .find(|r| r.name() == "pad_mm")
        .expect("pad_mm runner");
    let target = Target {
        kind: info.kind,
        total_memory: info.total_memory,
        identity: info.identity,
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(&args.out)?);
    let started = Instant::now();
    let mut samples = Vec::new();
    for index in 0..args.samples {
        if started.elapsed().as_secs_f64() > args.time_limit_s {
            eprintln!("time limit reached after {index} inputs");
            break;
        }
        let Some(d) = runner.draw(&mut sample_rng(args.seed, index), &target, 10_000) else {
            continue;
        };
        let m = runner.measure(&d, Repetitions::fixed(args.runs + 1), &mut backend);
        for (c, choice) in m.choices.iter().enumerate() {
            let runs: Result<Vec<_>, _> = m.results.iter().map(|rep| rep[c].clone()).collect();
            let Ok(runs) = runs else { continue };
            let first_ms = runs[0].min_ms;
            let runs_ms: Vec<f64> = runs[1..].iter().map(|r| r.min_ms).collect();
            let line = serde_json::json!({
                "index": index, "input": d.description, "choice": choice,
                "first_ms": first_ms, "runs_ms": runs_ms,
            });
            writeln!(out, "{line}")?;
            samples.push(Sample { first_ms, runs_ms });
        }
        out.flush()?;
        eprintln!(
            "{}/{} inputs, {:.0} s",
            index + 1,
            args.samples,
            started.elapsed().as_secs_f64()
        );
    }
    print_table(&mut samples);
    Ok(())
}

/// Per kernel-length bucket: |one run / median - 1| (median, p95, max), (min of 3 runs) vs
/// the min of all runs, and the warm-up call over the median.
fn print_table(samples: &mut [Sample]) {
    println!("| kernel median | n | one run vs median: median | p95 | max | min of 3 vs min of all: p95 | first call / median - 1: median | max |");
    println!("|---|---|---|---|---|---|---|---|");
    let buckets = [
        (0.0, 1.0),
        (1.0, 5.0),
        (5.0, 20.0),
        (20.0, 100.0),
        (100.0, f64::INFINITY),
    ];
    for (lo, hi) in buckets {
        let (mut dev, mut min3, mut first) = (Vec::new(), Vec::new(), Vec::new());
        for s in samples.iter_mut() {
            let med = median(&mut s.runs_ms.clone());
            if !(lo..hi).contains(&med) || med <= 0.0 {
                continue;
            }
            dev.extend(s.runs_ms.iter().map(|r| (r / med - 1.0).abs()));
            let all_min = s.runs_ms.iter().copied().fold(f64::INFINITY, f64::min);
            let three_min = s.runs_ms[..3.min(s.runs_ms.len())]
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min);
            min3.push(three_min / all_min - 1.0);
            first.push(s.first_ms / med - 1.0);
        }
        if dev.is_empty() {
            continue;
        }
        let pct = |x: f64| format!("{:.2} %", 100.0 * x);
        println!(
            "| {lo}-{hi} ms | {} | {} | {} | {} | {} | {} | {} |",
            first.len(),
            pct(median(&mut dev)),
            pct(quantile(&mut dev, 0.95)),
            pct(quantile(&mut dev, 1.0)),
            pct(quantile(&mut min3, 0.95)),
            pct(median(&mut first)),
            pct(quantile(&mut first, 1.0)),
        );
    }
}
