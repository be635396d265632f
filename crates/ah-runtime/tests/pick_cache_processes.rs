//! Several processes share one pick cache: 8 copies of this test binary, started at once, each
//! autotune 100 inputs that no heuristic decides, through `AutoHeuristic` on the same cache
//! file; afterwards every one of the 800 picks is in the file.
//!
//! The test binary runs itself as the worker: with `AH_PICK_CACHE_WORKER` set, the test
//! [`eight_processes_share_one_pick_cache`] does one worker's job instead of starting workers.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ah_core::Context;
use ah_runtime::cache::CacheKey;
use ah_runtime::{AutoHeuristic, Config, DeviceInfo, PickCache, PickSource};

const WORKERS: u64 = 8;
const INPUTS: u64 = 100;
const WORKER_VAR: &str = "AH_PICK_CACHE_WORKER";
const CACHE_VAR: &str = "AH_PICK_CACHE_FILE";

fn choices() -> Vec<String> {
    vec!["a".into(), "b".into(), "c".into()]
}

fn context(worker: u64, input: u64) -> Context {
    let mut c = Context::new();
    c.add("worker", worker as i64).add("input", input as i64);
    c
}

/// The choice the fake benchmark makes fastest for an input.
fn fastest(worker: u64, input: u64) -> &'static str {
    ["a", "b", "c"][((worker * 7 + input) % 3) as usize]
}

fn config(cache: &Path) -> Config {
    let mut cfg = Config::from_vars(|_| None);
    cfg.cache_path = Some(cache.to_path_buf());
    cfg
}

fn work(worker: u64, cache: &Path) {
    let cfg = config(cache);
    for input in 0..INPUTS {
        let best = fastest(worker, input);
        let mut ah = AutoHeuristic::builder("shared", choices(), || "a".into())
            .context(context(worker, input))
            .feedback(move |c: &str| if c == best { 1.0 } else { 2.0 })
            .config(cfg.clone())
            .device(DeviceInfo::none())
            .build()
            .unwrap();
        let pick = ah.get_choice_or_autotune();
        assert_eq!(pick.source, PickSource::Autotuned, "{worker}/{input}");
        assert_eq!(pick.choice, best);
        let w = ah.take_warnings();
        assert!(w.is_empty(), "{w:?}");
    }
}

#[test]
fn eight_processes_share_one_pick_cache() {
    if let (Ok(worker), Ok(cache)) = (std::env::var(WORKER_VAR), std::env::var(CACHE_VAR)) {
        work(worker.parse().unwrap(), Path::new(&cache));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache: PathBuf = dir.path().join("picks.json");
    let me = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..WORKERS)
        .map(|w| {
            Command::new(&me)
                .args([
                    "--exact",
                    "eight_processes_share_one_pick_cache",
                    "--nocapture",
                ])
                .env(WORKER_VAR, w.to_string())
                .env(CACHE_VAR, &cache)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (w, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "worker {w}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let cached = PickCache::open(&cache, DeviceInfo::none().fingerprint()).unwrap();
    assert!(cached.warnings().is_empty(), "{:?}", cached.warnings());
    let mut lost = Vec::new();
    for w in 0..WORKERS {
        for i in 0..INPUTS {
            let key = CacheKey::new("shared", &context(w, i), &choices());
            if cached.get(&key).as_deref() != Some(fastest(w, i)) {
                lost.push((w, i));
            }
        }
    }
    let n = lost.len();
    lost.truncate(20);
    assert_eq!(n, 0, "{n} picks lost, the first (worker, input): {lost:?}");
    assert_eq!(cached.len() as u64, WORKERS * INPUTS);
}
