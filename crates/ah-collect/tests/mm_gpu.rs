//! mm on a real GPU: every cuBLASLt candidate (and `extern_mm`) computes the same product as
//! cuBLAS's default GEMM for every dtype and transpose combination; candidate ids are unique
//! and parse back; a short collection writes a well-formed PyTorch mm log. Skipped (with a
//! message) without a CUDA driver.

use ah_collect::backend::CudaBackend;
use ah_collect::dtype::DType;
use ah_collect::runners::mm::{
    check_against_reference, check_tolerance, AlgoConfig, MmInput, ShapeSource, EXTERN_MM,
};
use ah_collect::TimingConfig;

fn gpu() -> Option<CudaBackend> {
    if ah_test_support::skip_without_gpu(CudaBackend::device_count() > 0) {
        return None;
    }
    Some(CudaBackend::new(0, TimingConfig::PYTORCH).expect("the GPU starts"))
}

#[test]
fn every_candidate_matches_cublas() {
    let Some(mut cuda) = gpu() else { return };
    let mut checked = 0;
    let mut ids = std::collections::BTreeSet::new();
    for dtype in [DType::F16, DType::BF16, DType::F32] {
        for (trans_a, trans_b) in [(false, false), (true, false), (false, true), (true, true)] {
            // Small, odd, skinny and split-K-friendly (small m n, large k) shapes.
            for (m, k, n) in [(64, 96, 80), (1, 512, 256), (130, 72, 24), (32, 4096, 64)] {
                let i = MmInput {
                    m,
                    k,
                    n,
                    dtype,
                    trans_a,
                    trans_b,
                    source: ShapeSource::Random,
                };
                let checks = check_against_reference(&i, &mut cuda, 16).unwrap();
                assert!(checks.len() >= 2, "{i:?}: only {} choice(s)", checks.len());
                assert_eq!(checks[0].choice, EXTERN_MM);
                let mut seen = std::collections::BTreeSet::new();
                for c in &checks {
                    assert!(
                        seen.insert(c.choice.clone()),
                        "{i:?}: duplicate {}",
                        c.choice
                    );
                    if c.choice != EXTERN_MM {
                        let cfg = AlgoConfig::parse(&c.choice).expect("an algorithm id");
                        assert_eq!(cfg.choice_id(), c.choice);
                        ids.insert(c.choice.clone());
                    }
                    assert!(
                        c.rel_err <= check_tolerance(dtype),
                        "{i:?}: {} differs from cuBLAS by {:.3e}",
                        c.choice,
                        c.rel_err
                    );
                    checked += 1;
                }
            }
        }
    }
    eprintln!(
        "{checked} (input, algorithm) results matched cuBLAS; {} distinct algorithm ids",
        ids.len()
    );
    assert!(checked >= 48 * 2);
}

#[test]
fn short_gpu_collection_writes_a_pytorch_mm_log() {
    if ah_test_support::skip_without_gpu(CudaBackend::device_count() > 0) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mm.txt");
    // AH_COLLECT_BIN: the binary when the test runs on another machine than it was built on.
    let bin =
        std::env::var("AH_COLLECT_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_ah-collect").into());
    let status = std::process::Command::new(bin)
        .args([
            "--name",
            "cublaslt_mm",
            "--device",
            "cuda",
            "--num-samples",
            "3",
            "--num-reps",
            "1",
        ])
        .args([
            "--budget-ms",
            "2",
            "--max-dim",
            "4096",
            "--seed",
            "7",
            "--out",
        ])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let log = ah_log::Log::read(&out, ah_log::ReadOptions { strict: true }).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text
        .lines()
        .next()
        .unwrap()
        .contains(r#""name": "cublaslt_mm""#));
    assert_eq!(
        text.lines().nth(1).unwrap(),
        "m,k,n,mat1_dtype,mat2_dtype,mat1_stride_0,mat1_stride_1,mat2_stride_0,mat2_stride_1,mat1_iscontig,mat2_iscontig,using_tf32,choice,feedback"
    );
    let externs = log
        .rows
        .iter()
        .filter(|r| log.choice_name(r) == EXTERN_MM)
        .count();
    assert_eq!(externs, 3, "one extern_mm row per input");
    assert!(log.rows.len() >= 3 * 3, "several algorithms per input");
    assert!(log
        .rows
        .iter()
        .all(|r| r.feedback.is_finite() && r.feedback > 0.0));
}
