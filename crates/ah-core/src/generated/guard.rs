//! The range guard of generated code: every guarded feature numeric and inside its training
//! range ([`FeatureRange`]), else unsure.

use super::read::number;
use crate::heuristic::UnsureKind;
use crate::Context;

/// A feature's range in the training data (both ends included).
#[derive(Debug, Clone, Copy)]
pub struct FeatureRange {
    /// The feature.
    pub name: &'static str,
    /// Smallest value seen in training.
    pub min: f64,
    /// Largest value seen in training.
    pub max: f64,
}

/// The range guard: in table order, a feature whose value is not numeric (`None`) is missing,
/// one outside its range is out of range; the first failure wins. Gives the checked values.
#[inline]
pub fn range_guard<const N: usize>(
    ranges: &[FeatureRange; N],
    values: [Option<f64>; N],
) -> Result<[f64; N], UnsureKind> {
    let mut out = [0.0; N];
    for ((r, v), o) in ranges.iter().zip(values).zip(&mut out) {
        let v = v.ok_or(UnsureKind::MissingFeature(r.name))?;
        if !(r.min..=r.max).contains(&v) {
            return Err(UnsureKind::OutOfRange(r.name));
        }
        *o = v;
    }
    Ok(out)
}

/// [`range_guard`] on the generic path: each feature's value is read by name from `s`, the
/// context with the operations' values.
#[inline]
pub fn range_guard_by_name<const N: usize>(
    ranges: &[FeatureRange; N],
    s: &Context,
) -> Result<[f64; N], UnsureKind> {
    range_guard(ranges, ranges.each_ref().map(|r| number(s.get(r.name))))
}
