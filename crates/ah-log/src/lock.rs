//! The lock every writer of a log holds. It identifies the file, not the path: an exclusive
//! `File::try_lock` (`flock`) on the log file itself, so that two paths to one file (hard
//! links, symbolic links, bind mounts) contend for one lock, and on the stable sidecar
//! `FILE.lock`, which covers the time before the log exists and a merge that replaces the log
//! by a rename (a new inode; the sidecar is never renamed).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use ah_core::error::{Error, Result};

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

/// The identity of a file: its device and inode. Two paths name one file exactly when their
/// identities are equal (Unix; elsewhere there is none and paths are compared).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The identity of the file at `path` (symbolic links followed); `None` when there is no
    /// file there.
    pub fn of(path: &Path) -> Option<FileId> {
        Self::from_metadata(&std::fs::metadata(path).ok()?)
    }

    #[cfg(unix)]
    fn from_metadata(m: &std::fs::Metadata) -> Option<FileId> {
        use std::os::unix::fs::MetadataExt;
        Some(FileId {
            dev: m.dev(),
            ino: m.ino(),
        })
    }

    #[cfg(not(unix))]
    fn from_metadata(_: &std::fs::Metadata) -> Option<FileId> {
        None
    }
}

/// A hold on a log's lock (see [`lock_log`]); released when dropped.
#[derive(Debug)]
pub struct LogLock {
    path: PathBuf,
    exclusive: bool,
    _sidecar: File,
    /// The log file itself, locked, once it exists.
    held: Option<(File, Option<FileId>)>,
}

impl LogLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The identity of the log file this lock holds, once it holds one.
    pub fn file_id(&self) -> Option<FileId> {
        self.held.as_ref().and_then(|(_, id)| *id)
    }

    /// True when `log` is the file this lock was taken for: the same file (by identity) or
    /// the same lock sidecar.
    pub fn covers(&self, log: &Path) -> bool {
        match (self.file_id(), FileId::of(log)) {
            (Some(a), Some(b)) => a == b,
            _ => lock_path(log) == self.path,
        }
    }

    /// Locks the log file itself too, in the lock's mode, if it exists and is not locked yet:
    /// a writer that creates the log calls it once the file is there. [`Error::Locked`] when
    /// another process holds the file under another name.
    pub fn hold_file(&mut self, log: &Path) -> Result<()> {
        if self.held.is_some() {
            return Ok(());
        }
        ah_core::fs::check_writable_path(log)?;
        let file = match File::open(log) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io(log, e)),
        };
        try_lock(&file, self.exclusive, log, log)?;
        let id = file.metadata().ok().and_then(|m| FileId::from_metadata(&m));
        self.held = Some((file, id));
        Ok(())
    }
}

/// Takes the lock of `log` without waiting: exclusive for a writer, shared for a reader that
/// must not see the log change (a merge's inputs). [`Error::Locked`] when another process
/// holds it in a conflicting mode, through this path or another name of the file. Refuses a
/// log or sidecar that is not a regular file before opening it (a FIFO would block).
pub fn lock_log(log: &Path, exclusive: bool) -> Result<LogLock> {
    ah_core::fs::check_writable_path(log)?;
    let path = lock_path(log);
    ah_core::fs::check_writable_path(&path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let sidecar = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    try_lock(&sidecar, exclusive, log, &path)?;
    let mut lock = LogLock {
        path,
        exclusive,
        _sidecar: sidecar,
        held: None,
    };
    lock.hold_file(log)?;
    Ok(lock)
}

/// `flock`s `file` (the log, or its sidecar `lock`) without waiting.
fn try_lock(file: &File, exclusive: bool, log: &Path, lock: &Path) -> Result<()> {
    let taken = if exclusive {
        file.try_lock()
    } else {
        file.try_lock_shared()
    };
    match taken {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::Locked {
            path: log.to_path_buf(),
            lock: lock.to_path_buf(),
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io(lock, e)),
    }
}
