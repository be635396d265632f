//! Tests of the stop token: a stopped collection writes only whole inputs, closes its session
//! marked `interrupted`, and a second run resumes to the bytes of an uninterrupted one.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::test_runner::{test_config, FnRunner};
use super::*;
use crate::backend::BenchError;
use crate::runner::Feedback;

/// A CPU collection of `n` samples at `--num-reps 2` (no long rule: 4 rows per input).
fn cfg(out: &Path, n: u64, stop: &Arc<AtomicBool>) -> CollectConfig {
    CollectConfig {
        long_reps: 2,
        seed: 11,
        stop: Arc::clone(stop),
        ..test_config(out, n)
    }
}

/// A measurement that depends on the input and the choice only.
fn value(x: u64, choice: &str) -> Result<crate::Measurement, BenchError> {
    let ms = (x % 97) as f64 + if choice == "a" { 0.25 } else { 0.5 };
    Ok(crate::Measurement {
        min_ms: ms,
        median_ms: ms + 1.0,
        runs: 1,
        busy_ms: ms,
    })
}

/// A runner measuring [`value`] that sets `stop` when it starts measuring its `k`-th distinct
/// input (so that input is in flight when the stop comes).
fn stopping_runner(
    stop: &Arc<AtomicBool>,
    k: usize,
) -> FnRunner<impl Fn(u64, &str) -> Result<crate::Measurement, BenchError> + Send + Sync + 'static>
{
    let (stop, seen) = (Arc::clone(stop), Mutex::new(BTreeSet::new()));
    FnRunner {
        name: "stoppable",
        feedback: Feedback::Timed,
        measure: move |x: u64, choice: &str| {
            let mut seen = seen.lock().unwrap();
            if seen.insert(x) && seen.len() == k {
                stop.store(true, Ordering::SeqCst);
            }
            value(x, choice)
        },
    }
}

/// Rows per input, in file order.
fn rows_per_input(path: &Path) -> Vec<usize> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut v: Vec<(String, usize)> = Vec::new();
    for s in ah_log::row_spans(&text) {
        match v.last_mut() {
            Some((k, n)) if k == s.key => *n += 1,
            _ => v.push((s.key.to_string(), 1)),
        }
    }
    v.into_iter().map(|(_, n)| n).collect()
}

fn last_session(out: &Path) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(provenance_path(out)).unwrap()).unwrap();
    v["sessions"].as_array().unwrap().last().unwrap().clone()
}

#[test]
fn a_stop_finishes_the_input_in_flight_and_a_rerun_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let never = Arc::new(AtomicBool::new(false));
    let whole = dir.path().join("whole.txt");
    let plain = FnRunner {
        name: "stoppable",
        feedback: Feedback::Timed,
        measure: value,
    };
    let s = collect(&plain, &cfg(&whole, 8, &never), &mut Silent).unwrap();
    assert_eq!((s.measured, s.interrupted), (8, false));

    let out = dir.path().join("stopped.txt");
    let stop = Arc::new(AtomicBool::new(false));
    let runner = stopping_runner(&stop, 3);
    let s = collect(&runner, &cfg(&out, 8, &stop), &mut Silent).unwrap();
    assert!(s.interrupted);
    assert_eq!(
        (s.measured, s.rows),
        (3, 12),
        "the third input was in flight"
    );
    assert_eq!(rows_per_input(&out), [4, 4, 4], "only whole inputs");
    let session = last_session(&out);
    assert_eq!(session["finished"], false);
    assert_eq!(session["summary"]["interrupted"], true);
    assert_eq!(session["summary"]["measured"], 3);
    assert!(session["summary"]["inputs_per_minute"].as_f64().unwrap() > 0.0);

    stop.store(false, Ordering::SeqCst);
    let s = collect(&runner, &cfg(&out, 8, &stop), &mut Silent).unwrap();
    assert_eq!((s.already_done, s.measured, s.interrupted), (3, 5, false));
    assert_eq!(s.repaired_bytes, 0, "nothing torn to repair");
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&whole).unwrap());
    assert_eq!(
        std::fs::read(medians_path(&out)).unwrap(),
        std::fs::read(medians_path(&whole)).unwrap()
    );
    let session = last_session(&out);
    assert_eq!(session["finished"], true);
    assert!(
        session["summary"].get("interrupted").is_none(),
        "an uninterrupted summary is as before: {session}"
    );
}

#[test]
fn a_stop_before_the_start_measures_nothing_and_a_stop_after_the_end_is_no_interruption() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("early.txt");
    let stop = Arc::new(AtomicBool::new(true));
    let plain = FnRunner {
        name: "stoppable",
        feedback: Feedback::Timed,
        measure: value,
    };
    let s = collect(&plain, &cfg(&out, 4, &stop), &mut Silent).unwrap();
    assert_eq!((s.measured, s.interrupted), (0, true));
    assert_eq!(last_session(&out)["summary"]["interrupted"], true);
    stop.store(false, Ordering::SeqCst);
    collect(&plain, &cfg(&out, 4, &stop), &mut Silent).unwrap();
    // Everything is in the log: a set token leaves nothing unmeasured, so nothing interrupted.
    stop.store(true, Ordering::SeqCst);
    let s = collect(&plain, &cfg(&out, 4, &stop), &mut Silent).unwrap();
    assert_eq!((s.already_done, s.measured, s.interrupted), (4, 0, false));
    assert_eq!(last_session(&out)["finished"], true);
}
