//! Kept lists priced as logged (prices add up) and as with one ptxas (the slowest precompile,
//! benchmarks, the pick's compile), on made-up GEMMs and on the aligned H100 log.

use super::data::{self, Choice, Sample, Samples};
use super::policy::Policy;
use super::pricing::{bench_s, list_s, Pricing, BENCH_FIXED_S, LOGGED_PRECOMPILE_SCALE};
use ah_core::Value;

/// cuBLAS (1.0 ms) and three templates: `fast` 0.5 ms compiling 2 s, `slow` 2.0 ms compiling
/// 6 s, `mid` 0.8 ms compiling 1 s; each logged at 3 s, generated in 0.1 s; measured with one
/// ptxas.
fn gemm() -> Sample {
    let choice = |name: &str, ms: f64, gen_s: f64, pre_s: f64| {
        Choice::new(name.into(), ms, if gen_s > 0.0 { 3.0 } else { 0.0 }).with_parts(gen_s, pre_s)
    };
    let mut s = Sample::new(
        vec![Value::Int(64), Value::Str("mm".into())],
        vec![
            choice("extern_mm", 1.0, 0.0, 0.0),
            choice("fast", 0.5, 0.1, 2.0),
            choice("slow", 2.0, 0.1, 6.0),
            choice("mid", 0.8, 0.1, 1.0),
        ],
        1.0,
        0.5,
        9.0,
    );
    s.one_ptxas = true; // measured with one ptxas: precompile times are priced as they are
    s
}

fn priced(pricing: Pricing) -> Sample {
    let mut samples = Samples {
        metadata: ah_core::Metadata {
            shared_memory: 0,
            device_capa: (9, 0),
            name: "inductor_mm".into(),
            numerical_features: vec!["m".into()],
            categorical_features: vec!["op".into()],
            choices: None,
        },
        features: vec!["m".into(), "op".into()],
        samples: vec![gemm()],
        without_extras: 0,
        later: Vec::new(),
    };
    samples.reprice(pricing);
    samples.samples.remove(0)
}

fn keep(names: &[&str]) -> Policy {
    Policy::Keep {
        choices: names.iter().map(|n| n.to_string()).collect(),
    }
}

#[test]
fn a_benchmark_costs_its_fixed_part_and_its_calls() {
    assert_eq!(bench_s(0.0), BENCH_FIXED_S);
    assert!((bench_s(10.0) - (BENCH_FIXED_S + 0.088)).abs() < 1e-12);
    assert_eq!(bench_s(f64::INFINITY), BENCH_FIXED_S);
}

#[test]
fn logged_prices_add_up_as_before() {
    let s = priced(Pricing::Logged);
    assert_eq!(keep(&["slow", "mid"]).outcome(&s).cost_s, 6.0);
    assert_eq!(Policy::Default.outcome(&s).cost_s, 9.0);
    assert_eq!(Policy::Extern.outcome(&s).cost_s, 0.0);
}

#[test]
fn one_ptxas_pays_the_slowest_precompile_and_the_picks_compile() {
    let s = priced(Pricing::OnePtxas);
    let each = |ms: f64, gen: f64| gen + bench_s(ms);
    // `slow` and `mid`: both benchmarked, `slow` sets the precompile wall, `mid` is picked
    // (0.8 ms against cuBLAS's 1.0) and compiled once more.
    let want = each(1.0, 0.0) + each(2.0, 0.1) + each(0.8, 0.1) + 6.0 + 1.0;
    assert!((keep(&["slow", "mid"]).outcome(&s).cost_s - want).abs() < 1e-12);
    // The full list: the wall is still 6 s, the pick is `fast`.
    let full = each(1.0, 0.0) + each(0.5, 0.1) + each(2.0, 0.1) + each(0.8, 0.1) + 6.0 + 2.0;
    assert!((Policy::Default.outcome(&s).cost_s - full).abs() < 1e-12);
    assert_eq!(s.autotune_s, Policy::Default.outcome(&s).cost_s);
    // Keeping `slow` alone: cuBLAS is picked, no compile into the output code.
    let alone = each(1.0, 0.0) + each(2.0, 0.1) + 6.0;
    assert!((keep(&["slow"]).outcome(&s).cost_s - alone).abs() < 1e-12);
    assert_eq!(Policy::Extern.outcome(&s).cost_s, 0.0);
}

#[test]
fn list_s_of_nothing_costs_nothing() {
    assert_eq!(list_s(std::iter::empty::<&Choice>(), None), 0.0);
}

/// The aligned log's precompile seconds are priced as they are; a log collected as PyTorch
/// leaves it has them scaled. Both logs hold the main log's first GEMM.
#[test]
fn aligned_logs_are_not_scaled_again() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let first = |log: &str| {
        let log = root.join("data").join(log);
        let mut d =
            data::load(&log, &ah_log::extras_path(&log)).expect("a shipped log (../../data)");
        d.reprice(Pricing::OnePtxas);
        let s = d.samples.remove(0);
        let c = s.choices().iter().find(|c| !c.is_extern()).unwrap().clone();
        (s, c)
    };
    let (aligned, a) = first("inductor_mm_aligned_h100.txt");
    let (logged, l) = first("inductor_mm_h100.txt");
    assert_eq!((&aligned.values, &a.name), (&logged.values, &l.name));
    assert!(aligned.one_ptxas && !logged.one_ptxas);
    assert!(a.precompile_s() > 0.0 && l.precompile_s() > 0.0);
    assert_eq!(a.compile_s, a.precompile_s());
    assert!((l.compile_s - l.precompile_s() * LOGGED_PRECOMPILE_SCALE).abs() < 1e-12);
}

/// What a family's other members add is their benchmarks' seconds, summed.
#[test]
fn a_familys_other_members_cost_their_benchmarks() {
    use super::pricing::bench_s_of;
    let times = [0.5, 2.0, f64::INFINITY];
    let want: f64 = times.iter().map(|&t| bench_s(t)).sum();
    assert!((bench_s_of(3, 2.5) - want).abs() < 1e-12);
    assert_eq!(bench_s_of(0, 0.0), 0.0);
}
