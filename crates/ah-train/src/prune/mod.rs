//! Training for compile cost: which of Inductor's max-autotune GEMM choices to keep.
//!
//! Data: an `inductor_mm` log (`ah-collect --name inductor_mm`) and its extras sidecar, which
//! holds each choice's compile-time price and compiled truth of cuBLAS and of Inductor's pick.
//! Model: a policy tree ([`tree`]) whose leaves keep cuBLAS only, cuBLAS plus a few template
//! choices, or the full list (unsure: default max-autotune). A leaf's policy minimises, over
//! its training GEMMs, first the harmful picks (more than [`PruneParams::harm`] slower than
//! the faster of cuBLAS and Inductor's pick, in compiled truth), then the seconds a job pays:
//! the kept choices' compile-time price plus the run-time loss over
//! [`PruneParams::horizon`] calls. Labels are compiled truth, not Inductor's benchmark times,
//! which on small GEMMs favour Triton where cuBLAS is faster (docs/inductor.md).

pub mod causes;
pub mod data;
pub mod drop;
mod error;
pub mod eval;
pub mod family;
pub mod folds;
pub mod grow;
pub mod guard;
pub mod keymap;
pub mod misses;
pub mod policy;
pub mod pricing;
pub mod retime;
pub mod seen;
pub mod sizing;
pub mod tree;
pub mod unfit;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use causes::Causes;
pub use data::{load, GemmOp, Sample, Samples};
pub use drop::NeverNear;
pub use error::PruneError;
pub use eval::{cross_validate, GroupResults, RuleResult, Scored};
pub use folds::CvSplit;
pub use grow::Growth;
pub use guard::SearchGuard;
pub use misses::Miss;
pub use policy::{LeafRule, Policy, Weighing};
pub use pricing::Pricing;
pub use seen::FeatureSource;
pub use tree::{Node, Quantity, Test};

/// Parameters of [`train`], linfa-style: `Default` is the CLI's default, [`Self::check`]
/// refuses what cannot work.
#[derive(Debug, Clone, PartialEq)]
pub struct PruneParams {
    /// Calls of a GEMM a job makes (default 100,000: a few thousand steps of a model that
    /// runs the GEMM tens of times each): a run-time loss counts this many times.
    pub horizon: f64,
    /// A pick more than this much slower than the faster of cuBLAS and Inductor's pick is
    /// harmful (default 0.03).
    pub harm: f64,
    /// Seconds of autotuning one harmful pick is worth avoiding (default infinite: a leaf
    /// avoids harmful picks first, whatever they cost). A finite price trades harmful picks
    /// against autotuning time where avoiding them costs most.
    pub harm_price_s: f64,
    /// Per op ([`GemmOp::index`]), a price that replaces `harm_price_s` for its GEMMs (default
    /// none): `--op-harm-price bmm=30`.
    pub op_harm_price_s: [Option<f64>; 3],
    /// Fewest training GEMMs in a leaf (default 3).
    pub min_leaf: usize,
    /// Deepest split level (default 4).
    pub max_depth: usize,
    /// Fewest GEMMs of a leaf on which the template choices it keeps beat cuBLAS alone by more
    /// than [`Self::harm`] (default 1). Fewer, and the leaf keeps cuBLAS only or the full
    /// list.
    pub min_support: usize,
    /// Fewest GEMMs of a leaf on which cuBLAS alone is within [`Self::harm`] of the best for
    /// the leaf to decide cuBLAS only (default 0: no such bound); fewer, and it keeps a list or
    /// the full list ([`LeafRule::min_extern_support`]).
    pub min_extern_support: usize,
    /// Whether a leaf may leave a GEMM to Inductor's full list (default true); without it a
    /// leaf keeps at most its top 8 templates.
    pub full_list: bool,
    /// The most template choices a leaf keeps (default 8, [`policy::MAX_KEEP`]).
    pub max_keep: usize,
    /// Whether each final leaf also weighs lists grown one choice at a time (default true; see
    /// [`policy::grown_lists`]) besides the top-k prefixes of its ranking.
    pub grown_lists: bool,
    /// Whether the root splits GEMMs below 16-byte alignment of a leading dimension from the
    /// rest before anything else ([`Test::cublas_aligned`]; default false).
    pub alignment_first: bool,
    /// Whether the tree may split on `k` over the larger of `m` and `n`
    /// ([`tree::Quantity::KRatio`]; default false, which the shipped handler was trained
    /// without).
    pub k_ratio: bool,
    /// Whether the tree may split on a GEMM's narrowest side, the smallest of `m`, `k` and `n`
    /// ([`tree::Quantity::MinSide`]; default false, which the shipped handler was trained
    /// without).
    pub min_side: bool,
    /// fp32 GEMMs without TF32 of more than this many multiply-adds (`batch * m * k * n`) are
    /// never decided cuBLAS only: where a leaf would, they keep the full list
    /// ([`SearchGuard`]; default none; the shipped handler is trained with 1e9).
    pub fp32_full_list_above: Option<f64>,
    /// With [`Self::fp32_full_list_above`]: guarded GEMMs keep the list learned on all of them
    /// together instead of the full list ([`SearchGuard::learned_list`]; default false).
    pub fp32_guard_list: bool,
    /// With [`Self::fp32_guard_list`]: the price of a harmful pick at which that list is weighed
    /// against the full list, where it is not [`Self::harm_price_s`] ([`SearchGuard::harm_price_s`];
    /// default none).
    pub fp32_guard_price_s: Option<f64>,
    /// Strict-fp32 GEMMs the tree leaves to the full list go without the template configs
    /// offered on at least this many strict-fp32 training GEMMs and never within
    /// [`Self::harm`] of the best choice of any ([`NeverNear`]; default none: the full list).
    pub fp32_drop_never_near: Option<usize>,
    /// Score searches whose fastest benchmark is under this many ms as the handler's re-timing
    /// picks ([`retime`]; default none: as Inductor's benchmark picks, which the shipped
    /// handler was trained with).
    pub retime_below_ms: Option<f64>,
    /// Score a kept list whose template choices on a GEMM all need more shared memory than the
    /// device has as the handler runs it, the full list ([`data::Samples::mark_unfit`]; default
    /// off: the shipped tree was grown without it, and the handler applies the rule anyway).
    pub model_unfit: bool,
    /// Folds of the cross-validation (default 5).
    pub folds: usize,
    /// Times the cross-validation is run, each over another split into folds, its figures the
    /// means (default 1; the grid uses more: [`folds::of_groups`]).
    pub cv_repeats: usize,
    /// How the cross-validation splits GEMMs into folds (default [`CvSplit::Gemm`]).
    pub cv_split: CvSplit,
    /// Template choices kept by the fixed top-k baseline (default 10, PyTorch's `top_k`).
    pub top_k: usize,
    /// Train on the first GEMMs of the logs only (a log grows as its collection resumes; a
    /// shipped heuristic names the GEMMs it was made from): one count, over the logs in a row,
    /// or one per log ([`data::load_logs_first`]). Empty: all.
    pub first: Vec<usize>,
    /// How a kept list's compile-time price is reckoned (default [`Pricing::Logged`]).
    pub pricing: Pricing,
    /// Which features the GEMMs are trained on (default [`FeatureSource::Logged`]).
    pub features: FeatureSource,
}

impl Default for PruneParams {
    fn default() -> Self {
        PruneParams {
            horizon: 1e5,
            harm: 0.03,
            harm_price_s: f64::INFINITY,
            op_harm_price_s: [None; 3],
            min_leaf: 3,
            max_depth: 4,
            min_support: 1,
            min_extern_support: 0,
            full_list: true,
            max_keep: policy::MAX_KEEP,
            grown_lists: true,
            alignment_first: false,
            k_ratio: false,
            min_side: false,
            fp32_full_list_above: None,
            fp32_guard_list: false,
            fp32_guard_price_s: None,
            fp32_drop_never_near: None,
            retime_below_ms: None,
            model_unfit: false,
            folds: 5,
            cv_repeats: 1,
            cv_split: CvSplit::Gemm,
            top_k: 10,
            first: Vec::new(),
            pricing: Pricing::Logged,
            features: FeatureSource::Logged,
        }
    }
}

impl PruneParams {
    /// How the tree grows under these parameters, on GEMMs of these features (header order)
    /// of which `categorical` are categorical.
    pub fn growth<'a>(&self, features: &'a [String], categorical: &'a [String]) -> Growth<'a> {
        Growth {
            features,
            categorical,
            weighing: self.weighing(),
            min_leaf: self.min_leaf,
            max_depth: self.max_depth,
            leaf_rule: LeafRule {
                min_support: self.min_support,
                min_extern_support: self.min_extern_support,
                full_list: self.full_list,
                grown: self.grown_lists,
                max_keep: self.max_keep,
            },
            first_split: self.alignment_first.then(Test::cublas_aligned),
            k_ratio: self.k_ratio,
            min_side: self.min_side,
            guard: self.fp32_full_list_above.map(|above_work| SearchGuard {
                above_work,
                learned_list: self.fp32_guard_list,
                harm_price_s: self.fp32_guard_price_s,
            }),
            drop: self.fp32_drop_never_near.map(|min_seen| NeverNear {
                min_seen,
                bound: self.harm,
            }),
        }
    }

    /// Refuses parameters that cannot train.
    pub fn check(&self) -> Result<(), PruneError> {
        let bad = |m: &str| Err(PruneError::Params(m.to_string()));
        if !(self.horizon.is_finite() && self.horizon >= 0.0) {
            return bad("--horizon must be a finite number of calls, 0 or more");
        }
        if !(self.harm.is_finite() && self.harm >= 0.0) {
            return bad("--harm must be a finite fraction, 0 or more (0.03: 3 %)");
        }
        if self.harm_price_s.is_nan() || self.harm_price_s < 0.0 {
            return bad("--harm-price must be a number of seconds, 0 or more (or inf)");
        }
        if self
            .op_harm_price_s
            .iter()
            .flatten()
            .any(|p| p.is_nan() || *p < 0.0)
        {
            return bad("--op-harm-price OP=S: S must be a number of seconds, 0 or more (or inf)");
        }
        if let Some(work) = self.fp32_full_list_above {
            if !(work.is_finite() && work >= 0.0) {
                return bad(
                    "--fp32-full-list-above must be a finite number of multiply-adds, 0 or more",
                );
            }
            if !self.full_list {
                return bad("--fp32-full-list-above leaves GEMMs to the full list, which --no-full-list forbids: give one of them");
            }
        }
        if self.fp32_guard_list && self.fp32_full_list_above.is_none() {
            return bad("--fp32-guard-list says what the GEMMs --fp32-full-list-above guards keep: give both");
        }
        if self.fp32_guard_price_s.is_some() && !self.fp32_guard_list {
            return bad("--fp32-guard-price prices the list --fp32-guard-list keeps: give both");
        }
        if self
            .fp32_guard_price_s
            .is_some_and(|p| !p.is_finite() || p < 0.0)
        {
            return bad("--fp32-guard-price must be a finite number of seconds, 0 or more");
        }
        if self
            .retime_below_ms
            .is_some_and(|ms| !ms.is_finite() || ms <= 0.0)
        {
            return bad("--retime-below-ms must be a finite number of milliseconds above 0");
        }
        if self.fp32_drop_never_near == Some(0) {
            return bad("--fp32-drop-never-near SEEN: a config must have been offered on at least 1 GEMM to be judged");
        }
        if self.fp32_drop_never_near.is_some() && !self.full_list {
            return bad("--fp32-drop-never-near trims the full list, which --no-full-list forbids: give one of them");
        }
        if self.min_leaf == 0
            || self.folds < 2
            || self.top_k == 0
            || self.cv_repeats == 0
            || self.max_keep == 0
        {
            return bad(
                "--min-leaf, --top-k, --cv-repeats and --max-keep must be at least 1 and --folds at least 2",
            );
        }
        Ok(())
    }

    /// Trees [`train`] grows: one per fold of each cross-validation, then the final one.
    pub fn trees(&self) -> u64 {
        (self.folds * self.cv_repeats + 1) as u64
    }

    /// The weighing of outcomes.
    pub fn weighing(&self) -> Weighing {
        Weighing {
            horizon: self.horizon,
            harm: self.harm,
            harm_price_s: self.harm_price_s,
            op_harm_price_s: self.op_harm_price_s,
        }
    }

    /// The ops priced apart, by name, with their price (`None`: infinite).
    fn op_prices(&self) -> BTreeMap<String, Option<f64>> {
        GemmOp::ALL
            .into_iter()
            .filter_map(|op| {
                let p = self.op_harm_price_s[op.index()]?;
                Some((op.name().to_string(), Some(p).filter(|p| p.is_finite())))
            })
            .collect()
    }
}

/// A trained pruning heuristic, as `ah-codegen` reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PruneModel {
    /// `"inductor_choices"`.
    pub kind: String,
    /// The heuristic's name.
    pub name: String,
    /// The device identity of the training log: capability.
    pub device_capa: (u32, u32),
    /// The training log's `shared_memory`: bytes a block may use on the device. A kept list
    /// whose configs all need more is left to the full list ([`data::Samples::mark_unfit`];
    /// 0: not known, never).
    #[serde(default)]
    pub shared_memory: u64,
    /// The PyTorch version the data was collected with (`major.minor`).
    pub torch: String,
    /// Logged feature names, header order.
    pub features: Vec<String>,
    /// Which of them are categorical.
    pub categorical: Vec<String>,
    /// The ops the heuristic decides for.
    pub ops: Vec<String>,
    /// The tree.
    pub tree: Node,
    /// How it was trained.
    pub horizon: f64,
    /// The harm bound.
    pub harm: f64,
    /// `--harm-price`, where finite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harm_price_s: Option<f64>,
    /// `--op-harm-price`: the ops priced apart, with their price (`null`: infinite).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub op_harm_price_s: BTreeMap<String, Option<f64>>,
    /// How kept lists were priced (`--prices`; `logged` is not written).
    #[serde(default, skip_serializing_if = "is_logged")]
    pub prices: Pricing,
    /// `--fp32-full-list-above`: the multiply-adds above which the tree's cuBLAS-only leaves
    /// leave fp32 GEMMs without TF32 to the full list ([`SearchGuard`]; none: not guarded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_full_list_above: Option<f64>,
    /// `--fp32-guard-list`: those GEMMs keep a list learned for them (false: the full list).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fp32_guard_list: bool,
    /// `--fp32-guard-price`: the harm price that list was weighed at (none: the tree's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_guard_price_s: Option<f64>,
    /// `--fp32-drop-never-near`: how often a config must have been offered to strict-fp32
    /// training GEMMs to be dropped from their full lists ([`NeverNear`]; none: not trimmed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32_drop_never_near: Option<usize>,
    /// `--retime-below-ms`: searches under this fastest benchmark were scored as the handler's
    /// re-timing picks ([`retime`]; none: as Inductor's benchmark picks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retime_below_ms: Option<f64>,
    /// `--model-unfit`: kept lists that cannot run on a GEMM were scored as the full list.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub model_unfit: bool,
    /// Training GEMMs.
    pub gemms: usize,
    /// Cross-validation, side by side with the fixed rules.
    pub cross_validation: Vec<RuleResult>,
    /// Splits into folds `cross_validation` is the mean of (`--cv-repeats`; 1 is not written).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub cv_repeats: usize,
    /// How those folds split the GEMMs (`--cv-split`; `gemm` is not written).
    #[serde(default, skip_serializing_if = "is_gemm_split")]
    pub cv_split: CvSplit,
    /// `cross_validation` on each op's GEMMs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cross_validation_by_op: Vec<GroupResults>,
    /// `cross_validation` on each log's GEMMs, where there are several logs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cross_validation_by_log: Vec<GroupResults>,
    /// The learned rule's worst cross-validated harmful picks ([`misses::worst`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cross_validation_worst: Vec<Miss>,
    /// The learned rule's cross-validated harmful picks by cause ([`Causes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cross_validation_causes: Vec<Causes>,
    /// The log's GEMMs after the training ones (`--first`), side by side with the fixed rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out: Vec<RuleResult>,
    /// `held_out` on each op's GEMMs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out_by_op: Vec<GroupResults>,
    /// `held_out` on each log's GEMMs, where they come from several logs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out_by_log: Vec<GroupResults>,
    /// The learned rule's worst harmful picks of `held_out`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out_worst: Vec<Miss>,
    /// The learned rule's harmful picks of `held_out` by cause.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out_causes: Vec<Causes>,
}

/// Trains on `logs` (one or more of one runner and device, each with its extras sidecar
/// `LOG.extras.jsonl`), their GEMMs in the order given. `progress` is called once per tree
/// grown, [`PruneParams::trees`] times in all.
pub fn train(
    logs: &[PathBuf],
    name: &str,
    params: &PruneParams,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(PruneModel, Samples), PruneError> {
    params.check()?;
    let data = load_for_training(logs, params)?;
    let meta = &data.metadata;
    let categorical = meta.categorical_features.clone();
    let growth = params.growth(&data.features, &categorical);
    let all: Vec<&Sample> = data.samples.iter().collect();
    // The tree and the cross-validation's trees grow side by side, each as it would alone.
    let (tree, cross_validation) = rayon::join(
        || {
            let tree = growth.grow(&all);
            progress(1);
            tree
        },
        || {
            cross_validate(
                &data.samples,
                &growth,
                (params.cv_split, params.folds),
                params.top_k,
                params.cv_repeats,
                progress,
            )
        },
    );
    let held_out = if data.later.is_empty() {
        Scored::default()
    } else {
        let w = params.weighing();
        eval::held_out(
            &tree,
            &data.samples,
            &data.later,
            &data.features,
            params.top_k,
            &w,
        )
    };
    let model = PruneModel {
        kind: "inductor_choices".into(),
        name: name.to_string(),
        device_capa: meta.device_capa,
        shared_memory: meta.shared_memory,
        torch: torch_version(&ah_log::extras_path(&logs[0])),
        features: data.features.clone(),
        categorical,
        ops: vec!["mm".into(), "addmm".into(), "bmm".into()],
        tree,
        horizon: params.horizon,
        harm: params.harm,
        harm_price_s: Some(params.harm_price_s).filter(|p| p.is_finite()),
        op_harm_price_s: params.op_prices(),
        prices: params.pricing,
        fp32_full_list_above: params.fp32_full_list_above,
        fp32_guard_list: params.fp32_guard_list,
        fp32_guard_price_s: params.fp32_guard_price_s,
        fp32_drop_never_near: params.fp32_drop_never_near,
        retime_below_ms: params.retime_below_ms,
        model_unfit: params.model_unfit,
        gemms: data.samples.len(),
        cross_validation: cross_validation.all,
        cv_repeats: params.cv_repeats,
        cv_split: params.cv_split,
        cross_validation_by_op: cross_validation.by_op,
        cross_validation_by_log: cross_validation.by_log,
        cross_validation_worst: cross_validation.worst,
        cross_validation_causes: cross_validation.causes,
        held_out: held_out.all,
        held_out_by_op: held_out.by_op,
        held_out_by_log: held_out.by_log,
        held_out_worst: held_out.worst,
        held_out_causes: held_out.causes,
    };
    Ok((model, data))
}

/// The GEMMs of `logs` as `params` asks (`--first`, `--features`, `--prices`), refused where
/// too few have compiled truth to train on.
fn load_for_training(logs: &[PathBuf], params: &PruneParams) -> Result<Samples, PruneError> {
    let names = || {
        let names: Vec<String> = logs.iter().map(|l| l.display().to_string()).collect();
        names.join(", ")
    };
    let mut data = match params.first[..] {
        [] => data::load_logs(logs, params.features)?,
        [n] => {
            let mut data = data::load_logs(logs, params.features)?;
            data::check_first(&names(), n, data.samples.len())?;
            data.later = data.samples.split_off(n);
            data.size_offers();
            data
        }
        _ => data::load_logs_first(logs, &params.first, params.features)?,
    };
    data.reprice(params.pricing);
    if params.model_unfit {
        data.mark_unfit();
    }
    data.model_retime(params.retime_below_ms);
    if data.samples.len() < 2 * params.min_leaf {
        return Err(PruneError::Params(format!(
            "{}: {} GEMMs with compiled truth; at least {} are needed (collect more with ah-collect --name inductor_mm)",
            names(),
            data.samples.len(),
            2 * params.min_leaf
        )));
    }
    Ok(data)
}

/// `major.minor` of the PyTorch the extras were measured with (`""` if unknown).
fn torch_version(extras: &Path) -> String {
    let bytes = ah_log::read_sidecar(extras)
        .ok()
        .flatten()
        .unwrap_or_default()
        .1;
    let text = String::from_utf8_lossy(&bytes);
    let first = text.lines().next().unwrap_or("");
    let v: serde_json::Value = serde_json::from_str(first).unwrap_or_default();
    let full = v["worker"]["torch"].as_str().unwrap_or("");
    full.split('.').take(2).collect::<Vec<_>>().join(".")
}

/// A markdown report of a trained model.
pub fn report(model: &PruneModel, data: &Samples) -> String {
    let w = Weighing {
        horizon: model.horizon,
        harm: model.harm,
        harm_price_s: f64::INFINITY,
        op_harm_price_s: [None; 3],
    };
    let all: Vec<&Sample> = data.samples.iter().collect();
    let policies: Vec<Policy> = all
        .iter()
        .map(|s| model.tree.decide(s, &model.features).clone())
        .collect();
    let fit = eval::score("learned (training GEMMs)", &all, &policies, &w);
    let later = if model.held_out.is_empty() {
        String::new()
    } else {
        format!(
            "## GEMMs logged after the training ones (not trained on)\n\n{}\n{}{}",
            eval::table(&model.held_out),
            by_group("op", &model.held_out_by_op) + &by_group("log", &model.held_out_by_log),
            worst(&model.held_out_worst) + &causes(&model.held_out_causes),
        )
    };
    format!(
        "# {name}: which max-autotune GEMM choices to keep\n\n{gemms} GEMMs ({skipped} without compiled truth skipped); horizon {h} calls, harm bound {harm} %{price}; {leaves} leaves.\n\n## Cross-validated, side by side (every GEMM decided by a tree made without it{repeats})\n\n{cv}\n{cv_groups}## On the training GEMMs\n\n{fit}\n{later}Columns: autotuning seconds of the kept choices (measured prices, or with `--prices one-ptxas` modelled from them as users of the handler pay; a single kept choice costs nothing); compiled truth (CUDA-graph replay) of the pick relative to default max-autotune's pick and to the faster of cuBLAS and that pick (geometric means); picks more than the harm bound slower than that; the worst; GEMMs not left to the full list.\n",
        name = model.name,
        gemms = model.gemms,
        skipped = data.without_extras,
        h = model.horizon,
        harm = model.harm * 100.0,
        price = prices(model),
        leaves = model.tree.leaves(),
        cv = eval::table(&model.cross_validation),
        cv_groups = by_group("op", &model.cross_validation_by_op)
            + &by_group("log", &model.cross_validation_by_log)
            + &worst(&model.cross_validation_worst)
            + &causes(&model.cross_validation_causes),
        fit = eval::table(&[fit]),
        repeats = match model.cv_repeats {
            1 => String::new(),
            r => format!("; the means of {r} splits into folds"),
        } + match model.cv_split {
            CvSplit::Gemm => "",
            CvSplit::Shape => "; the GEMMs of one shape (op, k, n, dtypes, layout, TF32) in one fold",
        },
    )
}

/// The report's words on what a harmful pick was priced at (nothing where no price was set).
fn prices(model: &PruneModel) -> String {
    let seconds = |p: Option<f64>| p.map_or("infinite".to_string(), |p| format!("{p} s"));
    let flat = model
        .harm_price_s
        .map(|p| format!(", a harmful pick priced at {p} s of autotuning"));
    let ops = model
        .op_harm_price_s
        .iter()
        .map(|(op, p)| format!(", a harmful {op} pick priced at {}", seconds(*p)));
    let pricing = (model.prices == Pricing::OnePtxas)
        .then(|| ", kept lists priced as with one ptxas (`--prices one-ptxas`)".to_string());
    let guard = guard_words(model).map(|g| format!(", {g}"));
    let drop = model.fp32_drop_never_near.map(|seen| {
        format!(", fp32 GEMMs without TF32 left to the full list go without the configs offered on at least {seen} of their training GEMMs and never within the harm bound of the best (`--fp32-drop-never-near`)")
    });
    let retime = model.retime_below_ms.map(|ms| {
        format!(", searches whose fastest benchmark is under {ms} ms scored as the handler's re-timing picks them (`--retime-below-ms`)")
    });
    let unfit = model.model_unfit.then(|| {
        ", kept lists whose configs need more shared memory than the device has scored as the full list (`--model-unfit`)".to_string()
    });
    flat.into_iter()
        .chain(ops)
        .chain(pricing)
        .chain(guard)
        .chain(drop)
        .chain(retime)
        .chain(unfit)
        .collect()
}

/// What `--fp32-full-list-above W` (and `--fp32-guard-list`, `--fp32-guard-price`) do, in the
/// words of the report and the module headers; none without the guard.
pub fn guard_words(model: &PruneModel) -> Option<String> {
    let work = model.fp32_full_list_above?;
    let keep = match (model.fp32_guard_list, model.fp32_guard_price_s) {
        (false, _) => String::new(),
        (true, None) => "; they keep a list learned for them (`--fp32-guard-list`)".to_string(),
        (true, Some(p)) => format!(
            "; they keep a list learned for them (`--fp32-guard-list`), weighed against the full list with a harmful pick priced at {p} s (`--fp32-guard-price`)"
        ),
    };
    Some(format!(
        "no cuBLAS-only decision for fp32 GEMMs without TF32 above {work:e} multiply-adds (`--fp32-full-list-above`){keep}"
    ))
}

/// A report's section on each op's or each log's GEMMs (`label`; nothing where the GEMMs are
/// of one).
fn by_group(label: &str, groups: &[GroupResults]) -> String {
    if groups.is_empty() {
        return String::new();
    }
    format!("By {label}:\n\n{}\n", eval::groups_table(label, groups))
}

/// A report's list of the learned rule's worst picks (nothing where it made no harmful pick).
fn worst(misses: &[Miss]) -> String {
    if misses.is_empty() {
        return String::new();
    }
    format!(
        "The learned rule's worst picks (compiled truth over the faster of cuBLAS and max-autotune's pick):\n\n{}\n",
        misses::table(misses)
    )
}

/// A report's count of the learned rule's harmful picks by cause (nothing where it made none).
fn causes(causes: &[Causes]) -> String {
    if causes.first().is_none_or(|c| c.total() == 0.0) {
        return String::new();
    }
    format!(
        "Where the learned rule's harmful picks come from:\n\n{}\n",
        eval::causes_table(causes)
    )
}

fn one() -> usize {
    1
}

fn is_one(x: &usize) -> bool {
    *x == 1
}

fn is_logged(p: &Pricing) -> bool {
    *p == Pricing::Logged
}

fn is_gemm_split(s: &CvSplit) -> bool {
    *s == CvSplit::Gemm
}

#[cfg(test)]
mod data_tests;
#[cfg(test)]
mod drop_tests;
#[cfg(test)]
mod guard_tests;
#[cfg(test)]
mod parity_tests;
#[cfg(test)]
mod pricing_tests;
#[cfg(test)]
mod quantity_tests;
#[cfg(test)]
mod retime_tests;
#[cfg(test)]
mod score_tests;
#[cfg(test)]
mod support_tests;
#[cfg(test)]
mod tests;
