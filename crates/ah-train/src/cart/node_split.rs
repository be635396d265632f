//! scikit-learn's `node_split_best` feature order: its `rand_r` generator and the Fisher-Yates
//! bookkeeping of constant features, so that equally good splits are broken as it breaks them.

use super::builder::Builder;
use super::scan::FeatResult;
use super::sklearn::rand_int;

#[derive(Debug, Clone, Copy)]
pub(super) struct Best {
    pub(super) feature: usize,
    pub(super) threshold: f64,
    pub(super) pos: usize,
}

impl Builder<'_> {
    /// scikit-learn's `node_split_best`: the random feature order picks, among the features'
    /// best splits, the first strictly best one.
    pub(super) fn node_split(
        &mut self,
        start: usize,
        end: usize,
        n_known_constants: &mut usize,
        results: &[FeatResult],
    ) -> Option<Best> {
        let n_features = self.features.len();
        let mut f_i = n_features;
        let mut n_visited = 0usize;
        let mut n_found_constants = 0usize;
        let mut n_drawn_constants = 0usize;
        let n_known = *n_known_constants;
        let mut n_total_constants = n_known;
        let mut best: Option<Best> = None;
        let mut best_proxy = f64::NEG_INFINITY;
        let max_features = n_features;
        while f_i > n_total_constants
            && (n_visited < max_features || n_visited <= n_found_constants + n_drawn_constants)
        {
            n_visited += 1;
            let mut f_j = rand_int(
                n_drawn_constants,
                f_i - n_found_constants,
                &mut self.rand_state,
            );
            if f_j < n_known {
                self.features.swap(n_drawn_constants, f_j);
                n_drawn_constants += 1;
                continue;
            }
            f_j += n_found_constants;
            let feature = self.features[f_j];
            let r = &results[feature];
            if r.constant {
                self.features.swap(f_j, n_total_constants);
                n_found_constants += 1;
                n_total_constants += 1;
                continue;
            }
            f_i -= 1;
            self.features.swap(f_i, f_j);
            if r.proxy > best_proxy {
                best_proxy = r.proxy;
                best = Some(Best {
                    feature,
                    threshold: r.threshold,
                    pos: start + r.n_left as usize,
                });
            }
        }
        let _ = end;
        // Constant-feature bookkeeping (keeps scikit-learn's random sequence).
        self.features[..n_known].copy_from_slice(&self.constant_features[..n_known]);
        let (src, dst) = (n_known, n_known + n_found_constants);
        let copy: Vec<usize> = self.features[src..dst].to_vec();
        self.constant_features[src..dst].copy_from_slice(&copy);
        *n_known_constants = n_total_constants;
        best
    }
}
