//! Writing files atomically, the one way every tool writes its outputs.
//!
//! Each file is written to a temporary file in its own folder (`.NAME.PID.N.tmp`), synced, and
//! renamed over its path only once every file of the call is complete: a reader sees the old
//! contents or the new ones, never a part, and a failure leaves no half-written output and no
//! temporary file behind. A file that exists keeps its permissions; a new one gets the usual
//! mode of a new file (0666 less the umask). Folders are created as needed. The temporary
//! name is bounded: a target whose name fits the file system gets a temporary name that fits.
//!
//! [`check_writable_path`] is the one check of a path a tool is about to open for writing (a
//! log, a sidecar, a lock, a cache): absent or a regular file, with a name the file system
//! takes, before anything is written.

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
        crate::error::write_io(f, &self.path, &self.source)
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

/// Refuses a path that a tool is about to open for writing (or to read back before it
/// writes) when it exists and is not a regular file (a FIFO, whose `open` blocks until a
/// reader comes; a socket; a device; a folder) or when a name in it is too long for its file
/// system. Follows symbolic links. Creates and opens nothing: call it for every file a command
/// writes before it writes the first, so that a refusal leaves nothing half-written.
pub fn check_writable_path(path: &Path) -> Result<(), WriteError> {
    let refuse = |what: &str| WriteError {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{what}, not a regular file: a log, sidecar or cache must be a regular file; \
                 give a file's path (a new one is created)"
            ),
        ),
    };
    let text = path.as_os_str().as_encoded_bytes();
    if text.is_empty() || text.ends_with(b"/") || path.file_name().is_none() {
        return Err(refuse("a folder's path (empty, or ending in `/` or `..`)"));
    }
    if path
        .file_name()
        .is_some_and(|n| n.as_encoded_bytes().len() > NAME_MAX)
    {
        return Err(WriteError {
            path: path.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidFilename,
                format!("file name longer than {NAME_MAX} bytes"),
            ),
        });
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) if m.is_dir() => Err(refuse("a folder")),
        Ok(m) => Err(refuse(special_kind(&m))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(WriteError {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The longest file name (in bytes) of Linux file systems; some allow fewer, which the probe
/// of [`check_writable_path`] finds where the folder exists.
const NAME_MAX: usize = 255;

/// What a file that is neither a regular file nor a folder is, in words.
fn special_kind(m: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    let _ = m;
    "a special file"
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

/// The target's name as its temporary name holds it: at most [`TEMP_STEM_BYTES`] bytes (on a
/// character boundary), so that `.{stem}.{pid}.{n}.tmp` fits wherever the target's name does.
fn temp_stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut end = name.len().min(TEMP_STEM_BYTES);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

/// The most bytes of a target's name in its temporary name: the 255 bytes most file systems
/// allow, less the dot, the process id, the counter and `.tmp` (at most 46 bytes together).
const TEMP_STEM_BYTES: usize = 200;

fn stage(path: &Path, bytes: &[u8]) -> Result<Staged, WriteError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|source| WriteError {
        path: dir.clone(),
        source,
    })?;
    let file_name = temp_stem(path);
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

    #[test]
    fn a_long_name_that_fits_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x".repeat(250));
        write_atomic(&p, b"long").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"long");
        assert_eq!(names(dir.path()).len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn special_files_and_long_names_are_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = check_writable_path(&fifo).unwrap_err().to_string();
            assert!(e.contains("a FIFO (named pipe), not a regular file"), "{e}");
        }
        let e = check_writable_path(dir.path()).unwrap_err().to_string();
        assert!(e.contains("a folder, not a regular file"), "{e}");
        for folder in ["new/", "", "x/.."] {
            let e = check_writable_path(&dir.path().join(folder)).unwrap_err();
            assert!(e.to_string().contains("a folder's path"), "{folder:?}: {e}");
        }
        let e = check_writable_path(Path::new("/dev/null"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a device"), "{e}");
        let long = dir.path().join("y".repeat(300));
        let e = check_writable_path(&long).unwrap_err().to_string();
        assert!(e.contains("hint: a name in the path is too long"), "{e}");
        let in_new_folder = dir.path().join("new").join("z".repeat(256));
        assert!(check_writable_path(&in_new_folder).is_err());
        assert!(check_writable_path(&dir.path().join("new.txt")).is_ok());
        std::fs::write(dir.path().join("f"), "x").unwrap();
        assert!(check_writable_path(&dir.path().join("f")).is_ok());
        assert_eq!(names(dir.path()).len(), 1 + usize::from(fifo.exists()));
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
