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

/// Decodes an IEEE half (binary16) bit pattern.
pub fn f16_to_f32(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let frac = f32::from(bits & 0x3ff);
    match exp {
        0 => sign * frac * 2f32.powi(-24),
        31 if frac == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        _ => sign * (1.0 + frac / 1024.0) * 2f32.powi(exp - 15),
    }
}

/// Decodes a bfloat16 bit pattern.
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// Decodes a device buffer of `dtype` elements (little-endian bytes) to f32.
pub fn decode(bytes: &[u8], dtype: DType) -> Vec<f32> {
    match dtype {
        DType::F32 => bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        DType::F16 => bytes
            .chunks_exact(2)
            .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
        DType::BF16 => bytes
            .chunks_exact(2)
            .map(|c| bf16_to_f32(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
    }
}

#[cfg(test)]
mod decode_tests {
    use super::*;

    #[test]
    fn half_and_bfloat_decode() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(bf16_to_f32(0x3f80), 1.0);
        assert_eq!(bf16_to_f32(0xc040), -3.0);
        let bytes = [0x00, 0x3c, 0x00, 0xc0];
        assert_eq!(decode(&bytes, DType::F16), vec![1.0, -2.0]);
        assert_eq!(decode(&1.5f32.to_le_bytes(), DType::F32), vec![1.5]);
    }
}
