//! The GPU correctness check of pad_mm (`ah-collect --check`, `tests/pad_mm_gpu.rs`): `orig`
//! and `pad` against a host f64 reference.

use super::cuda::{enqueue_orig, enqueue_pad, prepare_cuda};
use super::{shapes, PadMmInput};
use crate::backend::BenchError;
use crate::dtype::DType;

/// Result of [`check_pad_equals_orig`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckResult {
    /// `max |orig - reference| / max |reference|`, reference computed in f64 on the host.
    pub orig_vs_reference: f64,
    /// `max |pad[:m, :n] - orig| / max |orig|`.
    pub pad_vs_orig: f64,
}

/// Runs `orig` and `pad` once each on the GPU and compares both with a host f64 reference:
/// proves the layouts, transposes, padding and slicing are right. Use small shapes.
pub fn check_pad_equals_orig(
    i: &PadMmInput,
    cuda: &mut crate::backend::CudaBackend,
) -> Result<CheckResult, BenchError> {
    let p = prepare_cuda(i, cuda)?;
    // Garbage where `pad` copies an operand: its copy must write the padding's zeros itself.
    for (copied, buf) in [
        (!i.mat1_padding_excluded(), &p.a_pad),
        (!i.mat2_pre_padded(), &p.b_pad),
    ] {
        if let (true, Some(pad)) = (copied, buf) {
            let bytes = pad.buf.bytes();
            cuda.fill_random(pad.buf.ptr(), bytes / i.dtype.itemsize(), i.dtype)?;
        }
    }
    enqueue_orig(cuda, i, &p)?;
    enqueue_pad(cuda, i, &p)?;
    let e = i.dtype.itemsize();
    let s = shapes(i);
    let a = crate::dtype::decode(&cuda.download(p.a.ptr(), p.a.bytes())?, i.dtype);
    let b = crate::dtype::decode(&cuda.download(p.b.ptr(), p.b.bytes())?, i.dtype);
    let c = crate::dtype::decode(&cuda.download(p.c.ptr(), i.m * i.n * e)?, i.dtype);
    let cp = crate::dtype::decode(&cuda.download(p.c_pad.ptr(), s.mp * s.np * e)?, i.dtype);
    let (a0, a1) = i.mat1_strides();
    let (b0, b1) = i.mat2_strides();
    let (mut ref_max, mut err_ref, mut orig_max, mut err_pad) = (0f64, 0f64, 0f64, 0f64);
    for r in 0..i.m {
        for col in 0..i.n {
            let mut acc = 0f64;
            for t in 0..i.k {
                acc += f64::from(a[r * a0 + t * a1]) * f64::from(b[t * b0 + col * b1]);
            }
            let o = f64::from(c[r * i.n + col]);
            let q = f64::from(cp[r * s.np + col]);
            ref_max = ref_max.max(acc.abs());
            orig_max = orig_max.max(o.abs());
            err_ref = err_ref.max((o - acc).abs());
            err_pad = err_pad.max((q - o).abs());
            if !o.is_finite() || !q.is_finite() {
                return Err(BenchError::Other(format!(
                    "non-finite result at ({r}, {col})"
                )));
            }
        }
    }
    Ok(CheckResult {
        orig_vs_reference: err_ref / ref_max.max(f64::MIN_POSITIVE),
        pad_vs_orig: err_pad / orig_max.max(f64::MIN_POSITIVE),
    })
}

/// Tolerance of [`CheckResult`] values per dtype (TF32 and half types round the inputs).
pub fn check_tolerance(i: &PadMmInput) -> f64 {
    match (i.dtype, i.allow_tf32) {
        (DType::F32, false) => 1e-4,
        (DType::F32, true) => 5e-3,
        (DType::F16, _) => 1e-2,
        (DType::BF16, _) => 3e-2,
    }
}
