//! [`check_head`]: the head of a log (its metadata line and header) against the head a writer
//! would give it, before anything is appended. PyTorch compares the metadata line only; rows
//! appended under a header whose columns differ (the same columns in another order, other
//! names) would put every value under another column, so the header must match exactly too.
//! A head cut short (a writer killed while writing it: the file is a prefix of the head) is
//! completed rather than taken for rows.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::limit::{LineLimit, LineTooLong, MAX_LINE_BYTES};
use ah_core::error::{clip, Error, Result};
use ah_core::metadata::Metadata;

/// How a file stands against the head a writer would give it ([`check_head`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// No file, or an empty one: the writer writes the whole head.
    New,
    /// The file starts with this head (or with a part of it and nothing else): appending
    /// `missing` (empty when the head is whole) completes it.
    Matches {
        /// The end of the head the file lacks.
        missing: String,
    },
}

/// The head a writer gives a new log: the metadata line, the header, each with its `\n`.
pub fn head_text(metadata: &Metadata, features: &[String]) -> String {
    let mut head = metadata.to_json_line();
    head.push('\n');
    head.push_str(&header_line(features));
    head.push('\n');
    head
}

/// The header of a log with these features: the features, `choice`, `feedback`.
pub(crate) fn header_line(features: &[String]) -> String {
    let mut h = features.join(",");
    if !h.is_empty() {
        h.push(',');
    }
    h.push_str("choice,feedback");
    h
}

/// Checks the head of the log at `path` against the head a writer with `metadata` and
/// `features` gives it: the metadata line must be the same (after trimming whitespace, as
/// PyTorch compares it), the header the same columns in the same order (`\r`s that end it
/// aside, as the reader takes them off). A file that is the start of that head and nothing
/// more (cut while the head was written) matches, with the rest to append.
///
/// Errors name the file and the line: [`Error::InconsistentMetadata`] for another metadata
/// line; [`Error::LogFormat`] for another header (naming the first column that differs), a
/// gzip file (rows cannot be appended to one), text that is not UTF-8, a line longer than
/// [`MAX_LINE_BYTES`].
pub fn check_head(path: &Path, metadata: &Metadata, features: &[String]) -> Result<Head> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Head::New),
        Err(e) => return Err(Error::io(path, e)),
    };
    let want = head_text(metadata, features);
    let (found, whole) = first_two_lines(path, file)?;
    if found.is_empty() {
        return Ok(Head::New);
    }
    let err = |line: usize, message: String| Error::LogFormat {
        path: path.to_path_buf(),
        line,
        message,
    };
    if found.starts_with(&[0x1f, 0x8b]) {
        return Err(err(
            1,
            "a gzip-compressed log: rows cannot be appended to it; decompress it first \
             (`gunzip FILE`), or write to another file"
                .into(),
        ));
    }
    if whole && want.as_bytes().starts_with(&found) {
        return Ok(Head::Matches {
            missing: want[found.len()..].to_string(),
        });
    }
    let mut lines = found.split_inclusive(|b| *b == b'\n');
    let first = lines.next().unwrap_or_default();
    let first = std::str::from_utf8(first).map_err(|_| err(1, not_utf8()))?;
    let line = metadata.to_json_line();
    if first.trim() != line.trim() {
        let existing = first.trim_end_matches(['\n', '\r']).to_string();
        return Err(Error::InconsistentMetadata {
            path: path.to_path_buf(),
            difference: metadata_difference(&existing, metadata),
            existing,
            given: line,
        });
    }
    let header = header_line(features);
    let Some(second) = lines.next() else {
        // The metadata line alone (maybe without its newline): the header is missing.
        let newline = if first.ends_with('\n') { "" } else { "\n" };
        return Ok(Head::Matches {
            missing: format!("{newline}{header}\n"),
        });
    };
    let second = std::str::from_utf8(second).map_err(|_| err(2, not_utf8()))?;
    let (text, closed) = match second.strip_suffix('\n') {
        Some(t) => (t.trim_end_matches('\r'), true),
        None => (second, false),
    };
    if text == header {
        let missing = if closed { "" } else { "\n" };
        return Ok(Head::Matches {
            missing: missing.into(),
        });
    }
    if !closed && whole && header.starts_with(text) {
        return Ok(Head::Matches {
            missing: format!("{}\n", &header[text.len()..]),
        });
    }
    Err(err(2, header_difference(text, &header)))
}

/// The first two lines of `file` (with their newlines), each bounded by [`MAX_LINE_BYTES`],
/// and whether they are the whole file.
fn first_two_lines(path: &Path, file: File) -> Result<(Vec<u8>, bool)> {
    let mut reader = BufReader::new(LineLimit::new(file, MAX_LINE_BYTES));
    let mut found = Vec::new();
    for _ in 0..2 {
        reader
            .read_until(b'\n', &mut found)
            .map_err(|e| match LineTooLong::of(&e) {
                Some(long) => Error::LogFormat {
                    path: path.to_path_buf(),
                    line: long.line,
                    message: long.to_string(),
                },
                None => Error::io(path, e),
            })?;
    }
    let mut more = [0u8; 1];
    let whole = reader.read(&mut more).map_err(|e| Error::io(path, e))? == 0;
    Ok((found, whole))
}

fn not_utf8() -> String {
    "not UTF-8 text; logs are UTF-8: is this a log, or was it damaged? Fix or delete that \
     line, or write to another file"
        .into()
}

/// What differs between a log's header and the one a writer would write, and what to do.
fn header_difference(found: &str, want: &str) -> String {
    let have: Vec<&str> = found.split(',').collect();
    let need: Vec<&str> = want.split(',').collect();
    let mut sorted_have = have.clone();
    let mut sorted_need = need.clone();
    sorted_have.sort_unstable();
    sorted_need.sort_unstable();
    let what = match have.iter().zip(&need).position(|(a, b)| a != b) {
        Some(i) => format!(
            "{}: column {} is `{}` where this writer logs `{}`",
            if sorted_have == sorted_need {
                "the same columns in another order"
            } else {
                "other columns"
            },
            i + 1,
            clip(have[i]),
            clip(need[i])
        ),
        None => format!(
            "{} columns where this writer logs {}",
            have.len(),
            need.len()
        ),
    };
    format!(
        "the header does not match the columns this writer logs ({what}); rows appended under \
         it would put values under other columns. Header: `{}`\nhint: write to another file; \
         append only with the runner and version that wrote this log",
        clip(found)
    )
}

/// A one-line summary of what differs between a log's metadata line and `given`.
fn metadata_difference(existing: &str, given: &Metadata) -> String {
    let Ok(old) = crate::parse_metadata_line(existing) else {
        return "the existing first line is not AutoHeuristic metadata".into();
    };
    let mut diffs = crate::device::device_differences(&old, given);
    crate::device::push_difference(&mut diffs, "name", &old.name, &given.name);
    crate::device::push_difference(
        &mut diffs,
        "numerical_features",
        &old.numerical_features,
        &given.numerical_features,
    );
    crate::device::push_difference(
        &mut diffs,
        "categorical_features",
        &old.categorical_features,
        &given.categorical_features,
    );
    if diffs.is_empty() {
        "same content, different layout (an older serializer's key order or `choices` key)".into()
    } else {
        diffs.join("; ")
    }
}
