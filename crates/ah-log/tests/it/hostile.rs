//! Properties of the readers and writers on hostile input (the corpus, `corpus.rs`, holds the
//! named cases): a log cut at any byte reads back its complete rows or is refused naming its
//! line, and a collector's repair of it keeps exactly those rows; merge and the reader agree
//! on the rows of any (mutated) log; a header in another column order, or with other columns,
//! is refused by every writer and the file left alone.

use std::path::Path;

use ah_core::Error;
use ah_log::{check_head, join_logs, repair_inputs, Log, LogWriter, ReadOptions};
use proptest::prelude::*;

use super::fuzz_log::{apply, mutation, valid_log};

fn rows(log: &Log) -> Vec<String> {
    log.rows.iter().map(|r| log.row_line(r)).collect()
}

fn read(bytes: &[u8]) -> Result<Log, Error> {
    Log::from_reader(Path::new("fz.txt"), bytes, ReadOptions::default())
}

/// Merge and the reader agree on `bytes` written to a file: both refuse it, or the merged
/// text reads back as the same rows.
fn merge_agrees(bytes: &[u8], dir: &Path) -> Result<(), TestCaseError> {
    let path = dir.join("fz.txt");
    std::fs::write(&path, bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
    match (read(bytes), join_logs(std::slice::from_ref(&path))) {
        (Ok(log), Ok(joined)) => {
            let again = read(joined.text.as_bytes())
                .map_err(|e| TestCaseError::fail(format!("the merged text: {e}")))?;
            prop_assert_eq!(rows(&again), rows(&log), "merge keeps the rows read reads");
            prop_assert!(joined.text.ends_with('\n'));
        }
        (Err(_), Err(Error::LogFormat { path: p, .. })) => prop_assert_eq!(p, path),
        (Err(_), Err(e)) => return Err(TestCaseError::fail(format!("merge: {e}"))),
        (r, j) => {
            return Err(TestCaseError::fail(format!(
                "read {:?}, merge {:?}",
                r.map(|l| l.rows.len()),
                j.map(|j| j.rows)
            )))
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    /// A log cut at any byte: the reader reads back its complete rows (and the cut last line
    /// when it reads as a row), or refuses it naming a line of the head; merge agrees; a
    /// collector's repair leaves exactly the complete lines.
    #[test]
    fn a_log_cut_at_any_byte_reads_back_its_complete_rows_or_names_its_line(
        text in valid_log(),
        cut in any::<prop::sample::Index>(),
    ) {
        let full = read(text.as_bytes()).expect("a valid log");
        let at = cut.index(text.len() + 1);
        let part = &text.as_bytes()[..at];
        let closed = part.iter().filter(|b| **b == b'\n').count();
        let complete = closed.saturating_sub(2);
        match read(part) {
            Ok(log) => {
                prop_assert!(log.rows.len() == complete || log.rows.len() == complete + 1);
                prop_assert_eq!(&rows(&log)[..complete], &rows(&full)[..complete]);
                if part.ends_with(b"\n") {
                    prop_assert_eq!(log.rows.len(), complete);
                }
            }
            Err(Error::LogFormat { line, .. }) => {
                prop_assert!(line <= 2 && closed < 2, "only a cut head is refused: line {line}");
            }
            Err(e) => return Err(TestCaseError::fail(format!("unexpected: {e}"))),
        }
        let dir = tempfile::tempdir().unwrap();
        merge_agrees(part, dir.path())?;
        if closed >= 2 {
            let path = dir.path().join("fz.txt");
            std::fs::write(&path, part).unwrap();
            repair_inputs(&path, 1).unwrap();
            let left = std::fs::read(&path).unwrap();
            prop_assert!(text.as_bytes().starts_with(&left) && left.ends_with(b"\n"));
            let kept = read(&left).unwrap();
            prop_assert_eq!(&rows(&kept)[..], &rows(&full)[..kept.rows.len()]);
        }
    }

    /// Merge and the reader agree on every mutated log (torn lines, stray `\r`s, bytes that
    /// are not UTF-8, cut and duplicated ranges).
    #[test]
    fn merge_and_read_agree_on_mutated_logs(
        text in valid_log(),
        muts in prop::collection::vec(mutation(), 0..6),
    ) {
        let mut bytes = text.into_bytes();
        for m in &muts {
            apply(&mut bytes, m);
        }
        let dir = tempfile::tempdir().unwrap();
        merge_agrees(&bytes, dir.path())?;
    }

    /// A header with the writer's columns in another order, or with another column, is
    /// refused naming line 2 (the file unchanged); the writer's own header is taken.
    #[test]
    fn a_header_of_other_columns_is_refused_by_every_writer(
        (features, order) in prop::collection::btree_set("[a-z][a-z0-9_]{0,5}", 2..7)
            .prop_flat_map(|set| {
                let f: Vec<String> = set.into_iter().collect();
                let n = f.len();
                (Just(f), Just((0..n).collect::<Vec<usize>>()).prop_shuffle())
            }),
        rename in any::<prop::sample::Index>(),
    ) {
        let md = ah_core::Metadata::new(ah_core::DeviceIdentity::NONE, "p", features.clone(), vec![]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.txt");
        let row: Vec<&str> = features.iter().map(|_| "1").collect();
        let write = |header: &[String]| {
            let text = format!(
                "{}\n{},choice,feedback\n{},a,1.5\n",
                md.to_json_line(),
                header.join(","),
                row.join(",")
            );
            std::fs::write(&path, &text).unwrap();
            text
        };
        let permuted: Vec<String> = order.iter().map(|&i| features[i].clone()).collect();
        let mut renamed = features.clone();
        renamed[rename.index(features.len())].push('x');
        for header in [permuted, renamed] {
            let text = write(&header);
            if header == features {
                prop_assert!(LogWriter::append(&path, &md, &features).is_ok());
                continue;
            }
            for e in [
                check_head(&path, &md, &features).unwrap_err(),
                LogWriter::append(&path, &md, &features).unwrap_err(),
            ] {
                let is_line_2 = matches!(e, Error::LogFormat { line: 2, .. });
                prop_assert!(is_line_2, "{}", e);
            }
            prop_assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        }
    }
}
