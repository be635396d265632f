//! Heuristic names: which names generated code can use, and the module name of each.

/// Why a heuristic name cannot be used (see [`check_heuristic_name`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeuristicNameError {
    /// The name as given.
    pub name: String,
    /// What is wrong with it.
    pub reason: String,
}

impl std::fmt::Display for HeuristicNameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "heuristic name `{}` is not valid: {}",
            crate::error::clip_to(&self.name.escape_debug().to_string(), 60),
            self.reason
        )
    }
}

impl std::error::Error for HeuristicNameError {}

/// Names the generated code uses itself (the Rust module's imports, types, statics and the
/// prelude; the Python artifact's imports): a heuristic of one of these names would clash.
const TAKEN_NAMES: &[&str] = &[
    "Columns",
    "Context",
    "DeviceIdentity",
    "EvalError",
    "LearnedHeuristic",
    "ModelKind",
    "OnceLock",
    "Operation",
    "Prediction",
    "UnsureKind",
    "Value",
    "Option",
    "Result",
    "Some",
    "None",
    "Ok",
    "Err",
    "String",
    "Vec",
    "Box",
    "Self",
    "TreeNode",
    "TREE",
    "HEURISTIC",
    "CHOICES",
    "OPERATIONS",
    // Names the Python artifact imports.
    "Optional",
    "AHContext",
    "AHMetadata",
    "Choice",
    "LearnedHeuristicDecision",
    "LearnedHeuristicRegression",
];

/// Rust keywords (strict and reserved, all editions), which cannot name a module.
const RUST_KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// The longest heuristic name: its module name (snake case, up to one `_` per letter) with
/// `.rs`, and `NAME.model.json`, stay within the 255 bytes file systems take for a name.
pub const MAX_HEURISTIC_NAME: usize = 100;

/// The one rule for heuristic names, shared by every tool (`ah-train --heuristic-name`
/// checks it before training, `ah-codegen` and model validation after): the name must be a
/// Python class name, a Rust type name and, in snake case ([`heuristic_module_name`]), a Rust
/// module and file name. That is UpperCamelCase ASCII letters and digits, starting with a
/// capital letter, at most [`MAX_HEURISTIC_NAME`] of them, not a name the generated module
/// uses itself, and not mapping to a keyword.
pub fn check_heuristic_name(name: &str) -> std::result::Result<(), HeuristicNameError> {
    let bad = |reason: String| HeuristicNameError {
        name: name.to_string(),
        reason,
    };
    let first = name
        .chars()
        .next()
        .ok_or_else(|| bad("it is empty".into()))?;
    let length = name.chars().count();
    if length > MAX_HEURISTIC_NAME {
        return Err(bad(format!(
            "it is {length} characters long, more than {MAX_HEURISTIC_NAME}: it names files \
             (the Rust module, `_NAME.py`, `NAME.model.json`), and file systems take 255 bytes"
        )));
    }
    if !first.is_ascii_uppercase() {
        return Err(bad("it must start with an ASCII capital letter".into()));
    }
    if let Some(c) = name.chars().find(|c| !c.is_ascii_alphanumeric()) {
        return Err(bad(format!(
            "it contains `{}`; only ASCII letters and digits are allowed",
            c.escape_debug()
        )));
    }
    if TAKEN_NAMES.contains(&name) {
        return Err(bad(
            "the generated module already uses this name; pick a more specific one".into(),
        ));
    }
    let module = heuristic_module_name(name);
    if RUST_KEYWORDS.contains(&module.as_str()) || module == "lib" {
        return Err(bad(format!("its module name `{module}` is reserved")));
    }
    Ok(())
}

/// The Rust module (and file stem) of a heuristic: snake case of the UpperCamelCase name,
/// keeping runs of capitals together (`PadMMA100` -> `pad_mma100`,
/// `PadMMA100Decision` -> `pad_mma100_decision`).
pub fn heuristic_module_name(heuristic: &str) -> String {
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
