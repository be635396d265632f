//! The `ah-collect` binary on the CPU backend: listing, collecting, resuming after a kill,
//! sharding and merging, and the errors a user can run into.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::{assert_exit_2, bin, inputs, stderr};

fn run(args: &[&str], out: &Path) -> Output {
    bin().args(args).arg("--out").arg(out).output().unwrap()
}

const SMALL: &[&str] = &[
    "--name",
    "pad_mm",
    "--device",
    "cpu",
    "--max-dim",
    "64",
    "--num-reps",
    "2",
    "--shapes",
    "pytorch",
];

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = SMALL.to_vec();
    v.extend_from_slice(extra);
    v
}

/// `--list` prints one line per registered runner, in the registry's order: name, choices
/// (comma-separated) and description, tab-separated. The expected text is derived from the
/// registry, so adding a runner (docs/adding-a-runner.md) changes nothing here; the shipped
/// runners must stay listed.
#[test]
fn list_shows_runners_and_choices() {
    let o = bin().arg("--list").output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let registry = ah_collect::runners::registry(&Default::default());
    let want: String = registry
        .iter()
        .map(|r| {
            format!(
                "{}\t{}\t{}\n",
                r.name(),
                r.choices().join(","),
                r.description()
            )
        })
        .collect();
    assert_eq!(text, want);
    for shipped in ["pad_mm", "reduction", "cublaslt_mm", "inductor_mm"] {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{shipped}\t"))),
            "{shipped} is not listed:\n{text}"
        );
    }
}

#[test]
fn a_gpu_runner_on_the_cpu_says_what_it_needs_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("inductor.txt");
    let o = run(
        &[
            "--name",
            "inductor_mm",
            "--device",
            "cpu",
            "--num-samples",
            "1",
        ],
        &out,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("needs a CUDA GPU"), "{}", stderr(&o));
    assert!(!out.exists());
}

#[test]
fn collects_on_the_cpu_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pad_mm.txt");
    let o = run(&args(&["--num-samples", "5"]), &out);
    assert!(o.status.success(), "{}", stderr(&o));
    // The device's name, the paths and the times vary; the counts and the wording do not.
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r" on .+ #0 \(cpu\)", " on [CPU] #0 (cpu)");
    settings.add_filter(r"\S*/\.tmp[0-9A-Za-z]{6}", "[TMP]");
    settings.add_filter(
        r"(\d+/\d+ inputs), \d+ s, [\d.]+ inputs/min, ETA \d+ s",
        "$1, [S] s, [RATE] inputs/min, ETA [S] s",
    );
    settings.add_filter(
        r"in [\d.]+ s = [\d.]+ inputs/min, the device busy \d+ %",
        "in [S] s = [RATE] inputs/min, the device busy [BUSY] %",
    );
    settings.bind(|| insta::assert_snapshot!("collect_summary", stderr(&o)));
    let log = ah_log::Log::read(&out, ah_log::ReadOptions { strict: true }).unwrap();
    assert_eq!(log.rows.len(), 20);
    assert_eq!(log.metadata.device(), ah_core::DeviceIdentity::NONE);
    assert!(dir.path().join("pad_mm.txt.medians.txt").exists());
    let prov = std::fs::read_to_string(dir.path().join("pad_mm.txt.provenance.json")).unwrap();
    assert!(
        prov.contains("\"seed\": 0") && prov.contains("\"command_line\""),
        "{prov}"
    );
    let again = run(&args(&["--num-samples", "5"]), &out);
    assert!(again.status.success());
    assert!(
        stderr(&again).contains("0 inputs measured")
            && stderr(&again).contains("5 already in the log")
    );
}

#[test]
fn default_output_is_the_runtimes_log_path() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .args(args(&["--num-samples", "2"]))
        .env("XDG_CACHE_HOME", dir.path())
        .env_remove("AUTOHEURISTIC_LOG_PATH")
        .env_remove("TORCHINDUCTOR_AUTOHEURISTIC_LOG_PATH")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let want = dir
        .path()
        .join("autoheuristic")
        .join("non_cuda_device")
        .join("pad_mm.txt");
    assert_eq!(inputs(&want).len(), 2);
}

#[test]
fn a_kill_loses_at_most_the_input_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pad_mm.txt");
    let a = [
        "--name",
        "pad_mm",
        "--device",
        "cpu",
        "--max-dim",
        "128",
        "--shapes",
        "pytorch",
        "--num-reps",
        "2",
        "--num-samples",
        "1000",
        "-q",
    ];
    let mut child = bin().args(a).arg("--out").arg(&out).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = inputs(&out);
    eprintln!("inputs complete at the kill: {}", before.len());
    // Every input already written is complete: rows of an input go out in one write.
    assert!(before.iter().all(|(_, n)| *n == 4), "{before:?}");
    let o = run(&a, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let after = inputs(&out);
    assert_eq!(after.len(), 1000, "every sample once");
    assert!(after.iter().all(|(_, n)| *n == 4));
    assert_eq!(&after[..before.len()], &before[..], "nothing rewritten");
}

/// Starts a long collection, sends `signal` (by the `kill` command: no signal crate is a
/// dependency of the tests) once `min_inputs` inputs are in the log, and returns its output.
fn interrupt(a: &[&str], out: &Path, signal: &str, min_inputs: usize) -> Output {
    use std::time::{Duration, Instant};
    let child = bin()
        .args(a)
        .arg("--out")
        .arg(out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    // Whole lines only (a read may catch a write half done): 2 head lines, 4 rows an input.
    let lines = || std::fs::read(out).map_or(0, |b| b.iter().filter(|c| **c == b'\n').count());
    while lines() < 2 + 4 * min_inputs {
        assert!(Instant::now() < deadline, "no rows after 120 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    let sent = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .expect("the `kill` command");
    assert!(sent.success());
    let left = (deadline + Duration::from_secs(60)).saturating_duration_since(Instant::now());
    ah_test_support::wait_at_most(child, left, &format!("after SIG{signal}"))
}

#[test]
fn sigint_and_sigterm_end_the_session_with_its_summary_and_a_rerun_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pad_mm.txt");
    let a = args(&["--num-samples", "100000"]);
    let o = interrupt(&a, &out, "INT", 2);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(" inputs measured ("), "{err}");
    assert!(
        err.contains("interrupted by SIGINT: run the same command again to resume"),
        "{err}"
    );
    let logged = inputs(&out);
    assert!(
        logged.iter().all(|(_, n)| *n == 4),
        "only whole inputs: {logged:?}"
    );
    let session = &provenance(&out)["sessions"][0];
    assert_eq!(session["finished"], false);
    assert_eq!(session["summary"]["interrupted"], true);
    assert_eq!(session["summary"]["measured"], logged.len());
    assert!(session["summary"]["device_busy_share"].as_f64().unwrap() > 0.0);

    let o = interrupt(&a, &out, "TERM", logged.len() + 2);
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("interrupted by SIGTERM"),
        "{}",
        stderr(&o)
    );
    let after = inputs(&out);
    assert!(after.iter().all(|(_, n)| *n == 4), "{after:?}");
    assert_eq!(
        &after[..logged.len()],
        &logged[..],
        "resumed, nothing rewritten"
    );
    let session = &provenance(&out)["sessions"][1];
    assert_eq!(session["resumed_inputs"], logged.len());
    assert_eq!(session["repaired_bytes"], 0, "a stop tears nothing");
    assert_eq!(session["summary"]["interrupted"], true);
}

#[test]
fn a_torn_last_line_is_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pad_mm.txt");
    assert!(run(&args(&["--num-samples", "3"]), &out).status.success());
    let full = std::fs::read_to_string(&out).unwrap();
    std::fs::write(&out, &full[..full.len() - 7]).unwrap();
    let o = run(&args(&["--num-samples", "3"]), &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 inputs measured") && stderr(&o).contains("repaired"),
        "{}",
        stderr(&o)
    );
    // The cut input was measured again (new timings), the others kept as they were.
    let full_path = dir.path().join("full.txt");
    std::fs::write(&full_path, &full).unwrap();
    assert_eq!(inputs(&out), inputs(&full_path));
    let kept = full.lines().count() - 4;
    let now = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        now.lines().take(kept).collect::<Vec<_>>(),
        full.lines().take(kept).collect::<Vec<_>>()
    );
}

#[test]
fn shards_merge_into_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.txt");
    assert!(run(&args(&["--num-samples", "6"]), &whole).status.success());
    let mut parts = Vec::new();
    for i in 0..2 {
        let p = dir.path().join(format!("part{i}.txt"));
        let shard = format!("{i}/2");
        assert!(run(&args(&["--num-samples", "6", "--shard", &shard]), &p)
            .status
            .success());
        parts.push(p);
    }
    let merged = dir.path().join("merged.txt");
    let o = bin()
        .arg("merge")
        .args(&parts)
        .arg("-o")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let count = |p: &Path| {
        inputs(p)
            .into_iter()
            .map(|(k, _)| k)
            .fold(BTreeMap::new(), |mut m, k| {
                *m.entry(k).or_insert(0) += 1;
                m
            })
    };
    assert_eq!(count(&merged), count(&whole));
    assert!(dir.path().join("merged.txt.medians.txt").exists());
    assert!(stderr(&o).starts_with("merged 2 logs"), "{}", stderr(&o));
    // -q: the same log, no summary.
    let quiet = dir.path().join("quiet.txt");
    let o = bin()
        .args(["merge", "-q"])
        .args(&parts)
        .arg("-o")
        .arg(&quiet)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(
        std::fs::read(&quiet).unwrap(),
        std::fs::read(&merged).unwrap()
    );
}

#[test]
fn merge_refuses_logs_of_another_device() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.txt");
    assert!(run(&args(&["--num-samples", "2"]), &a).status.success());
    let b = dir.path().join("b.txt");
    let text = std::fs::read_to_string(&a).unwrap().replacen(
        "\"shared_memory\": 0",
        "\"shared_memory\": 232448",
        1,
    );
    std::fs::write(&b, text).unwrap();
    let out = dir.path().join("m.txt");
    let o = bin()
        .arg("merge")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_exit_2(&o, "b.txt: metadata line differs");
    assert!(!out.exists());
}

#[test]
fn a_locked_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pad_mm.txt");
    let _held = ah_collect::collect::lock_log(&out, true).unwrap();
    let o = run(&args(&["--num-samples", "2"]), &out);
    assert_exit_2(
        &o,
        "another process is collecting into or merging this file",
    );
}

#[test]
fn other_metadata_is_refused_and_the_file_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pad_mm.txt");
    let foreign = "{\"shared_memory\": 166912, \"device_capa\": [8, 0], \"name\": \"pad_mm\", \"numerical_features\": [\"m\"], \"categorical_features\": []}\nm,choice,feedback\n5,orig,1.0\n5,or";
    std::fs::write(&out, foreign).unwrap();
    let o = run(&args(&["--num-samples", "2"]), &out);
    assert_exit_2(&o, "InconsistentMetadata");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), foreign);
}

#[test]
fn bad_arguments_exit_2_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.txt");
    for (a, want) in [
        (
            vec!["--name", "pad_mm", "--device", "cpu", "--shard", "3/3"],
            "--shard `3/3`",
        ),
        (
            vec!["--name", "pad_mm", "--device", "cpu", "--max-dim", "1000"],
            "invalid value '1000' for '--max-dim <MAX_DIM>': give a power of two",
        ),
        (
            vec!["--name", "nope", "--device", "cpu"],
            "no runner `nope`",
        ),
        (vec!["--device", "cpu"], "give the runner with --name"),
        (
            vec!["--name", "pad_mm", "--device", "cpu", "--devices", "0"],
            "cannot be combined",
        ),
    ] {
        let o = run(&a, &out);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        assert!(
            stderr(&o).starts_with("error: ") && stderr(&o).contains(want),
            "{a:?}: {}",
            stderr(&o)
        );
    }
    assert!(!out.exists());
}

/// Issue 28: a long argument or path is quoted shortened (`ah_core::error::clip_to`,
/// `shown`), in refusals and in the summaries of a collection and a merge.
#[test]
fn long_arguments_and_paths_are_shortened_in_messages() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.txt");
    let long = "y".repeat(100_000);
    for (a, want) in [
        (
            vec!["--name", long.as_str(), "--device", "cpu"],
            "no runner `yyy",
        ),
        (
            vec![
                "--name",
                "pad_mm",
                "--device",
                "cpu",
                "--shard",
                long.as_str(),
            ],
            "--shard `yyy",
        ),
    ] {
        let o = run(&a, &out);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.starts_with("error: ") && err.contains(want), "{err}");
        assert!(err.contains("(99940 more characters)"), "{err}");
        assert!(err.len() < 600, "a message of {} bytes", err.len());
    }
    assert!(!out.exists());
    // A deep folder: the path is longer than a message quotes, each name short enough.
    let mut deep = dir.path().to_path_buf();
    for i in 0..8 {
        deep.push(format!("{i}{}", "d".repeat(40)));
    }
    std::fs::create_dir_all(&deep).unwrap();
    let log = deep.join("pad_mm.txt");
    let o = run(&args(&["--num-samples", "1"]), &log);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let summary = err.lines().last().unwrap();
    let shown = ah_core::error::shown(&log);
    assert!(shown.contains("characters)…"), "{shown}");
    assert!(
        summary.starts_with(&format!("{shown}: 1 inputs measured")),
        "{summary}"
    );
    let merged = deep.join("merged.txt");
    let o = bin()
        .arg("merge")
        .arg(&log)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!("rows into {}", ah_core::error::shown(&merged))),
        "{err}"
    );
}

#[test]
fn distinct_and_exclude_give_a_fresh_set_of_new_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.txt");
    let o = run(&args(&["--num-samples", "30", "--distinct", "-q"]), &train);
    assert!(o.status.success(), "{}", stderr(&o));
    let trained: Vec<String> = inputs(&train).into_iter().map(|(k, _)| k).collect();
    assert_eq!(trained.len(), 30);
    let unique: std::collections::BTreeSet<&String> = trained.iter().collect();
    assert_eq!(unique.len(), 30, "--distinct logs every input once");

    let fresh = dir.path().join("fresh.txt");
    let train_arg = train.to_str().unwrap();
    let o = run(
        &args(&["--num-samples", "10", "--exclude", train_arg]),
        &fresh,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("repeated or excluded draws skipped"));
    let got = inputs(&fresh);
    assert_eq!(got.len(), 10);
    assert!(got.iter().all(|(k, _)| !unique.contains(k)));
    let prov = std::fs::read_to_string(dir.path().join("fresh.txt.provenance.json")).unwrap();
    assert!(prov.contains("\"train.txt\""), "{prov}");

    // A log of another runner, or a missing one: exit 2 naming it, nothing written.
    let other = dir.path().join("mm.txt");
    std::fs::write(
        &other,
        "{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"mm\", \"numerical_features\": [\"m\"], \"categorical_features\": []}\nm,choice,feedback\n5,a,1.0\n",
    )
    .unwrap();
    let missing = dir.path().join("missing.txt");
    let out = dir.path().join("never.txt");
    for (bad, want) in [(&other, "a `mm` log"), (&missing, "missing.txt")] {
        let o = run(
            &args(&["--num-samples", "5", "--exclude", bad.to_str().unwrap()]),
            &out,
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).starts_with("error: ") && stderr(&o).contains(want),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists());
    }
}

#[test]
fn auto_falls_back_to_the_cpu_without_a_driver() {
    if ah_collect::backend::CudaBackend::device_count() > 0 {
        eprintln!("skipped: this machine has a GPU");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("auto.txt");
    let o = run(
        &[
            "--name",
            "pad_mm",
            "--max-dim",
            "64",
            "--shapes",
            "pytorch",
            "--num-samples",
            "2",
        ],
        &out,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("collecting on the CPU"),
        "{}",
        stderr(&o)
    );
    let cuda = run(
        &["--name", "pad_mm", "--device", "cuda", "--num-samples", "2"],
        &dir.path().join("c.txt"),
    );
    assert_eq!(cuda.status.code(), Some(2));
    assert!(
        stderr(&cuda).contains("no CUDA driver found"),
        "{}",
        stderr(&cuda)
    );
}

fn provenance(out: &Path) -> serde_json::Value {
    let p = out.with_file_name(format!(
        "{}.provenance.json",
        out.file_name().unwrap().to_string_lossy()
    ));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn real_shapes_are_recorded_and_resuming_with_others_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("real.txt");
    let real = [
        "--name",
        "pad_mm",
        "--device",
        "cpu",
        "--num-reps",
        "1",
        "--num-samples",
        "3",
    ];
    let o = run(&[&real[..], &["--shapes", "real"]].concat(), &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(inputs(&out).len(), 3);
    let p = provenance(&out);
    assert_eq!(p["shapes"], "real");
    let builtin = ah_collect::catalogue::Catalogue::builtin().unwrap();
    assert_eq!(p["catalogue_sha256"], builtin.sha256.as_str());

    // Another distribution, or another catalogue: exit 2 naming what to do; log untouched.
    let before = std::fs::read(&out).unwrap();
    let other = dir.path().join("other.toml");
    std::fs::write(&other, format!("{}\n", ah_collect::catalogue::BUILTIN_TEXT)).unwrap();
    for (extra, want) in [
        (vec!["--shapes", "pytorch"], "--shapes real"),
        (vec!["--shapes", "mix"], "--shapes real"),
        (
            vec!["--shapes", "real", "--catalogue", other.to_str().unwrap()],
            "resume with that --catalogue",
        ),
    ] {
        let o = run(&[&real[..], &extra[..]].concat(), &out);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert!(stderr(&o).contains(want), "{extra:?}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read(&out).unwrap(), before);
    // Without --shapes, a resume takes the recorded distribution.
    let o = run(&real, &out);
    assert!(
        stderr(&o).contains("3 already in the log"),
        "{}",
        stderr(&o)
    );

    // A log from before --shapes (no `shapes` in its sidecar) is `pytorch`.
    let old = dir.path().join("old.txt");
    let o = run(&args(&["--num-samples", "2"]), &old);
    assert!(o.status.success(), "{}", stderr(&o));
    let side = dir.path().join("old.txt.provenance.json");
    let mut p = provenance(&old);
    p.as_object_mut().unwrap().remove("shapes");
    std::fs::write(&side, p.to_string()).unwrap();
    let no_shapes = [&SMALL[..8], &["--num-samples", "2"][..]].concat();
    let o = run(&no_shapes, &old);
    assert!(
        stderr(&o).contains("2 already in the log"),
        "{}",
        stderr(&o)
    );
    let o = run(&[&no_shapes[..], &["--shapes", "real"][..]].concat(), &old);
    assert_exit_2(&o, "--shapes pytorch");
}

#[test]
fn shapes_errors_exit_2_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.txt");
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        ah_collect::catalogue::BUILTIN_TEXT.replacen("qkv = \"fused\"", "qkv = \"fuzed\"", 1),
    )
    .unwrap();
    let bad = bad.to_str().unwrap();
    for (a, want) in [
        (
            vec!["--name", "reduction", "--shapes", "real"],
            "--shapes real: `reduction` does not draw it",
        ),
        (
            vec!["--name", "inductor_mm", "--shapes", "real"],
            "--shapes real: `inductor_mm` does not draw it (pad_mm: pytorch, real or mix; inductor_mm: mix, decode, attention, tiny, tokens, windows, heads, pool, adapters, hires, serving, routers)",
        ),
        (
            vec!["--name", "pad_mm", "--shapes", "routers"],
            "--shapes routers is inductor_mm's",
        ),
        (
            vec!["--name", "pad_mm", "--shapes", "decode"],
            "--shapes decode is inductor_mm's",
        ),
        (
            vec!["--name", "pad_mm", "--shapes", "attention"],
            "--shapes attention is inductor_mm's",
        ),
        (
            vec![
                "--name",
                "inductor_mm",
                "--shapes",
                "decode",
                "--catalogue",
                bad,
            ],
            "--catalogue is pad_mm's option",
        ),
        (
            vec![
                "--name",
                "pad_mm",
                "--shapes",
                "pytorch",
                "--catalogue",
                bad,
            ],
            "not pytorch",
        ),
        (
            vec!["--name", "pad_mm", "--shapes", "real", "--catalogue", bad],
            "bad.toml: model #1 (`gpt2`): unknown variant `fuzed`",
        ),
        (
            vec!["--name", "pad_mm", "--catalogue", "/nonexistent.toml"],
            "/nonexistent.toml",
        ),
    ] {
        let o = run(&[&a[..], &["--device", "cpu"][..]].concat(), &out);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        assert!(
            stderr(&o).starts_with("error: ") && stderr(&o).contains(want),
            "{a:?}: {}",
            stderr(&o)
        );
    }
    assert!(!out.exists());
}

#[test]
fn long_reps_defaults_to_the_logs_protocol() {
    let dir = tempfile::tempdir().unwrap();
    // A new log: 1, but the CPU has no long rule, so every input gets --num-reps and the
    // log records that.
    let out = dir.path().join("new.txt");
    assert!(run(&args(&["--num-samples", "2"]), &out).status.success());
    assert_eq!(provenance(&out)["long_reps"], 2);
    assert!(inputs(&out).iter().all(|(_, n)| *n == 4));
    let o = run(&args(&["--num-samples", "2", "--long-reps", "3"]), &out);
    assert_exit_2(&o, "--long-reps 3 must be between 1 and --num-reps (2)");

    // A log from before --long-reps (no `long_reps` in its sidecar) measured every input
    // --num-reps times: a resume keeps that, and an explicit other --long-reps is refused
    // (on the CPU only one that is not 1..=num-reps: the library's tests, with a long rule,
    // refuse a valid one).
    let old = dir.path().join("old.txt");
    assert!(run(&args(&["--num-samples", "2"]), &old).status.success());
    let side = dir.path().join("old.txt.provenance.json");
    let mut p = provenance(&old);
    p.as_object_mut().unwrap().remove("long_reps");
    std::fs::write(&side, p.to_string()).unwrap();
    let before = std::fs::read(&old).unwrap();
    let o = run(&args(&["--num-samples", "3", "--long-reps", "3"]), &old);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&old).unwrap(), before, "nothing written");
    let o = run(&args(&["--num-samples", "3"]), &old);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(provenance(&old)["long_reps"], 2);
    assert_eq!(inputs(&old).len(), 3);
}

/// `--max-dim` bounds PyTorch's generator only: with the default `--shapes mix` (or `real`) it
/// could not bound the real-model dimensions, so it is refused (exit 2, the hint names
/// `--shapes pytorch`) rather than ignored for those inputs; nothing is written.
#[test]
fn max_dim_with_real_model_shapes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for shapes in [None, Some("mix"), Some("real")] {
        let out = dir.path().join("m.txt");
        let mut a = vec!["--name", "pad_mm", "--device", "cpu", "--max-dim", "64"];
        if let Some(s) = shapes {
            a.extend(["--shapes", s]);
        }
        a.extend(["--num-samples", "2"]);
        let o = run(&a, &out);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{shapes:?}: {err}");
        assert!(
            err.contains("--max-dim 64 bounds PyTorch's generator only"),
            "{err}"
        );
        assert!(err.contains("hint: add --shapes pytorch"), "{err}");
        assert!(!out.exists(), "{shapes:?}: wrote the log");
    }
}
