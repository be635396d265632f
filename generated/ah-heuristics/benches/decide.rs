//! One decision of the generated pad_mm heuristic (augment operations included), on contexts
//! of the real log when `../shared` is present, else on built-in pad_mm shapes.
//!
//! The contexts are built twice: through one `Schema` (the log's header), the path of a
//! caller that reuses a schema (the layout is checked once per schema), and feature by
//! feature with `add` (the layout's names are compared on every decision).
//!
//! `cargo bench -p ah-heuristics` (compare with `python3 scripts/bench_python_artifact.py`).

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use ah_core::model::{Model, ModelEvaluator};
use ah_core::{Context, LearnedHeuristic, Schema, Value};
use ah_log::{Log, ReadOptions};
use criterion::{criterion_group, criterion_main, Criterion};

fn contexts() -> Vec<Context> {
    let log =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/pytorch/pad_mm_a100.txt");
    if let Ok(log) = Log::read(&log, ReadOptions::default()) {
        let cats: Vec<bool> = log
            .features
            .iter()
            .map(|f| log.metadata.is_categorical(f))
            .collect();
        return log
            .rows
            .iter()
            .step_by(2 * 3 * 7)
            .take(256)
            .map(|row| {
                let mut ctx = Context::with_capacity(log.features.len());
                for ((name, v), cat) in log.features.iter().zip(row.values.iter()).zip(&cats) {
                    ctx.add_feature(name.clone(), v.clone(), *cat);
                }
                ctx
            })
            .collect();
    }
    eprintln!("../shared/data/pytorch/pad_mm_a100.txt not found: benchmarking built-in shapes");
    let mut out = Vec::new();
    for (i, (m, k, n)) in [
        (29088, 41523, 5535),
        (1024, 4095, 768),
        (8192, 8192, 8191),
        (513, 2048, 1000),
    ]
    .into_iter()
    .enumerate()
    {
        let mut c = Context::new();
        for (name, v) in [
            ("m", m),
            ("k", k),
            ("n", n),
            ("mat1_stride_0", k),
            ("mat1_stride_1", 1),
            ("mat2_stride_0", n),
            ("mat2_stride_1", 1),
        ] {
            c.add(name, Value::Int(v));
        }
        for (name, v) in [
            ("m_padded_length", 0),
            ("k_padded_length", (8 - k % 8) % 8),
            ("n_padded_length", (8 - n % 8) % 8),
            ("mat1_align_size", 8),
            ("mat2_align_size", 8),
        ] {
            c.add(name, Value::Int(v));
        }
        let dtype = if i % 2 == 0 {
            "torch.float16"
        } else {
            "torch.bfloat16"
        };
        c.add_categorical("mat1_dtype", dtype)
            .add_categorical("mat2_dtype", dtype);
        c.add_categorical("prepadded_mat1", false)
            .add_categorical("prepadded_mat2", i == 3);
        c.add_categorical("using_tf32", "not_float_32");
        out.push(c);
    }
    out
}

/// The same contexts built through one schema of their (common) features.
fn schema_contexts(ctxs: &[Context]) -> Vec<Context> {
    let schema = Arc::new(Schema::new(
        ctxs[0]
            .features()
            .iter()
            .map(|f| (f.name.clone(), f.is_categorical)),
    ));
    ctxs.iter()
        .map(|c| {
            let values = c.features().iter().map(|f| f.value.clone()).collect();
            Context::from_schema(&schema, values).expect("every context has the schema's features")
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let h: &dyn LearnedHeuristic = &ah_heuristics::pad_mma100::HEURISTIC;
    let ctxs = contexts();
    // The `add` line keeps its earlier name (scripts/bench_python_artifact.py reads it).
    for (what, ctxs) in [(", Schema", schema_contexts(&ctxs)), ("", ctxs.clone())] {
        let mut i = 0;
        let name = format!("pad_mma100 generated decide (one context{what})");
        c.bench_function(&name, |b| {
            b.iter(|| {
                i = (i + 1) % ctxs.len();
                black_box(h.decide(black_box(&ctxs[i])))
            })
        });
    }
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models/PadMMA100.model.json"),
    )
    .unwrap();
    let model: Model = serde_json::from_str(&text).unwrap();
    let mut eval = ModelEvaluator::new(&model).unwrap();
    let mut j = 0;
    c.bench_function("pad_mma100 in-memory model decide (ModelEvaluator)", |b| {
        b.iter(|| {
            j = (j + 1) % ctxs.len();
            black_box(eval.decide(black_box(&ctxs[j])))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
