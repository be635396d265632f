//! Hostile corpora: a folder of small broken files under a crate's `tests/`, each described in
//! the folder's `README.md`. Every corpus test lists the folder the same way and checks its
//! README the same way.

use std::path::{Path, PathBuf};

/// The files directly in `dir` whose name ends with one of `endings` (`".txt"`,
/// `".model.json"`), sorted.
///
/// # Panics
/// When `dir` cannot be read.
pub fn files(dir: &Path, endings: &[&str]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("the corpus folder {}: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            endings.iter().any(|e| name.ends_with(e))
        })
        .collect();
    files.sort();
    files
}

/// Asserts that `dir/README.md` names every one of `files` (as `` `name` ``), so that no corpus
/// file goes undescribed.
///
/// # Panics
/// When the README cannot be read or lacks a file's name.
pub fn assert_readme_describes(dir: &Path, files: &[PathBuf]) {
    let readme = dir.join("README.md");
    let text =
        std::fs::read_to_string(&readme).unwrap_or_else(|e| panic!("{}: {e}", readme.display()));
    for f in files {
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        assert!(
            text.contains(&format!("`{name}`")),
            "{} lacks {name}",
            readme.display()
        );
    }
}
