//! Names derived from a heuristic's name: its Rust module, its Python file.

/// The Rust module (and file stem) of a heuristic: snake case of the UpperCamelCase name,
/// keeping runs of capitals together (`PadMMA100` -> `pad_mma100`,
/// `PadMMA100Decision` -> `pad_mma100_decision`).
pub fn module_name(heuristic: &str) -> String {
    let chars: Vec<char> = heuristic.chars().collect();
    let mut out = String::with_capacity(chars.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase()
                || (prev.is_ascii_uppercase() && next_lower)
                || (prev.is_ascii_digit() && next_lower)
            {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// True for Rust keywords (strict and reserved), which cannot name a module.
pub fn is_rust_keyword(s: &str) -> bool {
    matches!(
        s,
        "as" | "break"
            | "const"
            | "continue"
            | "crate"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "fn"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "pub"
            | "ref"
            | "return"
            | "self"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "type"
            | "unsafe"
            | "use"
            | "where"
            | "while"
            | "async"
            | "await"
            | "dyn"
            | "abstract"
            | "become"
            | "box"
            | "do"
            | "final"
            | "macro"
            | "override"
            | "priv"
            | "typeof"
            | "unsized"
            | "virtual"
            | "yield"
            | "try"
            | "gen"
    )
}

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
        assert_eq!(module_name("SimpleHeuristic"), "simple_heuristic");
        assert_eq!(module_name("H100Pad"), "h100_pad");
        assert_eq!(module_name("A"), "a");
        assert_eq!(python_file_name("PadMMA100"), "_PadMMA100.py");
    }
}
