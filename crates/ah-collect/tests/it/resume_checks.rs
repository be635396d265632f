//! Hostile input, round two (issue 28), through the `ah-collect` binary on the CPU backend:
//! what a resume checks before it appends (the header exactly, a cut head, a cut medians
//! sidecar, a torn row), which file a lock identifies (hard and symbolic links), paths that
//! are not regular files or whose names do not fit, a huge `--num-samples`, signals before
//! measuring starts, bounded messages. Every refusal exits 2 naming the file (and the line)
//! with what to do, and leaves the files as they were.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use ah_test_support::wait_at_most;

use crate::common::{assert_exit_2, bin, stderr};

/// A small pad_mm collection on the CPU, one repetition per input.
fn collect_cmd(out: &Path, samples: &str) -> Command {
    let mut c = bin();
    c.args([
        "--name",
        "pad_mm",
        "--device",
        "cpu",
        "--max-dim",
        "64",
        "--shapes",
        "pytorch",
        "--num-reps",
        "1",
        "--num-samples",
        samples,
    ])
    .arg("--out")
    .arg(out);
    c
}

fn collect(out: &Path, samples: u64) -> Output {
    collect_cmd(out, &samples.to_string()).output().unwrap()
}

/// Rows per input (runs of equal feature values) of a log, in file order.
fn inputs(path: &Path) -> Vec<(String, usize)> {
    crate::common::read_inputs(path, ah_log::ReadOptions { strict: true })
}

fn sorted_keys(path: &Path) -> Vec<String> {
    let mut k: Vec<String> = inputs(path).into_iter().map(|(k, _)| k).collect();
    k.sort();
    k
}

#[test]
fn a_header_in_another_column_order_is_refused_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    assert!(collect(&log, 3).status.success());
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut header: Vec<&str> = lines[1].split(',').collect();
    header.swap(0, 1);
    lines[1] = header.join(",");
    let permuted = lines.join("\n") + "\n";
    std::fs::write(&log, &permuted).unwrap();
    let medians = std::fs::read(dir.path().join("log.txt.medians.txt")).unwrap();
    let o = collect(&log, 5);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("log.txt:2: the header does not match"),
        "{err}"
    );
    assert!(err.contains("the same columns in another order"), "{err}");
    assert!(err.contains("\nhint: "), "{err}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), permuted);
    assert_eq!(
        std::fs::read(dir.path().join("log.txt.medians.txt")).unwrap(),
        medians
    );
    // The medians sidecar's header is checked as well, before anything is cut.
    std::fs::write(&log, &text).unwrap();
    let med = dir.path().join("log.txt.medians.txt");
    let med_text = String::from_utf8(medians).unwrap();
    let swapped = med_text.replacen(&text.lines().nth(1).unwrap().to_string(), &lines[1], 1);
    std::fs::write(&med, &swapped).unwrap();
    let o = collect(&log, 5);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("log.txt.medians.txt:2: "),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), text);
}

#[test]
fn a_log_cut_inside_its_head_is_completed_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.txt");
    assert!(collect(&whole, 2).status.success());
    let text = std::fs::read_to_string(&whole).unwrap();
    let head_end = text.match_indices('\n').nth(1).unwrap().0 + 1;
    let first_end = text.find('\n').unwrap() + 1;
    for cut in [10, first_end - 1, first_end, first_end + 7, head_end - 1] {
        let log = dir.path().join(format!("cut{cut}.txt"));
        std::fs::write(&log, &text[..cut]).unwrap();
        let o = collect(&log, 2);
        assert!(o.status.success(), "cut at {cut}: {}", stderr(&o));
        let now = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            &now[..head_end],
            &text[..head_end],
            "cut at {cut}: the head"
        );
        assert_eq!(sorted_keys(&log), sorted_keys(&whole), "cut at {cut}");
    }
}

#[test]
fn a_cut_medians_sidecar_is_refilled_and_a_missing_one_stays_missing() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    let med = dir.path().join("log.txt.medians.txt");
    assert!(collect(&log, 5).status.success());
    let before = std::fs::read(&log).unwrap();
    let text = std::fs::read_to_string(&med).unwrap();
    let keep: String = text.split_inclusive('\n').take(4).collect();
    std::fs::write(&med, keep).unwrap();
    let o = collect(&log, 5);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("4 inputs of the log measured again for its medians sidecar"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(&log).unwrap(),
        before,
        "the log is not touched"
    );
    assert_eq!(sorted_keys(&med), sorted_keys(&log));
    // Cut to nothing: refilled whole.
    std::fs::write(&med, "").unwrap();
    assert!(collect(&log, 5).status.success());
    assert_eq!(sorted_keys(&med), sorted_keys(&log));
    // Whole now: nothing more is measured.
    let o = collect(&log, 5);
    assert!(stderr(&o).contains("0 inputs measured"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("measured again"), "{}", stderr(&o));
    // Removed (a log with rows and no sidecar, as PyTorch's): it gets none, rather than one
    // that would hold only the inputs measured from now on.
    std::fs::remove_file(&med).unwrap();
    let o = collect(&log, 6);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 inputs measured"), "{}", stderr(&o));
    assert!(!med.exists());
}

#[test]
fn a_torn_row_of_a_one_repetition_input_is_measured_again() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    assert!(collect(&log, 4).status.success());
    let text = std::fs::read_to_string(&log).unwrap();
    // The last row (`pad` of the last input) cut inside its time: `orig` alone must not
    // count as the whole input.
    for cut in [3, 12, text.lines().last().unwrap().len() + 1] {
        std::fs::write(&log, &text[..text.len() - cut]).unwrap();
        let o = collect(&log, 4);
        assert!(o.status.success(), "{}", stderr(&o));
        let got = inputs(&log);
        assert_eq!(got.len(), 4, "cut {cut}: {got:?}");
        assert!(got.iter().all(|(_, n)| *n == 2), "cut {cut}: {got:?}");
    }
}

#[test]
fn two_names_of_one_file_never_collect_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    assert!(collect(&log, 1).status.success());
    let hard = dir.path().join("hard.txt");
    std::fs::hard_link(&log, &hard).unwrap();
    let sym = dir.path().join("sym.txt");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&log, &sym).unwrap();
    let mut child = collect_cmd(&log, "1000000000")
        .arg("-q")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::fs::read_to_string(&log).map_or(0, |t| t.lines().count()) < 10 {
        assert!(started.elapsed() < Duration::from_secs(60), "no rows");
        std::thread::sleep(Duration::from_millis(20));
    }
    for other in [&hard, &sym] {
        let o = collect(other, 1_000_000_000);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("another process is collecting into or merging this file"),
            "{}",
            stderr(&o)
        );
        let o = bin()
            .arg("merge")
            .arg(other)
            .arg("-o")
            .arg(other)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // One collector wrote: whole inputs, exactly the first samples of the seed, once each.
    let got = inputs(&log);
    assert!(got.iter().all(|(_, n)| *n == 2), "{got:?}");
    let reference = dir.path().join("reference.txt");
    assert!(collect(&reference, got.len() as u64).status.success());
    assert_eq!(sorted_keys(&log), sorted_keys(&reference));
}

#[cfg(unix)]
#[test]
fn fifos_and_devices_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.txt");
    if ah_test_support::skip_without_fifo(&fifo) {
        return;
    }
    let sidecar = dir.path().join("log.txt.medians.txt");
    assert!(!ah_test_support::skip_without_fifo(&sidecar));
    let log = dir.path().join("log.txt");
    for (out, want) in [
        (
            fifo.as_path(),
            "fifo.txt: a FIFO (named pipe), not a regular file",
        ),
        (log.as_path(), "log.txt.medians.txt: a FIFO (named pipe)"),
        (
            Path::new("/dev/null"),
            "/dev/null: a device, not a regular file",
        ),
        (dir.path(), "a folder, not a regular file"),
    ] {
        let child = collect_cmd(out, "2")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = wait_at_most(child, Duration::from_secs(20), &format!("--out {out:?}"));
        assert_eq!(o.status.code(), Some(2), "{out:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
    assert!(!log.exists(), "nothing written next to a refused sidecar");
    let child = bin()
        .arg("merge")
        .arg(&fifo)
        .arg("-o")
        .arg(dir.path().join("m.txt"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_at_most(child, Duration::from_secs(20), "merge of a FIFO");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn a_name_too_long_for_a_sidecar_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    // The log's name fits (245 bytes); `.provenance.json` and `.medians.txt` do not.
    let log = dir.path().join(format!("{}.txt", "x".repeat(241)));
    let o = collect(&log, 2);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("file name longer than 255 bytes"), "{err}");
    assert!(
        err.contains("\nhint: a name in the path is too long"),
        "{err}"
    );
    assert!(err.len() < 1000, "the path is shortened: {err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

/// Memory does not grow with --num-samples: samples are drawn as they are measured.
#[cfg(target_os = "linux")]
#[test]
fn a_huge_num_samples_measures_at_once_in_little_memory() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    for extra in [&[][..], &["--distinct"][..]] {
        let _ = std::fs::remove_file(&log);
        let child = collect_cmd(&log, "18000000000000000000")
            .args(extra)
            .arg("-q")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while std::fs::read_to_string(&log).map_or(0, |t| t.lines().count()) < 12 {
            assert!(started.elapsed() < Duration::from_secs(60), "no rows");
            std::thread::sleep(Duration::from_millis(20));
        }
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        let peak_kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        assert!(
            peak_kb < 200_000,
            "{peak_kb} kB at the first rows ({extra:?})"
        );
        let sent = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let o = wait_at_most(child, Duration::from_secs(60), "after SIGTERM");
        assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
        assert!(inputs(&log).iter().all(|(_, n)| *n == 2));
    }
}

/// Before measuring starts (here: reading an --exclude log from a FIFO nobody writes), a
/// signal ends the process at once: there is nothing to finish.
#[cfg(unix)]
#[test]
fn a_signal_before_measuring_ends_the_process_at_once() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("exclude.txt");
    if ah_test_support::skip_without_fifo(&fifo) {
        return;
    }
    let child = collect_cmd(&dir.path().join("log.txt"), "2")
        .arg("--exclude")
        .arg(&fifo)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let o = wait_at_most(child, Duration::from_secs(20), "after SIGTERM");
    assert_eq!(o.status.signal(), Some(15), "{:?} {}", o.status, stderr(&o));
}

#[test]
fn merge_keeps_a_last_row_without_its_newline() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    assert!(collect(&log, 3).status.success());
    let text = std::fs::read_to_string(&log).unwrap();
    let bare = dir.path().join("bare.txt");
    std::fs::write(&bare, text.trim_end_matches('\n')).unwrap();
    let out = dir.path().join("m.txt");
    let o = bin()
        .arg("merge")
        .arg(&bare)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("torn"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
    // A mistyped input: refused, and no lock sidecar is left for it.
    let o = bin()
        .arg("merge")
        .arg(dir.path().join("nope.txt"))
        .arg("-o")
        .arg(dir.path().join("m2.txt"))
        .output()
        .unwrap();
    assert_exit_2(&o, "nope.txt: No such file");
    assert!(!dir.path().join("nope.txt.lock").exists());
    assert!(!dir.path().join("m2.txt.lock").exists());
}

#[test]
fn a_message_about_a_huge_metadata_line_is_short() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("wide.txt");
    let names: Vec<String> = (0..300_000).map(|i| format!("\"f{i}\"")).collect();
    let md = format!(
        "{{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"pad_mm\", \"numerical_features\": [{}], \"categorical_features\": []}}\n",
        names.join(", ")
    );
    std::fs::write(&log, &md).unwrap();
    let o = collect(&log, 2);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("InconsistentMetadata"),
        "{}",
        &err[..500.min(err.len())]
    );
    assert!(err.len() < 3000, "a {} byte message", err.len());
    assert_eq!(std::fs::read_to_string(&log).unwrap(), md);
}
