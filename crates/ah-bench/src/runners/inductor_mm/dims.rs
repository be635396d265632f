//! The dimensions the focused mixtures of [`super::shapes`] draw: layer widths, token counts,
//! set sizes and head dimensions, each with the models it comes from. Pure draws of numbers, so
//! that the mixtures' GEMMs (`shapes.rs`) read as which layer over which tokens.

use rand::Rng;

use crate::runner::SampleRng;

/// `Mixture::Adapters`' wide sides: hidden sizes of BERT-base to 70B-class models.
pub(super) const HIDDEN_SIZES: [usize; 12] = [
    768, 1024, 1536, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
];

/// `Mixture::Adapters`' common narrow sides: router experts (8, 16, 60, 64, 128, 160, 256),
/// LoRA ranks (4-128) and task heads (2, 3, 10).
const ADAPTER_WIDTHS: [usize; 12] = [2, 3, 4, 8, 10, 16, 32, 60, 64, 128, 160, 256];

/// Widths of narrow layers (graph and point MLPs, recommendation towers, small transformers).
const NARROW_WIDTHS: [usize; 12] = [16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024];

/// A layer width of `Mixture::Tokens`: a common narrow one 70 %, else log-uniform in 8-1024.
pub(super) fn narrow_width(rng: &mut SampleRng) -> usize {
    if rng.random_bool(0.7) {
        NARROW_WIDTHS[rng.random_range(0..NARROW_WIDTHS.len())]
    } else {
        2f64.powf(rng.random_range(3.0..10.0)) as usize
    }
}

/// Tokens of `Mixture::Tokens`: log-uniform in 2^15-2^20, odd half the time (10000 residues
/// x 48 neighbours is even; 1001-token sequences x 97 are not).
pub(super) fn wide_tokens(rng: &mut SampleRng) -> usize {
    let t = 2f64.powf(rng.random_range(15.0..20.0)) as usize;
    if rng.random_bool(0.5) {
        t | 1
    } else {
        t.div_ceil(64) * 64
    }
}

/// Head dimensions of `Mixture::Tiny` (Graphormer 24 and 32, point and molecule models 8-64).
pub(super) const TINY_HEAD_DIMS: [usize; 7] = [8, 16, 24, 32, 40, 48, 64];

/// A set size of `Mixture::Tiny`: 2-64 tokens, odd half the time.
pub(super) fn tiny_tokens(rng: &mut SampleRng) -> usize {
    if rng.random_bool(0.5) {
        2 * rng.random_range(1..=32)
    } else {
        2 * rng.random_range(1..32) + 1
    }
}

/// Tokens per window of `Mixture::Windows`: 2D windows (Swin V2 and SwinIR 8x8 to 16x16,
/// Uformer, Restormer-style patches), 3D windows (Pangu-Weather 2x12x6 = 144, Video Swin 8x7x7 =
/// 392, 4x8x8 = 256), and 65, an 8x8 grid plus a class token.
const MID_WINDOWS: [usize; 12] = [65, 81, 100, 121, 144, 169, 196, 225, 256, 289, 392, 400];

/// Time-series windows (Informer and Autoformer 96 + 48, TFT's 192 = 168 + 24, PatchTST 336 and
/// 512, one week of hours 168).
const SERIES: [usize; 8] = [96, 144, 168, 192, 288, 336, 384, 512];

/// Head dimensions of `Mixture::Windows` (Pangu 32, TFT 32, Swin 32, small ViTs 16-80).
pub(super) const WINDOW_HEAD_DIMS: [usize; 8] = [8, 16, 24, 32, 40, 48, 64, 80];

/// A set size of `Mixture::Windows`: a window 40 %, a series 30 %, else log-uniform in
/// 65-512, odd half of those.
pub(super) fn window_tokens(rng: &mut SampleRng) -> usize {
    match rng.random_range(0..10) {
        0..4 => MID_WINDOWS[rng.random_range(0..MID_WINDOWS.len())],
        4..7 => SERIES[rng.random_range(0..SERIES.len())],
        _ => odd_or_aligned(rng, 6.03..9.0),
    }
}

/// A length log-uniform in 2^`exps` tokens, odd half the time, else a multiple of 8.
pub(super) fn odd_or_aligned(rng: &mut SampleRng, exps: std::ops::Range<f64>) -> usize {
    let s = 2f64.powf(rng.random_range(exps)) as usize;
    if rng.random_bool(0.5) {
        s | 1
    } else {
        s.div_ceil(8) * 8
    }
}

/// Common long sequences of `Mixture::Heads`: ViT-B/16 at 384 px plus a class token (577),
/// at 448 px (785), DINOv2 at 518 px with a class token (1370), 56 x 56 patch grids (3136),
/// language contexts (1024-4096).
const LONG_SEQS: [usize; 10] = [577, 785, 1024, 1025, 1370, 1536, 2048, 2304, 3136, 4096];

/// Head dimensions of `Mixture::Heads` (narrow heads of small and efficient models, and 64).
pub(super) const NARROW_HEAD_DIMS: [usize; 6] = [16, 24, 32, 40, 48, 64];

/// A sequence of `Mixture::Heads`: a common one 50 %, else log-uniform in 577-4096, odd
/// half of those.
pub(super) fn long_tokens(rng: &mut SampleRng) -> usize {
    if rng.random_bool(0.5) {
        return LONG_SEQS[rng.random_range(0..LONG_SEQS.len())];
    }
    odd_or_aligned(rng, 9.175..12.0)
}

/// Common sequences of `Mixture::Hires`: latent or patch grids of 64 x 64 (with SD3's 333 and
/// Flux's 512 text tokens), 80 x 80, 96 x 96 (Stable Diffusion 2 at 768 px), 112 x 112, 128 x
/// 128 (SDXL-sized latents at 1024 px), ViT-style grids with a class token (4097, 9217), and
/// CogVideoX's 17550 video plus 226 text tokens.
const HIRES_SEQS: [usize; 10] = [
    4096, 4097, 4429, 4608, 6400, 9216, 9217, 12544, 16384, 17776,
];

/// Head dimensions of `Mixture::Hires` (diffusion UNets' 40-160 channels per head, DiTs' 64-128).
pub(super) const WIDE_HEAD_DIMS: [usize; 6] = [40, 64, 72, 80, 96, 128];

/// A sequence of `Mixture::Hires`: a common one 50 %, else log-uniform in 4096-16384, odd half
/// of those.
pub(super) fn hires_tokens(rng: &mut SampleRng) -> usize {
    if rng.random_bool(0.5) {
        return HIRES_SEQS[rng.random_range(0..HIRES_SEQS.len())];
    }
    odd_or_aligned(rng, 12.0..14.0)
}

/// Queries of `Mixture::Pool`'s cross-attention (slots 4-16, Transolver's 32-64 slices,
/// Perceiver's 256-512 latents).
pub(super) const FEW_ROWS: [usize; 11] = [4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512];

/// Head dimensions of `Mixture::Pool` (Transolver 16, Perceiver 64, linear attention 32-128).
pub(super) const POOL_HEAD_DIMS: [usize; 6] = [16, 24, 32, 64, 96, 128];

/// Features of linear attention's state (Performer's random features, elu + 1 maps, state-space
/// chunk states).
pub(super) const STATE_FEATURES: [usize; 5] = [16, 32, 64, 128, 256];

/// One of `from`, uniformly.
pub(super) fn pick(rng: &mut SampleRng, from: &[usize]) -> usize {
    from[rng.random_range(0..from.len())]
}

/// A narrow side of `Mixture::Adapters`: a common one 80 %, else log-uniform in 2-128.
pub(super) fn adapter_width(rng: &mut SampleRng) -> usize {
    if rng.random_bool(0.8) {
        pick(rng, &ADAPTER_WIDTHS)
    } else {
        2f64.powf(rng.random_range(1.0..7.0)) as usize
    }
}

/// `Mixture::Routers`' wide sides: the hidden sizes of `Mixture::Adapters` and of the largest
/// dense models (12288, 16384), where routers and heads read the widest activations.
pub(super) const ROUTER_HIDDEN: [usize; 14] = [
    768, 1024, 1536, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192, 12288, 16384,
];

/// `Mixture::Routers`' common outputs: regression and reward heads (1), classifier heads (2,
/// 10), router experts (Mixtral's and Grok-1's 8, DBRX's, Phi-3.5-MoE's and Jamba's 16, Granite
/// MoE's 32 and 40, Qwen1.5-MoE's 60, DeepSeekMoE's and OLMoE's 64), and 4.
const ROUTER_WIDTHS: [usize; 10] = [1, 2, 4, 8, 10, 16, 32, 40, 60, 64];

/// An output width of `Mixture::Routers`: a common one 70 %, else uniform in 1-64.
pub(super) fn router_width(rng: &mut SampleRng) -> usize {
    if rng.random_bool(0.7) {
        pick(rng, &ROUTER_WIDTHS)
    } else {
        rng.random_range(1..=64)
    }
}

/// Tokens of `Mixture::Routers`: a served decode batch of 1-256 15 %, a common training
/// micro-batch (1024-16384) 35 %, else log-uniform in 256-16384, odd half of those.
pub(super) fn router_tokens(rng: &mut SampleRng) -> usize {
    match rng.random_range(0..20) {
        0..3 => rng.random_range(1..=256),
        3..10 => pick(rng, &[1024, 2048, 4096, 8192, 16384]),
        _ => odd_or_aligned(rng, 8.0..14.0),
    }
}
