//! Hostile and careless use of logs through the `ah-collect` binary (CPU backend): merges
//! next to a running collection, second collectors, resumes without or with a damaged
//! provenance sidecar, logs that are not UTF-8. Each case asserts a clear error (exit 2,
//! naming the file) or a correct result: never a lost row or a destroyed file.

use std::path::Path;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use crate::common::{assert_exit_2, bin, inputs, stderr};

/// A small pad_mm collection on the CPU with `reps` repetitions.
fn collect_args(samples: u64, reps: u32) -> Vec<String> {
    [
        "--name",
        "pad_mm",
        "--device",
        "cpu",
        "--max-dim",
        "64",
        "--shapes",
        "pytorch",
        "--seed",
        "5",
        "-q",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        "--num-samples".into(),
        samples.to_string(),
        "--num-reps".into(),
        reps.to_string(),
    ])
    .collect()
}

fn collect(out: &Path, samples: u64, reps: u32) -> Output {
    bin()
        .args(collect_args(samples, reps))
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn merge(inputs: &[&Path], out: &Path) -> Output {
    bin()
        .arg("merge")
        .args(inputs)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

/// Starts a long collection and waits until it has written some rows.
fn running_collector(out: &Path) -> Child {
    let child = bin()
        .args(collect_args(1_000_000, 1))
        .arg("--out")
        .arg(out)
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::fs::read_to_string(out).map_or(0, |t| t.lines().count()) < 5 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the collector wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn merge_next_to_a_running_collection_is_refused_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    let mut child = running_collector(&log);
    // The case: merge X -o X while X is collected.
    let o = merge(&[&log], &log);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("another process is collecting into or merging this file"),
        "{}",
        stderr(&o)
    );
    // From it into another file, and a second collector: refused too.
    let other = dir.path().join("other.txt");
    let o = merge(&[&log], &other);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!other.exists());
    let o = collect(&log, 1_000_000, 1);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    child.kill().unwrap();
    child.wait().unwrap();
    // Every input the collector wrote is whole, and a resume completes the set exactly.
    let before = inputs(&log);
    assert!(before.iter().all(|(_, n)| *n == 2), "{before:?}");
    let want = before.len() as u64 + 3;
    let o = collect(&log, want, 1);
    assert!(o.status.success(), "{}", stderr(&o));
    let after = inputs(&log);
    assert_eq!(after.len() as u64, want, "every sample once");
    assert_eq!(&after[..before.len()], &before[..]);
    // Merged onto itself when nobody collects: the same rows, and the lock still holds.
    let text = std::fs::read_to_string(&log).unwrap();
    let o = merge(&[&log], &log);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), text);
    let _held = ah_collect::collect::lock_log(&log, true).unwrap();
    let o = collect(&log, want + 1, 1);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn merge_refuses_to_replace_an_output_it_does_not_merge() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.txt");
    let out = dir.path().join("out.txt");
    assert!(collect(&a, 2, 1).status.success());
    assert!(collect(&out, 3, 1).status.success());
    let before = std::fs::read(&out).unwrap();
    let o = merge(&[&a], &out);
    assert_exit_2(
        &o,
        "out.txt: the output exists and is not one of the inputs",
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
}

#[test]
fn a_resume_without_provenance_and_other_reps_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    assert!(collect(&log, 4, 3).status.success());
    std::fs::remove_file(dir.path().join("log.txt.provenance.json")).unwrap();
    let before = std::fs::read(&log).unwrap();
    let o = collect(&log, 6, 1);
    assert_exit_2(
        &o,
        "rows hold 3 repetition(s) per input, but --num-reps is 1",
    );
    assert_eq!(std::fs::read(&log).unwrap(), before, "no row cut");
    // The inferred count resumes without measuring an input twice.
    assert!(collect(&log, 6, 3).status.success());
    assert_eq!(inputs(&log).len(), 6);
}

#[test]
fn a_damaged_provenance_sidecar_is_refused_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    assert!(collect(&log, 2, 1).status.success());
    let prov = dir.path().join("log.txt.provenance.json");
    let damaged = "{\"sessions\": [{\"started_unix\": 1";
    std::fs::write(&prov, damaged).unwrap();
    let o = collect(&log, 3, 1);
    assert_exit_2(
        &o,
        "log.txt.provenance.json: the provenance sidecar is damaged",
    );
    assert_eq!(std::fs::read_to_string(&prov).unwrap(), damaged);
}

#[test]
fn a_log_that_is_not_utf8_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    assert!(collect(&log, 2, 1).status.success());
    let mut bytes = std::fs::read(&log).unwrap();
    let fourth = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(3)
        .unwrap()
        .0;
    bytes.insert(fourth, 0xff); // at the end of line 4
    std::fs::write(&log, &bytes).unwrap();
    let o = collect(&log, 3, 1);
    assert_exit_2(&o, "log.txt:4: not UTF-8");
    assert_eq!(std::fs::read(&log).unwrap(), bytes, "left alone");
    let o = merge(&[&log], &dir.path().join("m.txt"));
    assert_exit_2(&o, "log.txt:4: not UTF-8");
}
