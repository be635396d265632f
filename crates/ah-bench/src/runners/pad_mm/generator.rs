//! Drawing inputs: the `--shapes` distributions ([`ShapeDistribution`]) and PyTorch's
//! generator (the module documentation of [`super`] describes it).

use std::sync::Arc;

use rand::Rng;

use super::{fits_in_memory, precondition, real_models, PadMmInput};
use crate::backend::BackendKind;
use crate::catalogue::Catalogue;
use crate::dtype::DType;
use crate::runner::{SampleRng, Target};

/// Probability of the real-model branch per sample under [`ShapeDistribution::Mix`].
pub const MIX_REAL: f64 = 0.6;

/// The input distribution of the pad_mm runner (`--shapes`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ShapeDistribution {
    /// PyTorch's random generator only (every log collected before `--shapes` existed).
    #[default]
    Pytorch,
    /// GEMMs of the catalogue's real models only.
    Real(Arc<Catalogue>),
    /// Per sample: real w.p. [`MIX_REAL`], else PyTorch's generator.
    Mix(Arc<Catalogue>),
}

impl ShapeDistribution {
    /// `pytorch`, `real` or `mix` (the `--shapes` value and the provenance's `shapes`).
    pub fn name(&self) -> &'static str {
        match self {
            ShapeDistribution::Pytorch => "pytorch",
            ShapeDistribution::Real(_) => "real",
            ShapeDistribution::Mix(_) => "mix",
        }
    }
    /// The catalogue, for `real` and `mix`.
    pub fn catalogue(&self) -> Option<&Catalogue> {
        match self {
            ShapeDistribution::Pytorch => None,
            ShapeDistribution::Real(c) | ShapeDistribution::Mix(c) => Some(c),
        }
    }
}

/// The pad_mm runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PadMmRunner {
    /// Largest power of two of a dimension on the GPU (PyTorch: 16, i.e. 65536); PyTorch's
    /// generator only (real-model shapes are the models').
    pub max_power2_gpu: u32,
    /// Largest power of two on the CPU (default 11: 2048, so 200 inputs take a minute or two on 2 cores).
    pub max_power2_cpu: u32,
    /// Where inputs come from (default: PyTorch's generator).
    pub shapes: ShapeDistribution,
}

impl Default for PadMmRunner {
    fn default() -> Self {
        Self {
            max_power2_gpu: 16,
            max_power2_cpu: 11,
            shapes: ShapeDistribution::Pytorch,
        }
    }
}

impl PadMmRunner {
    /// The same runner drawing from `shapes`.
    pub fn with_shapes(self, shapes: ShapeDistribution) -> Self {
        Self { shapes, ..self }
    }
}

impl PadMmRunner {
    /// PyTorch's generator (the module documentation describes it).
    pub(super) fn pytorch_input(&self, rng: &mut SampleRng, target: &Target) -> PadMmInput {
        let dtype = match target.kind {
            // Host GEMMs are fp32 only: the CPU dataset keeps PyTorch's columns with fp32.
            BackendKind::Cpu => DType::F32,
            BackendKind::Cuda => [DType::F16, DType::BF16, DType::F32][rng.random_range(0..3)],
        };
        // set_precision: fp32 "highest" w.p. 0.8, else "high" (TF32); other dtypes "high".
        let allow_tf32 = match (target.kind, dtype) {
            (BackendKind::Cpu, _) => false,
            (_, DType::F32) => !rng.random_bool(0.8),
            _ => true,
        };
        let max_p = self.max_power2(target.kind);
        let max_dim = 1usize << max_p;
        let uniform = rng.random_bool(0.5);
        let align = dtype.align_size();
        let (m, k, n) = loop {
            let (m, k, n) = if uniform {
                (
                    rng.random_range(1..=max_dim),
                    rng.random_range(1..=max_dim),
                    rng.random_range(1..=max_dim),
                )
            } else {
                (
                    Self::random_dim(rng, max_p),
                    Self::random_dim(rng, max_p),
                    Self::random_dim(rng, max_p),
                )
            };
            if [m, k, n].iter().all(|d| d % align == 0) {
                continue;
            }
            if fits_in_memory(dtype, m, k, n, target.total_memory) {
                break (m, k, n);
            }
        };
        let (transpose_left, transpose_right) = if rng.random_bool(0.05) {
            (true, true)
        } else {
            [(true, false), (false, true), (false, false)][rng.random_range(0..3)]
        };
        let prepadded_left = rng.random_bool(0.2);
        let prepadded_right = rng.random_bool(0.2);
        PadMmInput {
            m,
            k,
            n,
            dtype,
            allow_tf32,
            transpose_left,
            transpose_right,
            prepadded_left,
            prepadded_right,
            fuse_mat1_pad: false,
        }
    }

    fn max_power2(&self, kind: BackendKind) -> u32 {
        match kind {
            BackendKind::Cuda => self.max_power2_gpu,
            BackendKind::Cpu => self.max_power2_cpu,
        }
    }

    /// The PyTorch branch of `mix`: drawn again until the precondition holds, as the real
    /// branch is, so the branch (and its 0.6 share of the logged inputs) is fixed per sample.
    pub(super) fn pytorch_input_meeting_precondition(
        &self,
        rng: &mut SampleRng,
        target: &Target,
    ) -> PadMmInput {
        (0..real_models::ATTEMPTS)
            .map(|_| self.pytorch_input(rng, target))
            .find(|i| precondition(target.identity, i.m, i.k, i.n))
            .unwrap_or(real_models::NOTHING)
    }

    fn random_dim(rng: &mut SampleRng, max_p: u32) -> usize {
        // get_random_dim: aligned w.p. 0.75 -> 2^randint(1, max); else between powers of two.
        if rng.random_bool(0.75) {
            1usize << rng.random_range(1..=max_p)
        } else {
            let i = rng.random_range(1..max_p.max(2));
            rng.random_range((1usize << i) + 1..=(1usize << (i + 1)) - 1)
        }
    }
}
