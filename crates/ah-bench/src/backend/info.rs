//! What is known of a backend's device ([`BackendInfo`], of a [`BackendKind`]): what the
//! provenance sidecar records, and the runtime's fingerprint of it.

use std::fmt;

use ah_core::DeviceIdentity;
use serde::Serialize;

/// The kind of backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// An NVIDIA GPU through the CUDA driver, cuBLAS and NVRTC.
    Cuda,
    /// The host CPU.
    Cpu,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Cuda => "cuda",
            BackendKind::Cpu => "cpu",
        })
    }
}

/// What the provenance sidecar records about a backend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackendInfo {
    /// `cuda` or `cpu`.
    pub kind: BackendKind,
    /// Device name (`NVIDIA H100 80GB HBM3`, or the CPU model).
    pub device_name: String,
    /// Device ordinal (GPU) or 0.
    pub ordinal: usize,
    /// Compute capability, `(0, 0)` on the CPU.
    pub capability: (u32, u32),
    /// The identity written into the log's metadata.
    pub identity: DeviceIdentity,
    /// Total memory in bytes.
    pub total_memory: u64,
    /// L2 cache size in bytes (the flush buffer's size); 0 when unknown.
    pub l2_bytes: u64,
    /// Library versions (`driver`, `cublas`, `nvrtc`, `cpu_gemm`, ...).
    pub versions: std::collections::BTreeMap<String, String>,
}

impl BackendInfo {
    /// The runtime's device fingerprint (what a cached pick is guarded by): device name
    /// (`non_cuda_device` on the CPU, as PyTorch), identity, driver and library versions (not
    /// the number of available CPUs).
    pub fn fingerprint(&self) -> ah_runtime::DeviceFingerprint {
        let name = match self.kind {
            BackendKind::Cuda => self.device_name.clone(),
            BackendKind::Cpu => "non_cuda_device".to_string(),
        };
        let mut f = ah_runtime::DeviceFingerprint::new(name, self.identity);
        f.driver_version = self
            .versions
            .get("nvidia_driver")
            .cloned()
            .unwrap_or_default();
        f.library_versions = self.versions.clone();
        // The CPU count (`taskset`, containers) changes no pick: not part of the guard.
        f.library_versions.remove("available_parallelism");
        f
    }
}
