//! The search for one feature's best split over a node's samples: the sorted scan
//! (scikit-learn's), its unit-weight classification variant, and two-valued columns counted.

use super::builder::{Builder, Totals};
use super::sklearn::FEATURE_THRESHOLD;

/// The best split of one feature over one node's samples (independent of the random feature
/// order, so it is shared between the trees of a grid group).
#[derive(Debug, Clone, Copy)]
pub(super) struct FeatResult {
    pub(super) constant: bool,
    pub(super) proxy: f64,
    /// Samples going left.
    pub(super) n_left: u32,
    pub(super) threshold: f64,
}

impl Builder<'_> {
    /// The scan of a column with two values `lo < hi`: its only candidate split puts the
    /// `lo` samples left (what the sorted scan finds, computed by counting).
    #[allow(clippy::too_many_arguments)]
    fn scan_two_valued(
        &self,
        feature: usize,
        lo: f32,
        hi: f32,
        start: usize,
        end: usize,
        totals: &Totals,
        left_counts: &mut [f64],
    ) -> FeatResult {
        let d = self.data;
        let col = &d.columns[feature];
        let n = end - start;
        let constant = FeatResult {
            constant: true,
            proxy: f64::NEG_INFINITY,
            n_left: 0,
            threshold: 0.0,
        };
        let (a, b) = (f64::from(lo), f64::from(hi));
        if b <= a + FEATURE_THRESHOLD {
            return constant;
        }
        left_counts.iter_mut().for_each(|c| *c = 0.0);
        let (mut n_left, mut wl, mut suml) = (0usize, 0.0f64, 0.0f64);
        if let (Some(masks), Some(bits)) = (&self.class_masks, &self.lo_bits[feature]) {
            // Unit weights: the counts are popcounts of the class masks and the low bits.
            for (c, m) in masks.iter().enumerate() {
                let k: u32 = m.iter().zip(bits).map(|(a, b)| (a & b).count_ones()).sum();
                left_counts[c] = f64::from(k);
                n_left += k as usize;
            }
            wl = n_left as f64;
        } else {
            for &s in &self.sorted[0][start..end] {
                let s = s as usize;
                if col[s] == lo {
                    n_left += 1;
                    let w = d.weights[s];
                    wl += w;
                    if self.regression {
                        suml += w * d.targets[s];
                    } else {
                        left_counts[d.classes[s] as usize] += w;
                    }
                }
            }
        }
        if n_left == 0 || n_left == n {
            return constant;
        }
        let mut res = FeatResult {
            constant: false,
            proxy: f64::NEG_INFINITY,
            n_left: 0,
            threshold: 0.0,
        };
        let msl = self.min_samples_leaf;
        if n_left < msl || n - n_left < msl {
            return res;
        }
        let proxy = self.proxy(totals, left_counts, wl, suml);
        res.proxy = proxy;
        let mut threshold = a / 2.0 + b / 2.0;
        if threshold == b || threshold.is_infinite() {
            threshold = a;
        }
        res.threshold = threshold;
        res.n_left = n_left as u32;
        res
    }

    /// [`Builder::scan_feature`] for classification with unit weights: the same positions,
    /// the same formula at the positions that can win (the class counts are exact integers,
    /// so the left sums equal scikit-learn's whatever the order they are added in).
    fn scan_unit(
        &self,
        col: &[f32],
        order: &[u32],
        totals: &Totals,
        left_counts: &mut [f64],
    ) -> FeatResult {
        let d = self.data;
        let n = order.len();
        let msl = self.min_samples_leaf;
        let tot_counts = &totals.0;
        let tot_w = totals.1;
        let mut res = FeatResult {
            constant: false,
            proxy: f64::NEG_INFINITY,
            n_left: 0,
            threshold: 0.0,
        };
        left_counts.iter_mut().for_each(|c| *c = 0.0);
        let mut cur = f64::from(col[order[0] as usize]);
        for i in 0..n - 1 {
            left_counts[d.classes[order[i] as usize] as usize] += 1.0;
            let next = f64::from(col[order[i + 1] as usize]);
            if next <= cur + FEATURE_THRESHOLD {
                cur = next;
                continue;
            }
            let (v_prev, v_p) = (cur, next);
            cur = next;
            let p = i + 1;
            if p < msl || n - p < msl {
                continue;
            }
            let wl = p as f64;
            if let Some(xlx) = &self.xlx {
                let wr = tot_w - wl;
                let mut approx = -xlx[p] - xlx[wr as usize];
                for (c, &lc) in left_counts.iter().enumerate() {
                    approx += xlx[lc as usize] + xlx[(tot_counts[c] - lc) as usize];
                }
                if approx + 1e-7 * (1.0 + res.proxy.abs()) < res.proxy {
                    continue;
                }
            }
            let proxy = self.proxy(totals, left_counts, wl, 0.0);
            if proxy > res.proxy {
                res.proxy = proxy;
                let mut threshold = v_prev / 2.0 + v_p / 2.0;
                if threshold == v_p || threshold.is_infinite() {
                    threshold = v_prev;
                }
                res.threshold = threshold;
                res.n_left = p as u32;
            }
        }
        res
    }

    /// scikit-learn's scan of one feature: the first position of the best proxy.
    pub(super) fn scan_feature(
        &self,
        feature: usize,
        start: usize,
        end: usize,
        totals: &Totals,
        left_counts: &mut [f64],
    ) -> FeatResult {
        if let Some((lo, hi)) = self.two_valued[feature] {
            return self.scan_two_valued(feature, lo, hi, start, end, totals, left_counts);
        }
        let d = self.data;
        let col = &d.columns[feature];
        let order = &self.sorted[feature][start..end];
        let n = end - start;
        let first = f64::from(col[order[0] as usize]);
        let last = f64::from(col[order[n - 1] as usize]);
        let mut res = FeatResult {
            constant: false,
            proxy: f64::NEG_INFINITY,
            n_left: 0,
            threshold: 0.0,
        };
        if last <= first + FEATURE_THRESHOLD {
            res.constant = true;
            return res;
        }
        if self.unit_weights && !self.regression {
            return self.scan_unit(col, order, totals, left_counts);
        }
        let msl = self.min_samples_leaf;
        left_counts.iter_mut().for_each(|c| *c = 0.0);
        let (mut wl, mut suml) = (0.0f64, 0.0f64);
        let mut p = 0usize;
        let mut added = 0usize;
        let mut cur = f64::from(col[order[0] as usize]);
        while p < n {
            while p + 1 < n {
                let next = f64::from(col[order[p + 1] as usize]);
                if next <= cur + FEATURE_THRESHOLD {
                    p += 1;
                    cur = next;
                } else {
                    break;
                }
            }
            let p_prev = p;
            p += 1;
            if p >= n {
                continue;
            }
            let v_p = f64::from(col[order[p] as usize]);
            let v_prev = cur;
            cur = v_p;
            if p < msl || n - p < msl {
                continue;
            }
            while added < p {
                let s = order[added] as usize;
                let w = d.weights[s];
                wl += w;
                if self.regression {
                    suml += w * d.targets[s];
                } else {
                    left_counts[d.classes[s] as usize] += w;
                }
                added += 1;
            }
            // Entropy with unit weights: a cheap exact-math bound (table of c*log2(c)) skips
            // positions that cannot beat this feature's best; the others get scikit-learn's
            // formula, so the chosen split is the same bit for bit.
            if let Some(xlx) = &self.xlx {
                let (ref tot_counts, tot_w, _, _) = *totals;
                let wr = tot_w - wl;
                let mut approx = -xlx[wl as usize] - xlx[wr as usize];
                for (c, &lc) in left_counts.iter().enumerate() {
                    approx += xlx[lc as usize] + xlx[(tot_counts[c] - lc) as usize];
                }
                if approx + 1e-7 * (1.0 + res.proxy.abs()) < res.proxy {
                    continue;
                }
            }
            let proxy = self.proxy(totals, left_counts, wl, suml);
            if proxy > res.proxy {
                res.proxy = proxy;
                let mut threshold = v_prev / 2.0 + v_p / 2.0;
                if threshold == v_p || threshold.is_infinite() {
                    threshold = v_prev;
                }
                res.threshold = threshold;
                res.n_left = p as u32;
            }
            let _ = p_prev;
        }
        res
    }
}
