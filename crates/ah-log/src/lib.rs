//! PyTorch's AutoHeuristic log format ("train.txt"), read and written byte for byte.
//!
//! Line 1 is the JSON metadata, line 2 the CSV header (features in context order, then
//! `choice,feedback`), every further line one benchmarked (input, choice) with unquoted
//! Python `str()` values and the feedback in milliseconds. Logs may be gzip-compressed
//! (a `.gz` suffix). See `docs/log-format.md`.
//!
//! This crate is the only code of the workspace that knows the format; it splits lines into
//! fields with the `csv` crate (no quoting, `\n` ends a line):
//!
//! - `metadata`: [`parse_metadata_line`], line 1 read back into a
//!   [`Metadata`];
//! - `read`: [`Log::read`] and [`Log::from_reader`] (streaming), [`open_maybe_gz`],
//!   [`read_bytes`] and [`log_text`] (a whole file, every error naming its line);
//! - `inputs`: the reader's values of each input, parsed once and shared by its rows;
//! - `parallel`: [`Log::read_parallel`], the same result with both halves of a large file
//!   parsed at once (`halves`: where a plain file is cut);
//! - `rows`: [`row_spans`], the data rows of a log's text with their byte offsets;
//! - `limit`: [`MAX_LINE_BYTES`], the longest line a reader takes (enforced as it reads);
//! - `head`: [`check_head`], a log's metadata line and header against a writer's, before it
//!   appends;
//! - `write`: [`LogWriter`] (PyTorch's `save_data`) and [`push_row`], the one rendering of a row;
//! - `repair`: [`Log::repair_torn_tail`] and [`repair_inputs`] (a collector's resume),
//!   [`infer_reps`], [`keep_inputs`], and [`Repetitions`] (rows per choice of an input);
//! - `merge`: [`join_logs`] (PyTorch's `merge_data.py`);
//! - `lock`: [`lock_log`], the lock every writer of a log holds;
//! - `sidecar`: [`medians_path`], [`extras_path`], [`provenance_path`], the names of a log's
//!   sidecar files.
//!
//! It prints nothing; errors are the core's [`ah_core::Error`] (they name the file and line).
#![deny(missing_docs)]

mod halves;
mod head;
mod inputs;
mod limit;
mod lock;
mod merge;
mod metadata;
mod parallel;
mod read;
mod repair;
mod rows;
mod sidecar;
mod write;

#[cfg(test)]
mod head_tests;
#[cfg(test)]
mod repair_tests;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::Arc;

pub use head::{check_head, head_text, Head};
pub use limit::MAX_LINE_BYTES;
pub use lock::{lock_log, lock_path, LogLock};
pub use merge::{join_logs, Joined};
pub use metadata::parse_metadata_line;
pub use read::{log_text, metadata_line, open_maybe_gz, read_bytes};
pub use repair::{infer_reps, keep_inputs, repair_inputs, InputRepair, Repetitions};
pub use rows::{row_spans, RowSpan};
pub use sidecar::{extras_path, medians_path, provenance_path};
pub use write::{push_row, LogWriter};

use ah_core::metadata::Metadata;
use ah_core::value::{python_float_repr, Value};

/// How strictly to read a log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Error on the first malformed row instead of skipping and counting it.
    pub strict: bool,
}

/// A row that was skipped while reading (default, non-strict mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedLine {
    /// 1-based line number in the (uncompressed) file.
    pub line: usize,
    /// Why it was skipped.
    pub reason: String,
}

/// One data row: the logged feature values, the choice and its feedback.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRow {
    /// Feature values in header order. The reader parses an input once: rows whose feature
    /// cells have the same text (an input's choices and repetitions) share one slice, so that a
    /// log of millions of rows holds its values once per input, not once per row.
    pub values: Arc<[Value]>,
    /// Index into [`Log::choices`].
    pub choice: u32,
    /// Measured time in milliseconds; `inf` when the choice failed.
    pub feedback: f64,
    /// 1-based line of the row in the (uncompressed) file, for messages about its values.
    pub line: usize,
}

/// A whole log in memory.
#[derive(Debug, Clone)]
pub struct Log {
    /// Where it was read from.
    pub path: PathBuf,
    /// Parsed metadata.
    pub metadata: Metadata,
    /// The metadata line as it stands in the file (without the newline).
    pub metadata_line: String,
    /// Feature names from the header, in column order (without `choice` and `feedback`).
    pub features: Vec<String>,
    /// Distinct choices in order of first appearance.
    pub choices: Vec<String>,
    /// Data rows in file order.
    pub rows: Vec<LogRow>,
    /// Rows skipped as malformed (never silently: callers report the count).
    pub malformed: Vec<MalformedLine>,
    /// Empty lines skipped (pandas skips them too).
    pub blank_lines: usize,
}

impl Log {
    /// The header line as written (features, `choice`, `feedback`).
    pub fn header_line(&self) -> String {
        head::header_line(&self.features)
    }

    /// A data row rendered as PyTorch writes it.
    pub fn row_line(&self, row: &LogRow) -> String {
        self.row_line_as(row, self.choice_name(row))
    }

    /// [`Log::row_line`] with another choice name: the row's values and feedback, rendered
    /// as the writer does, under `choice` (a log whose choices are renamed, like mm's ranks).
    pub fn row_line_as(&self, row: &LogRow, choice: &str) -> String {
        let mut values = String::with_capacity(128);
        for (i, v) in row.values.iter().enumerate() {
            if i > 0 {
                values.push(',');
            }
            values.push_str(&v.to_string());
        }
        let mut s = String::with_capacity(values.len() + 32);
        if values.is_empty() {
            // A log without features: no leading comma.
            s.push_str(choice);
            s.push(',');
            s.push_str(&python_float_repr(row.feedback));
        } else {
            push_row(&mut s, &values, choice, row.feedback);
        }
        s
    }

    /// Column index of a feature in [`LogRow::values`].
    pub fn column(&self, feature: &str) -> Option<usize> {
        self.features.iter().position(|f| f == feature)
    }

    /// The choice name of a row.
    pub fn choice_name(&self, row: &LogRow) -> &str {
        &self.choices[row.choice as usize]
    }
}

/// Differences of device identity (`shared_memory`, `device_capa`) between two logs' metadata,
/// one line, or `None` when they were collected on the same kind of device. Tools that combine
/// logs (training with `--data`, replay) warn with it: a heuristic learned on one device is
/// matched on that device's identity.
pub fn device_difference(reference: &Metadata, other: &Metadata) -> Option<String> {
    let diffs = device_differences(reference, other);
    (!diffs.is_empty()).then(|| diffs.join(", "))
}

/// The device identity fields (`shared_memory`, `device_capa`) that differ, one phrase each.
fn device_differences(reference: &Metadata, other: &Metadata) -> Vec<String> {
    let mut diffs = Vec::new();
    push_difference(
        &mut diffs,
        "shared_memory",
        &reference.shared_memory,
        &other.shared_memory,
    );
    push_difference(
        &mut diffs,
        "device_capa",
        &reference.device_capa,
        &other.device_capa,
    );
    diffs
}

/// Appends `{field} {a:?} vs {b:?}` to `diffs` when `a` and `b` differ.
fn push_difference<T: PartialEq + std::fmt::Debug>(
    diffs: &mut Vec<String>,
    field: &str,
    a: &T,
    b: &T,
) {
    if a != b {
        diffs.push(format!("{field} {a:?} vs {b:?}"));
    }
}
