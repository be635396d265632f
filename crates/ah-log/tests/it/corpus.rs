//! The hostile corpus (`tests/corpus/`, described in its README): small broken logs, each read
//! by every reader and writer of the crate. The outcomes are one snapshot (what each does with
//! each file, errors with their file and line); beside it, properties every file must have:
//! merge and the reader agree on the rows, a writer never makes a readable file unreadable nor
//! joins a row to a torn line, and nothing is changed by a refusal.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ah_core::{DeviceIdentity, Metadata};
use ah_log::{join_logs, repair_inputs, Log, LogWriter, ReadOptions};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn corpus() -> Vec<PathBuf> {
    ah_test_support::corpus::files(&corpus_dir(), &[".txt", ".gz"])
}

/// The metadata and header features every corpus file was made for.
fn md() -> (Metadata, Vec<String>) {
    let md = Metadata::new(
        DeviceIdentity::NONE,
        "t",
        vec!["m".into(), "n".into()],
        vec!["d".into()],
    );
    (md, ["m", "n", "d"].map(String::from).to_vec())
}

fn rows(log: &Log) -> Vec<String> {
    log.rows.iter().map(|r| log.row_line(r)).collect()
}

fn read(path: &Path, strict: bool) -> Result<Log, ah_core::Error> {
    Log::read(path, ReadOptions { strict })
}

fn outcome<T>(r: &Result<T, ah_core::Error>, ok: impl Fn(&T) -> String, dir: &Path) -> String {
    match r {
        Ok(v) => ok(v),
        Err(e) => {
            let text = e.to_string().replace(&format!("{}/", dir.display()), "");
            format!("error: {}", text.replace('\n', "\n      | "))
        }
    }
}

/// What each reader and writer does with one file; asserts the properties on the way.
fn one(file: &Path, scratch: &Path) -> String {
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let dir = file.parent().unwrap();
    let copy = scratch.join(&name);
    std::fs::copy(file, &copy).unwrap();
    let original = std::fs::read(file).unwrap();
    let mut out = format!("## {name}\n");
    let lenient = read(file, false);
    let show = |l: &Log| {
        let bad: Vec<String> = l.malformed.iter().map(|m| format!("{}", m.line)).collect();
        format!(
            "ok: {} rows, malformed lines [{}], {} blank",
            l.rows.len(),
            bad.join(" "),
            l.blank_lines
        )
    };
    writeln!(out, "read:   {}", outcome(&lenient, show, dir)).unwrap();
    let strict = read(file, true);
    writeln!(out, "strict: {}", outcome(&strict, show, dir)).unwrap();
    let parallel = Log::read_parallel(file, ReadOptions::default());
    assert_eq!(
        outcome(&parallel, show, dir),
        outcome(&lenient, show, dir),
        "{name}: both readers"
    );
    // Merge keeps exactly the rows the reader reads, and refuses what it refuses.
    let joined = join_logs(&[file.to_path_buf()]);
    let show_join = |j: &ah_log::Joined| format!("ok: {} rows, {} torn", j.rows, j.torn);
    writeln!(out, "merge:  {}", outcome(&joined, show_join, dir)).unwrap();
    match (&lenient, &joined) {
        (Ok(log), Ok(j)) => {
            let again = Log::from_reader(file, j.text.as_bytes(), ReadOptions::default()).unwrap();
            assert_eq!(rows(&again), rows(log), "{name}: merge and read agree");
        }
        (Err(_), Err(_)) => {}
        _ => panic!("{name}: merge and read disagree on refusing"),
    }
    // A writer appends only to a file it reads back, with this metadata and header.
    let (md, features) = md();
    let before = std::fs::read(&copy).unwrap();
    let appended = LogWriter::append(&copy, &md, &features)
        .and_then(|mut w| w.write_line("7,7,z,a,1.0").map(|()| w));
    // The writer checks the head and ends a torn line; the rest of the file (not UTF-8
    // further down) is the collector's resume to check: a readable log stays readable.
    let grown = |_: &LogWriter| {
        let after = std::fs::read(&copy).unwrap();
        if lenient.is_ok() {
            let log = Log::read(&copy, ReadOptions::default()).expect("it reads back");
            assert_eq!(
                log.rows.last().map(|r| log.row_line(r)).as_deref(),
                Some("7,7,z,a,1.0"),
                "{name}: the new row is read as written"
            );
        }
        format!("ok: {} bytes added", after.len() - before.len())
    };
    let text = outcome(&appended, grown, scratch);
    writeln!(out, "append: {text}").unwrap();
    if appended.is_err() {
        assert_eq!(
            std::fs::read(&copy).unwrap(),
            before,
            "{name}: refused, unchanged"
        );
    }
    // A collector's repair of a plain file.
    std::fs::write(&copy, &original).unwrap();
    let repaired = repair_inputs(&copy, 1);
    let show_repair = |r: &ah_log::InputRepair| {
        format!(
            "ok: {} bytes cut, {} complete inputs",
            r.removed_bytes,
            r.complete.values().sum::<u64>()
        )
    };
    writeln!(out, "repair: {}", outcome(&repaired, show_repair, scratch)).unwrap();
    assert_eq!(
        std::fs::read(file).unwrap(),
        original,
        "the corpus is read only"
    );
    out
}

#[test]
fn every_reader_and_writer_on_the_hostile_corpus() {
    let scratch = tempfile::tempdir().unwrap();
    let files = corpus();
    assert!(files.len() >= 30, "{} corpus files", files.len());
    let mut all = String::new();
    for f in &files {
        all.push_str(&one(f, scratch.path()));
    }
    insta::assert_snapshot!("corpus", all);
}

#[test]
fn the_corpus_readme_describes_every_file() {
    ah_test_support::corpus::assert_readme_describes(&corpus_dir(), &corpus());
}
