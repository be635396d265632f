//! Starting the backend on a device, in steps: the libraries and the device are there, the
//! context, the NVRTC kernels, the device's facts, the L2 flush buffer, the timing events and
//! the versions recorded in the provenance.

use std::collections::BTreeMap;
use std::sync::Arc;

use ah_core::DeviceIdentity;
use cudarc::cublas::sys as blas_sys;
use cudarc::driver::sys as drv;
use cudarc::driver::{CudaContext, CudaEvent};

use super::buffer::alloc_raw;
use super::device::CudaBackend;
use super::error::init_err;
use super::kernels;
use super::layout::{PadCopy, PadStride};
use super::CudaInitError;
use crate::backend::{BackendInfo, BackendKind, TimingConfig};

/// The environment variable that sets when the CUDA driver loads a library's kernels.
pub const MODULE_LOADING_VAR: &str = "CUDA_MODULE_LOADING";

impl CudaBackend {
    /// Makes the CUDA driver load every kernel of a library when it loads the library
    /// (`CUDA_MODULE_LOADING=EAGER`), unless the user has set `CUDA_MODULE_LOADING`. With
    /// lazy loading, which is the driver's default, the first call of a cuBLAS kernel in a
    /// process also loads that kernel's module. On the H100 that load added 20 to 40 ms to
    /// the call. A long kernel is timed by its first call (see [`TimingConfig::long_run_ms`]),
    /// so the load landed in the measurement: for example `pad` was logged at 44 ms where it
    /// runs in 7.2 ms (docs/collection.md). Eager loading moves that cost to the process's
    /// start, where it cost 1 to 2 s (12-input collections: 29.4 s against 28.2 s, 28.7 s
    /// against 26.4 s).
    ///
    /// Call it first thing in `main`, before any thread starts and before any CUDA call: it
    /// sets an environment variable, and the driver reads it only once.
    pub fn prefer_eager_module_loading() {
        if std::env::var_os(MODULE_LOADING_VAR).is_none() {
            std::env::set_var(MODULE_LOADING_VAR, "EAGER");
        }
    }

    /// `CUDA_MODULE_LOADING` as this process sees it (`None`: unset, so the driver's lazy
    /// default), for the provenance.
    pub fn module_loading() -> Option<String> {
        std::env::var(MODULE_LOADING_VAR).ok()
    }

    /// True when the CUDA driver library can be loaded (no context is created).
    pub fn driver_present() -> bool {
        // SAFETY: only tries to dlopen the driver library.
        unsafe { drv::is_culib_present() }
    }

    /// Number of visible CUDA devices (0 without a driver).
    pub fn device_count() -> usize {
        if !Self::driver_present() {
            return 0;
        }
        CudaContext::device_count()
            .map(|c| c.max(0) as usize)
            .unwrap_or(0)
    }

    /// Starts the backend on device `ordinal`: context, stream, cuBLAS handle, NVRTC kernels,
    /// the L2 flush buffer and the timing events. Binds the context to the calling thread.
    pub fn new(ordinal: usize, timing: TimingConfig) -> Result<Self, CudaInitError> {
        check_available(ordinal)?;
        let ctx = open_context(ordinal)?;
        let stream = ctx.default_stream();
        let blas = cudarc::cublas::CudaBlas::new(stream.clone())
            .map_err(|e| CudaInitError::Cuda(format!("cuBLAS: {e:?}")))?;
        let kernels = kernels::load(&ctx)?;
        let mut info = device_info(&ctx, ordinal)?;
        let flush =
            alloc_raw(info.l2_bytes as usize).map_err(|e| CudaInitError::Cuda(e.to_string()))?;
        let events = timing_events(&ctx, &timing)?;
        info.versions = library_versions(&blas);
        let pad_copy = PadCopy::from_env()?;
        info.versions
            .insert("pad_copy_kernel".into(), pad_copy.name().into());
        let pad_stride = PadStride::from_env()?;
        info.versions
            .insert("pad_row_stride".into(), pad_stride.name().into());
        Ok(Self {
            ctx,
            stream,
            blas,
            kernels,
            flush,
            events,
            timing,
            info,
            fill_seed: 0,
            pad_copy,
            pad_stride,
            after_long: false,
        })
    }
}

/// The driver, cuBLAS and NVRTC can be loaded and device `ordinal` exists.
fn check_available(ordinal: usize) -> Result<(), CudaInitError> {
    if !CudaBackend::driver_present() {
        return Err(CudaInitError::NoDriver);
    }
    // SAFETY: dlopen probes only.
    if !unsafe { blas_sys::is_culib_present() } {
        return Err(CudaInitError::MissingLibrary("libcublas (cuBLAS 13)"));
    }
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(CudaInitError::MissingLibrary("libnvrtc (NVRTC 13)"));
    }
    let count = CudaContext::device_count().map_err(|e| CudaInitError::Cuda(format!("{e:?}")))?;
    if ordinal as i64 >= i64::from(count) {
        return Err(CudaInitError::NoDevice { ordinal, count });
    }
    Ok(())
}

/// The context of device `ordinal`, bound to the calling thread, without event tracking.
fn open_context(ordinal: usize) -> Result<Arc<CudaContext>, CudaInitError> {
    let ctx = CudaContext::new(ordinal).map_err(init_err)?;
    // We synchronise by hand (one stream, events we record ourselves).
    // SAFETY: called before any CudaSlice exists; all work goes to one stream.
    unsafe { ctx.disable_event_tracking() };
    ctx.bind_to_thread().map_err(init_err)?;
    Ok(ctx)
}

/// The device's facts; `l2_bytes` is the size of the L2 flush buffer, `versions` is empty.
fn device_info(ctx: &Arc<CudaContext>, ordinal: usize) -> Result<BackendInfo, CudaInitError> {
    let attr = |a| ctx.attribute(a).map_err(init_err);
    let l2 = attr(drv::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?.max(0) as usize;
    let smem =
        attr(drv::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
    let (major, minor) = ctx.compute_capability().map_err(init_err)?;
    let total_memory = ctx.total_mem().map_err(init_err)? as u64;
    let name = ctx.name().map_err(init_err)?;
    // PyTorch flushes with a buffer of the L2 size (256 MiB when unknown).
    let flush_bytes = if l2 > 0 { l2 } else { 256 << 20 };
    Ok(BackendInfo {
        kind: BackendKind::Cuda,
        device_name: name,
        ordinal,
        capability: (major as u32, minor as u32),
        identity: DeviceIdentity {
            shared_memory: smem.max(0) as u64,
            device_capa: (major as u32, minor as u32),
        },
        total_memory,
        l2_bytes: flush_bytes as u64,
        versions: BTreeMap::new(),
    })
}

/// One pair of events per run: the warm-up, the estimation runs and the timed runs.
fn timing_events(
    ctx: &Arc<CudaContext>,
    timing: &TimingConfig,
) -> Result<Vec<(CudaEvent, CudaEvent)>, CudaInitError> {
    let n_events = (timing.estimation_runs.max(1) + timing.max_runs) as usize + 1;
    let mut events = Vec::with_capacity(n_events);
    for _ in 0..n_events {
        let flags = Some(drv::CUevent_flags::CU_EVENT_DEFAULT);
        events.push((
            ctx.new_event(flags).map_err(init_err)?,
            ctx.new_event(flags).map_err(init_err)?,
        ));
    }
    Ok(events)
}

/// Versions of the driver API, cuBLAS, NVRTC, the NVIDIA kernel driver and cudarc, each where
/// it can be read.
fn library_versions(blas: &cudarc::cublas::CudaBlas) -> BTreeMap<String, String> {
    let mut versions = BTreeMap::new();
    let mut v: i32 = 0;
    // SAFETY: plain version queries into a local.
    if unsafe { drv::cuDriverGetVersion(&mut v) } == drv::CUresult::CUDA_SUCCESS {
        versions.insert(
            "cuda_driver_api".into(),
            format!("{}.{}", v / 1000, (v % 1000) / 10),
        );
    }
    let mut bv: i32 = 0;
    if unsafe { blas_sys::cublasGetVersion_v2(*blas.handle(), &mut bv) }
        == blas_sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS
    {
        versions.insert(
            "cublas".into(),
            format!("{}.{}.{}", bv / 10000, (bv % 10000) / 100, bv % 100),
        );
    }
    let (mut nmaj, mut nmin) = (0, 0);
    if unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut nmaj, &mut nmin) }
        == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS
    {
        versions.insert("nvrtc".into(), format!("{nmaj}.{nmin}"));
    }
    if let Some(ver) = nvidia_driver_version() {
        versions.insert("nvidia_driver".into(), ver);
    }
    versions.insert("cudarc".into(), "0.19".into());
    versions
}

/// The NVIDIA kernel driver's version, from `/proc/driver/nvidia/version`.
fn nvidia_driver_version() -> Option<String> {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
    // "NVRM version: NVIDIA UNIX ... Kernel Module ... 580.159.04 ...": the first x.y.z.
    let is_version = |w: &&str| {
        w.split('.').count() >= 2
            && w.split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    text.lines()
        .next()
        .and_then(|l| l.split_whitespace().find(is_version))
        .map(str::to_string)
}
