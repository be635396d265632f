//! PyTorch's AutoHeuristic log format ("train.txt"), read and written byte for byte.
//!
//! Line 1 is the JSON metadata, line 2 the CSV header (features in context order, then
//! `choice,feedback`), every further line one benchmarked (input, choice) with unquoted
//! Python `str()` values and the feedback in milliseconds. Logs may be gzip-compressed
//! (a `.gz` suffix). See `docs/log-format.md`.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::context::Context;
use crate::error::{Error, Result};
use crate::metadata::Metadata;
use crate::value::{parse_python_float, python_float_repr, Value};

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
    /// Feature values in header order.
    pub values: Vec<Value>,
    /// Index into [`Log::choices`].
    pub choice: u32,
    /// Measured time in milliseconds; `inf` when the choice failed.
    pub feedback: f64,
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
    /// Reads a log, plain or gzip (by the `.gz` suffix or the gzip magic bytes).
    pub fn read(path: impl AsRef<Path>, options: ReadOptions) -> Result<Log> {
        let path = path.as_ref();
        let reader = open_maybe_gz(path)?;
        Self::from_reader(path, reader, options)
    }

    /// Reads a log from any buffered reader; `path` is used in messages only.
    ///
    /// Linear in the size of the input: each line is read once into one reused buffer, and a
    /// row's cells are parsed straight into a vector of exactly the header's width. Every error
    /// names the file and the line.
    pub fn from_reader(path: &Path, mut reader: impl BufRead, options: ReadOptions) -> Result<Log> {
        let fmt_err = |line: usize, message: String| Error::LogFormat {
            path: path.to_path_buf(),
            line,
            message,
        };
        let mut buf = Vec::new();
        let Some(first) = next_line(&mut reader, &mut buf, path, 1)? else {
            return Err(fmt_err(
                1,
                "the file is empty; an AutoHeuristic log starts with a JSON metadata line".into(),
            ));
        };
        let metadata_line = first.to_string();
        let metadata = Metadata::from_json_line(&metadata_line)
            .map_err(|e| fmt_err(1, format!("{e}; is this an AutoHeuristic log (train.txt)?")))?;
        let Some(header) = next_line(&mut reader, &mut buf, path, 2)? else {
            return Err(fmt_err(
                2,
                "missing CSV header line after the metadata".into(),
            ));
        };
        let features = parse_header(header, &metadata).map_err(|m| fmt_err(2, m))?;
        let n = features.len() + 2;
        let mut log = Log {
            path: path.to_path_buf(),
            metadata,
            metadata_line,
            features,
            choices: Vec::new(),
            rows: Vec::new(),
            malformed: Vec::new(),
            blank_lines: 0,
        };
        let mut choice_index: std::collections::HashMap<String, u32> = Default::default();
        let mut lineno = 2;
        loop {
            lineno += 1;
            let Some(text) = next_line(&mut reader, &mut buf, path, lineno)? else {
                break;
            };
            if text.is_empty() {
                log.blank_lines += 1;
                continue;
            }
            match parse_row(text, n) {
                Ok((values, choice, feedback)) => {
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
                        values,
                        choice: idx,
                        feedback,
                    });
                }
                Err(reason) => {
                    if options.strict {
                        return Err(fmt_err(lineno, reason));
                    }
                    log.malformed.push(MalformedLine {
                        line: lineno,
                        reason,
                    });
                }
            }
        }
        Ok(log)
    }

    /// The header line as written (features, `choice`, `feedback`).
    pub fn header_line(&self) -> String {
        let mut h = self.features.join(",");
        h.push_str(",choice,feedback");
        h
    }

    /// A data row rendered as PyTorch writes it.
    pub fn row_line(&self, row: &LogRow) -> String {
        let mut s = String::with_capacity(128);
        for v in &row.values {
            s.push_str(&v.to_string());
            s.push(',');
        }
        s.push_str(&self.choices[row.choice as usize]);
        s.push(',');
        s.push_str(&python_float_repr(row.feedback));
        s
    }

    /// Repairs a log whose last line was torn (a collector killed mid-write): when the file does
    /// not end with `\n`, truncates it after the last `\n` and returns the bytes cut off (lossy
    /// UTF-8). Returns `None` when the file is empty or already ends with a newline. Plain
    /// (uncompressed) files only.
    pub fn repair_torn_tail(path: impl AsRef<Path>) -> Result<Option<String>> {
        let path = path.as_ref();
        let io = |e| Error::io(path, e);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len == 0 {
            return Ok(None);
        }
        let mut magic = [0u8; 2];
        if len >= 2 {
            file.read_exact(&mut magic).map_err(io)?;
            if magic == [0x1f, 0x8b] {
                return Err(Error::Other(format!(
                    "{}: cannot repair a gzip-compressed log; decompress it first",
                    path.display()
                )));
            }
        }
        // Scan backwards in chunks for the last newline.
        let mut end = len;
        let mut keep = 0u64;
        let mut buf = vec![0u8; 64 * 1024];
        'scan: while end > 0 {
            let start = end.saturating_sub(buf.len() as u64);
            let chunk = &mut buf[..(end - start) as usize];
            file.seek(SeekFrom::Start(start)).map_err(io)?;
            file.read_exact(chunk).map_err(io)?;
            if end == len && chunk.last() == Some(&b'\n') {
                return Ok(None);
            }
            if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
                keep = start + i as u64 + 1;
                break 'scan;
            }
            end = start;
        }
        let mut cut = Vec::with_capacity((len - keep) as usize);
        file.seek(SeekFrom::Start(keep)).map_err(io)?;
        file.read_to_end(&mut cut).map_err(io)?;
        file.set_len(keep).map_err(io)?;
        file.sync_data().map_err(io)?;
        Ok(Some(String::from_utf8_lossy(&cut).into_owned()))
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

/// Reads line `lineno` (1-based) into `buf` and returns it as text without its line end
/// (`\n`, `\r\n`); `None` at the end of the input. Bytes that are not UTF-8 and read errors
/// (a corrupt gzip stream) are errors naming the file and the line.
fn next_line<'b>(
    reader: &mut impl BufRead,
    buf: &'b mut Vec<u8>,
    path: &Path,
    lineno: usize,
) -> Result<Option<&'b str>> {
    buf.clear();
    let fmt_err = |message: String| Error::LogFormat {
        path: path.to_path_buf(),
        line: lineno,
        message,
    };
    let read = reader.read_until(b'\n', buf).map_err(|e| {
        fmt_err(format!(
            "cannot read this line: {e} (a corrupt or cut gzip file?)"
        ))
    })?;
    if read == 0 {
        return Ok(None);
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    match std::str::from_utf8(buf) {
        Ok(text) => Ok(Some(text)),
        Err(e) => Err(fmt_err(format!(
            "not UTF-8 text (byte 0x{:02x} at column {}); logs are UTF-8: is this a log, or was it \
             damaged?",
            buf[e.valid_up_to()],
            e.valid_up_to() + 1
        ))),
    }
}

/// The feature columns of a header line (it must end with `choice,feedback` and hold every
/// metadata feature). Linear in the number of columns.
fn parse_header(header: &str, metadata: &Metadata) -> std::result::Result<Vec<String>, String> {
    let mut features: Vec<String> = header.split(',').map(str::to_string).collect();
    let n = features.len();
    if n < 2 || features[n - 2] != "choice" || features[n - 1] != "feedback" {
        return Err(format!(
            "the header must end with `choice,feedback`, found `{}`",
            tail_of(header, 80)
        ));
    }
    features.truncate(n - 2);
    let columns: std::collections::HashSet<&str> = features.iter().map(String::as_str).collect();
    if let Some(f) = metadata.features().find(|f| !columns.contains(f)) {
        return Err(format!(
            "feature `{f}` of the metadata line is not a column of the header"
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

/// Parses a data row of `n` fields (features, choice, feedback) without splitting it into an
/// intermediate list: the commas are counted first, then the cells parsed in place.
fn parse_row(text: &str, n: usize) -> std::result::Result<(Vec<Value>, &str, f64), String> {
    let found = text.bytes().filter(|&b| b == b',').count() + 1;
    if found != n {
        return Err(format!(
            "expected {n} fields, found {found} (the row is cut or has extra commas)"
        ));
    }
    let mut back = text.rsplitn(3, ',');
    let feedback_text = back.next().unwrap_or_default();
    let choice = back.next().unwrap_or_default();
    let feedback = parse_python_float(feedback_text)
        .ok_or_else(|| format!("feedback `{}` is not a number", tail_of(feedback_text, 40)))?;
    if feedback <= 0.0 {
        return Err(format!(
            "feedback `{feedback_text}` is not a time: times (ms) are positive, `inf` for a failed \
             choice"
        ));
    }
    if choice.is_empty() {
        return Err("empty choice".into());
    }
    let mut values = Vec::with_capacity(n - 2);
    if let Some(cells) = back.next() {
        values.extend(cells.split(',').map(Value::parse));
    }
    Ok((values, choice, feedback))
}

/// Differences of device identity (`shared_memory`, `device_capa`) between two logs' metadata,
/// one line, or `None` when they were collected on the same kind of device. Tools that combine
/// logs (training with `--data`, replay) warn with it: a heuristic learned on one device is
/// matched on that device's identity.
pub fn device_difference(reference: &Metadata, other: &Metadata) -> Option<String> {
    let mut diffs = Vec::new();
    if reference.shared_memory != other.shared_memory {
        diffs.push(format!(
            "shared_memory {} vs {}",
            reference.shared_memory, other.shared_memory
        ));
    }
    if reference.device_capa != other.device_capa {
        diffs.push(format!(
            "device_capa {:?} vs {:?}",
            reference.device_capa, other.device_capa
        ));
    }
    (!diffs.is_empty()).then(|| diffs.join(", "))
}

/// The lock sidecar of a log: `FILE.lock`. Every writer of a log (ah-collect's collection,
/// merge and repair, the runtime in collect mode) holds it exclusively while writing. It lies
/// next to the file a symbolic link points to, is created empty and is never renamed or
/// removed, so every writer locks the same inode.
pub fn lock_path(log: &Path) -> PathBuf {
    let resolved = std::fs::canonicalize(log).ok().or_else(|| {
        let dir = match log.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        Some(std::fs::canonicalize(dir).ok()?.join(log.file_name()?))
    });
    let mut s = resolved
        .as_deref()
        .unwrap_or(log)
        .as_os_str()
        .to_os_string();
    s.push(".lock");
    PathBuf::from(s)
}

/// A hold on a log's lock (see [`lock_log`]); released when dropped.
#[derive(Debug)]
pub struct LogLock {
    path: PathBuf,
    _file: File,
}

impl LogLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Takes the lock of `log` without waiting: exclusive for a writer, shared for a reader that
/// must not see the log change (a merge's inputs). [`Error::Locked`] when another process
/// holds it in a conflicting mode.
pub fn lock_log(log: &Path, exclusive: bool) -> Result<LogLock> {
    let path = lock_path(log);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    let taken = if exclusive {
        file.try_lock()
    } else {
        file.try_lock_shared()
    };
    match taken {
        Ok(()) => Ok(LogLock { path, _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::Locked {
            path: log.to_path_buf(),
            lock: path,
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io(&path, e)),
    }
}

/// Opens a file for reading, transparently decompressing gzip.
pub fn open_maybe_gz(path: &Path) -> Result<Box<dyn BufRead>> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut magic = [0u8; 2];
    let got = file.read(&mut magic).map_err(|e| Error::io(path, e))?;
    file.seek(SeekFrom::Start(0))
        .map_err(|e| Error::io(path, e))?;
    let gz = got == 2 && magic == [0x1f, 0x8b];
    Ok(if gz {
        Box::new(BufReader::with_capacity(
            1 << 16,
            flate2::read::MultiGzDecoder::new(file),
        ))
    } else {
        Box::new(BufReader::with_capacity(1 << 16, file))
    })
}

/// Appends rows to a log the way PyTorch's `AutoHeuristic.save_data` does: a new file gets the
/// metadata and header lines first; an existing file must start with exactly this metadata
/// line, otherwise [`Error::InconsistentMetadata`]. Each row is one `write` call of one line.
#[derive(Debug)]
pub struct LogWriter {
    path: PathBuf,
    file: File,
}

impl LogWriter {
    /// Opens `path` for appending (creating it and its parent folders if needed) with the
    /// given metadata and header features.
    pub fn append(
        path: impl AsRef<Path>,
        metadata: &Metadata,
        features: &[String],
    ) -> Result<Self> {
        let path = path.as_ref();
        let line = metadata.to_json_line();
        let io = |e| Error::io(path, e);
        if path.exists() && std::fs::metadata(path).map_err(io)?.len() > 0 {
            let existing = first_line(path)?;
            if existing.trim() != line.trim() {
                return Err(Error::InconsistentMetadata {
                    path: path.to_path_buf(),
                    difference: metadata_difference(&existing, metadata),
                    existing,
                    given: line,
                });
            }
            let file = OpenOptions::new().append(true).open(path).map_err(io)?;
            return Ok(Self {
                path: path.to_path_buf(),
                file,
            });
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        let mut head = line;
        head.push('\n');
        head.push_str(&features.join(","));
        head.push_str(",choice,feedback\n");
        file.write_all(head.as_bytes()).map_err(io)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Appends one row: the context's values, the choice and the feedback (ms).
    pub fn write_row(&mut self, context: &Context, choice: &str, feedback: f64) -> Result<()> {
        let mut line = context.feature_values_csv();
        line.push(',');
        line.push_str(choice);
        line.push(',');
        line.push_str(&python_float_repr(feedback));
        self.write_line(&line)
    }

    /// Appends one already rendered row (without the newline) in a single write.
    pub fn write_line(&mut self, line: &str) -> Result<()> {
        let mut buf = String::with_capacity(line.len() + 1);
        buf.push_str(line);
        buf.push('\n');
        self.file
            .write_all(buf.as_bytes())
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Flushes to the operating system and to disk.
    pub fn sync(&mut self) -> Result<()> {
        self.file.sync_data().map_err(|e| Error::io(&self.path, e))
    }

    /// The file written to.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn first_line(path: &Path) -> Result<String> {
    let mut r = open_maybe_gz(path)?;
    let mut buf = Vec::new();
    Ok(next_line(&mut r, &mut buf, path, 1)?
        .unwrap_or_default()
        .to_string())
}

fn metadata_difference(existing: &str, given: &Metadata) -> String {
    let Ok(old) = Metadata::from_json_line(existing) else {
        return "the existing first line is not AutoHeuristic metadata".into();
    };
    let mut diffs = Vec::new();
    if old.shared_memory != given.shared_memory {
        diffs.push(format!(
            "shared_memory {} vs {}",
            old.shared_memory, given.shared_memory
        ));
    }
    if old.device_capa != given.device_capa {
        diffs.push(format!(
            "device_capa {:?} vs {:?}",
            old.device_capa, given.device_capa
        ));
    }
    if old.name != given.name {
        diffs.push(format!("name {:?} vs {:?}", old.name, given.name));
    }
    if old.numerical_features != given.numerical_features {
        diffs.push(format!(
            "numerical_features {:?} vs {:?}",
            old.numerical_features, given.numerical_features
        ));
    }
    if old.categorical_features != given.categorical_features {
        diffs.push(format!(
            "categorical_features {:?} vs {:?}",
            old.categorical_features, given.categorical_features
        ));
    }
    if diffs.is_empty() {
        "same content, different layout (an older serializer's key order or `choices` key)".into()
    } else {
        diffs.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::DeviceIdentity;

    fn fa_metadata() -> Metadata {
        Metadata::new(DeviceIdentity::A100, "test", vec!["fa".into()], vec![])
    }

    #[test]
    fn unit_test_literal_of_the_spec() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("train.txt");
        let mut ctx = Context::new();
        ctx.add("fa", 5i64);
        let mut w = LogWriter::append(&path, &fa_metadata(), &["fa".to_string()]).unwrap();
        for (c, t) in [("a", 1.0), ("b", 2.0), ("c", 3.0)] {
            w.write_row(&ctx, c, t).unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(
            lines[0],
            r#"{"shared_memory": 166912, "device_capa": [8, 0], "name": "test", "numerical_features": ["fa"], "categorical_features": []}"#
        );
        assert_eq!(
            &lines[1..],
            ["fa,choice,feedback", "5,a,1.0", "5,b,2.0", "5,c,3.0"]
        );
        let log = Log::read(&path, ReadOptions { strict: true }).unwrap();
        assert_eq!(log.rows.len(), 3);
        assert_eq!(log.choices, ["a", "b", "c"]);
    }

    #[test]
    fn append_with_other_metadata_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("train.txt");
        LogWriter::append(&path, &fa_metadata(), &["fa".to_string()]).unwrap();
        let mut other = fa_metadata();
        other.shared_memory = 232448;
        let err = LogWriter::append(&path, &other, &["fa".to_string()]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("InconsistentMetadata"), "{msg}");
        assert!(msg.contains("shared_memory 166912 vs 232448"), "{msg}");
        assert!(msg.contains("train.txt"), "{msg}");
    }

    #[test]
    fn malformed_rows_are_counted_or_refused() {
        let text = format!(
            "{}\nfa,choice,feedback\n5,a,1.0\n5,a\n\n5,b,x\n6,b,inf\n",
            fa_metadata().to_json_line()
        );
        let log =
            Log::from_reader(Path::new("t.txt"), text.as_bytes(), ReadOptions::default()).unwrap();
        assert_eq!(log.rows.len(), 2);
        assert_eq!(log.blank_lines, 1);
        assert_eq!(
            log.malformed.iter().map(|m| m.line).collect::<Vec<_>>(),
            [4, 6]
        );
        assert!(log.rows[1].feedback.is_infinite());
        let err = Log::from_reader(
            Path::new("t.txt"),
            text.as_bytes(),
            ReadOptions { strict: true },
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with("t.txt:4: expected 3 fields"),
            "{err}"
        );
    }

    #[test]
    fn torn_tail_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("train.txt");
        let head = format!(
            "{}\nfa,choice,feedback\n5,a,1.0\n",
            fa_metadata().to_json_line()
        );
        std::fs::write(&path, format!("{head}5,b,2.")).unwrap();
        assert_eq!(
            Log::repair_torn_tail(&path).unwrap().as_deref(),
            Some("5,b,2.")
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), head);
        assert_eq!(Log::repair_torn_tail(&path).unwrap(), None, "already whole");
        std::fs::write(&path, "").unwrap();
        assert_eq!(Log::repair_torn_tail(&path).unwrap(), None);
        std::fs::write(&path, "{\"torn").unwrap();
        assert_eq!(
            Log::repair_torn_tail(&path).unwrap().as_deref(),
            Some("{\"torn")
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        // Longer than one scan chunk.
        let long = format!("{head}{}", "9".repeat(200_000));
        std::fs::write(&path, &long).unwrap();
        assert_eq!(
            Log::repair_torn_tail(&path).unwrap().map(|s| s.len()),
            Some(200_000)
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), head);
        assert!(Log::repair_torn_tail(dir.path().join("missing.txt")).is_err());
    }

    fn read_text(bytes: &[u8], strict: bool) -> Result<Log> {
        Log::from_reader(Path::new("t.txt"), bytes, ReadOptions { strict })
    }

    #[test]
    fn not_utf8_names_the_line_on_every_line() {
        let md = fa_metadata().to_json_line();
        let head = format!("{md}\nfa,choice,feedback\n");
        let cat = |parts: &[&[u8]]| parts.concat();
        let cases: [(Vec<u8>, usize); 4] = [
            (cat(&[b"{\"shared", &[0xff]]), 1),
            (
                cat(&[md.as_bytes(), b"\nfa,cho", &[0xe9], b"ice,feedback\n"]),
                2,
            ),
            (
                cat(&[head.as_bytes(), b"5,a,1.0\n5,", &[0xff], b",1.0\n"]),
                4,
            ),
            (cat(&[head.as_bytes(), b"\n5,a,1.", &[0xc3]]), 4),
        ];
        for (bytes, line) in cases {
            for strict in [false, true] {
                let err = read_text(&bytes, strict).unwrap_err().to_string();
                assert!(
                    err.starts_with(&format!("t.txt:{line}: not UTF-8")),
                    "{err}"
                );
            }
        }
    }

    #[test]
    fn non_positive_times_are_malformed_and_inf_is_a_failure() {
        let text = format!(
            "{}\nfa,choice,feedback\n5,a,1.0\n5,b,0.0\n5,c,-2.5\n5,d,inf\n5,e,-inf\n5,f,nan\n",
            fa_metadata().to_json_line()
        );
        let log = read_text(text.as_bytes(), false).unwrap();
        assert_eq!(log.rows.len(), 3, "1.0, inf and nan stay rows");
        assert!(log.rows[1].feedback.is_infinite());
        let bad: Vec<usize> = log.malformed.iter().map(|m| m.line).collect();
        assert_eq!(bad, [4, 5, 7]);
        assert!(
            log.malformed[0].reason.contains("is not a time"),
            "{:?}",
            log.malformed
        );
        let err = read_text(text.as_bytes(), true).unwrap_err().to_string();
        assert!(
            err.starts_with("t.txt:4: feedback `0.0` is not a time"),
            "{err}"
        );
    }

    #[test]
    fn wide_headers_are_checked_in_linear_time_with_short_messages() {
        let names: Vec<String> = (0..50_000).map(|i| format!("f{i}")).collect();
        let mut md = fa_metadata();
        md.numerical_features = names.clone();
        let row = "1,".repeat(names.len());
        let text = format!(
            "{}\n{},choice,feedback\n{row}a,1.0\n",
            md.to_json_line(),
            names.join(",")
        );
        let log = read_text(text.as_bytes(), true).unwrap();
        assert_eq!(
            (log.features.len(), log.rows[0].values.len()),
            (50_000, 50_000)
        );
        let bad = text.replace(",choice,feedback", ",choice,time");
        let err = read_text(bad.as_bytes(), true).unwrap_err().to_string();
        assert!(err.starts_with("t.txt:2: the header must end"), "{err}");
        assert!(
            err.len() < 200,
            "the message quotes only the header's end: {err}"
        );
        let missing = text.replacen(",f49999,", ",g,", 1);
        let err = read_text(missing.as_bytes(), true).unwrap_err().to_string();
        assert!(err.contains("feature `f49999`"), "{err}");
    }

    #[test]
    fn a_corrupt_gzip_names_the_line() {
        use std::io::Write as _;
        let text = format!("{}\nfa,choice,feedback\n", fa_metadata().to_json_line())
            + &"5,a,1.0\n".repeat(10_000);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        let mut bytes = gz.finish().unwrap();
        let cut = bytes.len() / 2;
        bytes.truncate(cut);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt.gz");
        std::fs::write(&path, &bytes).unwrap();
        let err = Log::read(&path, ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("t.txt.gz:") && err.contains("cannot read this line"),
            "{err}"
        );
    }

    #[test]
    fn device_difference_names_both_identities() {
        let a = fa_metadata();
        let mut b = fa_metadata();
        assert_eq!(device_difference(&a, &b), None);
        b.device_capa = (9, 0);
        b.shared_memory = 232448;
        assert_eq!(
            device_difference(&a, &b).unwrap(),
            "shared_memory 166912 vs 232448, device_capa (8, 0) vs (9, 0)"
        );
    }
}
