//! Parsing a log's metadata line (line 1). Rendering it is [`Metadata::to_json_line`], in the
//! core, next to the type.

use serde::Deserialize;

use ah_core::error::{Error, Result};
use ah_core::metadata::Metadata;

/// Parses a metadata line in the current or the older (June 2024) layout; key order does
/// not matter, `choices` is kept when present.
pub fn parse_metadata_line(line: &str) -> Result<Metadata> {
    #[derive(Deserialize)]
    struct Raw {
        shared_memory: u64,
        device_capa: (u32, u32),
        name: String,
        numerical_features: Vec<String>,
        categorical_features: Vec<String>,
        #[serde(default)]
        choices: Option<Vec<String>>,
    }
    let raw: Raw = serde_json::from_str(line.trim()).map_err(|e| Error::Metadata(e.to_string()))?;
    Ok(Metadata {
        shared_memory: raw.shared_memory,
        device_capa: raw.device_capa,
        name: raw.name,
        numerical_features: raw.numerical_features,
        categorical_features: raw.categorical_features,
        choices: raw.choices,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ah_core::metadata::DeviceIdentity;

    #[test]
    fn current_layout_is_byte_exact() {
        let want = r#"{"shared_memory": 166912, "device_capa": [8, 0], "name": "mm", "numerical_features": ["m", "k", "n", "mat1_stride_0", "mat1_stride_1", "mat2_stride_0", "mat2_stride_1"], "categorical_features": ["mat1_dtype", "mat2_dtype", "mat1_iscontig", "mat2_iscontig", "using_tf32"]}"#;
        let md = parse_metadata_line(want).unwrap();
        assert_eq!(md.to_json_line(), want);
        assert_eq!(md.device(), DeviceIdentity::A100);
    }

    #[test]
    fn old_layout_reads() {
        let old = r#"{"numerical_features": ["m"], "categorical_features": ["mat1_dtype"], "choices": ["orig", "pad"], "shared_memory": 166912, "device_capa": [8, 0], "name": "pad_mm"}"#;
        let md = parse_metadata_line(old).unwrap();
        assert_eq!(
            md.choices.as_deref(),
            Some(&["orig".to_string(), "pad".to_string()][..])
        );
        assert_eq!(md.name, "pad_mm");
        assert_eq!(DeviceIdentity::H100.capa_repr(), "(9, 0)");
    }
}
