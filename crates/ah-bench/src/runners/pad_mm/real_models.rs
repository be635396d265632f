//! Real-model GEMMs for pad_mm (`--shapes real`): the three GEMMs of training an `nn.Linear`
//! of a catalogued model ([`crate::catalogue`]), with their real layouts.
//!
//! For `Linear(in = K, out = N)`, `T` tokens, `x: T x K` and the weight `W: N x K`:
//! - forward `y = x @ W.t()`: `m = T, k = K, n = N`; mat2 `W.t()` transposed (strides
//!   `(1, K)`); mat1 contiguous, computed by a previous op (prepadded) w.p. 0.8, else a graph
//!   input;
//! - grad input `dx = dy @ W`: `m = T, k = N, n = K`; both contiguous; mat1 prepadded w.p. 0.8;
//!   mat2 a parameter (never prepadded);
//! - grad weight `dW = dy.t() @ x`: `m = N, k = T, n = K`; mat1 transposed (so never
//!   prepadded), mat2 a saved activation (never prepadded).
//!
//! One draw: a model uniform over the catalogue; its LM head / classifier w.p. 0.25 (the GEMMs
//! where padding matters most), else a body layer uniformly; the GEMM kind uniformly; tokens
//! `T` half the time `batch x seq` (seq from the model's list, batch from [`BATCHES`]), half the
//! time `batch x L` with `L` uniform in `[seq_min / 2, seq_max]` (variable-length and packed
//! batches); dtype bf16 0.4, fp16 0.3, fp32 0.3 (TF32 w.p. 0.5). Draws are repeated until the
//! input is one PyTorch's pad_mm would consider ([`eligible`]: some dim unaligned, the device
//! precondition, a quarter of device memory) and `T <= `[`MAX_TOKENS`] (a larger `T` is drawn
//! again, not clipped, so no point mass sits at the cap).
//!
//! On the CPU backend the draw is fp32 and every dimension is divided by [`CPU_SCALE`]
//! (rounded up): the ratio of pad_mm's default GPU and CPU ranges (65536 / 2048), so the shapes
//! keep their proportions and host GEMMs stay fast.

use rand::Rng;

use super::{fits_in_memory, precondition, PadMmInput};
use crate::backend::BackendKind;
use crate::catalogue::{Catalogue, Linear};
use crate::dtype::DType;
use crate::runner::{SampleRng, Target};

/// Batch sizes of the `batch x seq` token counts.
pub const BATCHES: [usize; 12] = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64];

/// Largest token count `T`.
pub const MAX_TOKENS: usize = 32768;

/// Probability of drawing the LM head / classifier (when the model has one).
pub const HEAD_PROBABILITY: f64 = 0.25;

/// Divisor of every dimension on the CPU backend (65536 / 2048).
pub const CPU_SCALE: usize = 32;

/// Candidates drawn per input before giving up (a catalogue with no eligible GEMM for the
/// device): the draw then returns [`NOTHING`], which the runner's precondition refuses.
pub const ATTEMPTS: usize = 1000;

/// The input of an exhausted draw: `1 x 1 x 1` needs no padding, so it is never logged.
pub const NOTHING: PadMmInput = PadMmInput {
    m: 1,
    k: 1,
    n: 1,
    dtype: DType::F32,
    allow_tf32: false,
    transpose_left: false,
    transpose_right: false,
    prepadded_left: false,
    prepadded_right: false,
    fuse_mat1_pad: false,
};

/// Which GEMM of a linear layer's training step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GemmKind {
    /// `y = x @ W.t()`.
    Forward,
    /// `dx = dy @ W`.
    GradInput,
    /// `dW = dy.t() @ x`.
    GradWeight,
}

/// Draws one eligible real-model input (see the module documentation).
pub fn draw(rng: &mut SampleRng, catalogue: &Catalogue, target: &Target) -> PadMmInput {
    (0..ATTEMPTS)
        .find_map(|_| candidate(rng, catalogue, target).filter(|i| eligible(i, target)))
        .unwrap_or(NOTHING)
}

/// Whether PyTorch's pad_mm would consider the input on the target: some dim unaligned for the
/// dtype, the device precondition, and the operands fit in a quarter of the device memory.
pub fn eligible(i: &PadMmInput, target: &Target) -> bool {
    i.needs_padding()
        && precondition(target.identity, i.m, i.k, i.n)
        && fits_in_memory(i.dtype, i.m, i.k, i.n, target.total_memory)
}

/// One candidate, eligible or not; `None` when `T > MAX_TOKENS`.
fn candidate(rng: &mut SampleRng, catalogue: &Catalogue, target: &Target) -> Option<PadMmInput> {
    let model = &catalogue.models[rng.random_range(0..catalogue.models.len())];
    let heads: Vec<&Linear> = model.heads().collect();
    let layer = if !heads.is_empty() && rng.random_bool(HEAD_PROBABILITY) {
        *heads[rng.random_range(0..heads.len())]
    } else {
        let body: Vec<&Linear> = model.body().collect();
        *body[rng.random_range(0..body.len())]
    };
    let kind =
        [GemmKind::Forward, GemmKind::GradInput, GemmKind::GradWeight][rng.random_range(0..3)];
    let tokens = draw_tokens(rng, &model.spec.seq);
    let (dtype, allow_tf32) = draw_dtype(rng, target.kind);
    let prepadded = rng.random_bool(0.8);
    if tokens > MAX_TOKENS {
        return None;
    }
    let scaled = match target.kind {
        BackendKind::Cuda => layer,
        BackendKind::Cpu => Linear {
            in_features: layer.in_features.div_ceil(CPU_SCALE),
            out_features: layer.out_features.div_ceil(CPU_SCALE),
            ..layer
        },
    };
    let tokens = match target.kind {
        BackendKind::Cuda => tokens,
        BackendKind::Cpu => tokens.div_ceil(CPU_SCALE),
    };
    Some(gemm_input(
        &scaled, kind, tokens, dtype, allow_tf32, prepadded,
    ))
}

/// Token count: `batch x seq` or `batch x L`, `L` uniform in `[max(seq_min / 2, 1), seq_max]`.
pub fn draw_tokens(rng: &mut SampleRng, seq: &[usize]) -> usize {
    let batch = BATCHES[rng.random_range(0..BATCHES.len())];
    if rng.random_bool(0.5) {
        batch * seq[rng.random_range(0..seq.len())]
    } else {
        let lo = (seq.iter().min().copied().unwrap_or(1) / 2).max(1);
        let hi = seq.iter().max().copied().unwrap_or(1).max(lo);
        batch * rng.random_range(lo..=hi)
    }
}

/// bf16 0.4, fp16 0.3, fp32 0.3 with TF32 w.p. 0.5; fp32 without TF32 on the CPU.
fn draw_dtype(rng: &mut SampleRng, kind: BackendKind) -> (DType, bool) {
    if kind == BackendKind::Cpu {
        return (DType::F32, false);
    }
    let u: f64 = rng.random();
    if u < 0.4 {
        (DType::BF16, true)
    } else if u < 0.7 {
        (DType::F16, true)
    } else {
        (DType::F32, rng.random_bool(0.5))
    }
}

/// The pad_mm input of one GEMM of `layer` over `tokens` tokens; `prepadded_mat1` applies to
/// the computed activation (forward and grad input; grad weight's mat1 is transposed).
pub fn gemm_input(
    layer: &Linear,
    kind: GemmKind,
    tokens: usize,
    dtype: DType,
    allow_tf32: bool,
    prepadded_mat1: bool,
) -> PadMmInput {
    let (t, kf, nf) = (tokens, layer.in_features, layer.out_features);
    // The gradient `dy` of a backward graph is computed in it: under torch.compile Inductor
    // writes dy.t() padded straight from its producer, so padding it costs nothing more
    // (measured: docs/real-models.md). PyTorch still logs it as not prepadded (not contiguous).
    let fuse_mat1_pad = kind == GemmKind::GradWeight;
    let (m, k, n, transpose_left, transpose_right, prepadded_left) = match kind {
        GemmKind::Forward => (t, kf, nf, false, true, prepadded_mat1),
        GemmKind::GradInput => (t, nf, kf, false, false, prepadded_mat1),
        GemmKind::GradWeight => (nf, t, kf, true, false, false),
    };
    PadMmInput {
        m,
        k,
        n,
        dtype,
        allow_tf32,
        transpose_left,
        transpose_right,
        prepadded_left,
        prepadded_right: false,
        fuse_mat1_pad,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::sample_rng;
    use crate::runner::BenchmarkRunner;
    use crate::runners::pad_mm::{PadMmRunner, ShapeDistribution};
    use ah_core::{DeviceIdentity, Value};
    use std::sync::Arc;

    use crate::runners::test_target as target;

    fn get(c: &ah_core::Context, name: &str) -> Value {
        c.get(name).cloned().unwrap()
    }

    #[test]
    fn the_three_gemms_have_their_real_layouts() {
        let l = Linear {
            name: "up",
            in_features: 4096,
            out_features: 11008,
            head: false,
        };
        let r = PadMmRunner::default();
        let fwd = r.context(&gemm_input(
            &l,
            GemmKind::Forward,
            1001,
            DType::BF16,
            true,
            true,
        ));
        let want = [
            ("m", 1001),
            ("k", 4096),
            ("n", 11008),
            ("mat1_stride_0", 4096),
            ("mat1_stride_1", 1),
            ("mat2_stride_0", 1),
            ("mat2_stride_1", 4096),
        ];
        for (f, v) in want {
            assert_eq!(get(&fwd, f), v.into(), "forward {f}");
        }
        assert_eq!(get(&fwd, "prepadded_mat1"), true.into());
        assert_eq!(get(&fwd, "prepadded_mat2"), false.into());

        let gi = r.context(&gemm_input(
            &l,
            GemmKind::GradInput,
            1001,
            DType::F16,
            true,
            true,
        ));
        let want = [
            ("m", 1001),
            ("k", 11008),
            ("n", 4096),
            ("mat1_stride_0", 11008),
            ("mat1_stride_1", 1),
            ("mat2_stride_0", 4096),
            ("mat2_stride_1", 1),
        ];
        for (f, v) in want {
            assert_eq!(get(&gi, f), v.into(), "grad input {f}");
        }
        assert_eq!(get(&gi, "prepadded_mat1"), true.into());
        assert_eq!(get(&gi, "prepadded_mat2"), false.into());

        // Even when asked, grad weight's operands are never prepadded.
        let gw = r.context(&gemm_input(
            &l,
            GemmKind::GradWeight,
            1001,
            DType::F32,
            false,
            true,
        ));
        let want = [
            ("m", 11008),
            ("k", 1001),
            ("n", 4096),
            ("mat1_stride_0", 1),
            ("mat1_stride_1", 11008),
            ("mat2_stride_0", 4096),
            ("mat2_stride_1", 1),
            ("k_padded_length", 3),
        ];
        for (f, v) in want {
            assert_eq!(get(&gw, f), v.into(), "grad weight {f}");
        }
        assert_eq!(get(&gw, "prepadded_mat1"), false.into());
        assert_eq!(get(&gw, "prepadded_mat2"), false.into());
        assert_eq!(get(&gw, "using_tf32"), false.into());

        // Only the gradient dy.t() of grad weight is padded by its producer: `pad` is timed
        // without mat1's copy, while the logged feature stays PyTorch's.
        for (kind, fused) in [
            (GemmKind::Forward, false),
            (GemmKind::GradInput, false),
            (GemmKind::GradWeight, true),
        ] {
            let i = gemm_input(&l, kind, 1001, DType::F32, false, false);
            assert_eq!(i.fuse_mat1_pad, fused, "{kind:?}");
            assert_eq!(i.mat1_padding_excluded(), fused, "{kind:?}");
        }
    }

    #[test]
    fn every_real_draw_is_eligible_and_follows_the_distribution() {
        let cat = Catalogue::builtin().unwrap();
        let t = target(BackendKind::Cuda, DeviceIdentity::H100);
        let n = 3000;
        let (mut bf16, mut f32, mut tf32, mut t_left, mut t_right) = (0, 0, 0, 0, 0);
        for s in 0..n {
            let i = draw(&mut sample_rng(7, s), &cat, &t);
            assert!(eligible(&i, &t), "{i:?}");
            assert!(i.m.min(i.k).min(i.n) >= 768, "{i:?}");
            bf16 += usize::from(i.dtype == DType::BF16);
            f32 += usize::from(i.dtype == DType::F32);
            tf32 += usize::from(i.dtype == DType::F32 && i.allow_tf32);
            t_left += usize::from(i.transpose_left);
            t_right += usize::from(i.transpose_right);
            assert!(!(i.transpose_left && i.transpose_right), "{i:?}");
            assert!(!(i.prepadded_right || i.transpose_left && i.prepadded_left));
        }
        // fp32 aligns to 4, not 8: more of its draws are all-aligned and drawn again.
        let frac = |c: usize| c as f64 / n as f64;
        assert!(
            frac(bf16) > 0.35 && frac(f32) > 0.15,
            "bf16 {bf16} f32 {f32}"
        );
        assert!(
            (tf32 as f64 / f32 as f64 - 0.5).abs() < 0.08,
            "tf32 {tf32}/{f32}"
        );
        // Kinds are uniform before the eligibility filter; each keeps a real share after it.
        assert!(
            frac(t_left) > 0.15 && frac(t_right) > 0.15,
            "{t_left} {t_right}"
        );
    }

    #[test]
    fn draws_are_deterministic_and_scaled_on_the_cpu() {
        let cat = Catalogue::builtin().unwrap();
        let gpu = target(BackendKind::Cuda, DeviceIdentity::H100);
        let cpu = target(BackendKind::Cpu, DeviceIdentity::NONE);
        for s in 0..200 {
            let a = draw(&mut sample_rng(3, s), &cat, &gpu);
            assert_eq!(a, draw(&mut sample_rng(3, s), &cat, &gpu));
            let c = draw(&mut sample_rng(3, s), &cat, &cpu);
            assert!(
                eligible(&c, &cpu) && c.dtype == DType::F32 && !c.allow_tf32,
                "{c:?}"
            );
            assert!(
                c.m.max(c.k).max(c.n) <= 256_000usize.div_ceil(CPU_SCALE),
                "{c:?}"
            );
        }
        assert_ne!(
            draw(&mut sample_rng(3, 0), &cat, &gpu),
            draw(&mut sample_rng(3, 1), &cat, &gpu)
        );
    }

    #[test]
    fn dtypes_are_drawn_four_three_three() {
        let n = 4000;
        let mut counts = [0usize; 4];
        for s in 0..n {
            let (d, tf32) = draw_dtype(&mut sample_rng(2, s), BackendKind::Cuda);
            counts[match d {
                DType::BF16 => 0,
                DType::F16 => 1,
                DType::F32 => 2,
            }] += 1;
            counts[3] += usize::from(d == DType::F32 && tf32);
        }
        let frac = |c: usize| c as f64 / n as f64;
        assert!((frac(counts[0]) - 0.4).abs() < 0.03, "{counts:?}");
        assert!((frac(counts[1]) - 0.3).abs() < 0.03, "{counts:?}");
        assert!(
            (counts[3] as f64 / counts[2] as f64 - 0.5).abs() < 0.05,
            "{counts:?}"
        );
        assert_eq!(
            draw_dtype(&mut sample_rng(2, 0), BackendKind::Cpu),
            (DType::F32, false)
        );
    }

    #[test]
    fn an_impossible_catalogue_gives_an_input_the_precondition_refuses() {
        let tiny = crate::catalogue::BUILTIN_TEXT
            .split("[[model]]")
            .nth(1)
            .unwrap()
            .replace("hidden = 768", "hidden = 512");
        let cat = Catalogue::parse(&format!("[[model]]{tiny}"), "tiny.toml").unwrap();
        let t = target(BackendKind::Cuda, DeviceIdentity::H100);
        let r = PadMmRunner::default().with_shapes(ShapeDistribution::Real(Arc::new(cat)));
        let i = r.create_input(&mut sample_rng(0, 0), &t);
        assert_eq!(i, NOTHING);
        assert!(
            !r.precondition(DeviceIdentity::H100, &i) && !r.precondition(DeviceIdentity::NONE, &i)
        );
    }

    #[test]
    fn tokens_cover_both_shapes_of_batches() {
        let seq = [128, 512];
        let (mut odd, mut max) = (0, 0);
        for s in 0..2000 {
            let t = draw_tokens(&mut sample_rng(0, s), &seq);
            assert!((64..=64 * 512).contains(&t), "{t}");
            odd += usize::from(!t.is_multiple_of(8));
            max = max.max(t);
        }
        assert!(odd > 300 && max > 20_000, "odd {odd} max {max}");
    }

    /// Whether an input is a GEMM of some catalogued layer (PyTorch's random dims almost never are).
    fn looks_real(i: &PadMmInput, cat: &Catalogue) -> bool {
        let pair = |a: usize, b: usize| {
            cat.models.iter().flat_map(|m| &m.layers).any(|l| {
                (l.in_features, l.out_features) == (a, b)
                    || (l.in_features, l.out_features) == (b, a)
            })
        };
        pair(i.k, i.n) || pair(i.m, i.n)
    }

    #[test]
    fn mix_takes_the_real_branch_six_times_in_ten() {
        let cat = Arc::new(Catalogue::builtin().unwrap());
        let t = target(BackendKind::Cuda, DeviceIdentity::H100);
        let mix = PadMmRunner::default().with_shapes(ShapeDistribution::Mix(cat.clone()));
        let real = PadMmRunner::default().with_shapes(ShapeDistribution::Real(cat.clone()));
        let pytorch = PadMmRunner::default().with_shapes(ShapeDistribution::Pytorch);
        let n = 1000;
        let (mut mixed, mut pure_real, mut pure_pytorch) = (0, 0, 0);
        for s in 0..n {
            let m = mix.create_input(&mut sample_rng(1, s), &t);
            assert_eq!(m, mix.create_input(&mut sample_rng(1, s), &t));
            mixed += usize::from(looks_real(&m, &cat));
            pure_real += usize::from(looks_real(
                &real.create_input(&mut sample_rng(1, s), &t),
                &cat,
            ));
            pure_pytorch += usize::from(looks_real(
                &pytorch.create_input(&mut sample_rng(1, s), &t),
                &cat,
            ));
        }
        // Some of PyTorch's power-of-two draws hit a catalogued pair (4096 x 4096, ...).
        assert_eq!(pure_real, n as usize);
        assert!(pure_pytorch < 40, "{pure_pytorch}");
        let want = 0.6 + 0.4 * pure_pytorch as f64 / n as f64;
        assert!((mixed as f64 / n as f64 - want).abs() < 0.05, "{mixed}");
        // Both branches meet the H100 precondition by themselves: the draw loop never redraws
        // a sample (which would draw its branch again and skew the 0.6).
        for s in 0..200 {
            let i = mix.create_input(&mut sample_rng(4, s), &t);
            assert!(mix.precondition(DeviceIdentity::H100, &i), "{i:?}");
        }
        assert_eq!(
            PadMmRunner::default().create_input(&mut sample_rng(5, 9), &t),
            pytorch.create_input(&mut sample_rng(5, 9), &t)
        );
    }
}
