//! The names of a log's sidecar files, `FILE.SUFFIX` beside `FILE`: the one owner for the
//! collector that writes them and the trainers that read them.

use std::path::{Path, PathBuf};

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

fn sidecar(log: &Path, suffix: &str) -> PathBuf {
    let mut s = log.as_os_str().to_os_string();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

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
}
