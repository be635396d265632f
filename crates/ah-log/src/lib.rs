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
//! - `in_memory`: [`Log`], a whole log in memory, its [`LogRow`]s and [`MalformedLine`]s, and
//!   [`ReadOptions`];
//! - `metadata`: [`parse_metadata_line`], line 1 read back into a
//!   [`Metadata`](ah_core::metadata::Metadata);
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
//!   sidecar files, and [`sidecar_to_read`], [`read_sidecar`] and [`check_appendable`], the
//!   plain file or its `.gz` (a finished log's sidecars may be kept compressed);
//! - `device`: [`device_difference`], how two logs' devices differ.
//!
//! It prints nothing; errors are the core's [`ah_core::Error`] (they name the file and line),
//! and [`SidecarError`] for where a sidecar is read or written.
#![deny(missing_docs)]

mod device;
mod halves;
mod head;
mod in_memory;
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

pub use device::device_difference;
pub use head::{check_head, head_text, Head};
pub use in_memory::{Log, LogRow, MalformedLine, ReadOptions};
pub use limit::MAX_LINE_BYTES;
pub use lock::{lock_log, lock_path, LogLock};
pub use merge::{join_logs, Joined};
pub use metadata::parse_metadata_line;
pub use read::{log_text, metadata_line, open_maybe_gz, read_bytes};
pub use repair::{infer_reps, keep_inputs, repair_inputs, InputRepair, Repetitions};
pub use rows::{row_spans, RowSpan};
pub use sidecar::{
    check_appendable, extras_path, medians_path, provenance_path, read_sidecar, sidecar_to_read,
    SidecarError,
};
pub use write::{push_row, LogWriter};
