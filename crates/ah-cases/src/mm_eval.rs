//! Offline evaluation of an mm ranking heuristic on a log it was not trained on: how its
//! first choice compares with cuBLASLt's own pick (`extern_mm`), how often the fastest
//! algorithm is among its top k, and how much autotuning time benchmarking only the top k
//! saves. No GPU needed: the log holds the time of every candidate.
//!
//! Per input (the rows sharing one feature vector), the time of a choice is the median of its
//! repetitions. `extern_mm` is cuBLASLt's first candidate, which the log also holds under its
//! configuration id (the choice logged right after `extern_mm`); both are the same kernel, so
//! both get the faster of their two measurements, so that measurement noise between the two
//! copies counts neither for nor against the heuristic.
//!
//! The heuristic's ranking is filtered to the input's choices (PyTorch's
//! `get_decisions_ranked`, no threshold); its first choice is what the runtime's `get_choice`
//! returns with `extern_mm` as the fallback: the decision (confidence threshold applied) when
//! it is one of the input's choices, else `extern_mm`.

use ah_core::stats::median;
use std::collections::BTreeMap;

use ah_bench::runners::mm::{is_model_shape, AlgoConfig, EXTERN_MM};
use ah_core::{Decision, Model, ModelEvaluator, Value};
use ah_log::Log;

/// One evaluated input.
#[derive(Debug, Clone, PartialEq)]
pub struct InputEval {
    /// `m, k, n, dtype, transposes` for messages.
    pub description: String,
    /// The shape is a transformer layer's GEMM ([`is_model_shape`]).
    pub model_shape: bool,
    /// Number of choices offered (including `extern_mm`).
    pub choices: usize,
    /// Time of cuBLASLt's pick (ms).
    pub extern_ms: f64,
    /// Time of the fastest choice (ms).
    pub best_ms: f64,
    /// Time of the heuristic's first choice (ms).
    pub first_ms: f64,
    /// The heuristic's first choice.
    pub first: String,
    /// The heuristic had a ranking for this input.
    pub ranked: bool,
    /// For each k: the fastest time among the heuristic's top k (without `extern_mm` added).
    pub top_k_ms: BTreeMap<usize, f64>,
    /// For each k: the fastest time among the top k plus `extern_mm`.
    pub top_k_ext_ms: BTreeMap<usize, f64>,
    /// For each k: the number of choices benchmarked (top k plus `extern_mm`).
    pub top_k_count: BTreeMap<usize, usize>,
    /// For each k: the kernel time of one run of each benchmarked choice (ms).
    pub top_k_kernel_ms: BTreeMap<usize, f64>,
    /// Kernel time of one run of every choice (ms).
    pub all_kernel_ms: f64,
    /// For each k: the fastest time among cuBLASLt's own first k candidates (the baseline
    /// ranking: its heuristic's order).
    pub cublaslt_top_k_ms: BTreeMap<usize, f64>,
}

/// The evaluation of a heuristic on a log.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Evaluated inputs.
    pub inputs: Vec<InputEval>,
    /// Inputs skipped (fewer than two finite choices).
    pub skipped: usize,
    /// The k values.
    pub ks: Vec<usize>,
}

/// Summary numbers of a subset of inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Number of inputs.
    pub n: usize,
    /// Geometric mean of `extern_ms / first_ms`.
    pub first_geomean: f64,
    /// Smallest `extern_ms / first_ms`.
    pub first_worst: f64,
    /// Largest `extern_ms / first_ms`.
    pub first_max: f64,
    /// Share of inputs with the first choice more than 10 % slower than `extern_mm`.
    pub first_slower_10pct: f64,
    /// Geometric mean of `extern_ms / best_ms` (the oracle's headroom).
    pub oracle_geomean: f64,
    /// Share of inputs where cuBLASLt's pick is the fastest.
    pub extern_is_best: f64,
    /// Inputs where the heuristic had no ranking (fallback `extern_mm`).
    pub unranked: usize,
    /// Per k: share of inputs whose fastest choice is in the top k.
    pub best_in_top_k: BTreeMap<usize, f64>,
    /// Per k: share of inputs whose fastest choice is in the top k plus `extern_mm`.
    pub best_in_top_k_ext: BTreeMap<usize, f64>,
    /// Per k: share of inputs whose fastest choice is among cuBLASLt's first k candidates.
    pub best_in_cublaslt_top_k: BTreeMap<usize, f64>,
    /// Per k: share of inputs whose top k plus `extern_mm` holds a choice within 2 % of the
    /// fastest.
    pub near_best_top_k_ext: BTreeMap<usize, f64>,
    /// Per k: geometric mean of `extern_ms / min(top k plus extern_mm)` (autotuning the top k).
    pub autotune_top_k_geomean: BTreeMap<usize, f64>,
    /// Per k: geometric mean of `best_ms / min(top k plus extern_mm)` (share of the oracle).
    pub autotune_top_k_of_oracle: BTreeMap<usize, f64>,
    /// Per k: mean number of choices benchmarked.
    pub mean_benchmarked: BTreeMap<usize, f64>,
    /// Mean number of choices of an input.
    pub mean_choices: f64,
    /// Per k: total kernel time of the benchmarked choices over that of all choices.
    pub kernel_time_share: BTreeMap<usize, f64>,
}

/// ah-eval's geometric mean; NaN for no input.
fn geomean(v: impl Iterator<Item = f64>) -> f64 {
    ah_eval::gmean(&v.collect::<Vec<_>>()).unwrap_or(f64::NAN)
}

impl Evaluation {
    /// Summarises the inputs `keep` selects.
    pub fn summary(&self, keep: impl Fn(&InputEval) -> bool) -> Summary {
        let xs: Vec<&InputEval> = self.inputs.iter().filter(|i| keep(i)).collect();
        let n = xs.len();
        let share = |f: &dyn Fn(&InputEval) -> bool| {
            if n == 0 {
                f64::NAN
            } else {
                xs.iter().filter(|i| f(i)).count() as f64 / n as f64
            }
        };
        let speedups: Vec<f64> = xs.iter().map(|i| i.extern_ms / i.first_ms).collect();
        let mut s = Summary {
            n,
            first_geomean: geomean(speedups.iter().copied()),
            first_worst: speedups.iter().copied().fold(f64::INFINITY, f64::min),
            first_max: speedups.iter().copied().fold(0.0, f64::max),
            first_slower_10pct: share(&|i| i.first_ms > ah_eval::HARM_FACTOR * i.extern_ms),
            oracle_geomean: geomean(xs.iter().map(|i| i.extern_ms / i.best_ms)),
            extern_is_best: share(&|i| i.extern_ms <= i.best_ms),
            unranked: xs.iter().filter(|i| !i.ranked).count(),
            best_in_top_k: BTreeMap::new(),
            best_in_top_k_ext: BTreeMap::new(),
            best_in_cublaslt_top_k: BTreeMap::new(),
            near_best_top_k_ext: BTreeMap::new(),
            autotune_top_k_geomean: BTreeMap::new(),
            autotune_top_k_of_oracle: BTreeMap::new(),
            mean_benchmarked: BTreeMap::new(),
            mean_choices: xs.iter().map(|i| i.choices as f64).sum::<f64>() / n.max(1) as f64,
            kernel_time_share: BTreeMap::new(),
        };
        for &k in &self.ks {
            s.best_in_top_k
                .insert(k, share(&|i| i.top_k_ms[&k] <= i.best_ms));
            s.best_in_top_k_ext
                .insert(k, share(&|i| i.top_k_ext_ms[&k] <= i.best_ms));
            s.best_in_cublaslt_top_k
                .insert(k, share(&|i| i.cublaslt_top_k_ms[&k] <= i.best_ms));
            s.near_best_top_k_ext
                .insert(k, share(&|i| i.top_k_ext_ms[&k] <= 1.02 * i.best_ms));
            s.autotune_top_k_geomean.insert(
                k,
                geomean(xs.iter().map(|i| i.extern_ms / i.top_k_ext_ms[&k])),
            );
            s.autotune_top_k_of_oracle.insert(
                k,
                geomean(xs.iter().map(|i| i.best_ms / i.top_k_ext_ms[&k])),
            );
            s.mean_benchmarked.insert(
                k,
                xs.iter().map(|i| i.top_k_count[&k] as f64).sum::<f64>() / n.max(1) as f64,
            );
            let sub: f64 = xs.iter().map(|i| i.top_k_kernel_ms[&k]).sum();
            let all: f64 = xs.iter().map(|i| i.all_kernel_ms).sum();
            s.kernel_time_share.insert(k, sub / all);
        }
        s
    }
}

/// Errors of the evaluation.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The model cannot be evaluated (bad operations).
    #[error("model: {0}")]
    Model(#[from] ah_core::Error),
    /// The model and the log are for different optimizations.
    #[error("the model is for `{model}` but the log is for `{log}`")]
    Name {
        /// Model's name.
        model: String,
        /// Log's name.
        log: String,
    },
}

/// Evaluates `model` on every input of `log` for the given k values.
pub fn evaluate(model: &Model, log: &Log, ks: &[usize]) -> Result<Evaluation, EvalError> {
    // A log of the cuBLASLt runner written under its former name `mm` is a `cublaslt_mm` log.
    let log_name =
        ah_core::optimization::log_name(&log.metadata.name, log.choices.iter().map(String::as_str));
    if model.name != log_name {
        return Err(EvalError::Name {
            model: model.name.clone(),
            log: log_name.to_string(),
        });
    }
    let mut ev = ModelEvaluator::new(model)?;
    let mut out = Evaluation {
        inputs: Vec::new(),
        skipped: 0,
        ks: ks.to_vec(),
    };
    for (values, choices) in group_inputs(log) {
        let times = choice_times(choices);
        match evaluate_input(model, &mut ev, log, &values, &times, ks) {
            Some(e) => out.inputs.push(e),
            None => out.skipped += 1,
        }
    }
    Ok(out)
}

/// The log's inputs in first-appearance order: each one's feature values and, per choice in
/// logging order, its times.
fn group_inputs(log: &Log) -> Vec<(Vec<Value>, ChoiceTimes)> {
    let mut order: Vec<Vec<Value>> = Vec::new();
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for row in &log.rows {
        let key = row
            .values
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let next = order.len();
        let g = groups.entry(key).or_insert_with(|| (next, Vec::new()));
        if g.0 == next {
            order.push(row.values.to_vec());
        }
        let choice = log.choice_name(row);
        match g.1.iter_mut().find(|(c, _)| c == choice) {
            Some((_, v)) => v.push(row.feedback),
            None => g.1.push((choice.to_string(), vec![row.feedback])),
        }
    }
    let mut by_index: Vec<Group> = groups.into_values().collect();
    by_index.sort_by_key(|g| g.0);
    by_index
        .into_iter()
        .map(|(idx, choices)| (std::mem::take(&mut order[idx]), choices))
        .collect()
}

/// Each choice's median time; `extern_mm` and its twin (the next logged choice) are one
/// kernel, both given the faster of the two.
fn choice_times(choices: ChoiceTimes) -> Vec<(String, f64)> {
    let mut times: Vec<(String, f64)> = choices
        .into_iter()
        .map(|(c, mut v)| {
            let t = median(&mut v);
            (c, t)
        })
        .collect();
    if let Some(e) = times.iter().position(|(c, _)| c == EXTERN_MM) {
        if e + 1 < times.len() && AlgoConfig::parse(&times[e + 1].0).is_some() {
            let t = times[e].1.min(times[e + 1].1);
            times[e].1 = t;
            times[e + 1].1 = t;
        }
    }
    times
}

/// One input's evaluation; `None` (skipped) when `extern_mm` failed or fewer than two choices
/// ran.
fn evaluate_input(
    model: &Model,
    ev: &mut ModelEvaluator<'_>,
    log: &Log,
    values: &[Value],
    times: &[(String, f64)],
    ks: &[usize],
) -> Option<InputEval> {
    let finite = times.iter().filter(|(_, t)| t.is_finite()).count();
    let extern_ms = times
        .iter()
        .find(|(c, _)| c == EXTERN_MM)
        .map(|(_, t)| *t)
        .filter(|t| t.is_finite())?;
    if finite < 2 {
        return None;
    }
    let time_of = |c: &str| {
        times
            .iter()
            .find(|(x, _)| x == c)
            .map_or(f64::INFINITY, |(_, t)| *t)
    };
    let col = |name: &str| log.features.iter().position(|f| f == name);
    let best_ms = times.iter().map(|(_, t)| *t).fold(f64::INFINITY, f64::min);
    let ctx = log.metadata.row_context(&log.features, values);
    let logged = |c: &String| times.iter().any(|(x, _)| x == c);
    let ranking: Option<Vec<String>> = ev.ranked(&ctx).map(|r| {
        r.into_iter()
            .filter_map(|i| model.choices.get(i))
            .filter(|c| logged(c))
            .cloned()
            .collect()
    });
    let ranked = ranking.as_ref().is_some_and(|r| !r.is_empty());
    // The runtime's `get_choice` with `extern_mm` as the fallback: the decision (threshold
    // applied) when it names one of this input's choices, else cuBLASLt's pick.
    let first = match ev.decide(&ctx) {
        Decision::Choice(i) => model.choices.get(i).filter(|c| logged(c)).cloned(),
        Decision::Unsure(_) => None,
    }
    .unwrap_or_else(|| EXTERN_MM.to_string());
    let mut e = InputEval {
        description: describe(values, &col),
        model_shape: shape_of(values, &col)
            .is_some_and(|(m, k, n, ta, tb)| is_model_shape(m, k, n, ta, tb)),
        choices: times.len(),
        extern_ms,
        best_ms,
        first_ms: time_of(&first),
        first,
        ranked,
        top_k_ms: BTreeMap::new(),
        top_k_ext_ms: BTreeMap::new(),
        top_k_count: BTreeMap::new(),
        top_k_kernel_ms: BTreeMap::new(),
        all_kernel_ms: times
            .iter()
            .map(|(_, t)| *t)
            .filter(|t| t.is_finite())
            .sum(),
        cublaslt_top_k_ms: BTreeMap::new(),
    };
    let list = if ranked { ranking } else { None };
    add_top_k(&mut e, times, list.as_deref(), ks);
    Some(e)
}

/// The top-k columns of `e` for each k: the model's `ranking` cut at k (every choice when the
/// input is unranked, as the runtime benchmarks them all), with `extern_mm` added, and
/// cuBLASLt's own top k.
fn add_top_k(e: &mut InputEval, times: &[(String, f64)], ranking: Option<&[String]>, ks: &[usize]) {
    let time_of = |c: &str| {
        times
            .iter()
            .find(|(x, _)| x == c)
            .map_or(f64::INFINITY, |(_, t)| *t)
    };
    // cuBLASLt's order is the logging order; a configuration-id log repeats its first pick
    // right after extern_mm (the twin), which is skipped.
    let twin = times.len() > 1 && AlgoConfig::parse(&times[1].0).is_some();
    let order: Vec<f64> = times
        .iter()
        .enumerate()
        .filter(|(j, _)| !(twin && *j == 1))
        .map(|(_, (_, t))| *t)
        .collect();
    for &k in ks {
        let top: Vec<&str> = match ranking {
            Some(list) => list.iter().take(k).map(String::as_str).collect(),
            None => times.iter().map(|(c, _)| c.as_str()).collect(),
        };
        let mut with_ext = top.clone();
        if !with_ext.contains(&EXTERN_MM) {
            with_ext.push(EXTERN_MM);
        }
        let min_of = |cs: &[&str]| cs.iter().map(|c| time_of(c)).fold(f64::INFINITY, f64::min);
        e.top_k_ms.insert(k, min_of(&top));
        e.top_k_ext_ms.insert(k, min_of(&with_ext));
        e.top_k_count.insert(k, with_ext.len());
        e.cublaslt_top_k_ms.insert(
            k,
            order.iter().take(k).copied().fold(f64::INFINITY, f64::min),
        );
        e.top_k_kernel_ms.insert(
            k,
            with_ext
                .iter()
                .map(|c| time_of(c))
                .filter(|t| t.is_finite())
                .sum(),
        );
    }
}

type Shape = (usize, usize, usize, bool, bool);

/// Per choice in logging order, the times of one input.
type ChoiceTimes = Vec<(String, Vec<f64>)>;

/// One input's rows: its first-appearance index and its [`ChoiceTimes`].
type Group = (usize, ChoiceTimes);

fn shape_of(values: &[Value], col: &dyn Fn(&str) -> Option<usize>) -> Option<Shape> {
    let get = |name: &str| -> Option<usize> {
        let v = values.get(col(name)?)?.as_f64()?;
        (v >= 0.0).then_some(v as usize)
    };
    let (m, k, n) = (get("m")?, get("k")?, get("n")?);
    // Row-major strides are (k, 1) for mat1 and (n, 1) for mat2; anything else is the
    // transposed view.
    let ta = !(get("mat1_stride_0")? == k && get("mat1_stride_1")? == 1);
    let tb = !(get("mat2_stride_0")? == n && get("mat2_stride_1")? == 1);
    Some((m, k, n, ta, tb))
}

fn describe(values: &[Value], col: &dyn Fn(&str) -> Option<usize>) -> String {
    let dtype = col("mat1_dtype")
        .and_then(|i| values.get(i))
        .map(|v| v.to_string().replace("torch.", ""))
        .unwrap_or_default();
    match shape_of(values, col) {
        Some((m, k, n, ta, tb)) => format!(
            "{m}x{k}x{n} {dtype}{}{}",
            if ta { " A^T" } else { "" },
            if tb { " B^T" } else { "" }
        ),
        None => "?".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ah_core::model::{Column, Node, Provenance, RankingSpec, TrainingInfo, Tree};
    use ah_core::DeviceIdentity;
    use ah_log::ReadOptions;

    fn log() -> Log {
        let text = "\
{\"shared_memory\": 232448, \"device_capa\": [9, 0], \"name\": \"mm\", \"numerical_features\": [\"m\", \"k\", \"n\", \"mat1_stride_0\", \"mat1_stride_1\", \"mat2_stride_0\", \"mat2_stride_1\"], \"categorical_features\": [\"mat1_dtype\"]}
m,k,n,mat1_dtype,mat1_stride_0,mat1_stride_1,mat2_stride_0,mat2_stride_1,choice,feedback
64,32,16,torch.float16,32,1,16,1,extern_mm,1.0
64,32,16,torch.float16,32,1,16,1,algo1-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0,1.1
64,32,16,torch.float16,32,1,16,1,algo2-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0,0.5
64,32,16,torch.float16,32,1,16,1,algo3-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0,2.0
128,32,16,torch.float16,32,1,16,1,extern_mm,1.0
128,32,16,torch.float16,32,1,16,1,algo2-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0,0.9
128,32,16,torch.float16,32,1,16,1,algo3-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0,1.2
128,32,16,torch.float16,32,1,16,1,algo1-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0,0.8
128,32,16,torch.float16,32,1,16,1,extern_mm,3.0
";
        Log::from_reader(
            std::path::Path::new("t.txt"),
            text.as_bytes(),
            ReadOptions { strict: true },
        )
        .unwrap()
    }

    /// m <= 100: ranks algo2-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0, algo3-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0, extern_mm; else algo3-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0, algo1-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0.
    fn model() -> Model {
        Model {
            schema_version: ah_core::model::MODEL_SCHEMA_VERSION,
            heuristic_name: "MMRankingTest".into(),
            name: "cublaslt_mm".into(),
            kind: ah_core::model::ModelKind::Decision,
            precondition: DeviceIdentity::H100,
            choices: vec![
                "algo1-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0".into(),
                "algo2-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0".into(),
                "algo3-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0".into(),
                "extern_mm".into(),
            ],
            default_choice: Some("extern_mm".into()),
            numerical_features: vec!["m".into()],
            categorical_features: vec![],
            operations: vec![],
            columns: vec![Column::Numeric { name: "m".into() }],
            tree: Tree {
                nodes: vec![
                    Node::Split {
                        column: 0,
                        threshold: 100.0,
                        left: 1,
                        right: 2,
                    },
                    Node::Leaf {
                        value: vec![0.0, 0.6, 0.3, 0.1],
                        samples: 3,
                        unsafe_leaf: false,
                    },
                    Node::Leaf {
                        value: vec![0.4, 0.0, 0.6, 0.0],
                        samples: 3,
                        unsafe_leaf: false,
                    },
                ],
            },
            threshold: 0.0,
            ranking: Some(RankingSpec {
                top_k: 2,
                always_included: vec!["extern_mm".into()],
            }),
            feature_ranges: vec![],
            range_guard: false,
            training: TrainingInfo {
                mode: "upstream".into(),
                learner: "cart".into(),
                criterion: "entropy".into(),
                max_depth: Some(5),
                min_samples_leaf: 0.01,
                seed: 42,
                extra: BTreeMap::new(),
            },
            metrics: BTreeMap::new(),
            provenance: Provenance {
                dataset_hash: String::new(),
                dataset: "t.txt".into(),
                tool_version: "0".into(),
                command: String::new(),
            },
        }
    }

    #[test]
    fn first_choice_top_k_and_twin_handling() {
        let e = evaluate(&model(), &log(), &[1, 2]).unwrap();
        assert_eq!(e.inputs.len(), 2);
        let a = &e.inputs[0];
        // extern_mm (1.0) and its twin algo1-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0 (1.1) are one kernel: both 1.0.
        assert_eq!((a.extern_ms, a.best_ms), (1.0, 0.5));
        assert_eq!(
            (a.first.as_str(), a.first_ms),
            ("algo2-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0", 0.5)
        );
        assert_eq!(a.top_k_ms[&1], 0.5);
        assert_eq!(
            a.top_k_count[&1], 2,
            "algo2-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0 + extern_mm"
        );
        assert_eq!(a.description, "64x32x16 float16");
        let b = &e.inputs[1];
        // extern_mm: median(1.0, 3.0) = 2.0, twin algo2-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0 0.9 -> both 0.9.
        assert_eq!((b.extern_ms, b.best_ms), (0.9, 0.8));
        assert_eq!(
            (b.first.as_str(), b.first_ms),
            ("algo3-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0", 1.2)
        );
        assert_eq!(b.top_k_ms[&1], 1.2);
        assert_eq!((b.top_k_ms[&2], b.top_k_ext_ms[&2]), (0.8, 0.8));
        let s = e.summary(|_| true);
        assert_eq!(s.n, 2);
        assert!((s.first_geomean - (2.0f64 * 0.75).sqrt()).abs() < 1e-12);
        assert_eq!(s.first_worst, 0.75);
        assert_eq!(s.first_slower_10pct, 0.5);
        assert_eq!(s.best_in_top_k[&1], 0.5);
        assert_eq!(s.best_in_top_k[&2], 1.0);
        assert_eq!(s.extern_is_best, 0.0);
        assert_eq!(s.mean_choices, 4.0);
        // cuBLASLt's order: input 1 is extern_mm, B, C (twin A skipped); input 2 extern_mm, C, A.
        assert_eq!(e.inputs[0].cublaslt_top_k_ms[&2], 0.5);
        assert_eq!(e.inputs[1].cublaslt_top_k_ms[&2], 0.9);
        assert_eq!(s.best_in_cublaslt_top_k[&1], 0.0);
        assert_eq!(s.best_in_cublaslt_top_k[&2], 0.5);
    }

    #[test]
    fn a_model_for_another_name_is_refused() {
        let mut m = model();
        m.name = "pad_mm".into();
        let err = evaluate(&m, &log(), &[1]).unwrap_err();
        assert!(err.to_string().contains("`pad_mm`"), "{err}");
    }
}
