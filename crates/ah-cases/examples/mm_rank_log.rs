//! Renames an mm log's choices by rank in cuBLASLt's candidate list (`extern_mm`, `lt2`,
//! `lt3`, ...), the label space of the re-ranking heuristic (docs/cublaslt-mm-ranking.md).
//!
//! ```text
//! cargo run --release -p ah-cases --example mm_rank_log -- data/mm_h100.txt data/mm_h100_rank.txt
//! ```
use std::path::PathBuf;

use ah_bench::runners::mm::rank_log_lines;
use ah_log::{Log, ReadOptions};
use anyhow::Context as _;
use clap::Parser;

/// Rename an mm log's choices by their rank in cuBLASLt's list.
#[derive(Debug, Parser)]
struct Args {
    /// The mm log (configuration ids, as `ah-collect --name mm` writes it).
    input: PathBuf,
    /// The log to write (replaced atomically).
    output: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let log = Log::read(&args.input, ReadOptions { strict: true })
        .with_context(|| format!("reading {}", args.input.display()))?;
    let mut text = rank_log_lines(&log)?.join("\n");
    text.push('\n');
    ah_core::fs::write_atomic(&args.output, text.as_bytes())
        .with_context(|| format!("writing {}", args.output.display()))?;
    eprintln!(
        "{}: {} rows -> {}: {} rows",
        args.input.display(),
        log.rows.len(),
        args.output.display(),
        text.lines().count() - 2
    );
    Ok(())
}
