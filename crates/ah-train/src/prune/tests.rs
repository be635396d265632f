use super::data::{Choice, Sample};
use super::grow::Growth;
use super::policy::{best_policy, LeafRule, Policy, Weighing};
use super::*;
use ah_core::Value;

pub(super) const W: Weighing = Weighing {
    horizon: 1e5,
    harm: 0.03,
    harm_price_s: f64::INFINITY,
    op_harm_price_s: [None; 3],
};

/// The leaf rule with the full list allowed.
pub(super) fn rule(min_support: usize) -> LeafRule {
    LeafRule {
        min_support,
        min_extern_support: 0,
        full_list: true,
        grown: false,
        max_keep: policy::MAX_KEEP,
    }
}

/// A grower of the small trees these tests need: weighing `W`, leaves keeping a list on one
/// winner, no first split.
fn growth<'a>(f: &'a [String], cat: &'a [String], min_leaf: usize, max_depth: usize) -> Growth<'a> {
    Growth {
        features: f,
        categorical: cat,
        weighing: W,
        min_leaf,
        max_depth,
        leaf_rule: rule(1),
        first_split: None,
        k_ratio: false,
        min_side: false,
        guard: None,
        drop: None,
    }
}

/// A GEMM of `m` rows (the only feature) where cuBLAS takes `cublas` ms and the Triton choice
/// `t1` takes `triton` ms in truth; `t2` is always slower. Autotuning costs 10 s.
pub(super) fn gemm(m: i64, cublas: f64, triton: f64) -> Sample {
    let choice = |name: &str, ms: f64, price: f64| Choice::new(name.into(), ms, price);
    Sample::new(
        vec![Value::Int(m), Value::Str("mm".into())],
        vec![
            choice("extern_mm", cublas, 0.0),
            choice("t1", triton, 5.0),
            choice("t2", triton * 2.0, 5.0),
        ],
        cublas,
        cublas.min(triton),
        10.0,
    )
}

pub(super) fn features() -> Vec<String> {
    vec!["m".into(), "op".into()]
}

#[test]
fn outcomes_follow_the_kept_choices() {
    let s = gemm(8, 1.0, 0.5);
    let keep = |c: &[&str]| Policy::Keep {
        choices: c.iter().map(|x| x.to_string()).collect(),
    };
    assert_eq!(Policy::Extern.outcome(&s).run_ms, 1.0);
    assert_eq!(Policy::Extern.outcome(&s).cost_s, 0.0);
    assert_eq!(keep(&["t1"]).outcome(&s).run_ms, 0.5);
    assert_eq!(keep(&["t1"]).outcome(&s).cost_s, 5.0);
    // t2 alone: picked (1.0 ms benchmark vs cuBLAS 1.0, cuBLAS first on the tie).
    assert_eq!(keep(&["t2"]).outcome(&s).run_ms, 1.0);
    assert_eq!(Policy::Default.outcome(&s).cost_s, 10.0);
    assert!(W.harmful(Policy::Extern.outcome(&s), &s));
    assert!(!W.harmful(keep(&["t1"]).outcome(&s), &s));
}

#[test]
fn leaves_keep_cublas_unless_a_template_wins() {
    let cublas_wins: Vec<Sample> = (0..4).map(|i| gemm(100 + i, 1.0, 1.2)).collect();
    let refs: Vec<&Sample> = cublas_wins.iter().collect();
    assert_eq!(best_policy(&refs, &W, rule(1)).0, Policy::Extern);
    let triton_wins: Vec<Sample> = (0..4).map(|i| gemm(i, 1.0, 0.5)).collect();
    let refs: Vec<&Sample> = triton_wins.iter().collect();
    assert_eq!(
        best_policy(&refs, &W, rule(1)).0,
        Policy::Keep {
            choices: vec!["t1".into()]
        }
    );
}

/// `max_keep` bounds every candidate list, and a bound between the usual sizes is a size too.
#[test]
fn candidate_lists_keep_at_most_max_keep_templates() {
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    let samples: Vec<Sample> = (0..6)
        .map(|m| gemm_of(m, &names.map(|n| (n, 0.5))))
        .collect();
    let refs: Vec<&Sample> = samples.iter().collect();
    let sizes = |max_keep: usize| -> Vec<usize> {
        let r = LeafRule {
            full_list: false,
            max_keep,
            ..rule(1)
        };
        policy::candidates(&refs, &W, r)
            .iter()
            .filter_map(|p| match p {
                Policy::Keep { choices } => Some(choices.len()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(sizes(8), vec![1, 2, 3, 4, 6, 8]);
    assert_eq!(sizes(5), vec![1, 2, 3, 4, 5]);
    assert_eq!(sizes(1), vec![1]);
    let p = PruneParams {
        max_keep: 0,
        ..Default::default()
    };
    assert!(p.check().is_err());
}

#[test]
fn the_tree_splits_where_the_policy_changes() {
    let mut samples: Vec<Sample> = (0..6).map(|i| gemm(i, 1.0, 0.5)).collect();
    samples.extend((0..6).map(|i| gemm(1000 + i, 1.0, 1.5)));
    let (f, cat) = (features(), vec!["op".to_string()]);
    let growth = growth(&f, &cat, 3, 4);
    let refs: Vec<&Sample> = samples.iter().collect();
    let tree = growth.grow(&refs);
    assert_eq!(tree.leaves(), 2);
    assert_eq!(
        tree.decide(&gemm(2, 1.0, 0.5), &f),
        &Policy::Keep {
            choices: vec!["t1".into()]
        }
    );
    assert_eq!(tree.decide(&gemm(5000, 1.0, 0.5), &f), &Policy::Extern);
    // The same data gives the same tree.
    assert_eq!(tree, growth.grow(&refs));
    let cv = eval::cross_validate(&samples, &growth, (CvSplit::Gemm, 3), 10, 1, &|_| {}).all;
    assert_eq!(cv.len(), 4);
    assert_eq!(cv[3].harmful, 0.0);
    assert!(cv[3].autotune_s < cv[0].autotune_s);
}

/// Every repeat's folds cover every GEMM once; the first repeat is the log's order
/// (`i % k`), later ones split otherwise, the same way on every run.
#[test]
fn folds_cover_every_gemm_once() {
    let one_each: Vec<usize> = (0..10).collect();
    let split = |repeat| folds::of_groups(&one_each, 3, repeat);
    for repeat in 0..4 {
        let f = split(repeat);
        assert_eq!(f.len(), 3);
        let mut all: Vec<usize> = f.concat();
        all.sort_unstable();
        assert_eq!(all, one_each);
        assert_eq!(f, split(repeat));
    }
    assert_eq!(split(0)[1], [1, 4, 7]);
    assert_ne!(split(1), split(0));
    assert_ne!(split(2), split(1));
}

/// `--cv-split shape`: the GEMMs of one weight shape (op, k, n, dtypes, layout, TF32) are
/// one group, whatever their m or batch, and a group is never split between folds.
#[test]
fn shape_folds_keep_a_shape_together() {
    let f: Vec<String> = ["m", "k", "n", "op"].map(String::from).to_vec();
    let samples: Vec<Sample> = [
        (8, 64, 32),
        (16, 64, 32),
        (8, 64, 48),
        (256, 64, 32),
        (8, 128, 48),
    ]
    .iter()
    .map(|&(m, k, n)| {
        let mut s = gemm(m, 1.0, 0.5);
        s.values = vec![
            Value::Int(m),
            Value::Int(k),
            Value::Int(n),
            Value::Str("mm".into()),
        ];
        s
    })
    .collect();
    let groups = folds::shape_groups(&samples, &f);
    assert_eq!(groups, [0, 0, 1, 0, 2]);
    for repeat in 0..3 {
        let folds = folds::folds(&samples, &f, CvSplit::Shape, 2, repeat);
        let fold_of = |i: usize| folds.iter().position(|x| x.contains(&i)).unwrap();
        assert_eq!(fold_of(0), fold_of(1));
        assert_eq!(fold_of(0), fold_of(3));
        assert_eq!(folds.concat().len(), samples.len());
    }
    // One GEMM a group is the plain split.
    assert_eq!(
        folds::folds(&samples, &f, CvSplit::Gemm, 2, 1),
        folds::of_groups(&[0, 1, 2, 3, 4], 2, 1)
    );
    // More folds than shapes: as many folds as shapes.
    assert_eq!(folds::folds(&samples, &f, CvSplit::Shape, 5, 0).len(), 3);
}

/// A repeated cross-validation reports the means of its repeats: one repeat is the plain one.
#[test]
fn repeated_cross_validation_reports_the_means() {
    let samples: Vec<Sample> = (0..12)
        .map(|m| gemm(m, 1.0, if m % 3 == 0 { 0.5 } else { 1.5 }))
        .collect();
    let features = features();
    let categorical = vec!["op".to_string()];
    let growth = growth(&features, &categorical, 1, 2);
    let once = eval::cross_validate(&samples, &growth, (CvSplit::Gemm, 3), 10, 1, &|_| {}).all;
    let three = eval::cross_validate(&samples, &growth, (CvSplit::Gemm, 3), 10, 3, &|_| {}).all;
    let runs: Vec<f64> = (0..3)
        .map(|r| {
            let folds = folds::of_groups(&(0..samples.len()).collect::<Vec<_>>(), 3, r);
            let single = eval::cross_validate_with_folds(&samples, &growth, &folds, 10, &|_| {});
            single.all[3].harmful
        })
        .collect();
    assert_eq!(once[3].harmful, runs[0]);
    let mean = runs.iter().sum::<f64>() / 3.0;
    assert!((three[3].harmful - mean).abs() < 1e-12);
    // Default and cuBLAS only do not depend on the split.
    for b in [0, 2] {
        assert!((three[b].autotune_s - once[b].autotune_s).abs() < 1e-9);
        assert!((three[b].run_vs_best - once[b].run_vs_best).abs() < 1e-12);
        assert_eq!(three[b].harmful, once[b].harmful);
    }
}

/// The folds' trees grow in parallel: the cross-validation is the same on one thread as on
/// four, repeats, per-log and per-op results and worst picks included.
#[test]
fn cross_validation_does_not_depend_on_the_number_of_threads() {
    let samples: Vec<Sample> = (0..40)
        .map(|m| gemm(m, 1.0, [0.5, 1.5, 0.97, 1.2][m as usize % 4]))
        .collect();
    let features = features();
    let categorical = vec!["op".to_string()];
    let growth = growth(&features, &categorical, 2, 3);
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let cv = pool.install(|| {
            eval::cross_validate(&samples, &growth, (CvSplit::Gemm, 5), 10, 3, &|_| {})
        });
        serde_json::to_string(&(cv.all, cv.by_op, cv.by_log, cv.worst)).unwrap()
    };
    assert_eq!(on(1), on(4));
}

/// A node's candidate splits are scored in parallel: the tree is the same on one thread as on
/// four, ties between candidates (blocks of five GEMMs where a template wins, then cuBLAS, and
/// so on: several thresholds score alike) broken alike.
#[test]
fn a_tree_does_not_depend_on_the_number_of_threads() {
    let samples: Vec<Sample> = (0..40)
        .map(|m| gemm(m, 1.0, if (m / 5) % 2 == 0 { 0.5 } else { 1.5 }))
        .collect();
    let features = features();
    let categorical = vec!["op".to_string()];
    let growth = growth(&features, &categorical, 2, 3);
    let all: Vec<&Sample> = samples.iter().collect();
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        serde_json::to_string(&pool.install(|| growth.grow(&all))).unwrap()
    };
    let one = on(1);
    assert!(one.contains(r#""node":"split""#), "{one}");
    assert_eq!(one, on(4));
}

/// A model trained with `--cv-repeats` records it, and its report says what the figures are;
/// one repeat writes neither (models and reports as before the option).
#[test]
fn a_repeated_cross_validation_is_recorded_and_reported() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let logs = [root.join("data/inductor_mm_h100.txt")];
    for (repeats, says) in [(1, false), (2, true)] {
        let params = PruneParams {
            first: vec![40],
            cv_repeats: repeats,
            ..Default::default()
        };
        let (model, data) = train(&logs, "RepeatCheck", &params, &|_| {}).unwrap();
        let json = serde_json::to_value(&model).unwrap();
        assert_eq!(json.get("cv_repeats").is_some(), says);
        let back: PruneModel = serde_json::from_value(json).unwrap();
        assert_eq!(back.cv_repeats, repeats);
        let text = report(&model, &data);
        assert_eq!(
            text.contains("the means of 2 splits into folds"),
            says,
            "{text}"
        );
    }
}

#[test]
fn params_are_checked() {
    assert!(PruneParams::default().check().is_ok());
    for p in [
        PruneParams {
            horizon: f64::NAN,
            ..Default::default()
        },
        PruneParams {
            harm: -1.0,
            ..Default::default()
        },
        PruneParams {
            folds: 1,
            ..Default::default()
        },
        PruneParams {
            min_leaf: 0,
            ..Default::default()
        },
    ] {
        assert!(matches!(p.check(), Err(PruneError::Params(_))), "{p:?}");
    }
}

/// An addmm whose two cuBLAS choices Inductor benchmarks: `extern_addmm` reads faster, but a
/// pruned list keeps only `extern_bias_addmm` (the call without max-autotune), so an Extern
/// leaf costs nothing and runs in the no-max-autotune compiled truth.
#[test]
fn pruned_lists_keep_one_cublas_choice_the_1d_bias_call() {
    let g = gemm(8, 1.0, 0.5);
    let mut choices = g.choices().to_vec();
    choices[0] = Choice::new("extern_addmm".into(), 0.8, 0.0);
    choices.push(Choice::new("extern_bias_addmm".into(), 0.9, 0.1));
    let s = Sample::new(g.values, choices, 1.0, 0.5, 10.0);
    assert_eq!(s.kept_extern().unwrap().name, "extern_bias_addmm");
    let extern_only = Policy::Extern.outcome(&s);
    assert_eq!((extern_only.cost_s, extern_only.run_ms), (0.0, 1.0));
    let with_t1 = Policy::Keep {
        choices: vec!["t1".into()],
    }
    .outcome(&s);
    assert_eq!((with_t1.cost_s, with_t1.run_ms), (5.1, 0.5));
}

/// The handler's runtime prefers the same cuBLAS choices as the trainer's cost model.
#[test]
fn the_handler_prefers_the_same_cublas_choice() {
    let src = include_str!("../../../../python/ah_inductor/choices.py");
    let aten: Vec<String> = super::data::PREFERRED_EXTERN
        .iter()
        .map(|n| format!("\"aten::{}\"", n.trim_start_matches("extern_")))
        .collect();
    let line = src
        .lines()
        .find(|l| l.starts_with("ATEN_FIRST = ("))
        .expect("choices.py defines ATEN_FIRST");
    assert_eq!(line, format!("ATEN_FIRST = ({},)", aten.join(", ")));
}

/// A `bmm` config is kept under the name of the same `mm` config and a `decompose_k` split
/// under its family's (naming.py's `config_name`); every other name is read as logged.
#[test]
fn config_name_reads_a_bmm_config_as_mm_a_split_as_its_family_and_nothing_else() {
    use super::data::config_name;
    assert_eq!(config_name("triton_bmm_BLOCK-M=64"), "triton_mm_BLOCK-M=64");
    assert_eq!(
        config_name("subgraph_decompose_k_ksplit=2"),
        "subgraph_decompose_k"
    );
    for name in [
        "triton_mm_BLOCK-M=64",
        "extern_bmm",
        "subgraph_decompose_kx",
        "triton_bmmx",
    ] {
        assert_eq!(config_name(name), name);
    }
}

/// The shipped log's bmm GEMMs load with their Triton configs under `mm` names, so a leaf
/// weighs mm and bmm evidence for one config together; their cuBLAS choice stays `extern_bmm`.
#[test]
fn bmm_gemms_load_their_triton_configs_under_mm_names() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let log = root.join("data/inductor_mm_h100.txt");
    let data = super::data::load(&log, &ah_log::extras_path(&log)).unwrap();
    let op = data.features.iter().position(|f| f == "op").unwrap();
    let bmm: Vec<_> = data
        .samples
        .iter()
        .filter(|s| s.values[op].to_string() == "bmm")
        .collect();
    assert!(!bmm.is_empty());
    for s in bmm {
        let names: Vec<&str> = s.choices().iter().map(|c| c.name.as_str()).collect();
        assert!(
            names.iter().all(|n| !n.starts_with("triton_bmm_")),
            "{names:?}"
        );
        assert!(
            names.iter().any(|n| n.starts_with("triton_mm_")),
            "{names:?}"
        );
        assert_eq!(s.kept_extern().unwrap().name, "extern_bmm");
    }
}

/// A GEMM whose benchmark times per template are `times` (cuBLAS 1.0 ms, Inductor's pick the
/// fastest template), each template priced 1 s.
fn gemm_of(m: i64, times: &[(&str, f64)]) -> Sample {
    let mut choices = vec![Choice::new("extern_mm".into(), 1.0, 0.0)];
    choices.extend(
        times
            .iter()
            .map(|(name, ms)| Choice::new((*name).into(), *ms, 1.0)),
    );
    let best = times.iter().map(|t| t.1).fold(1.0, f64::min);
    let values = vec![Value::Int(m), Value::Str("mm".into())];
    Sample::new(values, choices, 1.0, best, times.len() as f64)
}

/// Nine configs win on eight GEMMs of a leaf and another, `z`, on two: every prefix of the
/// leaf's ranking (at most 8) misses `z` and is harmful on those two, a grown list is not.
#[test]
fn a_grown_list_keeps_what_a_minority_of_the_leaf_needs() {
    let many = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    let mut samples: Vec<Sample> = (0..8)
        .map(|m| {
            let mut t: Vec<(&str, f64)> = many.iter().map(|n| (*n, 0.5)).collect();
            t.push(("z", 0.9));
            gemm_of(m, &t)
        })
        .collect();
    samples.extend((8..10).map(|m| {
        let mut t: Vec<(&str, f64)> = many.iter().map(|n| (*n, 1.2)).collect();
        t.push(("z", 0.5));
        gemm_of(m, &t)
    }));
    let refs: Vec<&Sample> = samples.iter().collect();
    let capped = LeafRule {
        full_list: false,
        ..rule(1)
    };
    let prefixes = policy::candidates(&refs, &W, capped);
    assert!(prefixes.iter().all(|p| match p {
        Policy::Keep { choices } => !choices.contains(&"z".to_string()),
        _ => true,
    }));
    let grown = policy::grown_lists(&refs, &W, policy::MAX_KEEP);
    assert_eq!(grown.len(), policy::MAX_KEEP);
    assert_eq!(policy::grown_lists(&refs, &W, 3).len(), 3);
    assert_eq!(
        grown[1],
        Policy::Keep {
            choices: vec!["a".into(), "z".into()]
        }
    );
    let without = policy::best_leaf_policy(&refs, &W, capped);
    let with_grown = LeafRule {
        grown: true,
        ..capped
    };
    assert_eq!(W.score(&without, &refs).0, 2);
    assert_eq!(policy::best_leaf_policy(&refs, &W, with_grown), grown[1]);
    assert_eq!(W.score(&grown[1], &refs).0, 0);
    // A grown list needs support like any other: none has 11 GEMMs, so cuBLAS only is left.
    let unsupported = LeafRule {
        min_support: 11,
        ..with_grown
    };
    assert_eq!(
        policy::best_leaf_policy(&refs, &W, unsupported),
        Policy::Extern
    );
}
