//! Device memory: [`DeviceBuffer`] (a plain `cuMemAlloc` allocation, freed on drop), its
//! allocation and the copy back to the host.

use std::ffi::c_void;

use cudarc::driver::sys as drv;

use super::{check, drv_err, CudaBackend};
use crate::backend::BenchError;

/// A device allocation, freed on drop.
#[derive(Debug)]
pub struct DeviceBuffer {
    pub(super) ptr: drv::CUdeviceptr,
    pub(super) bytes: usize,
}

impl DeviceBuffer {
    /// The device address.
    pub fn ptr(&self) -> drv::CUdeviceptr {
        self.ptr
    }
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.ptr != 0 {
            // SAFETY: `ptr` came from cuMemAlloc in this process's context and is freed once.
            unsafe {
                let _ = drv::cuMemFree_v2(self.ptr);
            }
        }
    }
}

impl CudaBackend {
    /// Allocates `bytes` of device memory.
    pub fn alloc(&mut self, bytes: usize) -> Result<DeviceBuffer, BenchError> {
        self.ctx.bind_to_thread().map_err(drv_err)?;
        alloc_raw(bytes)
    }

    /// Waits for the stream, then copies `bytes` bytes at `ptr` to a host vector.
    pub fn download(&mut self, ptr: drv::CUdeviceptr, bytes: usize) -> Result<Vec<u8>, BenchError> {
        self.synchronize()?;
        let mut host = vec![0u8; bytes];
        // SAFETY: `host` has `bytes` bytes; the device range is the caller's.
        check(unsafe { drv::cuMemcpyDtoH_v2(host.as_mut_ptr().cast::<c_void>(), ptr, bytes) })?;
        Ok(host)
    }
}

pub(super) fn alloc_raw(bytes: usize) -> Result<DeviceBuffer, BenchError> {
    let mut ptr: drv::CUdeviceptr = 0;
    // SAFETY: plain allocation into a local; freed by DeviceBuffer's Drop.
    check(unsafe { drv::cuMemAlloc_v2(&mut ptr, bytes.max(1)) })?;
    Ok(DeviceBuffer { ptr, bytes })
}
