//! Speed of the core's hot paths, printed as a table:
//! `cargo run --release -p ah-core --example bench_core`.
//!
//! Reads `../shared/data/pytorch/pad_mm_a100.txt` when present (contexts and the read itself),
//! else uses synthetic pad_mm contexts. Each row is the median of 5 timed passes.
//!
//! Then wide logs (one metadata line naming F features, the header, R rows of F one-digit
//! values) and a malformed row of N commas: the time of one `Log::read` and its peak heap (a
//! counting allocator) over the file size. Shapes in `AH_BENCH_WIDE`, comma-separated: `F`
//! (R = 2), `FxR` or `cN`; default `100000,1000000,1000x2000,c10000000`; `0` skips them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use ah_core::generated::pad_mm::FEATURES;
use ah_core::model::{
    Column, FeatureRange, Model, ModelEvaluator, ModelKind, Node, Provenance, TrainingInfo, Tree,
    MODEL_SCHEMA_VERSION,
};
use ah_core::ops::{apply_operations, builtin_operations};
use ah_core::value::python_float_repr;
use ah_core::{Context, DeviceIdentity, Value};
use ah_log::{Log, ReadOptions};
use ah_runtime::cache::{CacheKey, DeviceFingerprint, PickCache};

fn median_ns(items: usize, mut f: impl FnMut()) -> f64 {
    let mut runs: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos() as f64 / items as f64
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[2]
}

fn synthetic_contexts(n: usize) -> Vec<Context> {
    (0..n as i64)
        .map(|i| {
            let (m, k, n) = (512 + 37 * i, 1024 + 13 * (i % 97), 4096 - 7 * (i % 31));
            let mut c = Context::new();
            c.add("m", m).add("k", k).add("n", n);
            c.add("mat1_stride_0", k).add("mat1_stride_1", 1i64);
            c.add("mat2_stride_0", n).add("mat2_stride_1", 1i64);
            c.add("m_padded_length", i % 8)
                .add("k_padded_length", 0i64)
                .add("n_padded_length", i % 3);
            c.add("mat1_align_size", 8i64).add("mat2_align_size", 8i64);
            c.add_categorical("mat1_dtype", "torch.float16")
                .add_categorical("mat2_dtype", "torch.float16");
            c.add_categorical("prepadded_mat1", false)
                .add_categorical("prepadded_mat2", false);
            c.add_categorical("using_tf32", "not_float_32");
            c
        })
        .collect()
}

type Row = (String, f64, &'static str);

/// A guard as a CUDA backend writes it (driver and library versions), for realistic lines.
fn bench_fingerprint() -> DeviceFingerprint {
    let mut fp = DeviceFingerprint::new("NVIDIA H100 80GB HBM3", DeviceIdentity::H100);
    fp.driver_version = "580.65.06".into();
    for (lib, v) in [
        ("cublas", "13.0.0"),
        ("cublasLt", "13.0.0"),
        ("cuda", "13.0"),
        ("cudarc", "0.19"),
        ("nvidia_driver", "580.65.06"),
        ("nvrtc", "13.0"),
    ] {
        fp.library_versions.insert(lib.into(), v.into());
    }
    fp
}

/// The pick cache: filled with 100k picks through `put` (one append under the lock each),
/// then loaded by a fresh open (a copy of the file under another name: the process has not
/// read it yet), looked up, and compacted. A design that rewrites the file on every pick
/// pays about a load plus a compaction per `put`.
fn pick_cache_rows(rows: &mut Vec<Row>) {
    const N: usize = 100_000;
    let dir = std::env::temp_dir().join(format!("ah-core-bench-{}", std::process::id()));
    let path = dir.join("picks.json");
    let fp = bench_fingerprint();
    let choices = vec!["orig".to_string(), "pad".to_string()];
    let many = synthetic_contexts(N);
    let keys: Vec<CacheKey> = many
        .iter()
        .map(|c| CacheKey::new("pad_mm", c, &choices))
        .collect();
    let mut cache = PickCache::open(&path, fp.clone()).expect("a fresh cache");
    let t = Instant::now();
    for k in &keys {
        let times = [("orig".to_string(), 1.25), ("pad".to_string(), 0.75)];
        cache
            .put_with_timings(k, "pad", times.into_iter().collect())
            .expect("put");
    }
    let put_us = t.elapsed().as_secs_f64() * 1e6 / N as f64;
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    let mut loads: Vec<f64> = (0..3)
        .map(|i| {
            let copy = dir.join(format!("copy{i}.json"));
            std::fs::copy(&path, &copy).expect("copy");
            let t = Instant::now();
            let c = PickCache::open(&copy, fp.clone()).expect("load");
            let ms = t.elapsed().as_secs_f64() * 1e3;
            assert_eq!(c.len(), N);
            ms
        })
        .collect();
    loads.sort_by(f64::total_cmp);
    let fresh = PickCache::open(dir.join("copy0.json"), fp.clone()).expect("open");
    rows.push((
        format!(
            "PickCache::open, first in the process (100k entries, {:.0} MB)",
            bytes as f64 / 1e6
        ),
        loads[1],
        "ms",
    ));
    rows.push((
        "PickCache::open again (nothing new: one stat)".into(),
        median_ns(1000, || {
            for _ in 0..1000 {
                black_box(PickCache::open(&path, fp.clone()).expect("open"));
            }
        }) / 1e3,
        "us",
    ));
    rows.push((
        "PickCache::get (hit, 100k entries)".into(),
        median_ns(N, || {
            for k in &keys {
                black_box(fresh.get(k));
            }
        }),
        "ns/lookup",
    ));
    rows.push((
        "CacheKey::new + PickCache::get (hit, 100k entries)".into(),
        median_ns(N, || {
            for c in &many {
                black_box(fresh.get(&CacheKey::new("pad_mm", c, &choices)));
            }
        }),
        "ns/lookup",
    ));
    rows.push((
        "PickCache::put (append under the lock, mean of 100k)".into(),
        put_us,
        "us",
    ));
    let t = Instant::now();
    cache.compact().expect("compact");
    rows.push((
        "PickCache::compact (rewrite 100k entries)".into(),
        t.elapsed().as_secs_f64() * 1e3,
        "ms",
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A complete depth-6 decision tree over pad_mm columns (augmented ones included).
fn model() -> Model {
    let columns = vec![
        Column::Numeric { name: "m*k".into() },
        Column::Numeric {
            name: "arith_intensity".into(),
        },
        Column::OneHot {
            feature: "mat2_innermost_needs_padding".into(),
            value: "True".into(),
        },
        Column::Numeric {
            name: "k/(m*n)".into(),
        },
        Column::OneHot {
            feature: "mat1_dtype".into(),
            value: "torch.bfloat16".into(),
        },
        Column::Numeric {
            name: "n_padded_length".into(),
        },
    ];
    let mut nodes = Vec::new();
    fn build(nodes: &mut Vec<Node>, depth: usize) -> usize {
        let i = nodes.len();
        if depth == 6 {
            let p = 0.5 + 0.07 * (i % 7) as f64;
            nodes.push(Node::Leaf {
                value: vec![p, 1.0 - p],
                samples: 10,
                unsafe_leaf: i.is_multiple_of(11),
            });
            return i;
        }
        nodes.push(Node::Leaf {
            value: vec![],
            samples: 0,
            unsafe_leaf: false,
        });
        let thresholds = [4.0e7, 700.0, 0.5, 1e-4, 0.5, 2.5];
        let left = build(nodes, depth + 1);
        let right = build(nodes, depth + 1);
        nodes[i] = Node::Split {
            column: depth,
            threshold: thresholds[depth],
            left,
            right,
        };
        i
    }
    build(&mut nodes, 0);
    Model {
        schema_version: MODEL_SCHEMA_VERSION,
        heuristic_name: "BenchPadMM".into(),
        name: "pad_mm".into(),
        kind: ModelKind::Decision,
        precondition: DeviceIdentity::A100,
        choices: vec!["orig".into(), "pad".into()],
        default_choice: None,
        // PyTorch's logged features: 12 numerical ones, then the 5 categorical ones.
        numerical_features: FEATURES[..12].iter().map(|f| f.to_string()).collect(),
        categorical_features: FEATURES[12..].iter().map(|f| f.to_string()).collect(),
        operations: builtin_operations("pad_mm")
            .iter()
            .map(|o| o.spec())
            .collect(),
        columns,
        tree: Tree { nodes },
        threshold: 0.6,
        ranking: None,
        feature_ranges: vec![FeatureRange {
            name: "m".into(),
            min: 1.0,
            max: 1e9,
        }],
        range_guard: true,
        training: TrainingInfo {
            mode: "bench".into(),
            learner: "none".into(),
            criterion: "gini".into(),
            max_depth: Some(6),
            min_samples_leaf: 1.0,
            seed: 0,
            extra: Default::default(),
        },
        metrics: Default::default(),
        provenance: Provenance {
            dataset_hash: String::new(),
            dataset: "synthetic".into(),
            tool_version: ah_core::TOOL_VERSION.into(),
            command: "bench_core".into(),
        },
    }
}

/// Writes a log of one feature whose only row is `commas` commas (a malformed row).
fn write_comma_log(path: &Path, commas: usize) -> u64 {
    let text = format!(
        "{{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"wide\", \"numerical_features\": [\"f\"], \"categorical_features\": []}}\nf,choice,feedback\n{}\n",
        ",".repeat(commas)
    );
    std::fs::write(path, &text).expect("temp file");
    text.len() as u64
}

/// Writes a log with `features` numerical features and `rows` rows of one-digit values.
fn write_wide_log(path: &Path, features: usize, rows: usize) -> u64 {
    use std::io::Write;
    let names: Vec<String> = (0..features).map(|i| format!("f{i}")).collect();
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).expect("temp file"));
    let row = "7,".repeat(features);
    write!(
        w,
        "{{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"wide\", \"numerical_features\": [{}], \"categorical_features\": []}}\n{},choice,feedback\n",
        quoted.join(", "),
        names.join(",")
    )
    .expect("write");
    for r in 0..rows {
        writeln!(w, "{row}{},1.0", if r % 2 == 0 { "a" } else { "b" }).expect("write");
    }
    w.flush().expect("write");
    std::fs::metadata(path).expect("written").len()
}

/// The system allocator, counting the bytes allocated now and their peak (for the wide logs).
struct Counting;

static HEAP_NOW: AtomicUsize = AtomicUsize::new(0);
static HEAP_PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to `System` unchanged; only counts the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = HEAP_NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        HEAP_PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HEAP_NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Heap bytes allocated now; resets the peak to it.
fn reset_peak() -> usize {
    let now = HEAP_NOW.load(Ordering::Relaxed);
    HEAP_PEAK.store(now, Ordering::Relaxed);
    now
}

/// Time and peak memory of reading wide logs, as table rows.
fn wide_rows(rows: &mut Vec<(String, f64, &'static str)>) {
    let sizes = std::env::var("AH_BENCH_WIDE")
        .unwrap_or_else(|_| "100000,1000000,1000x2000,c10000000".into());
    let dir = std::env::temp_dir().join(format!("ah-core-wide-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let shapes = sizes.split(',').filter_map(|s| {
        let (f, r) = s.trim().split_once('x').unwrap_or((s.trim(), "2"));
        Some((f.parse::<usize>().ok()?, r.parse::<usize>().ok()?))
    });
    for commas in sizes
        .split(',')
        .filter_map(|s| s.trim().strip_prefix('c')?.parse().ok())
    {
        let path = dir.join(format!("commas{commas}.txt"));
        let bytes = write_comma_log(&path, commas);
        let base = reset_peak();
        let t = Instant::now();
        let log = Log::read(&path, ReadOptions::default()).expect("the log reads");
        let secs = t.elapsed().as_secs_f64();
        let peak = HEAP_PEAK.load(Ordering::Relaxed);
        assert_eq!(log.malformed.len(), 1);
        let shape = format!("a malformed row of {commas} commas");
        rows.push((format!("Log::read, {shape}"), secs * 1e3, "ms"));
        let ratio = (peak - base) as f64 / bytes as f64;
        rows.push((format!("  peak heap / file size, {shape}"), ratio, "x"));
        let _ = std::fs::remove_file(&path);
    }
    for (f, r) in shapes {
        if f == 0 {
            continue;
        }
        let path = dir.join(format!("wide{f}x{r}.txt"));
        let bytes = write_wide_log(&path, f, r);
        let base = reset_peak();
        let t = Instant::now();
        let log = Log::read(&path, ReadOptions { strict: true }).expect("the wide log reads");
        let secs = t.elapsed().as_secs_f64();
        let peak = HEAP_PEAK.load(Ordering::Relaxed);
        assert_eq!((log.features.len(), log.rows.len()), (f, r));
        let shape = format!("{f} features x {r} rows");
        drop(log);
        rows.push((
            format!("Log::read, {shape} ({bytes} bytes)"),
            secs * 1e3,
            "ms",
        ));
        let ratio = (peak - base) as f64 / bytes as f64;
        rows.push((format!("  peak heap / file size, {shape}"), ratio, "x"));
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    let mut wide = Vec::new();
    wide_rows(&mut wide);
    let shared = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/pytorch/pad_mm_a100.txt"
    ));
    let mut rows: Vec<Row> = Vec::new();
    let contexts = if shared.exists() {
        let t = Instant::now();
        let log = Log::read(shared, ReadOptions::default()).expect("the shared pad_mm log reads");
        rows.push((
            "Log::read pad_mm_a100.txt (58,183 rows)".into(),
            t.elapsed().as_secs_f64() * 1e3,
            "ms",
        ));
        log.rows
            .iter()
            .step_by(7)
            .take(4096)
            .map(|r| log.metadata.row_context(&log.features, &r.values))
            .collect()
    } else {
        eprintln!("../shared absent: synthetic contexts");
        synthetic_contexts(4096)
    };
    let n = contexts.len();

    rows.push((
        "parse the 26 pad_mm operations".into(),
        median_ns(1, || {
            black_box(builtin_operations("pad_mm"));
        }) / 1e3,
        "us",
    ));
    let ops = builtin_operations("pad_mm");
    rows.push((
        "apply 26 pad_mm operations to a context copy".into(),
        median_ns(n, || {
            for c in &contexts {
                let mut c = c.clone();
                apply_operations(&ops, &mut c).unwrap();
                black_box(&c);
            }
        }),
        "ns/context",
    ));
    let model = model();
    model.check().unwrap();
    let mut eval = ModelEvaluator::new(&model).unwrap();
    rows.push((
        "ModelEvaluator::decide (ops + guard + depth-6 tree)".into(),
        median_ns(n, || {
            for c in &contexts {
                black_box(eval.decide(c));
            }
        }),
        "ns/context",
    ));
    rows.push((
        "Model::decide (parses the ops on every call)".into(),
        median_ns(n, || {
            for c in &contexts {
                black_box(model.decide(c));
            }
        }),
        "ns/context",
    ));
    pick_cache_rows(&mut rows);
    let floats: Vec<f64> = (0..n).map(|i| (i as f64 + 0.5) * 1.7e-3).collect();
    rows.push((
        "python_float_repr".into(),
        median_ns(n, || {
            for &x in &floats {
                black_box(python_float_repr(x));
            }
        }),
        "ns/value",
    ));
    let _ = Value::Int(0);
    rows.extend(wide);

    let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    println!("| {:width$} | {:>12} | unit |", "operation", "time");
    println!("|{}|{}|------|", "-".repeat(width + 2), "-".repeat(14));
    for (name, v, unit) in rows {
        println!("| {name:width$} | {v:>12.1} | {unit} |");
    }
    println!("({n} contexts; median of 5 passes)");
}
