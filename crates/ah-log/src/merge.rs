//! [`join_logs`]: logs of the same runner, device and features joined into one text, as
//! PyTorch's `merge_data.py` joins them.

use std::path::PathBuf;

use super::read::{log_text, read_bytes};
use ah_core::error::{Error, Result};

/// The joined text of [`join_logs`] and what went into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Joined {
    /// The first log's two head lines, then every log's rows in order.
    pub text: String,
    /// Data rows in `text`.
    pub rows: u64,
    /// Logs whose torn (incomplete) last line was dropped.
    pub torn: u64,
}

/// Joins logs (plain or gzip) whose first two lines are identical (as PyTorch's
/// `merge_data.py` requires): the first one's metadata line and header, then every log's
/// non-empty lines after its header, in order; a torn last line is dropped and counted.
/// [`Error::LogMismatch`] names the first log whose metadata line or header differs.
pub fn join_logs(inputs: &[PathBuf]) -> Result<Joined> {
    let mut out = String::new();
    let mut head: Option<(String, String)> = None;
    let (mut rows, mut torn) = (0u64, 0u64);
    for path in inputs {
        let bytes = read_bytes(path)?;
        let text = log_text(path, &bytes)?;
        let complete = match text.rfind('\n') {
            Some(i) => &text[..=i],
            None => "",
        };
        if complete.len() < text.len() {
            torn += 1;
        }
        let mut lines = complete.lines();
        let (Some(l1), Some(l2)) = (lines.next(), lines.next()) else {
            return Err(Error::Other(format!(
                "{}: not an AutoHeuristic log (needs a metadata line and a header)",
                path.display()
            )));
        };
        match &head {
            None => {
                head = Some((l1.to_string(), l2.to_string()));
                out.push_str(l1);
                out.push('\n');
                out.push_str(l2);
                out.push('\n');
            }
            Some((h1, h2)) => {
                let mismatch = |what, first: &str, other: &str| Error::LogMismatch {
                    path: path.clone(),
                    first_path: inputs[0].clone(),
                    what,
                    first: first.to_string(),
                    other: other.to_string(),
                };
                if h1 != l1 {
                    return Err(mismatch("metadata line", h1, l1));
                }
                if h2 != l2 {
                    return Err(mismatch("header", h2, l2));
                }
            }
        }
        for l in lines.filter(|l| !l.is_empty()) {
            out.push_str(l);
            out.push('\n');
            rows += 1;
        }
    }
    Ok(Joined {
        text: out,
        rows,
        torn,
    })
}
