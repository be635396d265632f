//! `ah-train`: learn an AutoHeuristic from an autotuning log.

use std::process::ExitCode;

mod cli;

/// mimalloc instead of glibc's malloc: reading a log and building its table make millions of
/// small allocations (docs/training.md, "Training speed", has the measurement).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = <cli::Args as clap::Parser>::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        // A closed stdout pipe (`| head`) ends the output, quietly and successfully.
        Err(e) if ah_core::error::is_broken_pipe(&*e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", ah_core::error::report(e.as_ref()));
            ExitCode::from(2)
        }
    }
}
