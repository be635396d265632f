//! `ah-collect check`: the GPU self-check of pad_mm's kernels.

use std::io::Write as _;
use std::process::ExitCode;

use ah_collect::backend::CudaBackend;
use ah_collect::TimingConfig;

/// `ah-collect check`: pad and orig against a host reference on every case.
pub(crate) fn check(device: usize) -> anyhow::Result<ExitCode> {
    use ah_collect::dtype::DType;
    use ah_collect::runners::pad_mm::{check_pad_equals_orig, check_tolerance, PadMmInput};
    let mut cuda = CudaBackend::new(device, TimingConfig::PYTORCH)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "device: {} ({:?})",
        cuda.info().device_name,
        cuda.info().identity
    )?;
    writeln!(
        out,
        "dtype           tf32  m    k    n    tl tr pl pr  orig_vs_ref  pad_vs_orig  ok"
    )?;
    let mut bad = 0;
    for dtype in [DType::F16, DType::BF16, DType::F32] {
        for tf32 in [false, true] {
            if dtype != DType::F32 && !tf32 {
                continue;
            }
            for (tl, tr, pl, pr) in [
                (false, false, false, false),
                (true, false, false, false),
                (false, true, false, false),
                (true, true, false, false),
                (false, false, true, false),
                (false, false, false, true),
                (false, false, true, true),
                (true, false, false, true),
            ] {
                for (m, k, n) in [
                    (37, 45, 29),
                    (64, 45, 32),
                    (40, 48, 33),
                    (129, 96, 96),
                    (40, 1030, 1027),
                ] {
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
                    let r = check_pad_equals_orig(&i, &mut cuda)?;
                    let tol = check_tolerance(&i);
                    let ok = r.orig_vs_reference <= tol && r.pad_vs_orig <= tol;
                    if !ok {
                        bad += 1;
                    }
                    writeln!(
                        out,
                        "{:15} {:5} {m:4} {k:4} {n:4} {} {} {} {}   {:.2e}     {:.2e}     {}",
                        dtype.torch_name(),
                        tf32,
                        tl as u8,
                        tr as u8,
                        pl as u8,
                        pr as u8,
                        r.orig_vs_reference,
                        r.pad_vs_orig,
                        if ok { "ok" } else { "FAIL" }
                    )?;
                }
            }
        }
    }
    if bad > 0 {
        eprintln!("error: {bad} case(s) out of tolerance");
        return Ok(ExitCode::from(2));
    }
    writeln!(out, "all cases within tolerance")?;
    Ok(ExitCode::SUCCESS)
}
