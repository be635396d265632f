//! Support: a leaf keeps a list of templates only when it beats cuBLAS on `min_support` of its
//! GEMMs, and decides cuBLAS only only when cuBLAS was safe on `min_extern_support` of them.

use super::data::Sample;
use super::policy::{self, best_policy, LeafRule, Policy};
use super::tests::{gemm, rule, W};

#[test]
fn a_leaf_keeps_templates_only_on_enough_support() {
    // One GEMM where t1 wins big among four where cuBLAS wins by a little.
    let mut samples: Vec<Sample> = (0..4).map(|i| gemm(100 + i, 1.0, 1.01)).collect();
    samples.push(gemm(7, 1.0, 0.2));
    let refs: Vec<&Sample> = samples.iter().collect();
    let t1 = Policy::Keep {
        choices: vec!["t1".into()],
    };
    assert_eq!(policy::support(&t1, &refs, &W), 1);
    assert!(W.gains(t1.outcome(&samples[4]), &samples[4]));
    assert!(!W.gains(t1.outcome(&samples[0]), &samples[0]));
    assert!(!W.gains(Policy::Extern.outcome(&samples[4]), &samples[4]));
    assert_eq!(best_policy(&refs, &W, rule(1)).0, t1);
    assert!(!policy::candidates(&refs, &W, rule(2)).contains(&t1));
    // Without t1, cuBLAS only would be harmful on the fifth GEMM; the full list is not.
    assert_eq!(best_policy(&refs, &W, rule(2)).0, Policy::Default);
    // Without the full list only cuBLAS is left (t1 lacks support), harmful on the fifth GEMM.
    let capped = LeafRule {
        full_list: false,
        ..rule(2)
    };
    assert!(!policy::candidates(&refs, &W, capped).contains(&Policy::Default));
    assert_eq!(best_policy(&refs, &W, capped).0, Policy::Extern);
}

/// cuBLAS only needs `min_extern_support` GEMMs on which it is safe, else the leaf leaves its
/// GEMMs to the full list; without a full list to fall back on, cuBLAS only stays.
#[test]
fn a_leaf_decides_cublas_only_on_enough_support() {
    // Five GEMMs where cuBLAS wins by a little: all five safe on cuBLAS alone.
    let samples: Vec<Sample> = (0..5).map(|i| gemm(100 + i, 1.0, 1.01)).collect();
    let refs: Vec<&Sample> = samples.iter().collect();
    assert_eq!(policy::extern_support(&refs, &W), 5);
    let bounded = |min_extern_support| LeafRule {
        min_extern_support,
        ..rule(1)
    };
    assert_eq!(best_policy(&refs, &W, bounded(5)).0, Policy::Extern);
    assert_eq!(best_policy(&refs, &W, bounded(6)).0, Policy::Default);
    assert!(!policy::candidates(&refs, &W, bounded(6)).contains(&Policy::Extern));
    let capped = LeafRule {
        full_list: false,
        ..bounded(6)
    };
    assert_eq!(best_policy(&refs, &W, capped).0, Policy::Extern);
    // A GEMM where cuBLAS is harmful does not count.
    let mut mixed = samples.clone();
    mixed.push(gemm(7, 1.0, 0.2));
    let refs: Vec<&Sample> = mixed.iter().collect();
    assert_eq!(policy::extern_support(&refs, &W), 5);
}
