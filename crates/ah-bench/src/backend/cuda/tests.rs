use super::layout::PadStride;
use super::*;
use crate::backend::TimingConfig;

#[test]
fn missing_driver_is_reported_not_a_panic() {
    if CudaBackend::driver_present() {
        eprintln!("skipped: a CUDA driver is present (the GPU tests cover this machine)");
        return;
    }
    let err = CudaBackend::new(0, TimingConfig::PYTORCH)
        .err()
        .expect("no driver");
    assert!(matches!(err, CudaInitError::NoDriver), "{err}");
    assert!(err.to_string().contains("--device cpu"));
    assert_eq!(CudaBackend::device_count(), 0);
}

#[test]
fn padded_row_strides_are_the_ones_inductor_allocated() {
    // Buffers of Inductor's compiled pad function on the H100 (PyTorch 2.11,
    // scripts/probe_pad_strides.py): (columns, element size) -> row stride.
    for (cols, elem, stride) in [
        (62552, 2, 62592),
        (45240, 2, 45248),
        (30664, 2, 30720),
        (6088, 2, 6144),
        (2056, 2, 2112),
        (5376, 2, 5376),
        (41864, 2, 41920),
        (1024, 2, 1024),
        (1000, 2, 1000),
        (4082, 4, 4096),
        (4096, 4, 4096),
    ] {
        assert_eq!(
            PadStride::Inductor.row_stride(cols, elem),
            stride,
            "{cols} x {elem} B"
        );
        assert_eq!(PadStride::Contiguous.row_stride(cols, elem), cols);
    }
}

#[test]
fn pad_settings_accept_their_names_and_refuse_typos() {
    use super::layout::{PadCopy, PadStride};
    assert_eq!(PadCopy::parse(None), Some(PadCopy::OnePass));
    assert_eq!(PadCopy::parse(Some("tiled")), Some(PadCopy::Tiled));
    assert_eq!(
        PadCopy::parse(Some("vector16+tiled_transpose")),
        Some(PadCopy::Tiled)
    );
    assert_eq!(PadCopy::parse(Some("vectro16")), None);
    assert_eq!(PadStride::parse(None), Some(PadStride::Inductor));
    assert_eq!(
        PadStride::parse(Some("contiguous")),
        Some(PadStride::Contiguous)
    );
    assert_eq!(PadStride::parse(Some("contigous")), None);
}
