//! How padded operands are laid out and copied: the row stride of a padded buffer
//! (`AH_PAD_STRIDE`) and the copy kernels that fill it (`AH_PAD_COPY`), both recorded in the
//! provenance.

use super::CudaInitError;

/// The value of a measurement setting in the environment: `None` when unset or empty; an error
/// when it is not Unicode.
fn setting(
    variable: &'static str,
    expected: &'static str,
) -> Result<Option<String>, CudaInitError> {
    match std::env::var(variable) {
        Ok(v) if v.is_empty() => Ok(None),
        Ok(v) => Ok(Some(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => Err(CudaInitError::Setting {
            variable,
            value: v.to_string_lossy().into_owned(),
            expected,
        }),
    }
}

/// The row stride of a padded buffer (`AH_PAD_STRIDE`, recorded in the provenance as
/// `pad_row_stride`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PadStride {
    /// Rows packed: the stride is the padded column count (`AH_PAD_STRIDE=contiguous`), as
    /// eager PyTorch's `constant_pad_nd` allocates (distribution versions before 3 / 4).
    Contiguous,
    /// The default: Inductor's comprehensive padding (`ir.Layout._pad_strides`), as a compiled
    /// program allocates the padded operands: a row of more than 1024 elements whose stride is
    /// not a multiple of 128 bytes gets its stride rounded up to one. cuBLAS runs up to 1.7x
    /// faster on such rows (measured on the H100: docs/collection.md).
    Inductor,
}

impl PadStride {
    const EXPECTED: &'static str = "contiguous, inductor";

    /// `AH_PAD_STRIDE` (unset: [`PadStride::Inductor`]); an unknown value is an error.
    pub(super) fn from_env() -> Result<PadStride, CudaInitError> {
        let value = setting("AH_PAD_STRIDE", Self::EXPECTED)?;
        Self::parse(value.as_deref()).ok_or_else(|| CudaInitError::Setting {
            variable: "AH_PAD_STRIDE",
            value: value.unwrap_or_default(),
            expected: Self::EXPECTED,
        })
    }

    /// The setting of a value (`None`: the default), by its short or recorded name.
    pub(super) fn parse(value: Option<&str>) -> Option<PadStride> {
        match value {
            None | Some("inductor") => Some(PadStride::Inductor),
            Some("contiguous") => Some(PadStride::Contiguous),
            Some(v) if v == PadStride::Inductor.name() => Some(PadStride::Inductor),
            Some(_) => None,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            PadStride::Contiguous => "contiguous",
            PadStride::Inductor => "inductor_128_bytes_above_1024",
        }
    }

    /// The row stride, in elements, of a row-major buffer of `cols` columns of `elem` bytes.
    pub(super) fn row_stride(self, cols: usize, elem: usize) -> usize {
        let align = 128 / elem;
        match self {
            PadStride::Inductor if cols > 1024 && !cols.is_multiple_of(align) => {
                cols.next_multiple_of(align)
            }
            _ => cols,
        }
    }
}

/// Which kernels copy an operand into its padded buffer (`AH_PAD_COPY`, recorded in the
/// provenance as `pad_copy_kernel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PadCopy {
    /// One element per thread, gathered through the strides (`AH_PAD_COPY=scalar`).
    Scalar,
    /// 16-byte stores, gathered through the strides (`AH_PAD_COPY=vector16`): what eager
    /// PyTorch pays; slow for a transposed source.
    Vector16,
    /// `Vector16` for a row-major source, a tiled transpose through shared memory for a
    /// transposed one, after a whole-buffer zero fill (`AH_PAD_COPY=tiled`: distribution
    /// versions 2 / 3 to 3 / 4).
    Tiled,
    /// The default, as a compiled program's Triton pad kernel (a masked load with zero as the
    /// other value): one pass over the padded buffer, the copy writing the padding's zeros,
    /// and a transposed source padded into a transposed buffer (Inductor keeps the stride
    /// order: `empty_strided_cuda((18776, 8832), (1, 18816))` for a `(1, 18770)` operand), so
    /// the copy is a plain row copy and cuBLAS reads the padded operand transposed.
    OnePass,
}

impl PadCopy {
    const EXPECTED: &'static str = "one_pass, scalar, vector16, tiled";

    /// `AH_PAD_COPY` (unset: [`PadCopy::OnePass`]); an unknown value is an error.
    pub(super) fn from_env() -> Result<PadCopy, CudaInitError> {
        let value = setting("AH_PAD_COPY", Self::EXPECTED)?;
        Self::parse(value.as_deref()).ok_or_else(|| CudaInitError::Setting {
            variable: "AH_PAD_COPY",
            value: value.unwrap_or_default(),
            expected: Self::EXPECTED,
        })
    }

    /// The setting of a value (`None`: the default), by its short or recorded name.
    pub(super) fn parse(value: Option<&str>) -> Option<PadCopy> {
        let all = [
            PadCopy::Scalar,
            PadCopy::Vector16,
            PadCopy::Tiled,
            PadCopy::OnePass,
        ];
        match value {
            None | Some("one_pass") => Some(PadCopy::OnePass),
            Some("scalar") => Some(PadCopy::Scalar),
            Some("vector16") => Some(PadCopy::Vector16),
            Some("tiled") => Some(PadCopy::Tiled),
            Some(v) => all.into_iter().find(|c| c.name() == v),
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            PadCopy::Scalar => "scalar",
            PadCopy::Vector16 => "vector16",
            PadCopy::Tiled => "vector16+tiled_transpose",
            PadCopy::OnePass => "one_pass_vector16_layout_kept",
        }
    }
}
