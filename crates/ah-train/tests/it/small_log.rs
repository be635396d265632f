//! Issue 3, item 6: on a small log (600 inputs of `pad_mm_a100`, fixed seed) PyTorch's rule
//! yields no heuristic; the default mode yields one that, on the other inputs (`--data`),
//! decides on at least a quarter, is harmfully wrong (> 10% slower) on at most 1% of all
//! inputs, and reaches at least 99.5% of the oracle when unsure means autotune.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ah_train::config::Overrides;
use ah_train::error::TrainError;
use ah_train::learner::Learner;
use ah_train::split::RandomState;
use ah_train::train::{train, CostAwareParams, Mode, TrainOptions};

const SAMPLE_SEED: u32 = 1;

/// Splits a log by input into `n` sampled inputs and the rest, both valid logs.
fn subsample(log: &Path, dir: &Path, n: usize, seed: u32) -> (PathBuf, PathBuf) {
    let text = std::fs::read_to_string(log).unwrap();
    let mut lines = text.lines();
    let head = format!("{}\n{}\n", lines.next().unwrap(), lines.next().unwrap());
    let mut order: Vec<&str> = Vec::new();
    let mut rows: HashMap<&str, Vec<&str>> = HashMap::new();
    for l in lines.filter(|l| !l.is_empty()) {
        let key = &l[..l.rfind(',').and_then(|i| l[..i].rfind(',')).unwrap()];
        rows.entry(key).or_insert_with(|| {
            order.push(key);
            Vec::new()
        });
        rows.get_mut(key).unwrap().push(l);
    }
    let perm = RandomState::new(seed).permutation(order.len());
    let mut chosen = vec![false; order.len()];
    for &i in &perm[..n] {
        chosen[i] = true;
    }
    let (mut small, mut rest) = (head.clone(), head);
    for (i, k) in order.iter().enumerate() {
        let dst = if chosen[i] { &mut small } else { &mut rest };
        for r in &rows[k] {
            dst.push_str(r);
            dst.push('\n');
        }
    }
    let (a, b) = (dir.join("small.txt"), dir.join("rest.txt"));
    std::fs::write(&a, small).unwrap();
    std::fs::write(&b, rest).unwrap();
    (a, b)
}

fn options(log: PathBuf, rest: PathBuf, mode: Mode) -> TrainOptions {
    TrainOptions {
        log,
        heuristic_name: "PadMMSmall".into(),
        data: vec![("rest".into(), rest)],
        learner: Learner::Cart,
        ranking: None,
        default_choice: None,
        seed: 42,
        split_file: None,
        mode,
        cost: CostAwareParams::default(),
        overrides: Overrides::default(),
        config_dir: PathBuf::from("."),
        extra_operations: vec![],
        command: "test".into(),
        range_guard: false,
        inf_unavailable: false,
        guard: ah_train::guard::GuardPolicy::BOX,
        category_guard: Vec::new(),
    }
}

#[test]
fn small_log_gets_a_useful_safe_heuristic() {
    let log =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/pytorch/pad_mm_a100.txt");
    if ah_test_support::skip_without(&log) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let seed = std::env::var("AH_SMALL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SAMPLE_SEED);
    let (small, rest) = subsample(&log, dir.path(), 600, seed);
    match train(
        &options(small.clone(), rest.clone(), Mode::Upstream),
        &|_| {},
    ) {
        Err(TrainError::NoModel(msg)) => {
            assert!(msg.contains("too many wrong predictions"), "{msg}")
        }
        other => panic!(
            "upstream was expected to give no model here: {:?}",
            other.map(|o| o.metrics)
        ),
    }
    let out = train(&options(small, rest, Mode::CostAware), &|_| {}).unwrap();
    let m = &out.metrics["rest"];
    eprintln!(
        "rest: total {} decided {:.3} wrong {} harmful {} pct_of_oracle {:.3} pct_of_oracle_autotune {:.3}",
        m.total, m.decided_share, m.wrong, m.harmful_wrong, m.pct_of_oracle, m.pct_of_oracle_autotune
    );
    assert!(m.total > 9000);
    assert!(m.decided_share >= 0.25, "{m:?}");
    assert!(m.harmful_wrong as f64 <= 0.01 * m.total as f64, "{m:?}");
    assert!(m.pct_of_oracle_autotune >= 99.5, "{m:?}");
}
