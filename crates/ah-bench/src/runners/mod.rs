//! The registered runners. Adding one is a file in this folder plus two lines here: its
//! `pub mod` and its line in [`registry`] (docs/adding-a-runner.md, docs/tutorial.md).
//!
//! `mm` (`cublaslt_mm`, cuBLASLt) and `reduction` (NVRTC kernels) run only on a GPU and call cudarc
//! themselves: they exist in builds with the `cuda` feature only.

pub mod inductor_mm;
mod layout;
#[cfg(feature = "cuda")]
pub mod mm;
mod options;
pub mod pad_mm;
#[cfg(feature = "cuda")]
pub mod reduction;

use crate::runner::DynRunner;

pub use layout::{add_mm_layout_features, operand_strides};
pub use options::{check_options, parse_max_dim, RunnerOptions, SCALED_BY_MAX_DIM};

/// The runners that exist only in builds with the `cuda` feature (they call cudarc
/// themselves), so that a build without it can say why it does not know them.
pub const CUDA_ONLY: [&str; 2] = ["reduction", ah_core::optimization::CUBLASLT_MM];

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
