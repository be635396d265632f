//! [`join_logs`]: logs of the same runner, device and features joined into one text, as
//! PyTorch's `merge_data.py` joins them, keeping exactly the rows the reader reads.

use std::path::{Path, PathBuf};

use super::in_memory::{Log, ReadOptions};
use super::read::{is_row, log_text, read_bytes};
use ah_core::error::{Error, Result};

/// The joined text of [`join_logs`] and what went into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Joined {
    /// The first log's two head lines, then every log's rows in order.
    pub text: String,
    /// Data lines in `text`.
    pub rows: u64,
    /// Logs whose torn last line (no newline, and not a row the reader reads) was dropped.
    pub torn: u64,
}

/// Joins logs (plain or gzip) whose first two lines are identical (as PyTorch's
/// `merge_data.py` requires): the first one's metadata line and header, then every log's
/// non-empty lines after its header, in order, each ending with a newline.
///
/// Merge and the readers agree on what a row is: a last line without its newline is kept when
/// the reader reads it as a row (the right number of fields, a time as feedback), and dropped
/// and counted in [`Joined::torn`] otherwise (a line cut while it was written, which the
/// reader skips as malformed). A log the reader refuses (not UTF-8, a bad head, a corrupt
/// gzip stream, a line over [`crate::MAX_LINE_BYTES`]) is refused with the reader's error,
/// which names the file and the line; [`Error::LogMismatch`] names the first log whose
/// metadata line or header differs.
pub fn join_logs(inputs: &[PathBuf]) -> Result<Joined> {
    let mut out = String::new();
    let mut head: Option<(String, String)> = None;
    let (mut rows, mut torn) = (0u64, 0u64);
    for path in inputs {
        let bytes = read_bytes(path)?;
        let text = log_text(path, &bytes)?;
        let mut lines = text.split_inclusive('\n');
        let l1 = line_of(lines.next().unwrap_or_default());
        let l2 = line_of(lines.next().unwrap_or_default());
        let width = check_head(path, text)?;
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
        for raw in lines {
            let line = line_of(raw);
            if line.trim_end_matches('\r').is_empty() {
                continue; // a blank line, which the reader skips too
            }
            if !raw.ends_with('\n') && !is_row(line, width) {
                torn += 1;
                continue;
            }
            out.push_str(line);
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

/// A line without its `\n` and the one `\r` before it (as `str::lines` gives it).
fn line_of(raw: &str) -> &str {
    let line = raw.strip_suffix('\n').unwrap_or(raw);
    if raw.ends_with('\n') {
        line.strip_suffix('\r').unwrap_or(line)
    } else {
        line
    }
}

/// Reads the head of a log's text (its first two lines) with the reader, so that a log the
/// reader refuses is refused here with its message; returns the header's width.
fn check_head(path: &Path, text: &str) -> Result<usize> {
    let end = text
        .match_indices('\n')
        .nth(1)
        .map_or(text.len(), |(i, _)| i + 1);
    let log = Log::from_reader(path, &text.as_bytes()[..end], ReadOptions::default())?;
    Ok(log.features.len() + 2)
}
