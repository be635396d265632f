//! Tests of `--long-reps`: inputs whose choices are all long get fewer repetitions, and logs
//! that mix both counts resume, repair and reconcile exactly.

use std::path::Path;

use super::test_runner::{test_config, FnRunner, MeasureFn};
use super::*;
use crate::backend::{BenchError, TimingConfig};
use crate::runner::Feedback;

/// Choice `a` is long (50 ms) when `x` is even, `b` when `x % 4 == 0`, else 1 ms: inputs with
/// `x % 4 == 0` are all long, the others are not (`x % 4 == 2`: only `a` is long).
const KERNELS: FnRunner<MeasureFn> = FnRunner {
    name: "kernels",
    feedback: Feedback::Timed,
    measure: kernel_ms,
};

fn is_long(x: u64, choice: &str) -> bool {
    match choice {
        "a" => x.is_multiple_of(2),
        _ => x.is_multiple_of(4),
    }
}

/// Measures choice `c` of input `x`: 50 ms when long ([`is_long`]), else 1 ms.
fn kernel_ms(x: u64, choice: &str) -> Result<crate::Measurement, BenchError> {
    let ms = if is_long(x, choice) { 50.0 } else { 1.0 };
    Ok(crate::Measurement {
        min_ms: ms,
        median_ms: ms + 0.5,
        runs: 1,
        busy_ms: ms,
    })
}

/// A CPU collection of `n` samples at `--num-reps 2 --long-reps long` whose protocol calls
/// 20 ms and more long.
fn cfg(out: &Path, n: u64, long: usize) -> CollectConfig {
    CollectConfig {
        long_reps: long,
        cpu_timing: Some(TimingConfig {
            long_run_ms: Some(20.0),
            ..TimingConfig::PYTORCH
        }),
        ..test_config(out, n)
    }
}

/// `(x, rows per choice)` of every input, in file order.
fn reps_per_input(path: &Path) -> Vec<(u64, usize)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut v: Vec<(u64, usize)> = Vec::new();
    for s in ah_log::row_spans(&text) {
        let x: u64 = s.key.parse().unwrap();
        match v.last_mut() {
            Some((k, n)) if *k == x => *n += 1,
            _ => v.push((x, 1)),
        }
    }
    v.into_iter().map(|(x, rows)| (x, rows / 2)).collect()
}

fn provenance(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(provenance_path(out)).unwrap()).unwrap()
}

#[test]
fn all_long_inputs_get_long_reps_and_a_torn_mixed_log_resumes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.txt");
    let s = collect(&KERNELS, &cfg(&out, 16, 1), &mut Silent).unwrap();
    let inputs = reps_per_input(&out);
    assert_eq!(inputs.len(), 16);
    for &(x, reps) in &inputs {
        assert_eq!(reps, if x.is_multiple_of(4) { 1 } else { 2 }, "x = {x}");
    }
    let ones = inputs.iter().filter(|i| i.1 == 1).count() as u64;
    assert!(0 < ones && ones < 16, "the seed mixes both: {inputs:?}");
    assert_eq!(s.fewer_reps, ones);
    assert_eq!(s.rows, 2 * (2 * 16 - ones));
    let prov = provenance(&out);
    assert_eq!(
        (prov["num_reps"].as_u64(), prov["long_reps"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(prov["sessions"][0]["summary"]["fewer_reps"], ones);
    assert!(prov["timing_method"]
        .as_str()
        .unwrap()
        .contains("num_reps repetitions"));
    let full = std::fs::read_to_string(&out).unwrap();
    let full_med = std::fs::read_to_string(medians_path(&out)).unwrap();

    // Kill at every row of the last two inputs (the main log one row behind its sidecar):
    // the resume measures again exactly the inputs not whole in the log, and the log and
    // its sidecar come back byte for byte.
    let lines: Vec<&str> = full.lines().collect();
    let tail_rows: usize = inputs[14..].iter().map(|i| 2 * i.1).sum();
    for cut in 1..=tail_rows {
        let keep = |text: &str, n: usize| -> String {
            text.lines().take(n).map(|l| format!("{l}\n")).collect()
        };
        std::fs::write(&out, keep(&full, lines.len() - cut)).unwrap();
        std::fs::write(medians_path(&out), keep(&full_med, lines.len() - cut + 1)).unwrap();
        // The cut input keeps its whole repetitions (a 2-rep input cut after 2 or 3 of its
        // 4 rows: its first repetition, see ah_core's repair docs) and counts as logged.
        let rows_left = tail_rows - cut;
        let first = 2 * inputs[14].1;
        let (whole, partial_kept) = if rows_left >= first {
            (15, rows_left - first >= 2)
        } else {
            (14, rows_left >= 2)
        };
        let logged = whole + usize::from(partial_kept);
        let s = collect(&KERNELS, &cfg(&out, 16, 1), &mut Silent).unwrap();
        assert_eq!(
            (s.already_done, s.measured),
            (logged as u64, 16 - logged as u64),
            "cut {cut}"
        );
        let xs = |p: &Path| {
            reps_per_input(p)
                .into_iter()
                .map(|i| i.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            xs(&out),
            xs(&medians_path(&out)),
            "cut {cut}: the same inputs"
        );
        if !partial_kept {
            assert_eq!(std::fs::read_to_string(&out).unwrap(), full, "cut {cut}");
            assert_eq!(
                std::fs::read_to_string(medians_path(&out)).unwrap(),
                full_med,
                "cut {cut}"
            );
        }
    }
}

#[test]
fn long_reps_must_be_between_one_and_num_reps() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.txt");
    for long in [0, 3] {
        let e = collect(&KERNELS, &cfg(&out, 2, long), &mut Silent)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(
                "--long-reps {long} must be between 1 and --num-reps (2)"
            )),
            "{e}"
        );
    }
    assert!(!out.exists(), "nothing written");
}

#[test]
fn a_log_from_before_long_reps_keeps_measuring_every_input_num_reps_times() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.txt");
    collect(&KERNELS, &cfg(&out, 4, 2), &mut Silent).unwrap();
    assert!(reps_per_input(&out).iter().all(|i| i.1 == 2));
    // As the sidecars of logs collected before --long-reps: no `long_reps`.
    let mut prov = provenance(&out);
    prov.as_object_mut().unwrap().remove("long_reps");
    std::fs::write(provenance_path(&out), prov.to_string()).unwrap();
    let e = collect(&KERNELS, &cfg(&out, 8, 1), &mut Silent)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("was collected with --long-reps 2 (recorded before --long-reps"),
        "{e}"
    );
    let s = collect(&KERNELS, &cfg(&out, 8, 2), &mut Silent).unwrap();
    assert_eq!((s.already_done, s.measured, s.fewer_reps), (4, 4, 0));
    // Now recorded: another --long-reps is refused the same way.
    assert_eq!(provenance(&out)["long_reps"], 2);
    let e = collect(&KERNELS, &cfg(&out, 8, 1), &mut Silent)
        .unwrap_err()
        .to_string();
    assert!(e.contains("was collected with --long-reps 2 (see"), "{e}");
}
