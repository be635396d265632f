//! The registered runners. Adding one is a file in this folder plus two lines here: its
//! `pub mod` and its line in [`registry`] (docs/adding-a-runner.md, docs/tutorial.md).
//!
//! `mm` (`cublaslt_mm`, cuBLASLt) and `reduction` (NVRTC kernels) run only on a GPU and call cudarc
//! themselves: they exist in builds with the `cuda` feature only.

pub mod inductor_mm;
#[cfg(feature = "cuda")]
pub mod mm;
pub mod pad_mm;
#[cfg(feature = "cuda")]
pub mod reduction;

use crate::runner::DynRunner;

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

/// The strides of a GEMM operand that is `rows x cols`: `(cols, 1)` when it is row-major, `(1,
/// rows)` when it is a transposed view of a row-major `cols x rows` buffer. Every GEMM runner's
/// `mat1_strides` (`rows x cols` = `m x k`) and `mat2_strides` (`k x n`) is this.
pub fn operand_strides(rows: usize, cols: usize, transposed: bool) -> (usize, usize) {
    if transposed {
        (1, rows)
    } else {
        (cols, 1)
    }
}

/// Appends PyTorch's `mm` features that follow `m, k, n` (`kernel/mm.py:mm_autoheuristic`,
/// spec section 4), in its order: both operands' dtypes, strides ([`operand_strides`] of
/// `m x k` and `k x n`) and contiguity, then `using_tf32` (`tf32` for fp32, else
/// `not_float_32`).
pub fn add_mm_layout_features(
    c: &mut ah_core::Context,
    (m, k, n): (usize, usize, usize),
    (trans_a, trans_b): (bool, bool),
    dtype: crate::dtype::DType,
    tf32: bool,
) {
    let (s10, s11) = operand_strides(m, k, trans_a);
    let (s20, s21) = operand_strides(k, n, trans_b);
    c.add_categorical("mat1_dtype", dtype.torch_name());
    c.add_categorical("mat2_dtype", dtype.torch_name());
    c.add("mat1_stride_0", s10).add("mat1_stride_1", s11);
    c.add("mat2_stride_0", s20).add("mat2_stride_1", s21);
    c.add_categorical("mat1_iscontig", pad_mm::is_contiguous(m, k, s10, s11));
    c.add_categorical("mat2_iscontig", pad_mm::is_contiguous(k, n, s20, s21));
    let tf32: ah_core::Value = if dtype == crate::dtype::DType::F32 {
        tf32.into()
    } else {
        "not_float_32".into()
    };
    c.add_categorical("using_tf32", tf32);
}

/// The runners that exist only in builds with the `cuda` feature (they call cudarc
/// themselves), so that a build without it can say why it does not know them.
pub const CUDA_ONLY: [&str; 2] = ["reduction", ah_core::optimization::CUBLASLT_MM];

/// The runners [`RunnerOptions::max_power2`] scales, as [`registry`] applies it; every other
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

/// Every runner, in `--list` order.
pub fn registry(options: &RunnerOptions) -> Vec<Box<dyn DynRunner>> {
    let mut pad_mm = pad_mm::PadMmRunner::default();
    if let Some(p) = options.max_power2 {
        pad_mm.max_power2_gpu = p;
        pad_mm.max_power2_cpu = p;
    }
    vec![
        Box::new(pad_mm),
        #[cfg(feature = "cuda")]
        Box::new(reduction::ReductionRunner::new()),
        #[cfg(feature = "cuda")]
        Box::new(mm::MmRunner::with_options(options)),
        Box::new(inductor_mm::InductorMmRunner::default()),
        // One line per runner, e.g. `Box::new(mm::MmRunner::default()),`
    ]
}

/// The runner called `name`.
pub fn find(name: &str, options: &RunnerOptions) -> Option<Box<dyn DynRunner>> {
    registry(options).into_iter().find(|r| r.name() == name)
}

/// The target of the runners' unit tests: a device of 80 GiB of `kind` and `identity`.
#[cfg(test)]
pub(crate) fn test_target(
    kind: crate::backend::BackendKind,
    identity: ah_core::DeviceIdentity,
) -> crate::runner::Target {
    crate::runner::Target {
        kind,
        total_memory: 80 << 30,
        identity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--max-dim` is refused for a runner that ignores it and kept for those it scales.
    #[test]
    fn max_dim_is_checked_against_the_runners_it_scales() {
        let scaled = RunnerOptions {
            max_power2: Some(6),
        };
        assert!(check_options("pad_mm", &scaled).is_ok());
        assert!(check_options("cublaslt_mm", &scaled).is_ok());
        let err = check_options("inductor_mm", &scaled).unwrap_err();
        assert!(err.contains("pad_mm and cublaslt_mm only"), "{err}");
        assert!(check_options("inductor_mm", &RunnerOptions::default()).is_ok());
    }
}
