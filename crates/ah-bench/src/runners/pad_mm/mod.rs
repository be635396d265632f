//! The `pad_mm` runner: should a matmul with unaligned dimensions be padded?
//!
//! Inputs follow PyTorch's generator (`torchgen/_autoheuristic/pad_mm/gen_data_pad_mm.py`,
//! spec section 10): dtype uniform over fp16/bf16/fp32, fp32 precision "highest" with
//! probability 0.8 (else TF32), dims half the time uniform in `1..=2^max_power2`, else per dim
//! 75 % a power of two `2^1..2^max_power2` and 25 % strictly between two powers of two;
//! all-aligned shapes and shapes that do not fit in a quarter of the device memory are drawn
//! again; both operands transposed with probability 0.05, else one of {left, right, none};
//! each operand "prepadded" (`a + 1` before the mm) with probability 0.2.
//!
//! With `--shapes real` inputs are instead the GEMMs of real models' linear layers
//! ([`real_models`]); `--shapes mix` takes them w.p. [`MIX_REAL`] per sample, else PyTorch's
//! generator (see [`ShapeDistribution`]).
//!
//! Features are those of PyTorch's `pad_mm.get_context`; a transposed operand is never
//! prepadded (`should_exclude_padding_time` is false for non-contiguous tensors).
//!
//! Choices, timed as PyTorch's `_should_pad` builds them:
//! - `orig`: cuBLAS GEMM on the given shapes and layouts;
//! - `pad`: for each operand that needs padding and is not prepadded, `constant_pad_nd`
//!   (zero the padded buffer, copy the operand in: PyTorch's fill + copy); for a prepadded
//!   operand only the zeroing of its padding (`mat[-p:, -q:].fill_(0)`); then the GEMM on the
//!   padded shapes; the result is a slice view (no copy), as in PyTorch.
//!
//! One file per job: `input.rs` (the input and what PyTorch derives from it), `generator.rs`
//! (the runner's settings, [`PadMmRunner`], and drawing inputs), [`real_models`], `cuda.rs` and
//! `cpu.rs` (buffers and choices on each backend), `check.rs` (the GPU correctness check); this
//! file runs it (its [`BenchmarkRunner`] implementation).

mod check;
mod cpu;
mod cuda;
mod generator;
mod input;
pub mod real_models;

use ah_core::{Context, DeviceIdentity};
use rand::Rng;

pub use super::layout::is_contiguous;
pub use check::{check_pad_equals_orig, check_tolerance, CheckResult};
pub use cpu::CpuPrepared;
pub use cuda::CudaPrepared;
pub use generator::{PadMmRunner, ShapeDistribution, MIX_REAL};
pub use input::{fits_in_memory, padded_length, precondition, PadMmInput};

use crate::backend::{Backend, BackendKind, BenchError, Measurement};
use crate::runner::{BenchmarkRunner, InputDistribution, SampleRng, Target};
use cpu::{cpu_orig, cpu_pad, prepare_cpu};
use cuda::{enqueue_orig, enqueue_pad, prepare_cuda};
use input::{shapes, write_pad_rect};

/// Per-input state of the pad_mm runner.
#[derive(Debug)]
pub enum PadMmPrepared {
    /// On a GPU.
    Cuda(CudaPrepared),
    /// On the CPU.
    Cpu(CpuPrepared),
}

impl BenchmarkRunner for PadMmRunner {
    type Input = PadMmInput;
    type Prepared = PadMmPrepared;

    fn name(&self) -> &'static str {
        "pad_mm"
    }

    fn description(&self) -> &'static str {
        "pad a matmul's unaligned dims (cuBLAS GEMM vs pad + GEMM on padded shapes); PyTorch's pad_mm features"
    }

    fn choices(&self) -> Vec<String> {
        vec!["orig".into(), "pad".into()]
    }

    fn supports(&self, _kind: BackendKind) -> bool {
        true
    }

    fn create_input(&self, rng: &mut SampleRng, target: &Target) -> PadMmInput {
        match &self.shapes {
            ShapeDistribution::Pytorch => self.pytorch_input(rng, target),
            ShapeDistribution::Real(c) => real_models::draw(rng, c, target),
            ShapeDistribution::Mix(c) if rng.random_bool(MIX_REAL) => {
                real_models::draw(rng, c, target)
            }
            ShapeDistribution::Mix(_) => self.pytorch_input_meeting_precondition(rng, target),
        }
    }

    fn input_distribution(&self) -> Option<InputDistribution> {
        Some(InputDistribution {
            shapes: self.shapes.name(),
            catalogue_sha256: self.shapes.catalogue().map(|c| c.sha256.clone()),
            // Versions of the draws' timing (a resume across versions is refused):
            // - pytorch 4, real and mix 5: a padded operand is filled in one pass, the copy
            //   writing the padding's zeros, and a transposed operand stays transposed
            //   (`PadCopy::OnePass`), as a compiled program's pad kernel and buffers; before,
            //   a zero fill of the whole buffer, then a tiled transpose into a row-major one;
            // - pytorch 3, real and mix 4: padded operands get Inductor's row strides
            //   (`CudaBackend::padded_row_stride`), as a compiled program allocates them; cuBLAS
            //   ran up to 1.7x faster on them than on packed rows;
            // - pytorch 2, real and mix 3: a transposed operand is copied into its padded
            //   buffer by a tiled transpose, as a compiled program's copy costs (the strided
            //   gather before cost up to 3x more, as eager PyTorch's constant_pad_nd does);
            // - real and mix 2: grad-weight GEMMs time `pad` with mat1's padding fused
            //   (`PadMmInput::fuse_mat1_pad`); version 1 timed its copy.
            version: if self.shapes.catalogue().is_some() {
                5
            } else {
                4
            },
        })
    }

    fn context(&self, i: &PadMmInput) -> Context {
        let (s10, s11) = i.mat1_strides();
        let (s20, s21) = i.mat2_strides();
        let (mp, kp, np) = i.padded_lengths();
        let mut c = Context::with_capacity(17);
        c.add("m", i.m).add("k", i.k).add("n", i.n);
        c.add("mat1_stride_0", s10).add("mat1_stride_1", s11);
        c.add("mat2_stride_0", s20).add("mat2_stride_1", s21);
        c.add("m_padded_length", mp)
            .add("k_padded_length", kp)
            .add("n_padded_length", np);
        c.add("mat1_align_size", i.dtype.align_size());
        c.add("mat2_align_size", i.dtype.align_size());
        c.add_categorical("mat1_dtype", i.dtype.torch_name());
        c.add_categorical("mat2_dtype", i.dtype.torch_name());
        c.add_categorical("prepadded_mat1", i.mat1_pre_padded());
        c.add_categorical("prepadded_mat2", i.mat2_pre_padded());
        c.add_categorical("using_tf32", i.using_tf32());
        c
    }

    fn precondition(&self, device: DeviceIdentity, i: &PadMmInput) -> bool {
        // PyTorch's pad_mm sees only inputs that need padding; the generators draw no others,
        // but an exhausted real-model draw may (real_models::ATTEMPTS).
        precondition(device, i.m, i.k, i.n) && i.needs_padding()
    }

    fn prepare(&self, i: &PadMmInput, backend: &mut Backend) -> Result<PadMmPrepared, BenchError> {
        match backend {
            Backend::Cuda(cuda) => prepare_cuda(i, cuda).map(PadMmPrepared::Cuda),
            Backend::Cpu(_) => prepare_cpu(i).map(PadMmPrepared::Cpu),
        }
    }

    fn run(
        &self,
        i: &PadMmInput,
        prepared: &mut PadMmPrepared,
        choice: &str,
        warmup: bool,
        backend: &mut Backend,
    ) -> Result<Measurement, BenchError> {
        let pad = match choice {
            "orig" => false,
            "pad" => true,
            other => return Err(BenchError::Other(format!("pad_mm has no choice `{other}`"))),
        };
        match (backend, prepared) {
            (Backend::Cuda(cuda), PadMmPrepared::Cuda(p)) => {
                let p = &*p;
                cuda.bench(warmup, &mut |c| {
                    if pad {
                        enqueue_pad(c, i, p)
                    } else {
                        enqueue_orig(c, i, p)
                    }
                })
            }
            (Backend::Cpu(cpu), PadMmPrepared::Cpu(p)) => cpu.bench(warmup, &mut || {
                if pad {
                    cpu_pad(i, p)
                } else {
                    cpu_orig(i, p)
                }
                Ok(())
            }),
            _ => Err(BenchError::Other("prepared on another backend".into())),
        }
    }
}

#[cfg(test)]
mod tests;
