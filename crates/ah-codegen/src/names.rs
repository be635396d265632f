//! Names derived from a heuristic's name: its Rust module, its Python file.

pub use ah_core::model::heuristic_module_name as module_name;

/// The Python artifact's file name, as PyTorch's trainer names it: `_{NAME}.py`.
pub fn python_file_name(heuristic: &str) -> String {
    format!("_{heuristic}.py")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names() {
        assert_eq!(module_name("PadMMA100"), "pad_mma100");
        assert_eq!(module_name("PadMMA100Decision"), "pad_mma100_decision");
        assert_eq!(module_name("MixedMMA100"), "mixed_mma100");
        assert_eq!(module_name("MMRankingH100"), "mm_ranking_h100");
        assert_eq!(module_name("CublasLtRankingH100"), "cublas_lt_ranking_h100");
        assert_eq!(module_name("SimpleHeuristic"), "simple_heuristic");
        assert_eq!(module_name("H100Pad"), "h100_pad");
        assert_eq!(module_name("A"), "a");
        assert_eq!(python_file_name("PadMMA100"), "_PadMMA100.py");
    }
}
