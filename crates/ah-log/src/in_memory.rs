//! A log in memory: [`Log`], its rows ([`LogRow`]), the rows skipped reading it
//! ([`MalformedLine`]) and how strictly it was read ([`ReadOptions`]). Reading is `read.rs`'s
//! and `parallel.rs`'s, repairing `repair.rs`'s.

use std::path::PathBuf;
use std::sync::Arc;

use ah_core::metadata::Metadata;
use ah_core::value::{python_float_repr, Value};

use crate::head;
use crate::write::push_row;

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
