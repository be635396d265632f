//! The core crate's error type.
//!
//! `Display` and `Error` are written by hand (as ripgrep's are) rather than derived with
//! thiserror: serde is the core's only outside dependency, so the generated heuristics link
//! as few crates as possible.

use std::path::PathBuf;

/// Errors of the core crate. Every variant that concerns a file names it, and a line number
/// where there is one, so a binary can print it as it is.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Another process holds the log's lock (`ah_log::lock_log`).
    Locked {
        /// The log.
        path: PathBuf,
        /// Its lock file.
        lock: PathBuf,
    },
    /// Reading or writing a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A metadata line is not valid AutoHeuristic metadata JSON.
    Metadata(String),
    /// A log file is malformed at a given line.
    LogFormat {
        /// The log file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong and what to do.
        message: String,
    },
    /// Appending to a log whose metadata line differs (PyTorch's `InconsistentMetadata`).
    InconsistentMetadata {
        /// The log file.
        path: PathBuf,
        /// Its first line.
        existing: String,
        /// The line this writer would write.
        given: String,
        /// A one-line summary of what differs.
        difference: String,
    },
    /// Logs to join (`ah_log::join_logs`) differ in their first two lines.
    LogMismatch {
        /// The differing file.
        path: PathBuf,
        /// The reference file (the first one).
        first_path: PathBuf,
        /// `metadata line` or `header`.
        what: &'static str,
        /// The reference line.
        first: String,
        /// The differing line.
        other: String,
    },
    /// An augment operation's expression does not parse.
    Expression {
        /// The operation's name.
        name: String,
        /// The expression source.
        source_text: String,
        /// 1-based column (in characters) of the problem.
        column: usize,
        /// What was expected and what was found.
        message: String,
    },
    /// Evaluating an augment operation failed (unknown feature, division by zero, ...).
    Operation {
        /// The operation's name.
        name: String,
        /// Why it failed.
        source: crate::ops::EvalError,
    },
    /// A text file other than a log (operations file, cache file) is malformed at a line.
    FileFormat {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong and what to do.
        message: String,
    },
    /// Another error, with a message that says what to do.
    Other(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Locked { path, lock } => write!(
                f,
                "{}: another process is collecting into or merging this file (it holds {}); wait for it to finish, or write to another file",
                path.display(),
                lock.display()
            ),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Metadata(m) => write!(f, "invalid metadata line: {m}"),
            Error::LogFormat { path, line, message } | Error::FileFormat { path, line, message } => {
                write!(f, "{}:{line}: {message}", path.display())
            }
            Error::InconsistentMetadata {
                path,
                existing,
                given,
                difference,
            } => write!(
                f,
                "{}: given metadata does not match existing metadata (PyTorch's InconsistentMetadata)\n  existing: {existing}\n  given:    {given}\n  difference: {difference}\nhint: write to another file, or merge logs of the same device and features only",
                path.display()
            ),
            Error::LogMismatch {
                path,
                first_path,
                what,
                first,
                other,
            } => write!(
                f,
                "{}: {what} differs from {}'s; merge only logs of the same runner, device and features\n  {}: {first}\n  {}: {other}",
                path.display(),
                first_path.display(),
                first_path.display(),
                path.display()
            ),
            Error::Expression {
                name,
                source_text,
                column,
                message,
            } => {
                let (shown, at) = window(source_text, *column, 72);
                write!(
                    f,
                    "operation `{}`: column {column}: {message}\n    {shown}\n    {}",
                    excerpt(name, 60),
                    caret(at)
                )
            }
            Error::Operation { name, source } => write!(f, "operation `{name}`: {source}"),
            Error::Other(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Operation { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// True when `err`, or an error in its `source()` chain, is an I/O error of kind
/// [`std::io::ErrorKind::BrokenPipe`]: stdout went to a pipe whose reader has gone
/// (`ah-train ... | head -1`). Every binary treats that as the end of its output and exits
/// quietly with status 0, as ripgrep does, instead of reporting an error.
pub fn is_broken_pipe(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(err);
    while let Some(e) = current {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        {
            return true;
        }
        current = e.source();
    }
    false
}

/// The message a binary prints for `err`: its message, then each cause in its `source()`
/// chain that the text so far does not already contain, joined by `: ` (anyhow's `{:#}`
/// without the repetition of an error whose message quotes its cause, such as
/// `path: No such file or directory (os error 2)`).
pub fn report(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut current = err.source();
    while let Some(e) = current {
        let message = e.to_string();
        if !out.contains(&message) {
            out.push_str(": ");
            out.push_str(&message);
        }
        current = e.source();
    }
    out
}

fn caret(column: usize) -> String {
    format!("{}^", " ".repeat(column.saturating_sub(1)))
}

/// `text` when it has at most `max` characters, else its first `max` characters and `...`:
/// messages quote user input and stay short whatever its length.
pub fn excerpt(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => text.into(),
        Some((end, _)) => format!("{}...", &text[..end]).into(),
    }
}

/// At most `width` characters of `text` around its 1-based character `column` (`...` marks
/// a cut), and that column's position in the result.
fn window(text: &str, column: usize, width: usize) -> (String, usize) {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= width {
        return (text.to_string(), column);
    }
    let start = column
        .saturating_sub(1 + width / 2)
        .min(chars.len() - width);
    let mut out: String = chars[start..start + width].iter().collect();
    let mut at = column - start;
    if start > 0 {
        out.insert_str(0, "...");
        at += 3;
    }
    if start + width < chars.len() {
        out.push_str("...");
    }
    (out, at)
}

/// Result with the core crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_names_each_cause_once() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let err = Error::io("m.json", io);
        let text = report(&err);
        assert_eq!(text.matches("not found").count(), 1, "{text}");
        assert!(text.starts_with("m.json: "), "{text}");
    }

    #[test]
    fn quoted_input_is_bounded() {
        assert_eq!(excerpt("short", 10), "short");
        assert_eq!(excerpt("αβγδε", 3), "αβγ...");
        let long = format!("{}#{}", "a+".repeat(5000), "b".repeat(5000));
        let err = Error::Expression {
            name: "n".repeat(1000),
            source_text: long.clone(),
            column: 10_001,
            message: "unexpected character `#`".into(),
        };
        let text = err.to_string();
        assert!(text.len() < 400, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let caret = lines[2].find('^').unwrap();
        assert_eq!(lines[1].chars().nth(caret), Some('#'), "{text}");
        let (shown, at) = window("abc", 2, 72);
        assert_eq!((shown.as_str(), at), ("abc", 2));
    }

    #[test]
    fn broken_pipes_are_found_in_the_chain() {
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert!(is_broken_pipe(&pipe));
        let wrapped = Error::io("stdout", pipe);
        assert!(is_broken_pipe(&wrapped));
        let other = Error::io("x", std::io::Error::from(std::io::ErrorKind::NotFound));
        assert!(!is_broken_pipe(&other));
        assert!(!is_broken_pipe(&Error::Other("pipe".into())));
    }
}
