//! Element types of the matrix runners, spelled as PyTorch logs them.

use serde::Serialize;

/// A floating-point element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum DType {
    /// `torch.float16`.
    F16,
    /// `torch.bfloat16`.
    BF16,
    /// `torch.float32`.
    F32,
}

impl DType {
    /// Bytes per element (`dtype.itemsize`).
    pub fn itemsize(self) -> usize {
        match self {
            DType::F16 | DType::BF16 => 2,
            DType::F32 => 4,
        }
    }

    /// `str(dtype)`: `torch.float16`, `torch.bfloat16`, `torch.float32`.
    pub fn torch_name(self) -> &'static str {
        match self {
            DType::F16 => "torch.float16",
            DType::BF16 => "torch.bfloat16",
            DType::F32 => "torch.float32",
        }
    }

    /// PyTorch's `get_alignment_size_dtype`: 8 for fp16/bf16, 4 for fp32.
    pub fn align_size(self) -> usize {
        match self {
            DType::F16 | DType::BF16 => 8,
            DType::F32 => 4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_sizes_are_pytorchs() {
        assert_eq!(DType::BF16.torch_name(), "torch.bfloat16");
        assert_eq!((DType::F16.itemsize(), DType::F32.itemsize()), (2, 4));
        assert_eq!((DType::F16.align_size(), DType::F32.align_size()), (8, 4));
    }
}
