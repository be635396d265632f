//! Evaluates an mm ranking heuristic (model JSON from `ah-train --ranking`) on a log it was
//! not trained on and prints the results as Markdown (docs/cublaslt-mm-ranking.md).
//!
//! ```text
//! cargo run --release -p ah-cases --example mm_ranking_eval -- \
//!     out/mm/CublasLtRankingH100.model.json data/mm_h100_eval.txt [--worst 10]
//! ```
use std::path::PathBuf;

use ah_cases::mm_eval::{evaluate, Evaluation, Summary};
use ah_core::Model;
use ah_log::{Log, ReadOptions};
use anyhow::Context as _;
use clap::Parser;

/// Evaluate an mm ranking heuristic against every algorithm's measured time.
#[derive(Debug, Parser)]
struct Args {
    /// The model JSON written by `ah-train`.
    model: PathBuf,
    /// A log of the mm runner (not the training log).
    log: PathBuf,
    /// k values of the top-k tables.
    #[arg(long, value_delimiter = ',', default_value = "1,3,5,10")]
    ks: Vec<usize>,
    /// How many of the worst first choices to list.
    #[arg(long, default_value_t = 10)]
    worst: usize,
}

fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

fn summary_rows(e: &Evaluation) -> Vec<(&'static str, Summary)> {
    vec![
        ("all", e.summary(|_| true)),
        ("PyTorch-generator shapes", e.summary(|i| !i.model_shape)),
        ("transformer shapes", e.summary(|i| i.model_shape)),
        (
            "fp16",
            e.summary(|i| i.description.contains("float16") && !i.description.contains("bfloat16")),
        ),
        ("bf16", e.summary(|i| i.description.contains("bfloat16"))),
        (
            "fp32 (TF32)",
            e.summary(|i| i.description.contains("float32")),
        ),
    ]
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let model = Model::load(&args.model)?;
    let log = Log::read(&args.log, ReadOptions { strict: false })
        .with_context(|| format!("reading {}", args.log.display()))?;
    let e = evaluate(&model, &log, &args.ks)?;
    println!(
        "Model `{}` ({} choices, trained on `{}`), evaluated on `{}`: {} inputs ({} skipped: fewer than two finite choices).\n",
        model.heuristic_name,
        model.choices.len(),
        model.provenance.dataset,
        args.log.display(),
        e.inputs.len(),
        e.skipped
    );
    println!("### First choice vs cuBLASLt's pick (`extern_mm`)\n");
    println!("| inputs | n | geomean speedup | worst | best | > 10 % slower | oracle geomean | extern_mm is fastest | no ranking |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (name, s) in summary_rows(&e) {
        if s.n == 0 {
            continue;
        }
        println!(
            "| {name} | {} | {:.3} | {:.3} | {:.3} | {} | {:.3} | {} | {} |",
            s.n,
            s.first_geomean,
            s.first_worst,
            s.first_max,
            pct(s.first_slower_10pct),
            s.oracle_geomean,
            pct(s.extern_is_best),
            s.unranked
        );
    }
    println!("\n### Fastest algorithm within the top k\n");
    println!("| inputs | k | best in cuBLASLt's first k | best in top k | best in top k + extern_mm | within 2 % of best (top k + extern_mm) | autotune top k + extern_mm: geomean speedup | share of oracle | choices benchmarked | kernel time benchmarked |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut top_rows: Vec<(&str, Summary)> = summary_rows(&e).into_iter().take(3).collect();
    // Inputs the heuristic ranked (the others benchmark every choice, so they always hit).
    top_rows.push(("ranked inputs only", e.summary(|i| i.ranked)));
    for (name, s) in top_rows {
        if s.n == 0 {
            continue;
        }
        for &k in &args.ks {
            println!(
                "| {name} | {k} | {} | {} | {} | {} | {:.3} | {:.4} | {:.1} of {:.1} | {} |",
                pct(s.best_in_cublaslt_top_k[&k]),
                pct(s.best_in_top_k[&k]),
                pct(s.best_in_top_k_ext[&k]),
                pct(s.near_best_top_k_ext[&k]),
                s.autotune_top_k_geomean[&k],
                s.autotune_top_k_of_oracle[&k],
                s.mean_benchmarked[&k],
                s.mean_choices,
                pct(s.kernel_time_share[&k])
            );
        }
    }
    let mut worst: Vec<_> = e.inputs.iter().collect();
    worst.sort_by(|a, b| (a.extern_ms / a.first_ms).total_cmp(&(b.extern_ms / b.first_ms)));
    println!("\n### Worst first choices\n");
    println!("| input | first choice | its time (ms) | extern_mm (ms) | fastest (ms) | speedup |");
    println!("|---|---|---|---|---|---|");
    for i in worst.iter().take(args.worst) {
        println!(
            "| {} | `{}` | {:.4} | {:.4} | {:.4} | {:.3} |",
            i.description,
            i.first,
            i.first_ms,
            i.extern_ms,
            i.best_ms,
            i.extern_ms / i.first_ms
        );
    }
    Ok(())
}
