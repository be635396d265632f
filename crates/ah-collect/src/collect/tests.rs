//! Tests of the collection: resume, repair, shards and merge, locks, provenance.

use std::collections::HashSet;
use std::path::Path;

use serde_json::json;

use super::select::{sample_rng, Samples};
use super::test_runner::{test_config, FnRunner, MeasureFn};
use super::*;
use crate::backend::{BackendKind, BenchError};
use crate::runner::{DynRunner, Feedback, Target};
use crate::runners::{find, RunnerOptions};

fn cfg(out: &Path, n: u64, shard: Shard) -> CollectConfig {
    CollectConfig {
        shard,
        ..test_config(out, n)
    }
}

fn small_runner() -> Box<dyn DynRunner> {
    find(
        "pad_mm",
        &RunnerOptions {
            max_power2: Some(6),
        },
    )
    .unwrap()
}

fn keys(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut v: Vec<String> = ah_log::row_spans(&text)
        .iter()
        .map(|s| s.key.to_string())
        .collect();
    v.dedup();
    v
}

#[test]
fn collects_resumes_and_skips_complete_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sub").join("pad_mm.txt");
    let r = small_runner();
    let s = collect(r.as_ref(), &cfg(&out, 6, Shard::ALL), &mut Silent).unwrap();
    assert_eq!((s.measured, s.already_done, s.rows), (6, 0, 24));
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 + 24);
    assert!(lines[0].starts_with(r#"{"shared_memory": 0, "device_capa": [0, 0], "name": "pad_mm", "numerical_features": ["m", "k", "n", "#));
    assert!(lines[1].ends_with(",prepadded_mat1,prepadded_mat2,using_tf32,choice,feedback"));
    let log = ah_log::Log::read(&out, ah_log::ReadOptions { strict: true }).unwrap();
    assert_eq!(log.choices, ["orig", "pad"]);
    assert!(log
        .rows
        .iter()
        .all(|r| r.feedback.is_finite() && r.feedback >= 0.0));
    let med = ah_log::Log::read(medians_path(&out), ah_log::ReadOptions { strict: true }).unwrap();
    assert_eq!(med.rows.len(), 24);
    // Same request again: nothing to do.
    let s2 = collect(r.as_ref(), &cfg(&out, 6, Shard::ALL), &mut Silent).unwrap();
    assert_eq!((s2.measured, s2.already_done), (0, 6));
    // More samples: only the new ones are measured, nothing duplicated.
    let s3 = collect(r.as_ref(), &cfg(&out, 9, Shard::ALL), &mut Silent).unwrap();
    assert_eq!((s3.measured, s3.already_done), (3, 6));
    let k = keys(&out);
    assert_eq!(k.len(), 9);
    let prov: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(provenance_path(&out)).unwrap()).unwrap();
    assert_eq!(prov["sessions"].as_array().unwrap().len(), 3);
    assert_eq!(prov["seed"], 7);
    assert_eq!(prov["fingerprint"]["name"], "non_cuda_device");
    assert_eq!(prov["fingerprint"]["device_capa"], json!([0, 0]));
    assert_eq!(prov["sessions"][2]["summary"]["measured"], 3);
}

/// Sample keys (feature values) a request selects, without measuring anything.
fn selected(c: &CollectConfig) -> Vec<String> {
    let r = small_runner();
    let t = Target {
        kind: BackendKind::Cpu,
        total_memory: 1 << 34,
        identity: ah_core::DeviceIdentity::NONE,
    };
    drain(r.as_ref(), c, &t)
        .unwrap()
        .into_iter()
        .map(|(_, k)| k)
        .collect()
}

/// Every sample of a request, `(index, feature values)`, drawn one at a time.
fn drain(
    r: &dyn DynRunner,
    c: &CollectConfig,
    t: &Target,
) -> Result<Vec<(u64, String)>, super::CollectError> {
    let mut samples = Samples::new(r, c, t)?;
    let mut all = Vec::new();
    while let Some((i, d)) = samples.next()? {
        all.push((i, d.context.feature_values_csv()));
    }
    Ok(all)
}

#[test]
fn distinct_draws_skip_repeats_deterministically_on_every_shard() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.txt");
    let plain = selected(&cfg(&out, 300, Shard::ALL));
    let unique: HashSet<&String> = plain.iter().collect();
    assert!(unique.len() < 300, "the small space repeats inputs");
    let mut c = cfg(&out, 300, Shard::ALL);
    c.distinct = true;
    let all = selected(&c);
    assert_eq!(all.len(), 300);
    assert_eq!(all.iter().collect::<HashSet<_>>().len(), 300);
    // The plain draw's first occurrences come first, in order.
    let mut seen = HashSet::new();
    let firsts: Vec<&String> = plain.iter().filter(|k| seen.insert(*k)).collect();
    assert_eq!(all[..firsts.len()].iter().collect::<Vec<_>>(), firsts);
    // Shards split the same selection.
    let mut parts = Vec::new();
    for index in 0..3 {
        let mut c = c.clone();
        c.shard = Shard { index, count: 3 };
        parts.extend(selected(&c));
    }
    parts.sort();
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(parts, sorted);
}

#[test]
fn excluded_logs_are_never_drawn_and_a_small_space_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.txt");
    let r = small_runner();
    let mut c = cfg(&train, 8, Shard::ALL);
    c.distinct = true;
    collect(r.as_ref(), &c, &mut Silent).unwrap();
    let trained: HashSet<String> = keys(&train).into_iter().collect();
    assert_eq!(trained.len(), 8);
    let fresh = dir.path().join("fresh.txt");
    let mut c = cfg(&fresh, 8, Shard::ALL);
    c.exclude = vec![train.clone()];
    let s = collect(r.as_ref(), &c, &mut Silent).unwrap();
    assert_eq!(s.measured, 8);
    assert!(
        s.skipped >= 8,
        "the same seed draws the training inputs first"
    );
    assert!(keys(&fresh).iter().all(|k| !trained.contains(k)));
    // A missing exclude log is an error naming it.
    c.exclude = vec![dir.path().join("missing.txt")];
    let e = collect(r.as_ref(), &c, &mut Silent)
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.txt"), "{e}");
    // More distinct inputs than the space holds: an error, not an endless loop.
    let mut c = cfg(&dir.path().join("big.txt"), 2_000, Shard::ALL);
    c.distinct = true;
    let t = Target {
        kind: BackendKind::Cpu,
        total_memory: 1 << 34,
        identity: ah_core::DeviceIdentity::NONE,
    };
    let tiny = find(
        "pad_mm",
        &RunnerOptions {
            max_power2: Some(1),
        },
    )
    .unwrap();
    let e = drain(tiny.as_ref(), &c, &t).err().unwrap().to_string();
    assert!(e.contains("sample space is too small"), "{e}");
}

#[test]
fn torn_tail_and_incomplete_input_are_repaired_then_redone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pad_mm.txt");
    let r = small_runner();
    collect(r.as_ref(), &cfg(&out, 4, Shard::ALL), &mut Silent).unwrap();
    let full = std::fs::read_to_string(&out).unwrap();
    // Simulate a kill in the middle of the last input: keep 1.5 of its 4 rows.
    let lines: Vec<&str> = full.lines().collect();
    let mut cut = lines[..lines.len() - 3].join("\n");
    cut.push('\n');
    cut.push_str(&lines[lines.len() - 3][..10]);
    std::fs::write(&out, &cut).unwrap();
    let rep = repair_log(&out, 2).unwrap();
    assert_eq!(rep.complete.values().sum::<u64>(), 3);
    assert!(rep.removed_bytes > 10);
    assert!(std::fs::read_to_string(&out).unwrap().ends_with('\n'));
    let s = collect(r.as_ref(), &cfg(&out, 4, Shard::ALL), &mut Silent).unwrap();
    assert_eq!((s.measured, s.already_done), (1, 3));
    assert_eq!(keys(&out), keys_of_text(&full));
    // The medians sidecar holds exactly the same inputs.
    assert_eq!(keys(&medians_path(&out)), keys(&out));
}

fn keys_of_text(text: &str) -> Vec<String> {
    let mut v: Vec<String> = ah_log::row_spans(text)
        .iter()
        .map(|s| s.key.to_string())
        .collect();
    v.dedup();
    v
}

#[test]
fn shards_partition_the_samples_and_merge_joins_them() {
    let dir = tempfile::tempdir().unwrap();
    let r = small_runner();
    let whole = dir.path().join("whole.txt");
    collect(r.as_ref(), &cfg(&whole, 7, Shard::ALL), &mut Silent).unwrap();
    let mut parts = Vec::new();
    for i in 0..3 {
        let p = dir.path().join(format!("shard{i}.txt"));
        let s = collect(
            r.as_ref(),
            &cfg(&p, 7, Shard { index: i, count: 3 }),
            &mut Silent,
        )
        .unwrap();
        assert_eq!(s.shard_samples, [3, 2, 2][i as usize]);
        parts.push(p);
    }
    let merged = dir.path().join("merged.txt");
    let m = merge(&parts, &merged).unwrap();
    assert_eq!(m.rows, 28);
    assert!(m.medians);
    let mut a = keys(&whole);
    let mut b = keys(&merged);
    a.sort();
    b.sort();
    assert_eq!(
        a, b,
        "the shards together are exactly the whole sample space"
    );
    assert!(medians_path(&merged).exists());
}

#[test]
fn merge_refuses_different_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.txt");
    let b = dir.path().join("b.txt");
    std::fs::write(&a, "{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"x\", \"numerical_features\": [\"m\"], \"categorical_features\": []}\nm,choice,feedback\n1,a,1.0\n").unwrap();
    std::fs::write(&b, "{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"y\", \"numerical_features\": [\"m\"], \"categorical_features\": []}\nm,choice,feedback\n1,a,1.0\n").unwrap();
    let out = dir.path().join("o.txt");
    let err = merge(&[a, b], &out).unwrap_err().to_string();
    assert!(err.contains("b.txt: metadata line differs from"), "{err}");
    assert!(!out.exists(), "no half-written output");
}

#[test]
fn merge_reads_gzip_logs_and_writes_plain_text_only() {
    let dir = tempfile::tempdir().unwrap();
    let text_a = "{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"x\", \"numerical_features\": [\"m\"], \"categorical_features\": []}\nm,choice,feedback\n1,a,1.0\n1,b,2.0\n";
    let a = dir.path().join("a.txt.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, text_a.as_bytes()).unwrap();
    std::fs::write(&a, gz.finish().unwrap()).unwrap();
    let b = dir.path().join("b.txt");
    std::fs::write(
        &b,
        "{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"x\", \"numerical_features\": [\"m\"], \"categorical_features\": []}\nm,choice,feedback\n2,a,3.0\n2,b,4.0\n",
    )
    .unwrap();
    let out = dir.path().join("o.txt");
    let summary = merge(&[a.clone(), b.clone()], &out).unwrap();
    assert_eq!(summary.rows, 4);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"x\", \"numerical_features\": [\"m\"], \"categorical_features\": []}\nm,choice,feedback\n1,a,1.0\n1,b,2.0\n2,a,3.0\n2,b,4.0\n"
    );
    let gz_out = dir.path().join("o2.txt.gz");
    let err = merge(&[a, b], &gz_out).unwrap_err().to_string();
    assert!(err.contains("merge writes a plain log"), "{err}");
    assert!(!gz_out.exists());
}

#[test]
fn a_second_writer_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pad_mm.txt");
    let r = small_runner();
    // Held before the log exists (its sidecar), then with the log there (the file too).
    let held = lock_log(&out, true).unwrap();
    let err = collect(r.as_ref(), &cfg(&out, 2, Shard::ALL), &mut Silent).unwrap_err();
    assert!(err.to_string().contains("pad_mm.txt.lock"), "{err}");
    drop(held);
    collect(r.as_ref(), &cfg(&out, 1, Shard::ALL), &mut Silent).unwrap();
    let held = lock_log(&out, true).unwrap();
    let err = collect(r.as_ref(), &cfg(&out, 2, Shard::ALL), &mut Silent).unwrap_err();
    assert!(
        matches!(err, CollectError::Core(ah_core::Error::Locked { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("another process is collecting"));
    assert!(err.to_string().contains("pad_mm.txt.lock"), "{err}");
    // A merge onto it, or from it, is refused too, and leaves it alone.
    let other = dir.path().join("other.txt");
    let e = merge(std::slice::from_ref(&out), &out).unwrap_err();
    assert!(
        matches!(e, CollectError::Core(ah_core::Error::Locked { .. })),
        "{e}"
    );
    let e = merge(std::slice::from_ref(&out), &other).unwrap_err();
    assert!(
        matches!(e, CollectError::Core(ah_core::Error::Locked { .. })),
        "{e}"
    );
    assert!(!other.exists());
    drop(held);
    collect(r.as_ref(), &cfg(&out, 2, Shard::ALL), &mut Silent).unwrap();
    // After a merge onto itself (a rename), the lock still protects the log.
    merge(std::slice::from_ref(&out), &out).unwrap();
    let _held = lock_log(&out, true).unwrap();
    let err = collect(r.as_ref(), &cfg(&out, 3, Shard::ALL), &mut Silent).unwrap_err();
    assert!(
        matches!(err, CollectError::Core(ah_core::Error::Locked { .. })),
        "{err}"
    );
}

const HEAD: &str = "{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"x\", \"numerical_features\": [\"m\"], \"categorical_features\": []}\nm,choice,feedback\n";

#[test]
fn repair_keeps_equal_inputs_drawn_in_a_row_and_cuts_only_the_partial_one() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.txt");
    // reps 2, choices a, b: input 1 complete, then input 2 twice complete and once cut.
    let whole2 = "2,a,1.0\n2,b,1.0\n2,a,1.0\n2,b,1.0\n";
    let text = format!("{HEAD}1,a,1.0\n1,b,1.0\n1,a,1.0\n1,b,1.0\n{whole2}{whole2}2,a,1.0\n2,b,1");
    std::fs::write(&p, &text).unwrap();
    let rep = repair_log(&p, 2).unwrap();
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        format!("{HEAD}1,a,1.0\n1,b,1.0\n1,a,1.0\n1,b,1.0\n{whole2}{whole2}")
    );
    assert_eq!(rep.complete.get("1"), Some(&1));
    assert_eq!(
        rep.complete.get("2"),
        Some(&2),
        "both equal inputs are complete"
    );
    // Nothing to cut: unchanged, and counted the same.
    assert_eq!(
        repair_log(&p, 2).unwrap(),
        Repair {
            removed_bytes: 0,
            ..rep
        }
    );
}

#[test]
fn reps_are_inferred_from_the_rows() {
    let three = format!("{HEAD}1,a,1.0\n1,b,1.0\n1,a,1.0\n1,b,1.0\n1,a,1.0\n1,b,1.0\n");
    assert_eq!(ah_log::infer_reps(&three), Some(3));
    let cut = format!("{three}2,a,1.0\n2,b,1.0\n");
    assert_eq!(
        ah_log::infer_reps(&cut),
        Some(3),
        "the last input may be cut"
    );
    assert_eq!(ah_log::infer_reps(HEAD), None);
}

#[test]
fn a_resume_without_provenance_and_other_reps_is_refused_without_cutting() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pad_mm.txt");
    let r = small_runner();
    collect(r.as_ref(), &cfg(&out, 3, Shard::ALL), &mut Silent).unwrap();
    let before = std::fs::read(&out).unwrap();
    std::fs::remove_file(provenance_path(&out)).unwrap();
    let mut c = cfg(&out, 5, Shard::ALL);
    c.num_reps = 1;
    let e = collect(r.as_ref(), &c, &mut Silent)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("hold 2 repetition(s) per input, but --num-reps is 1"),
        "{e}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), before, "no row cut");
    // With the inferred count it resumes: no input measured twice.
    let s = collect(r.as_ref(), &cfg(&out, 5, Shard::ALL), &mut Silent).unwrap();
    assert_eq!((s.already_done, s.measured), (3, 2));
}

#[test]
fn a_damaged_provenance_sidecar_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pad_mm.txt");
    let r = small_runner();
    collect(r.as_ref(), &cfg(&out, 2, Shard::ALL), &mut Silent).unwrap();
    let prov = provenance_path(&out);
    for damaged in [
        "{\"sessions\": [1, 2",
        "[1]",
        "{\"sessions\": 3}",
        "\u{fffd}",
    ] {
        std::fs::write(&prov, damaged).unwrap();
        let e = collect(r.as_ref(), &cfg(&out, 3, Shard::ALL), &mut Silent)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("provenance.json: the provenance sidecar is damaged"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(&prov).unwrap(),
            damaged,
            "kept as it was"
        );
    }
}

#[test]
fn a_log_its_runner_would_measure_otherwise_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fn.txt");
    let r = FnRunner {
        name: "fn",
        feedback: Feedback::Timed,
        measure: |x: u64, _c: &str| {
            Ok(crate::Measurement::from_samples(&mut [1.0 + x as f64 / 1e6]).unwrap())
        },
    };
    collect(&r, &cfg(&out, 2, Shard::ALL), &mut Silent).unwrap();
    let extras = extras_path(&out);
    // A last line torn by a kill is passed over for the whole line before it.
    std::fs::write(&extras, "{\"refuse\": \"measured otherwise\"}\n{\"refu").unwrap();
    let before = std::fs::read(&out).unwrap();
    let e = collect(&r, &cfg(&out, 3, Shard::ALL), &mut Silent)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("fn.txt: measured otherwise (the last line of ")
            && e.contains("fn.txt.extras.jsonl); resume with the setting it was measured with"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "the log is kept as it was"
    );
    std::fs::write(&extras, "{\"refuse\": null}\n").unwrap();
    let s = collect(&r, &cfg(&out, 3, Shard::ALL), &mut Silent).unwrap();
    assert_eq!((s.measured, s.already_done), (1, 2));
}

/// A runner that reports one number per choice, as Inductor's does.
fn reporting() -> FnRunner<MeasureFn> {
    FnRunner {
        name: "reported",
        feedback: Feedback::Reported {
            label: "feedback = the test's own number",
            method: "reported by the test",
        },
        measure: |x, _c| Ok(crate::Measurement::from_samples(&mut [1.0 + x as f64]).unwrap()),
    }
}

#[test]
fn a_runner_that_reports_its_feedback_gets_no_medians_sidecar_and_says_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("reported.txt");
    let r = reporting();
    collect(&r, &cfg(&out, 2, Shard::ALL), &mut Silent).unwrap();
    let s = collect(&r, &cfg(&out, 3, Shard::ALL), &mut Silent).unwrap();
    assert_eq!((s.measured, s.already_done), (1, 2));
    assert!(!medians_path(&out).exists());
    assert_eq!(keys(&out).len(), 3);
    let prov: serde_json::Value =
        serde_json::from_slice(&std::fs::read(provenance_path(&out)).unwrap()).unwrap();
    assert_eq!(prov["label"], "feedback = the test's own number");
    assert_eq!(prov["timing_method"], "reported by the test");
}

#[test]
fn a_medians_sidecar_a_reporting_runner_finds_is_kept_in_step() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("reported.txt");
    let r = reporting();
    collect(&r, &cfg(&out, 2, Shard::ALL), &mut Silent).unwrap();
    // A log collected before the runner reported its feedback has a sidecar: it grows with it.
    std::fs::copy(&out, medians_path(&out)).unwrap();
    collect(&r, &cfg(&out, 3, Shard::ALL), &mut Silent).unwrap();
    assert_eq!(
        std::fs::read(medians_path(&out)).unwrap(),
        std::fs::read(&out).unwrap()
    );
}

#[test]
fn a_log_collected_on_another_device_model_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pad_mm.txt");
    let r = small_runner();
    collect(r.as_ref(), &cfg(&out, 2, Shard::ALL), &mut Silent).unwrap();
    let prov = provenance_path(&out);
    let mine: serde_json::Value = serde_json::from_slice(&std::fs::read(&prov).unwrap()).unwrap();
    let mut other = mine.clone();
    other["device_name"] = json!("NVIDIA H200");
    std::fs::write(&prov, serde_json::to_vec(&other).unwrap()).unwrap();
    let before = std::fs::read(&out).unwrap();
    let e = collect(r.as_ref(), &cfg(&out, 3, Shard::ALL), &mut Silent)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("pad_mm.txt: was collected on NVIDIA H200 (see ")
            && e.contains(&format!(
                "and this run is on {}: one log holds one device model's timings",
                mine["device_name"].as_str().unwrap()
            )),
        "{e}"
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "the log is kept as it was"
    );
    std::fs::write(&prov, serde_json::to_vec(&mine).unwrap()).unwrap();
    let s = collect(r.as_ref(), &cfg(&out, 3, Shard::ALL), &mut Silent).unwrap();
    assert_eq!((s.measured, s.already_done), (1, 2));
}

#[test]
fn merge_never_replaces_rows_it_does_not_merge() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.txt");
    let out = dir.path().join("o.txt");
    std::fs::write(&a, format!("{HEAD}1,a,1.0\n")).unwrap();
    std::fs::write(&out, format!("{HEAD}2,a,1.0\n")).unwrap();
    let e = merge(std::slice::from_ref(&a), &out)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("o.txt: the output exists and is not one of the inputs"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        format!("{HEAD}2,a,1.0\n")
    );
    // Listed among the inputs, its rows are kept.
    let m = merge(&[out.clone(), a.clone()], &out).unwrap();
    assert_eq!(m.rows, 2);
    // A stale medians sidecar of the output is refused, not left behind.
    std::fs::write(medians_path(&out), format!("{HEAD}2,a,1.0\n")).unwrap();
    let e = merge(&[out.clone(), a.clone()], &out)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("o.txt.medians.txt: exists, but not every input"),
        "{e}"
    );
    // Not UTF-8: the file and the line.
    std::fs::write(&a, [HEAD.as_bytes(), b"1,\xff,1.0\n"].concat()).unwrap();
    let e = merge(std::slice::from_ref(&a), &dir.path().join("n.txt"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("a.txt:3: not UTF-8"), "{e}");
}

/// A runner whose choice `b` fails: with a lost context on input `fail_on`, out of memory on
/// the others; `a` takes 1 ms.
fn flaky(
    fail_on: Option<u64>,
) -> FnRunner<impl Fn(u64, &str) -> Result<crate::Measurement, BenchError> + Send + Sync + 'static>
{
    FnRunner {
        name: "flaky",
        feedback: Feedback::Timed,
        measure: move |x: u64, choice: &str| match (fail_on == Some(x), choice) {
            (true, "b") => Err(BenchError::ContextLost("CUDA_ERROR_ILLEGAL_ADDRESS".into())),
            (false, "b") => Err(BenchError::OutOfMemory("too big".into())),
            _ => Ok(crate::Measurement {
                min_ms: 1.0,
                median_ms: 2.0,
                runs: 3,
                busy_ms: 6.0,
            }),
        },
    }
}

#[test]
fn a_lost_context_stops_without_logging_and_a_rerun_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("flaky.txt");
    let t = Target {
        kind: BackendKind::Cpu,
        total_memory: 1 << 30,
        identity: ah_core::DeviceIdentity::NONE,
    };
    let third = flaky(None).draw(&mut sample_rng(7, 2), &t, 1).unwrap();
    let x = third.context.get("x").unwrap().as_f64().unwrap() as u64;
    let err = collect(&flaky(Some(x)), &cfg(&out, 5, Shard::ALL), &mut Silent)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("sample 2") && err.contains("context lost"),
        "{err}"
    );
    assert_eq!(
        keys(&out).len(),
        2,
        "inputs before the failure are kept, the failed one is not"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.lines()
            .skip(2)
            .all(|l| l.ends_with(",a,1.0") || l.ends_with(",b,inf")),
        "{text}"
    );
    let s = collect(&flaky(None), &cfg(&out, 5, Shard::ALL), &mut Silent).unwrap();
    assert_eq!((s.already_done, s.measured, s.failures), (2, 3, 6));
    let med = std::fs::read_to_string(medians_path(&out)).unwrap();
    assert!(med
        .lines()
        .skip(2)
        .all(|l| l.ends_with(",a,2.0") || l.ends_with(",b,inf")));
}

#[test]
fn shard_parsing() {
    assert_eq!(Shard::parse("1/4").unwrap(), Shard { index: 1, count: 4 });
    assert!(Shard::parse("4/4").is_err());
    assert!(Shard::parse("x")
        .unwrap_err()
        .to_string()
        .contains("--shard `x`"));
    assert!(Shard { index: 1, count: 3 }.contains(4));
}

#[test]
fn samples_do_not_depend_on_the_shard() {
    let r = small_runner();
    let t = Target {
        kind: BackendKind::Cpu,
        total_memory: 1 << 30,
        identity: ah_core::DeviceIdentity::NONE,
    };
    let a = r.draw(&mut sample_rng(3, 5), &t, 10).unwrap();
    let b = r.draw(&mut sample_rng(3, 5), &t, 10).unwrap();
    let c = r.draw(&mut sample_rng(3, 6), &t, 10).unwrap();
    assert_eq!(a.context, b.context);
    assert_ne!(a.context, c.context);
}

#[test]
fn default_path_is_the_runtimes() {
    if [
        "AUTOHEURISTIC_LOG_PATH",
        "TORCHINDUCTOR_AUTOHEURISTIC_LOG_PATH",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some())
    {
        eprintln!("skipped: a log path is set in the environment");
        return;
    }
    let p = default_log_path(
        Some(("NVIDIA H100 80GB HBM3", ah_core::DeviceIdentity::H100)),
        "pad_mm",
    );
    assert!(
        p.ends_with("autoheuristic/NVIDIA_H100_80GB_HBM3/pad_mm.txt"),
        "{}",
        p.display()
    );
    assert!(default_log_path(None, "pad_mm").ends_with("autoheuristic/non_cuda_device/pad_mm.txt"));
}

/// A log of the cuBLASLt runner written before its rename (metadata name `mm`, the committed
/// `data/mm_h100.txt`) is resumed by `cublaslt_mm` under its own name: the metadata a resume
/// writes is accepted by the log's exact metadata check. Any other log gets the runner's name.
#[test]
fn a_log_of_the_former_mm_runner_name_resumes_as_cublaslt_mm() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mm_h100.txt");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/mm_h100.txt");
    std::fs::copy(&data, &log).unwrap();
    let runner = crate::runners::find("cublaslt_mm", &RunnerOptions::default()).unwrap();
    assert_eq!(runner.name(), "cublaslt_mm");
    let name = super::run::log_name_for(&log, runner.name());
    assert_eq!(name, "mm");
    let old = ah_log::Log::read(&log, ah_log::ReadOptions::default()).unwrap();
    let md = ah_core::Metadata::new(
        old.metadata.device(),
        &name,
        old.metadata.numerical_features.clone(),
        old.metadata.categorical_features.clone(),
    );
    assert_eq!(md.to_json_line(), old.metadata_line);
    ah_log::LogWriter::append(&log, &md, &old.features).expect("resumes");
    // Under the new name the metadata would not match: that is why the former one is kept.
    let renamed = ah_core::Metadata::new(
        old.metadata.device(),
        "cublaslt_mm",
        old.metadata.numerical_features.clone(),
        old.metadata.categorical_features.clone(),
    );
    assert!(ah_log::LogWriter::append(&log, &renamed, &old.features).is_err());
    // A new log, or a log of another name, gets the runner's name.
    assert_eq!(
        super::run::log_name_for(&dir.path().join("new.txt"), "cublaslt_mm"),
        "cublaslt_mm"
    );
    assert_eq!(super::run::log_name_for(&log, "pad_mm"), "pad_mm");
}
