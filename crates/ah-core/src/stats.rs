//! The one median of the workspace: of repetitions in a log (PyTorch's trainer takes the pandas
//! median over repetitions), of timed runs in a benchmark, and in the evaluation tools.

/// The median of `v` (sorted in place by `f64::total_cmp`): the middle value, or the mean of
/// the two middle values for an even count, as pandas and numpy compute it. `NaN` for an empty
/// slice.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn odd_even_empty_and_infinite() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [3.0, 1.0, 2.0, 10.0]), 2.5);
        assert!(median(&mut []).is_nan());
        assert_eq!(median(&mut [f64::INFINITY, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [f64::INFINITY, 1.0]), f64::INFINITY);
    }
}
