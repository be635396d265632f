//! Tests of the metrics: their names and order, the pairwise sum, and the unsure rules (an `inf`
//! pick, the cause named first) on a small hand-made table.

use super::*;
use crate::table::Key;

#[test]
fn metric_names_follow_the_upstream_then_extra_lists_and_serialize_sorted() {
    let names: Vec<&str> = Metrics::default().iter().map(|(n, _)| n).collect();
    let listed: Vec<&str> = UPSTREAM_METRICS
        .iter()
        .chain(&EXTRA_METRICS)
        .copied()
        .collect();
    assert_eq!(names, listed);
    let m = Metrics {
        correct: 3,
        regret: 0.25,
        ..Metrics::default()
    };
    assert_eq!(m.get("correct"), Some(3.0));
    assert_eq!(m.get("nope"), None);
    let json = serde_json::to_string(&m).unwrap();
    let mut sorted = listed.clone();
    sorted.sort_unstable();
    let keys: Vec<&str> = json
        .trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .map(|kv| kv.split(':').next().unwrap().trim_matches('"'))
        .collect();
    assert_eq!(keys, sorted);
    assert!(json.starts_with("{\"correct\":3.0,"), "{json}");
    assert_eq!(serde_json::to_string(&m.to_map()).unwrap(), json);
}

#[test]
fn pairwise_sum_matches_plain_sum_on_exact_values() {
    let a: Vec<f64> = (0..1000).map(f64::from).collect();
    assert_eq!(pairwise_sum(&a), 499_500.0);
    assert_eq!(gmean_or_zero(&[]), 0.0);
    assert!((gmean_or_zero(&[2.0, 8.0]) - 4.0).abs() < 1e-12);
}

/// A one-leaf model that always picks class 0 with probability 0.9.
struct AlwaysA(Vec<String>);

impl LeafModel for AlwaysA {
    fn leaf(&self, _row: &[f64]) -> usize {
        0
    }
    fn leaf_value(&self, _leaf: usize) -> &[f64] {
        &[0.9, 0.1]
    }
    fn classes(&self) -> &[String] {
        &self.0
    }
}

/// Three inputs, choices `a` and `b`: `a` wins, `b` wins, `a` failed (`inf`).
fn table_with_an_inf_pick() -> Table {
    let times = vec![1.0, 2.0, 2.0, 1.0, f64::INFINITY, 1.0];
    Table {
        name: "t".into(),
        choices: vec!["a".into(), "b".into()],
        x: vec![0.0, 1.0, 2.0],
        n_cols: 1,
        times,
        winner: vec![0, 1, 1],
        actual_winner: vec![0, 1, 1],
        weight: vec![1.0; 3],
        speedup: vec![2.0, 2.0, f64::INFINITY],
        keys: (0..3).map(|i| Key::new([i.to_string()])).collect(),
        input: vec![0, 1, 2],
    }
}

fn settings(inf_unavailable: bool) -> EvalSettings {
    EvalSettings {
        default_choice: Some("b".into()),
        top_k: 1,
        always_included: Vec::new(),
        exempt_certain: false,
        inf_unavailable,
    }
}

#[test]
fn inf_pick_is_unsure_with_inf_unavailable_and_wrong_without() {
    let model = AlwaysA(vec!["a".into(), "b".into()]);
    let t = table_with_an_inf_pick();
    let rp = predict_rows(&model, &t);
    let safe = |_: usize| false;
    use Outcome::*;
    // Default (PyTorch's semantics): the failed pick is a wrong, infinitely slow one.
    let off = settings(false);
    assert_eq!(outcomes(&rp, &t, 0.5, &safe, &off), [Correct, Wrong, Wrong]);
    let m = evaluate(&model, &rp, &t, 0.5, &safe, &off);
    assert_eq!((m.correct, m.wrong, m.unsure), (1, 2, 0));
    assert_eq!(m.harmful_wrong, 2);
    assert_eq!(m.regret, f64::MAX);
    assert_eq!(m.wrong_max_speedup, f64::MAX);
    assert_eq!(m.top_k_correct, 1);
    // --inf-unavailable: the runtime never offers `a` for input 2 and autotunes.
    let on = settings(true);
    assert_eq!(outcomes(&rp, &t, 0.5, &safe, &on), [Correct, Wrong, Unsure]);
    let m = evaluate(&model, &rp, &t, 0.5, &safe, &on);
    assert_eq!((m.correct, m.wrong, m.unsure), (1, 1, 1));
    assert_eq!(m.harmful_wrong, 1);
    // Lost 1.0 (input 1) over best times 1 + 1 + 1.
    assert!((m.regret - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(m.decided_share, 2.0 / 3.0);
    // Top-1 of input 2 skips the unavailable `a` (as a choice not measured): `b`, right.
    assert_eq!(m.top_k_correct, 2);
    // The safe probability counts the failed pick as a mistake only without the flag.
    assert_eq!(safe_proba(&rp, &t, &safe, 0.0, &off), 0.9);
    assert_eq!(safe_proba(&rp, &t, &safe, 0.34, &on), 0.0);
    assert_eq!(safe_proba(&rp, &t, &safe, 0.34, &off), 0.9);
    // A NaN (not measured) time is unavailable either way; a finite one never.
    assert!(off.unavailable(f64::NAN) && on.unavailable(f64::NAN));
    assert!(!off.unavailable(f64::INFINITY) && on.unavailable(f64::INFINITY));
    assert!(!on.unavailable(1.0));
}

/// Each cause of an unsure row, the first that holds named: forced, unsafe leaf, low
/// confidence, unavailable pick.
#[test]
fn unsure_cause_names_the_first_cause_in_runtime_order() {
    let model = AlwaysA(vec!["a".into(), "b".into()]);
    let t = table_with_an_inf_pick();
    let mut rp = predict_rows(&model, &t);
    let on = settings(true);
    let safe = |_: usize| false;
    let cause = |rp: &RowPredictions, thr: f64, bad: &dyn Fn(usize) -> bool| {
        (0..t.len())
            .map(|i| unsure_cause(rp, &t, i, thr, bad, &on))
            .collect::<Vec<_>>()
    };
    use UnsureCause::*;
    assert_eq!(cause(&rp, 0.5, &safe), [None, None, Some(Unavailable)]);
    assert_eq!(cause(&rp, 0.9, &safe), [Some(LowConfidence); 3]);
    assert_eq!(cause(&rp, 0.9, &|_| true), [Some(UnsafeLeaf); 3]);
    rp.forced_unsure = vec![false, true, false];
    assert_eq!(
        cause(&rp, 0.5, &safe),
        [None, Some(Forced), Some(Unavailable)]
    );
    // The outcomes agree: a row is unsure exactly when it has a cause.
    let out = outcomes(&rp, &t, 0.5, &safe, &on);
    assert_eq!(out, [Outcome::Correct, Outcome::Unsure, Outcome::Unsure]);
}
