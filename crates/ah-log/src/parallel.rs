//! [`Log::read_parallel`]: the reader's result, with the two halves of a large file parsed at
//! once (the trainer reads logs of millions of rows).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::halves::Halves;
use super::in_memory::{Log, ReadOptions};
use super::limit::{newlines, MAX_LINE_BYTES};
use super::read::read_bytes;
use ah_core::error::{Error, Result};

/// Files at most this large are read by one thread.
const PARALLEL_FROM_BYTES: usize = 1 << 20;

/// The buffer of each half read from a file (the reader's own is as large).
const BUFFER: usize = 1 << 16;

impl Log {
    /// Reads a log like [`Log::read`] (same result, same messages), parsing the two halves of a
    /// large file on two threads and merging them (choice indices remapped, line numbers of
    /// skipped lines and of errors shifted to the whole file's). A plain log is parsed from the
    /// file, each half by its thread (`halves.rs`); a gzip log is held in memory, uncompressed,
    /// while it is read. An input with rows in both halves has its values twice (equal, one
    /// slice for the rows of each half).
    pub fn read_parallel(path: impl AsRef<Path>, options: ReadOptions) -> Result<Log> {
        let path = path.as_ref();
        if let Some(halves) = Halves::of(path, PARALLEL_FROM_BYTES as u64)? {
            return read_halves(path, halves, options);
        }
        let bytes = read_bytes(path)?;
        // Small files, or files without a header: the plain reader (and its messages).
        let header_end = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(1)
            .map(|(i, _)| i + 1);
        // `read_bytes` checked the lines' lengths: the parsers need not.
        let parse = |part| Log::from_reader_limited(path, part, options, usize::MAX);
        let Some(header_end) = header_end.filter(|_| bytes.len() > PARALLEL_FROM_BYTES) else {
            return parse(&bytes[..]);
        };
        let mid = header_end + (bytes.len() - header_end) / 2;
        let cut = match bytes[mid..].iter().position(|b| *b == b'\n') {
            Some(p) => mid + p + 1,
            None => return parse(&bytes[..]),
        };
        // Lines before the second part: everything up to `cut`; its own lines 1-2 are the header.
        let lines_before = newlines(&bytes[..cut]);
        let lines_after = newlines(&bytes[cut..]) + 1;
        // The second half is read after the header, in place; the first half's rows have room
        // for the second's.
        let second = (&bytes[..header_end]).chain(&bytes[cut..]);
        let (a, b) = std::thread::scope(|s| {
            let b =
                s.spawn(|| Log::from_reader_sized(path, second, options, usize::MAX, lines_after));
            let rows = lines_before + lines_after;
            let a = Log::from_reader_sized(path, &bytes[..cut], options, usize::MAX, rows);
            (a, b.join().expect("the reader thread does not panic"))
        });
        let log = a?;
        merge(log, b, lines_before)
    }
}

/// A large plain log read from the file in two halves at once, each through the reader's
/// line limit.
fn read_halves(path: &Path, halves: Halves, options: ReadOptions) -> Result<Log> {
    let Halves {
        file,
        head,
        cut,
        rows,
    } = halves;
    let (a, b) = std::thread::scope(|s| {
        let b = s.spawn(|| {
            let mut rest = File::open(path).map_err(|e| Error::io(path, e))?;
            rest.seek(SeekFrom::Start(cut))
                .map_err(|e| Error::io(path, e))?;
            let second = BufReader::with_capacity(BUFFER, (&head[..]).chain(rest));
            Log::from_reader_sized(path, second, options, MAX_LINE_BYTES, rows / 2)
        });
        let a = Log::from_reader_sized(
            path,
            BufReader::with_capacity(BUFFER, file.take(cut)),
            options,
            MAX_LINE_BYTES,
            rows,
        );
        (a, b.join().expect("the reader thread does not panic"))
    });
    let log = a?;
    // Every line of the first half is its metadata or header line, a row, a malformed row or
    // an empty line, and it ends with a newline.
    let lines_before = 2 + log.rows.len() + log.malformed.len() + log.blank_lines;
    merge(log, b, lines_before)
}

/// The first half's log followed by the second's (`b`: its lines 1-2 are the header, the
/// others come after the first half's `lines_before` lines), or the second half's error, at
/// its line of the whole file.
fn merge(log: Log, b: Result<Log>, lines_before: usize) -> Result<Log> {
    let b = b.map_err(|e| match e {
        Error::LogFormat {
            path,
            line,
            message,
        } if line > 2 => Error::LogFormat {
            path,
            line: line + lines_before - 2,
            message,
        },
        e => e,
    })?;
    Ok(append(log, b, lines_before - 2))
}

/// `log` followed by the rows of `b`, whose lines are `shift` lines later in the file.
fn append(mut log: Log, b: Log, shift: usize) -> Log {
    let mut known: HashMap<String, u32> = log
        .choices
        .iter()
        .enumerate()
        .map(|(i, c)| (c.clone(), i as u32))
        .collect();
    let map: Vec<u32> = b
        .choices
        .iter()
        .map(|c| {
            *known.entry(c.clone()).or_insert_with(|| {
                log.choices.push(c.clone());
                (log.choices.len() - 1) as u32
            })
        })
        .collect();
    log.rows.reserve(b.rows.len());
    log.rows.extend(b.rows.into_iter().map(|mut r| {
        r.choice = map[r.choice as usize];
        r.line += shift;
        r
    }));
    log.malformed.extend(b.malformed.into_iter().map(|mut m| {
        m.line += shift;
        m
    }));
    log.blank_lines += b.blank_lines;
    log
}
