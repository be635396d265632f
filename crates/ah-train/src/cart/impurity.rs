//! The split criteria: a node's impurity and scikit-learn's `proxy_impurity_improvement`.

use super::builder::{Builder, Totals};
use super::params::Criterion;
use super::sklearn::log2;

impl Builder<'_> {
    pub(super) fn impurity_of(&self, counts: &[f64], wn: f64, sum: f64, sq: f64) -> f64 {
        match self.criterion {
            Criterion::Gini => {
                let mut sqc = 0.0;
                for &c in counts {
                    sqc += c * c;
                }
                1.0 - sqc / (wn * wn)
            }
            Criterion::Entropy => {
                let mut e = 0.0;
                for &c in counts {
                    if c > 0.0 {
                        let p = c / wn;
                        e -= p * log2(p);
                    }
                }
                e
            }
            Criterion::SquaredError => {
                let m = sum / wn;
                sq / wn - m * m
            }
        }
    }

    /// scikit-learn's `proxy_impurity_improvement` for a left part with the given sums.
    #[inline]
    pub(super) fn proxy(&self, totals: &Totals, left_counts: &[f64], wl: f64, suml: f64) -> f64 {
        let (ref tot_counts, tot_w, tot_sum, _) = *totals;
        let wr = tot_w - wl;
        match self.criterion {
            Criterion::SquaredError => {
                let sumr = tot_sum - suml;
                suml * suml / wl + sumr * sumr / wr
            }
            Criterion::Gini => {
                let (mut sl, mut sr) = (0.0, 0.0);
                for (c, &lc) in left_counts.iter().enumerate() {
                    let rc = tot_counts[c] - lc;
                    sl += lc * lc;
                    sr += rc * rc;
                }
                let gl = 1.0 - sl / (wl * wl);
                let gr = 1.0 - sr / (wr * wr);
                -wr * gr - wl * gl
            }
            Criterion::Entropy => {
                let (mut el, mut er) = (0.0, 0.0);
                for (c, &lc) in left_counts.iter().enumerate() {
                    if lc > 0.0 {
                        let q = lc / wl;
                        el -= q * log2(q);
                    }
                    let rc = tot_counts[c] - lc;
                    if rc > 0.0 {
                        let q = rc / wr;
                        er -= q * log2(q);
                    }
                }
                -wr * er - wl * el
            }
        }
    }
}
