//! Writing logs: [`LogWriter`] appends the way PyTorch's `AutoHeuristic.save_data` does, and
//! [`push_row`] is the one rendering of a data row.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use ah_core::context::Context;
use ah_core::error::{Error, Result};
use ah_core::metadata::Metadata;
use ah_core::value::python_float_repr;

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
            let existing = super::read::metadata_line(path)?;
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

fn metadata_difference(existing: &str, given: &Metadata) -> String {
    let Ok(old) = crate::parse_metadata_line(existing) else {
        return "the existing first line is not AutoHeuristic metadata".into();
    };
    let mut diffs = super::device_differences(&old, given);
    super::push_difference(&mut diffs, "name", &old.name, &given.name);
    super::push_difference(
        &mut diffs,
        "numerical_features",
        &old.numerical_features,
        &given.numerical_features,
    );
    super::push_difference(
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
