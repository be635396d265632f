//! pad_mm on the CPU (fp32 only): host buffers of an input, and the `orig` and `pad` choices
//! as host GEMMs.

use super::{shapes, write_pad_rect, PadMmInput};
use crate::backend::cpu::sgemm;
use crate::backend::BenchError;
use crate::dtype::DType;

/// Host buffers of one input on the CPU.
#[derive(Debug)]
pub struct CpuPrepared {
    pub(super) a: Vec<f32>,
    pub(super) b: Vec<f32>,
    pub(super) c: Vec<f32>,
    pub(super) a_pad: Option<Vec<f32>>,
    pub(super) b_pad: Option<Vec<f32>>,
    pub(super) c_pad: Vec<f32>,
}

fn cpu_fill(v: &mut [f32], seed: u64) {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for e in v.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *e = ((x >> 40) as f32) * (2.0 / 16_777_216.0) - 1.0;
    }
}

pub(super) fn prepare_cpu(i: &PadMmInput) -> Result<CpuPrepared, BenchError> {
    if i.dtype != DType::F32 {
        return Err(BenchError::Unsupported(format!(
            "CPU pad_mm runs fp32 only, not {}",
            i.dtype.torch_name()
        )));
    }
    let s = shapes(i);
    let mut a = vec![0f32; i.m * i.k];
    let mut b = vec![0f32; i.k * i.n];
    cpu_fill(&mut a, (i.m * 31 + i.k) as u64);
    cpu_fill(&mut b, (i.k * 37 + i.n) as u64);
    let mut p = CpuPrepared {
        a,
        b,
        c: vec![0f32; i.m * i.n],
        a_pad: s.pad1.then(|| vec![0f32; s.mp * s.kp]),
        b_pad: s.pad2.then(|| vec![0f32; s.kp * s.np]),
        c_pad: vec![0f32; s.mp * s.np],
    };
    if i.mat1_padding_excluded() {
        if let Some(ap) = p.a_pad.as_mut() {
            host_pad_copy(ap, &p.a, i.m, i.k, i.mat1_strides(), s.kp);
        }
    }
    if i.mat2_pre_padded() {
        if let Some(bp) = p.b_pad.as_mut() {
            host_pad_copy(bp, &p.b, i.k, i.n, i.mat2_strides(), s.np);
        }
    }
    Ok(p)
}

/// constant_pad_nd on the host: zero the destination, copy the strided source in.
fn host_pad_copy(
    dst: &mut [f32],
    src: &[f32],
    rows: usize,
    cols: usize,
    (s0, s1): (usize, usize),
    dst_cols: usize,
) {
    dst.fill(0.0);
    for r in 0..rows {
        let d = &mut dst[r * dst_cols..r * dst_cols + cols];
        if s1 == 1 {
            d.copy_from_slice(&src[r * s0..r * s0 + cols]);
        } else {
            for (c, x) in d.iter_mut().enumerate() {
                *x = src[r * s0 + c * s1];
            }
        }
    }
}

/// PyTorch's `write_pad` on the host: zeroes the padding rectangle ([`write_pad_rect`]) of a
/// row-major `rows x cols` buffer that already holds the input.
fn host_write_pad(dst: &mut [f32], rows: usize, cols: usize, rp: usize, cp: usize) {
    let (r0, c0, nr, nc) = write_pad_rect(rows, cols, rp, cp);
    for r in r0..r0 + nr {
        dst[r * cols + c0..r * cols + c0 + nc].fill(0.0);
    }
}

pub(super) fn cpu_orig(i: &PadMmInput, p: &mut CpuPrepared) {
    sgemm(
        i.m,
        i.k,
        i.n,
        &p.a,
        i.mat1_strides(),
        &p.b,
        i.mat2_strides(),
        &mut p.c,
        i.n,
    );
}

pub(super) fn cpu_pad(i: &PadMmInput, p: &mut CpuPrepared) {
    let s = shapes(i);
    let (mpad, kpad, npad) = i.padded_lengths();
    if let Some(ap) = p.a_pad.as_mut() {
        if i.mat1_padding_excluded() {
            host_write_pad(ap, s.mp, s.kp, mpad, kpad);
        } else {
            host_pad_copy(ap, &p.a, i.m, i.k, i.mat1_strides(), s.kp);
        }
    }
    if let Some(bp) = p.b_pad.as_mut() {
        if i.mat2_pre_padded() {
            host_write_pad(bp, s.kp, s.np, kpad, npad);
        } else {
            host_pad_copy(bp, &p.b, i.k, i.n, i.mat2_strides(), s.np);
        }
    }
    let (a, a_strides) = match &p.a_pad {
        Some(ap) => (ap.as_slice(), (s.kp, 1)),
        None => (p.a.as_slice(), i.mat1_strides()),
    };
    let (b, b_strides) = match &p.b_pad {
        Some(bp) => (bp.as_slice(), (s.np, 1)),
        None => (p.b.as_slice(), i.mat2_strides()),
    };
    let k = if s.pad1 || s.pad2 { s.kp } else { i.k };
    sgemm(
        s.mp,
        k,
        s.np,
        a,
        a_strides,
        b,
        b_strides,
        &mut p.c_pad,
        s.np,
    );
}
