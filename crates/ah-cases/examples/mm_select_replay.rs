//! Replays an mm log through the select-algorithm runtime, as tuned_mm uses it: for every
//! input, a `SelectAlgorithm` in use mode over the input's choices asks the ranking heuristic
//! for its top k (plus `extern_mm`), and the `Autotuner` benchmarks only those (the
//! "benchmark" returns the time the log holds), then picks the fastest. Prints, per k, how many
//! choices were benchmarked and how the pick compares with cuBLASLt's own.
//!
//! The heuristic is the model JSON (`ah-train --ranking`), served through the
//! `LearnedHeuristic` interface the generated code implements, so the runtime path is the one a
//! program linking the generated crate takes.
//!
//! ```text
//! cargo run --release -p ah-cases --example mm_select_replay -- MODEL.json data/mm_h100_eval.txt
//! ```
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use ah_bench::runners::mm::EXTERN_MM;
use ah_core::heuristic::{LearnedHeuristic, Prediction, UnsureKind};
use ah_core::model::{leaf_best_choices, Node};
use ah_core::{Context, DeviceIdentity, Model, ModelEvaluator, Registry};
use ah_log::{Log, ReadOptions};
use ah_runtime::select::{AutotuneRequest, Autotuner, SelectAlgorithm};
use ah_runtime::{Config, DeviceInfo};
use anyhow::Context as _;
use clap::Parser;

/// Replay an mm log through SelectAlgorithm + Autotuner with a ranking heuristic.
#[derive(Debug, Parser)]
struct Args {
    /// The model JSON written by `ah-train --ranking`.
    model: PathBuf,
    /// An mm log.
    log: PathBuf,
    /// k values.
    #[arg(long, value_delimiter = ',', default_value = "1,3,5,10")]
    ks: Vec<usize>,
}

/// A model served through `LearnedHeuristic` (leaf distributions leaked once, as generated
/// code holds them in statics).
struct ModelHeuristic {
    model: &'static Model,
    choices: &'static [&'static str],
    leaves: BTreeMap<usize, &'static [(f64, u16)]>,
    evaluator: Mutex<ModelEvaluator<'static>>,
}

impl ModelHeuristic {
    fn new(model: &'static Model) -> anyhow::Result<Self> {
        let choices: Vec<&'static str> = model
            .choices
            .iter()
            .map(|c| &*Box::leak(c.clone().into_boxed_str()))
            .collect();
        let mut leaves = BTreeMap::new();
        for (i, node) in model.tree.nodes.iter().enumerate() {
            if let Node::Leaf { value, .. } = node {
                let dist: Vec<(f64, u16)> = leaf_best_choices(value)
                    .into_iter()
                    .map(|(p, c)| (p, c as u16))
                    .collect();
                leaves.insert(i, &*Box::leak(dist.into_boxed_slice()));
            }
        }
        Ok(Self {
            model,
            choices: Box::leak(choices.into_boxed_slice()),
            leaves,
            evaluator: Mutex::new(ModelEvaluator::new(model)?),
        })
    }
}

impl LearnedHeuristic for ModelHeuristic {
    fn name(&self) -> &'static str {
        &self.model.name
    }
    fn heuristic_name(&self) -> &'static str {
        &self.model.heuristic_name
    }
    fn choices(&self) -> &'static [&'static str] {
        self.choices
    }
    fn device(&self) -> DeviceIdentity {
        self.model.precondition
    }
    fn confidence_threshold(&self) -> f64 {
        self.model.threshold
    }
    fn predict(&self, context: &Context, _choice: Option<usize>) -> Prediction {
        let mut ev = self
            .evaluator
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match ev.leaf(context) {
            Ok(leaf) => match &self.model.tree.nodes[leaf] {
                Node::Leaf {
                    unsafe_leaf: true, ..
                } => Prediction::Unsure(UnsureKind::UnsafeLeaf),
                _ => Prediction::Distribution(self.leaves[&leaf]),
            },
            Err(_) => Prediction::Unsure(UnsureKind::MissingFeature("a model feature")),
        }
    }
}

/// One sample: its feature values and `(choice, ms)` in logging order.
type Sample = (Vec<ah_core::Value>, Vec<(String, f64)>);

#[derive(Default)]
struct Totals {
    inputs: usize,
    ranked: usize,
    benchmarked: usize,
    all: usize,
    log_speedup: f64,
    worst: f64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let model: &'static Model = Box::leak(Box::new(Model::load(&args.model)?));
    let heuristic: &'static ModelHeuristic = Box::leak(Box::new(ModelHeuristic::new(model)?));
    let mut registry = Registry::new();
    registry.register(heuristic);
    let log = Log::read(&args.log, ReadOptions { strict: false })
        .with_context(|| format!("reading {}", args.log.display()))?;
    let config =
        Config::from_vars(|k| (k == "AUTOHEURISTIC_USE").then(|| "cublaslt_mm".to_string()));
    let device = DeviceInfo::new(log.metadata.device(), "replay");
    // Inputs in log order, each with its choices in logging order and their times.
    let mut inputs: Vec<Sample> = Vec::new();
    for row in &log.rows {
        let choice = log.choice_name(row).to_string();
        match inputs.last_mut() {
            Some((v, cs)) if v[..] == row.values[..] && !cs.iter().any(|(c, _)| *c == choice) => {
                cs.push((choice, row.feedback))
            }
            _ => inputs.push((row.values.to_vec(), vec![(choice, row.feedback)])),
        }
    }
    let always = vec![EXTERN_MM.to_string()];
    let mut totals: BTreeMap<usize, Totals> = BTreeMap::new();
    for (values, times) in &inputs {
        let Some(ext) = times.iter().find(|(c, _)| c == EXTERN_MM).map(|(_, t)| *t) else {
            continue;
        };
        if !ext.is_finite() {
            continue;
        }
        let ctx = log.metadata.row_context(&log.features, values);
        let ids: Vec<String> = times.iter().map(|(c, _)| c.clone()).collect();
        let key = format!("{values:?}");
        let sel = SelectAlgorithm::builder("cublaslt_mm", ids.clone(), key.clone())
            .context(ctx)
            .config(config.clone())
            .device(device.clone())
            .registry(&registry)
            .build()?;
        for &k in &args.ks {
            let top = sel.get_top_k_choices(k, &always);
            let ranked = top.is_some();
            // No ranking: tuned_mm benchmarks every choice.
            let choices = top.unwrap_or_else(|| ids.clone());
            let request = AutotuneRequest {
                name: "cublaslt_mm".into(),
                inputs_key: key.clone(),
                choices: choices.clone(),
                use_cache: false,
            };
            let mut timed = 0usize;
            let result = Autotuner::without_cache().autotune(&request, |c| {
                timed += 1;
                times
                    .iter()
                    .find(|(x, _)| x == c)
                    .map_or(f64::INFINITY, |(_, t)| *t)
            });
            let pick_time = result
                .choice
                .as_ref()
                .and_then(|c| times.iter().find(|(x, _)| x == c))
                .map_or(ext, |(_, t)| *t);
            let t = totals.entry(k).or_insert(Totals {
                worst: f64::INFINITY,
                ..Totals::default()
            });
            t.inputs += 1;
            t.ranked += usize::from(ranked);
            t.benchmarked += timed;
            t.all += ids.len();
            let s = ext / pick_time;
            t.log_speedup += s.ln();
            t.worst = t.worst.min(s);
        }
    }
    println!("| k | inputs | ranked | choices benchmarked | of all | pick vs extern_mm: geomean | worst |");
    println!("|---|---|---|---|---|---|---|");
    for (k, t) in &totals {
        println!(
            "| {k} | {} | {} | {} | {} ({:.1} %) | {:.4} | {:.4} |",
            t.inputs,
            t.ranked,
            t.benchmarked,
            t.all,
            100.0 * t.benchmarked as f64 / t.all as f64,
            (t.log_speedup / t.inputs as f64).exp(),
            t.worst
        );
    }
    Ok(())
}
