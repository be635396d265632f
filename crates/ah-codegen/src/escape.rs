//! Free text in generated code: the one place that decides how text the model carries (file
//! names, provenance, the optimization name, choices, feature names, categories, operation
//! sources) is written into Rust, Python and Graphviz files.
//!
//! Identifiers are never free text: the heuristic name, the only one that becomes an
//! identifier, is checked by `ah_core::model::check_heuristic_name`; features and operations
//! are referred to by generated names (`x0`, `c3`, `_op1`) and looked up by string literals.
//! String literals are escaped by each language's rules (`str_lit` for Rust through `{:?}`,
//! `ah_core::value::python_str_literal` for Python, [`dot_str`] for Graphviz). Comments get
//! [`comment`]: a one-line rendering in which no character can end the comment or confuse a
//! reader or a compiler.

use ah_core::value::is_unsafe_in_code;

/// `s` as text for a line comment (`//`, `//!`, `#`) of any of the generated languages:
/// backslashes are doubled and line breaks, tabs and every other character of
/// [`is_unsafe_in_code`] are written as escapes (`\n`, `\r`, `\t`, `\u{0}`), so the comment
/// stays one line and shows the text unambiguously. Harmless text is returned unchanged.
pub fn comment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe_in_code(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The inside of a double-quoted Graphviz string showing `s` as written: double quotes and
/// backslashes escaped, line breaks and other unsafe characters shown as their [`comment`]
/// escapes (so a `\n` in a name is visible text, never a line break; Graphviz' own `\n`
/// line break is the caller's to add).
pub fn dot_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if is_unsafe_in_code(c) => {
                out.push_str(&comment(c.encode_utf8(&mut [0; 4])).replace('\\', "\\\\"));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harmless_text_is_unchanged() {
        for s in [
            "pad_mm_a100.txt",
            "m*k",
            "str(x) == 'torch.float16'",
            "größe µs",
        ] {
            assert_eq!(comment(s), s);
        }
    }

    #[test]
    fn comments_stay_one_line() {
        let s = "a\nb\rc\td\0e\u{2028}f\u{202e}g\\h*/\"\"\"";
        let c = comment(s);
        assert_eq!(c, "a\\nb\\rc\\td\\u{0}e\\u{2028}f\\u{202e}g\\\\h*/\"\"\"");
        assert!(!c.chars().any(is_unsafe_in_code));
    }

    #[test]
    fn dot_strings_escape_quotes_and_backslashes() {
        assert_eq!(dot_str("a\"b\\c\nd\0"), "a\\\"b\\\\c\\\\nd\\\\u{0}");
    }
}
