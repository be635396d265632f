//! Writing files atomically, the one way every tool writes its outputs.
//!
//! Each file is written to a temporary file in its own folder (`.NAME.PID.N.tmp`), synced, and
//! renamed over its path only once every file of the call is complete: a reader sees the old
//! contents or the new ones, never a part, and a failure leaves no half-written output and no
//! temporary file behind. A file that exists keeps its permissions; a new one gets the usual
//! mode of a new file (0666 less the umask). Folders are created as needed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writing a file (or creating its folder) failed.
#[derive(Debug)]
pub struct WriteError {
    /// The file, or the folder that could not be created.
    pub path: PathBuf,
    /// The underlying error.
    pub source: std::io::Error,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl From<WriteError> for crate::Error {
    fn from(e: WriteError) -> Self {
        crate::Error::io(e.path, e.source)
    }
}

/// Writes `bytes` to `path` atomically (see the module docs).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_all_atomic(&[(path, bytes)])
}

/// Writes several files all or nothing: every file is written and synced to its temporary
/// file first, then all are renamed into place, in order.
pub fn write_all_atomic<P: AsRef<Path>, B: AsRef<[u8]>>(
    files: &[(P, B)],
) -> Result<(), WriteError> {
    let mut staged = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        // On an error the files staged so far are dropped, which removes their temporaries.
        staged.push(stage(path.as_ref(), bytes.as_ref())?);
    }
    for s in &mut staged {
        s.commit()?;
    }
    Ok(())
}

/// A complete temporary file waiting to be renamed over `target`; removed when dropped
/// uncommitted.
struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl Staged {
    fn commit(&mut self) -> Result<(), WriteError> {
        std::fs::rename(&self.tmp, &self.target).map_err(|source| WriteError {
            path: self.target.clone(),
            source,
        })?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

fn stage(path: &Path, bytes: &[u8]) -> Result<Staged, WriteError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|source| WriteError {
        path: dir.clone(),
        source,
    })?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Unique per process and per write, so concurrent writers never share a temporary file.
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let staged = Staged {
        tmp: dir.join(format!(".{file_name}.{}.{n}.tmp", std::process::id())),
        target: path.to_path_buf(),
        committed: false,
    };
    let error = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::File::create(&staged.tmp).map_err(error)?;
    f.write_all(bytes).map_err(error)?;
    if let Ok(existing) = std::fs::metadata(path) {
        f.set_permissions(existing.permissions()).map_err(error)?;
    }
    f.sync_all().map_err(error)?;
    Ok(staged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_creates_folders_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("sub/a.txt");
        let b = dir.path().join("b.txt");
        write_all_atomic(&[(&a, "one\n"), (&b, "two\n")]).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "two\n");
        write_atomic(&a, b"three\n").unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "three\n");
        assert_eq!(names(dir.path()), ["b.txt", "sub"]);
        assert_eq!(names(&dir.path().join("sub")), ["a.txt"]);
    }

    /// A file that cannot be staged (its folder is a file) fails the whole call: nothing is
    /// written, no temporary is left, and the error names the folder.
    #[test]
    fn all_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.txt");
        std::fs::write(dir.path().join("blocker"), "x").unwrap();
        let bad = dir.path().join("blocker/bad.txt");
        let err = write_all_atomic(&[(&good, "new"), (&bad, "new")]).unwrap_err();
        assert_eq!(err.path, dir.path().join("blocker"));
        assert!(err
            .to_string()
            .starts_with(&format!("{}: ", err.path.display())));
        assert!(!good.exists());
        assert_eq!(names(dir.path()), ["blocker"]);
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.sh");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o750)).unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750);
    }
}
