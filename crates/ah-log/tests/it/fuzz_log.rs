//! A proptest-driven mutation fuzzer for the log reader (`Log::from_reader`, strict and
//! lenient, plain and gzip) and `Log::repair_torn_tail`.
//!
//! Each case builds a valid log (random features, choices, values and times), applies a few
//! byte-level mutations (flips, inserted commas, newlines, carriage returns and bytes that are
//! not UTF-8, deleted and duplicated ranges, cuts) and checks that the reader answers with a
//! log or an error naming the file and a line, never a panic or a hang, and that what it
//! returns accounts for every line. Unmutated logs must re-render byte for byte.
//!
//! The default test run takes a few seconds (300 cases). For a long run set `AH_FUZZ_SECONDS`:
//! `AH_FUZZ_SECONDS=600 cargo test --release -p ah-core --test fuzz_log -- --nocapture`
//! (prints the number of cases run); `AH_FUZZ_SEED` picks the first batch's seed.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use ah_core::Error;
use ah_log::{Log, ReadOptions};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

/// A valid log's text: metadata, header, rows.
pub(crate) fn valid_log() -> impl Strategy<Value = String> {
    let features = prop::collection::vec("[a-z][a-z0-9_*]{0,6}", 1..5);
    let choices = prop::collection::vec("[a-z][a-z0-9_]{0,5}", 1..4);
    (features, choices, 0usize..12, any::<u64>()).prop_map(|(mut f, c, rows, seed)| {
        f.sort();
        f.dedup();
        let quoted: Vec<String> = f.iter().map(|n| format!("\"{n}\"")).collect();
        let mut s = format!(
            "{{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"fz\", \"numerical_features\": [{}], \"categorical_features\": []}}\n{},choice,feedback\n",
            quoted.join(", "),
            f.join(",")
        );
        let mut x = seed | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..rows {
            for _ in &f {
                let v = next();
                let cell = match v % 5 {
                    0 => format!("{}", v % 100_000),
                    1 => "True".to_string(),
                    2 => "torch.float16".to_string(),
                    3 => ah_core::value::python_float_repr((v % 1000) as f64 / 7.0),
                    _ => format!("-{}", v % 50),
                };
                s.push_str(&cell);
                s.push(',');
            }
            let choice = &c[(next() % c.len() as u64) as usize];
            let t = if next() % 9 == 0 {
                f64::INFINITY
            } else {
                (next() % 10_000 + 1) as f64 / 997.0
            };
            s.push_str(&format!(
                "{choice},{}\n",
                ah_core::value::python_float_repr(t)
            ));
        }
        s
    })
}

/// One byte-level mutation.
#[derive(Debug, Clone)]
pub(crate) enum Mutation {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Truncate(usize),
}

pub(crate) fn mutation() -> impl Strategy<Value = Mutation> {
    let special = prop::sample::select(vec![
        b",".to_vec(),
        b"\n".to_vec(),
        b"\r".to_vec(),
        b"\r\n".to_vec(),
        b",,".to_vec(),
        vec![0xff],
        vec![0xc3],
        vec![0xe2, 0x82],
        vec![0],
        b"inf".to_vec(),
        b"-1.0".to_vec(),
        b"nan".to_vec(),
        b"\"".to_vec(),
        b"{".to_vec(),
        "é".as_bytes().to_vec(),
        b"1e400".to_vec(),
    ]);
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), special).prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), 1usize..40).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), 1usize..200).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

pub(crate) fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let len = bytes.len();
    let at = |i: usize| if len == 0 { 0 } else { i % (len + 1) };
    match m {
        Mutation::Flip(i, b) if len > 0 => bytes[i % len] = *b,
        Mutation::Flip(..) => {}
        Mutation::Insert(i, b) => {
            let p = at(*i);
            bytes.splice(p..p, b.iter().copied());
        }
        Mutation::Delete(i, n) => {
            let p = at(*i);
            let e = (p + n).min(len);
            bytes.drain(p..e);
        }
        Mutation::Duplicate(i, n) => {
            let p = at(*i);
            let e = (p + n).min(len);
            let part = bytes[p..e].to_vec();
            bytes.splice(e..e, part);
        }
        Mutation::Truncate(i) => bytes.truncate(at(*i)),
    }
}

/// The reader's answer must be a log that accounts for every line, or an error naming the
/// file and a line within the input.
fn check_read(bytes: &[u8], strict: bool) -> Result<(), TestCaseError> {
    let path = Path::new("fz.txt");
    match Log::from_reader(path, bytes, ReadOptions { strict }) {
        Ok(log) => {
            let lines = bytes.split(|b| *b == b'\n').count() - usize::from(bytes.ends_with(b"\n"));
            let data_lines = lines.saturating_sub(2);
            prop_assert_eq!(
                log.rows.len() + log.malformed.len() + log.blank_lines,
                data_lines,
                "every data line is a row, a malformed line or a blank line"
            );
            prop_assert!(!strict || log.malformed.is_empty());
            prop_assert!(log.malformed.iter().all(|m| m.line > 2 && m.line <= lines));
            for row in &log.rows {
                prop_assert_eq!(row.values.len(), log.features.len());
                prop_assert!(
                    row.feedback > 0.0 || row.feedback.is_nan(),
                    "times are positive"
                );
                let _ = log.row_line(row);
            }
        }
        Err(Error::LogFormat { path: p, line, .. }) => {
            prop_assert_eq!(p.as_path(), path);
            // A missing line (the header of a one-line file) is named as the line after.
            let lines = bytes.split(|b| *b == b'\n').count();
            prop_assert!(line >= 1 && line <= lines + 1, "line {line} of {lines}");
        }
        Err(e) => return Err(TestCaseError::fail(format!("unexpected error kind: {e}"))),
    }
    Ok(())
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).expect("in memory");
    gz.finish().expect("in memory")
}

/// One case: the valid log round-trips; every mutation of it (of its text, or of its gzip
/// stream) reads without a panic; repairing a mutated file leaves it ending with a newline.
fn one_case(
    text: &str,
    muts: &[Mutation],
    gz_mut: &[Mutation],
    dir: &Path,
) -> Result<(), TestCaseError> {
    let log = Log::from_reader(
        Path::new("fz.txt"),
        text.as_bytes(),
        ReadOptions { strict: true },
    )
    .map_err(|e| TestCaseError::fail(format!("a valid log failed: {e}\n{text}")))?;
    let mut again = format!("{}\n{}\n", log.metadata_line, log.header_line());
    for r in &log.rows {
        again.push_str(&log.row_line(r));
        again.push('\n');
    }
    prop_assert_eq!(&again, text, "valid logs round-trip byte for byte");
    let mut bytes = text.as_bytes().to_vec();
    for m in muts {
        apply(&mut bytes, m);
    }
    check_read(&bytes, false)?;
    check_read(&bytes, true)?;
    let mut gz = gzip(&bytes);
    for m in gz_mut {
        // Keep the magic bytes so that the gzip path is taken.
        if gz.len() > 10 {
            let mut tail = gz.split_off(10);
            apply(&mut tail, m);
            gz.extend(tail);
        }
    }
    let path = dir.join("fz.txt.gz");
    std::fs::write(&path, &gz).map_err(|e| TestCaseError::fail(e.to_string()))?;
    match Log::read(&path, ReadOptions::default()) {
        Ok(_) | Err(Error::LogFormat { .. }) => {}
        Err(e) => return Err(TestCaseError::fail(format!("gzip: unexpected error: {e}"))),
    }
    let plain = dir.join("fz.txt");
    std::fs::write(&plain, &bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
    Log::repair_torn_tail(&plain).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let after = std::fs::read(&plain).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(after.is_empty() || after.ends_with(b"\n"));
    prop_assert!(bytes.starts_with(&after), "repair only cuts the end");
    Ok(())
}

/// Runs batches of cases until `budget` has passed (at least one batch); returns the cases run.
fn fuzz(budget: Duration, first_seed: u64, batch: u32) -> u64 {
    let dir = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    let strategy = (
        valid_log(),
        prop::collection::vec(mutation(), 0..6),
        prop::collection::vec(mutation(), 0..2),
    );
    let (mut cases, mut seed) = (0u64, first_seed);
    loop {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let config = Config {
            cases: batch,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner =
            TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key));
        let result = runner.run(&strategy, |(text, muts, gz_mut)| {
            one_case(&text, &muts, &gz_mut, dir.path())
        });
        if let Err(e) = result {
            panic!("fuzz batch with seed {seed} failed: {e}");
        }
        cases += u64::from(batch);
        seed += 1;
        if started.elapsed() >= budget {
            return cases;
        }
    }
}

#[test]
fn the_log_reader_survives_mutated_logs() {
    let seconds: u64 = std::env::var("AH_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let seed: u64 = std::env::var("AH_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let started = Instant::now();
    let cases = fuzz(Duration::from_secs(seconds), seed, 300);
    println!(
        "fuzz_log: {cases} cases in {:.1} s (seeds from {seed}), no failure",
        started.elapsed().as_secs_f64()
    );
}
