//! Writing generated files: all or nothing, only what changed, or checking what is on disk.

use std::path::{Path, PathBuf};

use crate::error::CodegenError;

/// What [`crate::generate`] does with the files it renders (uv's `--mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// Write files whose contents changed; leave identical files untouched.
    #[default]
    Write,
    /// Write nothing; report every file whose contents on disk differ.
    Check,
    /// Write nothing; return the contents (the CLI prints them).
    DryRun,
}

/// One generated file, rendered in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Where it goes.
    pub path: PathBuf,
    /// Its full contents.
    pub contents: String,
}

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStatus {
    /// Written (new or changed).
    Written,
    /// On disk already, byte for byte.
    UpToDate,
    /// Check mode: the file on disk differs (or is missing); `diff` summarises how.
    Stale {
        /// A short line diff, old (`-`, on disk) against new (`+`, generated).
        diff: String,
    },
    /// Dry run: nothing written.
    DryRun,
}

/// One file's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOutcome {
    /// The file.
    pub path: PathBuf,
    /// What happened.
    pub status: FileStatus,
    /// The generated contents.
    pub contents: String,
}

/// What [`crate::generate`] did, file by file, in a fixed order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Every generated file.
    pub files: Vec<FileOutcome>,
}

impl Outcome {
    /// The files found stale in check mode.
    pub fn stale(&self) -> impl Iterator<Item = &FileOutcome> {
        self.files
            .iter()
            .filter(|f| matches!(f.status, FileStatus::Stale { .. }))
    }

    /// True when check mode found a stale file.
    pub fn is_stale(&self) -> bool {
        self.stale().next().is_some()
    }
}

/// Applies `mode` to `files`. In write mode the changed files are written all or nothing
/// ([`ah_core::fs::write_all_atomic`]), so that a failure leaves no half-written output behind.
pub fn apply(files: Vec<GeneratedFile>, mode: Mode) -> Result<Outcome, CodegenError> {
    let mut outcome = Outcome::default();
    match mode {
        Mode::DryRun => {
            for f in files {
                outcome.files.push(FileOutcome {
                    path: f.path,
                    status: FileStatus::DryRun,
                    contents: f.contents,
                });
            }
        }
        Mode::Check => {
            for f in files {
                let status = match read_existing(&f.path)? {
                    Some(old) if old == f.contents => FileStatus::UpToDate,
                    Some(old) => FileStatus::Stale {
                        diff: diff_summary(&old, &f.contents),
                    },
                    None => FileStatus::Stale {
                        diff: "missing: the file does not exist".into(),
                    },
                };
                outcome.files.push(FileOutcome {
                    path: f.path,
                    status,
                    contents: f.contents,
                });
            }
        }
        Mode::Write => {
            for f in files {
                let unchanged = read_existing(&f.path)?.is_some_and(|old| old == f.contents);
                outcome.files.push(FileOutcome {
                    path: f.path,
                    status: if unchanged {
                        FileStatus::UpToDate
                    } else {
                        FileStatus::Written
                    },
                    contents: f.contents,
                });
            }
            let changed: Vec<(&Path, &[u8])> = outcome
                .files
                .iter()
                .filter(|f| f.status == FileStatus::Written)
                .map(|f| (f.path.as_path(), f.contents.as_bytes()))
                .collect();
            ah_core::fs::write_all_atomic(&changed).map_err(|e| {
                if changed.iter().any(|(p, _)| *p == e.path) {
                    CodegenError::io(e.path, e.source)
                } else {
                    CodegenError::Output {
                        message: format!("cannot create the output folder: {}", e.source),
                        path: e.path,
                    }
                }
            })?;
        }
    }
    Ok(outcome)
}

fn read_existing(path: &Path) -> Result<Option<String>, CodegenError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CodegenError::io(path, e)),
    }
}

/// A short diff: the changed line ranges, old lines prefixed `-`, new lines `+`, at most
/// a few hunks of a few lines each.
pub fn diff_summary(old: &str, new: &str) -> String {
    const MAX_HUNKS: usize = 5;
    const MAX_LINES: usize = 6;
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // Trim the common prefix and suffix, then report the middle, split into hunks by a
    // simple line-by-line walk (generated files change in place, rarely shift).
    let mut out = String::new();
    let mut hunks = 0;
    let (mut i, mut j) = (0, 0);
    let mut changed = 0;
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
            continue;
        }
        // A hunk: find the next point where the two resynchronise (same line), searching
        // a small window.
        let (mut ei, mut ej) = (a.len(), b.len());
        'search: for d in 1..=200usize {
            for k in 0..=d {
                let (x, y) = (i + k, j + d - k);
                if x < a.len() && y < b.len() && a[x] == b[y] {
                    ei = x;
                    ej = y;
                    break 'search;
                }
            }
        }
        changed += (ei - i).max(ej - j);
        if hunks < MAX_HUNKS {
            out.push_str(&format!(
                "@@ line {} (on disk) / {} (generated) @@\n",
                i + 1,
                j + 1
            ));
            for l in a[i..ei].iter().take(MAX_LINES) {
                out.push_str(&format!("-{l}\n"));
            }
            if ei - i > MAX_LINES {
                out.push_str(&format!("-... {} more\n", ei - i - MAX_LINES));
            }
            for l in b[j..ej].iter().take(MAX_LINES) {
                out.push_str(&format!("+{l}\n"));
            }
            if ej - j > MAX_LINES {
                out.push_str(&format!("+... {} more\n", ej - j - MAX_LINES));
            }
        }
        hunks += 1;
        i = ei;
        j = ej;
    }
    if hunks == 0 {
        // Same lines, different bytes: line endings or the final newline.
        return "the files differ only in line endings or the final newline\n".into();
    }
    if hunks > MAX_HUNKS {
        out.push_str(&format!("... {} more hunks\n", hunks - MAX_HUNKS));
    }
    out.push_str(&format!(
        "{hunks} hunk(s), about {changed} line(s) differ\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_reports_changed_lines() {
        let d = diff_summary("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n");
        assert!(d.contains("-b\n+B\n"), "{d}");
        assert!(d.contains("+e\n"), "{d}");
        assert!(d.contains("2 hunk(s)"), "{d}");
        assert!(diff_summary("a\n", "a").contains("final newline"));
    }

    #[test]
    fn write_check_and_dry_run() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/x.rs");
        let files = vec![GeneratedFile {
            path: p.clone(),
            contents: "one\n".into(),
        }];
        let o = apply(files.clone(), Mode::Check).unwrap();
        assert!(o.is_stale());
        let o = apply(files.clone(), Mode::DryRun).unwrap();
        assert_eq!(o.files[0].status, FileStatus::DryRun);
        assert!(!p.exists());
        let o = apply(files.clone(), Mode::Write).unwrap();
        assert_eq!(o.files[0].status, FileStatus::Written);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "one\n");
        let o = apply(files.clone(), Mode::Write).unwrap();
        assert_eq!(o.files[0].status, FileStatus::UpToDate);
        let o = apply(files, Mode::Check).unwrap();
        assert!(!o.is_stale());
        std::fs::write(&p, "two\n").unwrap();
        let o = apply(
            vec![GeneratedFile {
                path: p.clone(),
                contents: "one\n".into(),
            }],
            Mode::Check,
        )
        .unwrap();
        match &o.files[0].status {
            FileStatus::Stale { diff } => assert!(diff.contains("-two\n+one\n"), "{diff}"),
            s => panic!("expected stale, got {s:?}"),
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
                0o644
            );
        }
        // No temporary files left behind.
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
