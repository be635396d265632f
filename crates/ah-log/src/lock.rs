//! The lock every writer of a log holds: an exclusive `File::try_lock` on the stable sidecar
//! `FILE.lock`.

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
