//! The GEMMs [`super::InductorMmRunner`] draws: what real models compile, in the layouts
//! Inductor sees, plus PyTorch-style random shapes.
//!
//! | share | source | GEMMs |
//! |---|---|---|
//! | 35 % | training | a linear layer of a catalogue model: forward (`x @ W.t()`, addmm with bias 30 %), input gradient (`dy @ W`), weight gradient (`dy.t() @ x`), `batch x seq` tokens |
//! | 20 % | decode | a forward linear over m = 1..256 tokens (powers of two 60 %) |
//! | 10 % | prefill | a forward linear over 1-4 sequences |
//! | 13 % | attention | bmm over `batch x heads`: scores `q @ k.t()` and `p @ v`; one query token 30 % |
//! | 22 % | generator | PyTorch-style random dims (log-uniform 16..16384; aligned to 64 half the time), any layout |
//!
//! dtype: bf16 45 %, fp16 25 %, fp32 30 % (TF32 on half of those).
//!
//! [`Mixture::Decode`] (`ah-collect --name inductor_mm --shapes decode`) draws only what an
//! inference decode step compiles, where the default mixture is thin and held-out models showed
//! the most slow picks: 70 % a forward linear over m = 1..64 tokens (an LM head half the time),
//! 30 % decode attention (one query token, `batch x heads` of 1-16 sequences, a context of
//! 256-8192), with the dtypes above.
//!
//! [`Mixture::Attention`] (`--shapes attention`) draws only the batched matmuls of attention
//! written as `bmm` (vision transformers, diffusion models, window attention), where held-out
//! models showed the other slow picks: scores `q @ k.t()` 30 %, `p @ v` 30 % (the backward's
//! `do @ v.t()` and `ds @ k` share their layouts) and the backward's `p.t() @ do` 40 %, over
//! `images x heads` of 1-64. The sequence length is a catalogue model's 40 %, a window's (7x7
//! to 16x16 patches) 25 %, or log-uniform in 64-8192 35 % (a patch grid plus a class token,
//! `s + 1`, half of those); cross-attention to a shorter context 15 %.
//!
//! [`Mixture::Tiny`] (`--shapes tiny`) draws attention over many small sets, where no logged
//! bmm had both `m` and `n` at or under 32 and a held-out model (Graphormer's 8192 products of
//! 21x24x21) ran 2.1x slower on cuBLAS than on a template: `sets x heads` of 1024-32768, a set of
//! 2-64 tokens (odd half the time: atoms, graph nodes, points), head dimension 8-64, in the three
//! attention layouts of [`Mixture::Attention`].
//!
//! [`Mixture::Tokens`] (`--shapes tokens`) draws the linear layers of a training step over many
//! tokens and narrow widths (graph edges, points, recommendation batches, large micro-batches),
//! where the other mixtures stop at 16384 tokens and no logged GEMM had `k` of 65536 or more:
//! a held-out weight gradient over 480000 graph edges (ProteinMPNN's, `k` = 480000, 128 x 384)
//! ran 6 % slower on cuBLAS than on a template. Tokens are log-uniform in 32768-1048576 (a
//! product of a batch and a set size, odd half the time); each width is a common narrow one
//! (16-1024) 70 %, else log-uniform in 8-1024; forward (addmm 30 %), input gradient and weight
//! gradient a third each.
//!
//! [`Mixture::Windows`] (`--shapes windows`) draws attention over many sets of 65-512 tokens,
//! between Tiny's sets and Attention's sequences, where Attention's head dimensions (a catalogue
//! model's, mostly 64-128) and batches (at most 4096) leave a gap: two blind held-out misses were
//! scores `q @ k.t()` with a 32-wide head over 144 and 192 tokens (Pangu-Weather's 3D windows,
//! 22320 x 144 x 32 x 144; the Temporal Fusion Transformer's 192 time steps, 4096 x 192 x 32 x
//! 192), where the kept 128-wide tiles lost to max-autotune's 64 x 32 x 64. `sets x heads` of
//! 256-32768, a set of 65-512 tokens (a 2D or 3D window 40 %, a time-series window 30 %, else
//! log-uniform, odd half the time), head dimension 8-80, in the three attention layouts.
//!
//! [`Mixture::Heads`] (`--shapes heads`) draws attention with narrow heads over long sequences,
//! which no other mixture covers: Windows stops at 512 tokens, and Attention's head dimension
//! is a catalogue model's (mostly 64-128). Two blind held-out misses of at least 100 us were
//! scores of this kind (768 x 1024 x 32 x 1024 and 64 x 2048 x 64 x 2048, 6-7 % behind a
//! template). `batch x heads` of 16-2048, a sequence of 577-4096 tokens (a common vision or
//! language length 50 %, else log-uniform, odd half of those), head dimension 16-64, in the
//! three attention layouts.
//!
//! [`Mixture::Pool`] (`--shapes pool`) draws batched products that sum over a long axis into a
//! small output, which no other mixture covers (only a handful of logged bmms had `k` of 2048 or
//! more and over eight times `m` and `n`, nearly all decode attention with `m` = 1): a blind
//! held-out miss of 2.6x (Transolver's slice tokens, 64 x 64 x 16641 x 16 fp32, 573 us on cuBLAS
//! against 217 us on a template) was one. A long axis of 2048-131072 tokens (odd half the
//! time), then one of three sources: cross-attention of 4-512 queries over it, `p @ v`
//! (Perceiver latents, Transolver slices, slot attention; `p` stored transposed half the time,
//! as an einsum over points leaves it) 40 %; linear attention's state `k.t() @ v` (Performer,
//! linear transformers, chunked state-space models; 16-256 features by head dimensions 16-128)
//! 30 %; per-block or per-expert weight gradients `x.t() @ dy` (block-diagonal linears, batched
//! experts; 2-64 blocks of narrow widths) 30 %.
//!
//! [`Mixture::Adapters`] (`--shapes adapters`) draws linears with one wide side (a hidden size
//! of 768-8192) and one narrow (2-256: MoE routers, LoRA ranks, small heads; log-uniform 20 %),
//! narrow out 60 %, over 2048-131072 tokens (odd half the time), in the three training layouts:
//! the logs held 8 such forward or input-gradient GEMMs, and three blind misses were such
//! layers decided cuBLAS only (Qwen1.5-MoE's and Phi-3.5-MoE's routers, 32768 x 2048 x 60 and
//! 65536 x 4096 x 16, and a QLoRA `lora_B`, 8192 x 64 x 4096; 1.08-1.19x).
//!
//! [`Mixture::Hires`] (`--shapes hires`) draws self-attention at high resolution: few
//! `batch x heads` (1-20) over 4096-16384 tokens, which no other mixture covers (Attention's and
//! Heads' batches reach 16 and more with shorter sequences, and their sequences stop at 8192 and
//! 4096): the largest blind misses of set 47 and of the pool were scores `q @ k.t()` of diffusion
//! UNets at 96 x 96 latents (10 x 9216 x 64 x 9216 fp16 and 4 x 9216 x 64 x 9216 fp32, 0.67 and
//! 1.16 ms on cuBLAS, 11-12 % behind a template), in a cuBLAS-only leaf whose 330 training GEMMs
//! held one with `k` at most 128. A sequence of a common latent or patch grid 50 % (64 x 64 to
//! 128 x 128, with text tokens or a class token, CogVideoX's 17776), else log-uniform in
//! 4096-16384 (odd half of those), head dimension 40-128, in the three attention layouts.
//!
//! [`Mixture::Serving`] (`--shapes serving`) draws batched decode: a forward linear of a
//! catalogue model (an LM head 30 %) over 65-256 sequences (128, 192 or 256 half the time),
//! bf16 60 % and fp16 40 %, as an inference server batches them. Decode draws `m` up to 64 and
//! the default mixture's decode share spreads `m` over 1-256: blind set 47's CodeLlama-34B
//! `gate_proj` at 128 sequences (128 x 8192 x 22016 fp16, cuBLAS only at 1.08x) reached a leaf
//! of 12 training GEMMs, 3 of them with `m` in 128-256.
//!
//! [`Mixture::Routers`] (`--shapes routers`) draws linears from a hidden size (768-16384) to
//! 1-64 outputs (MoE routers, classifier and regression heads) over 1-16384 tokens, fp32 45 %,
//! forward two thirds of the time, else an input or weight gradient: the pool's blind GEMMs of
//! this kind were over the bound on 17 of 48 (cuBLAS only on 24), and the leaf deciding routers
//! of n <= 16 at up to 4622 tokens held 6 training GEMMs; Adapters' tokens start at 2048.
//!
//! In all twelve mixtures, a draw whose operands and output take more than an eighth of the
//! device, or whose work would take cuBLAS more than a few milliseconds (a flop cap per dtype),
//! is drawn again: autotuning time grows with the GEMM's run time and the collection is paid
//! for in device time.

use rand::Rng;

use crate::catalogue::{Catalogue, Linear, Model};
use crate::dtype::DType;
use crate::runner::{SampleRng, Target};
use crate::runners::pad_mm::real_models::{draw_tokens, GemmKind};

use super::dims::{
    adapter_width, hires_tokens, long_tokens, narrow_width, odd_or_aligned, pick, router_tokens,
    router_width, tiny_tokens, wide_tokens, window_tokens, FEW_ROWS, HIDDEN_SIZES,
    NARROW_HEAD_DIMS, POOL_HEAD_DIMS, ROUTER_HIDDEN, STATE_FEATURES, TINY_HEAD_DIMS,
    WIDE_HEAD_DIMS, WINDOW_HEAD_DIMS,
};
use super::gemm::{Gemm, Op, Source};

/// The largest decode batch.
const MAX_DECODE: usize = 256;
/// The most tokens of a training or prefill GEMM.
const MAX_TOKENS: usize = 16384;

/// Which GEMMs are drawn (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mixture {
    /// Training, decode, prefill, attention and generator GEMMs.
    #[default]
    All,
    /// Inference decode steps only.
    Decode,
    /// Attention `bmm`s only (prefill, encoders, windows; forward and backward layouts).
    Attention,
    /// Attention `bmm`s over many sets of 2-64 tokens (molecules, graphs, point groups).
    Tiny,
    /// Narrow linear layers of a training step over 32768-1048576 tokens.
    Tokens,
    /// Attention `bmm`s over many sets of 65-512 tokens (windows, time-series windows).
    Windows,
    /// Attention `bmm`s with narrow heads (16-64) over sequences of 577-4096 tokens.
    Heads,
    /// Batched products summing over 2048-131072 tokens into a small output (cross-attention
    /// of few queries, linear attention's state, per-block weight gradients).
    Pool,
    /// Linear layers with one wide and one narrow side over 2048-131072 tokens (MoE routers,
    /// LoRA adapters, small task heads).
    Adapters,
    /// Attention `bmm`s at high resolution: few `batch x heads` (1-20) over 4096-17776 tokens.
    Hires,
    /// Batched decode: forward linears over 65-256 sequences, in bf16 and fp16.
    Serving,
    /// Linears to 1-64 outputs (MoE routers, classifier heads) over 1-16384 tokens.
    Routers,
}

impl Mixture {
    /// The name a log's provenance records (`InputDistribution::shapes`).
    pub fn name(self) -> &'static str {
        match self {
            Mixture::All => "inductor",
            Mixture::Decode => "inductor_decode",
            Mixture::Attention => "inductor_attention",
            Mixture::Tiny => "inductor_tiny",
            Mixture::Tokens => "inductor_tokens",
            Mixture::Windows => "inductor_windows",
            Mixture::Heads => "inductor_heads",
            Mixture::Pool => "inductor_pool",
            Mixture::Adapters => "inductor_adapters",
            Mixture::Hires => "inductor_hires",
            Mixture::Serving => "inductor_serving",
            Mixture::Routers => "inductor_routers",
        }
    }
}

/// The largest decode m of [`Mixture::Decode`].
const MAX_DECODE_FOCUS: usize = 64;

/// Draws one GEMM of `mixture` (see the module documentation); the catalogue must not be
/// empty.
pub fn draw_from(
    mixture: Mixture,
    rng: &mut SampleRng,
    catalogue: &Catalogue,
    target: &Target,
) -> Gemm {
    match mixture {
        Mixture::All => draw(rng, catalogue, target),
        Mixture::Decode => draw_decode(rng, catalogue, target),
        Mixture::Attention => draw_attention(rng, catalogue, target),
        Mixture::Tiny => draw_sets(rng, target, &TINY),
        Mixture::Tokens => draw_tokens_wide(rng, target),
        Mixture::Windows => draw_sets(rng, target, &WINDOWS_SETS),
        Mixture::Heads => draw_sets(rng, target, &LONG_HEADS),
        Mixture::Pool => draw_pool(rng, target),
        Mixture::Adapters => draw_adapter(rng, target),
        Mixture::Hires => draw_sets(rng, target, &HIRES),
        Mixture::Serving => draw_serving(rng, catalogue, target),
        Mixture::Routers => draw_router(rng, target),
    }
}

/// One linear of [`Mixture::Routers`] (see the module documentation).
fn draw_router(rng: &mut SampleRng, target: &Target) -> Gemm {
    loop {
        // More fp32 than elsewhere: DeepSeek's and Qwen's MoE gates compute their logits so.
        let (dtype, tf32) = match rng.random_range(0..20) {
            0..8 => (DType::BF16, false),
            8..11 => (DType::F16, false),
            _ => (DType::F32, rng.random_bool(0.5)),
        };
        let l = Linear {
            name: "router",
            in_features: pick(rng, &ROUTER_HIDDEN),
            out_features: router_width(rng),
            head: false,
        };
        let tokens = router_tokens(rng);
        let g = if rng.random_bool(0.5) {
            let source = Source::Training(GemmKind::Forward);
            forward_linear(rng, tokens, l, source, dtype, tf32)
        } else {
            linear_gemm(rng, tokens, l, dtype, tf32)
        };
        if g.fits(target) {
            return g;
        }
    }
}

/// One linear of [`Mixture::Adapters`] (see the module documentation).
fn draw_adapter(rng: &mut SampleRng, target: &Target) -> Gemm {
    loop {
        let (dtype, tf32) = draw_dtype(rng);
        let tokens = odd_or_aligned(rng, 11.0..17.0);
        let wide = pick(rng, &HIDDEN_SIZES);
        let narrow = adapter_width(rng);
        let (in_features, out_features) = if rng.random_bool(0.6) {
            (wide, narrow)
        } else {
            (narrow, wide)
        };
        let l = Linear {
            name: "adapter",
            in_features,
            out_features,
            head: false,
        };
        let g = linear_gemm(rng, tokens, l, dtype, tf32);
        if g.fits(target) {
            return g;
        }
    }
}

fn draw_tokens_wide(rng: &mut SampleRng, target: &Target) -> Gemm {
    loop {
        let (dtype, tf32) = draw_dtype(rng);
        let l = Linear {
            name: "narrow",
            in_features: narrow_width(rng),
            out_features: narrow_width(rng),
            head: false,
        };
        let tokens = wide_tokens(rng);
        let g = linear_gemm(rng, tokens, l, dtype, tf32);
        if g.fits(target) {
            return g;
        }
    }
}

const TINY: SetAttention = SetAttention {
    tokens: tiny_tokens,
    heads: &TINY_HEAD_DIMS,
    batch: |rng| 1 << rng.random_range(10..=15),
};

/// How [`Mixture::Tiny`], [`Mixture::Windows`] and [`Mixture::Heads`] draw self-attention
/// over many sets (or sequences).
struct SetAttention {
    /// Tokens per set.
    tokens: fn(&mut SampleRng) -> usize,
    /// Head dimensions, drawn uniformly.
    heads: &'static [usize],
    /// `sets x heads`.
    batch: fn(&mut SampleRng) -> usize,
}

/// One attention `bmm` over many sets, in one of [`attention_layout`]'s layouts. The draws come
/// in the order the tiny and windows logs were collected with (dtype, set, head, batch,
/// layout): a change of order would change what a resumed log draws.
fn draw_sets(rng: &mut SampleRng, target: &Target, how: &SetAttention) -> Gemm {
    loop {
        let (dtype, tf32) = draw_dtype(rng);
        let s = (how.tokens)(rng);
        let d = how.heads[rng.random_range(0..how.heads.len())];
        let g = Gemm {
            batch: (how.batch)(rng),
            ..attention_layout(rng, s, s, d, dtype, tf32)
        };
        if g.fits(target) {
            return g;
        }
    }
}

const WINDOWS_SETS: SetAttention = SetAttention {
    tokens: window_tokens,
    heads: &WINDOW_HEAD_DIMS,
    batch: |rng| 2f64.powf(rng.random_range(8.0..15.0)).round() as usize,
};

const HIRES: SetAttention = SetAttention {
    tokens: hires_tokens,
    heads: &WIDE_HEAD_DIMS,
    batch: |rng| 2f64.powf(rng.random_range(0.0..4.33)).round() as usize,
};

const LONG_HEADS: SetAttention = SetAttention {
    tokens: long_tokens,
    heads: &NARROW_HEAD_DIMS,
    batch: |rng| 2f64.powf(rng.random_range(4.0..11.0)).round() as usize,
};

/// One GEMM of [`Mixture::Pool`] (see the module documentation): `k` is the long axis. The
/// draws come in the order the pool log was collected with (dtype, axis, source, then the
/// source's layout, batch, `m` and `n`).
fn draw_pool(rng: &mut SampleRng, target: &Target) -> Gemm {
    loop {
        let (dtype, tf32) = draw_dtype(rng);
        let t = odd_or_aligned(rng, 11.0..17.0);
        let attention = Source::Attention;
        let (trans_a, batch, m, n, source) = match rng.random_range(0..10) {
            // out = p @ v: few queries attend over t tokens.
            0..4 => (
                rng.random_bool(0.5),
                1 << rng.random_range(0..=10),
                pick(rng, &FEW_ROWS),
                pick(rng, &POOL_HEAD_DIMS),
                attention,
            ),
            // state = phi(k).t() @ v over t tokens, per sequence x head.
            4..7 => (
                true,
                1 << rng.random_range(2..=10),
                pick(rng, &STATE_FEATURES),
                pick(rng, &POOL_HEAD_DIMS),
                attention,
            ),
            // dW[b] = x[b].t() @ dy[b] over the t tokens each block or expert saw.
            _ => (
                true,
                rng.random_range(2..=64),
                narrow_width(rng),
                narrow_width(rng),
                Source::Training(GemmKind::GradWeight),
            ),
        };
        let g = Gemm {
            trans_a,
            batch,
            ..plain(Op::Bmm, m, t, n, dtype, tf32, source)
        };
        if g.fits(target) {
            return g;
        }
    }
}

fn draw_attention(rng: &mut SampleRng, catalogue: &Catalogue, target: &Target) -> Gemm {
    loop {
        let (dtype, tf32) = draw_dtype(rng);
        let m = model(rng, catalogue);
        let g = attention_bmm(rng, m, dtype, tf32);
        if g.fits(target) {
            return g;
        }
    }
}

/// Side lengths of attention windows, in patches (Swin 7, SAM 14, ...).
const WINDOWS: [usize; 5] = [7, 8, 12, 14, 16];

/// Cross-attention context lengths (CLIP text 77, Whisper's encoder 1500, ...).
const CROSS: [usize; 4] = [77, 256, 512, 1500];

/// One attention `bmm` of [`Mixture::Attention`]: `q` of `s` queries against `t` keys, head
/// dimension `d`, over `batch` = images x heads.
fn attention_bmm(rng: &mut SampleRng, model: &Model, dtype: DType, tf32: bool) -> Gemm {
    let spec = &model.spec;
    let s = attention_seq(rng, &spec.seq);
    let t = if rng.random_bool(0.15) {
        CROSS[rng.random_range(0..CROSS.len())]
    } else {
        s
    };
    let d = spec.head_dim.max(1);
    let batch = ((1 << rng.random_range(0..=6)) * spec.heads.max(1)).min(4096);
    Gemm {
        batch,
        ..attention_layout(rng, s, t, d, dtype, tf32)
    }
}

/// One of attention's three `bmm` layouts for `s` queries, `t` keys and head dimension `d`:
/// scores 30 %, `p @ v` 30 %, the backward's `p.t() @ do` 40 % (batch 1; the caller sets it).
fn attention_layout(
    rng: &mut SampleRng,
    s: usize,
    t: usize,
    d: usize,
    dtype: DType,
    tf32: bool,
) -> Gemm {
    let a = Source::Attention;
    match rng.random_range(0..10) {
        // scores = q @ k.t(); also dp = do @ v.t()
        0..3 => Gemm {
            trans_b: true,
            ..plain(Op::Bmm, s, d, t, dtype, tf32, a)
        },
        // out = p @ v; also dq = ds @ k
        3..6 => plain(Op::Bmm, s, t, d, dtype, tf32, a),
        // dv = p.t() @ do; also dk = ds.t() @ q
        _ => Gemm {
            trans_a: true,
            ..plain(Op::Bmm, t, s, d, dtype, tf32, a)
        },
    }
}

/// A model's sequence length 40 %, a window's 25 %, else log-uniform in 64-8192 (plus a class
/// token half the time).
fn attention_seq(rng: &mut SampleRng, seqs: &[usize]) -> usize {
    match rng.random_range(0..20) {
        0..8 if !seqs.is_empty() => seqs[rng.random_range(0..seqs.len())].min(8192),
        8..13 => WINDOWS[rng.random_range(0..WINDOWS.len())].pow(2),
        _ => {
            let s = 2f64.powf(rng.random_range(6.0..13.0)) as usize;
            if rng.random_bool(0.5) {
                s + 1
            } else {
                s.div_ceil(64) * 64
            }
        }
    }
}

fn draw_decode(rng: &mut SampleRng, catalogue: &Catalogue, target: &Target) -> Gemm {
    loop {
        let (dtype, tf32) = draw_dtype(rng);
        let m = model(rng, catalogue);
        let g = if rng.random_bool(0.7) {
            let tokens = if rng.random_bool(0.5) {
                1 << rng.random_range(0..=MAX_DECODE_FOCUS.trailing_zeros())
            } else {
                rng.random_range(1..=MAX_DECODE_FOCUS)
            };
            let l = layer(rng, m, 0.5);
            forward_linear(rng, tokens, l, Source::Decode, dtype, tf32)
        } else {
            decode_attention(rng, m, dtype, tf32)
        };
        if g.fits(target) {
            return g;
        }
    }
}

/// One forward linear of [`Mixture::Serving`] (see the module documentation).
fn draw_serving(rng: &mut SampleRng, catalogue: &Catalogue, target: &Target) -> Gemm {
    loop {
        let dtype = if rng.random_bool(0.6) {
            DType::BF16
        } else {
            DType::F16
        };
        let m = model(rng, catalogue);
        let sequences = if rng.random_bool(0.5) {
            pick(rng, &[128, 192, 256])
        } else {
            rng.random_range(65..=256)
        };
        let l = layer(rng, m, 0.3);
        let g = forward_linear(rng, sequences, l, Source::Decode, dtype, false);
        if g.fits(target) {
            return g;
        }
    }
}

/// One query token against a context of 256-8192: `q @ k.t()` or `p @ v`.
fn decode_attention(rng: &mut SampleRng, model: &Model, dtype: DType, tf32: bool) -> Gemm {
    let s = &model.spec;
    let ctx = 1 << rng.random_range(8..=13);
    let ctx = if rng.random_bool(0.3) {
        ctx - rng.random_range(1..ctx / 2)
    } else {
        ctx
    };
    let batch = ([1, 2, 4, 8, 16][rng.random_range(0..5)] * s.heads.max(1)).min(2048);
    let d = s.head_dim.max(1);
    let g = if rng.random_bool(0.5) {
        Gemm {
            trans_b: true,
            ..plain(Op::Bmm, 1, d, ctx, dtype, tf32, Source::Attention)
        }
    } else {
        plain(Op::Bmm, 1, ctx, d, dtype, tf32, Source::Attention)
    };
    Gemm { batch, ..g }
}

/// Draws one GEMM of the default mixture (see the module documentation); the catalogue must
/// not be empty.
pub fn draw(rng: &mut SampleRng, catalogue: &Catalogue, target: &Target) -> Gemm {
    loop {
        let (dtype, tf32) = draw_dtype(rng);
        let u = rng.random_range(0..100);
        let m = model(rng, catalogue);
        let g = match u {
            0..35 => training(rng, m, dtype, tf32),
            35..55 => {
                let tokens = decode_tokens(rng);
                forward(rng, m, tokens, Source::Decode, dtype, tf32)
            }
            55..65 => {
                let tokens =
                    m.spec.seq[rng.random_range(0..m.spec.seq.len())] * rng.random_range(1..=4);
                forward(rng, m, tokens, Source::Prefill, dtype, tf32)
            }
            65..78 => attention(rng, m, dtype, tf32),
            _ => generator(rng, dtype, tf32),
        };
        if g.fits(target) {
            return g;
        }
    }
}

fn model<'a>(rng: &mut SampleRng, catalogue: &'a Catalogue) -> &'a Model {
    &catalogue.models[rng.random_range(0..catalogue.models.len())]
}

/// bf16 0.45, fp16 0.25, fp32 0.3 (TF32 w.p. 0.5).
fn draw_dtype(rng: &mut SampleRng) -> (DType, bool) {
    match rng.random_range(0..20) {
        0..9 => (DType::BF16, false),
        9..14 => (DType::F16, false),
        _ => (DType::F32, rng.random_bool(0.5)),
    }
}

fn layer(rng: &mut SampleRng, model: &Model, head_p: f64) -> Linear {
    let heads: Vec<&Linear> = model.heads().collect();
    if !heads.is_empty() && rng.random_bool(head_p) {
        return *heads[rng.random_range(0..heads.len())];
    }
    let body: Vec<&Linear> = model.body().collect();
    *body[rng.random_range(0..body.len())]
}

fn plain(op: Op, m: usize, k: usize, n: usize, dtype: DType, tf32: bool, source: Source) -> Gemm {
    Gemm {
        op,
        batch: 1,
        m,
        k,
        n,
        dtype,
        tf32,
        trans_a: false,
        trans_b: false,
        source,
    }
}

fn training(rng: &mut SampleRng, model: &Model, dtype: DType, tf32: bool) -> Gemm {
    let l = layer(rng, model, 0.2);
    let tokens = draw_tokens(rng, &model.spec.seq).min(MAX_TOKENS);
    linear_gemm(rng, tokens, l, dtype, tf32)
}

/// One of a training step's three GEMMs of linear layer `l` over `tokens`, a third each:
/// forward, input gradient, weight gradient (`k` = tokens).
fn linear_gemm(rng: &mut SampleRng, tokens: usize, l: Linear, dtype: DType, tf32: bool) -> Gemm {
    let kind =
        [GemmKind::Forward, GemmKind::GradInput, GemmKind::GradWeight][rng.random_range(0..3)];
    let (fin, fout) = (l.in_features, l.out_features);
    let source = Source::Training(kind);
    match kind {
        GemmKind::Forward => forward_linear(rng, tokens, l, source, dtype, tf32),
        GemmKind::GradInput => plain(Op::Mm, tokens, fout, fin, dtype, tf32, source),
        GemmKind::GradWeight => Gemm {
            trans_a: true,
            ..plain(Op::Mm, fout, tokens, fin, dtype, tf32, source)
        },
    }
}

fn forward(
    rng: &mut SampleRng,
    model: &Model,
    tokens: usize,
    source: Source,
    dtype: DType,
    tf32: bool,
) -> Gemm {
    let l = layer(rng, model, 0.2);
    forward_linear(rng, tokens.min(MAX_TOKENS), l, source, dtype, tf32)
}

/// `x @ W.t()` (W stored `(out, in)`), with bias w.p. 0.3.
fn forward_linear(
    rng: &mut SampleRng,
    tokens: usize,
    l: Linear,
    source: Source,
    dtype: DType,
    tf32: bool,
) -> Gemm {
    let op = if rng.random_bool(0.3) {
        Op::Addmm
    } else {
        Op::Mm
    };
    Gemm {
        trans_b: true,
        ..plain(
            op,
            tokens,
            l.in_features,
            l.out_features,
            dtype,
            tf32,
            source,
        )
    }
}

fn decode_tokens(rng: &mut SampleRng) -> usize {
    if rng.random_bool(0.6) {
        1 << rng.random_range(0..=MAX_DECODE.trailing_zeros())
    } else {
        rng.random_range(1..=MAX_DECODE)
    }
}

fn attention(rng: &mut SampleRng, model: &Model, dtype: DType, tf32: bool) -> Gemm {
    let s = &model.spec;
    let seq = s.seq[rng.random_range(0..s.seq.len())].min(4096);
    let queries = if rng.random_bool(0.3) { 1 } else { seq };
    let batch = [1, 2, 4, 8][rng.random_range(0..4)] * s.heads.max(1);
    let d = s.head_dim.max(1);
    let g = if rng.random_bool(0.5) {
        // scores = q @ k.t()
        Gemm {
            trans_b: true,
            ..plain(Op::Bmm, queries, d, seq, dtype, tf32, Source::Attention)
        }
    } else {
        // out = p @ v
        plain(Op::Bmm, queries, seq, d, dtype, tf32, Source::Attention)
    };
    Gemm {
        batch: batch.min(1024),
        ..g
    }
}

fn generator(rng: &mut SampleRng, dtype: DType, tf32: bool) -> Gemm {
    let mut dim = || {
        let x = 2f64.powf(rng.random_range(4.0..14.0)) as usize;
        if rng.random_bool(0.5) {
            x.div_ceil(64) * 64
        } else {
            x | 1
        }
    };
    let (m, k, n) = (dim(), dim(), dim());
    let t = rng.random_range(0..4);
    let op = if rng.random_bool(0.2) {
        Op::Addmm
    } else {
        Op::Mm
    };
    Gemm {
        trans_a: t & 1 == 1,
        trans_b: t & 2 == 2,
        ..plain(op, m, k, n, dtype, tf32, Source::Generator)
    }
}
