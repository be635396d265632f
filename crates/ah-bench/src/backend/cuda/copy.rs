//! Work enqueued on the stream besides GEMMs: random fill, zeroing (whole buffers and
//! rectangles) and the strided 2-D copies into padded buffers.

use cudarc::driver::sys as drv;
use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::device::CudaBackend;
use super::error::{check, drv_err};
use super::layout::PadCopy;
use super::PadCopyArgs;
use crate::backend::BenchError;
use crate::dtype::DType;

impl CudaBackend {
    /// Fills `n` elements at `ptr` with uniform random values in [-1, 1) (never zeros).
    pub fn fill_random(
        &mut self,
        ptr: drv::CUdeviceptr,
        n: usize,
        dtype: DType,
    ) -> Result<(), BenchError> {
        self.fill_seed = self.fill_seed.wrapping_add(1);
        let name = match dtype {
            DType::F32 => "ah_fill_f32",
            DType::F16 => "ah_fill_f16",
            DType::BF16 => "ah_fill_bf16",
        };
        let f = &self.kernels[name];
        let n64 = n as u64;
        let blocks = n.div_ceil(256).clamp(1, 65_535 * 8) as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let seed = self.fill_seed;
        let mut b = self.stream.launch_builder(f);
        b.arg(&ptr).arg(&n64).arg(&seed);
        // SAFETY: the kernel writes n elements of the dtype's size at ptr, which the caller
        // allocated with at least that size.
        unsafe { b.launch(cfg) }.map_err(drv_err)?;
        Ok(())
    }

    /// Sets `bytes` bytes at `ptr` to zero (stream-ordered).
    pub fn zero(&mut self, ptr: drv::CUdeviceptr, bytes: usize) -> Result<(), BenchError> {
        let s = self.stream.cu_stream();
        // SAFETY: the caller owns `bytes` bytes at `ptr` (allocations are 256-byte aligned).
        check(unsafe {
            if bytes.is_multiple_of(4) {
                drv::cuMemsetD32Async(ptr, 0, bytes / 4, s)
            } else {
                drv::cuMemsetD8Async(ptr, 0, bytes, s)
            }
        })
    }

    /// Zeroes a `height` x `width` rectangle of `elem` byte elements in a row-major buffer
    /// of row pitch `pitch_bytes` (PyTorch's `mat[-r:, -c:].fill_(0)`).
    pub fn zero_rect(
        &mut self,
        ptr: drv::CUdeviceptr,
        pitch_bytes: usize,
        elem: usize,
        width: usize,
        height: usize,
    ) -> Result<(), BenchError> {
        if width == 0 || height == 0 {
            return Ok(());
        }
        let s = self.stream.cu_stream();
        // SAFETY: the rectangle lies inside the caller's buffer.
        check(unsafe {
            match elem {
                2 => drv::cuMemsetD2D16Async(ptr, pitch_bytes, 0, width, height, s),
                4 => drv::cuMemsetD2D32Async(ptr, pitch_bytes, 0, width, height, s),
                _ => drv::cuMemsetD2D8Async(ptr, pitch_bytes, 0, width * elem, height, s),
            }
        })
    }

    /// Fills a padded operand: the strided source at the top left of its padded buffer, zeros
    /// in the padding, with the kernels `AH_PAD_COPY` selects (`PadCopy`): one pass by
    /// default, as a compiled program's pad kernel; a whole-buffer zero fill and then the copy
    /// for the eager modes, as eager PyTorch's `constant_pad_nd`.
    pub fn pad_copy(&mut self, a: &PadCopyArgs) -> Result<(), BenchError> {
        if a.rows == 0 || a.cols == 0 {
            return self.zero(a.dst, a.dst_bytes);
        }
        if self.pad_copy == PadCopy::OnePass {
            return self.copy2d(a, a.dst_rows, a.dst_cols);
        }
        self.zero(a.dst, a.dst_bytes)?;
        self.copy2d(a, a.rows, a.cols)
    }

    /// Writes the `out_rows` x `out_cols` top-left block of `a.dst`: the source where it
    /// lies, zeros elsewhere (rounded up to whole 16-byte stores by the vector kernel).
    fn copy2d(
        &mut self,
        a: &PadCopyArgs,
        out_rows: usize,
        out_cols: usize,
    ) -> Result<(), BenchError> {
        let transposed = a.s0 == 1 && a.s1 != 1;
        let vec = (a.dst_pitch * a.elem).is_multiple_of(16);
        let (kind, cfg) = match self.pad_copy {
            PadCopy::Tiled | PadCopy::OnePass if transposed => {
                ("t", tiled_config(out_rows, out_cols))
            }
            PadCopy::Scalar => ("", row_config(out_rows, out_cols, 1)),
            _ if vec => ("vec", row_config(out_rows, out_cols, 16 / a.elem)),
            _ => ("", row_config(out_rows, out_cols, 1)),
        };
        let name = match (kind, a.elem) {
            ("t", 2) => "ah_copy2d_t_u16",
            ("t", 4) => "ah_copy2d_t_u32",
            ("vec", 2) => "ah_copy2d_vec_u16",
            ("vec", 4) => "ah_copy2d_vec_u32",
            (_, 2) => "ah_copy2d_u16",
            (_, 4) => "ah_copy2d_u32",
            _ => {
                return Err(BenchError::Other(format!(
                    "copy2d: element size {}",
                    a.elem
                )))
            }
        };
        let f = &self.kernels[name];
        let args: [i64; 7] =
            [a.rows, a.cols, a.s0, a.s1, a.dst_pitch, out_rows, out_cols].map(|v| v as i64);
        let mut b = self.stream.launch_builder(f);
        b.arg(&a.dst).arg(&a.src);
        for v in &args {
            b.arg(v);
        }
        // SAFETY: the caller guarantees the source covers `rows` x `cols` through its strides
        // and the destination `dst_rows` rows of `dst_pitch` elements.
        unsafe { b.launch(cfg) }.map_err(drv_err)?;
        Ok(())
    }
}

/// One row of blocks per row, 256 threads of `per_thread` elements along it.
fn row_config(rows: usize, cols: usize, per_thread: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            cols.div_ceil(per_thread).div_ceil(256).clamp(1, 1024) as u32,
            rows.clamp(1, 65_535) as u32,
            1,
        ),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// 32 x 32 tiles, 32 x 8 threads a block (the transposing kernel).
fn tiled_config(rows: usize, cols: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            rows.div_ceil(32).clamp(1, 1 << 20) as u32,
            cols.div_ceil(32).clamp(1, 65_535) as u32,
            1,
        ),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    }
}
