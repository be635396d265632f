//! The registered runners. Adding one is a file in this folder plus one line in
//! [`registry`] (docs/adding-a-runner.md).

pub mod mm;
pub mod pad_mm;
pub mod reduction;

use crate::runner::DynRunner;

/// Options that scale runners from the command line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunnerOptions {
    /// Largest dimension as a power of two (`--max-dim 8192` gives 13); `None` keeps each
    /// runner's default (pad_mm: PyTorch's 2^16 on the GPU, 2^11 on the CPU).
    pub max_power2: Option<u32>,
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
        Box::new(reduction::ReductionRunner::new()),
        Box::new(mm::MmRunner::with_options(options)),
        // One line per runner, e.g. `Box::new(mm::MmRunner::default()),`
    ]
}

/// The runner called `name`.
pub fn find(name: &str, options: &RunnerOptions) -> Option<Box<dyn DynRunner>> {
    registry(options).into_iter().find(|r| r.name() == name)
}
