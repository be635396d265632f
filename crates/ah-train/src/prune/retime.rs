//! The re-timing a generated handler's `install()` turns on (`python/ah_inductor/retime.py`), as
//! the trainer scores it (`ah-prune --retime-below-ms`).
//!
//! Where the fastest of a search's choices benchmarks under the threshold, `install()` times the
//! cuBLAS and Triton choices again by CUDA graph before Inductor picks: on small GEMMs Inductor's
//! own benchmark reads cuBLAS's call at its CPU submit time (about 25 us on the lent H100), and
//! picks a Triton config that runs slower in the compiled graph. Without this module the trainer
//! scores every search as Inductor's benchmark picks, so on small GEMMs a kept list looks
//! harmful where the handler, re-timing, would run the faster of cuBLAS and the kept configs;
//! it then keeps cuBLAS only where a Triton config wins.
//!
//! The re-timed pick is the kept choice fastest in compiled truth. The logs hold compiled truth
//! of two choices: cuBLAS (`truth_default_ms`) and Inductor's pick (`truth_autotune_ms`). Another
//! template's truth is estimated from its benchmark, scaled by the pick's truth over its
//! benchmark, but only where the pick is a template: templates share their call overhead, while
//! cuBLAS's benchmark is the one inflated. Where the pick is cuBLAS, other templates are not
//! estimated and the re-timed pick is the faster of the two known truths. The model takes the
//! re-timing as exact: measured on blind sets, a re-timed full list still lands over the harm
//! bound on about one GEMM in ten (docs/results.md), so it is optimistic by that much.

use super::data::Sample;

/// With re-timing below `below_ms` modelled: compiled truth (ms) of what a search over the
/// choices `kept` (indices into the sample's choices; cuBLAS's among them where kept) picks,
/// or `None` where the search is not re-timed (a single choice, or the fastest benchmark at
/// or above the threshold) or no kept choice has a known or estimated truth.
pub fn retimed_ms(s: &Sample, kept: &[usize], below_ms: f64) -> Option<f64> {
    let choices = s.choices();
    let fastest = kept
        .iter()
        .map(|&i| choices[i].bench_ms)
        .filter(|b| b.is_finite())
        .reduce(f64::min)?;
    if kept.len() < 2 || fastest >= below_ms {
        return None;
    }
    kept.iter().filter_map(|&i| truth_ms(s, i)).reduce(f64::min)
}

/// Compiled truth of choice `i` of `s`: known for cuBLAS and Inductor's pick, estimated for
/// another template where the pick is a template with a positive benchmark.
fn truth_ms(s: &Sample, i: usize) -> Option<f64> {
    let c = &s.choices()[i];
    if Some(i) == s.winner_index() {
        return Some(s.truth_autotune_ms);
    }
    if Some(i) == s.kept_extern_index() {
        return Some(s.truth_default_ms);
    }
    let w = s.winner()?;
    let scalable = !c.is_extern() && !w.is_extern() && w.bench_ms > 0.0;
    (scalable && c.bench_ms.is_finite()).then(|| c.bench_ms * s.truth_autotune_ms / w.bench_ms)
}

impl super::data::Samples {
    /// Scores every search whose fastest benchmark is under `below_ms` as the handler's
    /// re-timing picks ([`retimed_ms`]); `None` leaves them to Inductor's benchmark.
    pub fn model_retime(&mut self, below_ms: Option<f64>) {
        for s in self.samples.iter_mut().chain(self.later.iter_mut()) {
            s.retime_below_ms = below_ms;
        }
    }
}
