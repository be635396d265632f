//! What the builder takes from scikit-learn as it is: its tolerances ([`FEATURE_THRESHOLD`],
//! [`EPSILON`]), its `log2` and its `rand_r` generator ([`RAND_R_MAX`], [`rand_int`]).

/// Two feature values closer than this are one value (scikit-learn's `FEATURE_THRESHOLD`).
pub(super) const FEATURE_THRESHOLD: f64 = 1e-7;
/// scikit-learn's `EPSILON`: a node this pure is a leaf; an improvement this negative is none.
pub(super) const EPSILON: f64 = f64::EPSILON;

#[inline]
pub(super) fn log2(x: f64) -> f64 {
    x.ln() / std::f64::consts::LN_2
}

/// scikit-learn's `RAND_R_MAX`.
pub(super) const RAND_R_MAX: u32 = 0x7FFF_FFFF;

#[inline]
fn our_rand_r(seed: &mut u32) -> u32 {
    if *seed == 0 {
        *seed = 1;
    }
    *seed ^= *seed << 13;
    *seed ^= *seed >> 17;
    *seed ^= *seed << 5;
    *seed % (RAND_R_MAX + 1)
}

#[inline]
pub(super) fn rand_int(low: usize, high: usize, seed: &mut u32) -> usize {
    low + (our_rand_r(seed) as usize) % (high - low)
}
