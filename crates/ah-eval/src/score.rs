//! Scoring picks on measured inputs: the one geometric mean, the harm threshold, and the
//! per-input score ([`PickTimes`]) with its summary ([`PickSummary`]) that `ah-use run`, the
//! reduction case study and the metrics of [`crate::metrics`] share.
//!
//! The names, one per quantity:
//! - **speedup over default**: `default / picked` per input; summarised as the geometric mean
//!   (`gmean_speedup_over_default`) and as the ratio of totals (`speedup_over_default`);
//! - **share of oracle**: the geometric mean over inputs of `best / picked` (1.0 = always the
//!   fastest); `pct_of_oracle` in [`crate::metrics`] is the same quantity in % (the
//!   heuristic's geomean speedup over the default over the oracle's);
//! - **total time share**: `sum(best) / sum(picked)`, the oracle's share of the time the picks
//!   take (what `ah-use run` printed as "share of oracle" before it had its own name);
//! - **harmful**: a pick more than [`HARM_FACTOR`] times slower than the best.
//!
//! The median of repetitions and timed runs is the core's (`ah_core::stats::median`).

/// A pick is *harmful* when it is more than this factor slower than the best choice (10 %).
pub const HARM_FACTOR: f64 = 1.1;

/// numpy's pairwise summation (`np.add.reduce` on a contiguous float64 array).
pub fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut r = 0.0;
        for &x in a {
            r += x;
        }
        r
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - (n % 8) {
            for j in 0..8 {
                r[j] += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// The geometric mean, scipy's `gmean` (`exp(mean(log(a)))`, logs summed pairwise); `None`
/// for an empty list. Callers say what an empty list scores: PyTorch's evaluator reports 0
/// ([`crate::metrics`]), the case studies NaN.
pub fn gmean(a: &[f64]) -> Option<f64> {
    if a.is_empty() {
        return None;
    }
    let logs: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    Some((pairwise_sum(&logs) / a.len() as f64).exp())
}

/// One input's times: the pick's, the best choice's and the default choice's (ms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PickTimes {
    /// The picked choice's time.
    pub picked_ms: f64,
    /// The fastest choice's time.
    pub best_ms: f64,
    /// The default choice's time (the pick's time where there is no default).
    pub default_ms: f64,
}

impl PickTimes {
    /// `default / picked`.
    pub fn speedup_over_default(&self) -> f64 {
        self.default_ms / self.picked_ms
    }

    /// `best / picked` (1.0 = the fastest).
    pub fn of_oracle(&self) -> f64 {
        self.best_ms / self.picked_ms
    }

    /// More than [`HARM_FACTOR`] times slower than the best.
    pub fn harmful(&self) -> bool {
        self.picked_ms > HARM_FACTOR * self.best_ms
    }
}

/// The summary of a list of [`PickTimes`] (see the module docs for the names).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PickSummary {
    /// Inputs scored.
    pub n: usize,
    /// Sum of the picks' times.
    pub picked_total_ms: f64,
    /// Sum of the best times.
    pub best_total_ms: f64,
    /// Sum of the default choice's times.
    pub default_total_ms: f64,
    /// `default_total_ms / picked_total_ms`.
    pub speedup_over_default: f64,
    /// Geometric mean of [`PickTimes::speedup_over_default`] (NaN for no input).
    pub gmean_speedup_over_default: f64,
    /// Geometric mean of [`PickTimes::of_oracle`] (NaN for no input).
    pub share_of_oracle: f64,
    /// `best_total_ms / picked_total_ms`.
    pub total_time_share: f64,
    /// Harmful picks ([`PickTimes::harmful`]).
    pub harmful: usize,
}

impl PickSummary {
    /// Summarises `inputs`.
    pub fn of(inputs: &[PickTimes]) -> Self {
        let sum = |f: fn(&PickTimes) -> f64| inputs.iter().map(f).sum::<f64>();
        let (picked, best, default) = (
            sum(|p| p.picked_ms),
            sum(|p| p.best_ms),
            sum(|p| p.default_ms),
        );
        let gmean_of = |f: fn(&PickTimes) -> f64| {
            gmean(&inputs.iter().map(f).collect::<Vec<_>>()).unwrap_or(f64::NAN)
        };
        PickSummary {
            n: inputs.len(),
            picked_total_ms: picked,
            best_total_ms: best,
            default_total_ms: default,
            speedup_over_default: default / picked,
            gmean_speedup_over_default: gmean_of(PickTimes::speedup_over_default),
            share_of_oracle: gmean_of(PickTimes::of_oracle),
            total_time_share: best / picked,
            harmful: inputs.iter().filter(|p| p.harmful()).count(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gmean_of_nothing_is_none() {
        assert_eq!(gmean(&[]), None);
        assert!((gmean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
    }

    #[test]
    fn summary_names_each_quantity_once() {
        let p = |picked_ms, best_ms, default_ms| PickTimes {
            picked_ms,
            best_ms,
            default_ms,
        };
        let s = PickSummary::of(&[p(2.0, 1.0, 4.0), p(1.0, 1.0, 1.0)]);
        assert_eq!(s.n, 2);
        assert!((s.share_of_oracle - 0.5f64.sqrt()).abs() < 1e-12);
        assert!((s.total_time_share - 2.0 / 3.0).abs() < 1e-12);
        assert!((s.speedup_over_default - 5.0 / 3.0).abs() < 1e-12);
        assert!((s.gmean_speedup_over_default - 2.0f64.sqrt()).abs() < 1e-12);
        assert_eq!(s.harmful, 1);
        assert!(PickSummary::of(&[]).share_of_oracle.is_nan());
    }
}
