//! The re-timing model (`--retime-below-ms`): a search under the threshold runs the kept choice
//! fastest in compiled truth, not the one Inductor's benchmark reads fastest.

use super::data::{Choice, Sample};
use super::policy::Policy;
use ah_core::Value;

fn gemm_values() -> Vec<Value> {
    vec![Value::Int(64), Value::Str("mm".into())]
}

/// A small GEMM as the H100 logs show them: Inductor's benchmark reads cuBLAS at 30 us (its
/// CPU submit time) and picks Triton config `a` (20 us benchmarked, 15 us in compiled truth),
/// while cuBLAS runs 10 us compiled; `b` benchmarks at 25 us. `scale` multiplies every time.
fn small(scale: f64) -> Sample {
    let values = gemm_values();
    let choices = vec![
        Choice::new("extern_mm".into(), 0.030 * scale, 0.0),
        Choice::new("a".into(), 0.020 * scale, 1.0),
        Choice::new("b".into(), 0.025 * scale, 1.0),
    ];
    Sample::new(values, choices, 0.010 * scale, 0.015 * scale, 2.0)
}

fn keep(name: &str) -> Policy {
    Policy::Keep {
        choices: vec![name.into()],
    }
}

fn run_ms(p: &Policy, s: &Sample) -> f64 {
    p.outcome(s).run_ms
}

#[test]
fn without_the_model_a_search_runs_what_the_benchmark_picks() {
    let s = small(1.0);
    assert_eq!(run_ms(&keep("a"), &s), 0.015);
    assert!((run_ms(&keep("b"), &s) - 0.025 * 0.015 / 0.020).abs() < 1e-12);
    assert_eq!(run_ms(&Policy::Default, &s), 0.015);
    assert_eq!(run_ms(&Policy::Extern, &s), 0.010);
}

#[test]
fn re_timed_searches_under_the_threshold_run_the_fastest_in_compiled_truth() {
    let mut s = small(1.0);
    s.retime_below_ms = Some(0.2);
    for p in [keep("a"), keep("b"), Policy::Default, Policy::Extern] {
        assert_eq!(run_ms(&p, &s), 0.010, "{p:?}");
    }
    // What the kept choices cost to autotune does not change.
    assert_eq!(
        keep("a").outcome(&s).cost_s,
        keep("a").outcome(&small(1.0)).cost_s
    );
}

#[test]
fn searches_at_or_above_the_threshold_are_left_to_the_benchmark() {
    let mut s = small(10.0);
    s.retime_below_ms = Some(0.2);
    assert_eq!(run_ms(&keep("a"), &s), 0.15);
    assert_eq!(run_ms(&Policy::Default, &s), 0.15);
}

/// Where Inductor's pick is cuBLAS, a template's truth is unknown: its benchmark is not scaled
/// by cuBLAS's (inflated) ratio, and the re-timed pick is cuBLAS.
#[test]
fn templates_are_not_estimated_from_a_cublas_pick() {
    let values = gemm_values();
    let choices = vec![
        Choice::new("extern_mm".into(), 0.020, 0.0),
        Choice::new("a".into(), 0.040, 1.0),
    ];
    let mut s = Sample::new(values, choices, 0.012, 0.012, 2.0);
    s.retime_below_ms = Some(0.2);
    assert_eq!(run_ms(&keep("a"), &s), 0.012);
}

#[test]
fn the_threshold_must_be_a_positive_finite_number() {
    for ms in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let bad = super::PruneParams {
            retime_below_ms: Some(ms),
            ..super::PruneParams::default()
        };
        assert!(bad.check().is_err(), "{ms}");
    }
}
