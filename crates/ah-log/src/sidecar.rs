//! The names of a log's sidecar files, `FILE.SUFFIX` beside `FILE`, and where one is read from
//! or may be written: the one owner for the collector that writes them and the trainers that
//! read them.
//!
//! A finished log may keep its medians and extras sidecars gzip-compressed, as
//! `FILE.medians.txt.gz` and `FILE.extras.jsonl.gz` (most of `data/` does). Readers take the
//! plain file, else the `.gz` one ([`sidecar_to_read`], [`read_sidecar`]). Writers append to
//! the plain file (or write it anew), so they refuse a sidecar whose `.gz` exists
//! ([`check_appendable`]): what they wrote would stand beside the compressed copy, which would
//! then hold fewer rows than the log.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use ah_core::error::shown;

/// Why a sidecar cannot be read or written as asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SidecarError {
    /// Both the plain sidecar and its `.gz` exist. An error rather than a preference: the two
    /// can differ (a copy decompressed with `gunzip -k` and then appended to, or compressed
    /// again from an older copy), and a reader that took one silently would train on rows
    /// the other contradicts; the writers never leave both.
    #[error(
        "{} and {} both exist: which one is the log's sidecar is unclear\nhint: keep one of \
         them and remove the other (`gzip -dc {} | cmp - {}` tells whether they differ)",
        shown(plain),
        shown(gz),
        shown(gz),
        shown(plain)
    )]
    Twice {
        /// The plain sidecar.
        plain: PathBuf,
        /// The compressed one.
        gz: PathBuf,
    },
    /// A writer (a collection, a merge) would write a plain sidecar beside its `.gz`.
    #[error(
        "{}: this log's sidecar is kept gzip-compressed, and collecting or merging would \
         write {} beside it\nhint: decompress it first (`gunzip {}`) to collect into or merge \
         onto this log; `gzip -9 -n` it again once the log is finished",
        shown(gz),
        shown(plain),
        shown(gz)
    )]
    Compressed {
        /// The plain sidecar that would be written.
        plain: PathBuf,
        /// The compressed one that exists.
        gz: PathBuf,
    },
    /// Reading a sidecar, or asking whether it exists, failed.
    #[error("{}", ah_core::error::io_text(path, source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause (for a `.gz` file also a corrupt or cut stream).
        #[source]
        source: std::io::Error,
    },
}

/// The medians sidecar of a log: `FILE.medians.txt`.
pub fn medians_path(log: &Path) -> PathBuf {
    sidecar(log, "medians.txt")
}

/// The extras sidecar of a log: `FILE.extras.jsonl`, one JSON object per measured input of a
/// runner that reports more than times (e.g. `inductor_mm`).
pub fn extras_path(log: &Path) -> PathBuf {
    sidecar(log, "extras.jsonl")
}

/// The provenance sidecar of a log: `FILE.provenance.json`.
pub fn provenance_path(log: &Path) -> PathBuf {
    sidecar(log, "provenance.json")
}

/// The file to read the sidecar `plain` (a [`medians_path`] or [`extras_path`]) from: `plain`
/// when it exists, else `plain.gz` when that exists, else `None` (the log has no such
/// sidecar). Both: [`SidecarError::Twice`]. The readers of the log format
/// ([`crate::Log::read`], [`crate::join_logs`]) take either file as it is.
pub fn sidecar_to_read(plain: &Path) -> Result<Option<PathBuf>, SidecarError> {
    let gz = gz_path(plain);
    match (exists(plain)?, exists(&gz)?) {
        (true, true) => Err(SidecarError::Twice {
            plain: plain.to_path_buf(),
            gz,
        }),
        (true, false) => Ok(Some(plain.to_path_buf())),
        (false, true) => Ok(Some(gz)),
        (false, false) => Ok(None),
    }
}

/// The file the sidecar `plain` was read from ([`sidecar_to_read`]) and its whole content,
/// decompressed when it is kept as `plain.gz`; `None` when the log has no such sidecar.
pub fn read_sidecar(plain: &Path) -> Result<Option<(PathBuf, Vec<u8>)>, SidecarError> {
    let Some(path) = sidecar_to_read(plain)? else {
        return Ok(None);
    };
    let io = |source| SidecarError::Io {
        path: path.clone(),
        source,
    };
    let file = std::fs::File::open(&path).map_err(io)?;
    let mut bytes = Vec::new();
    let read = if path == plain {
        std::io::BufReader::new(file).read_to_end(&mut bytes)
    } else {
        flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file)).read_to_end(&mut bytes)
    };
    read.map_err(io)?;
    Ok(Some((path, bytes)))
}

/// Refuses to write the sidecar `plain` (append to it, or write it anew) when `plain.gz`
/// exists ([`SidecarError::Compressed`]): a writer calls it before it changes anything.
pub fn check_appendable(plain: &Path) -> Result<(), SidecarError> {
    let gz = gz_path(plain);
    if exists(&gz)? {
        return Err(SidecarError::Compressed {
            plain: plain.to_path_buf(),
            gz,
        });
    }
    Ok(())
}

/// `plain.gz`.
fn gz_path(plain: &Path) -> PathBuf {
    sidecar(plain, "gz")
}

/// Whether `path` exists (a broken symbolic link does not; nor does a name too long for the
/// file system, as `plain.gz` may be where `plain` fits); an error when that cannot be told
/// (a folder on the way that cannot be searched).
fn exists(path: &Path) -> Result<bool, SidecarError> {
    match path.try_exists() {
        Err(e) if e.kind() == std::io::ErrorKind::InvalidFilename => Ok(false),
        r => r.map_err(|source| SidecarError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn sidecar(log: &Path, suffix: &str) -> PathBuf {
    let mut s = log.as_os_str().to_os_string();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::path::Path;

    use super::SidecarError;

    #[test]
    fn sidecars_sit_beside_the_log_with_its_whole_name() {
        let log = Path::new("data/x.txt");
        assert_eq!(
            super::medians_path(log),
            Path::new("data/x.txt.medians.txt")
        );
        assert_eq!(
            super::extras_path(log),
            Path::new("data/x.txt.extras.jsonl")
        );
        assert_eq!(
            super::provenance_path(log),
            Path::new("data/x.txt.provenance.json")
        );
    }

    fn gzip(path: &Path, text: &str) {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(text.as_bytes()).unwrap();
        std::fs::write(path, gz.finish().unwrap()).unwrap();
    }

    #[test]
    fn a_reader_takes_the_plain_sidecar_else_the_gz_one_else_none() {
        let dir = tempfile::tempdir().unwrap();
        let plain = super::extras_path(&dir.path().join("x.txt"));
        let gz = dir.path().join("x.txt.extras.jsonl.gz");
        assert_eq!(super::sidecar_to_read(&plain).unwrap(), None);
        assert_eq!(super::read_sidecar(&plain).unwrap(), None);
        gzip(&gz, "{\"a\": 1}\n");
        assert_eq!(super::sidecar_to_read(&plain).unwrap(), Some(gz.clone()));
        assert_eq!(
            super::read_sidecar(&plain).unwrap().unwrap(),
            (gz.clone(), b"{\"a\": 1}\n".to_vec())
        );
        std::fs::remove_file(&gz).unwrap();
        std::fs::write(&plain, "{}\n").unwrap();
        assert_eq!(super::sidecar_to_read(&plain).unwrap(), Some(plain.clone()));
        assert_eq!(
            super::read_sidecar(&plain).unwrap().unwrap(),
            (plain.clone(), b"{}\n".to_vec())
        );
    }

    #[test]
    fn both_files_are_refused_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("x.txt.medians.txt");
        std::fs::write(&plain, "").unwrap();
        gzip(&dir.path().join("x.txt.medians.txt.gz"), "");
        let e = super::sidecar_to_read(&plain).unwrap_err();
        assert!(matches!(e, SidecarError::Twice { .. }), "{e:?}");
        let e = e.to_string();
        assert!(
            e.contains("x.txt.medians.txt and ") && e.contains("x.txt.medians.txt.gz both exist"),
            "{e}"
        );
        assert!(super::read_sidecar(&plain).is_err());
    }

    #[test]
    fn a_corrupt_gz_sidecar_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("x.txt.extras.jsonl");
        std::fs::write(
            dir.path().join("x.txt.extras.jsonl.gz"),
            b"\x1f\x8bnot gzip",
        )
        .unwrap();
        let e = super::read_sidecar(&plain).unwrap_err().to_string();
        assert!(e.contains("x.txt.extras.jsonl.gz: "), "{e}");
    }

    #[test]
    fn a_gz_name_too_long_for_the_file_system_is_no_sidecar() {
        let dir = tempfile::tempdir().unwrap();
        // `x….txt.medians.txt` fits in 255 bytes; its `.gz` does not.
        let plain = dir
            .path()
            .join(format!("{}.txt.medians.txt", "x".repeat(237)));
        std::fs::write(&plain, "a\n").unwrap();
        assert_eq!(super::sidecar_to_read(&plain).unwrap(), Some(plain.clone()));
        super::check_appendable(&plain).unwrap();
    }

    #[test]
    fn a_writer_is_refused_beside_a_gz_sidecar_and_told_to_gunzip_it() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("x.txt.extras.jsonl");
        super::check_appendable(&plain).unwrap();
        std::fs::write(&plain, "").unwrap();
        super::check_appendable(&plain).unwrap();
        gzip(&dir.path().join("x.txt.extras.jsonl.gz"), "");
        let e = super::check_appendable(&plain).unwrap_err();
        assert!(matches!(e, SidecarError::Compressed { .. }), "{e:?}");
        let e = e.to_string();
        assert!(
            e.contains("x.txt.extras.jsonl.gz: this log's sidecar is kept gzip-compressed")
                && e.contains("hint: decompress it first (`gunzip ")
                && e.contains("x.txt.extras.jsonl.gz`)"),
            "{e}"
        );
    }
}
