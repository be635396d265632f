//! What the command line sets for the runners ([`RunnerOptions`], from `--max-dim`), and
//! which runners it applies to.

/// Options that scale runners from the command line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunnerOptions {
    /// Largest dimension as a power of two (`--max-dim 8192` gives 13); `None` keeps each
    /// runner's default (pad_mm: PyTorch's 2^16 on the GPU, 2^11 on the CPU).
    pub max_power2: Option<u32>,
}

/// Parses a `--max-dim` value (a clap value parser of `ah-collect` and `ah-use`): a power of
/// two between 4 and 2^20, as its exponent ([`RunnerOptions::max_power2`]).
pub fn parse_max_dim(s: &str) -> Result<u32, String> {
    match s.parse::<u64>() {
        Ok(d) if (4..=1 << 20).contains(&d) && d.is_power_of_two() => Ok(d.trailing_zeros()),
        _ => Err("give a power of two between 4 and 1048576, e.g. --max-dim 8192".into()),
    }
}

/// The runners [`RunnerOptions::max_power2`] scales, as [`registry`](super::registry) applies it; every other
/// runner draws its inputs without it.
pub const SCALED_BY_MAX_DIM: [&str; 2] = ["pad_mm", ah_core::optimization::CUBLASLT_MM];

/// Why `options` cannot be used with the runner `name` (a `--max-dim` it would ignore), so
/// that a flag is refused rather than silently dropped.
pub fn check_options(name: &str, options: &RunnerOptions) -> Result<(), String> {
    if options.max_power2.is_some() && !SCALED_BY_MAX_DIM.contains(&name) {
        return Err(format!(
            "--max-dim scales the shapes of {} only; `{name}` draws its inputs without it (leave it out)",
            SCALED_BY_MAX_DIM.join(" and ")
        ));
    }
    Ok(())
}
