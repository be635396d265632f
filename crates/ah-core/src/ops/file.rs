//! The operations file: one `NAME = EXPR` (or `NAME :cat = EXPR`) per line.

use std::path::Path;

use super::operation::Operation;
use crate::error::{clip_to, Error, Result};

/// Parses an operations file (format in `docs/augment-ops.md`):
///
/// ```text
/// # comment
/// m_plus_n = m + n
/// big_k :cat = k >= 4096
/// ```
///
/// One operation per line, `NAME = EXPR` or `NAME :cat = EXPR` (`:num` is accepted and is the
/// default); blank lines and lines starting with `#` are skipped. Errors name the file, the
/// line and the column.
#[cfg(feature = "fs")]
pub fn parse_operations_file(path: impl AsRef<Path>) -> Result<Vec<Operation>> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_operations_str(&text, path)
}

/// [`parse_operations_file`] on text already read; `path` is used in messages.
pub fn parse_operations_str(text: &str, path: &Path) -> Result<Vec<Operation>> {
    let mut ops: Vec<Operation> = Vec::new();
    let err = |line: usize, message: String| Error::FileFormat {
        path: path.to_path_buf(),
        line,
        message,
    };
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(eq) = find_definition_eq(line) else {
            return Err(err(
                lineno,
                format!(
                    "expected `NAME = EXPR` or `NAME :cat = EXPR`, found `{}`",
                    clip_to(line, 60)
                ),
            ));
        };
        let (lhs, rhs_raw) = (line[..eq].trim(), &line[eq + 1..]);
        let rhs = rhs_raw.trim();
        let (name, categorical) = if let Some(n) = lhs.strip_suffix(":cat") {
            (n.trim_end(), true)
        } else if let Some(n) = lhs.strip_suffix(":num") {
            (n.trim_end(), false)
        } else {
            (lhs, false)
        };
        let shown = clip_to(name, 60);
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(err(
                lineno,
                format!("invalid operation name `{shown}`: expected one word before `=` (optionally followed by `:cat`)"),
            ));
        }
        if ops.iter().any(|o| o.name == name) {
            return Err(err(lineno, format!("operation `{shown}` is defined twice")));
        }
        // Column of the expression's first character within the raw line, for messages.
        let offset = raw.len() - raw.trim_start().len()
            + eq
            + 1
            + (rhs_raw.len() - rhs_raw.trim_start().len());
        let offset_chars = raw[..offset].chars().count();
        match Operation::parse(name, rhs, categorical) {
            Ok(op) => ops.push(op),
            Err(Error::Expression {
                column, message, ..
            }) => {
                return Err(err(
                    lineno,
                    format!(
                        "column {}: {message} (in operation `{shown}`)",
                        offset_chars + column
                    ),
                ))
            }
            Err(e) => return Err(err(lineno, e.to_string())),
        }
    }
    Ok(ops)
}

/// The `=` that separates name and expression: the first `=` not part of `==`, `<=`, `>=`, `!=`.
fn find_definition_eq(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    (0..b.len()).find(|&i| {
        b[i] == b'='
            && !(i > 0 && matches!(b[i - 1], b'=' | b'<' | b'>' | b'!'))
            && b.get(i + 1) != Some(&b'=')
    })
}
