//! What keeping choices costs at compile time: as logged, or as users of the handler pay it.
//!
//! The logs were collected with max-autotune as PyTorch 2.11 with Triton 3.6 leaves it: once
//! Inductor's compile workers are up, every template they precompiled is compiled a second
//! time, serially, in the benchmark phase (docs/inductor.md). A choice's logged price is
//! therefore mostly that second compile, and prices add up. The handler's `install()` removes
//! the second compile (`python/ah_inductor/ptxas.py`), and what a kept list then costs is not a
//! sum: templates precompile in parallel, so the slowest one sets the wall, each choice's
//! benchmark is a few hundredths of a second, and a template Inductor picks is compiled once
//! more into the output code.
//!
//! [`Pricing::OnePtxas`] models that from each choice's logged parts, with constants measured on
//! the H100 by collecting the main log's first 88 GEMMs again with `AH_INDUCTOR_PTXAS=align`
//! (`data/inductor_mm_aligned_h100.txt`, docs/results.md): there a full list's autotuning time
//! is the model's within 10 % on half of the GEMMs (measured over modelled: median 1.03,
//! 1.17 from the prices of the same GEMMs logged as PyTorch leaves it before the precompile
//! scale below, 1.06 after). Checked on 101 attention bmms it was not fitted on
//! (`data/inductor_mm_attention_aligned_h100.txt`): 318.3 s modelled from their logged parts,
//! 320.9 s measured.

use serde::{Deserialize, Serialize};

use super::data::{Choice, Sample, Samples};

/// How a kept list's compile-time price is reckoned (`ah-prune --prices`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pricing {
    /// As logged: each choice's generation, benchmark and share of the precompile phase's wall
    /// time, scaled to add up to the GEMM's measured autotuning time (what max-autotune costs as
    /// PyTorch leaves it).
    #[default]
    Logged,
    /// As users of the handler pay it (one ptxas): each kept choice's generation and a modelled
    /// benchmark ([`bench_s`]), plus the slowest kept template's precompile, plus the picked
    /// template's compile into the output code.
    OnePtxas,
}

impl Pricing {
    /// Its name on the command line and in a model file.
    pub fn name(self) -> &'static str {
        match self {
            Pricing::Logged => "logged",
            Pricing::OnePtxas => "one-ptxas",
        }
    }
}

/// Seconds Inductor's benchmark of one choice takes with one ptxas, besides its calls: the
/// intercept of a least-squares fit on 1590 template choices of the 88 GEMMs (0.019 s for a
/// cuBLAS choice, whose calls are as short).
pub const BENCH_FIXED_S: f64 = 0.024;
/// Calls of a choice that its benchmark's duration counts (the fit's slope: 0.0088 s per ms of
/// benchmark time).
pub const BENCH_CALLS: f64 = 8.8;
/// A template's precompile seconds with one ptxas over those logged as PyTorch leaves it: the
/// median ratio over the same choices of the 87 GEMMs both logs hold (their inverse, 0.86).
/// A GEMM measured with `AH_INDUCTOR_PTXAS=align` ([`Sample::one_ptxas`]) needs none.
pub const LOGGED_PRECOMPILE_SCALE: f64 = 1.16;

/// [`bench_s`] summed over `n` choices whose finite benchmark times add up to `finite_ms` (a
/// failed one costs [`BENCH_FIXED_S`] alone): what a family's members besides the fastest add
/// to its price ([`Choice::others`]).
pub fn bench_s_of(n: u32, finite_ms: f64) -> f64 {
    f64::from(n) * BENCH_FIXED_S + BENCH_CALLS * finite_ms / 1e3
}

/// Seconds Inductor's benchmark of a choice whose benchmark time is `bench_ms` takes with one
/// ptxas ([`BENCH_FIXED_S`] alone for a choice that failed, logged as `inf`).
pub fn bench_s(bench_ms: f64) -> f64 {
    let calls_s = if bench_ms.is_finite() {
        BENCH_CALLS * bench_ms.max(0.0) / 1e3
    } else {
        0.0
    };
    BENCH_FIXED_S + calls_s
}

/// A GEMM's autotuning seconds for the choices that `kept` says are kept, under the prices its
/// choices hold ([`Choice::price_s`] each, then the slowest [`Choice::compile_s`], then that of
/// the pick when a template): what [`super::policy`] charges a kept list, and with every choice
/// kept, the full list's price under [`Pricing::OnePtxas`].
pub fn list_s<'a>(kept: impl Iterator<Item = &'a Choice>, picked: Option<&Choice>) -> f64 {
    let (each_s, wall_s) = kept.fold((0.0, 0.0f64), |(sum, wall), c| {
        (sum + c.price_s, wall.max(c.compile_s))
    });
    let final_s = picked
        .filter(|p| !p.is_extern())
        .map_or(0.0, |p| p.compile_s);
    each_s + wall_s + final_s
}

impl Samples {
    /// Prices every GEMM (training and later) as `pricing` says; [`Pricing::Logged`] is how
    /// [`super::data::load`] reads them, so it changes nothing.
    pub fn reprice(&mut self, pricing: Pricing) {
        if pricing == Pricing::OnePtxas {
            for s in self.samples.iter_mut().chain(self.later.iter_mut()) {
                s.price_one_ptxas();
            }
        }
    }
}

impl Sample {
    /// [`Pricing::OnePtxas`]: each choice's price from its logged parts, and the full list's
    /// autotuning time from them.
    fn price_one_ptxas(&mut self) {
        let scale = if self.one_ptxas {
            1.0
        } else {
            LOGGED_PRECOMPILE_SCALE
        };
        for c in self.choices_mut() {
            let (others, others_ms) = c.others();
            c.price_s = c.gen_s() + bench_s(c.bench_ms) + bench_s_of(others, others_ms);
            c.compile_s = c.precompile_s() * scale;
        }
        self.autotune_s = list_s(self.choices().iter(), self.winner());
    }
}
