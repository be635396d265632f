//! pad_mm on a real GPU: `pad` and `orig` compute the same product (and match a host f64
//! reference) for every dtype, transpose and prepadded case; a short collection writes a
//! well-formed log with H100-style metadata. Skipped (with a message) without a CUDA driver.

use ah_collect::backend::CudaBackend;
use ah_collect::dtype::DType;
use ah_collect::runners::pad_mm::{check_pad_equals_orig, check_tolerance, PadMmInput};
use ah_collect::TimingConfig;

fn gpu() -> Option<CudaBackend> {
    if ah_test_support::skip_without_gpu(CudaBackend::device_count() > 0) {
        return None;
    }
    Some(CudaBackend::new(0, TimingConfig::PYTORCH).expect("the GPU starts"))
}

/// `orig` and `pad` of `i` on the GPU both match the host reference within the dtype's tolerance.
fn assert_pad_equals_orig(cuda: &mut CudaBackend, i: &PadMmInput) {
    let r = check_pad_equals_orig(i, cuda).unwrap();
    let tol = check_tolerance(i);
    assert!(r.orig_vs_reference <= tol, "{i:?}: orig vs reference {r:?}");
    assert!(r.pad_vs_orig <= tol, "{i:?}: pad vs orig {r:?}");
}

#[test]
fn pad_equals_orig_on_the_gpu() {
    let Some(mut cuda) = gpu() else { return };
    let mut cases = 0;
    for dtype in [DType::F16, DType::BF16, DType::F32] {
        for tf32 in [false, true] {
            for (tl, tr, pl, pr) in [
                (false, false, false, false),
                (true, false, false, true),
                (false, true, true, false),
                (true, true, false, false),
                (false, false, true, true),
            ] {
                for (m, k, n) in [(37, 45, 29), (64, 45, 32), (40, 48, 33)] {
                    let i = PadMmInput {
                        m,
                        k,
                        n,
                        dtype,
                        allow_tf32: tf32,
                        transpose_left: tl,
                        transpose_right: tr,
                        prepadded_left: pl,
                        prepadded_right: pr,
                        fuse_mat1_pad: false,
                    };
                    assert_pad_equals_orig(&mut cuda, &i);
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 90);
}

#[test]
fn pad_equals_orig_with_padded_row_strides() {
    // Over 1024 columns the padded buffers' rows are 128-byte aligned (Inductor's strides):
    // the one-pass copy writes the padding's zeros inside a wider pitch.
    let Some(mut cuda) = gpu() else { return };
    for (tl, tr, pl, pr) in [
        (false, false, false, false),
        (true, true, false, false),
        (true, false, false, true),
        (false, true, true, false),
    ] {
        let i = PadMmInput {
            m: 40,
            k: 1030,
            n: 1027,
            dtype: DType::F16,
            allow_tf32: false,
            transpose_left: tl,
            transpose_right: tr,
            prepadded_left: pl,
            prepadded_right: pr,
            fuse_mat1_pad: false,
        };
        assert_pad_equals_orig(&mut cuda, &i);
    }
}

#[test]
fn short_gpu_collection_writes_a_pytorch_log() {
    if ah_test_support::skip_without_gpu(CudaBackend::device_count() > 0) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pad_mm.txt");
    // AH_COLLECT_BIN: the binary when the test runs on another machine than it was built on.
    let bin =
        std::env::var("AH_COLLECT_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_ah-collect").into());
    let status = std::process::Command::new(bin)
        .args([
            "--name",
            "pad_mm",
            "--device",
            "cuda",
            "--num-samples",
            "4",
            "--num-reps",
            "2",
            // Every input twice, even one whose choices are all long (none at this size).
            "--long-reps",
            "2",
        ])
        .args(["--max-dim", "2048", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let log = ah_log::Log::read(&out, ah_log::ReadOptions { strict: true }).unwrap();
    assert_eq!(log.rows.len(), 4 * 2 * 2);
    assert!(log
        .rows
        .iter()
        .all(|r| r.feedback.is_finite() && r.feedback > 0.0));
    let m = log.column("m").unwrap();
    if log.metadata.device() == ah_core::DeviceIdentity::H100 {
        assert!(
            log.rows
                .iter()
                .all(|r| r.values[m].as_f64().unwrap() >= 768.0),
            "precondition"
        );
    }
}
