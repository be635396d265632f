//! Writing logs: [`LogWriter`] appends the way PyTorch's `AutoHeuristic.save_data` does, and
//! [`push_row`] is the one rendering of a data row.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use ah_core::context::Context;
use ah_core::error::{Error, Result};
use ah_core::metadata::Metadata;
use ah_core::value::python_float_repr;

use super::head::{check_head, head_text, Head};

/// Appends one data row (without the newline) to `out`: the feature values as already
/// rendered (`Context::feature_values_csv`), the choice and the feedback as Python's `str()`
/// prints a float (`inf` for a failed choice).
pub fn push_row(out: &mut String, values_csv: &str, choice: &str, feedback: f64) {
    out.push_str(values_csv);
    out.push(',');
    out.push_str(choice);
    out.push(',');
    out.push_str(&python_float_repr(feedback));
}

/// True when the file at `path` is empty or ends with `\n`.
fn ends_with_newline(path: &Path) -> Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let io = |e| Error::io(path, e);
    let mut file = File::open(path).map_err(io)?;
    if file.seek(SeekFrom::End(0)).map_err(io)? == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1)).map_err(io)?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last).map_err(io)?;
    Ok(last[0] == b'\n')
}

/// Appends rows to a log the way PyTorch's `AutoHeuristic.save_data` does: a new file gets the
/// metadata and header lines first; an existing file must start with exactly this metadata
/// line (otherwise [`Error::InconsistentMetadata`]) and this header ([`check_head`]: the same
/// columns in the same order, or rows would go under other columns); a head cut short is
/// completed, and a last line without its newline is ended before the first row (it is never
/// joined with a new row). Each row is one `write` call of one line.
#[derive(Debug)]
pub struct LogWriter {
    path: PathBuf,
    file: File,
}

impl LogWriter {
    /// Opens `path` for appending (creating it and its parent folders if needed) with the
    /// given metadata and header features. Refuses a path that is not a regular file (a FIFO
    /// would block: [`ah_core::fs::check_writable_path`]) and a gzip file.
    pub fn append(
        path: impl AsRef<Path>,
        metadata: &Metadata,
        features: &[String],
    ) -> Result<Self> {
        let path = path.as_ref();
        ah_core::fs::check_writable_path(path)?;
        let io = |e| Error::io(path, e);
        let missing = match check_head(path, metadata, features)? {
            // A last line without its newline (a row, or a write cut short) is ended first,
            // so that the new rows never join it: the reader then reads it as before.
            Head::Matches { missing } if missing.is_empty() && !ends_with_newline(path)? => {
                "\n".to_string()
            }
            Head::Matches { missing } => missing,
            Head::New => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
                }
                head_text(metadata, features)
            }
        };
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        if !missing.is_empty() {
            file.write_all(missing.as_bytes()).map_err(io)?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Appends one row: the context's values, the choice and the feedback (ms).
    pub fn write_row(&mut self, context: &Context, choice: &str, feedback: f64) -> Result<()> {
        let mut line = String::with_capacity(128);
        push_row(&mut line, &context.feature_values_csv(), choice, feedback);
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
