use super::*;
use crate::backend::{CpuBackend, TimingConfig};
use crate::runner::sample_rng;
use crate::runner::DynRunner;
use crate::runners::pad_mm::real_models::GemmKind;
use crate::runners::test_target;
use ah_core::{DeviceIdentity, Value as V};

fn target() -> Target {
    test_target(BackendKind::Cuda, DeviceIdentity::H100)
}

fn draws(n: u64) -> Vec<Gemm> {
    draws_of(Mixture::All, n)
}

/// How many of the draws `a` `f` holds for.
fn count(a: &[Gemm], f: impl Fn(&Gemm) -> bool) -> usize {
    a.iter().filter(|g| f(g)).count()
}

/// The name of the input distribution a runner says it draws from (its log's `shapes`).
fn shapes_of(r: &InductorMmRunner) -> Option<&'static str> {
    BenchmarkRunner::input_distribution(r).map(|d| d.shapes)
}

fn draws_of(mixture: Mixture, n: u64) -> Vec<Gemm> {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(mixture);
    (0..n)
        .map(|i| r.create_input(&mut sample_rng(7, i), &target()))
        .collect()
}

#[test]
fn draws_are_seeded_and_fit() {
    let a = draws(300);
    assert_eq!(a, draws(300));
    assert!(a
        .iter()
        .all(|g| g.fits(&target()) && g.m >= 1 && g.k >= 1 && g.n >= 1));
}

#[test]
fn draws_cover_every_source_op_and_dtype() {
    let a = draws(2000);
    let has = |f: &dyn Fn(&Gemm) -> bool| a.iter().any(f);
    assert!(has(&|g| g.source == Source::Decode && g.m <= 256));
    assert!(has(&|g| g.source == Source::Prefill));
    assert!(has(
        &|g| matches!(g.source, Source::Training(shapes_kind) if shapes_kind == crate::runners::pad_mm::real_models::GemmKind::GradWeight)
            && g.trans_a
    ));
    assert!(has(&|g| g.op == Op::Bmm && g.batch > 1));
    assert!(has(&|g| g.op == Op::Addmm));
    assert!(has(&|g| g.source == Source::Generator && g.m % 2 == 1));
    assert!(has(&|g| g.dtype == DType::F32 && g.tf32));
    assert!(has(&|g| g.dtype == DType::F32 && !g.tf32));
    assert!(has(&|g| g.dtype == DType::F16));
    assert!(a.iter().all(|g| g.op == Op::Bmm || g.batch == 1));
}

#[test]
fn context_is_pytorchs_mm_features_with_op_and_batch() {
    let g = Gemm {
        op: Op::Mm,
        batch: 1,
        m: 4096,
        k: 1000,
        n: 512,
        dtype: DType::F32,
        tf32: true,
        trans_a: true,
        trans_b: false,
        source: Source::Generator,
    };
    let c = context(&g);
    assert_eq!(
        c.feature_names_csv(),
        "m,k,n,batch,op,mat1_dtype,mat2_dtype,mat1_stride_0,mat1_stride_1,mat2_stride_0,\
         mat2_stride_1,mat1_iscontig,mat2_iscontig,using_tf32"
    );
    assert_eq!(c.get("mat1_stride_1"), Some(&V::from(4096usize)));
    assert_eq!(c.get("mat1_iscontig"), Some(&V::from(false)));
    assert_eq!(c.get("using_tf32"), Some(&V::from(true)));
    let b = context(&Gemm {
        dtype: DType::BF16,
        ..g
    });
    assert_eq!(b.get("using_tf32"), Some(&V::from("not_float_32")));
}

#[test]
fn answers_with_bad_choices_are_refused() {
    let ok = json!({"choices": [{"name": "extern_mm", "bench_ms": 0.1}, {"name": "triton_mm_x", "bench_ms": null}]});
    let c = choices_of(&ok).unwrap();
    assert_eq!(c[1].bench_ms, None);
    for bad in [
        json!({}),
        json!({"choices": []}),
        json!({"choices": [{"name": "a", "bench_ms": 1.0}, {"name": "a", "bench_ms": 2.0}]}),
        json!({"choices": [{"name": "a,b", "bench_ms": 1.0}]}),
        json!({"choices": [{"name": "a\nb", "bench_ms": 1.0}]}),
        json!({"choices": [{"bench_ms": 1.0}]}),
    ] {
        assert!(choices_of(&bad).is_err(), "{bad}");
    }
}

/// Python is needed for the worker (`$AH_PYTHON` or `python3`): absent, the test skips by
/// ah-test-support's policy (a failure when AH_REQUIRE_PYTHON is set).
fn python_or_skip() -> bool {
    let python = worker::python();
    let ok = std::process::Command::new(&python)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    !ah_test_support::skip_unless(
        ah_test_support::Requirement::Python,
        ok,
        &format!(
            "{} cannot be run (the Inductor worker needs it)",
            python.to_string_lossy()
        ),
    )
}

#[test]
fn fake_worker_measures_through_the_runner() {
    if !python_or_skip() {
        return;
    }
    let runner = InductorMmRunner::new(Engine::Fake);
    let mut backend = Backend::Cpu(CpuBackend::with_timing(TimingConfig::PYTORCH));
    let t = target();
    let drawn = DynRunner::draw(&runner, &mut sample_rng(3, 0), &t, 10).unwrap();
    let reps = crate::runner::Repetitions { max: 1, long: 1 };
    let m = runner.measure(&drawn, reps, &mut backend);
    assert_eq!(m.results.len(), 1);
    assert_eq!(m.choices.len(), 3);
    assert!(m.choices[0].starts_with("extern_"));
    assert!(m.results[0].iter().all(Result::is_ok));
    let x = m.extras.expect("extras");
    assert_eq!(x["worker"]["engine"], "fake");
    assert!(x["truth_ms"]["default"].as_f64().unwrap() > 0.0);
    assert!(x.get("id").is_none());
}

#[test]
fn a_failed_gemm_is_an_error_and_the_worker_goes_on() {
    if !python_or_skip() {
        return;
    }
    let mut w = Worker::spawn(Engine::Fake, Ptxas::AsIs, None).unwrap();
    let bad = json!({"op": "mm", "m": 13, "k": 13, "n": 8, "dtype": "float16"});
    assert!(matches!(w.measure(&bad), Err(WorkerError::Failed(e)) if e.contains("13x13")));
    let good = json!({"op": "bmm", "batch": 4, "m": 9, "k": 16, "n": 8, "dtype": "bfloat16"});
    let a = w.measure(&good).unwrap();
    assert_eq!(a["choices"][0]["name"], "extern_bmm");
}

#[test]
fn the_decode_mixture_draws_decode_steps_only() {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(Mixture::Decode);
    let a = draws_of(Mixture::Decode, 1000);
    assert!(a.iter().all(|g| g.fits(&target()) && g.m <= 64));
    let linears = a.iter().filter(|g| g.source == Source::Decode).count();
    let attention = a
        .iter()
        .filter(|g| g.op == Op::Bmm && g.m == 1 && g.batch > 1)
        .count();
    assert_eq!(linears + attention, a.len());
    assert!((600..800).contains(&linears), "{linears} linears");
    // LM heads (the widest n) are drawn about half the time.
    assert!(a.iter().filter(|g| g.n >= 30000).count() > 200);
    let shapes = |r: &InductorMmRunner| BenchmarkRunner::input_distribution(r).map(|d| d.shapes);
    assert_eq!(shapes(&r), Some("inductor_decode"));
    assert_eq!(
        shapes(&InductorMmRunner::new(Engine::Fake)),
        Some("inductor")
    );
}

#[test]
fn the_attention_mixture_draws_attention_bmms_in_every_layout() {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(Mixture::Attention);
    let a = draws_of(Mixture::Attention, 1000);
    assert!(a.iter().all(|g| g.fits(&target())
        && g.op == Op::Bmm
        && g.source == Source::Attention
        && !(g.trans_a && g.trans_b)));
    let (scores, backward) = (count(&a, |g| g.trans_b), count(&a, |g| g.trans_a));
    assert!((200..400).contains(&scores), "{scores} q @ k.t()");
    assert!((280..520).contains(&backward), "{backward} p.t() @ do");
    // Windows (49..256 tokens), patch grids with a class token (odd), long sequences.
    assert!(count(&a, |g| g.m == 196 || g.n == 196) > 10);
    assert!(count(&a, |g| g.m % 2 == 1 && g.m > 64) > 50);
    assert!(count(&a, |g| g.m >= 4096) > 20);
    assert!(count(&a, |g| g.batch > 256) > 100);
    assert_eq!(shapes_of(&r), Some("inductor_attention"));
}

#[test]
fn a_log_is_resumed_only_in_the_ptxas_mode_it_was_measured_in() {
    let old_line = json!({"worker": {"settings": {"compile_threads": 16}}});
    let aligned_line = json!({"worker": {"settings": {"ah_ptxas": "align"}}});
    let runner =
        |p| -> Box<dyn DynRunner> { Box::new(InductorMmRunner::new(Engine::Fake).with_ptxas(p)) };
    let (as_is, align) = (runner(Ptxas::AsIs), runner(Ptxas::Align));
    assert_eq!(as_is.resume_conflict(&old_line), None);
    assert_eq!(align.resume_conflict(&aligned_line), None);
    let why = align
        .resume_conflict(&old_line)
        .expect("as-is log, align run");
    assert!(
        why.contains("AH_INDUCTOR_PTXAS=as-is") && why.contains("AH_INDUCTOR_PTXAS=align"),
        "{why}"
    );
    assert!(as_is.resume_conflict(&aligned_line).is_some());
}

#[test]
fn an_unknown_ptxas_mode_is_refused_before_any_worker_starts() {
    assert_eq!(Ptxas::parse("align"), Ok(Ptxas::Align));
    assert_eq!(Ptxas::parse("as-is"), Ok(Ptxas::AsIs));
    let err = Ptxas::parse("yes").unwrap_err();
    assert!(err.contains("AH_INDUCTOR_PTXAS=\"yes\"") && err.contains("as-is or align"));
    let runner = InductorMmRunner {
        ptxas: Err(err.clone()),
        ..InductorMmRunner::new(Engine::Fake)
    };
    assert_eq!(BenchmarkRunner::ready(&runner, BackendKind::Cuda), Err(err));
    assert_eq!(DynRunner::resume_conflict(&runner, &json!({})), None);
}

#[test]
fn the_worker_measures_in_the_mode_it_is_given_and_says_so() {
    if !python_or_skip() {
        return;
    }
    for mode in [Ptxas::AsIs, Ptxas::Align] {
        let w = Worker::spawn(Engine::Fake, mode, None).unwrap();
        assert_eq!(w.hello()["settings"]["ah_ptxas"], mode.name());
    }
}

#[test]
fn the_tiny_mixture_draws_many_small_attention_products() {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(Mixture::Tiny);
    let a = draws_of(Mixture::Tiny, 1000);
    assert!(a.iter().all(|g| g.fits(&target())
        && g.op == Op::Bmm
        && g.source == Source::Attention
        && (1024..=32768).contains(&g.batch)
        && g.m.max(g.n) <= 64
        && g.k <= 64));
    assert!((200..400).contains(&count(&a, |g| g.trans_b)), "q @ k.t()");
    assert!((280..520).contains(&count(&a, |g| g.trans_a)), "p.t() @ do");
    // Odd set sizes (misaligned operands) and sizes past Attention's largest batch.
    assert!((400..600).contains(&count(&a, |g| g.m % 2 == 1)));
    assert!(count(&a, |g| g.batch > 4096) > 300);
    assert_eq!(shapes_of(&r), Some("inductor_tiny"));
}

#[test]
fn the_windows_mixture_draws_attention_over_many_mid_sized_sets() {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(Mixture::Windows);
    let a = draws_of(Mixture::Windows, 1000);
    // A set of `s` tokens: scores are s x d x s, `p @ v` and `p.t() @ do` s x s x d.
    let set = |g: &Gemm| if g.trans_b { g.m } else { g.k };
    let head = |g: &Gemm| if g.trans_b { g.k } else { g.n };
    assert!(a.iter().all(|g| g.fits(&target())
        && g.op == Op::Bmm
        && g.source == Source::Attention
        && (256..=32768).contains(&g.batch)
        && (65..=512).contains(&set(g))
        && g.m == set(g)
        && (8..=80).contains(&head(g))));
    assert!((200..400).contains(&count(&a, |g| g.trans_b)), "q @ k.t()");
    assert!((280..520).contains(&count(&a, |g| g.trans_a)), "p.t() @ do");
    // The blind misses' kind: a head of at most 32 over a set that is no multiple of 128.
    assert!(count(&a, |g| head(g) <= 32 && set(g) % 128 != 0) > 300);
    assert!(count(&a, |g| set(g) % 2 == 1) > 100, "odd sets");
    assert!(
        count(&a, |g| g.batch > 4096) > 200,
        "past Attention's largest batch"
    );
    assert_eq!(shapes_of(&r), Some("inductor_windows"));
}

#[test]
fn the_heads_mixture_draws_narrow_heads_over_long_sequences() {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(Mixture::Heads);
    let a = draws_of(Mixture::Heads, 1000);
    let seq = |g: &Gemm| if g.trans_b { g.m } else { g.k };
    let head = |g: &Gemm| if g.trans_b { g.k } else { g.n };
    assert!(a.iter().all(|g| g.fits(&target())
        && g.op == Op::Bmm
        && g.source == Source::Attention
        && (16..=2048).contains(&g.batch)
        && (577..=4096).contains(&seq(g))
        && g.m == seq(g)
        && (16..=64).contains(&head(g))));
    assert!((200..400).contains(&count(&a, |g| g.trans_b)), "q @ k.t()");
    // The blind misses' kind: scores with a head of at most 32 over 1024 tokens or more.
    assert!(count(&a, |g| g.trans_b && head(g) <= 32 && seq(g) >= 1024) > 80);
    assert!(count(&a, |g| seq(g) % 2 == 1) > 150, "odd sequences");
    assert!(
        count(&a, |g| g.batch >= 512) > 150,
        "many sequences x heads"
    );
    assert_eq!(shapes_of(&r), Some("inductor_heads"));
}

#[test]
fn the_pool_mixture_draws_products_over_a_long_axis_into_a_small_output() {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(Mixture::Pool);
    let a = draws_of(Mixture::Pool, 1000);
    assert!(a.iter().all(|g| g.fits(&target())
        && g.op == Op::Bmm
        && (2048..=131072).contains(&g.k)
        && g.m.max(g.n) <= 1024
        && !g.trans_b));
    let grad_weight = count(&a, |g| {
        matches!(g.source, Source::Training(GemmKind::GradWeight))
    });
    assert!((200..400).contains(&grad_weight), "{grad_weight}");
    // The blind miss's kind: k far past both m and n, fp32, p stored transposed.
    assert!(
        count(&a, |g| g.k >= 16 * g.m.max(g.n)
            && g.dtype == DType::F32
            && g.trans_a)
            > 100
    );
    assert!(
        count(&a, |g| g.source == Source::Attention && !g.trans_a) > 100,
        "p @ v"
    );
    assert!(count(&a, |g| g.k % 2 == 1) > 300, "odd long axes");
    assert!(count(&a, |g| g.k >= 32768) > 100, "the longest axes");
    assert_eq!(shapes_of(&r), Some("inductor_pool"));
}

#[test]
fn the_adapters_mixture_draws_wide_to_narrow_linears_over_many_tokens() {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(Mixture::Adapters);
    let a = draws_of(Mixture::Adapters, 1000);
    // The linear's two sides and its tokens, whatever the layout.
    let sides = |g: &Gemm| match g.source {
        Source::Training(GemmKind::GradWeight) => (g.m, g.n, g.k),
        _ => (g.k, g.n, g.m),
    };
    assert!(a.iter().all(|g| {
        let (x, y, tokens) = sides(g);
        g.fits(&target())
            && g.op != Op::Bmm
            && (2048..=131072).contains(&tokens)
            && x.min(y) <= 256
            && x.max(y) >= 768
    }));
    // The blind misses' kind: a forward over 8192 tokens or more into (or from) 64 or fewer.
    let forward = |g: &Gemm| matches!(g.source, Source::Training(GemmKind::Forward));
    assert!(count(&a, |g| forward(g) && g.m >= 8192 && g.k.min(g.n) <= 64) > 100);
    assert!(
        count(&a, |g| forward(g) && g.k < g.n) > 80,
        "lora_B: narrow in"
    );
    assert!(count(&a, |g| g.op == Op::Addmm) > 50, "biased forwards");
    let grad_weight = count(&a, |g| {
        matches!(g.source, Source::Training(GemmKind::GradWeight)) && g.trans_a
    });
    assert!((250..420).contains(&grad_weight), "{grad_weight}");
    assert!(count(&a, |g| sides(g).2 % 2 == 1) > 300, "odd token counts");
    assert_eq!(shapes_of(&r), Some("inductor_adapters"));
}

/// The first three GEMMs `mixture` draws with `--seed 1` (op, batch, m, k, n, dtype, trans_a):
/// what a log collected with it begins with.
fn first_draws_of_seed_1(mixture: Mixture) -> Vec<(Op, usize, usize, usize, usize, DType, bool)> {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(mixture);
    (0..3)
        .map(|i| r.create_input(&mut sample_rng(1, i), &target()))
        .map(|g| (g.op, g.batch, g.m, g.k, g.n, g.dtype, g.trans_a))
        .collect()
}

#[test]
fn the_pool_mixture_draws_what_its_log_was_collected_with() {
    // The first GEMMs of data/inductor_mm_pool_h100.txt (`--seed 1`): a change to the order of
    // the draws would make a resumed log mix two distributions under one name.
    assert_eq!(
        first_draws_of_seed_1(Mixture::Pool),
        [
            (Op::Bmm, 32, 32, 122939, 96, DType::F16, true),
            (Op::Bmm, 512, 24, 5136, 96, DType::F32, false),
            (Op::Bmm, 1024, 32, 3979, 32, DType::BF16, true),
        ]
    );
}

#[test]
fn the_hires_mixture_draws_few_heads_over_high_resolution_sequences() {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(Mixture::Hires);
    let a = draws_of(Mixture::Hires, 1000);
    let seq = |g: &Gemm| if g.trans_b { g.m } else { g.k };
    let head = |g: &Gemm| if g.trans_b { g.k } else { g.n };
    assert!(a.iter().all(|g| g.fits(&target())
        && g.op == Op::Bmm
        && g.source == Source::Attention
        && (1..=20).contains(&g.batch)
        && (4096..=17776).contains(&seq(g))
        && g.m == seq(g)
        && (40..=128).contains(&head(g))));
    assert!((200..400).contains(&count(&a, |g| g.trans_b)), "q @ k.t()");
    // The blind misses' kind: scores with a 64-wide head over a 96 x 96 latent, few heads.
    assert!(count(&a, |g| g.trans_b && head(g) == 64 && g.batch <= 16) > 30);
    assert!(
        count(&a, |g| seq(g) == 9216) > 20,
        "Stable Diffusion 2 at 768 px"
    );
    assert!(count(&a, |g| seq(g) % 2 == 1) > 150, "odd sequences");
    assert!(count(&a, |g| g.batch <= 4) > 300, "few sequences x heads");
    assert_eq!(shapes_of(&r), Some("inductor_hires"));
}

#[test]
fn the_serving_mixture_draws_batched_decode_linears() {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(Mixture::Serving);
    let a = draws_of(Mixture::Serving, 1000);
    assert!(a.iter().all(|g| g.fits(&target())
        && g.op != Op::Bmm
        && g.batch == 1
        && g.source == Source::Decode
        && (65..=256).contains(&g.m)
        && g.trans_b
        && g.dtype != DType::F32));
    assert!(
        count(&a, |g| [128, 192, 256].contains(&g.m)) > 450,
        "common batch sizes"
    );
    assert!(count(&a, |g| g.m % 8 != 0) > 300, "any number of sequences");
    assert!(count(&a, |g| g.n > 30000) > 150, "LM heads");
    assert!((300..500).contains(&count(&a, |g| g.dtype == DType::F16)));
    assert_eq!(shapes_of(&r), Some("inductor_serving"));
}

#[test]
fn the_adapters_mixture_draws_what_its_log_was_collected_with() {
    // The first GEMMs of data/inductor_mm_adapters_h100.txt (`--seed 1`), which later sessions
    // resume: a change to the order of the draws would mix two distributions under one name.
    assert_eq!(
        first_draws_of_seed_1(Mixture::Adapters),
        [
            (Op::Mm, 1, 4096, 122939, 128, DType::F16, true),
            (Op::Mm, 1, 5136, 8, 1024, DType::F32, false),
            (Op::Mm, 1, 93857, 256, 2560, DType::F16, false),
        ]
    );
}

#[test]
fn the_tokens_mixture_draws_narrow_layers_over_many_tokens() {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(Mixture::Tokens);
    let a = draws_of(Mixture::Tokens, 1000);
    assert!(a.iter().all(|g| g.fits(&target())
        && g.op != Op::Bmm
        && g.batch == 1
        && matches!(g.source, Source::Training(_))));
    // Weight gradients: `k` is the token count, past every other mixture's 16384.
    let grad_weight = count(&a, |g| g.trans_a);
    assert!((250..420).contains(&grad_weight), "{grad_weight}");
    assert!(a
        .iter()
        .filter(|g| g.trans_a)
        .all(|g| g.k > 32768 && g.m <= 1024 && g.n <= 1024));
    assert!(
        count(&a, |g| g.trans_a && g.k >= 262144) > 50,
        "long reductions"
    );
    // Forward and input gradient: `m` is the token count; odd token counts half the time.
    assert!(a
        .iter()
        .filter(|g| !g.trans_a)
        .all(|g| g.m > 32768 && g.k <= 1024 && g.n <= 1024));
    let odd = count(&a, |g| (if g.trans_a { g.k } else { g.m }) % 2 == 1);
    assert!((400..600).contains(&odd), "{odd}");
    assert!(count(&a, |g| g.op == Op::Addmm) > 50);
    assert_eq!(shapes_of(&r), Some("inductor_tokens"));
}

#[test]
fn its_feedback_is_inductors_own_benchmark_with_no_median_beside_it() {
    let r = InductorMmRunner::new(Engine::Fake);
    let Feedback::Reported { label, method } = DynRunner::feedback(&r) else {
        panic!("inductor_mm reports Inductor's benchmark; the backend does not time it");
    };
    assert!(label.contains("Inductor's own benchmark") && label.contains("no medians sidecar"));
    assert!(method.contains("compiled truth"));
}

#[test]
fn the_routers_mixture_draws_narrow_outputs_over_token_batches() {
    let r = InductorMmRunner::new(Engine::Fake).with_mixture(Mixture::Routers);
    let a = draws_of(Mixture::Routers, 1000);
    assert!(a
        .iter()
        .all(|g| g.fits(&target()) && g.op != Op::Bmm && g.batch == 1));
    // Forward `x @ W.t()`: tokens x hidden x outputs, two thirds of the draws.
    let forward: Vec<&Gemm> = a.iter().filter(|g| g.trans_b).collect();
    assert!((580..740).contains(&forward.len()), "{}", forward.len());
    assert!(forward
        .iter()
        .all(|g| g.n <= 64 && (768..=16384).contains(&g.k) && g.m <= 16384));
    // The gap it was written for: routers of at most 16 experts over at most 4622 tokens.
    let gap = count(&a, |g| g.trans_b && g.n <= 16 && g.m <= 4622);
    assert!(gap > 150, "{gap}");
    assert!(count(&a, |g| g.trans_b && g.m <= 256) > 60, "served decode");
    // Gradients keep the narrow side: the input gradient's k, the weight gradient's m.
    assert!(a
        .iter()
        .filter(|g| !g.trans_b)
        .all(|g| if g.trans_a { g.m <= 64 } else { g.k <= 64 }));
    let fp32 = count(&a, |g| g.dtype == DType::F32);
    assert!((380..520).contains(&fp32), "{fp32}");
    assert!(count(&a, |g| g.op == Op::Addmm) > 120, "heads with bias");
    assert_eq!(shapes_of(&r), Some("inductor_routers"));
}

#[test]
fn the_routers_mixture_draws_what_its_log_will_be_collected_with() {
    // The first GEMMs `--seed 1` draws, pinned before data/inductor_mm_routers_h100.txt begins:
    // later sessions resume that log, and a change to the order of the draws would mix two
    // distributions under one name.
    assert_eq!(
        first_draws_of_seed_1(Mixture::Routers),
        [
            (Op::Mm, 1, 637, 4, 3072, DType::F16, false),
            (Op::Mm, 1, 218, 16, 768, DType::F32, false),
            (Op::Mm, 1, 13979, 6144, 2, DType::F32, false),
        ]
    );
}
