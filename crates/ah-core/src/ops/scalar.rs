//! Python's arithmetic on typed scalars: the one implementation that the evaluator
//! ([`super::binary`], [`super::compare`]) and generated Rust code (`ah_codegen`'s typed fast
//! path) both call, so that they compute the same value. `None` is a failure (division by zero,
//! or an integer result beyond `i64`).

use std::cmp::Ordering;

/// Python's `/` on floats: division by zero fails.
#[inline]
pub fn fdiv(x: f64, y: f64) -> Option<f64> {
    if y == 0.0 {
        None
    } else {
        Some(x / y)
    }
}

/// Python's `//` on integers: floors towards negative infinity; division by zero or
/// overflow (`i64::MIN // -1`) fails.
#[inline]
pub fn ifloordiv(x: i64, y: i64) -> Option<i64> {
    if y == 0 {
        return None;
    }
    let q = x.checked_div(y)?;
    if x % y != 0 && ((x < 0) != (y < 0)) {
        Some(q - 1)
    } else {
        Some(q)
    }
}

/// Python's `%` on integers: the result has the divisor's sign; modulo by zero fails. The
/// remainder always fits: `i64::MIN % -1` is 0, as every `x % -1` (only the quotient
/// overflows, see [`ifloordiv`]).
#[inline]
pub fn imod(x: i64, y: i64) -> Option<i64> {
    if y == 0 {
        return None;
    }
    let r = x.wrapping_rem(y);
    if r != 0 && ((r < 0) != (y < 0)) {
        Some(r + y)
    } else {
        Some(r)
    }
}

/// Exact comparison of an integer with a float, as Python does it (no rounding of the
/// integer); `None` when the float is NaN.
#[inline]
pub fn cmp_if(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f >= 9_223_372_036_854_775_808.0 {
        return Some(Ordering::Less);
    }
    if f < -9_223_372_036_854_775_808.0 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    match i.cmp(&(t as i64)) {
        Ordering::Equal => Some(if f - t > 0.0 {
            Ordering::Less
        } else if f - t < 0.0 {
            Ordering::Greater
        } else {
            Ordering::Equal
        }),
        o => Some(o),
    }
}

/// Python's `min` of two floats: the first of equals; NaN never replaces.
#[inline]
pub fn fmin(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

/// Python's `max` of two floats: the first of equals; NaN never replaces.
#[inline]
pub fn fmax(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_division_and_modulo_follow_python() {
        assert_eq!(ifloordiv(7, 2), Some(3));
        assert_eq!(ifloordiv(-7, 2), Some(-4));
        assert_eq!(ifloordiv(7, -2), Some(-4));
        assert_eq!(ifloordiv(1, 0), None);
        assert_eq!(ifloordiv(i64::MIN, -1), None);
        assert_eq!(imod(-7, 2), Some(1));
        assert_eq!(imod(7, -2), Some(-1));
        assert_eq!(imod(7, 0), None);
        assert_eq!(imod(i64::MIN, -1), Some(0));
        assert_eq!(imod(i64::MIN, 1), Some(0));
        assert_eq!(imod(i64::MAX, -1), Some(0));
        assert_eq!(imod(i64::MIN, i64::MIN), Some(0));
        assert_eq!(imod(i64::MAX, i64::MIN), Some(-1));
        assert_eq!(fdiv(1.0, 0.0), None);
        assert_eq!(fdiv(1.0, 4.0), Some(0.25));
    }

    #[test]
    fn int_float_comparison_is_exact() {
        assert_eq!(cmp_if(3, 3.5), Some(Ordering::Less));
        assert_eq!(cmp_if(-3, -3.5), Some(Ordering::Greater));
        assert_eq!(cmp_if(3, 3.0), Some(Ordering::Equal));
        assert_eq!(cmp_if(i64::MAX, 9.3e18), Some(Ordering::Less));
        assert_eq!(cmp_if(0, f64::NAN), None);
        assert_eq!(fmin(1.0, f64::NAN), 1.0);
        assert!(fmax(f64::NAN, 1.0).is_nan());
    }
}
