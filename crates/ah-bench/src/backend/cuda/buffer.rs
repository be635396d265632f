//! Device memory: [`DeviceBuffer`] (a plain `cuMemAlloc` allocation, freed on drop) and its
//! allocation ([`CudaBackend::alloc`](super::CudaBackend::alloc) binds the context first).

use cudarc::driver::sys as drv;

use super::error::check;
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

pub(super) fn alloc_raw(bytes: usize) -> Result<DeviceBuffer, BenchError> {
    let mut ptr: drv::CUdeviceptr = 0;
    // SAFETY: plain allocation into a local; freed by DeviceBuffer's Drop.
    check(unsafe { drv::cuMemAlloc_v2(&mut ptr, bytes.max(1)) })?;
    Ok(DeviceBuffer { ptr, bytes })
}
