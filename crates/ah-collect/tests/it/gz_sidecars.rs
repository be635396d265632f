//! Sidecars kept gzip-compressed (`FILE.medians.txt.gz`, `FILE.extras.jsonl.gz`, as finished
//! logs in `data/` keep them), through the `ah-collect` binary on the CPU backend: a merge
//! reads its inputs' compressed medians; a collection or a merge that would write a plain
//! sidecar beside a compressed one is refused (exit 2, naming the file, saying to gunzip it)
//! and changes nothing.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{assert_exit_2, bin, stderr};

fn collect(out: &Path, samples: &str, shard: &str) -> Output {
    bin()
        .args(["--name", "pad_mm", "--device", "cpu", "--max-dim", "64"])
        .args(["--shapes", "pytorch", "--num-reps", "1", "--num-samples"])
        .args([samples, "--shard", shard])
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn merge(inputs: &[PathBuf], out: &Path) -> Output {
    bin()
        .args(["merge", "-q"])
        .args(inputs)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

/// Replaces the plain file `plain` by `plain.gz`, as `gzip -9 -n` would; returns its path.
fn gzip(plain: &Path) -> PathBuf {
    let gz = PathBuf::from(format!("{}.gz", plain.display()));
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&std::fs::read(plain).unwrap()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    std::fs::remove_file(plain).unwrap();
    gz
}

/// Two shards of one small collection, each with its medians sidecar.
fn shards(dir: &Path) -> Vec<PathBuf> {
    let mut parts = Vec::new();
    for i in 0..2 {
        let p = dir.join(format!("part{i}.txt"));
        let o = collect(&p, "6", &format!("{i}/2"));
        assert!(o.status.success(), "{}", stderr(&o));
        parts.push(p);
    }
    parts
}

#[test]
fn merge_reads_its_inputs_compressed_medians_as_the_plain_ones() {
    let dir = tempfile::tempdir().unwrap();
    let parts = shards(dir.path());
    let plain = dir.path().join("plain.txt");
    assert!(merge(&parts, &plain).status.success());
    gzip(&dir.path().join("part1.txt.medians.txt"));
    let mixed = dir.path().join("mixed.txt");
    let o = merge(&parts, &mixed);
    assert!(o.status.success(), "{}", stderr(&o));
    let med = |log: &str| std::fs::read(dir.path().join(format!("{log}.medians.txt"))).unwrap();
    assert_eq!(med("mixed.txt"), med("plain.txt"));
    assert_eq!(
        std::fs::read(&mixed).unwrap(),
        std::fs::read(&plain).unwrap()
    );
}

#[test]
fn an_input_with_both_a_plain_and_a_compressed_medians_sidecar_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let parts = shards(dir.path());
    let med = dir.path().join("part0.txt.medians.txt");
    let text = std::fs::read(&med).unwrap();
    gzip(&med);
    std::fs::write(&med, text).unwrap();
    let out = dir.path().join("out.txt");
    let o = merge(&parts, &out);
    assert_exit_2(&o, "part0.txt.medians.txt and ");
    assert_exit_2(&o, "part0.txt.medians.txt.gz both exist");
    assert!(!out.exists(), "no output");
}

#[test]
fn a_merge_onto_a_log_whose_medians_are_compressed_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let parts = shards(dir.path());
    let before = std::fs::read(&parts[0]).unwrap();
    let gz = gzip(&dir.path().join("part0.txt.medians.txt"));
    let o = merge(&parts, &parts[0]);
    assert_exit_2(
        &o,
        "part0.txt.medians.txt.gz: this log's sidecar is kept gzip-compressed",
    );
    assert_exit_2(&o, "hint: decompress it first (`gunzip ");
    assert_eq!(std::fs::read(&parts[0]).unwrap(), before);
    assert!(gz.exists() && !dir.path().join("part0.txt.medians.txt").exists());
}

#[test]
fn a_collection_beside_a_compressed_sidecar_is_refused_until_it_is_decompressed() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    assert!(collect(&log, "3", "0/1").status.success());
    let before = std::fs::read(&log).unwrap();
    let med = dir.path().join("log.txt.medians.txt");
    let med_text = std::fs::read(&med).unwrap();
    let gz = gzip(&med);
    let o = collect(&log, "5", "0/1");
    assert_exit_2(
        &o,
        "log.txt.medians.txt.gz: this log's sidecar is kept gzip-compressed",
    );
    assert_exit_2(&o, "would write ");
    assert_exit_2(&o, "`gunzip ");
    assert_eq!(std::fs::read(&log).unwrap(), before, "the log is kept");
    assert!(!med.exists(), "no plain sidecar beside the compressed one");
    // The extras sidecar is refused alike (pad_mm writes none; a compressed one is enough).
    std::fs::remove_file(&gz).unwrap();
    std::fs::write(&med, &med_text).unwrap();
    let extras = dir.path().join("log.txt.extras.jsonl");
    std::fs::write(&extras, "").unwrap();
    let extras_gz = gzip(&extras);
    let o = collect(&log, "5", "0/1");
    assert_exit_2(
        &o,
        "log.txt.extras.jsonl.gz: this log's sidecar is kept gzip-compressed",
    );
    assert_eq!(std::fs::read(&log).unwrap(), before, "the log is kept");
    assert_eq!(std::fs::read(&med).unwrap(), med_text, "the medians kept");
    // Decompressed (here: removed, as it was empty), the collection resumes.
    std::fs::remove_file(&extras_gz).unwrap();
    let o = collect(&log, "5", "0/1");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("2 inputs measured"), "{}", stderr(&o));
}
