//! Work enqueued on the stream besides GEMMs: random fill, zeroing (whole buffers and
//! rectangles) and the strided 2-D copies into padded buffers.

use cudarc::driver::sys as drv;
use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::{check, drv_err, CudaBackend, PadCopy};
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

    /// Copies a `rows` x `cols` strided matrix (`src[r * s0 + c * s1]`) into the top-left of
    /// a row-major buffer with `dst_cols` columns. Element size 2 or 4 bytes.
    #[allow(clippy::too_many_arguments)]
    pub fn copy2d(
        &mut self,
        dst: drv::CUdeviceptr,
        src: drv::CUdeviceptr,
        rows: usize,
        cols: usize,
        s0: usize,
        s1: usize,
        dst_cols: usize,
        elem: usize,
    ) -> Result<(), BenchError> {
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        if self.pad_copy == PadCopy::Tiled && s0 == 1 && s1 != 1 {
            return self.copy2d_transposed(dst, src, rows, cols, s1, dst_cols, elem);
        }
        let vec = self.pad_copy != PadCopy::Scalar && (dst_cols * elem).is_multiple_of(16);
        let name = match (elem, vec) {
            (2, false) => "ah_copy2d_u16",
            (4, false) => "ah_copy2d_u32",
            (2, true) => "ah_copy2d_vec_u16",
            (4, true) => "ah_copy2d_vec_u32",
            _ => return Err(BenchError::Other(format!("copy2d: element size {elem}"))),
        };
        let f = &self.kernels[name];
        let per_thread = if vec { 16 / elem } else { 1 };
        let gx = cols.div_ceil(per_thread).div_ceil(256).clamp(1, 1024) as u32;
        let gy = rows.clamp(1, 65_535) as u32;
        let cfg = LaunchConfig {
            grid_dim: (gx, gy, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let (rows, cols, s0, s1, dst_cols) = (
            rows as i64,
            cols as i64,
            s0 as i64,
            s1 as i64,
            dst_cols as i64,
        );
        let mut b = self.stream.launch_builder(f);
        b.arg(&dst)
            .arg(&src)
            .arg(&rows)
            .arg(&cols)
            .arg(&s0)
            .arg(&s1)
            .arg(&dst_cols);
        // SAFETY: the caller guarantees both buffers cover the addressed elements.
        unsafe { b.launch(cfg) }.map_err(drv_err)?;
        Ok(())
    }

    /// [`Self::copy2d`] of a transposed source (`src[r + c * s1]`): 32 x 32 tiles, 32 x 8
    /// threads a block.
    #[allow(clippy::too_many_arguments)]
    fn copy2d_transposed(
        &mut self,
        dst: drv::CUdeviceptr,
        src: drv::CUdeviceptr,
        rows: usize,
        cols: usize,
        s1: usize,
        dst_cols: usize,
        elem: usize,
    ) -> Result<(), BenchError> {
        let name = match elem {
            2 => "ah_copy2d_t_u16",
            4 => "ah_copy2d_t_u32",
            _ => return Err(BenchError::Other(format!("copy2d: element size {elem}"))),
        };
        let f = &self.kernels[name];
        let cfg = LaunchConfig {
            grid_dim: (
                rows.div_ceil(32).clamp(1, 1 << 20) as u32,
                cols.div_ceil(32).clamp(1, 65_535) as u32,
                1,
            ),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let (rows, cols, s1, dst_cols) = (rows as i64, cols as i64, s1 as i64, dst_cols as i64);
        let mut b = self.stream.launch_builder(f);
        b.arg(&dst)
            .arg(&src)
            .arg(&rows)
            .arg(&cols)
            .arg(&s1)
            .arg(&dst_cols);
        // SAFETY: the caller guarantees both buffers cover the addressed elements.
        unsafe { b.launch(cfg) }.map_err(drv_err)?;
        Ok(())
    }
}
