use std::cell::Cell;
use std::collections::HashMap;
use std::path::Path;

use super::*;
use crate::cache::DeviceFingerprint;
use ah_core::heuristic::{LearnedHeuristic, Prediction, UnsureKind};

/// Fake sub-kernels: fixed benchmark times (NaN: the benchmark fails), counters of runs
/// and benchmarks.
struct Fake {
    runs: Vec<Cell<u32>>,
    benches: Vec<Cell<u32>>,
}

impl Fake {
    fn new(n: usize) -> Self {
        Self {
            runs: (0..n).map(|_| Cell::new(0)).collect(),
            benches: (0..n).map(|_| Cell::new(0)).collect(),
        }
    }

    fn kernels<'a>(&'a self, times: &[f64], source: &str) -> Vec<SubKernel<'a>> {
        times
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let (runs, benches) = (&self.runs[i], &self.benches[i]);
                SubKernel::new(
                    format!("k{i}"),
                    source_hash(&[source, &format!("k{i}")]),
                    move || {
                        runs.set(runs.get() + 1);
                        Ok(())
                    },
                    move |rep| {
                        assert_eq!(rep, DEFAULT_REP_MS);
                        benches.set(benches.get() + 1);
                        if t.is_nan() {
                            Err("launch failed".into())
                        } else {
                            Ok(t)
                        }
                    },
                )
            })
            .collect()
    }

    fn total_benches(&self) -> u32 {
        self.benches.iter().map(Cell::get).sum()
    }
}

fn ctx(rows: i64, cols: i64) -> Context {
    let mut c = Context::new();
    c.add("rows", rows)
        .add("cols", cols)
        .add_categorical("op", "sum");
    c
}

fn mk<'a>(fake: &'a Fake, times: &[f64], source: &str, c: Context) -> MultiKernel<'a> {
    MultiKernel::new(
        "reduction",
        fake.kernels(times, source),
        c,
        DeviceIdentity::H100,
    )
    .unwrap()
}

fn config(vars: &[(&str, &str)]) -> MultiKernelConfig {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    MultiKernelConfig::from_vars(|k| map.get(k).cloned())
}

fn fingerprint(driver: &str) -> DeviceFingerprint {
    let mut f = DeviceFingerprint::new("NVIDIA H100 80GB HBM3", DeviceIdentity::H100);
    f.driver_version = driver.into();
    f
}

fn open(path: &Path) -> PickCache {
    PickCache::open(path, fingerprint("580")).unwrap()
}

#[test]
fn benchmarks_once_then_reuses_the_pick_and_the_cache_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    let cfg = config(&[]);
    let fake = Fake::new(3);
    let mut mk1 = mk(&fake, &[2.0, 1.0, 3.0], "src", ctx(4, 100));
    let mut cache = open(&path);
    let p = mk1.run(&cfg, None, Some(&mut cache)).unwrap().clone();
    assert_eq!(
        (p.index, p.choice.as_ref(), p.by),
        (1, "k1", PickedBy::Benchmark)
    );
    assert_eq!(p.timings_ms, Some(vec![2.0, 1.0, 3.0]));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    mk1.run(&cfg, None, None).unwrap();
    assert_eq!(
        fake.total_benches(),
        3,
        "benchmarked on the first call only"
    );
    assert_eq!(fake.runs[1].get(), 2);

    // A new call object and a freshly opened cache (another process): no benchmark.
    let fake2 = Fake::new(3);
    let mut mk2 = mk(&fake2, &[2.0, 1.0, 3.0], "src", ctx(4, 100));
    let p2 = mk2.run(&cfg, None, Some(&mut open(&path))).unwrap();
    assert_eq!((p2.index, p2.by), (1, PickedBy::Cache));
    assert_eq!(fake2.total_benches(), 0);
    assert_eq!(fake2.runs[1].get(), 1);
}

#[test]
fn key_changes_with_source_size_hints_and_order() {
    let fake = Fake::new(2);
    let base = mk(&fake, &[1.0, 2.0], "src", ctx(4, 100)).cache_key();
    assert_eq!(base, mk(&fake, &[1.0, 2.0], "src", ctx(4, 100)).cache_key());
    assert!(base
        .description
        .starts_with("multi_kernel/reduction|rows=4,cols=100,op=sum|k0#"));
    assert_ne!(
        base,
        mk(&fake, &[1.0, 2.0], "src v2", ctx(4, 100)).cache_key(),
        "source"
    );
    assert_ne!(
        base,
        mk(&fake, &[1.0, 2.0], "src", ctx(4, 101)).cache_key(),
        "size hints"
    );
    let mut ks = fake.kernels(&[1.0, 2.0], "src");
    ks.swap(0, 1);
    let swapped = MultiKernel::new("reduction", ks, ctx(4, 100), DeviceIdentity::H100).unwrap();
    assert_ne!(base, swapped.cache_key(), "order of sub-kernels");
}

#[test]
fn edited_source_or_other_device_misses_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    let cfg = config(&[]);
    let fake = Fake::new(2);
    mk(&fake, &[1.0, 2.0], "src", ctx(8, 8))
        .pick(&cfg, None, Some(&mut open(&path)))
        .unwrap();
    let fake2 = Fake::new(2);
    let mut edited = mk(&fake2, &[3.0, 2.0], "src // edited", ctx(8, 8));
    let p = edited.pick(&cfg, None, Some(&mut open(&path))).unwrap();
    assert_eq!((p.index, p.by), (1, PickedBy::Benchmark));
    assert_eq!(fake2.total_benches(), 2);
    assert_eq!(open(&path).len(), 2);

    // Same kernels and shape under another driver: the entry is stale, ignored, replaced.
    let fake3 = Fake::new(2);
    let mut newer = PickCache::open(&path, fingerprint("590")).unwrap();
    let mut again = mk(&fake3, &[5.0, 4.0], "src", ctx(8, 8));
    let p = again.pick(&cfg, None, Some(&mut newer)).unwrap();
    assert_eq!((p.index, p.by), (1, PickedBy::Benchmark));
    assert!(
        p.warnings[0].contains("made under another guard"),
        "{:?}",
        p.warnings
    );
    assert_eq!(
        PickCache::open(&path, fingerprint("590"))
            .unwrap()
            .get(&again.cache_key()),
        Some("k1".into())
    );
}

#[test]
fn disabled_cache_neither_reads_nor_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    let cfg = config(&[("AUTOHEURISTIC_DISABLE_CACHE", "1")]);
    assert!(cfg.runtime.disable_cache);
    let fake = Fake::new(2);
    mk(&fake, &[1.0, 2.0], "src", ctx(1, 1))
        .pick(&cfg, None, Some(&mut open(&path)))
        .unwrap();
    assert!(!path.exists());
    let key = mk(&fake, &[1.0, 2.0], "src", ctx(1, 1)).cache_key();
    open(&path).put(&key, "k1").unwrap();
    let p = mk(&fake, &[1.0, 2.0], "src", ctx(1, 1))
        .pick(&cfg, None, Some(&mut open(&path)))
        .unwrap()
        .clone();
    assert_eq!((p.index, p.by), (0, PickedBy::Benchmark), "cache not read");
    let p = mk(&fake, &[1.0, 2.0], "src", ctx(1, 1))
        .pick(&config(&[]), None, Some(&mut open(&path)))
        .unwrap()
        .clone();
    assert_eq!((p.index, p.by), (1, PickedBy::Cache), "read when enabled");
}

#[test]
fn corrupt_cache_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    std::fs::write(&path, b"{not json").unwrap();
    let err = PickCache::open(&path, fingerprint("580")).unwrap_err();
    assert!(err.to_string().contains("not a pick cache"), "{err}");
    // The caller decides without the cache; the file stays as it was.
    let fake = Fake::new(2);
    let p = mk(&fake, &[2.0, 1.0], "src", ctx(1, 1))
        .pick(&config(&[]), None, None)
        .unwrap()
        .clone();
    assert_eq!((p.index, p.by), (1, PickedBy::Benchmark));
    assert_eq!(std::fs::read(&path).unwrap(), b"{not json");
}

#[test]
fn forced_choice_by_number_and_name() {
    let fake = Fake::new(2);
    for (v, want) in [("2", 0), ("3", 1), ("k1", 1)] {
        let cfg = config(&[(ENV_FORCE, v)]);
        let p = mk(&fake, &[1.0, 2.0], "s", ctx(1, 1))
            .pick(&cfg, None, None)
            .unwrap()
            .clone();
        assert_eq!((p.index, p.by), (want, PickedBy::Forced), "{v}");
    }
    assert_eq!(fake.total_benches(), 0);
    for v in ["0", "1", ""] {
        assert_eq!(config(&[(ENV_FORCE, v)]).forced, None, "{v}");
    }
    // Inductor's variable when ours is unset; ours wins when both are set.
    let inductor = config(&[(ENV_FORCE_INDUCTOR, "3")]);
    let want = (Forced::Index(1), "TORCHINDUCTOR_MULTI_KERNEL=3".to_string());
    assert_eq!(inductor.forced, Some(want));
    let both = config(&[(ENV_FORCE_INDUCTOR, "3"), (ENV_FORCE, "2")]);
    let want = (Forced::Index(0), "AUTOHEURISTIC_MULTI_KERNEL=2".to_string());
    assert_eq!(both.forced, Some(want));
    let err = mk(&fake, &[1.0, 2.0], "s", ctx(1, 1))
        .pick(&config(&[(ENV_FORCE, "4")]), None, None)
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("AUTOHEURISTIC_MULTI_KERNEL=4") && msg.contains("k0, k1"),
        "{msg}"
    );
    assert!(matches!(
        mk(&fake, &[1.0], "s", ctx(1, 1)).pick(&config(&[(ENV_FORCE, "nope")]), None, None),
        Err(MultiKernelError::ForcedOutOfRange { .. })
    ));
}

#[test]
fn failing_sub_kernels_are_inf_and_all_failing_is_an_error() {
    let fake = Fake::new(3);
    let cfg = config(&[]);
    let p = mk(&fake, &[f64::NAN, 5.0, 4.0], "s", ctx(1, 1))
        .pick(&cfg, None, None)
        .unwrap()
        .clone();
    assert_eq!(p.index, 2);
    assert_eq!(p.timings_ms.unwrap()[0], f64::INFINITY);
    let err = mk(&fake, &[f64::NAN, f64::NAN], "s", ctx(1, 1))
        .pick(&cfg, None, None)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("k0: launch failed; k1: launch failed"),
        "{err}"
    );
    let p = mk(&fake, &[3.0, 3.0, 3.0], "s", ctx(1, 1))
        .pick(&cfg, None, None)
        .unwrap()
        .clone();
    assert_eq!(p.index, 0, "ties go to the first");
    assert!(matches!(
        MultiKernel::new("r", vec![], ctx(1, 1), DeviceIdentity::H100),
        Err(MultiKernelError::NoSubKernels(_))
    ));
    let dup = vec![
        SubKernel::new("a", "h", || Ok(()), |_| Ok(1.0)),
        SubKernel::new("a", "h", || Ok(()), |_| Ok(1.0)),
    ];
    assert!(matches!(
        MultiKernel::new("r", dup, ctx(1, 1), DeviceIdentity::H100),
        Err(MultiKernelError::DuplicateName { .. })
    ));
}

#[test]
fn run_reports_the_sub_kernels_error() {
    let mut mk1 = MultiKernel::new(
        "reduction",
        vec![SubKernel::new(
            "only",
            "h",
            || Err("boom".into()),
            |_| Ok(1.0),
        )],
        ctx(1, 1),
        DeviceIdentity::H100,
    )
    .unwrap();
    let err = mk1.run(&config(&[]), None, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "multi-kernel `reduction`: sub-kernel `only` failed: boom"
    );
}

/// A heuristic that picks by `cols`: k1 below 1000, "k9" (not a sub-kernel) below 5000,
/// unsure (confidence 0.5) above.
struct ByCols;
static CHOICES: [&str; 3] = ["k0", "k1", "k9"];
impl LearnedHeuristic for ByCols {
    fn name(&self) -> &'static str {
        "reduction"
    }
    fn heuristic_name(&self) -> &'static str {
        "ReductionTest"
    }
    fn choices(&self) -> &'static [&'static str] {
        &CHOICES
    }
    fn device(&self) -> DeviceIdentity {
        DeviceIdentity::H100
    }
    fn confidence_threshold(&self) -> f64 {
        0.5
    }
    fn predict(&self, context: &Context, _choice: Option<usize>) -> Prediction {
        match context.get("cols").and_then(|v| v.as_f64()) {
            None => Prediction::Unsure(UnsureKind::MissingFeature("cols")),
            Some(c) if c < 1000.0 => Prediction::Distribution(&[(0.9, 1), (0.1, 0)]),
            Some(c) if c < 5000.0 => Prediction::Distribution(&[(0.95, 2)]),
            Some(_) => Prediction::Distribution(&[(0.5, 0), (0.5, 1)]),
        }
    }
}
static BY_COLS: ByCols = ByCols;

#[test]
fn use_mode_asks_the_heuristic_and_falls_back_when_unsure() {
    let mut registry = Registry::new();
    registry.register(&BY_COLS);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("picks.json");
    let use_cfg = config(&[("AUTOHEURISTIC_USE", "pad_mm,reduction")]);
    let fake = Fake::new(2);

    // Sure: no benchmark, no cache file.
    let p = mk(&fake, &[1.0, 2.0], "s", ctx(4, 100))
        .run(&use_cfg, Some(&registry), Some(&mut open(&path)))
        .unwrap()
        .clone();
    assert_eq!((p.index, p.by, p.unsure), (1, PickedBy::Heuristic, None));
    assert_eq!(fake.total_benches(), 0);
    assert!(!path.exists());

    // Unsure (low confidence): benchmark, store, and say why.
    let p = mk(&fake, &[1.0, 2.0], "s", ctx(4, 9000))
        .run(&use_cfg, Some(&registry), Some(&mut open(&path)))
        .unwrap()
        .clone();
    assert_eq!((p.index, p.by), (0, PickedBy::Benchmark));
    assert_eq!(
        p.unsure,
        Some(UnsureReason::LowConfidence { confidence: 0.5 })
    );
    assert_eq!(open(&path).len(), 1);
    // ... and the next process takes the cached pick.
    let p = mk(&fake, &[1.0, 2.0], "s", ctx(4, 9000))
        .pick(&use_cfg, Some(&registry), Some(&mut open(&path)))
        .unwrap()
        .clone();
    assert_eq!(p.by, PickedBy::Cache);

    // A sure answer that is not one of the sub-kernels ("k9") falls back too.
    let p = mk(&fake, &[1.0, 2.0], "s", ctx(4, 2000))
        .pick(&use_cfg, Some(&registry), None)
        .unwrap()
        .clone();
    assert_eq!(
        (p.by, p.unsure),
        (PickedBy::Benchmark, Some(UnsureReason::NotInChoices))
    );

    // Not in use mode, or another device: the heuristic is not asked.
    let p = mk(&fake, &[1.0, 2.0], "s", ctx(4, 100))
        .pick(&config(&[]), Some(&registry), None)
        .unwrap()
        .clone();
    assert_eq!((p.by, p.unsure), (PickedBy::Benchmark, None));
    let a100 = MultiKernel::new(
        "reduction",
        fake.kernels(&[1.0, 2.0], "s"),
        ctx(4, 100),
        DeviceIdentity::A100,
    )
    .unwrap();
    assert_eq!(
        a100.ask_heuristic(&registry),
        Err(UnsureReason::NoHeuristic)
    );
}
