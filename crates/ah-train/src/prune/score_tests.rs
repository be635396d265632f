//! How policies are scored: the harmful picks' price (`--harm-price`, `--op-harm-price`), the
//! results of each op's GEMMs, and the causes of the harmful picks.

use super::data::Choice;
use super::grow::Growth;
use super::policy::{best_policy, LeafRule, Policy, Weighing};
use super::tests::{features, gemm};
use super::*;
use ah_core::Value;

fn rule() -> LeafRule {
    LeafRule {
        min_support: 1,
        min_extern_support: 0,
        full_list: true,
        grown: false,
        max_keep: policy::MAX_KEEP,
    }
}

/// A leaf of GEMMs where cuBLAS is 11 % slower than the Triton choice `t1` (harmful), which
/// costs 5 s to keep; no horizon, so only autotuning and harmful picks count. Harmful picks
/// first (an infinite price) keeps `t1`; a price below its 5 s keeps cuBLAS alone, above keeps
/// `t1` again.
#[test]
fn a_finite_harm_price_trades_harmful_picks_against_autotuning() {
    let samples: Vec<Sample> = (0..4).map(|m| gemm(m, 1.0, 0.9)).collect();
    let refs: Vec<&Sample> = samples.iter().collect();
    let priced = |harm_price_s: f64| Weighing {
        horizon: 0.0,
        harm: 0.03,
        harm_price_s,
        op_harm_price_s: [None; 3],
    };
    let t1 = Policy::Keep {
        choices: vec!["t1".into()],
    };
    assert_eq!(best_policy(&refs, &priced(f64::INFINITY), rule()).0, t1);
    assert_eq!(best_policy(&refs, &priced(1.0), rule()).0, Policy::Extern);
    assert_eq!(best_policy(&refs, &priced(1.0), rule()).1, (0, 4.0));
    assert_eq!(best_policy(&refs, &priced(10.0), rule()).0, t1);
    for price in [-1.0, f64::NAN] {
        let bad = PruneParams {
            harm_price_s: price,
            ..PruneParams::default()
        };
        assert!(bad.check().is_err(), "{price}");
        let bad_op = PruneParams {
            op_harm_price_s: [None, None, Some(price)],
            ..PruneParams::default()
        };
        assert!(bad_op.check().is_err(), "bmm={price}");
    }
}

/// The leaf above, its GEMMs bmms: a bmm price (`--op-harm-price bmm=10`) replaces the flat
/// price of 1 s for them alone, so they keep `t1` while mm GEMMs under the same weighing keep
/// cuBLAS; an infinite bmm price under a finite flat one counts their harmful picks first.
#[test]
fn an_op_harm_price_replaces_the_flat_price_for_that_ops_gemms() {
    let of = |op: Option<GemmOp>| -> Vec<Sample> {
        (0..4)
            .map(|m| {
                let mut s = gemm(m, 1.0, 0.9);
                s.op = op;
                s
            })
            .collect()
    };
    let (bmms, mms) = (of(Some(GemmOp::Bmm)), of(Some(GemmOp::Mm)));
    let w = |bmm: f64| Weighing {
        horizon: 0.0,
        harm: 0.03,
        harm_price_s: 1.0,
        op_harm_price_s: [None, None, Some(bmm)],
    };
    let t1 = Policy::Keep {
        choices: vec!["t1".into()],
    };
    let best = |s: &[Sample], w: &Weighing| best_policy(&s.iter().collect::<Vec<_>>(), w, rule());
    assert_eq!(best(&bmms, &w(10.0)).0, t1);
    assert_eq!(best(&mms, &w(10.0)).0, Policy::Extern);
    assert_eq!(best(&mms, &w(10.0)).1, (0, 4.0));
    let extern_bmms = w(f64::INFINITY).score(&Policy::Extern, &bmms.iter().collect::<Vec<_>>());
    assert_eq!(extern_bmms, (4, 0.0));
    let mixed: Vec<&Sample> = bmms.iter().chain(&mms).collect();
    assert_eq!(w(10.0).score(&Policy::Extern, &mixed), (0, 44.0));
}

/// A cross-validation over GEMMs of two ops from two logs reports each op's and each log's
/// results too: every rule's GEMMs and harmful picks of the groups add up to its totals, and
/// the tables name each group.
#[test]
fn cross_validation_reports_each_ops_and_each_logs_results() {
    let samples: Vec<Sample> = (0..12)
        .map(|m| {
            let mut s = gemm(m, 1.0, if m % 2 == 0 { 0.5 } else { 1.5 });
            if m % 3 == 0 {
                s.values[1] = Value::Str("bmm".into());
            }
            s.log = if m < 7 { "main.txt" } else { "tokens.txt" }.into();
            s
        })
        .collect();
    let features = features();
    let categorical = vec!["op".to_string()];
    let growth = Growth {
        features: &features,
        categorical: &categorical,
        weighing: Weighing {
            horizon: 1e5,
            harm: 0.03,
            harm_price_s: f64::INFINITY,
            op_harm_price_s: [None; 3],
        },
        min_leaf: 1,
        max_depth: 2,
        leaf_rule: rule(),
        first_split: None,
        k_ratio: false,
        min_side: false,
        guard: None,
        drop: None,
    };
    let cv = eval::cross_validate(&samples, &growth, (CvSplit::Gemm, 3), 10, 2, &|_| {});
    for (groups, names) in [
        (&cv.by_op, ["bmm", "mm"]),
        (&cv.by_log, ["main.txt", "tokens.txt"]),
    ] {
        let got: Vec<&str> = groups.iter().map(|g| g.group.as_str()).collect();
        assert_eq!(got, names);
        for (r, total) in cv.all.iter().enumerate() {
            let sum = |f: &dyn Fn(&RuleResult) -> f64| -> f64 {
                groups.iter().map(|g| f(&g.results[r])).sum()
            };
            assert_eq!(sum(&|x| x.gemms as f64), total.gemms as f64);
            assert!((sum(&|x| x.harmful) - total.harmful).abs() < 1e-9);
            assert!((sum(&|x| x.autotune_s) - total.autotune_s).abs() < 1e-9);
        }
    }
    let table = eval::groups_table("op", &cv.by_op);
    assert!(
        table.contains("| bmm | learned (cross-validated) | 4 |"),
        "{table}"
    );
    let table = eval::groups_table("log", &cv.by_log);
    assert!(table.starts_with("| log | rule |"), "{table}");
    assert!(
        table.contains("| tokens.txt | learned (cross-validated) | 5 |"),
        "{table}"
    );
    // One op of one log: no breakdown.
    let mm: Vec<Sample> = (0..6).map(|m| gemm(m, 1.0, 0.5)).collect();
    let one = eval::cross_validate(&mm, &growth, (CvSplit::Gemm, 3), 10, 1, &|_| {});
    assert!(one.by_op.is_empty() && one.by_log.is_empty());
}

/// The worst picks list only harmful ones, worst first, each GEMM once and at most
/// `misses::LISTED`, named by what the log says of them.
#[test]
fn the_worst_picks_are_the_harmful_ones_worst_first() {
    // cuBLAS only on GEMMs where Triton runs in `1 / x` of cuBLAS's time: harmful where x > 1.03.
    let samples: Vec<Sample> = (0..14)
        .map(|m| gemm(m, 1.0, 1.0 / (1.0 + m as f64 / 10.0)))
        .collect();
    let refs: Vec<&Sample> = samples.iter().collect();
    let extern_ = vec![Policy::Extern; refs.len()];
    let w = Weighing {
        horizon: 0.0,
        harm: 0.03,
        harm_price_s: f64::INFINITY,
        op_harm_price_s: [None; 3],
    };
    let worst = misses::worst(&refs, &extern_, &features(), &w);
    assert_eq!(worst.len(), misses::LISTED);
    assert_eq!(worst[0].gemm, "mm ?x13x?x? ??");
    assert!((worst[0].ours - 2.3).abs() < 1e-9, "{worst:?}");
    assert!(worst.windows(2).all(|p| p[0].ours >= p[1].ours));
    assert!(worst
        .iter()
        .all(|m| m.decision == "cuBLAS only" && m.cublas == m.ours));
    // Twice the same misses (two repeats of a cross-validation): each GEMM once.
    let twice = misses::worst_of(worst.iter().chain(&worst).cloned());
    assert_eq!(twice, worst);
    // No harmful pick: nothing listed, and the report leaves the section out.
    let best = vec![Policy::Default; refs.len()];
    assert!(misses::worst(&refs, &best, &features(), &w).is_empty());
    let table = misses::table(&worst);
    assert!(
        table.contains("| mm ?x13x?x? ?? | cuBLAS only | 2.300x | 1.000x | 2.300x |"),
        "{table}"
    );
}

/// Each harmful pick is counted under the decision that made it: cuBLAS alone where a template
/// won, a kept list that lacked Inductor's pick, a kept list with it where that pick is itself
/// slower than cuBLAS (max-autotune's own miss), the full list; what is not harmful is not
/// counted, and the counts add up to the harmful total.
#[test]
fn harmful_picks_are_counted_by_cause() {
    let values = || vec![Value::Int(64), Value::Str("mm".into())];
    let choice = |name: &str, ms: f64| Choice::new(name.into(), ms, 1.0);
    let choices = || {
        vec![
            choice("extern_mm", 1.0),
            choice("t1", 0.5),
            choice("t2", 0.9),
        ]
    };
    // Inductor's pick t1 is truly 2x faster than cuBLAS; on `own_miss` it is 1.2x slower.
    let wins = Sample::new(values(), choices(), 1.0, 0.5, 3.0);
    let own_miss = Sample::new(values(), choices(), 1.0, 1.2, 3.0);
    let keep = |c: &str| Policy::Keep {
        choices: vec![c.into()],
    };
    let cases = [
        (&wins, Policy::Extern),
        (&wins, keep("t2")),
        (&wins, keep("t1")),
        (&own_miss, keep("t1")),
        (&own_miss, Policy::Default),
        (&own_miss, Policy::Extern),
    ];
    let all: Vec<&Sample> = cases.iter().map(|c| c.0).collect();
    let ours: Vec<Policy> = cases.iter().map(|c| c.1.clone()).collect();
    let w = Weighing {
        horizon: 0.0,
        harm: 0.03,
        harm_price_s: f64::INFINITY,
        op_harm_price_s: [None; 3],
    };
    let c = Causes::count("mm", &all, &ours, &w);
    let expected = Causes {
        op: "mm".into(),
        cublas_only: 1.0,
        list_without_pick: 1.0,
        list_with_pick: 1.0,
        full_list: 1.0,
    };
    assert_eq!(c, expected);
    assert_eq!(c.total(), eval::score("x", &all, &ours, &w).harmful);
    let table = eval::causes_table(&[c]);
    assert!(table.contains("| mm | 4 | 1 | 1 | 1 | 1 |"), "{table}");
}

/// Model files written before the breakdown by log named a group `op`; they still read.
#[test]
fn groups_of_older_model_files_read_by_their_op() {
    let old: eval::GroupResults = serde_json::from_str(r#"{"op": "bmm", "results": []}"#).unwrap();
    assert_eq!(old.group, "bmm");
}

/// A log's file name is free text and the tables go into generated headers line by line: a
/// hostile one (line break, quotes, a pipe, a comment closer) stays in its row, escaped.
#[test]
fn a_hostile_log_name_stays_in_its_row() {
    let w = Weighing {
        horizon: 1e5,
        harm: 0.03,
        harm_price_s: f64::INFINITY,
        op_harm_price_s: [None; 3],
    };
    let result = eval::score("learned", &[], &[], &w);
    let group = eval::GroupResults {
        group: "a|b\n## \"\"\" */ c.txt".into(),
        results: vec![result],
    };
    let table = eval::groups_table("log", &[group]);
    assert_eq!(table.lines().count(), 3, "{table}");
    assert!(
        table.contains(r#"| a\|b\n## """ */ c.txt | learned |"#),
        "{table}"
    );
}
