use super::*;
use ah_core::heuristic::{LearnedHeuristic, Prediction, UnsureKind};
use ah_core::metadata::DeviceIdentity;
use ah_core::value::Value;
use ah_log::{Log, ReadOptions};
use std::cell::RefCell;

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

fn choices(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn config_from_vars_like_pytorch() {
    let c = Config::from_vars(vars(&[("HOME", "/home/u")]));
    assert!(c.use_enabled("mixed_mm"), "PyTorch's default");
    assert!(!c.use_enabled("pad_mm"));
    assert!(!c.collect_enabled("pad_mm"));
    assert_eq!(c.cache_dir, PathBuf::from("/home/u/.cache"));
    assert!(!c.disable_cache);
    let c = Config::from_vars(vars(&[
        ("AUTOHEURISTIC_COLLECT", "pad_mm,mm"),
        ("AUTOHEURISTIC_USE", "pad_mm, mm"),
        ("TORCHINDUCTOR_AUTOHEURISTIC_USE", "mixed_mm"),
        ("TORCHINDUCTOR_AUTOHEURISTIC_LOG_PATH", "/tmp/x.txt"),
        ("TORCHINDUCTOR_AUTOHEURISTIC_DISABLE_CACHE", "1"),
        ("XDG_CACHE_HOME", "/xdg"),
        ("HOME", "/home/u"),
    ]));
    assert!(c.collect_enabled("pad_mm") && c.collect_enabled("mm"));
    assert!(!c.collect_enabled("pad"));
    assert!(c.use_enabled("pad_mm"));
    assert!(!c.use_enabled("mm"), "no trimming: ` mm` is not `mm`");
    assert!(!c.use_enabled("mixed_mm"), "the unprefixed name wins");
    assert!(c.run_enabled("mm"));
    assert_eq!(
        c.log_path_for("pad_mm", &DeviceInfo::none()),
        PathBuf::from("/tmp/x.txt")
    );
    assert!(c.disable_cache);
    assert_eq!(
        c.pick_cache_path(),
        PathBuf::from("/xdg/autoheuristic/pick_cache.json")
    );
    let c = Config::from_vars(vars(&[
        ("XDG_CACHE_HOME", "/xdg"),
        ("AUTOHEURISTIC_LOG_PATH", "DEFAULT"),
    ]));
    assert_eq!(
        c.log_path_for(
            "pad_mm",
            &DeviceInfo::new(DeviceIdentity::H100, "NVIDIA H100 80GB HBM3")
        ),
        PathBuf::from("/xdg/autoheuristic/NVIDIA_H100_80GB_HBM3/pad_mm.txt")
    );
    assert_eq!(
        c.log_path_for("mm", &DeviceInfo::none()),
        PathBuf::from("/xdg/autoheuristic/non_cuda_device/mm.txt")
    );
    let c = Config::from_vars(vars(&[("AUTOHEURISTIC_USE", "")]));
    assert!(!c.use_enabled("mixed_mm"));
}

fn config(dir: &std::path::Path, collect: &str, use_list: &str) -> Config {
    Config {
        collect: collect.into(),
        use_list: use_list.into(),
        log_path: "DEFAULT".into(),
        cache_dir: dir.to_path_buf(),
        disable_cache: false,
        cache_path: None,
    }
}

fn fa_context() -> Context {
    let mut c = Context::new();
    c.add("fa", 5i64);
    c
}

/// The spec's unit test: collect `fa=5`, choices a/b/c with feedback 1/2/3.
#[test]
fn collect_mode_writes_the_spec_lines() {
    let dir = tempfile::tempdir().unwrap();
    let times = BTreeMap::from([("a", 1.0), ("b", 2.0), ("c", 3.0)]);
    let ah = AutoHeuristic::builder("test", choices(&["a", "b", "c"]), || "fallback".into())
        .feedback(|c| times[c])
        .context(fa_context())
        .config(config(dir.path(), "test", ""))
        .device(DeviceInfo::new(
            DeviceIdentity::A100,
            "NVIDIA A100-SXM4-80GB",
        ))
        .build()
        .unwrap();
    let path = dir
        .path()
        .join("autoheuristic/NVIDIA_A100-SXM4-80GB/test.txt");
    assert_eq!(ah.log_path(), Some(path.as_path()));
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[0].contains(r#""numerical_features": ["fa"], "categorical_features": []"#));
    assert_eq!(
        &lines[1..],
        ["fa,choice,feedback", "5,a,1.0", "5,b,2.0", "5,c,3.0"]
    );
    assert_eq!(ah.get_collected_feedback("b"), Some(2.0));
    assert_eq!(ah.get_collected_feedback("d"), None);
    assert_eq!(
        ah.get_choice(),
        "fallback",
        "collect-only mode returns the fallback"
    );
    // A second collection appends; other metadata is refused.
    AutoHeuristic::builder("test", choices(&["a"]), || "f".into())
        .feedback(|_| 4.0)
        .context(fa_context())
        .config(config(dir.path(), "test", ""))
        .device(DeviceInfo::new(
            DeviceIdentity::A100,
            "NVIDIA A100-SXM4-80GB",
        ))
        .build()
        .unwrap();
    let log = Log::read(&path, ReadOptions { strict: true }).unwrap();
    assert_eq!(log.rows.len(), 4);
    let err = AutoHeuristic::builder("test", choices(&["a"]), || "f".into())
        .feedback(|_| 4.0)
        .context(fa_context())
        .config(config(dir.path(), "test", ""))
        .device(DeviceInfo::new(
            DeviceIdentity::H100,
            "NVIDIA A100-SXM4-80GB",
        ))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("InconsistentMetadata"), "{err}");
    // While another writer (a collector, a merge) holds the log's lock, collecting is an
    // error naming the file, and the log is left as it was.
    let held = ah_log::lock_log(&path, true).unwrap();
    let err = AutoHeuristic::builder("test", choices(&["a"]), || "f".into())
        .feedback(|_| 4.0)
        .context(fa_context())
        .config(config(dir.path(), "test", ""))
        .device(DeviceInfo::new(
            DeviceIdentity::A100,
            "NVIDIA A100-SXM4-80GB",
        ))
        .build()
        .unwrap_err();
    assert!(matches!(err, ah_core::Error::Locked { .. }), "{err}");
    drop(held);
    let log = Log::read(&path, ReadOptions { strict: true }).unwrap();
    assert_eq!(log.rows.len(), 4);
}

#[test]
fn precondition_false_means_no_collection_and_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let calls = RefCell::new(0);
    let ah = AutoHeuristic::builder("test", choices(&["a", "b"]), || "fb".into())
        .feedback(|_| {
            *calls.borrow_mut() += 1;
            1.0
        })
        .context(fa_context())
        .precondition(|md, ctx| md.name == "test" && ctx.get("fa") == Some(&Value::Int(6)))
        .config(config(dir.path(), "test", "test"))
        .build()
        .unwrap();
    assert_eq!(*calls.borrow(), 0);
    assert_eq!(ah.log_path(), None);
    assert!(!dir.path().join("autoheuristic").exists());
    assert_eq!(ah.get_choice(), "fb");
    assert_eq!(ah.decision(), Err(UnsureReason::Precondition));
    assert!(!ah.collecting());
    let mut ah = ah;
    let err = ah.save_data("a", 1.0).unwrap_err().to_string();
    assert!(err.contains("the precondition does not hold"), "{err}");
    assert_eq!(ah.get_top_k_choices(2, &[]), None);
}

/// A registered heuristic: picks by `fa` (and `fa2`, an augment op), ranks b, c, a.
struct Fa;
static SURE: [(f64, u16); 3] = [(0.8, 1), (0.15, 2), (0.05, 0)];
static UNSURE: [(f64, u16); 2] = [(0.5, 3), (0.5, 1)];
impl LearnedHeuristic for Fa {
    fn name(&self) -> &'static str {
        "test"
    }
    fn heuristic_name(&self) -> &'static str {
        "FaTest"
    }
    fn choices(&self) -> &'static [&'static str] {
        &["a", "b", "c", "zzz"]
    }
    fn device(&self) -> DeviceIdentity {
        DeviceIdentity::H100
    }
    fn confidence_threshold(&self) -> f64 {
        0.6
    }
    fn predict(&self, context: &Context, _choice: Option<usize>) -> Prediction {
        match context.get("fa2") {
            Some(Value::Int(10)) => Prediction::Distribution(&SURE),
            Some(Value::Int(12)) => Prediction::Distribution(&UNSURE),
            Some(Value::Int(14)) => Prediction::Distribution(&[(0.9, 3)]),
            Some(_) => Prediction::Unsure(UnsureKind::UnsafeLeaf),
            None => Prediction::Unsure(UnsureKind::MissingFeature("fa2")),
        }
    }
}
static FA: Fa = Fa;

fn use_ah<'a>(
    dir: &std::path::Path,
    fa: i64,
    registry: &'a Registry,
    use_list: &str,
) -> AutoHeuristic<'a> {
    let mut c = Context::new();
    c.add("fa", fa);
    AutoHeuristic::builder("test", choices(&["a", "b", "c"]), || "fallback".into())
        .context(c)
        .augment(vec![Operation::parse("fa2", "fa * 2", false).unwrap()])
        .config(config(dir, "", use_list))
        .device(DeviceInfo::new(DeviceIdentity::H100, "NVIDIA H100"))
        .registry(registry)
        .build()
        .unwrap()
}

#[test]
fn use_mode_asks_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::new();
    registry.register(&FA);
    let always = choices(&["extern_mm"]);
    let ah = use_ah(dir.path(), 5, &registry, "test");
    assert_eq!(ah.get_choice(), "b");
    assert_eq!(ah.get_top_k_choices(2, &[]), Some(choices(&["b", "c"])));
    assert_eq!(
        ah.get_top_k_choices(10, &always),
        Some(choices(&["b", "c", "a", "extern_mm"]))
    );
    assert_eq!(
        ah.get_top_k_choices(1, &choices(&["b"])),
        Some(choices(&["b"]))
    );
    // Unsure (0.5 <= 0.6): fallback; ranking ignores the threshold and drops unknown choices.
    let ah = use_ah(dir.path(), 6, &registry, "test");
    assert_eq!(ah.get_choice(), "fallback");
    assert_eq!(
        ah.decision(),
        Err(UnsureReason::LowConfidence { confidence: 0.5 })
    );
    assert_eq!(
        ah.get_top_k_choices(3, &always),
        Some(choices(&["b", "extern_mm"]))
    );
    // An answer not among the choices: fallback.
    let ah = use_ah(dir.path(), 7, &registry, "test");
    assert_eq!(ah.decision(), Err(UnsureReason::NotInChoices));
    assert_eq!(ah.get_choice(), "fallback");
    // Unsafe leaf: fallback and no ranking.
    let ah = use_ah(dir.path(), 8, &registry, "test");
    assert_eq!(ah.get_choice(), "fallback");
    assert_eq!(ah.get_top_k_choices(3, &always), None);
    // Not in use mode, or another device: fallback / None.
    let ah = use_ah(dir.path(), 5, &registry, "mm,other");
    assert_eq!(ah.get_choice(), "fallback");
    assert_eq!(ah.get_top_k_choices(3, &always), None);
    let mut c = Context::new();
    c.add("fa", 5i64);
    let ah = AutoHeuristic::builder("test", choices(&["a", "b"]), || "fallback".into())
        .context(c)
        .augment(vec![Operation::parse("fa2", "fa * 2", false).unwrap()])
        .config(config(dir.path(), "", "test"))
        .device(DeviceInfo::new(DeviceIdentity::A100, "NVIDIA A100"))
        .registry(&registry)
        .build()
        .unwrap();
    assert_eq!(ah.decision(), Err(UnsureReason::NoHeuristic));
    assert_eq!(ah.get_top_k_choices(3, &always), None);
}

#[test]
fn autotune_once_then_cache() {
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::new();
    registry.register(&FA);
    let calls = RefCell::new(Vec::new());
    let make = |fa: i64, cfg: Config| {
        let mut c = Context::new();
        c.add("fa", fa);
        let calls = &calls;
        AutoHeuristic::builder("test", choices(&["a", "b", "c"]), || "fallback".into())
            .context(c)
            .augment(vec![Operation::parse("fa2", "fa * 2", false).unwrap()])
            .feedback(move |ch| {
                calls.borrow_mut().push(ch.to_string());
                match ch {
                    "a" => 3.0,
                    "b" => f64::INFINITY,
                    _ => 2.0,
                }
            })
            .config(cfg)
            .device(DeviceInfo::new(DeviceIdentity::H100, "NVIDIA H100"))
            .registry(&registry)
            .build()
            .unwrap()
    };
    let cfg = config(dir.path(), "", "test");
    // Sure: the heuristic answers, nothing is benchmarked.
    let pick = make(5, cfg.clone()).get_choice_or_autotune();
    assert_eq!(
        (pick.choice.as_str(), pick.source),
        ("b", PickSource::Heuristic)
    );
    assert!(calls.borrow().is_empty());
    // Unsure: benchmark once, then the cache answers.
    let pick = make(6, cfg.clone()).get_choice_or_autotune();
    assert_eq!(
        (pick.choice.as_str(), &pick.source),
        ("c", &PickSource::Autotuned)
    );
    assert_eq!(
        pick.unsure,
        Some(UnsureReason::LowConfidence { confidence: 0.5 })
    );
    assert_eq!(*calls.borrow(), ["a", "b", "c"]);
    let pick = make(6, cfg.clone()).get_choice_or_autotune();
    assert_eq!(
        (pick.choice.as_str(), pick.source),
        ("c", PickSource::Cache)
    );
    assert_eq!(calls.borrow().len(), 3);
    // Another input misses.
    let pick = make(8, cfg.clone()).get_choice_or_autotune();
    assert_eq!(pick.source, PickSource::Autotuned);
    assert_eq!(calls.borrow().len(), 6);
    // Cache disabled: benchmarks every time.
    let mut off = cfg.clone();
    off.disable_cache = true;
    assert_eq!(
        make(6, off).get_choice_or_autotune().source,
        PickSource::Autotuned
    );
    assert_eq!(calls.borrow().len(), 9);
    // A file that is not a pick cache: a warning, a pick without the cache, the file
    // left as it was.
    let saved = std::fs::read(cfg.pick_cache_path()).unwrap();
    std::fs::write(cfg.pick_cache_path(), "not json").unwrap();
    let mut ah = make(6, cfg.clone());
    assert_eq!(ah.get_choice_or_autotune().source, PickSource::Autotuned);
    let w = ah.take_warnings();
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("not a pick cache"), "{w:?}");
    assert_eq!(std::fs::read(cfg.pick_cache_path()).unwrap(), b"not json");
    std::fs::write(cfg.pick_cache_path(), saved).unwrap();
    assert_eq!(
        make(6, cfg.clone()).get_choice_or_autotune().source,
        PickSource::Cache
    );
    // Stale guard: ignored with a warning and re-benchmarked.
    let mut ah = make(6, cfg.clone());
    ah.fingerprint.driver_version = "999".into();
    assert_eq!(ah.get_choice_or_autotune().source, PickSource::Autotuned);
    assert!(ah.take_warnings()[0].contains("another guard"));
    // Without feedback: the fallback.
    let mut c = Context::new();
    c.add("fa", 6i64);
    let mut ah = AutoHeuristic::builder("test", choices(&["a"]), || "fallback".into())
        .context(c)
        .config(cfg)
        .registry(&registry)
        .build()
        .unwrap();
    let pick = ah.get_choice_or_autotune();
    assert_eq!(
        (pick.choice.as_str(), pick.source),
        ("fallback", PickSource::Fallback)
    );
}
