//! GPU test of the reduction kernels: every variant, op and dtype against the CPU reference.
//!
//! Skipped (with a message) where no CUDA driver can be loaded, so it passes in CI; on the GPU
//! machine it runs with the other tests (`scripts/reduction_gpu.sh`).

use ah_bench::backend::{CudaBackend, TimingConfig};
use ah_bench::dtype::DType;
use ah_bench::runners::reduction::kernels::{KernelError, Op, ReductionKernels, Variant};
use ah_bench::runners::reduction::reference;
use cudarc::driver::sys as drv;

/// (rows, cols): single elements, ragged rows, every persistent items count, the persistent
/// limit (16384 / 16385 for every block size; 8193 takes 128 items per thread at block 128),
/// long rows, many rows.
const SHAPES: &[(usize, usize)] = &[
    (1, 1),
    (3, 31),
    (2, 32),
    (5, 100),
    (4, 1000),
    (2, 4096),
    (3, 5000),
    (2, 8192),
    (2, 8193),
    (2, 16_384),
    (2, 16_385),
    (1, 40_000),
    (2, 131_072),
    (1000, 64),
];

fn poison(ptr: drv::CUdeviceptr, bytes: usize) {
    // 0xFF bytes are NaN in f32, f16 and bf16: an output the kernel does not write fails.
    // SAFETY: the caller owns `bytes` bytes at `ptr`.
    let r = unsafe { drv::cuMemsetD8_v2(ptr, 0xFF, bytes) };
    assert_eq!(r, drv::CUresult::CUDA_SUCCESS, "cuMemsetD8");
}

#[test]
fn every_variant_matches_the_cpu_reference() {
    if ah_test_support::skip_without_gpu(CudaBackend::driver_present()) {
        return;
    }
    let mut cuda = CudaBackend::new(0, TimingConfig::PYTORCH).expect("CUDA backend starts");
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut refused = 0;
    for dtype in [DType::F32, DType::F16, DType::BF16] {
        let kernels = ReductionKernels::compile(cuda.context(), dtype).expect("NVRTC compiles");
        for op in Op::ALL {
            for &(rows, cols) in SHAPES {
                let n = rows * cols;
                let x = cuda.alloc(n * dtype.itemsize()).expect("alloc x");
                let out_bytes = op.output_len(rows, cols) * dtype.itemsize();
                let y = cuda.alloc(out_bytes).expect("alloc y");
                cuda.fill_random(x.ptr(), n, dtype).expect("fill");
                let host_x = reference::decode(&cuda.download(x.ptr(), x.bytes()).unwrap(), dtype);
                assert!(
                    host_x.iter().any(|&v| v != 0.0),
                    "inputs are never all zeros"
                );
                for variant in Variant::all() {
                    let what = format!("{} {op} {rows}x{cols} {variant}", dtype.torch_name());
                    poison(y.ptr(), out_bytes);
                    let launched =
                        kernels.launch(cuda.stream(), variant, op, x.ptr(), y.ptr(), rows, cols);
                    match launched {
                        Err(KernelError::RowTooLong { .. }) if !variant.fits(cols) => {
                            refused += 1;
                            continue;
                        }
                        Err(e) => {
                            failures.push(format!("{what}: launch failed: {e}"));
                            continue;
                        }
                        Ok(()) if !variant.fits(cols) => {
                            failures.push(format!("{what}: launched a row that does not fit"));
                            continue;
                        }
                        Ok(()) => {}
                    }
                    let got = match cuda.download(y.ptr(), out_bytes) {
                        Ok(bytes) => reference::decode(&bytes, dtype),
                        Err(e) => {
                            failures.push(format!("{what}: {e}"));
                            continue;
                        }
                    };
                    checked += 1;
                    if let Err(e) = reference::check(op, dtype, &host_x, rows, cols, &got) {
                        failures.push(format!("{what}: {e}"));
                    }
                }
            }
        }
    }
    eprintln!(
        "reduction kernels: {checked} (dtype, op, shape, variant) results checked, \
         {refused} persistent launches refused (row too long), {} failures",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // 3 dtypes x 2 ops x 14 shapes x 8 variants, less the refused ones.
    assert_eq!(checked + refused, 3 * 2 * SHAPES.len() * 8);
    assert!(refused > 0 && checked > 500);
}
