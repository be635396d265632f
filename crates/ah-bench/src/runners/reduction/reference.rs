//! CPU reference of the reduction kernels, in f64, and the per-dtype comparison the GPU test
//! checks every variant with.

use super::kernels::Op;
use crate::dtype::DType;
pub use crate::dtype::{bf16_to_f32, decode, f16_to_f32};

/// The reference result of `op` over a row-major `rows x cols` input, in f64.
pub fn reduce(op: Op, x: &[f32], rows: usize, cols: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(op.output_len(rows, cols));
    for row in x.chunks_exact(cols).take(rows) {
        match op {
            Op::Sum => out.push(row.iter().map(|&v| f64::from(v)).sum()),
            Op::Softmax => {
                let m = row
                    .iter()
                    .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
                let e: Vec<f64> = row.iter().map(|&v| (f64::from(v) - m).exp()).collect();
                let s: f64 = e.iter().sum();
                out.extend(e.iter().map(|v| v / s));
            }
        }
    }
    out
}

/// Tolerances of one dtype: `|got - want| <= rtol * |want| + atol + acc * scale`, where
/// `scale` is the row's sum of magnitudes for sum (fp32 accumulation error) and 0 for softmax.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Relative error of the output element type (rounding) plus the kernel's math.
    pub rtol: f64,
    /// Absolute floor (subnormal spacing of the output type).
    pub atol: f64,
    /// fp32 accumulation error relative to the row's sum of magnitudes.
    pub acc: f64,
}

impl Tolerance {
    /// The tolerance for an op and output dtype.
    pub fn for_dtype(op: Op, dtype: DType) -> Tolerance {
        let (rtol, atol) = match dtype {
            DType::F32 => (5e-5, 1e-9),
            DType::F16 => (1.5e-3, 6e-8),
            DType::BF16 => (8e-3, 1e-9),
        };
        let acc = match op {
            Op::Sum => 2e-6,
            Op::Softmax => 0.0,
        };
        Tolerance { rtol, atol, acc }
    }
}

/// Compares a kernel's output with the reference; `Err` names the first element that is out
/// of tolerance (or not finite: unwritten outputs are poisoned with NaN by the test).
pub fn check(
    op: Op,
    dtype: DType,
    x: &[f32],
    rows: usize,
    cols: usize,
    got: &[f32],
) -> Result<(), String> {
    let want = reduce(op, x, rows, cols);
    if got.len() != want.len() {
        return Err(format!("{} outputs, expected {}", got.len(), want.len()));
    }
    let tol = Tolerance::for_dtype(op, dtype);
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let row = match op {
            Op::Sum => i,
            Op::Softmax => i / cols,
        };
        let scale: f64 = match op {
            Op::Sum => x[row * cols..(row + 1) * cols]
                .iter()
                .map(|v| f64::from(v.abs()))
                .sum(),
            Op::Softmax => 0.0,
        };
        let g = f64::from(g);
        let bound = tol.rtol * w.abs() + tol.atol + tol.acc * scale;
        if !g.is_finite() || (g - w).abs() > bound {
            return Err(format!(
                "element {i} (row {row}): got {g}, expected {w} (|diff| {:.3e} > {bound:.3e})",
                (g - w).abs()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_sums_and_softmaxes_rows() {
        let x = [1.0, 2.0, 3.0, -1.0, 0.0, 1.0];
        assert_eq!(reduce(Op::Sum, &x, 2, 3), vec![6.0, 0.0]);
        let s = reduce(Op::Softmax, &x, 2, 3);
        assert_eq!(s.len(), 6);
        assert!((s[0..3].iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((s[2] - 0.665_240_955_774_821_6).abs() < 1e-12);
        assert!(s[0] < s[1] && s[1] < s[2]);
    }

    #[test]
    fn check_accepts_rounding_and_rejects_errors() {
        let x = [1.0, 2.0, 3.0, -1.0, 0.0, 1.0];
        assert!(check(Op::Sum, DType::F32, &x, 2, 3, &[6.0, 0.0]).is_ok());
        assert!(check(Op::Sum, DType::F32, &x, 2, 3, &[6.0, 0.5]).is_err());
        assert!(check(Op::Sum, DType::F32, &x, 2, 3, &[6.0, f32::NAN]).is_err());
        assert!(check(Op::Sum, DType::F32, &x, 2, 3, &[6.0]).is_err());
        // bf16 output rounding of 6.0 is exact; 6.03 is within 8e-3 relative.
        assert!(check(Op::Sum, DType::BF16, &x, 2, 3, &[6.03, 0.0]).is_ok());
        let s: Vec<f32> = reduce(Op::Softmax, &x, 2, 3)
            .iter()
            .map(|&v| v as f32)
            .collect();
        assert!(check(Op::Softmax, DType::F32, &x, 2, 3, &s).is_ok());
        let mut bad = s.clone();
        bad.swap(0, 2);
        let err = check(Op::Softmax, DType::F16, &x, 2, 3, &bad).unwrap_err();
        assert!(err.contains("element 0 (row 0)"), "{err}");
    }
}
