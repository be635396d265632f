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
    /// Appending to a log whose metadata line (line 1) differs (PyTorch's
    /// `InconsistentMetadata`).
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
            Error::Locked { path, lock } if path == lock => write!(
                f,
                "{}: another process is collecting into or merging this file, under another name of it (a hard or symbolic link: it holds the file's own lock); wait for it to finish, or write to another file",
                shown(path)
            ),
            Error::Locked { path, lock } => write!(
                f,
                "{}: another process is collecting into or merging this file (it holds {}); wait for it to finish, or write to another file",
                shown(path),
                shown(lock)
            ),
            Error::Io { path, source } => write_io(f, path, source),
            Error::Metadata(m) => write!(f, "invalid metadata line: {}", clip(m)),
            Error::LogFormat { path, line, message } | Error::FileFormat { path, line, message } => {
                write!(f, "{}:{line}: {message}", shown(path))
            }
            Error::InconsistentMetadata {
                path,
                existing,
                given,
                difference,
            } => write!(
                f,
                "{}:1: given metadata does not match existing metadata (PyTorch's InconsistentMetadata)\n  existing: {}\n  given:    {}\n  difference: {}\nhint: write to another file, or merge logs of the same device and features only",
                shown(path),
                clip(existing),
                clip(given),
                clip(difference)
            ),
            Error::LogMismatch {
                path,
                first_path,
                what,
                first,
                other,
            } => write!(
                f,
                "{}: {what} differs from {}'s; merge only logs of the same runner, device and features\n  {}: {}\n  {}: {}",
                shown(path),
                shown(first_path),
                shown(first_path),
                clip(first),
                shown(path),
                clip(other)
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
                    clip_to(name, 60),
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

/// How every binary ends, given what its `run` returned (`anyhow::Result<ExitCode>` is one):
/// the code of a success; a broken pipe ([`is_broken_pipe`], stdout closed by `| head`) ends
/// the output quietly with status 0; any other error is printed once to stderr, `error: ` and
/// its [`report`], with status 2.
pub fn exit_code<E>(result: Result<std::process::ExitCode, E>) -> std::process::ExitCode
where
    E: AsRef<dyn std::error::Error + Send + Sync + 'static>,
{
    let err = match result {
        Ok(code) => return code,
        Err(e) => e,
    };
    let err = err.as_ref();
    if is_broken_pipe(err) {
        return std::process::ExitCode::SUCCESS;
    }
    eprintln!("error: {}", report(err));
    std::process::ExitCode::from(2)
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

/// How many characters of a user's string (a header, a metadata line, a value) a message
/// quotes: longer strings are cut by [`clip`], so that no message is longer than a screen.
pub const QUOTE_CHARS: usize = 200;

/// A user's string as an error message quotes it: whole up to [`QUOTE_CHARS`] characters,
/// else its first [`QUOTE_CHARS`] characters and `… (N more characters)`. Linear in the
/// string; the one bound on quoted text of every message of the workspace.
pub fn clip(text: &str) -> std::borrow::Cow<'_, str> {
    clip_to(text, QUOTE_CHARS)
}

/// [`clip`] at `max` characters, for a quote inside a longer message (a name in a list).
pub fn clip_to(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(text),
        Some((end, _)) => {
            let more = text[end..].chars().count();
            std::borrow::Cow::Owned(format!("{}… ({more} more characters)", &text[..end]))
        }
    }
}

/// A path as an error message shows it: whole up to [`QUOTE_CHARS`] characters, else its
/// first and last `QUOTE_CHARS / 2` characters around `…(N characters)…`, so that the file
/// name at its end stays readable.
pub fn shown(path: &std::path::Path) -> String {
    let text = path.display().to_string();
    let count = text.chars().count();
    if count <= QUOTE_CHARS {
        return text;
    }
    let half = QUOTE_CHARS / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(count - half).collect();
    format!("{head}…({} characters)…{tail}", count - 2 * half)
}

/// What to do about an operating system error, by its kind, when there is something to say:
/// the line `hint: ...` that [`Error::Io`] and the tools' I/O errors end with.
pub fn io_advice(err: &std::io::Error) -> Option<&'static str> {
    use std::io::ErrorKind as K;
    Some(match err.kind() {
        K::PermissionDenied => {
            "check the permissions of the file and of its folder, or use another path"
        }
        K::NotFound => "check the path: the file, or a folder on the way, does not exist",
        K::InvalidFilename => {
            "a name in the path is too long for the file system (most allow 255 bytes; the \
             sidecars add up to 16 bytes to a log's name): use a shorter name"
        }
        K::StorageFull | K::QuotaExceeded => {
            "the disk (or your quota) is full: free some space, or write to another disk"
        }
        K::ReadOnlyFilesystem => "the file system is read-only: write somewhere else",
        K::IsADirectory => "the path is a folder: give a file's path",
        K::NotADirectory | K::AlreadyExists => {
            "a part of the path that should be a folder is a file: check the path"
        }
        _ => return None,
    })
}

/// The message of an I/O error on `path`: `{path}: {err}` and, when there is one, a line
/// `hint: {advice}` ([`io_advice`]); the path bounded ([`shown`]).
pub fn io_text(path: &std::path::Path, err: &std::io::Error) -> String {
    struct Io<'a>(&'a std::path::Path, &'a std::io::Error);
    impl std::fmt::Display for Io<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write_io(f, self.0, self.1)
        }
    }
    Io(path, err).to_string()
}

/// Writes [`io_text`] to `f`.
pub fn write_io(
    f: &mut std::fmt::Formatter<'_>,
    path: &std::path::Path,
    err: &std::io::Error,
) -> std::fmt::Result {
    write!(f, "{}: {err}", shown(path))?;
    match io_advice(err) {
        Some(advice) => write!(f, "\nhint: {advice}"),
        None => Ok(()),
    }
}

fn caret(column: usize) -> String {
    format!("{}^", " ".repeat(column.saturating_sub(1)))
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
    fn quotes_and_paths_are_bounded() {
        assert_eq!(clip("short"), "short");
        let long = "é".repeat(QUOTE_CHARS + 5);
        let c = clip(&long);
        assert!(c.starts_with(&"é".repeat(QUOTE_CHARS)), "{c}");
        assert!(c.ends_with("… (5 more characters)"), "{c}");
        let path = std::path::PathBuf::from(format!("/d/{}.txt.medians.txt", "x".repeat(300)));
        let s = shown(&path);
        assert!(
            s.starts_with("/d/xx") && s.ends_with("xx.txt.medians.txt"),
            "{s}"
        );
        assert!(s.chars().count() < QUOTE_CHARS + 40, "{s}");
        let huge = Error::InconsistentMetadata {
            path: path.clone(),
            existing: "a".repeat(3_000_000),
            given: "b".repeat(3_000_000),
            difference: "c".repeat(3_000_000),
        };
        assert!(huge.to_string().len() < 2_000, "{}", huge.to_string().len());
    }

    #[test]
    fn io_errors_say_what_to_do_once() {
        let err = Error::io(
            "out/x.txt",
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        );
        let text = report(&err);
        assert_eq!(text.matches("permission denied").count(), 1, "{text}");
        assert!(text.contains("\nhint: check the permissions"), "{text}");
    }

    #[test]
    fn quoted_input_is_bounded() {
        assert_eq!(clip_to("short", 10), "short");
        assert_eq!(clip_to("αβγδε", 3), "αβγ… (2 more characters)");
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

    /// A binary's status: its own on success, 0 for a broken pipe, 2 for any other error.
    #[test]
    fn exit_codes_of_a_binary() {
        use std::process::ExitCode;
        type BoxError = Box<dyn std::error::Error + Send + Sync>;
        let code = |r: Result<ExitCode, BoxError>| format!("{:?}", exit_code(r));
        let want = |c: u8| format!("{:?}", ExitCode::from(c));
        assert_eq!(code(Ok(ExitCode::from(1))), want(1));
        let pipe = Error::io("stdout", std::io::ErrorKind::BrokenPipe.into());
        assert_eq!(code(Err(Box::new(pipe))), want(0));
        assert_eq!(code(Err(Box::new(Error::Other("x".into())))), want(2));
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
