//! The committed datasets (`data/pad_mm_h100.txt`, `data/pad_mm_cpu.txt`): PyTorch's format,
//! complete inputs, and exactly the inputs our generator draws for their seed, in order, so
//! anyone can re-derive (or extend, or re-time) them.

use std::path::PathBuf;

use ah_collect::collect::sample_rng;
use ah_collect::runners::{find, RunnerOptions};
use ah_collect::{BackendKind, Target};
use ah_core::DeviceIdentity;
use ah_log::{Log, ReadOptions};

use crate::common::log_inputs;

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data")).join(name)
}

fn check(
    file: &str,
    identity: DeviceIdentity,
    kind: BackendKind,
    max_power2: Option<u32>,
    n: usize,
) {
    let path = data(file);
    let log = Log::read(&path, ReadOptions { strict: true }).unwrap();
    let prov: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(data(&format!("{file}.provenance.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(log.metadata.device(), identity);
    assert_eq!(log.metadata_line, prov["metadata_line"].as_str().unwrap());
    assert_eq!(log.choices, ["orig", "pad"]);
    assert!(log
        .rows
        .iter()
        .all(|r| r.feedback.is_finite() && r.feedback > 0.0));
    let got = log_inputs(&log);
    assert_eq!(got.len(), n);
    assert!(
        got.iter().all(|(_, rows)| *rows == 6),
        "3 repetitions x 2 choices each"
    );
    // Re-draw every sample with the recorded seed and device memory: same inputs, same order.
    let total_memory = prov["sessions"][0]["devices"][0]["total_memory"]
        .as_u64()
        .unwrap();
    let seed = prov["seed"].as_u64().unwrap();
    let runner = find("pad_mm", &RunnerOptions { max_power2 }).unwrap();
    let target = Target {
        kind,
        total_memory,
        identity,
    };
    for (i, (key, _)) in got.iter().enumerate() {
        let drawn = runner
            .draw(&mut sample_rng(seed, i as u64), &target, 10_000)
            .unwrap();
        assert_eq!(&drawn.context.feature_values_csv(), key, "sample {i}");
    }
}

#[test]
fn h100_dataset_is_complete_and_reproducible() {
    check(
        "pad_mm_h100.txt",
        DeviceIdentity::H100,
        BackendKind::Cuda,
        Some(13),
        2000,
    );
    // Median-labelled sidecar (plain or .gz, as `data/` keeps it): same inputs.
    let med = ah_log::sidecar_to_read(&ah_log::medians_path(&data("pad_mm_h100.txt")))
        .unwrap()
        .expect("the shipped log's medians sidecar");
    let med = Log::read(med, ReadOptions { strict: true }).unwrap();
    assert_eq!(med.rows.len(), 12000);
}

#[test]
fn cpu_dataset_is_complete_and_reproducible() {
    check(
        "pad_mm_cpu.txt",
        DeviceIdentity::NONE,
        BackendKind::Cpu,
        None,
        400,
    );
}
