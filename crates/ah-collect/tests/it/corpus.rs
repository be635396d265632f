//! The collector's hostile corpus (`tests/corpus/`, described in its README): broken pad_mm logs,
//! each resumed by the binary. What each resume does is one snapshot; on the way it asserts
//! that a refusal (exit 2) names the file and changes nothing, and that a resume that runs
//! leaves a log that reads back with every input whole.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn corpus() -> Vec<PathBuf> {
    ah_test_support::corpus::files(&corpus_dir(), &[".txt", ".gz"])
}

/// The number after which `label` follows in `text` (`12 inputs measured`), if any.
fn count_before(text: &str, label: &str) -> Option<u64> {
    let at = text.find(label)?;
    text[..at].split_whitespace().last()?.parse().ok()
}

/// Rows per input (runs of equal feature values), as the reader reads the log.
fn rows_per_input(path: &Path) -> Vec<usize> {
    crate::common::read_inputs(path, ah_log::ReadOptions::default())
        .into_iter()
        .map(|(_, n)| n)
        .collect()
}

fn one(file: &Path, scratch: &Path) -> String {
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let dir = scratch.join(name.replace('.', "_"));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join(if name.ends_with(".gz") {
        "log.txt.gz"
    } else {
        "log.txt"
    });
    std::fs::copy(file, &log).unwrap();
    let before = std::fs::read(&log).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ah-collect"))
        .args(["--name", "pad_mm", "--device", "cpu", "--max-dim", "64"])
        .args(["--shapes", "pytorch", "--seed", "5", "--num-reps", "1"])
        .args(["--num-samples", "4", "--out"])
        .arg(&log)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).replace(&format!("{}/", dir.display()), "");
    let mut out = format!("## {name}\n");
    match o.status.code() {
        Some(0) => {
            let summary = err.lines().last().unwrap_or_default();
            let n = |label| count_before(summary, label).unwrap_or(0);
            writeln!(
                out,
                "resumed: {} measured, {} already in the log, {} bytes repaired, {} measured again for the medians",
                n(" inputs measured"),
                n(" already in the log"),
                summary
                    .split("repaired: ")
                    .nth(1)
                    .and_then(|t| t.split(' ').next())
                    .unwrap_or("0"),
                n(" inputs of the log measured again"),
            )
            .unwrap();
            let rows = rows_per_input(&log);
            assert!(
                rows.len() >= 4 && rows.iter().all(|n| *n == 2),
                "{name}: {rows:?}"
            );
            // A log that had rows and no medians sidecar gets none; else it holds every input.
            let med = dir.join("log.txt.medians.txt");
            if med.exists() {
                assert_eq!(
                    rows_per_input(&med).len(),
                    rows.len(),
                    "{name}: the sidecar"
                );
            }
            writeln!(out, "         medians sidecar: {}", med.exists()).unwrap();
        }
        Some(2) => {
            let first = err.lines().next().unwrap_or_default();
            let hint = err.lines().find(|l| l.starts_with("hint: "));
            writeln!(out, "refused: {first}").unwrap();
            if let Some(h) = hint {
                writeln!(out, "         {h}").unwrap();
            }
            assert!(first.contains("log.txt"), "{name}: names the file: {err}");
            assert_eq!(std::fs::read(&log).unwrap(), before, "{name}: unchanged");
        }
        code => panic!("{name}: exit {code:?}: {err}"),
    }
    out
}

#[test]
fn every_broken_log_of_the_corpus_is_resumed_or_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let files = corpus();
    assert!(files.len() >= 19, "{} corpus files", files.len());
    let mut all = String::new();
    for f in &files {
        all.push_str(&one(f, scratch.path()));
    }
    insta::assert_snapshot!("resume", all);
}

#[test]
fn the_corpus_readme_describes_every_file() {
    ah_test_support::corpus::assert_readme_describes(&corpus_dir(), &corpus());
}
