//! pad_mm on the GPU: device buffers of an input, and the `orig` and `pad` choices enqueued
//! on the backend's stream.

use super::{shapes, write_pad_rect, PadMmInput};
use crate::backend::cuda::{DeviceBuffer, GemmArgs, PadCopyArgs};
use crate::backend::{BenchError, CudaBackend};

/// Device buffers of one input on the GPU.
#[derive(Debug)]
pub struct CudaPrepared {
    pub(super) a: DeviceBuffer,
    pub(super) b: DeviceBuffer,
    pub(super) c: DeviceBuffer,
    pub(super) a_pad: Option<Padded>,
    pub(super) b_pad: Option<Padded>,
    pub(super) c_pad: DeviceBuffer,
}

/// A padded operand's buffer and layout.
#[derive(Debug)]
pub(super) struct Padded {
    pub(super) buf: DeviceBuffer,
    /// Column-major (the padded transpose is stored row-major), as the source: a compiled
    /// program's pad keeps a transposed operand's stride order.
    pub(super) transposed: bool,
    /// Row stride of the stored matrix, in elements (`CudaBackend::padded_row_stride`).
    pub(super) ld: usize,
}

/// The padded operand's geometry: a `rows` x `cols` operand padded to `rows_p` x `cols_p`,
/// with the source's strides.
struct Geometry {
    rows: usize,
    cols: usize,
    rows_p: usize,
    cols_p: usize,
    strides: (usize, usize),
}

impl Geometry {
    fn mat1(i: &PadMmInput) -> Geometry {
        let s = shapes(i);
        Geometry {
            rows: i.m,
            cols: i.k,
            rows_p: s.mp,
            cols_p: s.kp,
            strides: i.mat1_strides(),
        }
    }

    fn mat2(i: &PadMmInput) -> Geometry {
        let s = shapes(i);
        Geometry {
            rows: i.k,
            cols: i.n,
            rows_p: s.kp,
            cols_p: s.np,
            strides: i.mat2_strides(),
        }
    }

    /// The stored matrix: the operand, or its transpose when the padded copy keeps a
    /// transposed source's layout: (rows, cols, padded rows, padded cols, source strides).
    fn stored(&self, transposed: bool) -> (usize, usize, usize, usize, (usize, usize)) {
        let (s0, s1) = self.strides;
        if transposed {
            (self.cols, self.rows, self.cols_p, self.rows_p, (s1, s0))
        } else {
            (self.rows, self.cols, self.rows_p, self.cols_p, (s0, s1))
        }
    }

    fn alloc(&self, cuda: &mut CudaBackend, elem: usize) -> Result<Padded, BenchError> {
        let transposed = self.strides.0 == 1 && self.strides.1 != 1 && cuda.pad_keeps_layout();
        let (_, _, rows_p, cols_p, _) = self.stored(transposed);
        let ld = cuda.padded_row_stride(cols_p, elem);
        Ok(Padded {
            buf: cuda.alloc(rows_p * ld * elem)?,
            transposed,
            ld,
        })
    }

    /// Filling `dst` from the source at `src`.
    fn copy(&self, dst: &Padded, src: &DeviceBuffer, elem: usize) -> PadCopyArgs {
        let (rows, cols, dst_rows, dst_cols, (s0, s1)) = self.stored(dst.transposed);
        PadCopyArgs {
            dst: dst.buf.ptr(),
            dst_bytes: dst.buf.bytes(),
            dst_rows,
            dst_cols,
            dst_pitch: dst.ld,
            src: src.ptr(),
            rows,
            cols,
            s0,
            s1,
            elem,
        }
    }

    /// PyTorch's `write_pad` of a pre-padded operand: zeroes `mat[-rp:, -cp:]`.
    fn write_pad(
        &self,
        cuda: &mut CudaBackend,
        dst: &Padded,
        (rp, cp): (usize, usize),
        elem: usize,
    ) -> Result<(), BenchError> {
        let (r0, c0, nr, nc) = write_pad_rect(self.rows_p, self.cols_p, rp, cp);
        let (r0, c0, nr, nc) = if dst.transposed {
            (c0, r0, nc, nr)
        } else {
            (r0, c0, nr, nc)
        };
        let at = dst.buf.ptr() + ((r0 * dst.ld + c0) * elem) as u64;
        cuda.zero_rect(at, dst.ld * elem, elem, nc, nr)
    }
}

pub(super) fn prepare_cuda(
    i: &PadMmInput,
    cuda: &mut CudaBackend,
) -> Result<CudaPrepared, BenchError> {
    let e = i.dtype.itemsize();
    let s = shapes(i);
    let a = cuda.alloc(i.m * i.k * e)?;
    let b = cuda.alloc(i.k * i.n * e)?;
    let c = cuda.alloc(i.m * i.n * e)?;
    cuda.fill_random(a.ptr(), i.m * i.k, i.dtype)?;
    cuda.fill_random(b.ptr(), i.k * i.n, i.dtype)?;
    let (g1, g2) = (Geometry::mat1(i), Geometry::mat2(i));
    let a_pad = s.pad1.then(|| g1.alloc(cuda, e)).transpose()?;
    let b_pad = s.pad2.then(|| g2.alloc(cuda, e)).transpose()?;
    let c_pad = cuda.alloc(s.mp * s.np * e)?;
    // Prepadded operands exist padded before the timed region (PyTorch pads them up front).
    if let (true, Some(ap)) = (i.mat1_padding_excluded(), &a_pad) {
        cuda.pad_copy(&g1.copy(ap, &a, e))?;
    }
    if let (true, Some(bp)) = (i.mat2_pre_padded(), &b_pad) {
        cuda.pad_copy(&g2.copy(bp, &b, e))?;
    }
    cuda.synchronize()?;
    Ok(CudaPrepared {
        a,
        b,
        c,
        a_pad,
        b_pad,
        c_pad,
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
    cuda: &mut CudaBackend,
    i: &PadMmInput,
    p: &CudaPrepared,
) -> Result<(), BenchError> {
    cuda.gemm(&orig_gemm(i, p))
}

pub(super) fn enqueue_pad(
    cuda: &mut CudaBackend,
    i: &PadMmInput,
    p: &CudaPrepared,
) -> Result<(), BenchError> {
    let e = i.dtype.itemsize();
    let s = shapes(i);
    let (mpad, kpad, npad) = i.padded_lengths();
    let mut g = orig_gemm(i, p);
    if let Some(ap) = &p.a_pad {
        let geo = Geometry::mat1(i);
        if i.mat1_padding_excluded() {
            geo.write_pad(cuda, ap, (mpad, kpad), e)?;
        } else {
            cuda.pad_copy(&geo.copy(ap, &p.a, e))?;
        }
        (g.a, g.trans_a, g.lda) = (ap.buf.ptr(), ap.transposed, ap.ld);
    }
    if let Some(bp) = &p.b_pad {
        let geo = Geometry::mat2(i);
        if i.mat2_pre_padded() {
            geo.write_pad(cuda, bp, (kpad, npad), e)?;
        } else {
            cuda.pad_copy(&geo.copy(bp, &p.b, e))?;
        }
        (g.b, g.trans_b, g.ldb) = (bp.buf.ptr(), bp.transposed, bp.ld);
    }
    g.m = s.mp;
    g.k = if s.pad1 || s.pad2 { s.kp } else { i.k };
    g.n = s.np;
    g.c = p.c_pad.ptr();
    g.ldc = s.np;
    cuda.gemm(&g)
}
