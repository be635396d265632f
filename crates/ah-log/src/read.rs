//! Reading logs: [`Log::read`], [`Log::from_reader`], and whole files as bytes or text.
//!
//! Lines are split into fields by the `csv` crate, configured for the format: no quoting, `,`
//! between fields, `\n` (only) ends a line, rows of any width. The CSV parser skips empty
//! lines; [`Lines`] gives them back (pandas skips them too, but the reader counts them), so
//! the reader sees the file line by line and every message names the line of the file.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use csv::ByteRecord;

use super::in_memory::{Log, LogRow, MalformedLine, ReadOptions};
use super::inputs::InputValues;
use super::limit::{LineLimit, LineTooLong, MAX_LINE_BYTES};
use ah_core::error::{clip, Error, Result};
use ah_core::metadata::Metadata;
use ah_core::value::parse_python_float;

impl Log {
    /// Reads a log, plain or gzip (by the `.gz` suffix or the gzip magic bytes).
    pub fn read(path: impl AsRef<Path>, options: ReadOptions) -> Result<Log> {
        let path = path.as_ref();
        let reader = open_maybe_gz(path)?;
        Self::from_reader(path, reader, options)
    }

    /// Reads a log from any buffered reader; `path` is used in messages only.
    ///
    /// Linear in the size of the input: the CSV parser fills one reused record, and an input's
    /// cells are parsed once, for its first row (later rows with the same cells share those
    /// values, [`crate::LogRow::values`]). Every error
    /// names the file and the line; a line longer than [`MAX_LINE_BYTES`] is an error before
    /// it is held in memory.
    pub fn from_reader(path: &Path, reader: impl BufRead, options: ReadOptions) -> Result<Log> {
        Self::from_reader_limited(path, reader, options, MAX_LINE_BYTES)
    }

    /// [`Log::from_reader`] with another bound on a line's length (tests use a small one).
    pub(crate) fn from_reader_limited(
        path: &Path,
        reader: impl BufRead,
        options: ReadOptions,
        limit: usize,
    ) -> Result<Log> {
        Self::from_reader_sized(path, reader, options, limit, 0)
    }

    /// [`Log::from_reader_limited`] with room for `rows` rows from the start.
    pub(crate) fn from_reader_sized(
        path: &Path,
        reader: impl BufRead,
        options: ReadOptions,
        limit: usize,
        rows: usize,
    ) -> Result<Log> {
        let fmt_err = |line: usize, message: String| Error::LogFormat {
            path: path.to_path_buf(),
            line,
            message,
        };
        let mut lines = Lines::with_limit(path, reader, limit);
        let Some(first) = lines.next_line()? else {
            return Err(fmt_err(
                1,
                "the file is empty; an AutoHeuristic log starts with a JSON metadata line".into(),
            ));
        };
        let metadata_line = lines.text(first)?;
        let metadata = crate::parse_metadata_line(&metadata_line)
            .map_err(|e| fmt_err(1, format!("{e}; is this an AutoHeuristic log (train.txt)?")))?;
        let Some(second) = lines.next_line()? else {
            return Err(fmt_err(
                2,
                "missing CSV header line after the metadata".into(),
            ));
        };
        lines.check_utf8(second)?;
        let header: Vec<String> = match second {
            Line::Blank(_) => vec![String::new()],
            Line::Fields(_) => lines.fields().map(|f| lossless(f).to_string()).collect(),
        };
        let features = parse_header(header, &metadata).map_err(|m| fmt_err(2, m))?;
        let mut log = Log {
            path: path.to_path_buf(),
            metadata,
            metadata_line,
            features,
            choices: Vec::new(),
            rows: Vec::with_capacity(rows),
            malformed: Vec::new(),
            blank_lines: 0,
        };
        read_rows(&mut lines, &mut log, options)?;
        Ok(log)
    }
}

/// Reads the data rows (line 3 on) into `log`; rows with the same feature cells share their
/// values ([`InputValues`]).
fn read_rows(lines: &mut Lines<'_, impl Read>, log: &mut Log, options: ReadOptions) -> Result<()> {
    let n = log.features.len() + 2;
    let mut choice_index: HashMap<String, u32> = HashMap::new();
    let mut inputs = InputValues::default();
    while let Some(line) = lines.next_line()? {
        let lineno = match line {
            Line::Blank(_) => {
                log.blank_lines += 1;
                continue;
            }
            Line::Fields(l) => l,
        };
        match check_row(&lines.record, n) {
            Ok((text, choice, feedback)) => {
                let idx = match choice_index.get(choice) {
                    Some(&i) => i,
                    None => {
                        let i = log.choices.len() as u32;
                        choice_index.insert(choice.to_string(), i);
                        log.choices.push(choice.to_string());
                        i
                    }
                };
                log.rows.push(LogRow {
                    values: inputs.of(&lines.record, text, n - 2),
                    choice: idx,
                    feedback,
                    line: lineno,
                });
            }
            Err(None) => return Err(lines.utf8_error(lineno)),
            Err(Some(reason)) => {
                if options.strict {
                    return Err(Error::LogFormat {
                        path: log.path.clone(),
                        line: lineno,
                        message: reason,
                    });
                }
                log.malformed.push(MalformedLine {
                    line: lineno,
                    reason,
                });
            }
        }
    }
    Ok(())
}

/// The CSV parser of the format: no quoting, `\n` ends a line, rows of any width.
pub(crate) fn csv_reader<R: Read>(source: R) -> csv::Reader<R> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .quoting(false)
        .terminator(csv::Terminator::Any(b'\n'))
        .buffer_capacity(1 << 16)
        .from_reader(source)
}

/// Notes how many bytes it hands on and the last one, so that the reader knows whether the
/// last record of a file ended with a `\n`.
struct Tap<R> {
    inner: R,
    bytes: u64,
    last: Option<u8>,
}

impl<R: Read> Read for Tap<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        if n > 0 {
            self.last = Some(buf[n - 1]);
        }
        Ok(n)
    }
}

/// One line of the file: empty (after its `\r`s), or fields in [`Lines::record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Line {
    /// An empty line, by its 1-based number.
    Blank(usize),
    /// A line with fields, by its 1-based number.
    Fields(usize),
}

/// The lines of a log, one at a time, through the CSV parser (which skips empty lines: they
/// are given back here in their place).
pub(crate) struct Lines<'p, R: Read> {
    csv: csv::Reader<Tap<LineLimit<R>>>,
    /// The fields of the last [`Line::Fields`]; the last field may end in `\r`s (see
    /// [`Lines::fields`]).
    pub(crate) record: ByteRecord,
    path: &'p Path,
    /// Number of the next line to give.
    next: usize,
    /// The line of the record read ahead, and whether it is empty.
    ahead: Option<(usize, bool)>,
    /// Lines in the file, once the parser reached its end.
    total: Option<usize>,
}

impl<'p, R: Read> Lines<'p, R> {
    pub(crate) fn new(path: &'p Path, source: R) -> Self {
        Self::with_limit(path, source, MAX_LINE_BYTES)
    }

    /// Lines of at most `limit` bytes: a longer one is an error naming it.
    pub(crate) fn with_limit(path: &'p Path, source: R, limit: usize) -> Self {
        Lines {
            csv: csv_reader(Tap {
                inner: LineLimit::new(source, limit),
                bytes: 0,
                last: None,
            }),
            record: ByteRecord::new(),
            path,
            next: 1,
            ahead: None,
            total: None,
        }
    }

    /// The next line; `None` at the end of the input. A read error (a corrupt gzip stream) is
    /// an error naming the file and the line.
    pub(crate) fn next_line(&mut self) -> Result<Option<Line>> {
        loop {
            if let Some((line, blank)) = self.ahead {
                let n = self.next;
                self.next += 1;
                if n < line {
                    return Ok(Some(Line::Blank(n)));
                }
                self.ahead = None;
                return Ok(Some(if blank {
                    Line::Blank(n)
                } else {
                    Line::Fields(n)
                }));
            }
            if let Some(total) = self.total {
                let n = self.next;
                if n > total {
                    return Ok(None);
                }
                self.next += 1;
                return Ok(Some(Line::Blank(n)));
            }
            self.read_ahead()?;
        }
    }

    /// Reads the next record into [`Lines::record`] and notes its line, or the end.
    fn read_ahead(&mut self) -> Result<()> {
        match self.csv.read_byte_record(&mut self.record) {
            Ok(true) => {
                let tap = self.csv.get_ref();
                let pos = self.csv.position();
                // A record ends after its `\n`, except the last line of a file without one.
                let open = pos.byte() == tap.bytes && tap.last != Some(b'\n');
                let line = pos.line() as usize - 1 + usize::from(open);
                let blank = self.record.len() == 1 && self.record[0].iter().all(|&b| b == b'\r');
                self.ahead = Some((line, blank));
            }
            // The parser counts the newlines it consumed; it asks for more input only once it
            // consumed all it was given, so a failing source fails on the line after them.
            Ok(false) => self.total = Some(self.csv.position().line() as usize - 1),
            Err(e) => {
                let (line, message) = match e.kind() {
                    csv::ErrorKind::Io(io) => match LineTooLong::of(io) {
                        Some(long) => (long.line, long.to_string()),
                        None => (self.csv.position().line() as usize, unreadable(io)),
                    },
                    _ => (self.csv.position().line() as usize, unreadable(&e)),
                };
                return Err(Error::LogFormat {
                    path: self.path.to_path_buf(),
                    line,
                    message,
                });
            }
        }
        Ok(())
    }

    /// The fields of the current line, the `\r`s that end the line taken off.
    pub(crate) fn fields(&self) -> impl Iterator<Item = &[u8]> {
        fields_of(&self.record)
    }

    /// Refuses a line that is not UTF-8, naming the byte and its column.
    pub(crate) fn check_utf8(&self, line: Line) -> Result<()> {
        let Line::Fields(n) = line else { return Ok(()) };
        if self.fields().all(|f| std::str::from_utf8(f).is_ok()) {
            return Ok(());
        }
        Err(self.utf8_error(n))
    }

    /// The error for line `n`, the current line, which is not UTF-8: the byte and its column.
    fn utf8_error(&self, n: usize) -> Error {
        let text = joined(&self.record);
        let e = std::str::from_utf8(&text).expect_err("a field is not UTF-8");
        Error::LogFormat {
            path: self.path.to_path_buf(),
            line: n,
            message: not_utf8(text[e.valid_up_to()], e.valid_up_to() + 1),
        }
    }

    /// The text of a line as it stands in the file (without its line end).
    pub(crate) fn text(&self, line: Line) -> Result<String> {
        self.check_utf8(line)?;
        Ok(match line {
            Line::Blank(_) => String::new(),
            Line::Fields(_) => String::from_utf8(joined(&self.record)).expect("checked UTF-8"),
        })
    }
}

/// The fields of a record, the `\r`s that end its line taken off the last one.
fn fields_of(record: &ByteRecord) -> impl Iterator<Item = &[u8]> {
    let last = record.len().saturating_sub(1);
    record.iter().enumerate().map(move |(i, f)| {
        if i == last {
            let end = f.iter().rposition(|&b| b != b'\r').map_or(0, |p| p + 1);
            &f[..end]
        } else {
            f
        }
    })
}

/// A record's line as it stands in the file, without its line end (the format has no quoting:
/// the fields joined by commas are the line's bytes).
fn joined(record: &ByteRecord) -> Vec<u8> {
    let mut text = Vec::with_capacity(record.as_slice().len() + record.len());
    for (i, f) in fields_of(record).enumerate() {
        if i > 0 {
            text.push(b',');
        }
        text.extend_from_slice(f);
    }
    text
}

/// A field already checked to be UTF-8.
fn lossless(field: &[u8]) -> &str {
    std::str::from_utf8(field).expect("checked UTF-8")
}

/// The feature columns of a header (it must end with `choice,feedback` and hold every metadata
/// feature). Linear in the number of columns.
fn parse_header(
    mut features: Vec<String>,
    metadata: &Metadata,
) -> std::result::Result<Vec<String>, String> {
    let n = features.len();
    if n < 2 || features[n - 2] != "choice" || features[n - 1] != "feedback" {
        return Err(format!(
            "the header must end with `choice,feedback`, found `{}`",
            tail_of(&features.join(","), 80)
        ));
    }
    features.truncate(n - 2);
    let columns: HashSet<&str> = features.iter().map(String::as_str).collect();
    if let Some(f) = metadata.features().find(|f| !columns.contains(f)) {
        return Err(format!(
            "feature `{}` of the metadata line is not a column of the header",
            clip(f)
        ));
    }
    Ok(features)
}

/// At most the last `max` bytes of `text` (on a character boundary), with `...` before when cut.
fn tail_of(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &text[start..])
}

/// Checks a data row of `n` fields (features, choice, feedback): the row's text (its fields
/// concatenated, [`ByteRecord::as_slice`]), its choice and its feedback. `Err(None)` when a
/// field is not UTF-8 (checked before anything else is said of the row), `Err(Some(reason))`
/// for a malformed row. The feature cells are not parsed here: any text is a value.
fn check_row(
    record: &ByteRecord,
    n: usize,
) -> std::result::Result<(&str, &str, f64), Option<String>> {
    let found = record.len();
    if found != n {
        if !fields_of(record).all(|f| std::str::from_utf8(f).is_ok()) {
            return Err(None);
        }
        return Err(Some(format!(
            "expected {n} fields, found {found} (the row is cut or has extra commas)"
        )));
    }
    // One UTF-8 check for the whole row: its fields are UTF-8 exactly when their
    // concatenation is and every field starts and ends on a character boundary (as every
    // byte of ASCII text does).
    let text = std::str::from_utf8(record.as_slice()).map_err(|_| None)?;
    let field = |i: usize| {
        record
            .range(i)
            .and_then(|r| text.get(r))
            .ok_or(None::<String>)
    };
    if !text.is_ascii() {
        for i in 0..n - 2 {
            field(i)?;
        }
    }
    let choice = field(n - 2)?;
    let feedback_text = field(n - 1)?.trim_end_matches('\r');
    let feedback = parse_python_float(feedback_text).ok_or_else(|| {
        Some(format!(
            "feedback `{}` is not a number",
            clip(feedback_text)
        ))
    })?;
    if feedback <= 0.0 {
        return Err(Some(format!(
            "feedback `{}` is not a time: times (ms) are positive, `inf` for a failed choice",
            clip(feedback_text)
        )));
    }
    if choice.is_empty() {
        return Err(Some("empty choice".into()));
    }
    Ok((text, choice, feedback))
}

/// The metadata line of a log (its first line, without the line end; empty for an empty file).
pub fn metadata_line(path: &Path) -> Result<String> {
    let mut lines = Lines::new(path, open_maybe_gz(path)?);
    match lines.next_line()? {
        Some(line) => lines.text(line),
        None => Ok(String::new()),
    }
}

/// Opens a file for reading, transparently decompressing gzip.
pub fn open_maybe_gz(path: &Path) -> Result<Box<dyn BufRead>> {
    Ok(open_source(path)?.0)
}

/// [`open_maybe_gz`], whether the file is gzip, and its size on disk.
fn open_source(path: &Path) -> Result<(Box<dyn BufRead>, bool, u64)> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let size = file.metadata().map_or(0, |m| m.len());
    let mut magic = [0u8; 2];
    let got = file.read(&mut magic).map_err(|e| Error::io(path, e))?;
    file.seek(SeekFrom::Start(0))
        .map_err(|e| Error::io(path, e))?;
    let gz = got == 2 && magic == [0x1f, 0x8b];
    let reader: Box<dyn BufRead> = if gz {
        Box::new(BufReader::with_capacity(
            1 << 16,
            flate2::read::MultiGzDecoder::new(file),
        ))
    } else {
        Box::new(BufReader::with_capacity(1 << 16, file))
    };
    Ok((reader, gz, size))
}

/// The whole uncompressed content of a log, plain or gzip. A line longer than
/// [`MAX_LINE_BYTES`] and a corrupt or cut gzip stream are errors naming the file and the
/// line, raised before more is held in memory.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    read_bytes_limited(path, MAX_LINE_BYTES)
}

/// [`read_bytes`] with another bound on a line's length.
pub(crate) fn read_bytes_limited(path: &Path, limit: usize) -> Result<Vec<u8>> {
    let (source, gz, size) = open_source(path)?;
    let mut limited = LineLimit::new(source, limit);
    // A plain file is read into a buffer of its size at once (no regrowing and copying).
    let mut bytes = Vec::with_capacity(if gz { 0 } else { size as usize });
    match limited.read_to_end(&mut bytes) {
        Ok(_) => Ok(bytes),
        Err(e) => {
            let message = match LineTooLong::of(&e) {
                Some(long) => long.to_string(),
                None if gz => unreadable(&e),
                None => return Err(Error::io(path, e)),
            };
            Err(Error::LogFormat {
                path: path.to_path_buf(),
                line: limited.line(),
                message,
            })
        }
    }
}

/// The message for a line that cannot be read (a gzip stream that is corrupt or cut there).
fn unreadable(e: &dyn std::fmt::Display) -> String {
    format!(
        "cannot read this line: {e}; the gzip stream is corrupt or cut here: get the file again, \
         or decompress what can be read (`gzip -dc FILE > LOG`, the rows before this line)"
    )
}

/// True when `line` (without its `\n`) is a row of a log whose header has `width` columns,
/// as the reader reads it: the rule [`super::join_logs`] keeps a last line without a newline
/// by, so that a merge keeps exactly the rows every reader reads.
pub(crate) fn is_row(line: &str, width: usize) -> bool {
    let mut csv = csv_reader(line.as_bytes());
    let mut record = ByteRecord::new();
    matches!(csv.read_byte_record(&mut record), Ok(true)) && check_row(&record, width).is_ok()
}

/// The text of a log or sidecar read as bytes: an error naming the file and the line when it
/// is not UTF-8 (never a lossy decode, which would shift byte offsets).
pub fn log_text<'b>(path: &Path, bytes: &'b [u8]) -> Result<&'b str> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = good.iter().filter(|b| **b == b'\n').count() + 1;
        let column = good.len() - good.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
        Error::LogFormat {
            path: path.to_path_buf(),
            line,
            message: not_utf8(bytes[e.valid_up_to()], column + 1),
        }
    })
}

/// The message for a line that is not UTF-8: the byte and its 1-based column.
fn not_utf8(byte: u8, column: usize) -> String {
    format!(
        "not UTF-8 text (byte 0x{byte:02x} at column {column}); logs are UTF-8: is this a log, \
         or was it damaged? Fix or delete that line"
    )
}
