//! pad_mm on the GPU: device buffers of an input, and the `orig` and `pad` choices enqueued
//! on the backend's stream.

use super::{shapes, write_pad_rect, PadMmInput};
use crate::backend::cuda::{DeviceBuffer, GemmArgs, PadCopyArgs};
use crate::backend::BenchError;

/// Device buffers of one input on the GPU.
#[derive(Debug)]
pub struct CudaPrepared {
    pub(super) a: DeviceBuffer,
    pub(super) b: DeviceBuffer,
    pub(super) c: DeviceBuffer,
    pub(super) a_pad: Option<DeviceBuffer>,
    pub(super) b_pad: Option<DeviceBuffer>,
    pub(super) c_pad: DeviceBuffer,
    /// Row strides (elements) of `a_pad` and `b_pad`: `CudaBackend::padded_row_stride`.
    pub(super) lda_pad: usize,
    pub(super) ldb_pad: usize,
}

pub(super) fn prepare_cuda(
    i: &PadMmInput,
    cuda: &mut crate::backend::CudaBackend,
) -> Result<CudaPrepared, BenchError> {
    let e = i.dtype.itemsize();
    let s = shapes(i);
    let a = cuda.alloc(i.m * i.k * e)?;
    let b = cuda.alloc(i.k * i.n * e)?;
    let c = cuda.alloc(i.m * i.n * e)?;
    cuda.fill_random(a.ptr(), i.m * i.k, i.dtype)?;
    cuda.fill_random(b.ptr(), i.k * i.n, i.dtype)?;
    let (lda_pad, ldb_pad) = (
        cuda.padded_row_stride(s.kp, e),
        cuda.padded_row_stride(s.np, e),
    );
    let a_pad = if s.pad1 {
        Some(cuda.alloc(s.mp * lda_pad * e)?)
    } else {
        None
    };
    let b_pad = if s.pad2 {
        Some(cuda.alloc(s.kp * ldb_pad * e)?)
    } else {
        None
    };
    let c_pad = cuda.alloc(s.mp * s.np * e)?;
    let p = CudaPrepared {
        a,
        b,
        c,
        a_pad,
        b_pad,
        c_pad,
        lda_pad,
        ldb_pad,
    };
    // Prepadded operands exist padded before the timed region (PyTorch pads them up front).
    if let (true, Some(args)) = (i.mat1_padding_excluded(), mat1_pad_copy(i, &p)) {
        cuda.pad_copy(&args)?;
    }
    if let (true, Some(args)) = (i.mat2_pre_padded(), mat2_pad_copy(i, &p)) {
        cuda.pad_copy(&args)?;
    }
    cuda.synchronize()?;
    Ok(p)
}

/// Copying mat1 into its padded buffer, if it has one.
pub(super) fn mat1_pad_copy(i: &PadMmInput, p: &CudaPrepared) -> Option<PadCopyArgs> {
    let s = shapes(i);
    let (s0, s1) = i.mat1_strides();
    let ap = p.a_pad.as_ref()?;
    Some(PadCopyArgs {
        dst: ap.ptr(),
        dst_bytes: ap.bytes(),
        dst_rows: s.mp,
        dst_cols: s.kp,
        dst_pitch: p.lda_pad,
        src: p.a.ptr(),
        rows: i.m,
        cols: i.k,
        s0,
        s1,
        elem: i.dtype.itemsize(),
    })
}

/// Copying mat2 into its padded buffer, if it has one.
pub(super) fn mat2_pad_copy(i: &PadMmInput, p: &CudaPrepared) -> Option<PadCopyArgs> {
    let s = shapes(i);
    let (s0, s1) = i.mat2_strides();
    let bp = p.b_pad.as_ref()?;
    Some(PadCopyArgs {
        dst: bp.ptr(),
        dst_bytes: bp.bytes(),
        dst_rows: s.kp,
        dst_cols: s.np,
        dst_pitch: p.ldb_pad,
        src: p.b.ptr(),
        rows: i.k,
        cols: i.n,
        s0,
        s1,
        elem: i.dtype.itemsize(),
    })
}

fn orig_gemm(i: &PadMmInput, p: &CudaPrepared) -> GemmArgs {
    GemmArgs {
        m: i.m,
        k: i.k,
        n: i.n,
        a: p.a.ptr(),
        trans_a: i.transpose_left,
        lda: if i.transpose_left { i.m } else { i.k },
        b: p.b.ptr(),
        trans_b: i.transpose_right,
        ldb: if i.transpose_right { i.k } else { i.n },
        c: p.c.ptr(),
        ldc: i.n,
        dtype: i.dtype,
        tf32: i.allow_tf32,
    }
}

pub(super) fn enqueue_orig(
    cuda: &mut crate::backend::CudaBackend,
    i: &PadMmInput,
    p: &CudaPrepared,
) -> Result<(), BenchError> {
    cuda.gemm(&orig_gemm(i, p))
}

pub(super) fn enqueue_pad(
    cuda: &mut crate::backend::CudaBackend,
    i: &PadMmInput,
    p: &CudaPrepared,
) -> Result<(), BenchError> {
    let e = i.dtype.itemsize();
    let s = shapes(i);
    let (mpad, kpad, npad) = i.padded_lengths();
    let mut g = orig_gemm(i, p);
    if let Some(ap) = &p.a_pad {
        if i.mat1_padding_excluded() {
            let (r0, c0, nr, nc) = write_pad_rect(s.mp, s.kp, mpad, kpad);
            cuda.zero_rect(
                ap.ptr() + ((r0 * p.lda_pad + c0) * e) as u64,
                p.lda_pad * e,
                e,
                nc,
                nr,
            )?;
        } else if let Some(args) = mat1_pad_copy(i, p) {
            cuda.pad_copy(&args)?;
        }
        g.a = ap.ptr();
        g.trans_a = false;
        g.lda = p.lda_pad;
    }
    if let Some(bp) = &p.b_pad {
        if i.mat2_pre_padded() {
            let (r0, c0, nr, nc) = write_pad_rect(s.kp, s.np, kpad, npad);
            cuda.zero_rect(
                bp.ptr() + ((r0 * p.ldb_pad + c0) * e) as u64,
                p.ldb_pad * e,
                e,
                nc,
                nr,
            )?;
        } else if let Some(args) = mat2_pad_copy(i, p) {
            cuda.pad_copy(&args)?;
        }
        g.b = bp.ptr();
        g.trans_b = false;
        g.ldb = p.ldb_pad;
    }
    g.m = s.mp;
    g.k = if s.pad1 || s.pad2 { s.kp } else { i.k };
    g.n = s.np;
    g.c = p.c_pad.ptr();
    g.ldc = s.np;
    cuda.gemm(&g)
}
